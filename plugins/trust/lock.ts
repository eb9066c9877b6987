/**
 * A lock file shared by every process that writes one file: created with
 * O_EXCL (`wx`), holding who made it; a lock whose process is gone (or that is
 * older than any write could take) is removed; waiting is bounded.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { PlinthError } from 'plinth/sdk';

export interface LockOptions {
  /** Give up after this long (ms); default 10000. */
  timeoutMs?: number;
  /** A lock older than this (ms) is stale whoever holds it: a write takes milliseconds. Default 30000. */
  staleMs?: number;
}

interface Owner {
  pid: number;
  host: string;
  nonce: string;
  at: string;
}

/** Nonces of the locks this process holds, shared by every copy of this module (jiti may load several). */
const held: Set<string> = ((globalThis as Record<symbol, unknown>)[Symbol.for('plinth.trust.heldLocks')] ??= new Set<string>()) as Set<string>;

/** A lock file whose owner has not written its name yet is stale after this long. */
const UNWRITTEN_STALE_MS = 2_000;

/** Runs `fn` while holding `lockFile`; always releases it. */
export async function withLock<T>(lockFile: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const nonce = await acquire(lockFile, options);
  try {
    return await fn();
  } finally {
    await release(lockFile, nonce);
  }
}

async function acquire(lockFile: string, options: LockOptions): Promise<string> {
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
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw lockError(lockFile, error);
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
        throw lockError(lockFile, error);
      }
    }
    const seen = await inspectLock(lockFile);
    if (seen && isStale(seen, staleMs)) {
      await breakLock(lockFile, seen);
      continue; // retry at once
    }
    holder = seen?.owner ?? holder;
    if (Date.now() >= deadline) {
      const who = holder?.pid ? `process ${holder.pid}${holder.host && holder.host !== hostname() ? ` on ${holder.host}` : ''}` : 'another process';
      throw new PlinthError('PLN_E_TRUST_LOCKED', `the trust store is locked by ${who}: gave up after ${timeoutMs} ms`, {
        plugin: 'trust',
        hint: `wait for the other plinth process to finish, then retry; if no plinth is running, delete ${lockFile}`,
        details: { lockFile, ...(holder?.pid && { pid: holder.pid }) },
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

async function release(lockFile: string, nonce: string): Promise<void> {
  held.delete(nonce);
  const seen = await inspectLock(lockFile);
  if (seen?.owner?.nonce === nonce) await unlink(lockFile).catch(() => undefined);
}

function lockError(lockFile: string, cause: unknown): PlinthError {
  const code = (cause as NodeJS.ErrnoException).code ?? 'unknown';
  return new PlinthError('PLN_E_TRUST_STORE_WRITE', `cannot create the trust store's lock file ${lockFile} (${code})`, {
    plugin: 'trust',
    cause,
    hint: 'make the plinth home folder writable by you (PLINTH_HOME, default ~/.plinth)',
  });
}
