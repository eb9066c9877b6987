/**
 * plinth's one file watcher: watches the files under one root folder, keeps
 * the changes to files that match the include list (and not the ignore list),
 * and hands them over in debounced batches, one entry per path, its kind
 * decided by a stat after the debounce (a file seen before is `changed`, a new
 * one `created`, a gone one `deleted`). The hooks plugin's `file_change` and
 * the extensions plugin's hot reload both use it.
 *
 * One root per watcher: to watch several folders, start one watcher per
 * folder. That is cheap — a watcher holds its `fs.watch` handles, a set of the
 * paths it knows and a timer, nothing shared and no polling.
 *
 * Symbolic links are never followed: a link under the root is reported as an
 * entry of its own (when it matches) and its target is neither entered nor
 * watched, so nothing outside the root is seen. (The root itself may be a link;
 * it is watched where it points.)
 *
 * On macOS and Windows `fs.watch(root, { recursive: true })` is native and
 * cheap. On Linux, Node 20 emulates `recursive` by walking the whole tree
 * synchronously and opening an inotify watch on every file and folder —
 * `node_modules` included, which exhausts inotify limits and stalls the event
 * loop in real projects; so there the watcher watches each folder itself
 * (`tree` mode: one inotify watch per folder, which reports its files'
 * changes) and never enters ignored folders. (That emulation also follows links
 * to folders: native mode on Linux reports their targets' changes as changes
 * of the link, and can miss the link's removal.)
 *
 * Failures (a folder that cannot be watched, inotify limits, a rejecting
 * `onChange`) are logged with `PLN_E_WATCH_FAILED` and never thrown.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { safeText } from './format.js';
import { globTest } from './globs.js';
import type { Logger } from './plugin.js';

/** What happened to one file. */
export type FileChangeKind = 'created' | 'changed' | 'deleted';

/** One changed file. */
export interface FileChange {
  /** Relative to the watched root, with `/` separators. */
  readonly path: string;
  readonly absolutePath: string;
  readonly kind: FileChangeKind;
}

/** Options of {@link watchFiles}. */
export interface WatchFilesOptions {
  /** The folder watched, with everything below it. */
  readonly root: string;
  /**
   * Files reported, as root-relative globs with plinth's glob rules
   * in file mode (a pattern without a slash matches the base name anywhere,
   * `!negations`, `dot: true`): exactly how the hooks read `matcher.files`.
   * Default: every file. An empty list matches nothing and starts no watcher.
   */
  readonly include?: readonly string[];
  /** Paths never reported, and folders never entered (a folder is skipped when anything inside it would be ignored). Same glob rules. Default {@link DEFAULT_WATCH_IGNORE}. */
  readonly ignore?: readonly string[];
  /** Quiet time before a batch is handed over; default 200 ms. A steady stream of changes is still flushed every 10 debounce periods. */
  readonly debounceMs?: number;
  /** Called with each batch, one call at a time, paths sorted; a rejection is logged. */
  onChange(changes: FileChange[]): void | Promise<void>;
  /** Where failures go; default standard error. */
  readonly log?: Pick<Logger, 'warn' | 'debug'>;
  /** `native`: `fs.watch` recursive; `tree`: one watch per folder. Default: native on macOS and Windows, tree elsewhere. */
  readonly mode?: 'native' | 'tree';
}

/** A running watcher. */
export interface FileWatcher {
  /** Settles when the initial scan is done and the folders are watched: changes after it are seen. Never rejects. */
  readonly ready: Promise<void>;
  /** Stops watching; waits (at most 5 s) for a batch being handled. */
  close(): Promise<void>;
}

/** The ignore list when none is given: dependencies and git's own folder, wherever they are. */
export const DEFAULT_WATCH_IGNORE: readonly string[] = Object.freeze(['**/node_modules/**', '**/.git/**']);

/** Folders watched at most in `tree` mode; past it, a warning, and deeper folders are not watched. */
export const MAX_WATCHED_FOLDERS = 10_000;

