/**
 * The health plugin's contract: the states of a monitored MCP server, what a
 * transition looks like (as the `notification` event carries it) and the
 * `health` service.
 */
import type { Disposer } from '../plugin.js';

/**
 * The health of one monitored server (the seed's four states):
 * - `healthy`: connected and answering checks in time;
 * - `degraded`: connected but slow (a check over `degradedMs`) or intermittent (failed checks);
 * - `restarting`: down or unresponsive; a restart is scheduled or running;
 * - `failed`: automatic restarts are exhausted; only a manual restart brings it back.
 */
export type HealthState = 'healthy' | 'degraded' | 'restarting' | 'failed';

/** What the health plugin knows of one server, as `status()` lists it. */
export interface ServerHealth {
  readonly name: string;
  readonly state: HealthState;
  /** Why it is in this state (redacted), e.g. `ping took 2300 ms` or `process exited`. */
  readonly reason: string;
  /** When it entered this state (ISO 8601). */
  readonly since: string;
  /** When it was last checked (ISO 8601). */
  readonly lastCheck?: string;
  /** How long the last successful check took, in ms. */
  readonly latencyMs?: number;
  /** The request checks use: `ping`, or a list request for servers without ping; `server/discover` for a modern (2026-07-28) server, which has no ping. */
  readonly probe: 'ping' | 'tools/list' | 'resources/list' | 'prompts/list' | 'server/discover';
  /** Consecutive failed checks. */
  readonly failures: number;
  /** Automatic restarts in a row (reset once the server is stable again, or by a manual restart). */
  readonly restarts: number;
  /** When the scheduled restart runs (ISO 8601), while `restarting`. */
  readonly nextRetryAt?: string;
}

/**
 * One transition, as `onChange` listeners receive it and as the kernel's
 * `notification` event carries it (`kernel.emit('notification', change)`).
 * A server's first state is a change too (without `previous`); when that first
 * state is `healthy` it goes to `onChange` listeners only, not to the event.
 */
export interface HealthChange {
  readonly kind: 'mcp-health';
  readonly server: string;
  readonly state: HealthState;
  /** Absent for a server's first state. */
  readonly previous?: HealthState;
  readonly reason: string;
  /** The automatic restart this transition is about (1-based); 0 for a manual restart or none. */
  readonly attempt: number;
  /** While `restarting`: when the restart runs (ISO 8601). */
  readonly nextRetryAt?: string;
  /** One line for a person: `mcp server "db": healthy → restarting (attempt 1 of 3 in 1000 ms): process exited`. */
  readonly message: string;
  readonly at: string;
}

/** The `health` service. */
export interface HealthService {
  /** Starts monitoring every server of the `mcp` service (done at `serve`, i.e. `plinth up`). Idempotent. */
  start(): Promise<void>;
  /** Whether monitoring runs. */
  running(): boolean;
  /** Every monitored server, in the order the `mcp` service lists them. */
  status(): readonly ServerHealth[];
  /**
   * Checks one server now (starting monitoring if needed) and returns its health;
   * undefined when it is not monitored (stopped on purpose, disabled, never started).
   * Throws `PLN_E_HEALTH_SERVER_UNKNOWN` for a name the `mcp` service does not know.
   */
  check(name: string): Promise<ServerHealth | undefined>;
  /**
   * Restarts one server now, whatever its state (a `failed` one too), and resets its
   * counters; when the restart fails, automatic restarts with backoff take over.
   * Throws `PLN_E_HEALTH_SERVER_UNKNOWN` for a name the `mcp` service does not know.
   */
  restart(name: string): Promise<ServerHealth>;
  /** Calls `listener` on every transition. */
  onChange(listener: (change: HealthChange) => void): Disposer;
}

declare module '../index.js' {
  interface Services {
    health: HealthService;
  }
}
