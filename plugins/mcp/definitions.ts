/**
 * Every MCP server definition, from every place one can be written, merged by
 * name and normalised into {@link McpServerDefinition}s. A server's source is
 * decided here, from where it was loaded (the settings layer's scope, the
 * plugin's source), never from a path pattern.
 *
 * Order, lowest precedence first:
 * 1. plugin manifests (`mcpServers` of every plugin that is active or lazy; a
 *    refused or failed plugin contributes nothing), in load order: `builtin`
 *    for builtin plugins, `extension` for the others; cwd the plugin folder;
 * 2. the user settings, then the workspace settings;
 * 3. the selected profile's part of the user file, then of the workspace file.
 *
 * A user entry never runs what the workspace holds (the sdk's rule,
 * internal/permissions/workspace-content.ts): its relative paths, and its default cwd, are the
 * user folder's; `${workspace}` in `args` or `cwd` names the project as data.
 * A user entry that still names something inside the workspace (an explicit
 * cwd there, an absolute program, argument or env path below its root) is
 * workspace content: it becomes a workspace server (approved per workspace,
 * confined as `settings:workspace`), and says why in its origin. Entries
 * of plinth's host `PATH` inside the workspace are left out of a user
 * server's `PATH`.
 *
 * An entry with `command` or `url`, or with a `transport` that is not one of
 * plinth's own (a third-party transport may need neither), defines the
 * server: it replaces, whole, an earlier definition of the same name (the
 * workspace's over the user's). Any other entry amends the earlier definition
 * field by field (`env` and `headers` key by key): `{ "enabled": false }`
 * switches a server off, and a profile's `{ "transport": "sse" }` swaps its
 * transport. An amended server takes the stricter source of the two (a
 * workspace amendment makes it a workspace server, which needs approval). Two
 * plugins declaring one name is a `PLN_E_MCP_SERVER_DUPLICATE` problem; the
 * first stays. A plugin's server marked `"fallback": true` (the builtin demo)
 * is left out once any server that is not a fallback is defined, anywhere.
 *
 * Bad input never throws: each problem is a PlinthError naming the file and
 * JSON path, and the entry is left out. A reference that cannot be resolved
 * keeps the server listed, with the problem, and it fails when started.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { type ConfigLayerView, NO_PERMISSIONS, type PlinthError, type PluginInfo, type Principal, type TrustSource } from 'plinth/sdk';
import { SECRET_NAME, entryFolder, envSourceOf, expandWorkspace, isInside, pathOutside, withPackageRunner, workspaceWords } from 'plinth/internal';
import { urlSecrets } from './redact.js';
import { type ReferenceLookup, resolveReferences } from './references.js';
import { type McpServerEntry, mcpServerEntrySchema } from 'plinth/sdk';
import { MCP_SERVER_NAME, mcpEntryTransport } from 'plinth/internal';
import { type ProblemPlace, definesServer, definitionProblem, entryProblems, pathKey } from './schema.js';
import type { McpServerDefinition } from 'plinth/sdk';

/** What {@link collectServers} reads. */
export interface DefinitionInputs {
  /** The kernel's `configLayers`, in merge order. */
  readonly layers: readonly ConfigLayerView[];
  /** Plugins seen by the `manifest` hook whose servers count (active or lazy), in load order. */
  readonly plugins: readonly PluginInfo[];
  /** Every plugin's manifest, for the declarations `${setting:…}` references need. */
  readonly manifests: readonly PluginInfo[];
  /** The merged settings (`kernel.config`), where `${setting:…}` values are read. */
  readonly config: Readonly<Record<string, unknown>>;
  /** Where `${env:…}` values are read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * A plugin's declared settings as its environment variables, sensitive ones included
   * (`kernel.settingsEnv`): where a plugin's own `${setting:…}` of a sensitive setting is read,
   * since the merged settings hold those redacted. Without it, such references are refused.
   */
  readonly settingsEnv?: (plugin: string) => Readonly<Record<string, string>>;
  readonly home: string;
  readonly workspace: string;
  /** The plugin's `connectTimeout`, for servers without their own `timeout`. */
  readonly connectTimeoutMs: number;
}

