/** What reading either peer's folder needs: translating server entries and hooks files, names, versions, JSON, and the report of what is ignored. */
import path from 'node:path';
import semver from 'semver';
import { PlinthError } from '../../sdk/errors.js';
import { safeLine } from '../../sdk/format.js';
import { parseJsonText } from '../text/json.js';
import type { PeerOrigin } from '../../sdk/manifest.js';
import { type PeerProtocol, peerHookGaps } from './hooks.js';
import type { Field, Json, PeerFiles } from './types.js';

type PeerServer = NonNullable<PeerOrigin['servers']>[string];

export interface ServerOptions {
  readonly vars: (text: string) => string;
  /** A `${…}` body in env or headers as a plinth reference, or undefined to leave it. */
  readonly toRef: (variable: string) => string | undefined;
  readonly peer: Report;
  /** Whose server entries: Claude Code's shape (Codex plugins' `.mcp.json` too) or Gemini CLI's. */
  readonly kind: 'claude' | 'gemini';
  readonly excluded?: readonly string[];
  /** Gemini setting names (env vars): `"KEY": "${KEY}"` is left to plinth, which passes the setting as KEY anyway. */
  readonly settings?: readonly string[];
}

/** The keys of a server entry plinth reads as they are. */
const SERVER_KEYS = new Set(['command', 'args', 'env', 'cwd', 'url', 'headers', 'type', 'includeTools', 'excludeTools']);

/** Where a map of servers is written: the folder's file (`/`-separated) and the JSON path of the map in it (`mcpServers`, or `''` for a file that is the map). */
export interface ServerFile {
  readonly file: string;
  readonly at: string;
}

/**
 * Adds the servers of one `mcpServers` map, translated; a later file's server of the same name
 * replaces an earlier one. Each server's file, path and references as written go to the report.
 */
export function addServers(into: Json, map: unknown, where: ServerFile, options: ServerOptions): void {
  const { peer } = options;
  if (!isObject(map)) return void peer.ignore(where.at === '' ? where.file : `${where.file} ${where.at}`, 'expected an object keyed by server name');
  for (const [name, entry] of Object.entries(map)) {
    const written: Record<string, string> = {};
    peer.server(name, { file: where.file, at: where.at, references: written });
    if (!isObject(entry)) {
      into[name] = entry; // the mcp plugin says what is wrong with it
      continue;
    }
    const out: Json = {};
    for (const [key, value] of Object.entries(entry)) {
      const field = `mcpServers.${name}.${key}`;
      if (options.kind === 'gemini' && key === 'httpUrl' && typeof value === 'string') {
        out.url = options.vars(value);
        out.transport = 'http';
      } else if (options.kind === 'gemini' && key === 'timeout' && typeof value === 'number') {
        out.timeout = value;
        peer.note(field, 'used as the connection timeout (ms)');
      } else if (key === 'trust') peer.ignore(field, 'approval is plinth\'s trust decision (plinth trust approve), never the server\'s own word');
      else if (!SERVER_KEYS.has(key)) peer.ignore(field, 'not a server option plinth knows');
      else if (key === 'env' || key === 'headers') out[key] = references(value, options, name, key, written);
      else out[key] = expand(value, options.vars);
    }
    // Gemini's `url` is an SSE endpoint (`httpUrl` is streamable HTTP).
    if (options.kind === 'gemini' && entry.url !== undefined && entry.httpUrl === undefined && entry.type === undefined) out.transport = 'sse';
    if (options.excluded && options.excluded.length > 0) out.excludeTools = [...((out.excludeTools as string[] | undefined) ?? []), ...options.excluded];
    into[name] = out;
  }
}

