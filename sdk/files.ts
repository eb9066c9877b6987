/**
 * Files that several processes share (approvals, tokens, settings that a
 * command edits while `plinth up` runs): a lock file every writer takes, so
 * that read-change-write cycles take turns, and a write that readers see whole
 * or not at all.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PlinthError } from './errors.js';

/** How long {@link withFileLock} waits for a lock, and when a lock counts as left over by a crash. */
export interface FileLockOptions {
  /** Give up after this long (ms) with `PLN_E_FILE_LOCKED`. Default 10000. */
  timeoutMs?: number;
  /**
   * A lock older than this (ms) is stale whoever holds it, and is removed. Keep the work done
   * under the lock well below it (a read, a change and a write take milliseconds). Default 30000.
   */
  staleMs?: number;
}

/** Options of {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
  /** Permission bits of the written file, exactly (not reduced by the umask). Default: those of the file it replaces, or 0o600 for a new file. */
  mode?: number;
  /**
   * Whether the write must survive a crash of the machine (default true): the
   * file and its folder are fsynced. `false` keeps the all-or-nothing rename
   * but skips both fsyncs (two disk flushes, milliseconds each), for data that
   * can be fetched or computed again, such as a cache.
   */
  durable?: boolean;
}

/** What a lock file holds: who made it. */
interface Owner {
  pid: number;
  host: string;
  nonce: string;
  at: string;
}

/** Nonces of the locks this process holds, shared by every copy of this module (the sdk may be loaded from source and from the build). */
const held: Set<string> = ((globalThis as Record<symbol, unknown>)[Symbol.for('plinth.files.heldLocks')] ??= new Set<string>()) as Set<string>;

/** A lock file whose owner has not written its name yet is stale after this long. */
const UNWRITTEN_STALE_MS = 2_000;

/**
 * Runs `fn` while holding `lockFile`, a lock shared by every process that
 * follows the same convention, and always releases it. The lock file is
 * created with O_EXCL and names its owner (pid, host, a nonce); waiting
 * processes retry with jittered backoff. A lock is stale, and removed, when
 * its process is gone (same host), when no owner was written into it within
 * 2 s, or when it is older than `staleMs`. Calls in one process wait for each
 * other too; the lock is not reentrant, so `fn` must not take it again.
 *
 * Readers need no lock when writers replace the file with {@link writeFileAtomic}.
 * The folder of `lockFile` must exist.
 *
 * @example
 * await withFileLock(`${file}.lock`, async () => {
 *   const data = JSON.parse(await readFile(file, 'utf8'));
 *   data.count += 1;
 *   await writeFileAtomic(file, JSON.stringify(data));
 * });
 * @throws PlinthError `PLN_E_FILE_LOCKED` when another live process held the lock for the whole
 *   `timeoutMs` (`details`: `lockFile`, and the holder's `pid` and `host` when known).
 * @throws PlinthError `PLN_E_FILE_WRITE` when the lock file cannot be created (`details.file`).
 *   Whatever `fn` throws passes through unchanged.
 */
export async function withFileLock<T>(lockFile: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const nonce = await acquire(lockFile, options);
  try {
    return await fn();
  } finally {
    await release(lockFile, nonce);
  }
}