/** One server: its definition and what the trust plugin fingerprints. */
export interface ServerRecord {
  readonly definition: McpServerDefinition;
  /**
   * The id trust approvals are kept under: the name, or `<name>@<profile>` when
   * the selected profile defined or amended the server, so that switching
   * profiles does not undo (or need again) the other profile's approval.
   */
  readonly trustId: string;
  /**
   * `args`, `env` and `headers` as written (`${workspace}` and references unresolved): fingerprinted, so a changed secret does not need
   * approval again, and a user server naming `${workspace}` is the same one in every folder;
   * `cwdIsDefault` when no cwd was written and it defaulted to the workspace (then not part of the server's identity).
   */
  readonly written: { readonly args?: readonly string[]; readonly env: Readonly<Record<string, string>>; readonly headers: Readonly<Record<string, string>>; readonly cwdIsDefault: boolean };
  /** Set when a reference could not be resolved: starting the server fails with it. */
  readonly unresolved?: PlinthError;
}

/** Servers found, in definition order, and every problem met on the way. */
export interface DefinitionSet {
  readonly servers: readonly ServerRecord[];
  readonly problems: readonly PlinthError[];
}

/** A definition on its way through the layers. */
interface Draft {
  entry: McpServerEntry;
  source: TrustSource;
  origins: string[];
  plugin?: string;
  /** cwd when the entry gives none: the workspace root, or the plugin folder. */
  defaultCwd: string;
  /** `<file>#<path>.env.KEY` per env and header key, for problems. */
  keyOrigins: Map<string, string>;
  /** The env and header keys (`env\0KEY`) whose values the plugin's own manifest wrote: only these may read its sensitive settings. */
  ownKeys: Set<string>;
  /** A peer plugin's spelling of each plinth reference its translation wrote (`${env:X}` → `${X}`), for problems in those keys. */
  spelling?: Readonly<Record<string, string>>;
  /** The profile whose layer defined or amended it. */
  profile?: string;
  /** Declared by a plugin with `"fallback": true`: left out once any other server is defined. */
  fallback?: boolean;
}

/** Sources from least to most in need of approval. */
const STRICTNESS: readonly TrustSource[] = ['builtin', 'user', 'extension', 'downloaded', 'workspace'];


/**
 * The source of a plugin's manifest servers: `builtin` for builtin plugins,
 * `extension` otherwise (the marketplace will answer `downloaded` for what it installed).
 */
export function pluginServerSource(plugin: Pick<PluginInfo, 'source'>): TrustSource {
  return plugin.source === 'builtin' ? 'builtin' : 'extension';
}

