/**
 * Loads the user and workspace `settings.json`, validates each on its own so
 * that an error names the file it is in, merges them (workspace over user)
 * and overlays the selected profile.
 */
import { readFile } from 'node:fs/promises';
import { noteRead } from '../../internal/fs/read-paths.js';
import path from 'node:path';
import { parseJsonText } from '../../internal/text/json.js';
import { jsonPath } from '../../sdk/manifest.js';
import { PlinthError } from '../../sdk/errors.js';
import { DEFAULT_TIMEOUTS, settingsSchema, type Settings, type Timeouts } from './schema.js';

/** Which settings file: `<home>/settings.json` or `<workspace>/.plinth/settings.json`. */
export type ConfigScope = 'user' | 'workspace';

/** One settings file plinth looked for. */
export interface ConfigFile {
  scope: ConfigScope;
  /** Absolute path. */
  file: string;
  exists: boolean;
}

/** The effective configuration. */
export interface Config {
  /** Merged settings, the profile applied, `pluginDirs` absolute. `profiles` keeps every merged profile. */
  settings: Settings;
  /** The files looked for, user first. */
  files: ConfigFile[];
  /** The profile applied, if any. */
  profile: string | undefined;
  /**
   * Plugin name → the layer whose `enabled` value won: `user settings`,
   * `workspace settings` or `profile <name>`. Absent from hand-built configs.
   */
  enabledFrom?: ReadonlyMap<string, string>;
  /**
   * Each file's own settings, then each file's part of the profile, in merge
   * order: for plugins whose trust depends on which file a section came from
   * (a workspace hook needs approval, a user hook does not).
   */
  layers?: readonly ConfigLayer[];
}

/** The settings of one file (or one file's part of the selected profile), before merging. */
export interface ConfigLayer {
  scope: ConfigScope;
  file: string;
  /** Set when this layer is the file's part of the selected profile. */
  profile?: string;
  settings: Settings;
}

/** What {@link loadConfig} needs to know. */
export interface LoadConfigOptions {
  /** The user home, `$PLINTH_HOME` or `~/.plinth`. */
  home: string;
  /** The project folder; its settings are in `.plinth/settings.json`. */
  workspace: string;
  /** Profile to apply; defaults to `env.PLINTH_PROFILE`. */
  profile?: string;
  /** Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Reads, validates, merges and applies the profile. Throws a PlinthError on any problem. */
export async function loadConfig(options: LoadConfigOptions): Promise<Config> {
  const env = options.env ?? process.env;
  const user = await readSettingsFile('user', path.resolve(options.home, 'settings.json'));
  const workspace = await readSettingsFile('workspace', path.resolve(options.workspace, '.plinth', 'settings.json'));
  // An empty name (`PLINTH_PROFILE=`) means "no profile", as unset variables do in shells.
  const profile = (options.profile ?? env.PLINTH_PROFILE) || undefined;
  return combineFiles(user, workspace, profile);
}

/** One settings file as read: where it is and its validated settings. */
export interface SettingsFile {
  readonly file: ConfigFile;
  readonly settings: Settings;
}

/**
 * The effective configuration of two files: workspace merged over user, then
 * the profile's overlay (both files' parts of it). Throws
 * `PLN_E_PROFILE_UNKNOWN` when `profile` is defined in neither file.
 */
export function combineFiles(user: SettingsFile, workspace: SettingsFile, profile: string | undefined): Config {
  const layers: Array<{ label: string; settings: Settings }> = [
    { label: 'user settings', settings: user.settings },
    { label: 'workspace settings', settings: workspace.settings },
  ];
  let settings = mergeLayer(user.settings, workspace.settings);

  if (profile !== undefined) {
    const profiles = settings.profiles ?? {};
    const overlay = Object.hasOwn(profiles, profile) ? profiles[profile] : undefined;
    if (overlay === undefined) throw unknownProfile(profile, Object.keys(profiles), [user.file, workspace.file]);
    layers.push({ label: `profile ${profile}`, settings: overlay });
    settings = mergeLayer(settings, overlay);
  }

  const fileLayers: ConfigLayer[] = [user, workspace].map((f) => ({ scope: f.file.scope, file: f.file.file, settings: f.settings }));
  if (profile !== undefined) {
    for (const f of [user, workspace]) {
      const profiles = f.settings.profiles ?? {};
      const part = Object.hasOwn(profiles, profile) ? profiles[profile] : undefined;
      if (part) fileLayers.push({ scope: f.file.scope, file: f.file.file, profile, settings: part });
    }
  }

  return {
    settings,
    files: [user.file, workspace.file],
    profile,
    enabledFrom: enabledProvenance(layers),
    layers: fileLayers,
  };
}

/**
 * The two files behind a config from {@link loadConfig} (the layers without a
 * profile); undefined for a config built by hand.
 */
export function settingsFiles(config: Config): { user: SettingsFile; workspace: SettingsFile } | undefined {
  const find = (scope: ConfigScope): SettingsFile | undefined => {
    const layer = config.layers?.find((l) => l.scope === scope && l.profile === undefined);
    const file = config.files.find((f) => f.scope === scope);
    return layer && file ? { file, settings: layer.settings } : undefined;
  };
  const user = find('user');
  const workspace = find('workspace');
  return user && workspace ? { user, workspace } : undefined;
}

/**
 * Plugins switched off by settings: name → where the winning `enabled: false`
 * came from (`user settings`, `workspace settings`, `profile <name>`).
 */
export function disabledPlugins(config: Config): Map<string, string> {
  const disabled = new Map<string, string>();
  for (const [name, entry] of Object.entries(config.settings.plugins ?? {})) {
    if (entry.enabled === false) disabled.set(name, config.enabledFrom?.get(name) ?? 'settings');
  }
  return disabled;
}

/**
 * `pluginDirs` of the merged settings, each with the file that names it: `user`
 * when the user settings file (or its part of the profile) lists it, otherwise
 * `workspace`. A folder named only by the workspace came with the project.
 */
export function pluginDirScopes(config: Pick<Config, 'settings' | 'layers'>): Array<{ dir: string; scope: ConfigScope }> {
  const user = new Set((config.layers ?? []).filter((l) => l.scope === 'user').flatMap((l) => l.settings.pluginDirs ?? []));
  return (config.settings.pluginDirs ?? []).map((dir) => ({ dir, scope: user.has(dir) ? 'user' : 'workspace' }));
}

/** The time limits in force: {@link DEFAULT_TIMEOUTS} with whatever settings override. */
export function timeouts(config: Pick<Config, 'settings'>): Timeouts {
  return { ...DEFAULT_TIMEOUTS, ...config.settings.timeouts };
}

async function readSettingsFile(scope: ConfigScope, file: string): Promise<{ file: ConfigFile; settings: Settings }> {
  let text: string;
  try {
    noteRead(file);
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOTDIR: a folder on the way is a file, so this settings file cannot exist either.
    if (code === 'ENOENT' || code === 'ENOTDIR') return { file: { scope, file, exists: false }, settings: {} };
    throw new PlinthError('PLN_E_CONFIG_READ', `cannot read ${scope} settings ${file}: ${code ?? 'unknown error'}`, {
      cause: error,
      hint: 'check that the file is a readable file, not a folder',
      details: { file },
    });
  }

  const data = parseJson(text, file);
  const result = settingsSchema.safeParse(data);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => {
      // A bad record key carries the useful message one level down.
      const inner = issue.code === 'invalid_key' ? issue.issues.map((i) => i.message).join('; ') : '';
      return { path: jsonPath(issue.path), message: inner ? `invalid name: ${inner}` : issue.message };
    });
    const lines = issues.map((i) => `  ${i.path || '(top level)'}: ${i.message}`).join('\n');
    throw new PlinthError('PLN_E_CONFIG_INVALID', `invalid ${scope} settings ${file}:\n${lines}`, {
      hint: 'fix the keys listed, or remove them',
      details: { file, issues },
    });
  }
  return { file: { scope, file, exists: true }, settings: resolveDirs(result.data, path.dirname(file)) };
}

