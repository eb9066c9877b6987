/**
 * `plinth mcp add|remove|list|get|status|tools|resources|prompts|restart` and
 * `plinth call <server>__<tool>`. Every boot loads this file (the commands are
 * registered in setup), so it imports no SDK code: it works through the `mcp`
 * service. Servers start only when a command needs them, never for `list`,
 * `add` or `remove` (those are in cli-config.ts), and with one connection
 * attempt each (see {@link ONE_SHOT}).
 */
import { type CommandOutput, type CommandSpec, EXIT, formatTable as table, PlinthError, type PluginKernel } from 'plinth/sdk';
import { settingsCommands } from './cli-config.js';
import { registryCommands } from './registry/commands.js';
import { milliseconds, pairs, splitToolName, toolArguments, usage } from './cli-input.js';
import { getCommand } from './cli-get.js';
import { healthOf, healthService } from './cli-health.js';
import { type SignInIo, offerSignIn } from './cli-signin.js';
import { oneLine, statusNote } from './cli-view.js';
import { MCP_CODES } from './features/result.js';
import { createRedactor, type SecretRedactor } from './redact.js';
import type { McpService, ServerStatus, ToolCallResult } from 'plinth/sdk';

/** What {@link mcpCommands} needs. */
export interface McpCommandDeps {
  readonly kernel: PluginKernel;
  readonly service: McpService;
  /**
   * Called as each command begins: this process is a one-shot command, so the
   * servers it starts are stopped with a short exit grace (see {@link ONE_SHOT_EXIT_GRACE_MS}).
   */
  readonly oneShot?: (exitGraceMs: number) => void;
}

const SERVER_ARG = [{ name: 'server', description: 'Only this server (default: every enabled server)' }] as const;

/**
 * How a command starts a server: one connection attempt, no retries. The mcp
 * plugin's retries (1 s, 2 s, 4 s) are for a host that stays up; a person who
 * ran a command would wait 7 s and more to learn that a server does not start,
 * and can run it again. Failures no retry helps (configuration, trust) are
 * reported at once either way.
 */
const ONE_SHOT = { retries: 0 } as const;

/**
 * When a command is done, a stdio server gets this long after its stdin closes
 * before SIGTERM, not the 2 s a host gives it: nobody waits for its tidying up.
 * For every server the command starts, also through the health plugin's restart.
 */
const ONE_SHOT_EXIT_GRACE_MS = 100;

/**
 * The commands plugins/mcp/manifest.json declares, for `kernel.hooks.commands`:
 *
 * @example
 * kernel.hooks.commands.tap((registry) => {
 *   for (const command of mcpCommands({ kernel, service })) registry.add(command);
 * });
 */