/** Collects and normalises every server definition. Never throws for bad input. */
export function collectServers(inputs: DefinitionInputs): DefinitionSet {
  const problems: PlinthError[] = [];
  const drafts = new Map<string, Draft>();
  const home = resolve(inputs.home);
  const workspace = resolve(inputs.workspace);

  for (const plugin of inputs.plugins) {
    const base = plugin.dir || workspace;
    for (const { section, origin, at, spelling } of pluginSections(plugin)) {
      readSection(section, { origin, plugin: plugin.name, source: pluginServerSource(plugin) }, at, base, base, workspace, (name, found, path) => {
        const place = { origin, plugin: plugin.name, source: found.source };
        const draft: Draft = spelling ? { ...found, spelling } : found;
        const earlier = drafts.get(name);
        if (!definesServer(draft.entry)) {
          problems.push(definitionProblem('PLN_E_MCP_SERVER_INVALID', place, path, 'expected "command" (a local server), "url" (a remote server) or the "transport" of a transport plugin', name));
        } else if (earlier) {
          problems.push(definitionProblem('PLN_E_MCP_SERVER_DUPLICATE', place, path, `server "${name}" is already declared by ${earlier.origins[0]}; this one is ignored`, name));
        } else drafts.set(name, draft);
      }, problems);
    }
  }

  const ordered = [...inputs.layers.filter((l) => l.profile === undefined), ...inputs.layers.filter((l) => l.profile !== undefined)];
  for (const layer of ordered) {
    const at = layer.profile !== undefined ? `profiles${pathKey(layer.profile)}.mcpServers` : 'mcpServers';
    const place = { origin: layer.file, source: layer.scope };
    // The user's entries run from the user folder, as the user's hooks do: never from whatever the workspace holds.
    const folder = entryFolder(layer.scope, { home, workspace });
    readSection(layer.settings.mcpServers, place, at, folder, folder, workspace, (name, found, path) => {
      const draft: Draft = layer.profile !== undefined ? { ...found, profile: layer.profile } : found;
      const earlier = drafts.get(name);
      if (definesServer(draft.entry)) return void drafts.set(name, draft);
      if (!earlier) {
        problems.push(definitionProblem('PLN_E_MCP_SERVER_INVALID', place, path, 'expected "command" (a local server), "url" (a remote server) or the "transport" of a transport plugin; an entry with none of them amends an earlier definition, and there is none of this name', name));
        return;
      }
      const amended = amend(earlier, draft);
      const check = mcpServerEntrySchema.safeParse(amended.entry);
      if (!check.success) problems.push(...entryProblems(check.error, place, path, name));
      else drafts.set(name, amended);
    }, problems);
  }

  // A fallback server (the builtin demo) is there for a first run only: once anything else defines
  // a server (the user's or the workspace's settings, a profile, another plugin), it is left out.
  if ([...drafts.values()].some((draft) => draft.fallback !== true)) {
    for (const [name, draft] of drafts) if (draft.fallback === true) drafts.delete(name);
  }

  const lookup = (owner: string | undefined) => referenceLookup(inputs, owner);
  const pluginsByName = new Map(inputs.plugins.map((plugin) => [plugin.name, plugin]));
  const userHome = inputs.env.HOME ?? homedir();
  // A workspace that holds the user's own folders (plinth run from the home folder) is the user's: nothing in it is judged as a project's.
  const projectOnly = !isInside(home, workspace) && !(isAbsolute(userHome) && isInside(userHome, workspace));
  const places = { home, workspace, realWorkspace: realFolder(workspace), hostPath: inputs.env.PATH, projectOnly };
  const servers = [...drafts].map(([name, draft]) => finish(name, draft, inputs.connectTimeoutMs, lookup, problems, places, (source) => serverPrincipal(name, { ...draft, source }, pluginsByName, home, workspace)));
  return { servers, problems };
}

/** One part of a plugin's `mcpServers`, with the file and JSON path its entries were written at. */
interface PluginSection {
  readonly section: unknown;
  readonly origin: string;
  /** The path of the section in that file (`''`: the file is the map itself). */
  readonly at: string;
  /** The peer's spelling of each plinth reference in the entries' env and headers. */
  readonly spelling?: Readonly<Record<string, string>>;
}

/**
 * A plugin's servers by where they were written: its manifest.json's `mcpServers`; for a plugin
 * made from a Claude Code or Gemini CLI folder, each server at its place in the peer's own file
 * (a Claude plugin's `.mcp.json`, not its `plugin.json`), so that problems name what the author wrote.
 */
function pluginSections(plugin: PluginInfo): PluginSection[] {
  const { mcpServers, peer } = plugin.manifest;
  const file = plugin.dir ? join(plugin.dir, 'manifest.json') : `plugin "${plugin.name}" (in memory)`;
  if (peer === undefined) return [{ section: mcpServers, origin: file, at: 'mcpServers' }];
  const written = peer.servers ?? {};
  if (mcpServers === undefined || mcpServers === null || typeof mcpServers !== 'object' || Array.isArray(mcpServers)) return [{ section: mcpServers, origin: peer.file, at: 'mcpServers' }];
  return Object.entries(mcpServers).map(([name, entry]) => {
    const where = Object.hasOwn(written, name) ? written[name] : undefined;
    if (where === undefined || !plugin.dir) return { section: { [name]: entry }, origin: peer.file, at: 'mcpServers' };
    return { section: { [name]: entry }, origin: join(plugin.dir, ...where.file.split('/')), at: where.at, spelling: where.references };
  });
}

