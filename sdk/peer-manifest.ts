/**
 * Peer folders as plinth plugins: a Claude Code plugin (`.claude-plugin/plugin.json`,
 * with `hooks/hooks.json` and `.mcp.json`) or a Gemini CLI extension
 * (`gemini-extension.json`, with `hooks/hooks.json`) becomes a declaration-only
 * plinth manifest, so that it is found, linked, installed, enabled, disabled and
 * reloaded like any plugin. Nothing here runs anything: it reads JSON files and
 * writes a manifest, which the caller validates with `parseManifest`.
 *
 * What the manifest holds:
 * - `name` (made npm-style when the peer's is not: lowercased, other characters
 *   `-`, said in `peer.notes`), `version` (`0.0.0` for a Claude plugin without
 *   one; a loose one such as `1.0` made semver), `description`;
 * - `mcpServers`, with the peer's variables expanded (`${CLAUDE_PLUGIN_ROOT}`,
 *   `${CLAUDE_PROJECT_DIR}`, `${extensionPath}`, `${workspacePath}`, `${/}`)
 *   and its environment references in `env`/`headers` written as plinth's
 *   (`${VAR}` → `${env:VAR}`; a declared setting's → `${setting:<plugin>.<name>}`);
 * - `settings` from Gemini's `settings` (named by their `envVar`) and Claude's
 *   `userConfig` (env `CLAUDE_PLUGIN_OPTION_<KEY>`): plinth hands a plugin's
 *   settings to its servers and hooks as those variables, as the peers do;
 * - `hooks` in the peer's own shape (`{ "<PeerEvent>": [{ matcher, hooks: [...] }] }`),
 *   read by the hooks plugin in the dialect `peer.format` names; Gemini's
 *   variables are expanded (Gemini hydrates hooks.json), Claude's
 *   `${CLAUDE_PLUGIN_ROOT}` is left for the hook runner, which sets it;
 * - `peer`: the format, the file, and every field or folder plinth does not
 *   honour (`ignored`) or reads differently (`notes`), for `plinth ext info`.
 */
import { readFile } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import semver from 'semver';
import { describeCause, PlinthError } from './errors.js';
import { parseJsonText } from './json.js';
import type { PeerOrigin } from './manifest.js';

/** The file that marks each peer format, relative to the folder (`/`-separated). */
export const PEER_MANIFEST_FILES = { claude: '.claude-plugin/plugin.json', gemini: 'gemini-extension.json' } as const;

/** The version given to a Claude Code plugin whose plugin.json has none: below every released version. */
export const UNVERSIONED = '0.0.0';

/** What the folder's variables expand to besides its own path. */
export interface PeerContext {
  /** The workspace root (`${workspacePath}`, `${CLAUDE_PROJECT_DIR}`); left as written when unknown. */
  readonly workspace?: string;
  /**
   * Leave the folder's own variables (`${CLAUDE_PLUGIN_ROOT}`, `${extensionPath}`) as written and
   * name the peer's file relative to the folder: for the manifest a packer puts in a registry's
   * document, which must name no path of the publisher's machine.
   */
  readonly asWritten?: true;
}

/** The manifest made from a peer folder, not yet validated, and the file it came from. */
export interface PeerManifest {
  readonly file: string;
  readonly format: PeerOrigin['format'];
  readonly data: Record<string, unknown>;
}

type Field = PeerOrigin['ignored'][number];
type Json = Record<string, unknown>;

/** Reads what the synthesis needs, from a folder on disk (or, for a tarball, from its entries). */
export interface PeerFiles {
  /** The text of the file at a relative `/`-separated path, or undefined when there is none. */
  read(relative: string): Promise<string | undefined>;
  /** Whether a file or folder is at that path. */
  has(relative: string): Promise<boolean>;
}

/**
 * {@link PeerFiles} of a folder on disk (`names`: its listing, when the caller has it). The folder is listed once, and a path whose first name
 * is not in it is answered from the listing: a peer folder is asked about a dozen names (its
 * component folders), most of them absent, and a folder that is no plugin about two.
 */
