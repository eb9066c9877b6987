/**
 * `plinth mcp search <text>` and `plinth mcp info <name>[@version]`: MCP
 * servers in the registries of `mcpRegistries`, each result saying which
 * registry it comes from; `deprecated` ones warn, `deleted` ones are marked.
 */
import { type CommandSpec, EXIT, type McpService, PlinthError, type PluginKernel, formatTable as table, optionalService } from 'plinth/sdk';
import { type McpServerResponse, MCP_REGISTRY_OFFICIAL_META, askText, askYesNo, processTerminal, statusOf, whyNotAsk } from 'plinth/internal';
import { checkServerName, headerPairs, pairs } from '../cli-input.js';
import { editServers } from '../cli-settings.js';
import { sameFile, scopeOption, settingsFile, shownEntry } from '../cli-config.js';
import { commandLine } from '../cli-view.js';
import { planInstall } from './install.js';
import { type McpRegistry, type SkippedEntry, configuredMcpRegistries, listAll, parseServerSpec, serverVersion, serverVersions } from './client.js';

/** A server found in a registry. */
export interface Found {
  readonly registry: string;
  readonly response: McpServerResponse;
}

const REGISTRY_OPTION = { type: 'string', value: '<name>', description: 'Ask only this registry of "mcpRegistries"' } as const;

/** The registries to ask: all configured, or the one `--registry` names. */
export function registriesToAsk(kernel: PluginKernel, only: unknown): McpRegistry[] {
  const all = configuredMcpRegistries(kernel.configLayers, process.env);
  if (all.length === 0) {
    throw new PlinthError('PLN_E_MCP_REGISTRY_CONFIG', 'no MCP registry is configured', {
      plugin: 'mcp',
      hint: 'add "mcpRegistries": [{ "name": "official", "url": "https://registry.modelcontextprotocol.io" }] to your user settings.json (or a subregistry served by `plinth registry serve`)',
    });
  }
  if (typeof only !== 'string') return all;
  const chosen = all.filter((r) => r.name === only);
  if (chosen.length === 0) throw new PlinthError('PLN_E_MCP_REGISTRY_CONFIG', `no MCP registry is named "${only}"`, { plugin: 'mcp', hint: `configured: ${all.map((r) => r.name).join(', ')}` });
  return chosen;
}

