/**
 * The health board: one record per monitored server, and the one place where a
 * server changes state, so that every transition is logged, handed to `onChange`
 * listeners and emitted as a kernel `notification` in the same shape (except a
 * server's first state when it is `healthy`: listeners get it, hooks do not).
 */
import type { Disposer, Logger } from 'plinth/sdk';
import type { ProbeMethod } from './probe.js';
import type { HealthChange, HealthState, ServerHealth } from 'plinth/sdk';

/** A monitored server: what `status()` shows, plus the monitor's bookkeeping. */
export interface HealthRecord {
  readonly name: string;
  state: HealthState;
  reason: string;
  since: number;
  lastCheck?: number;
  latencyMs?: number;
  probe: ProbeMethod;
  failures: number;
  restarts: number;
  nextRetryAt?: number;
  /** Connected at least once: a later failure is a crash (backoffBaseMs), not a late start (startRetryMs). */
  everConnected: boolean;
  /** When the current connection came up; restarts reset once it has lasted a full interval. */
  upSince?: number;
  /** Bumped on every new connection and every restart, so a late check result is dropped. */
  generation: number;
  checkTimer?: NodeJS.Timeout;
  retryTimer?: NodeJS.Timeout;
  /** Undoes the watch on the current connection's process. */
  offDown?: Disposer;
  /** A restart or stop of ours in flight: the state changes it causes are ours, not news. */
  action?: Promise<unknown>;
  /** A check in flight: a second caller waits for it instead of sending another. */
  checking?: Promise<void>;
}

/** What a transition adds besides the new state and reason. */
export interface TransitionExtra {
  readonly attempt?: number;
  /** A restart is scheduled this long after the transition. */
  readonly retryInMs?: number;
  /** Appended to the logged message: `(attempt 1 of 3 in 1000 ms)`. */
  readonly detail?: string;
}

export interface BoardOptions {
  readonly log: Logger;
  /** Masks secrets in reasons (error messages may quote a server's environment). */
  readonly redact: (text: string) => string;
  /** Sends a transition on as a kernel `notification` event; must not throw. */
  readonly emit: (change: HealthChange) => void;
}

const LOG_LEVEL: Record<HealthState, 'info' | 'warn' | 'error'> = {
  healthy: 'info',
  degraded: 'warn',
  restarting: 'warn',
  failed: 'error',
};

/** Records and transitions of every monitored server. */
export class HealthBoard {
  private readonly records = new Map<string, HealthRecord>();
  private readonly listeners = new Set<(change: HealthChange) => void>();

  constructor(private readonly options: BoardOptions) {}

  get(name: string): HealthRecord | undefined {
    return this.records.get(name);
  }

  all(): IterableIterator<HealthRecord> {
    return this.records.values();
  }

  /** Starts tracking `name` in `state`; its first state is announced like any transition. */
  add(name: string, state: HealthState, reason: string, extra: TransitionExtra = {}): HealthRecord {
    const record: HealthRecord = {
      name,
      state,
      reason: '',
      since: Date.now(),
      probe: 'ping',
      failures: 0,
      restarts: 0,
      everConnected: false,
      generation: 0,
    };
    if (extra.retryInMs !== undefined) record.nextRetryAt = record.since + extra.retryInMs;
    this.records.set(name, record);
    this.announce(record, undefined, reason, extra);
    return record;
  }

  /** Moves `record` to `state`; a change of reason alone within one state is recorded quietly. */
  move(record: HealthRecord, state: HealthState, reason: string, extra: TransitionExtra = {}): void {
    if (record.state === state && state !== 'restarting') {
      record.reason = this.options.redact(reason);
      return;
    }
    const previous = record.state;
    record.state = state;
    record.since = Date.now();
    record.nextRetryAt = extra.retryInMs === undefined ? undefined : record.since + extra.retryInMs;
    this.announce(record, previous, reason, extra);
  }

  /** Stops tracking `name` (stopped on purpose); its timers must already be cleared. */
  remove(name: string): void {
    this.records.delete(name);
  }

  onChange(listener: (change: HealthChange) => void): Disposer {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** The public view of `record`. */
  view(record: HealthRecord): ServerHealth {
    return {
      name: record.name,
      state: record.state,
      reason: record.reason,
      since: new Date(record.since).toISOString(),
      ...(record.lastCheck !== undefined && { lastCheck: new Date(record.lastCheck).toISOString() }),
      ...(record.latencyMs !== undefined && { latencyMs: record.latencyMs }),
      probe: record.probe,
      failures: record.failures,
      restarts: record.restarts,
      ...(record.nextRetryAt !== undefined && { nextRetryAt: new Date(record.nextRetryAt).toISOString() }),
    };
  }

  private announce(record: HealthRecord, previous: HealthState | undefined, reason: string, extra: TransitionExtra): void {
    record.reason = this.options.redact(reason);
    const detail = extra.detail ? ` (${extra.detail})` : '';
    const message =
      previous === undefined
        ? `mcp server "${record.name}" is ${record.state}${detail}: ${record.reason}`
        : `mcp server "${record.name}": ${previous} → ${record.state}${detail}: ${record.reason}`;
    const change: HealthChange = {
      kind: 'mcp-health',
      server: record.name,
      state: record.state,
      ...(previous !== undefined && { previous }),
      reason: record.reason,
      attempt: extra.attempt ?? 0,
      ...(record.nextRetryAt !== undefined && { nextRetryAt: new Date(record.nextRetryAt).toISOString() }),
      message,
      at: new Date(record.since).toISOString(),
    };
    this.options.log[LOG_LEVEL[record.state]](message, { server: record.name, state: record.state, attempt: change.attempt });
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        // One listener's bug must not stop monitoring or starve the others.
        this.options.log.warn(`a health listener threw: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    // A server first seen healthy is not news (nothing happened to it); everything else is.
    if (previous !== undefined || record.state !== 'healthy') this.options.emit(change);
  }
}
