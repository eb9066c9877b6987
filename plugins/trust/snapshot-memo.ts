/**
 * Snapshots kept by the identity of every path they looked at, so that a hook
 * or server checked again and again (a persistent hook, at every event) costs
 * a few `stat` calls instead of reading and hashing what it runs each time.
 *
 * A snapshot is kept with each path it touched (a word that named a file, a
 * folder or nothing, a file it read, a folder it listed, the folder a glob
 * searched) and that path's identity (fingerprint.ts's `fileIdentity`: device,
 * inode, mode, size, mtime and ctime to the nanosecond), or the error `stat` gave (a path that named nothing:
 * creating it changes the fingerprint). It stands for taking the snapshot
 * again while every one of them is the same: any write to a file sets its
 * ctime to now, and no one but the owner of the system clock can set it back
 * (`touch -d` sets mtime, and moves ctime), so an edit that keeps the size
 * and puts mtime back is still seen; adding, removing or renaming an entry of
 * a folder moves the folder's ctime. This is the argument hash-cache.ts and
 * recorded-hashes.ts make for single files.
 *
 * What a timestamp cannot tell apart (racy-git): two writes within one tick
 * of the file system's clock give one ctime. So a snapshot is kept only when
 * every path it touched was last changed at least {@link SETTLED_MS} before
 * the snapshot began; a path changed more recently (or during it, or dated
 * in the future) keeps it from being kept, and the next check takes it again.
 * That assumes file times come from a clock within that margin of this
 * machine's: true of local file systems, not of a network share whose server
 * clock is behind by more.
 *
 * In memory only (one process: a persistent hook lives there), at most
 * {@link KEPT_SNAPSHOTS}, most recently used kept. The `stat` calls are
 * synchronous: each is a metadata call of a microsecond or two, a tenth of a
 * round trip through libuv's thread pool.
 */
import { type BigIntStats, statSync } from 'node:fs';
import { fileIdentity } from './fingerprint.js';
import type { Snapshot } from './snapshot.js';

/** How long before a snapshot began its paths must have last changed for it to be kept. */
export const SETTLED_MS = 2_000;
export const KEPT_SNAPSHOTS = 256;

/** One path's identity as `stat` (following links) gives it (fingerprint.ts), or the error code; `changedMs`: its last change (mtime or ctime, the later). */
export function identityOf(path: string): { identity: string; changedMs?: number } {
  let info: BigIntStats | undefined;
  try {
    info = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    return { identity: `error:${(error as NodeJS.ErrnoException).code ?? 'EUNKNOWN'}` };
  }
  if (info === undefined) return { identity: 'error:ENOENT' };
  const changedMs = info.ctimeMs > info.mtimeMs ? info.ctimeMs : info.mtimeMs;
  return { identity: fileIdentity(info), changedMs: Number(changedMs) };
}

interface Kept {
  readonly snapshot: Snapshot;
  /** Path → identity when the snapshot was taken. */
  readonly paths: ReadonlyMap<string, string>;
}

export class SnapshotMemo {
  readonly #kept = new Map<string, Kept>();
  /** Snapshots taken again because a path changed, or kept: for tests and benchmarks. */
  readonly counts = { hits: 0, misses: 0, kept: 0, unsettled: 0 };

  /** The kept snapshot for `key` while every path it touched is as it was; undefined otherwise (then take it again). */
  get(key: string): Snapshot | undefined {
    const kept = this.#kept.get(key);
    if (kept === undefined) {
      this.counts.misses++;
      return undefined;
    }
    for (const [path, identity] of kept.paths) {
      if (identityOf(path).identity !== identity) {
        this.#kept.delete(key);
        this.counts.misses++;
        return undefined;
      }
    }
    // Most recently used last: the first to go when full is the longest unused.
    this.#kept.delete(key);
    this.#kept.set(key, kept);
    this.counts.hits++;
    return kept.snapshot;
  }

  /**
   * Keeps `snapshot`, taken from `startedAtMs` (wall clock, `Date.now()`) on,
   * which touched `touched`: unless one of them changed too recently to be
   * told apart from a change during the snapshot (see the module's comment).
   */
  put(key: string, snapshot: Snapshot, touched: Iterable<string>, startedAtMs: number): boolean {
    const paths = new Map<string, string>();
    for (const path of touched) {
      const { identity, changedMs } = identityOf(path);
      if (changedMs !== undefined && changedMs > startedAtMs - SETTLED_MS) {
        this.#kept.delete(key);
        this.counts.unsettled++;
        return false;
      }
      paths.set(path, identity);
    }
    this.#kept.delete(key);
    this.#kept.set(key, { snapshot, paths });
    while (this.#kept.size > KEPT_SNAPSHOTS) this.#kept.delete(this.#kept.keys().next().value!);
    this.counts.kept++;
    return true;
  }

  clear(): void {
    this.#kept.clear();
  }
}