/** Validates each entry of one `mcpServers` section and hands the good ones to `take`. */
function readSection(
  section: unknown,
  place: ProblemPlace & { source: TrustSource },
  at: string,
  baseDir: string,
  defaultCwd: string,
  workspace: string,
  take: (name: string, draft: Draft, path: string) => void,
  problems: PlinthError[],
): void {
  if (section === undefined || section === null) return;
  if (typeof section !== 'object' || Array.isArray(section)) {
    problems.push(definitionProblem('PLN_E_MCP_SERVER_INVALID', place, at, 'expected an object keyed by server name'));
    return;
  }
  for (const [name, raw] of Object.entries(section)) {
    const path = at === '' ? pathKey(name).replace(/^\./, '') : `${at}${pathKey(name)}`;
    if (!MCP_SERVER_NAME.test(name) || name.includes('__')) {
      const why = name.includes('__') ? '"__" separates server and tool in tool names' : 'use letters, digits, "_" and "-" (at most 64), starting with a letter or digit';
      problems.push(definitionProblem('PLN_E_MCP_SERVER_INVALID', place, path, `"${name}" cannot be a server name: ${why}`, name));
      continue;
    }
    // `fallback` is a plugin's word about its own server; in a settings file it is an unknown key like any other.
    const { body, fallback } = place.plugin !== undefined ? withoutFallback(raw) : { body: raw, fallback: false };
    const parsed = mcpServerEntrySchema.safeParse(body);
    if (!parsed.success) {
      problems.push(...entryProblems(parsed.error, place, path, name));
      continue;
    }
    const entry = { ...parsed.data };
    // A relative cwd is relative to the place the entry came from, whichever layer later amends it.
    if (entry.cwd !== undefined) {
      const cwd = expandWorkspace(entry.cwd, workspace);
      entry.cwd = isAbsolute(cwd) ? cwd : resolve(baseDir, cwd);
    }
    const keyOrigins = new Map<string, string>();
    for (const key of Object.keys(entry.env ?? {})) keyOrigins.set(`env\0${key}`, `${place.origin}#${path}.env${pathKey(key)}`);
    for (const key of Object.keys(entry.headers ?? {})) keyOrigins.set(`headers\0${key}`, `${place.origin}#${path}.headers${pathKey(key)}`);
    const draft: Draft = {
      entry,
      source: place.source,
      origins: [`${place.origin}#${path}`],
      defaultCwd,
      keyOrigins,
      ownKeys: place.plugin !== undefined ? new Set(keyOrigins.keys()) : new Set(),
      ...(place.plugin !== undefined && { plugin: place.plugin }),
      ...(fallback && { fallback: true }),
    };
    take(name, draft, path);
  }
}

/** A manifest entry without its `fallback` flag (which the entry schema does not know), and the flag. */
function withoutFallback(raw: unknown): { body: unknown; fallback: boolean } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !Object.hasOwn(raw, 'fallback')) return { body: raw, fallback: false };
  const { fallback, ...body } = raw as Record<string, unknown>;
  return { body, fallback: fallback === true };
}

/** `earlier` with `amendment`'s fields over it. */
function amend(earlier: Draft, amendment: Draft): Draft {
  const entry: McpServerEntry = { ...earlier.entry, ...amendment.entry };
  // One way of naming the transport wins: the amendment's.
  if (amendment.entry.transport !== undefined) delete entry.type;
  if (amendment.entry.type !== undefined) delete entry.transport;
  if (earlier.entry.env || amendment.entry.env) entry.env = { ...earlier.entry.env, ...amendment.entry.env };
  if (earlier.entry.headers || amendment.entry.headers) entry.headers = { ...earlier.entry.headers, ...amendment.entry.headers };
  const strictest = Math.max(STRICTNESS.indexOf(earlier.source), STRICTNESS.indexOf(amendment.source));
  return {
    entry,
    source: STRICTNESS[strictest] ?? 'workspace',
    origins: [...earlier.origins, ...amendment.origins],
    defaultCwd: earlier.defaultCwd,
    keyOrigins: new Map([...earlier.keyOrigins, ...amendment.keyOrigins]),
    // A key a settings file sets again is the file's value, no longer the plugin's.
    ownKeys: new Set([...earlier.ownKeys].filter((key) => !amendment.keyOrigins.has(key))),
    ...(earlier.plugin !== undefined && { plugin: earlier.plugin }),
    ...(earlier.spelling !== undefined && { spelling: earlier.spelling }),
    ...((amendment.profile ?? earlier.profile) !== undefined && { profile: amendment.profile ?? earlier.profile }),
    // Switching the demo off (`{ "demo": { "enabled": false } }`) does not make it the user's own server.
    ...(earlier.fallback === true && { fallback: true }),
  };
}