/**
 * Replaces `file` with `data` (a string is written as UTF-8) so that a reader,
 * in this process or another, sees the old content or the new, never part of
 * it, and a crash leaves one of the two: writes a temporary file in the same
 * folder (so the rename stays on one file system), fsyncs it, renames it over
 * `file`, then fsyncs the folder where the system allows. On failure the
 * temporary file is removed and `file` is as it was. The folder must exist; a
 * symlink at `file` is replaced, not followed (pass its `realpath` to write
 * through it). Two writers without a lock do not corrupt the file, but the
 * last rename wins: take {@link withFileLock} for read-change-write.
 *
 * @throws PlinthError `PLN_E_FILE_WRITE` when the temporary file cannot be created, written or
 *   renamed (`details`: `file`, and the system's `errno` code).
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, options: WriteFileAtomicOptions = {}): Promise<void> {
  const folder = dirname(file);
  const temp = join(folder, `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let created = false;
  try {
    const mode = options.mode ?? (await stat(file).then((info) => info.mode & 0o777, () => 0o600));
    const handle = await open(temp, 'wx', mode);
    created = true;
    try {
      await handle.chmod(mode); // open's mode went through the umask
      await handle.writeFile(data);
      if (options.durable !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    if (created) await unlink(temp).catch(() => undefined);
    const errno = (error as NodeJS.ErrnoException).code;
    throw new PlinthError('PLN_E_FILE_WRITE', `cannot write ${file} (${errno ?? 'unknown error'}); it is unchanged`, {
      cause: error,
      hint: 'check that the file and its folder are writable by you and that the disk has room',
      details: { file, ...(errno && { errno }) },
    });
  }
  if (options.durable !== false) await syncFolder(folder);
}

async function acquire(lockFile: string, options: FileLockOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  const nonce = randomBytes(12).toString('hex');
  let holder: Partial<Owner> | undefined;
  for (let attempt = 0; ; attempt++) {
    let handle;
    try {
      handle = await open(lockFile, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw lockFileError(lockFile, error);
    }
    if (handle) {
      held.add(nonce);
      try {
        const owner: Owner = { pid: process.pid, host: hostname(), nonce, at: new Date().toISOString() };
        await handle.writeFile(JSON.stringify(owner));
        await handle.close();
        return nonce;
      } catch (error) {
        held.delete(nonce);
        await handle.close().catch(() => undefined);
        await unlink(lockFile).catch(() => undefined);
        throw lockFileError(lockFile, error);
      }
    }
    const seen = await inspectLock(lockFile);
    if (seen && isStale(seen, staleMs)) {
      await breakLock(lockFile, seen);
      continue; // retry at once
    }
    holder = seen?.owner ?? holder;
    if (Date.now() >= deadline) {
      const elsewhere = holder?.host && holder.host !== hostname() ? holder.host : undefined;
      const who = holder?.pid ? `process ${holder.pid}${elsewhere ? ` on ${elsewhere}` : ''}` : 'another process';
      throw new PlinthError('PLN_E_FILE_LOCKED', `${lockFile} is held by ${who}: gave up after ${timeoutMs} ms`, {
        hint: `let the other process finish, then retry; if none is running, delete ${lockFile}`,
        details: { lockFile, ...(holder?.pid && { pid: holder.pid }), ...(holder?.host && { host: holder.host }) },
      });
    }
    // Backoff with jitter, so that processes waiting together do not retry in step.
    await sleep(Math.min(10 + attempt * 5, 50) + Math.floor(Math.random() * 15));
  }
}

interface SeenLock {
  raw: string;
  mtimeMs: number;
  owner: Partial<Owner> | undefined;
}

async function inspectLock(lockFile: string): Promise<SeenLock | undefined> {
  try {
    const [raw, info] = await Promise.all([readFile(lockFile, 'utf8'), stat(lockFile)]);
    let owner: Partial<Owner> | undefined;
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (typeof parsed === 'object' && parsed !== null) owner = parsed as Partial<Owner>;
    } catch {
      owner = undefined; // being written, or garbage
    }
    return { raw, mtimeMs: info.mtimeMs, owner };
  } catch {
    return undefined; // released in the meantime: retry
  }
}

function isStale(seen: SeenLock, staleMs: number): boolean {
  const age = Date.now() - seen.mtimeMs;
  if (age > staleMs) return true;
  const { owner } = seen;
  if (!owner || typeof owner.pid !== 'number' || typeof owner.nonce !== 'string') return age > UNWRITTEN_STALE_MS;
  if (owner.host !== hostname()) return false; // cannot tell whether it lives: wait for staleMs
  if (owner.pid === process.pid) return !held.has(owner.nonce); // a previous process with our pid (containers reuse pids)
  return !alive(owner.pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes a stale lock, unless it changed since it was judged stale (then another process took it). */
async function breakLock(lockFile: string, seen: SeenLock): Promise<void> {
  const now = await inspectLock(lockFile);
  if (!now || now.raw !== seen.raw || now.mtimeMs !== seen.mtimeMs) return;
  await unlink(lockFile).catch(() => undefined);
}

/**
 * Removes the lock if it is still ours. The nonce stays in `held` until the file
 * is gone: a caller in this process that saw our lock without it would judge it
 * stale, break it, and have the lock taken by a third while we unlink it.
 */
async function release(lockFile: string, nonce: string): Promise<void> {
  try {
    const seen = await inspectLock(lockFile);
    if (seen?.owner?.nonce === nonce) await unlink(lockFile).catch(() => undefined);
  } finally {
    held.delete(nonce);
  }
}

function lockFileError(lockFile: string, cause: unknown): PlinthError {
  const errno = (cause as NodeJS.ErrnoException).code;
  return new PlinthError('PLN_E_FILE_WRITE', `cannot create the lock file ${lockFile} (${errno ?? 'unknown error'})`, {
    cause,
    hint: 'check that its folder exists and is writable by you',
    details: { file: lockFile, ...(errno && { errno }) },
  });
}

/** Makes a rename durable; some systems cannot open a folder, which is not worth failing for. */
async function syncFolder(folder: string): Promise<void> {
  let handle;
  try {
    handle = await open(folder, 'r');
    await handle.sync();
  } catch {
    // best effort
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
