/**
 * `plinth mcp search <text>` and `plinth mcp info <name>[@version]`: MCP
 * servers in the registries of `mcpRegistries`, each result saying which
 * registry it comes from; `deprecated` ones warn, `deleted` ones are marked.
 */
import { type CommandSpec, EXIT, PlinthError, type PluginKernel, formatTable as table } from 'plinth/sdk';
import { type McpServerResponse, MCP_REGISTRY_OFFICIAL_META, statusOf } from 'plinth/internal';
import { type McpRegistry, configuredMcpRegistries, listAll, parseServerSpec, serverVersion, serverVersions } from './client.js';

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

export function registryCommands({ kernel }: { readonly kernel: PluginKernel }): CommandSpec[] {
  return [
    {
      name: 'mcp search',
      args: [{ name: 'text', description: 'Part of a server\'s name, title or description (nothing: every server)' }],
      options: { registry: REGISTRY_OPTION },
      async run({ args, options, json, out, signal }) {
        const registries = registriesToAsk(kernel, options.registry);
        const text = args.join(' ').trim();
        const found: Found[] = [];
        const problems: { registry: string; code: string; message: string }[] = [];
        for (const registry of registries) {
          try {
            for (const response of await listAll(registry, { ...(text && { search: text }), version: 'latest', limit: 100 }, { signal })) found.push({ registry: registry.name, response });
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
          out.json({ results: found.map(summary), problems });
          return problems.length > 0 ? EXIT.FAILURE : EXIT.OK;
        }
        for (const p of problems) out.note(`warning: ${p.message} (${p.code})`);
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

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