/** The normalised definition: defaults filled in, references resolved, secrets listed. */
/**
 * Whom a server's process acts for: the plugin that declared it (its manifest
 * `permissions`, its folder), or the settings scope (the entry's own
 * `permissions`; a server a workspace file defined or amended is the workspace's).
 */
function serverPrincipal(name: string, draft: Draft, plugins: ReadonlyMap<string, PluginInfo>, home: string, workspace: string): Principal {
  const plugin = draft.plugin === undefined ? undefined : plugins.get(draft.plugin);
  if (plugin !== undefined && draft.source !== 'workspace') {
    return {
      id: plugin.name,
      source: draft.source === 'downloaded' ? 'downloaded' : plugin.source,
      ...(plugin.dir && { dir: plugin.dir }),
      declared: plugin.manifest.permissions,
      label: `MCP server "${name}" of plugin "${plugin.name}"`,
    };
  }
  const scope = draft.source === 'workspace' ? 'workspace' : 'user';
  // Where each env value comes from, as written (never the value): the grants are keyed by it.
  const envFrom = Object.fromEntries(Object.entries(draft.entry.env ?? {}).map(([key, value]) => [key, envSourceOf(value)]));
  // A package runner (`npx -y pkg`, `uvx pkg`) also needs its registry's host and its own variables: asked for with what the entry declares.
  const declared = withPackageRunner(draft.entry.permissions ?? NO_PERMISSIONS, draft.entry.command, draft.entry.args ?? [], draft.entry.env ?? {});
  return { id: `settings:${scope}`, source: scope, dir: scope === 'workspace' ? workspace : home, declared, envFrom, label: `MCP server "${name}" from ${scope} settings` };
}

/** Where a server's paths are judged: the user folder, the workspace root, plinth's own `PATH`. */
interface Places {
  readonly home: string;
  readonly workspace: string;
  /** The workspace's real path, when it differs (the workspace was named through a link). */
  readonly realWorkspace: string | undefined;
  readonly hostPath: string | undefined;
  /** False when the workspace holds the user's home folder or plinth's user folder: then what lies in it is not judged as workspace content. */
  readonly projectOnly: boolean;
}

