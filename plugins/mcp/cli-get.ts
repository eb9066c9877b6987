/**
 * `plinth mcp get <name>`: one server as Claude Code's and Gemini CLI's
 * `mcp get` show it: its definition (env and header values never shown, a
 * password or token in a URL or an argument masked), where it is defined, its
 * trust, and its state. An enabled server is connected once to report its
 * state, as `mcp status <name>` does (an unapproved workspace server is refused
 * with the approve command, or asked about on a terminal); a disabled one, or
 * one the service's optional `trust()` already says is not trusted, is not started.
 */
import type { CommandOutput, CommandSpec } from 'plinth/sdk';
import { EXIT } from 'plinth/sdk';
import { trustStates } from './cli-config.js';
import { commandLine, definitionJson, eraNote, maskUrl, oneLine } from './cli-view.js';
import type { McpServerDefinition, McpService, ServerStatus } from 'plinth/sdk';

/** What `mcp get` needs from the other commands. */
export interface GetCommandDeps {
  readonly service: McpService;
  /** Throws `PLN_E_MCP_SERVER_UNKNOWN` for a name no settings file or manifest defines. */
  readonly known: (name: string) => void;
  /** Starts the server once (one attempt, a sign-in offered on a terminal) and resolves with its status. */
  readonly start: (name: string, io: { json: boolean; out: CommandOutput; signal: AbortSignal }) => Promise<ServerStatus>;
}

/** The `mcp get` command. */
export function getCommand({ service, known, start }: GetCommandDeps): CommandSpec {
  return {
    name: 'mcp get',
    args: [{ name: 'name', required: true, description: 'The server to show' }],
    async run({ args, json, out, signal }) {
      const name = args[0]!;
      known(name);
      const definition = service.definition(name)!;
      // Started as `mcp status <name>` starts it: an unapproved server is refused (and recorded, so that the approve command works) or asked about on a terminal.
      const startable = definition.enabled;
      const status = startable ? await start(name, { json, out, signal }) : service.servers().find((s) => s.name === name);
      // The verdict after the start: an approval given at the terminal's question shows.
      const trust = (await trustStates(service, [name])).get(name);
      const state = !definition.enabled ? 'disabled' : (status?.state ?? 'stopped');
      const instructions = status?.state === 'connected' ? service.client(name)?.getInstructions() : undefined;
      const ok = !startable || status?.state === 'connected';
      if (json) {
        out.json({ server: definitionJson(definition), ...(trust && { trust }), state, ...(status && { status }), ...(instructions !== undefined && { instructions }) });
        return ok ? EXIT.OK : EXIT.FAILURE;
      }
      const rows: Array<[string, string]> = [
        ['source', definition.plugin ? `${definition.source} (plugin ${definition.plugin})` : definition.source],
        ['defined in', definition.origin],
        ['transport', definition.transport],
        ...where(definition),
        ['timeout', `${definition.connectTimeoutMs} ms`],
        ['protocol', definition.protocol ?? 'the mcp plugin\'s protocol setting'],
        ['enabled', definition.enabled ? 'yes' : 'no'],
        ...(definition.includeTools ? [['include tools', definition.includeTools.join(', ')] as [string, string]] : []),
        ...(definition.excludeTools ? [['exclude tools', definition.excludeTools.join(', ')] as [string, string]] : []),
        ['oauth', definition.oauth !== undefined && definition.oauth !== false ? 'yes' : 'no'],
        ...(trust ? [['trust', trust.trusted ? trust.level : `${trust.level}${trust.approveCommand ? `: approve with \`${trust.approveCommand}\`` : trust.reason ? `: ${trust.reason}` : ''}`] as [string, string]] : []),
        ['state', describeState(state, status)],
        ...(status?.error ? [['error', `${status.error.code}: ${status.error.message}`] as [string, string]] : []),
        ...(instructions ? [['instructions', oneLine(instructions, 200)] as [string, string]] : []),
      ];
      const width = Math.max(...rows.map(([label]) => label.length));
      // One text, so that a warning logged for the error it shows is not printed above it too.
      out.print([name, ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`)].join('\n'));
      return ok ? EXIT.OK : EXIT.FAILURE;
    },
  };
}

/** What it runs or where it is; env and header names only. */
function where(definition: McpServerDefinition): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  if (definition.command !== undefined) {
    rows.push(['command', commandLine(definition.command, definition.args)], ['cwd', definition.cwd]);
  }
  if (definition.url !== undefined) rows.push(['url', maskUrl(definition.url)]);
  const env = Object.keys(definition.env);
  const headers = Object.keys(definition.headers);
  if (env.length > 0) rows.push(['env', `${env.join(', ')} (values not shown)`]);
  if (headers.length > 0) rows.push(['headers', `${headers.join(', ')} (values not shown)`]);
  return rows;
}

function describeState(state: string, status: ServerStatus | undefined): string {
  if (state !== 'connected' || !status) return state;
  const parts = [`${status.tools} tools`, ...(status.pid === undefined ? [] : [`pid ${status.pid}`]), ...(status.serverInfo ? [`${status.serverInfo.name} ${status.serverInfo.version}`] : []), ...(eraNote(status) ? [eraNote(status)] : [])];
  return `connected (${parts.join(', ')})`;
}