export function folderFiles(dir: string, names?: Promise<readonly string[]>): PeerFiles {
  const at = (relative: string) => path.join(dir, ...relative.split('/'));
  let listing: Promise<ReadonlySet<string>> | undefined;
  const present = async (relative: string) => {
    // The caller's listing (discovery lists the folder anyway); a folder that cannot be listed holds nothing.
    listing ??= (names ?? readdir(dir)).then((found) => new Set(found), () => new Set<string>());
    return (await listing).has(relative.split('/')[0] ?? '');
  };
  return {
    async read(relative) {
      if (!(await present(relative))) return undefined;
      try {
        // The callback form: fs.promises.readFile goes through a FileHandle, several times slower on small files (see kernel/discovery.ts).
        return await new Promise<string>((resolve, reject) => readFile(at(relative), 'utf8', (error, text) => (error ? reject(error) : resolve(text))));
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${at(relative)}: cannot read: ${describeCause(error)}`, {
          cause: error,
          hint: 'make it readable by plinth (check its permissions), or remove it; every other plugin still loads',
          details: { file: at(relative) },
        });
      }
    },
    has: async (relative) => (await present(relative)) && (!relative.includes('/') || (await stat(at(relative)).then(() => true, () => false))),
  };
}

/**
 * The manifest of the peer folder `dir`, or undefined when it holds neither
 * peer manifest. A folder with both is read as a Claude Code plugin, and its
 * gemini-extension.json is listed as ignored.
 * @throws PlinthError `PLN_E_MANIFEST_UNREADABLE` (a file cannot be read or is not JSON), `PLN_E_MANIFEST_INVALID` (no usable name or version).
 */
export async function readPeerFolder(dir: string, context: PeerContext = {}, files: PeerFiles = folderFiles(dir)): Promise<PeerManifest | undefined> {
  const root = path.resolve(dir);
  const claude = await files.read(PEER_MANIFEST_FILES.claude);
  if (claude !== undefined) return claudePlugin(root, claude, files, context);
  const gemini = await files.read(PEER_MANIFEST_FILES.gemini);
  if (gemini !== undefined) return geminiExtension(root, gemini, files, context);
  return undefined;
}

// ---------------------------------------------------------------- Claude Code

/** plugin.json fields that are metadata only. */
const CLAUDE_METADATA = ['$schema', 'author', 'homepage', 'repository', 'license', 'keywords', 'displayName'];
/** Components plinth has no equivalent of, by plugin.json field and default folder. */
const CLAUDE_UNSUPPORTED: ReadonlyArray<[field: string, folder: string | undefined, reason: string]> = [
  ['commands', 'commands', 'slash commands (markdown) belong to the host\'s prompt; plinth has no slash commands'],
  ['agents', 'agents', 'subagents (markdown) are not a plinth concept'],
  ['skills', 'skills', 'agent skills (SKILL.md) are not a plinth concept'],
  ['outputStyles', 'output-styles', 'output styles change the host\'s prompt, which plinth does not build'],
  ['lspServers', '.lsp.json', 'plinth runs MCP servers, not language servers'],
  ['monitors', undefined, 'not a plinth concept'],
  ['channels', undefined, 'not a plinth concept'],
  ['dependencies', undefined, 'Claude plugin dependencies name other Claude plugins, not plinth plugins with semver ranges; install them yourself'],
  ['settings', 'settings.json', 'a Claude plugin\'s default Claude settings have no plinth meaning'],
];

async function claudePlugin(root: string, text: string, files: PeerFiles, context: PeerContext): Promise<PeerManifest> {
  const file = path.join(root, ...PEER_MANIFEST_FILES.claude.split('/'));
  const raw = objectOf(parse(file, text), file);
  const peer = new Report();
  const name = peerName(raw.name, file, peer, path.basename(root));
  const version = peerVersion(raw.version, file, peer, UNVERSIONED);
  const own = context.asWritten ? '${CLAUDE_PLUGIN_ROOT}' : root;
  const vars = (text: string) => text.replaceAll('${CLAUDE_PLUGIN_ROOT}', own).replaceAll('${CLAUDE_PROJECT_DIR}', context.workspace ?? '${CLAUDE_PROJECT_DIR}');

  const settings = claudeUserConfig(raw.userConfig, peer);
  const toRef = (variable: string): string | undefined => {
    const option = /^user_config\.([A-Za-z0-9_]+)$/.exec(variable)?.[1];
    if (option !== undefined) return settings.some((s) => s.name === option) ? `\${setting:${name}.${option}}` : undefined;
    const bare = /^([A-Za-z_][A-Za-z0-9_]*)(:-.*)?$/.exec(variable);
    if (!bare) return undefined;
    if (bare[2] !== undefined) peer.note('mcpServers', `"\${${variable}}": plinth references have no default, so ${bare[1]} must be set`);
    return `\${env:${bare[1]}}`;
  };

  const servers: Json = {};
  const inline = raw.mcpServers;
  const serverFiles = typeof inline === 'string' || Array.isArray(inline) ? pathList(inline, 'mcpServers', peer) : [];
  if (await files.has('.mcp.json')) serverFiles.unshift('.mcp.json');
  for (const relative of [...new Set(serverFiles)]) {
    const found = await readJsonFile(root, relative, files);
    if (found === undefined) peer.ignore('mcpServers', `${relative} does not exist`);
    else addServers(servers, isObject(found) && isObject(found.mcpServers) ? found.mcpServers : found, relative, { vars, toRef, peer, kind: 'claude' });
  }
  if (isObject(inline)) addServers(servers, inline, 'plugin.json mcpServers', { vars, toRef, peer, kind: 'claude' });

  const hooks: Json = {};
  const hookFiles = typeof raw.hooks === 'string' || Array.isArray(raw.hooks) ? pathList(raw.hooks, 'hooks', peer) : [];
  if (await files.has('hooks')) hookFiles.unshift('hooks/hooks.json');
  for (const relative of [...new Set(hookFiles.map((f) => path.posix.normalize(f)))]) {
    const found = await readJsonFile(root, relative, files);
    // The standard file is optional (a hooks/ folder may hold only scripts); a file plugin.json names is not.
    if (found === undefined) {
      if (relative !== 'hooks/hooks.json') peer.ignore('hooks', `${relative} does not exist`);
    } else addHooks(hooks, found, relative, peer, (s) => s);
  }
  if (isObject(raw.hooks)) addHooks(hooks, isObject(raw.hooks.hooks) ? raw.hooks : { hooks: raw.hooks }, 'plugin.json hooks', peer, (s) => s);

  for (const key of CLAUDE_METADATA) if (raw[key] !== undefined) peer.ignore(key, 'metadata: plinth shows the name, version and description only');
  for (const [field, folder, reason] of CLAUDE_UNSUPPORTED) {
    if (raw[field] !== undefined) peer.ignore(field, reason);
    else if (folder !== undefined && (await files.has(folder))) peer.ignore(folder.includes('.') ? folder : `${folder}/`, reason);
  }
  const known = new Set(['name', 'version', 'description', 'mcpServers', 'hooks', 'userConfig', ...CLAUDE_METADATA, ...CLAUDE_UNSUPPORTED.map(([f]) => f)]);
  for (const key of Object.keys(raw)) if (!known.has(key)) peer.ignore(key, 'a plugin.json field plinth does not know');
  if (await files.has(PEER_MANIFEST_FILES.gemini)) peer.ignore(PEER_MANIFEST_FILES.gemini, 'the folder is also a Gemini CLI extension; plinth reads its Claude Code plugin.json');

  const shown = context.asWritten ? PEER_MANIFEST_FILES.claude : file;
  return { file, format: 'claude', data: manifest(name, version, raw.description, servers, hooks, settings, peer.origin('claude', shown)) };
}

/** `userConfig` → declared settings; each reaches the plugin's servers and hooks as `CLAUDE_PLUGIN_OPTION_<KEY>`. */
function claudeUserConfig(config: unknown, peer: Report): Json[] {
  if (config === undefined) return [];
  if (!isObject(config)) {
    peer.ignore('userConfig', 'expected an object of options');
    return [];
  }
  const settings: Json[] = [];
  for (const [key, option] of Object.entries(config)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || !isObject(option)) {
      peer.ignore(`userConfig.${key}`, 'expected an option named with letters, digits and "_", described by an object');
      continue;
    }
    const type = option.multiple === true ? 'array' : option.type === 'number' ? 'number' : option.type === 'boolean' ? 'boolean' : 'string';
    const words = [option.title, option.description].filter((w): w is string => typeof w === 'string' && w !== '');
    settings.push({
      name: key,
      description: words.join(': '),
      type,
      ...(option.default !== undefined && { default: option.default }),
      required: option.required === true,
      sensitive: option.sensitive === true,
      envVar: `CLAUDE_PLUGIN_OPTION_${key}`,
    });
  }
  if (settings.length > 0) peer.note('userConfig', `options are plinth settings (plinth ext config <plugin> <option>), given to the plugin's servers and hooks as CLAUDE_PLUGIN_OPTION_<OPTION>`);
  return settings;
}

// ----------------------------------------------------------------- Gemini CLI

const GEMINI_UNSUPPORTED: ReadonlyArray<[field: string, folder: string | undefined, reason: string]> = [
  ['themes', undefined, 'themes style the host\'s interface'],
  ['plan', undefined, 'planning is the host\'s'],
  ['migratedTo', undefined, 'plinth updates installed plugins from their registry (plinth ext update)'],
  ['commands', 'commands', 'custom commands (TOML) belong to the host\'s prompt; plinth has no slash commands'],
  ['skills', 'skills', 'agent skills (SKILL.md) are not a plinth concept'],
  ['agents', 'agents', 'sub-agents are not a plinth concept'],
  ['policies', 'policies', 'policy-engine rules (TOML) are not read: use plinth\'s hooks and trust'],
];

async function geminiExtension(root: string, text: string, files: PeerFiles, context: PeerContext): Promise<PeerManifest> {
  const file = path.join(root, PEER_MANIFEST_FILES.gemini);
  const peer = new Report();
  const own = context.asWritten ? '${extensionPath}' : root;
  const vars = (text: string) =>
    text
      .replaceAll('${extensionPath}', own)
      .replaceAll('${/}', path.sep)
      .replaceAll('${pathSeparator}', path.sep)
      .replaceAll('${workspacePath}', context.workspace ?? '${workspacePath}');
  const raw = objectOf(parse(file, text), file);
  const name = peerName(raw.name, file, peer);
  const version = peerVersion(raw.version, file, peer);

  const settings = geminiSettings(raw.settings, peer);
  const toRef = (variable: string): string | undefined => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) return undefined;
    return settings.some((s) => s.name === variable) ? `\${setting:${name}.${variable}}` : `\${env:${variable}}`;
  };
  const excluded = geminiExcludeTools(raw.excludeTools, peer);
  const servers: Json = {};
  if (raw.mcpServers !== undefined) addServers(servers, raw.mcpServers, 'mcpServers', { vars, toRef, peer, kind: 'gemini', excluded, settings: settings.map((s) => s.name as string) });

  const hooks: Json = {};
  const hookText = await readJsonFile(root, 'hooks/hooks.json', files);
  if (hookText !== undefined) addHooks(hooks, hookText, 'hooks/hooks.json', peer, vars);
  if (raw.hooks !== undefined) peer.ignore('hooks', 'Gemini CLI reads hooks from hooks/hooks.json only, and so does plinth');

  const context_ = raw.contextFileName ?? ((await files.has('GEMINI.md')) ? 'GEMINI.md' : undefined);
  if (context_ !== undefined) peer.ignore('contextFileName', `context files (${[context_].flat().join(', ')}) feed the host's prompt, which plinth does not build; they are not loaded`);
  for (const [field, folder, reason] of GEMINI_UNSUPPORTED) {
    if (raw[field] !== undefined) peer.ignore(field, reason);
    else if (folder !== undefined && (await files.has(folder))) peer.ignore(`${folder}/`, reason);
  }
  const known = new Set(['name', 'version', 'description', 'mcpServers', 'settings', 'excludeTools', 'contextFileName', 'hooks', ...GEMINI_UNSUPPORTED.map(([f]) => f)]);
  for (const key of Object.keys(raw)) if (!known.has(key)) peer.ignore(key, 'a gemini-extension.json field plinth does not know');

  const shown = context.asWritten ? PEER_MANIFEST_FILES.gemini : file;
  return { file, format: 'gemini', data: manifest(name, version, raw.description, servers, hooks, settings, peer.origin('gemini', shown)) };
}

/** `settings` → declared settings named by their `envVar`; plinth gives each to the extension's servers and hooks as that variable, as Gemini does. */
function geminiSettings(list: unknown, peer: Report): Json[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    peer.ignore('settings', 'expected a list of settings');
    return [];
  }
  const settings: Json[] = [];
  list.forEach((item: unknown, i) => {
    const envVar = isObject(item) ? item.envVar : undefined;
    if (!isObject(item) || typeof envVar !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(envVar)) {
      peer.ignore(`settings[${i}]`, 'expected { "name", "description", "envVar", "sensitive" } with envVar an environment variable name');
      return;
    }
    if (settings.some((s) => s.name === envVar)) return void peer.ignore(`settings[${i}]`, `envVar ${envVar} is declared twice`);
    const words = [item.name, item.description].filter((w): w is string => typeof w === 'string' && w !== '');
    settings.push({ name: envVar, description: words.join(': '), type: 'string', sensitive: item.sensitive === true, envVar });
  });
  if (settings.length > 0) peer.note('settings', 'each setting is named by its envVar (plinth ext config <plugin> <ENV_VAR>); a sensitive one is kept in plinth\'s secret store, not in the extension\'s .env');
  return settings;
}