function finish(name: string, draft: Draft, connectTimeoutMs: number, lookup: (owner: string | undefined) => ReferenceLookup, problems: PlinthError[], places: Places, principalFor: (source: TrustSource) => Principal): ServerRecord {
  const { entry } = draft;
  const { workspace } = places;
  const secrets = new Set<string>();
  let unresolved: PlinthError | undefined;
  const resolveAll = (kind: 'env' | 'headers', values: Record<string, string> | undefined): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(values ?? {})) {
      // A value the plugin's manifest wrote speaks for that plugin; any other, for a settings file.
      const own = draft.ownKeys.has(`${kind}\0${key}`);
      const owner = own ? draft.plugin : undefined;
      // A peer's value is quoted as its author wrote it (`${TOKEN}`), not as plinth reads it (`${env:TOKEN}`).
      const spelling = own ? draft.spelling : undefined;
      const resolved = resolveReferences(value, lookup(owner), spelling && ((reference) => (Object.hasOwn(spelling, reference) ? spelling[reference] : undefined)));
      if ('problem' in resolved) {
        const where = draft.keyOrigins.get(`${kind}\0${key}`) ?? draft.origins.at(-1) ?? '';
        const [origin = where, path = ''] = where.split('#');
        const problem = definitionProblem('PLN_E_MCP_REFERENCE_UNRESOLVED', { origin, source: draft.source, ...(draft.plugin !== undefined && { plugin: draft.plugin }) }, path, resolved.problem, name);
        problems.push(problem);
        unresolved ??= problem;
        continue;
      }
      for (const secret of resolved.secrets) secrets.add(secret);
      // Whole values under secret-looking names (`Authorization: Bearer …`) are secrets too, literal or not.
      if (SECRET_NAME.test(key)) secrets.add(resolved.value);
      Object.defineProperty(out, key, { value: resolved.value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  const env = resolveAll('env', entry.env);
  const headers = resolveAll('headers', entry.headers);
  const args = (entry.args ?? []).map((arg) => expandWorkspace(arg, workspace));
  const cwd = entry.cwd ?? draft.defaultCwd;
  let source = draft.source;
  let origin = draft.origins.length === 1 ? draft.origins[0]! : `${draft.origins[0]!}, amended by ${draft.origins.slice(1).join(', ')}`;
  if (source === 'user' && draft.plugin === undefined && entry.command !== undefined && places.projectOnly) {
    const inside = [...new Set([places.workspace, places.realWorkspace].flatMap((folder) => (folder === undefined ? [] : workspaceContent(entry, args, cwd, env, { ...places, workspace: folder }))))];
    if (inside.length > 0) {
      // What a user entry runs from the workspace is workspace content: approved per workspace and confined, as the workspace's own.
      source = 'workspace';
      origin = `${origin} (runs workspace content: ${inside.join(', ')})`;
    } else if (!Object.hasOwn(env, 'PATH')) {
      // plinth's own PATH may hold project folders (direnv, a shell that adds ./bin): a user server looks its programs up elsewhere.
      const path = [workspace, places.realWorkspace].reduce<string | undefined>((kept, folder) => (folder === undefined ? kept : (pathOutside(kept, folder) ?? kept)), places.hostPath);
      if (path !== places.hostPath && path !== undefined) env.PATH = path;
    }
  }
  // A password or token in the URL: errors (fetch's among them) quote the URL whole.
  if (entry.url !== undefined) for (const secret of urlSecrets(entry.url)) secrets.add(secret);
  const definition: McpServerDefinition = {
    name,
    transport: mcpEntryTransport(entry) ?? (entry.command !== undefined ? 'stdio' : 'auto'),
    ...(entry.command !== undefined && { command: entry.command }),
    args,
    env,
    cwd,
    ...(entry.url !== undefined && { url: entry.url }),
    headers,
    connectTimeoutMs: entry.timeout ?? connectTimeoutMs,
    enabled: entry.enabled ?? true,
    ...(entry.includeTools !== undefined && { includeTools: entry.includeTools }),
    ...(entry.excludeTools !== undefined && { excludeTools: entry.excludeTools }),
    ...(entry.oauth !== undefined && { oauth: entry.oauth }),
    ...(entry.prefix !== undefined && { prefix: entry.prefix }),
    ...(entry.protocol !== undefined && { protocol: entry.protocol }),
    source,
    origin,
    ...(draft.plugin !== undefined && { plugin: draft.plugin }),
    secrets: [...secrets],
    actingFor: principalFor(source),
  };
  return {
    definition,
    trustId: draft.profile !== undefined ? `${name}@${draft.profile}` : name,
    written: { args: [...(entry.args ?? [])], env: { ...entry.env }, headers: { ...entry.headers }, cwdIsDefault: entry.cwd === undefined && draft.defaultCwd === workspace },
    ...(unresolved !== undefined && { unresolved }),
  };
}

/**
 * `${env:…}` from the environment given; `${setting:…}` from the merged settings, the declared
 * env var, the declared default. A sensitive setting is handed only to its own plugin's servers
 * (`owner`: the plugin whose manifest wrote the value), as the plugin's own settings environment
 * holds it; a settings file or another plugin is refused it.
 */
function referenceLookup(inputs: DefinitionInputs, owner: string | undefined): ReferenceLookup {
  return {
    env: (name) => (Object.hasOwn(inputs.env, name) ? inputs.env[name] : undefined),
    setting(plugin, name) {
      const decl = inputs.manifests.find((p) => p.name === plugin)?.manifest.settings.find((s) => s.name === name);
      const what = `\${setting:${plugin}.${name}}`;
      if (!decl) return { problem: `"${what}" refers to a setting that plugin "${plugin}" does not declare` };
      if (decl.sensitive) return ownSensitive(inputs, plugin, name, decl.envVar, owner === plugin, what);
      const plugins = inputs.config.plugins as Record<string, { settings?: Record<string, unknown> }> | undefined;
      const own = plugins !== undefined && Object.hasOwn(plugins, plugin) ? plugins[plugin]?.settings : undefined;
      const fromEnv = decl.envVar !== undefined && Object.hasOwn(inputs.env, decl.envVar) ? inputs.env[decl.envVar] : undefined;
      const value = own !== undefined && Object.hasOwn(own, name) ? own[name] : (fromEnv ?? decl.default);
      if (typeof value === 'string') return { value };
      if (typeof value === 'number' || typeof value === 'boolean') return { value: String(value) };
      if (value === undefined) return { problem: `"${what}" refers to a setting with no value (set plugins.${plugin}.settings.${name})` };
      return { problem: `"${what}" refers to a setting whose value is not a string, number or boolean` };
    },
  };
}

/** A sensitive setting's value for one of its own plugin's servers, or why it cannot be had. */
function ownSensitive(inputs: DefinitionInputs, plugin: string, name: string, envVar: string | undefined, own: boolean, what: string): { value: string } | { problem: string } {
  if (!own) {
    return { problem: `"${what}" refers to a sensitive setting of plugin "${plugin}", which plinth hands only to that plugin's own servers; write the value here, or reference an environment variable (\${env:NAME})` };
  }
  // Only the plugin's settings environment holds a sensitive value unredacted; one without an envVar has no place there.
  if (envVar === undefined) return { problem: `"${what}" refers to a sensitive setting that declares no envVar, and plinth hands a sensitive setting to its plugin's servers only as its envVar: declare one` };
  const value = inputs.settingsEnv?.(plugin)[envVar];
  if (value === undefined) return { problem: `"${what}" refers to a setting with no value (set it with \`plinth ext config ${plugin} ${name}\`)` };
  return { value };
}

/**
 * What a user entry names inside the workspace, for its origin (env values by name only: they may be secrets):
 * an explicit cwd there, an absolute program, argument or env path below its root. What lies in the user
 * folder is the user's (the caller skips this altogether when the workspace holds the user's folders).
 */
function workspaceContent(entry: McpServerEntry, args: readonly string[], cwd: string, env: Readonly<Record<string, string>>, places: Places): string[] {
  const { home, workspace } = places;
  const theirs = (path: string, strictly: boolean) => isInside(path, workspace, strictly) && !isInside(path, home);
  const found: string[] = [];
  if (entry.cwd !== undefined && theirs(cwd, false)) found.push(`cwd ${cwd}`);
  if (entry.command !== undefined && isAbsolute(entry.command) && theirs(entry.command, true)) found.push(`command ${entry.command}`);
  for (const arg of args) for (const word of workspaceWords(arg, workspace)) if (!isInside(word, home)) found.push(`argument ${word}`);
  for (const [key, value] of Object.entries(env)) {
    if (workspaceWords(value, workspace).some((word) => !isInside(word, home))) found.push(`env ${key}`);
    else if (key === 'PATH' && value.split(delimiter).some((entry) => isAbsolute(entry) && resolve(entry) === workspace)) found.push('env PATH');
  }
  return found;
}

/** `folder`'s real path when it differs from `folder`; undefined when it is the same or cannot be read. */
function realFolder(folder: string): string | undefined {
  try {
    const real = realpathSync(folder);
    return real === folder ? undefined : real;
  } catch {
    return undefined;
  }
}
