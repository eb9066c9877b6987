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

/** What a person (or the host's model) should do so that `status`'s server works. */
export function fixFor(status: ServerStatus): string | undefined {
  const { name, state, error } = status;
  if (state === 'connected') return undefined;
  if (error?.hint) return error.hint;
  const code = error?.code ?? '';
  if (code.startsWith('PLN_E_OAUTH_')) return `run \`plinth auth login ${name}\`, then restart the gateway (or \`plinth mcp restart ${name}\`)`;
  if (code === 'PLN_E_MCP_UNTRUSTED') return `review the server, then \`plinth trust approve mcp-server ${name}\``;
  if (state === 'starting') return 'the server is starting; try again in a moment';
  if (state === 'stopped') return `the server is not started (disabled, or its plugin is off): \`plinth mcp get ${name}\` says why`;
  return `\`plinth mcp status ${name}\` shows why; \`plinth mcp restart ${name}\` tries again (health restarts crashed servers by itself)`;
}

/** Every server's report. `health`: the health plugin's states, when it runs. */
export function serverReports(service: Pick<McpService, 'servers'>, health?: ReadonlyMap<string, string>): ServerReport[] {
  return service.servers().map((s) => {
    const fix = fixFor(s);
    const h = health?.get(s.name);
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