/** Plain tool names; Gemini's command-specific forms (`run_shell_command(rm -rf)`) are listed as ignored. */
function geminiExcludeTools(list: unknown, peer: Report): string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    peer.ignore('excludeTools', 'expected a list of tool names');
    return [];
  }
  const names: string[] = [];
  list.forEach((item: unknown, i) => {
    if (typeof item === 'string' && /^[^()\s]+$/.test(item)) names.push(item);
    else peer.ignore(`excludeTools[${i}]`, `${JSON.stringify(item)}: command-specific restrictions of the host's own tools have no plinth meaning`);
  });
  if (names.length > 0) peer.note('excludeTools', `${names.join(', ')}: hidden from this extension's own MCP servers (their excludeTools); tools of other plugins and of the host are not affected`);
  return names;
}

// ------------------------------------------------------------------- shared

interface ServerOptions {
  readonly vars: (text: string) => string;
  /** A `${…}` body in env or headers as a plinth reference, or undefined to leave it. */
  readonly toRef: (variable: string) => string | undefined;
  readonly peer: Report;
  readonly kind: 'claude' | 'gemini';
  readonly excluded?: readonly string[];
  /** Gemini setting names (env vars): `"KEY": "${KEY}"` is left to plinth, which passes the setting as KEY anyway. */
  readonly settings?: readonly string[];
}

