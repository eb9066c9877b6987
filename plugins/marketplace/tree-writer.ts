/**
 * Writes the entries of one plugin tarball, as tar's `Parser` hands them
 * over (each one already passed by extract.ts's `EntryGuard`), into a fresh
 * staging folder, and records what it wrote: each file's SHA-256 of the bytes
 * written, and its size and times from the `fstat` after the last write. That
 * record is exactly what `hashTree(<staging>/package)` would return, without
 * reading the files back.
 *
 *   const writer = new TreeWriter(staging);
 *   parser.on('entry', (entry) => (ready = ready.then(() => writer.accept(entry, mode))));
 *   const { tree, files, bytes } = await writer.finish();
 *
 * Only this writer writes in the staging folder and it never creates links,
 * so there is nothing to follow: parents an entry implies are made here, and
 * files are created with `O_EXCL | O_NOFOLLOW` as a second line. Up to
 * `parallel` files are written at once; when they are all busy, or
 * `maxBufferedBytes` of bodies wait to be written, the entry being read is
 * paused, which makes the parser's `write` return false (backpressure).
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, chmod, lstat, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { type InstalledTree, type TreeFile, treeDigest } from 'plinth/internal';
import type { ReadEntry } from 'tar';

/** How much the writer takes on at once. */
export interface WriterLimits {
  /** Files being written at once (default 8: enough to keep libuv's four threads busy while the parser reads ahead). */
  readonly parallel: number;
  /** Bodies read but not yet written, across all files (default 8 MiB): the memory a large file or a slow disk may take. */
  readonly maxBufferedBytes: number;
}

const DEFAULT_WRITER_LIMITS: WriterLimits = Object.freeze({ parallel: 8, maxBufferedBytes: 8 * 1024 * 1024 });
/** Folders no entry gives, only implies; the umask may tighten it. */
const IMPLIED_DIR_MODE = 0o755;
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** What was written: the tree under `<staging>/package`, and its totals. */
export interface WrittenTree {
  readonly tree: InstalledTree;
  readonly files: number;
  readonly bytes: number;
}

/** A write that went wrong in a way only another writer in the staging folder explains: the caller reports it as a refusal of `entry`. */
export class ForeignWrite extends Error {
  constructor(
    readonly entry: string,
    reason: string,
  ) {
    super(reason);
  }
}

export class TreeWriter {
  /** By path relative to the staging folder: when the folder exists (made, and given its mode). */
  readonly #dirs = new Map<string, Promise<void>>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #files: Array<[string, TreeFile]> = [];
  #buffered = 0;
  #bytes = 0;
  #failure: unknown;
  /** Resolves whoever waits for a free slot or for bodies to be written. */
  #wake: (() => void) | undefined;
  /** The entry whose body is being read, paused while too much waits to be written. */
  #reading: ReadEntry | undefined;

  readonly #limits: WriterLimits;

  constructor(
    readonly staging: string,
    limits: Partial<WriterLimits> = {},
  ) {
    this.#limits = { ...DEFAULT_WRITER_LIMITS, ...limits };
  }

  /** Bodies read and not yet written. */
  get bufferedBytes(): number {
    return this.#buffered;
  }

