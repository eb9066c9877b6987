/**
 * Resolves the settings a plugin declares in its manifest from, in order:
 * `plugins.<name>.settings` in settings.json, the declared environment
 * variable, the declared default. Errors name where a value came from and
 * what type was expected, never the value: it may be a secret.
 */
import { PlinthError } from '../../sdk/errors.js';
import { jsonPath, type SettingDecl } from '../../sdk/manifest.js';
import { REDACTED } from '../../internal/text/redact.js';
import { isStoredSettingRef, storedSettingKey } from '../../internal/settings/stored.js';
import type { Settings } from './schema.js';

type SettingType = SettingDecl['type'];

/** Where a resolved value came from; errors name it so the user knows what to fix. */
type Origin = { kind: 'settings'; path: string } | { kind: 'env'; envVar: string } | { kind: 'default' } | { kind: 'secrets'; path: string };

/**
 * The plugin's settings: every declared setting resolved and type-checked,
 * undeclared keys of `values` kept as they are (the plugin may check more).
 * Throws `PLN_E_SETTING_INVALID` or `PLN_E_SETTING_REQUIRED`, naming the plugin.
 *
 * A `null` value counts as unset, so a workspace can clear a user's value and
 * fall back to the environment or the default.
 */
export function resolvePluginSettings(
  plugin: string,
  decls: readonly SettingDecl[],
  values: Record<string, unknown> | undefined,
  env: Record<string, string | undefined>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values ?? {})) define(out, key, value);

  for (const decl of decls) {
    const path = settingPath(plugin, decl.name);
    const given = values !== undefined && Object.hasOwn(values, decl.name) ? values[decl.name] : undefined;
    const fromEnv = decl.envVar === undefined ? undefined : env[decl.envVar];

    let value: unknown;
    let origin: Origin;
    if (isStoredSettingRef(given)) {
      // Kept in the secret store: checked here, filled in by fillStoredSettings before the plugin is set up.
      if (!decl.sensitive || given.$secret !== storedSettingKey(plugin, decl.name)) throw invalid(plugin, decl, { kind: 'secrets', path });
      define(out, decl.name, given);
      continue;
    } else if (given !== undefined && given !== null) {
      value = given;
      origin = { kind: 'settings', path };
    } else if (decl.envVar !== undefined && fromEnv !== undefined && fromEnv !== '') {
      origin = { kind: 'env', envVar: decl.envVar };
      value = coerce(fromEnv, decl.type, () => invalid(plugin, decl, origin));
    } else if (decl.default !== undefined) {
      value = decl.default;
      origin = { kind: 'default' };
    } else {
      delete out[decl.name];
      if (decl.required) throw required(plugin, decl, path);
      continue;
    }

    if (!hasType(value, decl.type)) throw invalid(plugin, decl, origin, typeName(value));
    define(out, decl.name, value);
  }
  return out;
}

/** Some resolved setting is still a reference to the secret store (see {@link fillStoredSettings}). */
export function hasStoredSettings(resolved: Record<string, unknown>): boolean {
  return Object.values(resolved).some(isStoredSettingRef);
}

/**
 * `resolved` with each reference to the secret store replaced by the value
 * stored there (JSON, as `plinth ext config` writes it) and resolved again:
 * a value no longer stored falls back to the environment and the default, as
 * an unset one does. `store` is the `secrets` service, asked only when a
 * reference is there.
 */
export async function fillStoredSettings(
  plugin: string,
  decls: readonly SettingDecl[],
  resolved: Record<string, unknown>,
  env: Record<string, string | undefined>,
  store: () => Promise<{ get(key: string): Promise<string | undefined> }>,
): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = { ...resolved };
  for (const [name, value] of Object.entries(resolved)) {
    if (!isStoredSettingRef(value)) continue;
    const text = await (await store()).get(value.$secret);
    if (text === undefined) {
      delete values[name];
      continue;
    }
    try {
      define(values, name, JSON.parse(text) as unknown);
    } catch {
      delete values[name]; // not written by plinth: as if unset, never quoted
    }
  }
  return resolvePluginSettings(plugin, decls, values, env);
}

/**
 * The secrets among resolved settings, for the redactor: the strings and
 * numbers of every sensitive setting (numbers as they print), including those
 * nested in a sensitive object or array. A number is a secret as much as a
 * string is (a PIN, an account id); booleans carry no secret.
 */
export function sensitiveValues(decls: readonly SettingDecl[], resolved: Record<string, unknown>): string[] {
  const found: string[] = [];
  const collect = (value: unknown): void => {
    if (isStoredSettingRef(value)) return; // a key, not the secret: its value is added once filled in
    if (typeof value === 'string') found.push(value);
    else if (typeof value === 'number' && Number.isFinite(value)) found.push(String(value));
    else if (Array.isArray(value)) value.forEach(collect);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(collect);
  };
  for (const decl of decls) {
    if (decl.sensitive && Object.hasOwn(resolved, decl.name)) collect(resolved[decl.name]);
  }
  return found;
}

/**
 * A copy of settings for plugins and display (`kernel.config`, `config show`): the value of
 * every setting a plugin declares `sensitive` is replaced with `"[redacted]"`,
 * in the base settings and in every profile.
 */
