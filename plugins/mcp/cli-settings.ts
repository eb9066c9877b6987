/**
 * Edits the `mcpServers` section of one settings file for `plinth mcp add` and
 * `plinth mcp remove`: read, change one entry, write a temporary file beside it
 * and rename it over the original, so a reader (another plinth starting) sees
 * either the old file or the new one, never half of one. Two plinth commands
 * editing at once take turns through a lock file, so neither loses the other's
 * change; a program that does not take the lock (an editor) is noticed by
 * comparing the file just before the rename. The rest of the file is kept as
 * it was parsed, in its key order and indentation.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PlinthError } from 'plinth/sdk';

/** A settings file, as `kernel.inspect().config.files` names it. */
export interface SettingsFileRef {
  readonly scope: 'user' | 'workspace';
  readonly file: string;
}

/** What a change function sees and returns: the `mcpServers` object of the file (a copy it may change). */
export type ServersEdit<T> = (servers: Record<string, unknown>) => { readonly changed: boolean; readonly result: T };

/** Tries before giving up when another writer keeps changing the file under us. */
const ATTEMPTS = 5;

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
 * compared just before the rename) and the edit is applied again to its version.
 * @throws PlinthError `PLN_E_MCP_SETTINGS_WRITE` when the file cannot be read, parsed or written.
 */
export async function editServers<T>(ref: SettingsFileRef, edit: ServersEdit<T>): Promise<T> {
  // A symlinked settings file stays a symlink: lock and write beside the file it points to.
  const target = await realpath(ref.file).catch(() => ref.file);
  const folder = dirname(target);
  await mkdir(folder, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
    throw writeError(ref, `cannot create the folder ${folder}`, error);
  });
  return withLock(ref, `${target}.lock`, () => editLocked(ref, target, edit));
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
 * Writes `text` to a temporary file in the same folder (same file system, so the
 * rename is atomic), flushes it, and renames it over the target unless the target
 * no longer holds `expected`. Returns false in that case, having written nothing.
 */
async function writeAtomically(ref: SettingsFileRef, target: string, text: string, expected: string | undefined): Promise<boolean> {
  const folder = dirname(target);
  // A new file may receive env values and headers: readable by its owner only.
  const mode = await stat(target).then((s) => s.mode & 0o777, () => 0o600);
  const temp = join(folder, `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    const now = await readFile(target, 'utf8').catch(() => undefined);
    if (now !== expected) {
      await unlink(temp).catch(() => undefined);
      return false;
    }
    await rename(temp, target);
    return true;
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw writeError(ref, `cannot write ${ref.scope} settings ${ref.file}: ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}`, error);
  }
}

/** How long to wait for another plinth's edit, and when a lock is old enough to be left over from a crash. */
const LOCK_WAIT_MS = 5_000;
const LOCK_STALE_MS = 10_000;

/**
 * Runs `fn` holding `lockFile` (created with O_EXCL, holding our pid). A lock
 * whose process is gone, or older than any edit could take, is removed.
 */
async function withLock<T>(ref: SettingsFileRef, lockFile: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  const mine = `${process.pid} ${randomBytes(6).toString('hex')}`;
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lockFile, 'wx', 0o600);
      try {
        await handle.writeFile(mine);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError(ref, `cannot create the lock file ${lockFile}`, error);
    }
    const holder = await readFile(lockFile, 'utf8').catch(() => '');
    const age = await stat(lockFile).then((s) => Date.now() - s.mtimeMs, () => 0);
    const pid = Number(holder.split(' ')[0]);
    if (age > LOCK_STALE_MS || (Number.isInteger(pid) && pid > 0 && !alive(pid))) {
      // Remove it only if it is still the lock we judged: another waiter may have replaced it.
      if ((await readFile(lockFile, 'utf8').catch(() => undefined)) === holder) await unlink(lockFile).catch(() => undefined);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new PlinthError('PLN_E_MCP_SETTINGS_WRITE', `${ref.scope} settings ${ref.file} is being edited by ${pid > 0 ? `process ${pid}` : 'another process'}: gave up after ${LOCK_WAIT_MS} ms`, {
        plugin: 'mcp',
        hint: `let the other plinth command finish and run this one again; if none is running, delete ${lockFile}`,
        details: { file: ref.file, lockFile },
      });
    }
    await sleep(Math.min(10 + attempt * 5, 50) + Math.floor(Math.random() * 15));
  }
  try {
    return await fn();
  } finally {
    if ((await readFile(lockFile, 'utf8').catch(() => undefined)) === mine) await unlink(lockFile).catch(() => undefined);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
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