const CLOSE_WAIT_MS = 5_000;

/** Starts watching; see the module comment. Never throws. */
export function watchFiles(options: WatchFilesOptions): FileWatcher {
  if (options.include !== undefined && options.include.length === 0) return { ready: Promise.resolve(), close: async () => {} };
  const root = resolve(options.root);
  const log = options.log ?? { warn: (m: string) => process.stderr.write(safeText(`plinth: ${m}\n`)), debug: () => {} };
  const debounceMs = options.debounceMs ?? 200;
  const mode = options.mode ?? (process.platform === 'darwin' || process.platform === 'win32' ? 'native' : 'tree');
  const matching = globTest(options.include ?? [], { basename: true });
  const ignoreList = options.ignore ?? DEFAULT_WATCH_IGNORE;
  const ignoredPath = ignoreList.length > 0 ? globTest(ignoreList, { basename: true }) : () => false;
  // A folder is not entered when anything inside it would be ignored.
  const prunedDir = (rel: string): boolean => rel !== '' && (ignoredPath(rel) || ignoredPath(`${rel}/__plinth_probe__`));
  const abs = (rel: string): string => (rel === '' ? root : join(root, ...rel.split('/')));

  const known = new Set<string>(); // matching files that exist, as far as we know
  const pending = new Set<string>();
  const watchers = new Map<string, FSWatcher>(); // tree: folder → watch; native: '' → the one watch
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let firstPendingAt = 0;
  let flushing: Promise<void> | undefined;
  let again = false;
  let warnedLimit = false;

  const warn = (message: string, error?: unknown): void => {
    const reason = error === undefined ? '' : `: ${(error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error))}`;
    log.warn(`PLN_E_WATCH_FAILED ${message}${reason}`);
  };

  const schedule = (): void => {
    if (closed) return;
    const now = Date.now();
    if (!timer) firstPendingAt = now;
    if (timer) clearTimeout(timer);
    const wait = Math.max(0, Math.min(debounceMs, firstPendingAt + debounceMs * 10 - now));
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, wait);
  };

  const record = (rel: string): void => {
    if (closed || rel === '' || ignoredPath(rel)) return;
    pending.add(rel);
    schedule();
  };

  /** Every file under `rel` that matches, without entering ignored folders or following links. */
  const walk = async (rel: string, onDir?: (dir: string) => void): Promise<string[]> => {
    const files: string[] = [];
    const stack = [rel];
    while (stack.length > 0 && !closed) {
      const dir = stack.pop()!;
      onDir?.(dir);
      let entries;
      try {
        entries = await readdir(abs(dir), { withFileTypes: true });
      } catch {
        continue; // gone, or not readable: nothing to report from it
      }
      for (const entry of entries) {
        const child = dir === '' ? entry.name : `${dir}/${entry.name}`;
        // A Dirent describes the entry itself: a link to a folder is not a folder here, so it is never entered.
        if (entry.isDirectory()) {
          if (!prunedDir(child)) stack.push(child);
        } else if (!ignoredPath(child) && matching(child)) {
          files.push(child);
        }
      }
    }
    return files;
  };

  const watchFolder = (dir: string): void => {
    if (closed || watchers.has(dir)) return;
    if (watchers.size >= MAX_WATCHED_FOLDERS) {
      if (!warnedLimit) warn(`${root}: more than ${MAX_WATCHED_FOLDERS} folders; deeper changes are not seen (add folders to the watcher's ignore list)`);
      warnedLimit = true;
      return;
    }
    try {
      const watcher = watch(abs(dir), { persistent: false }, (type, name) => {
        if (name === null) return;
        const child = dir === '' ? String(name) : `${dir}/${String(name)}`;
        record(child);
        if (type !== 'rename' || closed) return;
        // A folder appeared, or was replaced (deleted and made again): watch it (afresh) and all below.
        // Anything else there now (a file, a link) holds no watch of ours.
        void lstat(abs(child)).then(
          (info) => {
            if (closed) return;
            if (info.isDirectory() || watchers.has(child)) dropWatcher(child);
            if (info.isDirectory() && !prunedDir(child)) void walk(child, watchFolder);
          },
          () => undefined,
        );
      });
      watcher.on('error', (error) => {
        dropWatcher(dir);
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') warn(`cannot keep watching ${abs(dir)}`, error);
      });
      watchers.set(dir, watcher);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (dir === '' || (code !== 'ENOENT' && code !== 'ENOTDIR')) warn(`cannot watch ${abs(dir)}`, error);
    }
  };

  const dropWatcher = (dir: string): void => {
    for (const [key, watcher] of watchers) {
      if (key === dir || (dir !== '' && key.startsWith(`${dir}/`)) || dir === '') {
        watcher.close();
        watchers.delete(key);
      }
    }
  };

  let restarts = 0;
  const watchNative = (): void => {
    if (closed) return;
    try {
      const watcher = watch(root, { recursive: true, persistent: false }, (_type, name) => {
        if (name !== null) record(String(name).split(sep).join('/'));
      });
      watcher.on('error', (error) => {
        dropWatcher('');
        if (closed) return;
        if (restarts >= 5) return warn(`stopped watching ${root} after ${restarts} restarts`, error);
        warn(`watching ${root} failed; restarting`, error);
        setTimeout(watchNative, 1000 * 2 ** restarts++).unref();
      });
      watchers.set('', watcher);
    } catch (error) {
      warn(`cannot watch ${root}`, error);
    }
  };

  const flush = async (): Promise<void> => {
    if (flushing) {
      again = true;
      return;
    }
    const run = async (): Promise<void> => {
      const paths = [...pending].sort();
      pending.clear();
      const results = new Map<string, FileChangeKind>();
      const knownUnder = (rel: string): string[] => [...known].filter((file) => file.startsWith(`${rel}/`));
      for (const rel of paths) {
        if (closed) return;
        const info = await lstat(abs(rel)).catch(() => undefined);
        if (info === undefined) {
          // Gone: the file itself, or a folder and every file known under it.
          if (mode === 'tree') dropWatcher(rel);
          if (known.has(rel)) results.set(rel, 'deleted');
          for (const file of knownUnder(rel)) results.set(file, 'deleted');
        } else if (info.isDirectory()) {
          // A folder appeared (or was moved in): its files are new unless already known.
          if (!prunedDir(rel)) for (const file of await walk(rel)) if (!known.has(file) && !results.has(file)) results.set(file, 'created');
        } else {
          // A file or a link; a folder that stood here before is gone with its files.
          for (const file of knownUnder(rel)) results.set(file, 'deleted');
          if (matching(rel) && !results.has(rel)) results.set(rel, known.has(rel) ? 'changed' : 'created');
        }
      }
      for (const [rel, kind] of results) {
        if (kind === 'deleted') known.delete(rel);
        else known.add(rel);
      }
      if (results.size === 0 || closed) return;
      const changes = [...results].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, kind]) => ({ path, absolutePath: abs(path), kind }));
      try {
        await options.onChange(changes);
      } catch (error) {
        warn(`a change handler failed for ${changes.length} change(s) under ${root}`, error);
      }
    };
    flushing = run().finally(() => {
      flushing = undefined;
      if (again) {
        again = false;
        if (pending.size > 0) schedule();
      }
    });
    return flushing;
  };

  const ready = (async () => {
    try {
      if (mode === 'native') watchNative();
      const files = await walk('', mode === 'tree' ? watchFolder : undefined);
      for (const file of files) known.add(file);
    } catch (error) {
      warn(`cannot scan ${root}`, error);
    }
  })();

  return {
    ready,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      dropWatcher('');
      await ready;
      const current = flushing;
      if (current) {
        let limit: NodeJS.Timeout | undefined;
        await Promise.race([current, new Promise<void>((done) => (limit = setTimeout(done, CLOSE_WAIT_MS)))]);
        clearTimeout(limit);
      }
    },
  };
}
