/**
 * A plugin's declared settings as `plinth ext config` shows and sets them:
 * where each value comes from (in the kernel's order: the settings files —
 * workspace over user, the profile over both — or the secret store a file
 * points to, then the declared environment variable, then the default), and
 * a typed value from the text on a command line, checked against the
 * declaration. A sensitive value is never in a view: `"[redacted]"` is.
 */
import { z } from 'zod';
import { PlinthError, isPlinthError, type SettingDecl, type SettingView, parseSettings } from 'plinth/sdk';
import { REDACTED, isStoredSettingRef } from 'plinth/internal';
import { entryOf, profileOf, type SettingsLayers } from './enabled.js';

/** Where the settings files are. */
export interface SettingsPlaces {
  readonly user: string;
  readonly workspace: string;
}

/** Every declared setting of `plugin`, resolved as the kernel would resolve it now. */
export function settingViews(plugin: string, decls: readonly SettingDecl[], layers: SettingsLayers, places: SettingsPlaces, env: Record<string, string | undefined>): SettingView[] {
  return decls.map((decl) => settingView(plugin, decl, layers, places, env));
}

function settingView(plugin: string, decl: SettingDecl, layers: SettingsLayers, places: SettingsPlaces, env: Record<string, string | undefined>): SettingView {
  const base = {
    name: decl.name,
    description: decl.description ?? '',
    type: decl.type,
    sensitive: decl.sensitive,
    required: decl.required,
    scope: decl.scope,
    ...(decl.envVar !== undefined && { envVar: decl.envVar }),
  };
  // The last file layer that sets it wins; a workspace value of a user-only setting is ignored, as the kernel ignores it.
  let given: { value: unknown; scope: 'user' | 'workspace' } | undefined;
  const consider = (settings: unknown, scope: 'user' | 'workspace'): void => {
    if (scope === 'workspace' && decl.scope === 'user') return;
    const values = entryOf(settings, plugin)?.settings;
    if (typeof values !== 'object' || values === null || !Object.hasOwn(values, decl.name)) return;
    const value = (values as Record<string, unknown>)[decl.name];
    if (value !== undefined) given = { value, scope };
  };
  consider(layers.user, 'user');
  consider(layers.workspace, 'workspace');
  if (layers.profile !== undefined) {
    consider(profileOf(layers.user, layers.profile), 'user');
    consider(profileOf(layers.workspace, layers.profile), 'workspace');
  }
  const shown = (value: unknown): unknown => (decl.sensitive ? REDACTED : value);
  if (given && given.value !== null) {
    const file = places[given.scope];
    if (isStoredSettingRef(given.value)) return { ...base, from: 'secrets', file, value: REDACTED };
    return { ...base, from: given.scope, file, value: shown(given.value) };
  }
  const fromEnv = decl.envVar === undefined ? undefined : env[decl.envVar];
  if (fromEnv !== undefined && fromEnv !== '') return { ...base, from: 'env', value: shown(fromEnv) };
  if (decl.default !== undefined) return { ...base, from: 'default', value: shown(decl.default) };
  return { ...base, from: 'unset' };
}

/**
 * The value `text` means for `decl` (a string as is; a number, true/false, or
 * JSON for objects and arrays), checked against the declared type. The error
 * never quotes the text: it may be a secret.
 */
export function settingValue(plugin: string, decl: SettingDecl, text: string): unknown {
  let value: unknown = text;
  if (decl.type === 'number') value = text.trim() === '' ? Number.NaN : Number(text);
  else if (decl.type === 'boolean') value = /^(true|1)$/i.test(text.trim()) ? true : /^(false|0)$/i.test(text.trim()) ? false : text;
  else if (decl.type === 'object' || decl.type === 'array') {
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      throw new PlinthError('PLN_E_SETTING_INVALID', `plugin "${plugin}": plugins.${plugin}.settings.${decl.name} must be ${decl.type === 'object' ? 'a JSON object' : 'a JSON array'}; the value given is not JSON`, {
        plugin,
        hint: `quote the JSON for your shell, e.g. '${decl.type === 'object' ? '{"key": "value"}' : '["a", "b"]'}'`,
        details: { setting: decl.name, path: `plugins.${plugin}.settings.${decl.name}`, expected: decl.type },
      });
    }
  }
  return checkedValue(plugin, decl, value);
}

/** `value` when it has the declared type; else `PLN_E_SETTING_INVALID` naming the setting and what was expected (never the value). */
export function checkedValue(plugin: string, decl: SettingDecl, value: unknown): unknown {
  const schema = z.object({ [decl.name]: TYPE_SCHEMAS[decl.type] });
  try {
    return (parseSettings(plugin, schema, { [decl.name]: value }) as Record<string, unknown>)[decl.name];
  } catch (error) {
    // The fix is the command again with a value of the right type, not an edit of settings.json.
    if (!isPlinthError(error)) throw error;
    throw new PlinthError(error.code, error.message, { plugin, hint: `run \`plinth ext config ${plugin} ${decl.name} <value>\` with ${EXPECTED[decl.type]}`, ...(error.details && { details: error.details }) });
  }
}

const TYPE_SCHEMAS: Record<SettingDecl['type'], z.ZodType> = {
  string: z.string({ error: 'expected a string' }),
  number: z.number({ error: 'expected a number' }).refine(Number.isFinite, { error: 'expected a number' }),
  boolean: z.boolean({ error: 'expected true or false (or 1 or 0)' }),
  object: z.record(z.string(), z.unknown(), { error: 'expected a JSON object' }),
  array: z.array(z.unknown(), { error: 'expected a JSON array' }),
};

const EXPECTED: Record<SettingDecl['type'], string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'a JSON array',
};