  /** True once a write failed or {@link abort} was called: every entry after is drained unread. */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** Stops: entries are drained unwritten, files being written are closed; {@link finish} throws `error`. */
  abort(error: unknown): void {
    this.#failure ??= error;
    if (this.#reading?.flowing === false) this.#reading.resume();
    this.#notify();
  }

  /**
   * Takes the next entry, in archive order, with the mode to write it with.
   * Resolves once the writer can take another (a file slot is free); the
   * entry's body may still be being written.
   */
  async accept(entry: ReadEntry, mode: number): Promise<void> {
    if (entry.type === 'Directory') {
      entry.resume();
      if (!this.failed) this.#directory(entry.path.replace(/\/$/, ''), mode);
      return;
    }
    while (!this.failed && (this.#tasks.size >= this.#limits.parallel || this.#buffered >= this.#limits.maxBufferedBytes)) await this.#waitForWrites();
    if (this.failed) return void entry.resume();
    const task = this.#file(entry, mode).catch((error: unknown) => this.abort(error));
    this.#tasks.add(task);
    void task.finally(() => {
      this.#tasks.delete(task);
      this.#notify();
    });
  }

  /** Waits for every write and close; the tree written, or the first failure. */
  async finish(): Promise<WrittenTree> {
    while (this.#tasks.size > 0) await Promise.all([...this.#tasks]);
    await Promise.allSettled([...this.#dirs.values()]);
    if (this.failed) throw this.#failure;
    // The sorted order hashTree gives, so that lock files read the same.
    const files = Object.fromEntries(this.#files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { tree: { digest: treeDigest(files), files }, files: this.#files.length, bytes: this.#bytes };
  }

  /** A folder given by an entry: made with its mode, or, when an earlier entry implied it, given that mode now. */
  #directory(path: string, mode: number): void {
    const implied = this.#dirs.get(path);
    const made = implied
      ? // The umask tightened the implied folder's mode when it was made: it may only tighten this one too.
        implied.then(async () => chmod(join(this.staging, path), mode & (await lstat(join(this.staging, path))).mode & 0o777))
      : this.#parentOf(path).then(() => mkdir(join(this.staging, path), { mode }).then(() => undefined));
    this.#remember(path, made);
  }

  /** The folder that holds `path`, made (with the folders above it) when no entry has made it yet. */
  #parentOf(path: string): Promise<void> {
    const cut = path.lastIndexOf('/');
    if (cut < 0) return Promise.resolve();
    const parent = path.slice(0, cut);
    const known = this.#dirs.get(parent);
    if (known) return known;
    return this.#remember(
      parent,
      this.#parentOf(parent).then(() => mkdir(join(this.staging, parent), { mode: IMPLIED_DIR_MODE }).then(() => undefined)),
    );
  }

  #remember(path: string, made: Promise<void>): Promise<void> {
    const noted = made.catch((error: unknown) => {
      this.abort(fsProblem(path, error));
      throw error;
    });
    noted.catch(() => undefined); // awaited by the files inside it, or by finish()
    this.#dirs.set(path, noted);
    return noted;
  }

  async #file(entry: ReadEntry, mode: number): Promise<void> {
    const chunks: Buffer[] = [];
    let ended = entry.emittedEnd;
    this.#reading = entry;
    entry.on('data', (chunk: Buffer) => {
      if (this.failed) return;
      chunks.push(chunk);
      this.#buffered += chunk.length;
      if (this.#buffered >= this.#limits.maxBufferedBytes) entry.pause();
      this.#notify();
    });
    entry.on('end', () => {
      ended = true;
      if (this.#reading === entry) this.#reading = undefined;
      this.#notify();
    });
    const path = entry.path;
    const hash = createHash('sha256');
    let written = 0;
    let handle: FileHandle | undefined;
    try {
      await this.#parentOf(path);
      handle = await open(join(this.staging, path), CREATE, mode).catch((error: unknown) => {
        throw fsProblem(path, error);
      });
      for (;;) {
        if (this.failed) return;
        if (chunks.length > 0) {
          const batch = chunks.splice(0);
          for (const chunk of batch) hash.update(chunk);
          const size = await writeAll(handle, batch);
          written += size;
          this.#buffered -= size;
          this.#relieve();
          continue;
        }
        if (ended) break;
        await this.#waitForWrites();
      }
      const info = await handle.stat();
      if (!info.isFile() || info.size !== written || written !== entry.size) throw new ForeignWrite(path, `was written as ${info.size} bytes of ${entry.size}`);
      // What the open asked for can only have been tightened; anything else is not ours.
      if (info.mode & 0o7022) throw new ForeignWrite(path, 'was written with a mode it was not given');
      this.#bytes += written;
      this.#files.push([path.slice(path.indexOf('/') + 1), { sha256: hash.digest('hex'), size: info.size, mtimeMs: info.mtimeMs, ctimeMs: info.ctimeMs }]);
    } finally {
      await handle?.close();
    }
  }

  /** Reads on once enough of what waited has been written: the entry paused may be another file's than the one just written. */
  #relieve(): void {
    if (this.#reading?.flowing === false && this.#buffered < this.#limits.maxBufferedBytes) this.#reading.resume();
  }

  #waitForWrites(): Promise<void> {
    return new Promise((wake) => {
      const previous = this.#wake;
      this.#wake = () => {
        previous?.();
        wake();
      };
    });
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** Writes every byte of `chunks` (a write may take fewer than given); returns how many. */
async function writeAll(handle: FileHandle, chunks: Buffer[]): Promise<number> {
  const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  let done = (await handle.writev(chunks)).bytesWritten;
  while (done < total) {
    const rest = Buffer.concat(chunks).subarray(done);
    done += (await handle.write(rest, 0, rest.length, null)).bytesWritten;
  }
  return total;
}

/** A path that exists already or a link in the way: only another writer in the staging folder could have made it. */
function fsProblem(path: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EEXIST' || code === 'ELOOP' || code === 'ENOTDIR') return new ForeignWrite(path, `could not be created (${code}): something else wrote in the staging folder`);
  return error;
}
