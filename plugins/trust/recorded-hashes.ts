/**
 * Hashes trust need not compute again: a file of an installed version
 * (`plugins/.versions/<name>@<version>/…`) was hashed at install, and its
 * lock entry's `tree` keeps that SHA-256 with the file's size, mtime and
 * ctime. While `lstat` of the file still shows all three, the content is
 * the one hashed (the installed gate relies on the same rule; ctime cannot
 * be set back by `touch`, so an edit that restores size and mtime is still
 * seen), and the recorded hash stands for reading the file. Anything else —
 * no lock file, one that does not parse, no entry or no tree for the folder,
 * no record of the file, a link, any stat that differs — and the file is
 * read as before. A record can only stand for the hash the file would give:
 * the fingerprint is the same with or without it.
 *
 * What a record is worth: plugins.lock.json sits beside trust.json in the
 * plinth home, written by plinth as the user. Whoever can rewrite the lock
 * so that an edited file's new stat is paired with its old hash can as well
 * write an approval into trust.json; nothing weaker than the home folder
 * stands behind either.
 */
import { lstat, open, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { type LockEntry, type LockFile } from 'plinth/sdk';
import { INSTALLED_LOCK_FILE, INSTALLED_VERSIONS_DIR, type InstalledTree, installedVersionFolder, lockFileSchema } from 'plinth/internal';
import type { RecordedHashes } from './fingerprint.js';

/** The lock file as read: parsed, `invalid` when it is not a plinth lock file, undefined when there is none. */
export type LockRead = LockFile | 'invalid' | undefined;

/** The lock file of one plinth home, parsed once per version of the file. */
export interface InstalledLock {
  readonly home: string;
  /** @throws what reading it throws, but for a missing file (undefined). */
  read(): Promise<LockRead>;
  /** Version folder name → the tree recorded for it (see {@link treesByFolder}); empty without a usable lock. */
  trees(): Promise<ReadonlyMap<string, InstalledTree | undefined>>;
}

/**
 * Reads `<home>/plugins.lock.json` again only when its stat (inode, size,
 * mtime, ctime) differs from the last read's. The marketplace replaces it by
 * a rename, so a new version is a new inode; and a stale read could only
 * offer records that were true once, which still have to match the file's
 * stat to be used.
 */
export function installedLock(home: string): InstalledLock {
  const file = join(home, INSTALLED_LOCK_FILE);
  let cached: { key: string; lock: LockRead; trees: ReadonlyMap<string, InstalledTree | undefined> } | undefined;
  const current = async () => {
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      cached = undefined;
      return { lock: undefined, trees: new Map() };
    }
    try {
      // The stat and the text of one open file: the key cannot name another version than the one read.
      const info = await handle.stat();
      const key = `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
      if (cached?.key === key) return cached;
      const lock = parseLock(await handle.readFile('utf8'));
      cached = { key, lock, trees: treesByFolder(lock) };
      return cached;
    } finally {
      await handle.close();
    }
  };
  return {
    home,
    read: async () => (await current()).lock,
    trees: async () => (await current()).trees,
  };
}

function parseLock(text: string): LockRead {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return 'invalid';
  }
  const parsed = lockFileSchema.safeParse(data);
  return parsed.success ? parsed.data : 'invalid';
}

/**
 * The lock entry that describes `name@version`: the entry, or its `previous`
 * (a kill between recording a new version and switching the link leaves the
 * previous one active).
 */
export function lockEntryFor(lock: LockFile, name: string, version: string): LockEntry | undefined {
  const entry = Object.hasOwn(lock.plugins, name) ? lock.plugins[name] : undefined;
  if (entry?.version === version) return entry;
  if (entry?.previous?.version === version) return entry.previous;
  return undefined;
}

/**
 * Each version folder with the tree {@link lockEntryFor} gives for it. A
 * folder two entries would claim (`a/b` and `a+b`, were both names allowed)
 * gets none: which record describes it is not clear, so its files are read.
 */
function treesByFolder(lock: LockRead): ReadonlyMap<string, InstalledTree | undefined> {
  const trees = new Map<string, InstalledTree | undefined>();
  if (lock === undefined || lock === 'invalid') return trees;
  const add = (folder: string, tree: InstalledTree | undefined) => trees.set(folder, trees.has(folder) ? undefined : tree);
  for (const [name, entry] of Object.entries(lock.plugins)) {
    add(installedVersionFolder(name, entry.version), entry.tree);
    // As lockEntryFor reads it: the previous counts only for a version the entry is not.
    if (entry.previous && entry.previous.version !== entry.version) add(installedVersionFolder(name, entry.previous.version), entry.previous.tree);
  }
  return trees;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * The recorded hashes for one snapshot: the folder of installed versions and
 * each file's folder are resolved once (realpath), the lock is read at the
 * first file that lies in an installed version, and each file costs one
 * `lstat`. Never throws: whatever fails means "not known", and the file is read.
 */
export function recordedHashes(lock: InstalledLock): RecordedHashes {
  let versions: Promise<string | undefined> | undefined;
  let trees: Promise<ReadonlyMap<string, InstalledTree | undefined>> | undefined;
  const realFolders = new Map<string, Promise<string | undefined>>();
  const realFolder = (dir: string) => {
    let real = realFolders.get(dir);
    if (real === undefined) realFolders.set(dir, (real = realpath(dir).catch(() => undefined)));
    return real;
  };
  return {
    async sha256Of(path) {
      // Only a plain absolute path: `a/../b` or a trailing slash could open something else than what is looked up.
      if (!isAbsolute(path) || normalize(path) !== path || path.endsWith(sep)) return undefined;
      versions ??= realpath(join(lock.home, INSTALLED_VERSIONS_DIR)).catch(() => undefined);
      const [root, dir] = await Promise.all([versions, realFolder(dirname(path))]);
      if (root === undefined || dir === undefined || !dir.startsWith(`${root}${sep}`)) return undefined;
      const [folder, ...inside] = dir.slice(root.length + 1).split(sep);
      trees ??= lock.trees().catch(() => new Map());
      const tree = (await trees).get(folder!);
      const key = [...inside, basename(path)].join('/');
      const record = tree && Object.hasOwn(tree.files, key) ? tree.files[key]! : undefined;
      if (record === undefined || !SHA256_HEX.test(record.sha256)) return undefined;
      // The file itself, not what a link there points to: the record is of a regular file.
      const info = await lstat(join(dir, basename(path))).catch(() => undefined);
      if (!info?.isFile()) return undefined;
      const unchanged = record.size === info.size && record.mtimeMs === info.mtimeMs && record.ctimeMs === info.ctimeMs;
      return unchanged ? record.sha256 : undefined;
    },
  };
}