function parseJson(text: string, file: string): unknown {
  // An empty file is what `touch settings.json` leaves: treat it as no settings.
  if (text.replace(/^\uFEFF/, '').trim() === '') return {};
  const parsed = parseJsonText(text);
  if (parsed.ok) return parsed.value;
  // The message never quotes the text around the error: a settings file may hold a secret.
  const { line, column, problem } = parsed.error;
  throw new PlinthError('PLN_E_CONFIG_PARSE', `invalid JSON in ${file}:${line}:${column}: ${problem}`, {
    hint: 'settings files are strict JSON: double-quoted names, no comments, no trailing commas',
    details: { file, line, column },
  });
}

/** Makes relative plugin folders absolute against the folder of the file that names them. */
function resolveDirs(settings: Settings, base: string): Settings {
  const out: Settings = { ...settings };
  if (settings.pluginDirs) out.pluginDirs = settings.pluginDirs.map((dir) => path.resolve(base, dir));
  if (settings.profiles) {
    out.profiles = {};
    for (const [name, profile] of Object.entries(settings.profiles)) {
      setOwn(out.profiles, name, profile.pluginDirs ? { ...profile, pluginDirs: profile.pluginDirs.map((dir) => path.resolve(base, dir)) } : profile);
    }
  }
  return out;
}

/** One layer over another: deep for objects, arrays replaced, except `pluginDirs`, which add up. */
function mergeLayer<T extends Settings>(base: T, over: Settings): T {
  const out = deepMerge(base, over) as T;
  if (base.pluginDirs && over.pluginDirs) out.pluginDirs = [...new Set([...base.pluginDirs, ...over.pluginDirs])];
  if (base.profiles && over.profiles) {
    const profiles = { ...base.profiles };
    for (const [name, profile] of Object.entries(over.profiles)) {
      const under = Object.hasOwn(base.profiles, name) ? base.profiles[name] : undefined;
      setOwn(profiles, name, under ? mergeLayer(under, profile) : profile);
    }
    out.profiles = profiles;
  }
  return out;
}

function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    setOwn(out, key, Object.hasOwn(base, key) ? deepMerge(base[key], value) : value);
  }
  return out;
}

/** Assigns without letting a `"__proto__"` key from a JSON file replace the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function enabledProvenance(layers: ReadonlyArray<{ label: string; settings: Settings }>): Map<string, string> {
  const from = new Map<string, string>();
  for (const { label, settings } of layers) {
    for (const [name, entry] of Object.entries(settings.plugins ?? {})) {
      if (entry.enabled !== undefined) from.set(name, label);
    }
  }
  return from;
}

function unknownProfile(profile: string, defined: string[], files: ConfigFile[]): PlinthError {
  const known = defined.length > 0 ? `defined profiles: ${defined.sort().join(', ')}` : 'no profiles are defined';
  return new PlinthError('PLN_E_PROFILE_UNKNOWN', `unknown profile "${profile}" (${known})`, {
    hint: `use one of the defined profiles, or add "${profile}" under "profiles" in ${files.map((f) => f.file).join(' or ')}`,
    details: { profile, defined },
  });
}