/** `env`/`headers` values with the peer's variables expanded and its `${VAR}` written as plinth references. */
function references(values: unknown, options: ServerOptions, server: string, key: string, written: Record<string, string>): unknown {
  if (!isObject(values)) return values;
  const out: Json = {};
  for (const [name, value] of Object.entries(values)) {
    if (typeof value !== 'string') {
      out[name] = value;
      continue;
    }
    // Gemini CLI expands `$VAR` in a server's env as it does `${VAR}`.
    const bare = options.kind === 'gemini' && key === 'env';
    // The setting reaches the server under its own variable already (kernel.settingsEnv): a reference to it there says nothing more.
    if (key === 'env' && (value === `\${${name}}` || (bare && value === `$${name}`)) && options.settings?.includes(name)) continue;
    const variables = bare ? /\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g : /\$\{([^}]*)\}/g;
    out[name] = options.vars(value).replace(variables, (whole, braced: string | undefined, plain: string | undefined) => {
      const body = braced ?? plain!;
      if (/^(env|setting):/.test(body)) return whole;
      const ref = options.toRef(body);
      if (ref === undefined) options.peer.note(`mcpServers.${server}.${key}.${name}`, `"${whole}" is not a variable plinth can supply`);
      else written[ref] ??= whole;
      return ref ?? whole;
    });
  }
  return out;
}

/**
 * Adds the servers of the files `relatives` names (each `{ "mcpServers": { … } }` as `.mcp.json` is,
 * or the map itself); a file that does not exist is reported.
 */
export async function addServerFiles(into: Json, relatives: readonly string[], root: string, files: PeerFiles, options: ServerOptions): Promise<void> {
  for (const relative of new Set(relatives)) {
    const found = await readJsonFile(root, relative, files);
    if (found === undefined) options.peer.ignore('mcpServers', `${relative} does not exist`);
    else {
      const wrapped = isObject(found) && isObject(found.mcpServers);
      addServers(into, wrapped ? found.mcpServers : found, { file: relative, at: wrapped ? 'mcpServers' : '' }, options);
    }
  }
}

/**
 * Merges the hooks files `relatives` names. The standard `hooks/hooks.json` is optional (a hooks/
 * folder may hold only scripts); a file the manifest names and that does not exist is reported.
 */
export async function addHookFiles(into: Json, relatives: readonly string[], root: string, files: PeerFiles, peer: Report, format: PeerProtocol): Promise<void> {
  for (const relative of new Set(relatives.map((f) => path.posix.normalize(f)))) {
    const found = await readJsonFile(root, relative, files);
    if (found === undefined) {
      if (relative !== 'hooks/hooks.json') peer.ignore('hooks', `${relative} does not exist`);
    } else addHooks(into, found, relative, peer, (s) => s, format);
  }
}

/**
 * Merges one hooks file (`{ "hooks": { "<Event>": [...] } }`) into `into`, event lists concatenated.
 * What plinth does not do yet with a hook ({@link peerHookGaps}) is reported: a hook that never runs
 * as ignored, a field it runs without as read differently.
 */
export function addHooks(into: Json, found: unknown, where: string, peer: Report, vars: (text: string) => string, format: PeerProtocol): void {
  if (!isObject(found) || !isObject(found.hooks)) return void peer.ignore(where, 'expected { "hooks": { "<Event>": [ { "matcher", "hooks": [...] } ] } }');
  for (const key of Object.keys(found)) if (key !== 'hooks' && key !== 'description') peer.ignore(`${where}: ${key}`, 'not a hooks-file field plinth knows');
  for (const [event, list] of Object.entries(found.hooks)) {
    if (Array.isArray(list)) {
      list.forEach((group, g) => {
        const hooks = isObject(group) && Array.isArray(group.hooks) ? group.hooks : [];
        hooks.forEach((hook, h) => {
          for (const gap of peerHookGaps(format, hook)) (gap.unrunnable ? peer.ignore : peer.note).call(peer, `${where}: ${event}[${g}].hooks[${h}].${gap.field}`, gap.reason);
        });
      });
    }
    const entries = expand(list, vars);
    into[event] = Array.isArray(into[event]) && Array.isArray(entries) ? [...(into[event] as unknown[]), ...entries] : entries;
  }
}

export function manifest(name: string, version: string, description: unknown, servers: Json, hooks: Json, settings: Json[], peer: PeerOrigin, permissions: Json = {}): Json {
  return {
    name,
    version,
    description: typeof description === 'string' ? description : '',
    mcpServers: servers,
    hooks,
    settings,
    permissions,
    peer,
  };
}