/** The keys of a server entry plinth reads as they are. */
const SERVER_KEYS = new Set(['command', 'args', 'env', 'cwd', 'url', 'headers', 'type', 'includeTools', 'excludeTools']);

/** Adds the servers of one `mcpServers` map, translated; a later file's server of the same name replaces an earlier one. */
function addServers(into: Json, map: unknown, where: string, options: ServerOptions): void {
  const { peer } = options;
  if (!isObject(map)) return void peer.ignore(where, 'expected an object keyed by server name');
  for (const [name, entry] of Object.entries(map)) {
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
      else if (key === 'env' || key === 'headers') out[key] = references(value, options, name, key);
      else out[key] = expand(value, options.vars);
    }
    // Gemini's `url` is an SSE endpoint (`httpUrl` is streamable HTTP).
    if (options.kind === 'gemini' && entry.url !== undefined && entry.httpUrl === undefined && entry.type === undefined) out.transport = 'sse';
    if (options.excluded && options.excluded.length > 0) out.excludeTools = [...((out.excludeTools as string[] | undefined) ?? []), ...options.excluded];
    into[name] = out;
  }
}

/** `env`/`headers` values with the peer's variables expanded and its `${VAR}` written as plinth references. */
function references(values: unknown, options: ServerOptions, server: string, key: string): unknown {
  if (!isObject(values)) return values;
  const out: Json = {};
  for (const [name, value] of Object.entries(values)) {
    if (typeof value !== 'string') {
      out[name] = value;
      continue;
    }
    // The setting reaches the server under its own variable already (kernel.settingsEnv): repeating it would refuse a sensitive one.
    if (key === 'env' && value === `\${${name}}` && options.settings?.includes(name)) continue;
    out[name] = options.vars(value).replace(/\$\{([^}]*)\}/g, (whole, body: string) => {
      if (/^(env|setting):/.test(body)) return whole;
      const ref = options.toRef(body);
      if (ref === undefined) options.peer.note(`mcpServers.${server}.${key}.${name}`, `"${whole}" is not a variable plinth can supply`);
      return ref ?? whole;
    });
  }
  return out;
}