/** The first registry (in the order of "mcpRegistries") that has `name@version`. */
export async function findServer(registries: readonly McpRegistry[], spec: string, signal: AbortSignal): Promise<Found> {
  const { name, version } = parseServerSpec(spec);
  for (const registry of registries) {
    const response = await serverVersion(registry, name, version, { signal });
    if (response) return { registry: registry.name, response };
  }
  throw new PlinthError('PLN_E_MCP_REGISTRY_NOT_FOUND', `no MCP registry has ${version === 'latest' ? `"${name}"` : `"${name}" version ${version}`} (asked: ${registries.map((r) => r.name).join(', ')})`, {
    plugin: 'mcp',
    hint: `look for it with \`plinth mcp search ${name.split('/').pop()}\`${version === 'latest' ? '' : `, or see its versions with \`plinth mcp info ${name}\``}`,
  });
}

/** One line about a status for a person, or nothing for `active`. */
export function statusWarning(found: Found): string | undefined {
  const status = statusOf(found.response);
  const id = `${found.response.server.name}@${found.response.server.version}`;
  if (status === 'deprecated') return `warning: ${id} is deprecated in registry "${found.registry}"; look for a successor or a newer version`;
  if (status === 'deleted') return `${id} is DELETED from registry "${found.registry}" (withdrawn by its publisher or the registry): do not install it`;
  return undefined;
}

function summary(found: Found): Record<string, unknown> {
  const s = found.response.server;
  return {
    registry: found.registry,
    name: s.name,
    version: s.version,
    status: statusOf(found.response),
    ...(s.title !== undefined && { title: s.title }),
    ...(s.description !== undefined && { description: s.description }),
    packages: (s.packages ?? []).map((p) => `${p.registryType}:${p.identifier}${p.version ? `@${p.version}` : ''}`),
    remotes: (s.remotes ?? []).map((r) => `${r.type} ${r.url}`),
  };
}

export function registryCommands({ kernel, service }: { readonly kernel: PluginKernel; readonly service: McpService }): CommandSpec[] {
  return [
    {
      name: 'mcp install',
      args: [{ name: 'server', required: true, description: 'A server\'s registry name, optionally @version (default: latest)' }],
      options: {
        scope: { type: 'string', short: 's', value: '<scope>', description: 'user ($PLINTH_HOME/settings.json, the default) or workspace (.plinth/settings.json: approved before its first start)' },
        name: { type: 'string', value: '<local-name>', description: 'The name in your settings (default: the last part of the registry name)' },
        arg: { type: 'string', multiple: true, value: '<NAME=VALUE>', description: 'A declared argument: a named one by its name (--port), a positional one by its value hint' },
        env: { type: 'string', short: 'e', multiple: true, value: '<NAME=VALUE>', description: 'A declared environment variable; secret ones go to the secret store' },
        var: { type: 'string', multiple: true, value: '<NAME=VALUE>', description: 'A remote\'s URL variable' },
        header: { type: 'string', short: 'H', multiple: true, value: '<"Name: value">', description: 'A remote\'s declared header; secret ones go to the secret store' },
        registry: REGISTRY_OPTION,
        yes: { type: 'boolean', short: 'y', description: 'Do not ask for confirmation on a terminal' },
        force: { type: 'boolean', description: 'Replace a server of the same name' },
      },
      async run({ args, options, json, out, signal }) {
        const registries = registriesToAsk(kernel, options.registry);
        const found = await findServer(registries, args[0]!, signal);
        const server = found.response.server;
        const id = `${server.name}@${server.version}`;
        const status = statusOf(found.response);
        if (status === 'deleted') {
          throw new PlinthError('PLN_E_MCP_SERVER_DELETED', `${id} is deleted from MCP registry "${found.registry}": plinth does not install it`, {
            plugin: 'mcp',
            hint: `see its other versions with \`plinth mcp info ${server.name}\`, or look for another server with \`plinth mcp search\``,
          });
        }
        const local = typeof options.name === 'string' ? options.name : defaultLocalName(server.name);
        checkServerName(local);
        const terminal = processTerminal();
        const canAsk = whyNotAsk(terminal) === undefined;
        const plan = await planInstall(
          server,
          local,
          { args: pairs(list(options.arg), '--arg'), env: pairs(list(options.env), '--env'), vars: pairs(list(options.var), '--var'), headers: headerPairs(list(options.header)) },
          async ({ label, secret }) => {
            if (!canAsk) return undefined;
            const typed = await askText(`${label[0]!.toUpperCase()}${label.slice(1)}${secret ? ' (secret, not shown)' : ''}: `, terminal, { hidden: secret }, signal);
            return typed === undefined || typed === '' ? undefined : typed;
          },
        );
        const ref = settingsFile(kernel, scopeOption(options.scope) ?? 'user');
        const force = options.force === true;
        const existing = service.definition(local);
        if (existing && !force) {
          throw new PlinthError('PLN_E_MCP_SERVER_EXISTS', `an MCP server named "${local}" is already defined in ${existing.origin}`, { plugin: 'mcp', hint: `choose another name with --name, or pass --force to replace it${sameFile(existing.origin, ref.file) ? '' : ` (it would be added to ${ref.scope} settings anyway)`}` });
        }
        const warning = statusWarning(found);
        if (warning && !json) out.note(warning);
        const shown = plan.entry.command !== undefined ? commandLine(plan.entry.command, plan.entry.args ?? []) : plan.entry.url!;
        if (options.yes !== true && canAsk) {
          const ok = await askYesNo(`Install ${id} from "${found.registry}" as "${local}" in ${ref.scope} settings: ${shown}? [y/N] `, terminal, signal);
          if (!ok) {
            out.note('Not installed.');
            return EXIT.FAILURE;
          }
        }
        if (plan.secrets.size > 0) {
          const store = await optionalService(kernel, 'secrets');
          if (!store) throw new PlinthError('PLN_E_MCP_SECRET_MISSING', `${id} needs a secret and no plugin provides the secret store`, { plugin: 'mcp', hint: 'enable the oauth plugin (it provides the "secrets" service)' });
          for (const [key, value] of plan.secrets) await store.set(key, value);
        }
        await editServers(ref, (servers) => {
          if (Object.hasOwn(servers, local) && !force) {
            throw new PlinthError('PLN_E_MCP_SERVER_EXISTS', `${ref.scope} settings ${ref.file} already has an MCP server named "${local}"`, { plugin: 'mcp', hint: 'choose another name with --name, or pass --force to replace it' });
          }
          Object.defineProperty(servers, local, { value: plan.entry, enumerable: true, writable: true, configurable: true });
          return { changed: true, result: undefined };
        });
        const from = { registry: found.registry, name: server.name, version: server.version, status };
        if (json) return out.json({ installed: local, from, scope: ref.scope, file: ref.file, server: shownEntry(plan.entry), secrets: [...plan.secrets.keys()] });
        out.print(`Installed ${id} from "${found.registry}" as MCP server "${local}" in ${ref.scope} settings ${ref.file}: ${shown}`);
        if (plan.secrets.size > 0) out.print(`Secrets kept in the secret store, referenced from settings: ${[...plan.secrets.keys()].join(', ')}`);
        if (plan.kind === 'npm') out.print('Its first start downloads the package from the npm registry (network, the npm cache).');
        if (ref.scope === 'workspace') out.print(`Workspace servers start once approved: the first start asks. Check it with \`plinth mcp status ${local}\`.`);
        else out.print(`Start it with \`plinth mcp status ${local}\`.`);
        return EXIT.OK;
      },
    },
    {
      name: 'mcp search',
      args: [{ name: 'text', description: 'Part of a server\'s name, title or description (nothing: every server)' }],
      options: { registry: REGISTRY_OPTION },
      async run({ args, options, json, out, signal }) {
        const registries = registriesToAsk(kernel, options.registry);
        const text = args.join(' ').trim();
        const found: Found[] = [];
        const problems: { registry: string; code: string; message: string }[] = [];
        const skipped: SkippedEntry[] = [];
        for (const registry of registries) {
          try {
            for (const response of await listAll(registry, { ...(text && { search: text }), version: 'latest', limit: 100 }, { signal, skipped })) found.push({ registry: registry.name, response });
          } catch (error) {
            if (!(error instanceof PlinthError) || signal.aborted) throw error;
            problems.push({ registry: registry.name, code: error.code, message: error.message });
          }
        }
        if (problems.length === registries.length) {
          const first = problems[0]!;
          throw new PlinthError(first.code as 'PLN_E_MCP_REGISTRY_UNREACHABLE', problems.map((p) => p.message).join('; '), { plugin: 'mcp', hint: 'check "mcpRegistries" in your user settings.json' });
        }
        if (json) {
          out.json({ results: found.map(summary), problems, skipped });
          return problems.length > 0 ? EXIT.FAILURE : EXIT.OK;
        }
        for (const p of problems) out.note(`warning: ${p.message} (${p.code})`);
        for (const s of skipped) out.note(`warning: MCP registry "${s.registry}" sent an entry plinth cannot use, left out: ${s.problem}`);
        if (found.length === 0) {
          out.print(`No MCP server matches "${text}" in ${registries.map((r) => r.name).join(', ')}.`);
          return problems.length > 0 ? EXIT.FAILURE : EXIT.OK;
        }
        const rows = found.map((f) => {
          const s = f.response.server;
          const status = statusOf(f.response);
          return [s.name, s.version, status === 'active' ? '' : status.toUpperCase(), f.registry, oneLine(s.title ?? s.description ?? '')];
        });
        out.print(table(['NAME', 'VERSION', 'STATUS', 'REGISTRY', 'DESCRIPTION'], rows));
        out.print(`Details: \`plinth mcp info <name>\`; install: \`plinth mcp install <name>\`.`);
        return problems.length > 0 ? EXIT.FAILURE : EXIT.OK;
      },
    },
    {
      name: 'mcp info',
      args: [{ name: 'server', required: true, description: 'A server\'s registry name, optionally @version (default: latest)' }],
      options: { registry: REGISTRY_OPTION },
      async run({ args, options, json, out, signal }) {
        const registries = registriesToAsk(kernel, options.registry);
        const found = await findServer(registries, args[0]!, signal);
        const registry = registries.find((r) => r.name === found.registry)!;
        const versions = (await serverVersions(registry, found.response.server.name, { signal })) ?? [];
        const listed = versions.map((v) => ({ version: v.server.version, status: statusOf(v), ...(v._meta?.[MCP_REGISTRY_OFFICIAL_META]?.isLatest === true && { latest: true }) }));
        if (json) {
          out.json({ ...summary(found), server: found.response.server, meta: found.response._meta?.[MCP_REGISTRY_OFFICIAL_META] ?? {}, versions: listed });
          return EXIT.OK;
        }
        const s = found.response.server;
        const warning = statusWarning(found);
        if (warning) out.note(warning);
        const lines = [
          `${s.name}@${s.version}${s.title ? ` — ${s.title}` : ''}`,
          `registry:  ${found.registry} (${registry.url.href})`,
          `status:    ${statusOf(found.response)}`,
          ...(s.description ? [`about:     ${oneLine(s.description)}`] : []),
          ...(s.websiteUrl ? [`website:   ${s.websiteUrl}`] : []),
          ...(s.repository ? [`source:    ${s.repository.url}`] : []),
          ...(s.packages ?? []).map((p) => `package:   ${p.registryType} ${p.identifier}${p.version ? `@${p.version}` : ''} (${p.transport.type})${(p.environmentVariables ?? []).length > 0 ? `; env: ${p.environmentVariables!.map((e) => `${e.name}${e.isSecret ? ' (secret)' : ''}${e.isRequired ? ' (required)' : ''}`).join(', ')}` : ''}`),
          ...(s.remotes ?? []).map((r) => `remote:    ${r.type} ${r.url}${r.variables ? `; variables: ${Object.keys(r.variables).join(', ')}` : ''}`),
          `versions:  ${listed.map((v) => `${v.version}${v.status === 'active' ? '' : ` (${v.status})`}${v.latest ? ' (latest)' : ''}`).join(', ')}`,
        ];
        out.print(lines.join('\n'));
        return EXIT.OK;
      },
    },
  ];
}

/** `io.github.acme/weather` → `weather`, fitted to the settings' rule for server names. */
function defaultLocalName(name: string): string {
  const last = name.slice(name.lastIndexOf('/') + 1).replace(/[^A-Za-z0-9_-]+/g, '-').replace(/_{2,}/g, '_').replace(/^[^A-Za-z0-9]+/, '');
  return (last || 'server').slice(0, 64);
}

function list(value: unknown): string[] {
  return Array.isArray(value) ? (value as string[]) : typeof value === 'string' ? [value] : [];
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