export function mcpCommands({ kernel, service, oneShot }: McpCommandDeps): CommandSpec[] {
  const known = (name: string) => {
    if (service.definition(name)) return;
    const names = service.servers().map((s) => s.name);
    throw new PlinthError('PLN_E_MCP_SERVER_UNKNOWN', `no MCP server named "${name}"`, {
      plugin: 'mcp',
      hint: names.length > 0 ? `configured servers: ${names.join(', ')} (\`plinth mcp list\`)` : 'add one with `plinth mcp add <name> -- <program> [args…]` or `plinth mcp add -t http <name> <url>`',
    });
  };

  /**
   * Starts one server, or every enabled one; servers that fail are reported in
   * their status, never thrown. On a terminal, one that needs a sign-in is offered it.
   */
  const startServers = async (name: string | undefined, io: SignInIo): Promise<readonly ServerStatus[]> => {
    if (name !== undefined) known(name);
    const started = name === undefined ? await service.startAll(ONE_SHOT) : [await service.start(name, ONE_SHOT)];
    const statuses: ServerStatus[] = [];
    for (const status of started) statuses.push(await offerSignIn(status, io, { kernel, restart: (server) => service.start(server, ONE_SHOT) }));
    return statuses;
  };

  /** A note on stderr for each server that did not connect; true when every one did. */
  const reportFailures = (statuses: readonly ServerStatus[], out: CommandOutput): boolean => {
    const failed = statuses.filter((s) => s.state !== 'connected');
    for (const s of failed) {
      const fix = s.error && fixOf(s.error);
      out.note(`${s.name}: ${s.state}${s.error ? `: ${s.error.code}: ${s.error.message}` : ''}${fix ? `\n  fix: ${fix}` : ''}`);
    }
    return failed.length === 0;
  };

  const commands: CommandSpec[] = [
    ...settingsCommands({ kernel, service }),
    ...registryCommands({ kernel, service }),
    getCommand({ service, known, start: async (name, io) => (await startServers(name, io))[0]! }),
    {
      name: 'mcp status',
      args: SERVER_ARG,
      async run({ args, json, out, signal }) {
        const started = await startServers(args[0], { json, out, signal });
        const names = new Set(started.map((s) => s.name));
        // Also show the servers that were not started (disabled), so the table is the whole picture.
        const statuses = args[0] === undefined ? [...started, ...service.servers().filter((s) => !names.has(s.name))] : started;
        const states = await healthOf(kernel, statuses.filter((s) => s.state === 'connected').map((s) => s.name));
        const ok = started.every((s) => s.state === 'connected');
        if (json) {
          return emitJson(out, {
            servers: statuses.map((s) => ({ ...s, enabled: service.definition(s.name)?.enabled ?? true, ...(states.has(s.name) && { health: states.get(s.name) }) })),
          }, ok);
        }
        if (statuses.length === 0) {
          out.print('No MCP servers configured.');
          return EXIT.OK;
        }
        const withHealth = states.size > 0;
        // One text, so that a warning logged for an error shown here is not printed above it too.
        const lines = [
          table(
            ['SERVER', 'STATE', ...(withHealth ? ['HEALTH'] : []), 'TRANSPORT', 'TOOLS', 'PID', 'DETAILS'],
            statuses.map((s) => [
              s.name,
              s.state === 'stopped' && service.definition(s.name)?.enabled === false ? 'disabled' : s.state,
              ...(withHealth ? [states.get(s.name)?.state ?? '-'] : []),
              s.transport,
              s.state === 'connected' ? String(s.tools) : '-',
              s.pid === undefined ? '-' : String(s.pid),
              statusNote(s),
            ]),
          ),
        ];
        // The table names the error's code; the whole message (it may end with the command that fixes it) and the stderr tail follow.
        for (const s of statuses) {
          if (s.state === 'connected' || (!s.error && !s.stderrTail)) continue;
          lines.push('');
          if (s.error) lines.push(`${s.name}: ${s.error.code}: ${s.error.message}`);
          // The fix, as --json has it: every error's, not only those whose message happens to end with a command.
          const fix = s.error && fixOf(s.error);
          if (fix) lines.push(`  fix: ${fix}`);
          if (s.stderrTail) {
            lines.push(`${s.name} stderr (last lines):`);
            for (const line of s.stderrTail.trimEnd().split('\n').slice(-10)) lines.push(`  ${line}`);
          }
        }
        out.print(lines.join('\n'));
        return ok ? EXIT.OK : EXIT.FAILURE;
      },
    },
    {
      name: 'mcp tools',
      args: SERVER_ARG,
      options: {
        search: { type: 'string', description: 'Only the tools matching this text, best first (name, title, description, parameters; prefix and fuzzy)' },
        limit: { type: 'string', description: 'With --search: the most tools shown (default 10)' },
      },
      async run({ args, options, json, out, signal }) {
        const limit = options.limit === undefined ? undefined : Number(options.limit);
        if (limit !== undefined && (typeof options.search !== 'string' || !Number.isInteger(limit) || limit < 1)) {
          throw usage(typeof options.search === 'string' ? `--limit must be a whole number of at least 1, not "${String(options.limit)}"` : '--limit goes with --search: plinth mcp tools --search <text> --limit <n>');
        }
        const ok = reportFailures(await startServers(args[0], { json, out, signal }), out);
        if (typeof options.search === 'string') {
          const hits = service.searchTools?.(options.search, { limit: limit ?? 10, ...(args[0] !== undefined && { servers: [args[0]] }) }) ?? [];
          if (json) return emitJson(out, { query: options.search, tools: hits.map((h) => ({ ...h.tool, score: h.score, terms: h.terms })) }, ok);
          if (hits.length === 0) out.print(`No tool matches "${options.search}".`);
          else out.print(table(['TOOL', 'DESCRIPTION'], hits.map((h) => [h.tool.name, oneLine(h.tool.description ?? h.tool.title ?? '', 90)])));
          return ok ? EXIT.OK : EXIT.FAILURE;
        }
        const tools = service.tools().filter((t) => args[0] === undefined || t.server === args[0]);
        if (json) return emitJson(out, { tools }, ok);
        if (tools.length === 0) out.print('No tools.');
        else out.print(table(['TOOL', 'DESCRIPTION'], tools.map((t) => [t.name, oneLine(t.description ?? t.title ?? '', 90)])));
        return ok ? EXIT.OK : EXIT.FAILURE;
      },
    },
    {
      name: 'mcp resources',
      args: SERVER_ARG,
      options: { read: { type: 'string', description: 'Read this resource URI of <server> and print its contents' } },
      async run({ args, options, json, out, signal }) {
        const server = args[0];
        if (typeof options.read === 'string') {
          if (server === undefined) throw usage('--read needs the server: plinth mcp resources <server> --read <uri>');
          const [status] = await startServers(server, { json, out, signal });
          if (status!.state !== 'connected') return failedStart(status!, json, out);
          const read = await service.readResource(server, options.read);
          if (json) return out.json({ server, uri: options.read, ...read });
          out.print(read.text);
          return;
        }
        const ok = reportFailures(await startServers(server, { json, out, signal }), out);
        const [resources, templates] = await Promise.all([service.resources(server), service.resourceTemplates(server)]);
        if (json) return emitJson(out, { resources, templates }, ok);
        if (resources.length === 0 && templates.length === 0) out.print('No resources.');
        if (resources.length > 0) {
          out.print(table(['SERVER', 'URI', 'NAME', 'TYPE', 'DESCRIPTION'], resources.map((r) => [r.server, r.uri, r.name, r.mimeType ?? '-', oneLine(r.description ?? '', 60)])));
        }
        if (templates.length > 0) {
          if (resources.length > 0) out.print('');
          out.print(table(['SERVER', 'URI TEMPLATE', 'NAME', 'DESCRIPTION'], templates.map((t) => [t.server, t.uriTemplate, t.name, oneLine(t.description ?? '', 60)])));
        }
        return ok ? EXIT.OK : EXIT.FAILURE;
      },
    },
    {
      name: 'mcp prompts',
      args: SERVER_ARG,
      options: {
        get: { type: 'string', description: 'Get this prompt of <server> and print its messages' },
        arg: { type: 'string', multiple: true, description: 'NAME=VALUE argument for --get; repeatable' },
      },
      async run({ args, options, json, out, signal }) {
        const server = args[0];
        if (typeof options.get === 'string') {
          if (server === undefined) throw usage('--get needs the server: plinth mcp prompts <server> --get <prompt>');
          const values = pairs((options.arg as string[] | undefined) ?? [], '--arg');
          const [status] = await startServers(server, { json, out, signal });
          if (status!.state !== 'connected') return failedStart(status!, json, out);
          const prompt = await service.getPrompt(server, options.get, values);
          if (json) return out.json({ server, prompt: options.get, ...prompt });
          out.print(prompt.text);
          return;
        }
        const ok = reportFailures(await startServers(server, { json, out, signal }), out);
        const prompts = await service.prompts(server);
        if (json) return emitJson(out, { prompts }, ok);
        if (prompts.length === 0) out.print('No prompts.');
        else {
          out.print(
            table(
              ['SERVER', 'PROMPT', 'ARGUMENTS', 'DESCRIPTION'],
              prompts.map((p) => [p.server, p.name, (p.arguments ?? []).map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ') || '-', oneLine(p.description ?? '', 60)]),
            ),
          );
        }
        return ok ? EXIT.OK : EXIT.FAILURE;
      },
    },
    {
      name: 'mcp restart',
      args: [{ name: 'server', required: true, description: 'The server to stop and start again' }],
      async run({ args, json, out }) {
        const name = args[0]!;
        known(name);
        // Through the health plugin when it is there: a manual restart also resets its counters (a failed server recovers).
        const health = await healthService(kernel);
        const checked = health ? await health.restart(name) : undefined;
        const status = checked ? (service.servers().find((s) => s.name === name) ?? (await service.start(name, ONE_SHOT))) : await service.restart(name, ONE_SHOT);
        const ok = status.state === 'connected';
        if (json) return emitJson(out, { server: status, ...(checked && { health: checked }) }, ok);
        out.print(`${status.name}: ${status.state}${ok ? ` (${status.tools} tools${status.pid === undefined ? '' : `, pid ${status.pid}`})` : ''}${status.error ? `: ${status.error.code}: ${status.error.message}` : ''}${checked ? `; health ${checked.state}` : ''}`);
        return ok ? EXIT.OK : EXIT.FAILURE;
      },
    },
    {
      name: 'call',
      args: [{ name: 'tool', required: true, description: 'The tool as <server>__<tool> (`plinth mcp tools` lists them)' }],
      options: {
        args: { type: 'string', description: 'The tool\'s arguments: a JSON object, @file, or @- for standard input (default {})' },
        timeout: { type: 'string', description: 'Time limit of the call in ms (default: the mcp plugin\'s callTimeout)' },
      },
      async run({ args, options, json, out, signal }) {
        // Everything the command line can get wrong is checked before a server starts.
        const name = args[0]!;
        const { server } = splitToolName(name, service.servers().filter((s) => service.definition(s.name)?.enabled !== false).map((s) => s.name));
        const toolArgs = await toolArguments(typeof options.args === 'string' ? options.args : undefined);
        const timeoutMs = typeof options.timeout === 'string' ? milliseconds(options.timeout, '--timeout') : undefined;
        known(server);
        const [status] = await startServers(server, { json, out, signal });
        if (status!.state !== 'connected') return failedStart(status!, json, out);
        const result = await service.callTool(name, toolArgs, {
          signal,
          ...(timeoutMs !== undefined && { timeoutMs }),
          onProgress: (p) => {
            if (!json) out.note(`progress: ${p.progress}${p.total === undefined ? '' : `/${p.total}`}${p.message ? ` ${p.message}` : ''}`);
          },
        });
        const code = callExit(result);
        if (json) {
          out.json({ tool: name, ...result, durationMs: Math.round(result.durationMs * 10) / 10 });
          return code;
        }
        // A server result (even a tool error) is printed; a call that produced none is only its error (its text is the same message).
        if (result.ok && result.text !== '') out.print(result.text);
        if (result.error) out.note(`plinth: ${result.error.code}: ${result.error.message}`);
        else if (code !== EXIT.OK) out.note(`plinth: ${name} reported an error (the tool's result has isError set)`);
        return code;
      },
    },
  ];
  return commands.map((command) => ({
    ...command,
    run: (input) => {
      oneShot?.(ONE_SHOT_EXIT_GRACE_MS);
      return command.run({ ...input, out: maskedOutput(input.out, service) });
    },
  }));
}

/**
 * The CLI's output with every server's secrets masked (resolved env and header
 * values): the kernel's redactor does not know them, and a tool result, a
 * server's stderr or an error message may carry one.
 */
function maskedOutput(out: CommandOutput, service: McpService): CommandOutput {
  let redactor: SecretRedactor | undefined;
  // Built at the first line printed: definitions are read once the kernel is ready.
  const mask = (): SecretRedactor => {
    if (redactor) return redactor;
    redactor = createRedactor();
    for (const status of service.servers()) redactor.add(service.definition(status.name)?.secrets ?? []);
    return redactor;
  };
  return {
    print: (text) => out.print(mask().text(text)),
    json: (value) => out.json(mask().value(value)),
    note: (text) => out.note(mask().text(text)),
  };
}

/** The exit code of `plinth call` for a result. */
function callExit(result: ToolCallResult): number {
  // A hook said no: the same exit code as `plinth hooks run` for a blocked event.
  if (result.error?.code === MCP_CODES.blocked) return EXIT.BLOCKED;
  // Arguments that do not match the tool's schema are a mistake on the command line, like invalid JSON.
  if (result.error?.code === MCP_CODES.argsInvalid) return EXIT.USAGE;
  return result.ok && !result.isError ? EXIT.OK : EXIT.FAILURE;
}

/** A server that did not connect, for a command that needed it: its error, exit 1. */
/** The fix of an error, unless its message already ends with it. */
function fixOf(error: { readonly message: string; readonly hint?: string }): string | undefined {
  return error.hint !== undefined && !error.message.includes(error.hint) ? error.hint : undefined;
}

function failedStart(status: ServerStatus, json: boolean, out: CommandOutput): number {
  const error = status.error ?? { code: 'PLN_E_MCP_CONNECT_FAILED', message: `server "${status.name}" is ${status.state}` };
  if (json) out.json({ error: { ...error, server: status.name, state: status.state } });
  else {
    out.note(`plinth: ${error.code}: ${status.name}: ${error.message}`);
    const fix = fixOf(error);
    if (fix !== undefined) out.note(`  fix: ${fix}`);
    if (status.stderrTail) for (const line of status.stderrTail.trimEnd().split('\n').slice(-10)) out.note(`  ${line}`);
  }
  return EXIT.FAILURE;
}

function emitJson(out: CommandOutput, value: unknown, ok: boolean): number {
  out.json(value);
  return ok ? EXIT.OK : EXIT.FAILURE;
}
