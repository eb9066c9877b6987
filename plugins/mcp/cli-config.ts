/**
 * `plinth mcp add`, `mcp remove` and `mcp list`: the servers as configured.
 * They start nothing; add and remove edit one settings file (cli-settings.ts).
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { type CommandSpec, EXIT, formatTable as table, PlinthError, type PluginKernel, type TrustVerdict } from 'plinth/sdk';
import { type AddOptions, checkServerName, serverEntry, usage } from './cli-input.js';
import { editServers, readServers, type SettingsFileRef } from './cli-settings.js';
import { commandLine, definitionJson, maskArgs, maskUrl, oneLine, target } from './cli-view.js';
import type { McpService } from 'plinth/sdk';

const SCOPE_OPTION = {
  type: 'string',
  short: 's',
  value: '<scope>',
  description: 'Which settings file: user ($PLINTH_HOME/settings.json, the default for add) or workspace (.plinth/settings.json; "project" is the same)',
} as const;

/** `mcp add`, `mcp remove`, `mcp list`. */
export function settingsCommands({ kernel, service }: { readonly kernel: PluginKernel; readonly service: McpService }): CommandSpec[] {
  return [
    {
      name: 'mcp add',
      args: [
        { name: 'name', required: true, description: 'The server name: letters, digits, "-", "_" (tools become <name>__<tool>)' },
        { name: 'commandOrUrl', description: 'A remote server\'s URL, or a local server\'s program (after "--", so that its own options stay its own)' },
        { name: 'args', variadic: true, description: 'The program\'s arguments' },
      ],
      options: {
        command: { type: 'string', description: 'A local server: the program to run (stdio); or give it after the name' },
        arg: { type: 'string', multiple: true, description: 'An argument of --command; repeatable, in order (one that starts with "-" as --arg=-y)' },
        url: { type: 'string', description: 'A remote server: its URL (streamable HTTP, falling back to SSE); or give it after the name' },
        transport: { type: 'string', short: 't', value: '<name>', description: 'stdio, http, sse, or a transport plugin\'s name (default: stdio for a program, http then sse for a URL)' },
        env: { type: 'string', short: 'e', multiple: true, value: '<KEY=VALUE>', description: 'For the server\'s environment; repeatable; values may be ${env:NAME} or ${setting:plugin.name}' },
        header: { type: 'string', short: 'H', multiple: true, value: '<"Name: value">', description: 'HTTP header for a remote server ("Name=value" too); repeatable; same references as --env' },
        cwd: { type: 'string', description: 'Working folder of a local server, from the current folder (written relative to the project with --scope workspace)' },
        timeout: { type: 'string', description: 'Connection timeout in ms (default 10000)' },
        scope: SCOPE_OPTION,
        force: { type: 'boolean', description: 'Replace a server of the same name' },
      },
      async run({ args, options, json, out }) {
        const [name = '', target, ...rest] = args;
        checkServerName(name);
        const entry = serverEntry({ ...(options as AddOptions), ...(target !== undefined && { target, rest }) });
        const ref = settingsFile(kernel, scopeOption(options.scope) ?? 'user');
        // As typed on a command line: from the current folder. Settings read a relative cwd from the file's own
        // place (home or project), so write it absolute, or relative to the project for a file that travels with it.
        if (entry.cwd !== undefined) {
          const folder = resolve(entry.cwd);
          entry.cwd = ref.scope === 'workspace' ? relative(dirname(dirname(ref.file)), folder) || '.' : folder;
        }
        const force = options.force === true;
        const existing = service.definition(name);
        // A server of that name elsewhere (the other file, a plugin) would be shadowed or shadow this one.
        if (existing && !force && !sameFile(existing.origin, ref.file)) {
          throw new PlinthError('PLN_E_MCP_SERVER_EXISTS', `an MCP server named "${name}" is already defined in ${existing.origin}`, {
            plugin: 'mcp',
            hint: `choose another name, or pass --force to add this one to ${ref.scope} settings anyway`,
          });
        }
        const replaced = await editServers(ref, (servers) => {
          const present = Object.hasOwn(servers, name);
          if (present && !force) {
            throw new PlinthError('PLN_E_MCP_SERVER_EXISTS', `${ref.scope} settings ${ref.file} already has an MCP server named "${name}"`, {
              plugin: 'mcp',
              hint: `pass --force to replace it, or \`plinth mcp remove ${name}\` first`,
            });
          }
          Object.defineProperty(servers, name, { value: entry, enumerable: true, writable: true, configurable: true });
          return { changed: true, result: present };
        });
        const transport = entry.transport ?? (entry.url !== undefined ? 'http' : 'stdio');
        const missing = !providerExists(kernel, `transport:${transport}`);
        if (json) {
          return out.json({ added: name, scope: ref.scope, file: ref.file, replaced, server: shownEntry(entry), ...(missing && { warning: `no plugin provides transport:${transport}` }) });
        }
        out.print(`${replaced ? 'Replaced' : 'Added'} MCP server "${name}" in ${ref.scope} settings ${ref.file}: ${entry.url !== undefined ? maskUrl(entry.url) : commandLine(entry.command!, entry.args ?? [])}${entry.transport ? ` (${entry.transport})` : ''}.`);
        if (missing) out.note(`warning: no plugin provides transport:${transport} yet; install or enable one before starting "${name}"`);
        if (ref.scope === 'workspace') out.print(`Workspace servers start once approved: the first start asks (or prints the approve command). Check it with \`plinth mcp status ${name}\`.`);
        else out.print(`Start it with \`plinth mcp status ${name}\`; its tools with \`plinth mcp tools ${name}\`.`);
        if (ref.scope === 'user' && entry.command !== undefined) for (const note of userPathNotes(entry.command, entry.args ?? [], dirname(ref.file))) out.note(note);
      },
    },
    {
      name: 'mcp remove',
      args: [{ name: 'name', required: true, description: 'The server to remove from settings' }],
      options: { scope: SCOPE_OPTION },
      async run({ args, options, json, out }) {
        const name = args[0]!;
        const scope = scopeOption(options.scope);
        const files = scope ? [settingsFile(kernel, scope)] : (['user', 'workspace'] as const).map((s) => settingsFile(kernel, s));
        const holding: SettingsFileRef[] = [];
        for (const ref of files) if (Object.hasOwn(await readServers(ref), name)) holding.push(ref);
        if (holding.length === 0) {
          const definition = service.definition(name);
          throw new PlinthError('PLN_E_MCP_SERVER_UNKNOWN', `no MCP server named "${name}" in ${files.map((f) => `${f.scope} settings ${f.file}`).join(' or ')}`, {
            plugin: 'mcp',
            hint: definition
              ? `it is defined in ${definition.origin}${definition.plugin ? `; disable plugin "${definition.plugin}" with plugins.${definition.plugin}.enabled: false` : ''}`
              : '`plinth mcp list` shows the configured servers and where each is defined',
          });
        }
        if (holding.length > 1) throw usage(`"${name}" is defined in both user and workspace settings`, 'pass --scope user or --scope workspace');
        const ref = holding[0]!;
        await editServers(ref, (servers) => {
          const present = Object.hasOwn(servers, name);
          if (present) delete servers[name];
          return { changed: present, result: present };
        });
        if (json) return out.json({ removed: name, scope: ref.scope, file: ref.file });
        out.print(`Removed MCP server "${name}" from ${ref.scope} settings ${ref.file}.`);
      },
    },
    {
      name: 'mcp list',
      async run({ json, out }) {
        const definitions = service.servers().flatMap((s) => service.definition(s.name) ?? []);
        // Entries left out (invalid, duplicate) and references that cannot be resolved, each with file and JSON path.
        const problems = service.problems?.() ?? [];
        const trust = await trustStates(service, definitions.map((d) => d.name));
        const code = problems.length > 0 ? EXIT.FAILURE : EXIT.OK;
        if (json) {
          out.json({ servers: definitions.map((d) => ({ ...definitionJson(d), ...(trust.has(d.name) && { trust: trust.get(d.name) }) })), problems });
          return code;
        }
        // One text, so that the warnings logged for these problems as definitions were read are not printed above it too.
        const lines: string[] = [];
        if (definitions.length === 0) lines.push('No MCP servers configured. Add one with `plinth mcp add <name> -- <program> [args…]` or `plinth mcp add -t http <name> <url>`.');
        else {
          const withTrust = trust.size > 0;
          lines.push(
            table(
              ['SERVER', 'SOURCE', 'TRANSPORT', 'ENABLED', ...(withTrust ? ['TRUST'] : []), 'COMMAND / URL'],
              definitions.map((d) => [
                d.name,
                d.plugin ? `${d.source} (${d.plugin})` : d.source,
                d.transport,
                d.enabled ? 'yes' : 'no',
                ...(withTrust ? [trust.get(d.name)?.level ?? '-'] : []),
                oneLine(target(d), 80),
              ]),
            ),
          );
          // The approve command only once it works (a refusal was recorded); before that, the verdict says how to get there.
          for (const [name, verdict] of trust) {
            if (verdict.trusted) continue;
            if (verdict.approveCommand) lines.push(`${name}: ${verdict.level}; approve with \`${verdict.approveCommand}\``);
            else if (verdict.reason) lines.push(`${name}: ${verdict.level}: ${verdict.reason} (\`plinth mcp status ${name}\` starts it)`);
          }
        }
        if (problems.length > 0) lines.push('');
        for (const p of problems) lines.push(`${p.code}: ${p.message}`);
        out.print(lines.join('\n'));
        return code;
      },
    },
  ];
}

