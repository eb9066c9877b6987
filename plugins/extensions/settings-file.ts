/**
 * Reads and edits one settings file (user or workspace) for `plinth ext …`:
 * under the file's lock (the sdk's `withFileLock`, the convention every plinth
 * command that edits settings follows), read, change, and replace the file
 * atomically (`writeFileAtomic`), so a plinth starting meanwhile sees the old
 * file or the new one. A program that takes no lock (an editor) is noticed by
 * comparing the file just before writing, and the edit is applied again to its
 * version. The rest of the file is kept as parsed, in its key order and indent.
 */
import { mkdir, readFile, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type ExtensionScope, type FileLockOptions, PlinthError, isPlinthError, parseJsonText, withFileLock, writeFileAtomic } from 'plinth/sdk';

/** A settings file, as `kernel.inspect().config.files` names it. */
export interface SettingsFileRef {
  readonly scope: ExtensionScope;
  readonly file: string;
}

/** A JSON object as read from a settings file. */
export type SettingsData = Record<string, unknown>;

/** An edit of the whole file's object (a copy it may change in place). */
export type SettingsEdit<T> = (data: SettingsData) => { readonly changed: boolean; readonly result: T };

const ATTEMPTS = 5;
const LOCK: FileLockOptions = { timeoutMs: 5_000, staleMs: 10_000 };

/** The file's settings; an absent or empty file has none. */
export async function readSettings(ref: SettingsFileRef): Promise<SettingsData> {
  return (await readCurrent(ref))?.data ?? {};
}

/**
 * Applies `edit` and writes the file when it changed.
 * @throws PlinthError `PLN_E_EXT_SETTINGS_WRITE` when the file cannot be read, parsed or written; `PLN_E_FILE_LOCKED`.
 */
export async function editSettings<T>(ref: SettingsFileRef, edit: SettingsEdit<T>): Promise<T> {
  const target = await realpath(ref.file).catch(() => ref.file);
  const folder = dirname(target);
  await mkdir(folder, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
    throw writeError(ref, `cannot create the folder ${folder}`, error);
  });
  try {
    return await withFileLock(`${target}.lock`, () => editLocked(ref, target, edit), LOCK);
  } catch (error) {
    if (isPlinthError(error) && error.code === 'PLN_E_FILE_WRITE') throw writeError(ref, `cannot create the lock file ${target}.lock`, error);
    throw error;
  }
}

async function editLocked<T>(ref: SettingsFileRef, target: string, edit: SettingsEdit<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const current = await readCurrent(ref);
    const data = structuredClone(current?.data ?? {});
    const { changed, result } = edit(data);
    if (!changed) return result;
    const text = `${JSON.stringify(data, null, current?.indent ?? 2)}\n`;
    const now = await readFile(target, 'utf8').catch(() => undefined);
    if (now === current?.text) {
      try {
        await writeFileAtomic(target, text);
      } catch (error) {
        throw writeError(ref, `cannot write ${ref.scope} settings ${ref.file}`, error);
      }
      return result;
    }
    if (attempt >= ATTEMPTS) throw writeError(ref, `${ref.scope} settings ${ref.file} kept changing while plinth wrote it`, undefined, 'another program is rewriting the file: let it finish, then run the command again');
  }
}

interface Current {
  readonly text: string;
  readonly data: SettingsData;
  readonly indent: string | number;
}

async function readCurrent(ref: SettingsFileRef): Promise<Current | undefined> {
  let text: string;
  try {
    text = await readFile(ref.file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw writeError(ref, `cannot read ${ref.scope} settings ${ref.file}: ${code ?? 'unknown error'}`, error);
  }
  if (text.replace(/^\uFEFF/, '').trim() === '') return { text, data: {}, indent: 2 };
  const parsed = parseJsonText(text);
  if (!parsed.ok) {
    const { line, column, problem } = parsed.error;
    throw writeError(ref, `${ref.scope} settings ${ref.file}:${line}:${column} is not valid JSON (${problem}); plinth will not rewrite it`, undefined, 'fix the file first (`plinth config show` points at the error)');
  }
  const data = parsed.value;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw writeError(ref, `${ref.scope} settings ${ref.file} is not a JSON object; plinth will not rewrite it`);
  return { text, data: data as SettingsData, indent: /\n([ \t]+)\S/.exec(text)?.[1] ?? 2 };
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

function writeError(ref: SettingsFileRef, message: string, cause?: unknown, hint?: string): PlinthError {
  return new PlinthError('PLN_E_EXT_SETTINGS_WRITE', message, {
    plugin: 'extensions',
    ...(cause !== undefined && { cause }),
    hint: hint ?? 'check that the file and its folder are writable by you and the disk has room',
    details: { file: ref.file },
  });
}
