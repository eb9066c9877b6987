/**
 * `<home>/secrets/`: the encrypted file, its key, the record of which backend
 * holds each secret, and the lock every writer of those three takes, so that
 * one read-change-write of the data file and the record is never interleaved
 * with another process's.
 */
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withFileLock } from 'plinth/sdk';

export interface SecretsPaths {
  readonly folder: string;
  /** 32 random bytes: the AES-256-GCM key. */
  readonly key: string;
  /** The encrypted JSON envelope. */
  readonly data: string;
  /** Which backend holds each key (not secret). */
  readonly index: string;
  readonly lock: string;
}

export function secretsPaths(home: string): SecretsPaths {
  const folder = join(home, 'secrets');
  return {
    folder,
    key: join(folder, 'secrets.key'),
    data: join(folder, 'secrets.enc'),
    index: join(folder, 'index.json'),
    lock: join(folder, 'secrets.lock'),
  };
}

/**
 * Waiting writers queue behind one another (every `set` of a sign-in, of each
 * process); each turn takes milliseconds, so a long wait means a stuck holder.
 */
const LOCK_TIMEOUT_MS = 15_000;

/** Creates the folder, private to the user, when it does not exist yet. */
export async function ensureFolder(paths: SecretsPaths): Promise<void> {
  const created = await mkdir(paths.folder, { recursive: true, mode: 0o700 });
  // mkdir's mode went through the umask; only a folder made here is ours to set.
  if (created !== undefined) await chmod(paths.folder, 0o700);
}

/** Runs `fn` holding the secrets lock (creating the folder first: the lock file lives in it). */
export async function withSecretsLock<T>(paths: SecretsPaths, fn: () => Promise<T>): Promise<T> {
  await ensureFolder(paths);
  return withFileLock(paths.lock, fn, { timeoutMs: LOCK_TIMEOUT_MS });
}