/**
 * The `mcp` service may answer, without asking anyone, whether each server may
 * start (the trust plugin's verdict on its fingerprint). Optional: a service
 * without it leaves the TRUST column out.
 */
type TrustAware = McpService;

export async function trustStates(service: TrustAware, names: readonly string[]): Promise<Map<string, TrustVerdict>> {
  const states = new Map<string, TrustVerdict>();
  if (typeof service.trust !== 'function') return states;
  await Promise.all(
    names.map(async (name) => {
      const verdict = await service.trust!(name).catch(() => undefined);
      if (verdict) states.set(name, verdict);
    }),
  );
  return states;
}

export function scopeOption(value: unknown): 'user' | 'workspace' | undefined {
  if (value === undefined) return undefined;
  if (value === 'user' || value === 'workspace') return value;
  // Claude Code's and Gemini CLI's name for the settings that travel with the project.
  if (value === 'project') return 'workspace';
  throw usage(`--scope must be user or workspace (or project), got "${String(value)}"`, value === 'local' ? 'plinth has no per-project user scope: user applies everywhere, workspace to this project (.plinth/settings.json)' : undefined);
}

/** The settings file of a scope, as the kernel looked for it (so --home and --workspace apply). */
export function settingsFile(kernel: PluginKernel, scope: 'user' | 'workspace'): SettingsFileRef {
  const file = kernel.inspect().config.files.find((f) => f.scope === scope);
  if (!file) throw new PlinthError('PLN_E_MCP_SETTINGS_WRITE', `the kernel reports no ${scope} settings file`, { plugin: 'mcp' });
  return { scope, file: file.file };
}