/** Merges one hooks file (`{ "hooks": { "<Event>": [...] } }`) into `into`, event lists concatenated. */
function addHooks(into: Json, found: unknown, where: string, peer: Report, vars: (text: string) => string): void {
  if (!isObject(found) || !isObject(found.hooks)) return void peer.ignore(where, 'expected { "hooks": { "<Event>": [ { "matcher", "hooks": [...] } ] } }');
  for (const key of Object.keys(found)) if (key !== 'hooks' && key !== 'description') peer.ignore(`${where}: ${key}`, 'not a hooks-file field plinth knows');
  for (const [event, list] of Object.entries(found.hooks)) {
    const entries = expand(list, vars);
    into[event] = Array.isArray(into[event]) && Array.isArray(entries) ? [...(into[event] as unknown[]), ...entries] : entries;
  }
}

function manifest(name: string, version: string, description: unknown, servers: Json, hooks: Json, settings: Json[], peer: PeerOrigin): Json {
  return {
    name,
    version,
    description: typeof description === 'string' ? description : '',
    mcpServers: servers,
    hooks,
    settings,
    peer,
  };
}

/** Collects what is ignored and what is read differently. */
class Report {
  readonly ignored: Field[] = [];
  readonly notes: Field[] = [];
  ignore(field: string, reason: string): void {
    this.ignored.push({ field, reason });
  }
  note(field: string, reason: string): void {
    this.notes.push({ field, reason });
  }
  origin(format: PeerOrigin['format'], file: string): PeerOrigin {
    return { format, file, ignored: this.ignored, notes: this.notes };
  }
}

