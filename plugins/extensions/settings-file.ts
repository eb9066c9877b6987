/**
 * The settings files as `plinth ext …` edits them: the sdk's one settings-file
 * editor (lock, atomic write, a concurrent edit applied again) under this
 * plugin's error code, and the entries it changes (`plugins.<name>`,
 * `plugins.<name>.settings`).
 */
import { type ExtensionScope } from 'plinth/sdk';
import { type SettingsData, type SettingsEdit, type SettingsFileOwner, type SettingsFileRef as FileRef, editSettingsFile, readSettingsFile, settingsFileError } from 'plinth/internal';

/** A settings file, as `kernel.inspect().config.files` names it. */
export interface SettingsFileRef extends FileRef {
  readonly scope: ExtensionScope;
}

export type { SettingsData, SettingsEdit };

const OWNER: SettingsFileOwner = { code: 'PLN_E_EXT_SETTINGS_WRITE', plugin: 'extensions' };

/** The file's settings; an absent or empty file has none. */
export function readSettings(ref: SettingsFileRef): Promise<SettingsData> {
  return readSettingsFile(ref, OWNER);
}

/**
 * Applies `edit` and writes the file when it changed.
 * @throws PlinthError `PLN_E_EXT_SETTINGS_WRITE` when the file cannot be read, parsed or written; `PLN_E_FILE_LOCKED`.
 */
export function editSettings<T>(ref: SettingsFileRef, edit: SettingsEdit<T>): Promise<T> {
  return editSettingsFile(ref, OWNER, edit);
}

/** `data.plugins[name]` as an object to change (created when absent), or an error naming the file when it is not an object. */
export function pluginEntry(data: SettingsData, name: string, ref: SettingsFileRef): Record<string, unknown> {
  const plugins = objectAt(data, 'plugins', ref, 'plugins');
  return objectAt(plugins, name, ref, `plugins.${name}`);
}

/** `entry.settings` as an object to change (created when absent). */
export function settingsEntry(entry: Record<string, unknown>, name: string, ref: SettingsFileRef): Record<string, unknown> {
  return objectAt(entry, 'settings', ref, `plugins.${name}.settings`);
}

/** Drops `plugins.<name>.settings` and `plugins.<name>` (and `plugins`) when they became empty. */
export function pruneEmpty(data: SettingsData, name: string): void {
  const plugins = data.plugins as Record<string, Record<string, unknown>> | undefined;
  const entry = plugins?.[name];
  if (!plugins || !entry) return;
  if (isObject(entry.settings) && Object.keys(entry.settings).length === 0) delete entry.settings;
  if (Object.keys(entry).length === 0) delete plugins[name];
  if (Object.keys(plugins).length === 0) delete data.plugins;
}

function objectAt(parent: Record<string, unknown>, key: string, ref: SettingsFileRef, path: string): Record<string, unknown> {
  const value = Object.hasOwn(parent, key) ? parent[key] : undefined;
  if (value === undefined) {
    const created: Record<string, unknown> = {};
    Object.defineProperty(parent, key, { value: created, enumerable: true, writable: true, configurable: true });
    return created;
  }
  if (!isObject(value)) throw writeError(ref, `${path} in ${ref.scope} settings ${ref.file} is not an object; plinth will not rewrite it`, undefined, `make ${path} an object, or remove it`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function writeError(ref: SettingsFileRef, message: string, cause?: unknown, hint?: string) {
  return settingsFileError(ref, OWNER, message, cause, hint);
}