/**
 * What the peer's contract gives its hooks and servers, as plinth permissions: Claude Code and
 * Gemini CLI run them in the project folder with the user's rights, so they may read and write
 * the project (`filesystem.write ${workspace}`; plinth's protected files in it stay read-only),
 * and get the variables the plugin's settings map (`CLAUDE_PLUGIN_OPTION_<KEY>`, a Gemini
 * setting's `envVar`). A folder with neither hooks nor servers runs nothing and gets nothing.
 * Shown and granted like any declared permission (install, `perms grant <plugin>`); noted in `peer.notes`.
 */
export function peerPermissions(servers: Json, hooks: Json, settings: readonly Json[], peer: Report, host: string): Json {
  const runs = Object.keys(servers).length > 0 || Object.keys(hooks).length > 0;
  if (!runs) return {};
  const handlers = handlerReach(hooks);
  const mapped = [...new Set(settings.map((s) => s.envVar).filter((v): v is string => typeof v === 'string'))];
  const headerEnv = handlers.env.filter((name) => !mapped.includes(name));
  const env = [...mapped, ...headerEnv];
  const what = [
    'the project folder (filesystem.write ${workspace})',
    ...(mapped.length > 0 ? [`the variables its settings map (env ${mapped.join(', ')})`] : []),
    ...(headerEnv.length > 0 ? [`the variables its http hooks' headers read (env ${headerEnv.join(', ')})`] : []),
    ...(handlers.network.length > 0 ? [`the hosts its http hooks post to (network ${handlers.network.join(', ')})`] : []),
    ...(handlers.mcp.length > 0 ? [`the MCP servers its mcp_tool hooks call (mcp ${handlers.mcp.join(', ')})`] : []),
  ];
  peer.note('permissions', `derived from what ${host} gives its hooks and servers: ${what.join(' and ')}; granted like declared permissions (plinth perms grant <plugin>), and their cwd is the project`);
  return {
    filesystem: { write: ['${workspace}'] },
    ...(env.length > 0 && { env }),
    ...(handlers.network.length > 0 && { network: { allow: handlers.network } }),
    ...(handlers.mcp.length > 0 && { mcp: handlers.mcp }),
  };
}

/**
 * What a peer section's `http` and `mcp_tool` hooks reach, as the peer lets them: the host and
 * port of each `url`, the variables `allowedEnvVars` lists, the servers `mcp_tool` hooks call.
 */
function handlerReach(hooks: Json): { network: string[]; env: string[]; mcp: string[] } {
  const network = new Set<string>();
  const env = new Set<string>();
  const mcp = new Set<string>();
  for (const groups of Object.values(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      const list = typeof group === 'object' && group !== null ? (group as { hooks?: unknown }).hooks : undefined;
      if (!Array.isArray(list)) continue;
      for (const hook of list as Array<Record<string, unknown> | null>) {
        if (typeof hook !== 'object' || hook === null) continue;
        if (hook.type === 'http' && typeof hook.url === 'string') {
          try {
            const url = new URL(hook.url);
            if (url.protocol === 'http:' || url.protocol === 'https:') network.add(url.host);
          } catch {
            // An unreadable URL is the hooks plugin's to report; it reaches nothing.
          }
          if (Array.isArray(hook.allowedEnvVars)) for (const name of hook.allowedEnvVars) if (typeof name === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) env.add(name);
        }
        if (hook.type === 'mcp_tool' && typeof hook.server === 'string' && hook.server !== '') mcp.add(hook.server);
      }
    }
  }
  return { network: [...network], env: [...env], mcp: [...mcp] };
}

