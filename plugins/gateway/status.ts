/**
 * The gateway's own `status` resource, and the sentence a tool error result
 * carries when the tool's server is not there: each upstream server's state,
 * why it is not connected and what fixes it.
 */
import type { McpService, ServerStatus } from 'plinth/sdk';
import type { Collision } from './catalog.js';

/** One server as the status resource shows it. */
export interface ServerReport {
  readonly name: string;
  readonly state: string;
  readonly transport: string;
  readonly tools: number;
  readonly health?: string;
  readonly error?: { readonly code: string; readonly message: string };
  readonly fix?: string;
}

/** Restarting the gateway itself: what brings back a server nothing restarts any more. */
const restartServe = 'restart `plinth serve` (from an MCP host: restart or reconnect its plinth server)';

/**
 * What the gateway knows of the health plugin for one server: its state, `off`
 * (the health plugin does not run, so nothing restarts a server by itself), or
 * undefined (not known where the sentence is made: a tool's error result).
 */
export type HealthView = string | 'off' | undefined;

/**
 * What a person (or the host's model) should do so that `status`'s server works.
 * Only what acts on this running gateway: `plinth mcp restart` does not (it
 * starts the server in a plinth process of its own, and stops it with that process).
 */
export function fixFor(status: ServerStatus, health?: HealthView): string | undefined {
  const { name, state, error } = status;
  if (state === 'connected') return undefined;
  if (error?.hint) return error.hint;
  const code = error?.code ?? '';
  if (code.startsWith('PLN_E_OAUTH_')) return `run \`plinth auth login ${name}\`, then ${restartServe}`;
  if (code === 'PLN_E_MCP_UNTRUSTED') return `review the server, then \`plinth trust approve mcp-server ${name}\``;
  if (state === 'starting') return 'the server is starting; try again in a moment';
  if (state === 'stopped') return `the server is not started (disabled, or its plugin is off): \`plinth mcp get ${name}\` says why`;
  return crashedFix(name, health);
}

/** A server that failed or went away while this gateway runs. */
function crashedFix(name: string, health: HealthView): string {
  const why = `\`plinth mcp status ${name}\` in a terminal starts it apart from this gateway and shows why it fails`;
  if (health === 'restarting') return `health is restarting it, with backoff; try again in a moment (${why})`;
  if (health === 'failed') return `health gave up restarting it: fix the cause (${why}), then ${restartServe}`;
  if (health === 'off') return `nothing restarts it while the health plugin is off: fix the cause (${why}), then ${restartServe}`;
  return `health restarts a crashed server by itself, with backoff (its state is in plinth://gateway/status); once health gave up, or with the health plugin off, fix the cause (${why}), then ${restartServe}`;
}

/** Every server's report. `health`: the health plugin's states, when it runs. */
export function serverReports(service: Pick<McpService, 'servers'>, health?: ReadonlyMap<string, string>): ServerReport[] {
  return service.servers().map((s) => {
    const h = health?.get(s.name);
    const fix = fixFor(s, health === undefined ? 'off' : h);
    return {
      name: s.name,
      state: s.state,
      transport: s.transport,
      tools: s.tools,
      ...(h !== undefined && { health: h }),
      ...(s.error && { error: { code: s.error.code, message: s.error.message } }),
      ...(fix !== undefined && { fix }),
    };
  });
}

/** The status resource's JSON. */
export function statusDocument(
  service: Pick<McpService, 'servers' | 'problems'>,
  collisions: readonly Collision[],
  health: ReadonlyMap<string, string> | undefined,
  gateway: { readonly sessions: number },
): string {
  return JSON.stringify(
    {
      gateway,
      servers: serverReports(service, health),
      collisions: collisions.map((c) => ({ ...c, fix: `give one of "${c.servers[0]}" and "${c.servers[1]}" its prefix back (remove "prefix": false) or rename the ${c.kind}` })),
      problems: service.problems?.() ?? [],
    },
    null,
    2,
  );
}

/** The error text of a call to a tool whose server is not connected. */
export function unavailableText(status: ServerStatus, tool: string): string {
  const why = status.error ? `${status.error.code}: ${status.error.message}` : `it is ${status.state}`;
  const fix = fixFor(status);
  return `PLN_E_GATEWAY_SERVER_UNAVAILABLE: tool "${tool}" cannot be called: server "${status.name}" is ${status.state} (${why})${fix ? `. Fix: ${fix}` : ''}`;
}