/** Whether a definition's origin (`file#json.path`) is that file. */
export function sameFile(origin: string, file: string): boolean {
  return origin === file || origin.startsWith(`${file}#`);
}

function providerExists(kernel: PluginKernel, service: string): boolean {
  return kernel.status().some((p) => p.provides.includes(service) && p.state !== 'failed' && p.state !== 'excluded' && p.state !== 'skipped');
}

/** The entry as `--json` shows it: env and header names only. */
export function shownEntry(entry: ReturnType<typeof serverEntry>): Record<string, unknown> {
  const { env, headers, args, url, ...rest } = entry;
  return {
    ...rest,
    ...(args && { args: maskArgs(args) }),
    ...(url !== undefined && { url: maskUrl(url) }),
    ...(env && { env: Object.keys(env) }),
    ...(headers && { headers: Object.keys(headers) }),
  };
}

/**
 * What a user entry's relative words will mean, when that is not what the command line suggested:
 * a user server runs in the user folder and reads relative paths there (internal/permissions/workspace-content.ts),
 * so `.` is not the project, and a path that exists here but not there will not be found.
 */
function userPathNotes(command: string, args: readonly string[], home: string): string[] {
  const notes: string[] = [];
  // The command is looked up on PATH unless it is a path; an argument may be a path either way.
  const words = [...(command.includes('/') ? [command] : []), ...args.filter((arg) => !arg.startsWith('-'))];
  for (const word of words) {
    if (word === '.') {
      notes.push(`note: "." in a user server is the user folder ${home}, where it runs, not the project: write '\${workspace}' for the project`);
    } else if (!isAbsolute(word) && !word.includes('${') && existsSync(resolve(word)) && !existsSync(resolve(home, word))) {
      notes.push(`note: "${word}" is read from the user folder ${home}, where it does not exist: give its full path (${resolve(word)}), or add the server with --scope workspace`);
    }
  }
  return notes;
}