/** Collects what is ignored and what is read differently. */
export class Report {
  readonly ignored: Field[] = [];
  readonly notes: Field[] = [];
  readonly #servers = new Map<string, PeerServer>();
  ignore(field: string, reason: string): void {
    this.ignored.push({ field, reason });
  }
  note(field: string, reason: string): void {
    this.notes.push({ field, reason });
  }
  /** Where server `name` is written; a later file's server of the same name replaces it, as its entry does. */
  server(name: string, where: PeerServer): void {
    this.#servers.set(name, where);
  }
  origin(format: PeerOrigin['format'], file: string): PeerOrigin {
    return { format, file, ignored: this.ignored, notes: this.notes, ...(this.#servers.size > 0 && { servers: Object.fromEntries(this.#servers) }), contributions: [] };
  }
}

/**
 * The peer's name as a plinth name. Peers ask for lowercase words with dashes,
 * so nearly every name fits as it is; one that does not is lowercased and every
 * run of other characters becomes `-`, and a note says so.
 */
export function peerName(given: unknown, file: string, peer: Report, fallback?: string): string {
  const name = typeof given === 'string' && given.trim() !== '' ? given : fallback;
  if (name === undefined) throw invalid(file, 'name', 'missing: add "name", e.g. "my-extension"');
  const fitted = name
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[-._~]+|-+$/g, '')
    .slice(0, 214);
  if (fitted === '') throw invalid(file, 'name', `"${name}" has no letter or digit plinth can use as a plugin name`);
  if (given === undefined) peer.note('name', `plugin.json has no name: the folder's name "${fitted}" is used, as Claude Code does`);
  else if (fitted !== name) peer.note('name', `"${name}" is not an npm-style name; plinth calls it "${fitted}"`);
  return fitted;
}

/** A semver version; a loose one (`1.0`, `v2`) is made one, with a note; none: `fallback`, or an error when the peer requires one. */
export function peerVersion(given: unknown, file: string, peer: Report, fallback?: string): string {
  if (given === undefined && fallback !== undefined) {
    peer.note('version', `none given: plinth uses ${fallback}, below every released version`);
    return fallback;
  }
  if (typeof given !== 'string') throw invalid(file, 'version', 'missing: add "version", e.g. "1.0.0"');
  const valid = semver.valid(given);
  if (valid !== null) return valid;
  const coerced = semver.coerce(given)?.version;
  if (coerced === undefined) throw invalid(file, 'version', `"${given}" is not a version: expected semver such as "1.2.3"`);
  peer.note('version', `"${given}" is read as ${coerced}`);
  return coerced;
}

function invalid(file: string, field: string, message: string): PlinthError {
  return new PlinthError('PLN_E_MANIFEST_INVALID', `${safeLine(file)}: ${field}: ${safeLine(message)}`, {
    hint: 'correct the field in the peer\'s manifest; every other plugin still loads',
    details: { file, issues: [{ path: field, message }] },
  });
}

export function parse(file: string, text: string): unknown {
  const json = parseJsonText(text);
  if (json.ok) return json.value;
  const { line, column, problem } = json.error;
  throw new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${safeLine(file)}:${line}:${column}: invalid JSON: ${problem}`, {
    hint: 'fix the JSON at the line and column given; every other plugin still loads',
    details: { file, line, column },
  });
}

export function objectOf(value: unknown, file: string): Json {
  if (isObject(value)) return value;
  throw invalid(file, '(root)', 'expected a JSON object such as { "name": "my-plugin", "version": "1.0.0" }');
}

/** A JSON file of the folder, parsed; undefined when missing. A path leading outside the folder is refused. */
export async function readJsonFile(root: string, relative: string, files: PeerFiles): Promise<unknown> {
  const normal = path.posix.normalize(relative.replace(/\\/g, '/'));
  if (normal.startsWith('../') || normal === '..' || path.posix.isAbsolute(normal)) return undefined;
  const text = await files.read(normal);
  return text === undefined ? undefined : parse(path.join(root, ...normal.split('/')), text);
}

/** A plugin.json path field (`"./x.json"` or a list of them) as folder-relative paths; others are listed as ignored. */
export function pathList(value: unknown, field: string, peer: Report): string[] {
  const list = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const item of list) {
    const normal = typeof item === 'string' ? path.posix.normalize(item.replace(/\\/g, '/')) : undefined;
    if (normal === undefined || normal.startsWith('../') || normal === '..' || path.posix.isAbsolute(normal)) peer.ignore(field, `${JSON.stringify(item)}: expected a path inside the plugin folder, e.g. "./config/servers.json"`);
    else out.push(normal);
  }
  return out;
}

/** Every string inside `value` passed through `vars`. */
function expand(value: unknown, vars: (text: string) => string): unknown {
  if (typeof value === 'string') return vars(value);
  if (Array.isArray(value)) return value.map((item) => expand(item, vars));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, vars)]));
  return value;
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
