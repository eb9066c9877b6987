/**
 * Edits the `mcpServers` section of one settings file for `plinth mcp add` and
 * `plinth mcp remove`: read, change one entry, write a temporary file beside it
 * and rename it over the original, so a reader (another plinth starting) sees
 * either the old file or the new one, never half of one (the sdk's
 * `writeFileAtomic`). Two plinth commands editing at once take turns through a
 * lock file (the sdk's `withFileLock`), so neither loses the other's change; a
 * program that does not take the lock (an editor) is noticed by comparing the
 * file just before writing. The rest of the file is kept as it was parsed, in
 * its key order and indentation.
 */
import { mkdir, readFile, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type FileLockOptions, PlinthError, isPlinthError, withFileLock, writeFileAtomic } from 'plinth/sdk';

/** A settings file, as `kernel.inspect().config.files` names it. */
export interface SettingsFileRef {
  readonly scope: 'user' | 'workspace';
  readonly file: string;
}

/** What a change function sees and returns: the `mcpServers` object of the file (a copy it may change). */
export type ServersEdit<T> = (servers: Record<string, unknown>) => { readonly changed: boolean; readonly result: T };

/** Tries before giving up when another writer keeps changing the file under us. */
const ATTEMPTS = 5;

/** Wait up to 5 s for another plinth's edit; a lock older than 10 s is left over from a crash. */
const LOCK: FileLockOptions = { timeoutMs: 5_000, staleMs: 10_000 };

/**
 * The `mcpServers` entries of a settings file; an absent file has none.
 * @throws PlinthError `PLN_E_MCP_SETTINGS_WRITE` when the file cannot be read or is not a JSON object.
 */
export async function readServers(ref: SettingsFileRef): Promise<Record<string, unknown>> {
  const current = await readCurrent(ref);
  return current ? serversOf(current.data, ref) : {};
}

/**
 * Applies `edit` to the file's `mcpServers` and writes the file atomically when
 * it changed. Another process changing the file meanwhile is noticed (its text is
 * compared just before writing) and the edit is applied again to its version.
 * @throws PlinthError `PLN_E_MCP_SETTINGS_WRITE` when the file cannot be read, parsed or written.
 * @throws PlinthError `PLN_E_FILE_LOCKED` when another plinth command held the file's lock for the whole wait.
 */
export async function editServers<T>(ref: SettingsFileRef, edit: ServersEdit<T>): Promise<T> {
  // A symlinked settings file stays a symlink: lock and write beside the file it points to.
  const target = await realpath(ref.file).catch(() => ref.file);
  const folder = dirname(target);
  await mkdir(folder, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
    throw writeError(ref, `cannot create the folder ${folder}`, error);
  });
  const lockFile = `${target}.lock`;
  try {
    return await withFileLock(lockFile, () => editLocked(ref, target, edit), LOCK);
  } catch (error) {
    // Only the lock itself throws this code: the edit wraps its own write errors.
    if (isPlinthError(error) && error.code === 'PLN_E_FILE_WRITE') throw writeError(ref, `cannot create the lock file ${lockFile}`, error);
    throw error;
  }
}

async function editLocked<T>(ref: SettingsFileRef, target: string, edit: ServersEdit<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const current = await readCurrent(ref);
    const data = current ? current.data : {};
    const servers = { ...serversOf(data, ref) };
    const { changed, result } = edit(servers);
    if (!changed) return result;
    data.mcpServers = servers;
    const text = `${JSON.stringify(data, null, current?.indent ?? 2)}\n`;
    const written = await writeAtomically(ref, target, text, current?.text);
    if (written) return result;
    if (attempt >= ATTEMPTS) {
      throw new PlinthError('PLN_E_MCP_SETTINGS_WRITE', `${ref.scope} settings ${ref.file} kept changing while plinth wrote it`, {
        plugin: 'mcp',
        hint: 'another program is rewriting the file: let it finish, then run the command again',
        details: { file: ref.file },
      });
    }
  }
}

interface Current {
  readonly text: string;
  readonly data: Record<string, unknown>;
  readonly indent: string | number;
}

async function readCurrent(ref: SettingsFileRef): Promise<Current | undefined> {
  let text: string;
  try {
    text = await readFile(ref.file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw writeError(ref, `cannot read ${ref.scope} settings ${ref.file}: ${code ?? 'unknown error'}`, error);
  }
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') return { text, data: {}, indent: 2 };
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    // No cause: V8's message quotes the file's text, which may hold secrets. The kernel's own check gives line and column.
    throw writeError(ref, `${ref.scope} settings ${ref.file} is not valid JSON; plinth will not rewrite it`, undefined, 'fix the file first (`plinth config show` points at the error)');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw writeError(ref, `${ref.scope} settings ${ref.file} is not a JSON object; plinth will not rewrite it`);
  }
  return { text, data: data as Record<string, unknown>, indent: indentOf(body) };
}

function serversOf(data: Record<string, unknown>, ref: SettingsFileRef): Record<string, unknown> {
  const servers = data.mcpServers;
  if (servers === undefined) return {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw writeError(ref, `"mcpServers" in ${ref.scope} settings ${ref.file} is not an object`, undefined, 'make it an object of servers by name, or remove it');
  }
  return servers as Record<string, unknown>;
}

/** The indentation of the first indented line: keeps a file written with tabs or 4 spaces that way. */
function indentOf(text: string): string | number {
  const match = /\n([ \t]+)\S/.exec(text);
  return match?.[1] ?? 2;
}

/**
 * Writes `text` over the target atomically unless the target no longer holds
 * `expected` (a program that takes no lock changed it since it was read).
 * Returns false in that case, having written nothing. An existing file keeps
 * its mode; a new one, which may receive env values and headers, is readable
 * by its owner only (0600, `writeFileAtomic`'s default).
 */
async function writeAtomically(ref: SettingsFileRef, target: string, text: string, expected: string | undefined): Promise<boolean> {
  const now = await readFile(target, 'utf8').catch(() => undefined);
  if (now !== expected) return false;
  try {
    await writeFileAtomic(target, text);
    return true;
  } catch (error) {
    const errno = isPlinthError(error) ? error.details?.errno : undefined;
    throw writeError(ref, `cannot write ${ref.scope} settings ${ref.file}: ${typeof errno === 'string' ? errno : 'unknown error'}`, error);
  }
}

function writeError(ref: SettingsFileRef, message: string, cause?: unknown, hint?: string): PlinthError {
  return new PlinthError('PLN_E_MCP_SETTINGS_WRITE', message, {
    plugin: 'mcp',
    ...(cause !== undefined && { cause }),
    hint: hint ?? 'check that the file and its folder are writable by you and the disk has room',
    details: { file: ref.file },
  });
}