/**
 * The peer's name as a plinth name. Peers ask for lowercase words with dashes,
 * so nearly every name fits as it is; one that does not is lowercased and every
 * run of other characters becomes `-`, and a note says so.
 */
function peerName(given: unknown, file: string, peer: Report, fallback?: string): string {
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
function peerVersion(given: unknown, file: string, peer: Report, fallback?: string): string {
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
  return new PlinthError('PLN_E_MANIFEST_INVALID', `${file}: ${field}: ${message}`, {
    hint: 'correct the field in the peer\'s manifest; every other plugin still loads',
    details: { file, issues: [{ path: field, message }] },
  });
}

function parse(file: string, text: string): unknown {
  const json = parseJsonText(text);
  if (json.ok) return json.value;
  const { line, column, problem } = json.error;
  throw new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${file}:${line}:${column}: invalid JSON: ${problem}`, {
    hint: 'fix the JSON at the line and column given; every other plugin still loads',
    details: { file, line, column },
  });
}

function objectOf(value: unknown, file: string): Json {
  if (isObject(value)) return value;
  throw invalid(file, '(root)', 'expected a JSON object such as { "name": "my-plugin", "version": "1.0.0" }');
}

/** A JSON file of the folder, parsed; undefined when missing. A path leading outside the folder is refused. */
async function readJsonFile(root: string, relative: string, files: PeerFiles): Promise<unknown> {
  const normal = path.posix.normalize(relative.replace(/\\/g, '/'));
  if (normal.startsWith('../') || normal === '..' || path.posix.isAbsolute(normal)) return undefined;
  const text = await files.read(normal);
  return text === undefined ? undefined : parse(path.join(root, ...normal.split('/')), text);
}

/** A plugin.json path field (`"./x.json"` or a list of them) as folder-relative paths; others are listed as ignored. */
function pathList(value: unknown, field: string, peer: Report): string[] {
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

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