export function redactSettings(settings: Settings, declsByPlugin: ReadonlyMap<string, readonly SettingDecl[]>): Settings {
  const out: Settings = redactPlugins(settings, declsByPlugin);
  if (settings.profiles) {
    const profiles: NonNullable<Settings['profiles']> = {};
    for (const [name, profile] of Object.entries(settings.profiles)) {
      define(profiles, name, redactPlugins(profile, declsByPlugin));
    }
    out.profiles = profiles;
  }
  return out;
}

function redactPlugins<T extends Pick<Settings, 'plugins'>>(layer: T, declsByPlugin: ReadonlyMap<string, readonly SettingDecl[]>): T {
  if (!layer.plugins) return { ...layer };
  const plugins: NonNullable<Settings['plugins']> = {};
  for (const [name, entry] of Object.entries(layer.plugins)) {
    const sensitive = (declsByPlugin.get(name) ?? []).filter((d) => d.sensitive).map((d) => d.name);
    let value = entry;
    if (entry.settings && sensitive.some((key) => Object.hasOwn(entry.settings as object, key))) {
      const values = { ...entry.settings };
      for (const key of sensitive) {
        // null means "unset" and hides nothing; keep it so the output shows the setting is cleared.
        if (Object.hasOwn(values, key) && values[key] !== null && values[key] !== undefined) define(values, key, REDACTED);
      }
      value = { ...entry, settings: values };
    }
    define(plugins, name, value);
  }
  return { ...layer, plugins };
}

function settingPath(plugin: string, name: string): string {
  return jsonPath(['plugins', plugin, 'settings', name]);
}

/** Turns an environment string into the declared type; calls `fail` when it cannot. */
function coerce(raw: string, type: SettingType, fail: () => PlinthError): unknown {
  const text = raw.trim();
  switch (type) {
    case 'string':
      return raw;
    case 'number': {
      const n = Number(text);
      if (text === '' || !Number.isFinite(n)) throw fail();
      return n;
    }
    case 'boolean': {
      const word = text.toLowerCase();
      if (word === 'true' || word === '1') return true;
      if (word === 'false' || word === '0') return false;
      throw fail();
    }
    case 'object':
    case 'array':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        // The parser's message quotes the text, which may be a secret.
        throw fail();
      }
  }
}

function hasType(value: unknown, type: SettingType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}

/** The kind of a value, never the value itself. */
function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const EXPECTED: Record<SettingType, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'a JSON array',
};

const ENV_EXPECTED: Record<SettingType, string> = {
  string: 'a string',
  number: 'a number',
  boolean: '"true", "false", "1" or "0"',
  object: 'a JSON object',
  array: 'a JSON array',
};

function invalid(plugin: string, decl: SettingDecl, origin: Origin, got?: string): PlinthError {
  const gotText = got === undefined ? '' : ` (got ${got})`;
  let where: string;
  let expected = EXPECTED[decl.type];
  let hint: string;
  if (origin.kind === 'env') {
    where = `environment variable ${origin.envVar} (setting ${settingPath(plugin, decl.name)})`;
    expected = ENV_EXPECTED[decl.type];
    hint = `set ${origin.envVar} to ${expected}, or unset it`;
  } else if (origin.kind === 'settings') {
    where = origin.path;
    hint = `set ${origin.path} to ${expected} in settings.json`;
  } else if (origin.kind === 'secrets') {
    where = `${origin.path} (a reference to the secret store)`;
    expected = `{ "$secret": "${storedSettingKey(plugin, decl.name)}" } of a sensitive setting`;
    hint = `set it with \`plinth ext config ${plugin} ${decl.name} <value>\`, or remove the reference`;
  } else {
    where = `the default of ${settingPath(plugin, decl.name)}`;
    hint = `the plugin's manifest declares a default of the wrong type: report it to the plugin's author, or set ${settingPath(plugin, decl.name)}`;
  }
  return new PlinthError('PLN_E_SETTING_INVALID', `plugin "${plugin}": ${where} must be ${expected}${gotText}`, {
    plugin,
    hint,
    details: {
      setting: decl.name,
      path: settingPath(plugin, decl.name),
      source: origin.kind,
      ...(origin.kind === 'env' && { envVar: origin.envVar }),
      expected: decl.type,
      ...(got !== undefined && { received: got }),
    },
  });
}

function required(plugin: string, decl: SettingDecl, path: string): PlinthError {
  const env = decl.envVar === undefined ? '' : ` or environment variable ${decl.envVar}`;
  return new PlinthError('PLN_E_SETTING_REQUIRED', `plugin "${plugin}" needs ${path}${env} (${EXPECTED[decl.type]})`, {
    plugin,
    hint: `run \`plinth ext config ${plugin} ${decl.name} <value>\` (or set ${path} in settings.json)${decl.envVar === undefined ? '' : `, or export ${decl.envVar}`}`,
    details: { setting: decl.name, path, expected: decl.type, ...(decl.envVar !== undefined && { envVar: decl.envVar }) },
  });
}

/** Own-property assignment, so a `"__proto__"` setting name stays data. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
