/**
 * What an installed plugin's folder held when it was installed, and whether
 * it still does. At install, every file's SHA-256, size, mtime and ctime go
 * into the lock file (`plugins.lock.json`, entry `tree`), with a tree digest
 * over the sorted `path sha256` pairs. Before the plugin loads, its folder is
 * walked again: a file whose size, mtime and ctime are unchanged keeps its
 * recorded hash (the fast path: one stat per file), any other is hashed
 * again, and the recomputed tree digest must be the recorded one. ctime is
 * set by the kernel on every write and cannot be set back by `touch`, so an
 * edit that restores size and mtime is still seen.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readFile, readdir, realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { z } from 'zod';
import { PlinthError } from '../../sdk/errors.js';

export { installedTreeSchema, treeFileSchema, type InstalledTree, type TreeFile } from '../../sdk/contracts/marketplace.js';
import type { InstalledTree, TreeFile } from '../../sdk/contracts/marketplace.js';

/** The lock file of installed plugins, under the plinth home. */
export const INSTALLED_LOCK_FILE = 'plugins.lock.json';
/** Where installed versions live, under the plinth home: `plugins/.versions/<name>@<version>`. */
export const INSTALLED_VERSIONS_DIR = join('plugins', '.versions');

/** The folder name of one installed version under {@link INSTALLED_VERSIONS_DIR} (a scoped name's slash becomes `+`). */
export function installedVersionFolder(name: string, version: string): string {
  return `${name.replace('/', '+')}@${version}`;
}

/**
 * The real path of `dir` when it lies in one of `home`'s installed versions
 * (`plugins/.versions/<name>@<version>`, links followed), else undefined: the
 * one test of "did plinth install this folder" that the load gates use.
 */
export async function realInstalledFolder(home: string, dir: string): Promise<string | undefined> {
  const [versions, real] = await Promise.all([realpath(join(home, INSTALLED_VERSIONS_DIR)).catch(() => undefined), realpath(dir).catch(() => undefined)]);
  return versions !== undefined && real !== undefined && real.startsWith(`${versions}${sep}`) ? real : undefined;
}

/** What a check found: files whose content changed, files that were not installed, installed files that are gone. */
export interface TreeCheck {
  readonly ok: boolean;
  readonly changed: readonly string[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Files hashed again (size, mtime or ctime differed, or a full check). */
  readonly rehashed: number;
  readonly digest: string;
}

/** The tree digest of per-file hashes. */
export function treeDigest(files: Readonly<Record<string, { sha256: string }>>): string {
  const hash = createHash('sha256');
  for (const path of Object.keys(files).sort()) hash.update(`${path} ${files[path]!.sha256}\n`);
  return `sha256-${hash.digest('base64')}`;
}

/** Every file of `dir` with its hash, size and times: what an install records. */
export async function hashTree(dir: string): Promise<InstalledTree> {
  const entries = await walk(dir);
  const odd = entries.find((entry) => entry.kind !== 'file');
  if (odd) throw new PlinthError('PLN_E_MARKET_FILES_CHANGED', `${join(dir, odd.path)} is not a regular file`, { hint: 'an installed plugin holds only files and folders', details: { dir, path: odd.path } });
  const recorded = await inParallel(entries, async (entry): Promise<[string, TreeFile]> => {
    const file = join(dir, entry.path);
    const info = await lstat(file);
    return [entry.path, { sha256: await hashFile(file), size: info.size, mtimeMs: info.mtimeMs, ctimeMs: info.ctimeMs }];
  });
  const files = Object.fromEntries(recorded.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { digest: treeDigest(files), files };
}

/** Compares `dir` with what was recorded; `full`: hash every file whatever its stat says. */
export async function checkTree(dir: string, recorded: InstalledTree, options: { full?: boolean } = {}): Promise<TreeCheck> {
  const changed: string[] = [];
  const added: string[] = [];
  const now: Record<string, { sha256: string }> = {};
  let rehashed = 0;
  const entries = await walk(dir);
  const seen = new Set(entries.map((entry) => entry.path));
  await inParallel(entries, async (entry) => {
    const was = recorded.files[entry.path];
    if (entry.kind !== 'file') return void (was ? changed : added).push(entry.path);
    if (!was) return void added.push(entry.path);
    const file = join(dir, entry.path);
    const info = await lstat(file);
    let sha256 = was.sha256;
    if (options.full || info.size !== was.size || info.mtimeMs !== was.mtimeMs || info.ctimeMs !== was.ctimeMs) {
      sha256 = await hashFile(file);
      rehashed++;
    }
    if (sha256 !== was.sha256) changed.push(entry.path);
    now[entry.path] = { sha256 };
  });
  const removed = Object.keys(recorded.files).filter((path) => !seen.has(path)).sort();
  const digest = treeDigest(now);
  const ok = changed.length === 0 && added.length === 0 && removed.length === 0 && digest === recorded.digest;
  return { ok, changed: changed.sort(), added: added.sort(), removed, rehashed, digest };
}

/** How many files are stat'ed or hashed at once: enough to keep libuv's four threads busy. */
const PARALLEL = 8;

async function inParallel<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
  return out;
}

/** One line for a person: `changed a.ts; added b.ts; removed c.ts`. */
export function describeTreeCheck(check: Pick<TreeCheck, 'changed' | 'added' | 'removed'>, max = 5): string {
  const part = (label: string, list: readonly string[]) => (list.length === 0 ? [] : [`${label} ${list.slice(0, max).join(', ')}${list.length > max ? ` and ${list.length - max} more` : ''}`]);
  const parts = [...part('changed', check.changed), ...part('added', check.added), ...part('removed', check.removed)];
  return parts.length > 0 ? parts.join('; ') : 'the tree digest differs from the recorded one';
}

/** The lock file's text, or undefined when there is none (the caller parses it with `lockFileSchema`). */
export async function readInstalledLockText(home: string): Promise<string | undefined> {
  return readFile(join(home, INSTALLED_LOCK_FILE), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
}

interface WalkEntry {
  readonly path: string;
  readonly kind: 'file' | 'other';
}

async function walk(dir: string): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  const folders = [''];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    for (const entry of await readdir(join(dir, folder), { withFileTypes: true })) {
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) folders.push(path);
      else out.push({ path, kind: entry.isFile() ? 'file' : 'other' });
    }
  }
  return out;
}

async function hashFile(file: string): Promise<string> {
  // Not through a link, and a FIFO cannot block the read.
  const handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  try {
    return await hashFileHandle(handle);
  } finally {
    await handle.close();
  }
}

/**
 * The SHA-256 (hex) of what is left to read from an open file: the one
 * hashing loop of an install's record, its check, and trust's fingerprint,
 * so that a hash recorded by one is the hash another would compute. The
 * caller opens (with its own rule about links and FIFOs) and closes.
 */
export async function hashFileHandle(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
  }
  return hash.digest('hex');
}
