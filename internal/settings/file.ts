/**
 * Editing one settings file (user or workspace) from a plinth command: under
 * the file's lock (`withFileLock`, which every plinth command that edits
 * settings takes), read, change, and replace the file atomically
 * (`writeFileAtomic`), so a plinth starting meanwhile sees the old file or the
 * new one. A program that takes no lock (an editor) is noticed by comparing the
 * file just before writing, and the edit is applied again to its version. The
 * rest of the file is kept as parsed, in its key order and indentation; a
 * symlinked file stays a symlink (the file it points to is written). A new file
 * is readable by its owner only, since it may receive env values and headers.
 */
import { mkdir, readFile, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type ErrorCode, PlinthError, isPlinthError } from '../../sdk/errors.js';
import { type FileLockOptions, withFileLock, writeFileAtomic } from '../../sdk/files.js';
import { parseJsonText } from '../text/json.js';

/** A settings file, as `kernel.inspect().config.files` names it. */
export interface SettingsFileRef {
  readonly scope: 'user' | 'workspace';
  readonly file: string;
}

/** A JSON object as read from a settings file. */
export type SettingsData = Record<string, unknown>;

/** An edit of the whole file's object (a copy it may change in place). */
export type SettingsEdit<T> = (data: SettingsData) => { readonly changed: boolean; readonly result: T };

/** Whose command edits the file: the code and plugin its errors carry. */
export interface SettingsFileOwner {
  readonly code: ErrorCode;
  readonly plugin: string;
}

const ATTEMPTS = 5;
/** Wait up to 5 s for another plinth's edit; a lock older than 10 s is left over from a crash. */
const LOCK: FileLockOptions = { timeoutMs: 5_000, staleMs: 10_000 };

/** The file's settings; an absent or empty file has none. Throws `owner.code` when it cannot be read or is not a JSON object. */
export async function readSettingsFile(ref: SettingsFileRef, owner: SettingsFileOwner): Promise<SettingsData> {
  return (await readCurrent(ref, owner))?.data ?? {};
}

/**
 * Applies `edit` and writes the file when it changed.
 * @throws PlinthError `owner.code` when the file cannot be read, parsed or written; `PLN_E_FILE_LOCKED`
 * when another plinth command held the file's lock for the whole wait.
 */
export async function editSettingsFile<T>(ref: SettingsFileRef, owner: SettingsFileOwner, edit: SettingsEdit<T>): Promise<T> {
  const target = await realpath(ref.file).catch(() => ref.file);
  const folder = dirname(target);
  await mkdir(folder, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
    throw settingsFileError(ref, owner, `cannot create the folder ${folder}`, error);
  });
  try {
    return await withFileLock(`${target}.lock`, () => editLocked(ref, owner, target, edit), LOCK);
  } catch (error) {
    // Only the lock itself throws this code: the edit wraps its own write errors.
    if (isPlinthError(error) && error.code === 'PLN_E_FILE_WRITE') throw settingsFileError(ref, owner, `cannot create the lock file ${target}.lock`, error);
    throw error;
  }
}

/** An error about `ref` in `owner`'s name, the file in `details.file`. */
export function settingsFileError(ref: SettingsFileRef, owner: SettingsFileOwner, message: string, cause?: unknown, hint?: string): PlinthError {
  return new PlinthError(owner.code, message, {
    plugin: owner.plugin,
    ...(cause !== undefined && { cause }),
    hint: hint ?? 'check that the file and its folder are writable by you and the disk has room',
    details: { file: ref.file },
  });
}

async function editLocked<T>(ref: SettingsFileRef, owner: SettingsFileOwner, target: string, edit: SettingsEdit<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const current = await readCurrent(ref, owner);
    const data = structuredClone(current?.data ?? {});
    const { changed, result } = edit(data);
    if (!changed) return result;
    const text = `${JSON.stringify(data, null, current?.indent ?? 2)}\n`;
    const now = await readFile(target, 'utf8').catch(() => undefined);
    if (now === current?.text) {
      try {
        await writeFileAtomic(target, text);
      } catch (error) {
        const errno = isPlinthError(error) ? error.details?.errno : undefined;
        throw settingsFileError(ref, owner, `cannot write ${ref.scope} settings ${ref.file}: ${typeof errno === 'string' ? errno : 'unknown error'}`, error);
      }
      return result;
    }
    if (attempt >= ATTEMPTS) {
      throw settingsFileError(ref, owner, `${ref.scope} settings ${ref.file} kept changing while plinth wrote it`, undefined, 'another program is rewriting the file: let it finish, then run the command again');
    }
  }
}

interface Current {
  readonly text: string;
  readonly data: SettingsData;
  readonly indent: string | number;
}

async function readCurrent(ref: SettingsFileRef, owner: SettingsFileOwner): Promise<Current | undefined> {
  let text: string;
  try {
    text = await readFile(ref.file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw settingsFileError(ref, owner, `cannot read ${ref.scope} settings ${ref.file}: ${code ?? 'unknown error'}`, error);
  }
  if (text.replace(/^\uFEFF/, '').trim() === '') return { text, data: {}, indent: 2 };
  // parseJsonText, not JSON.parse: V8's message quotes the file's text, which may hold secrets.
  const parsed = parseJsonText(text);
  if (!parsed.ok) {
    const { line, column, problem } = parsed.error;
    throw settingsFileError(ref, owner, `${ref.scope} settings ${ref.file}:${line}:${column} is not valid JSON (${problem}); plinth will not rewrite it`, undefined, 'fix the file first (`plinth config show` points at the error)');
  }
  const data = parsed.value;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw settingsFileError(ref, owner, `${ref.scope} settings ${ref.file} is not a JSON object; plinth will not rewrite it`);
  // The indentation of the first indented line: a file written with tabs or 4 spaces stays that way.
  return { text, data: data as SettingsData, indent: /\n([ \t]+)\S/.exec(text)?.[1] ?? 2 };
}
