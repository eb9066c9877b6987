/**
 * Where installed plugins live, and the lock file that records them.
 *
 * Each installed version is a folder of its own, `plugins/.versions/<name>@<version>`
 * (a scoped name's slash becomes `+`); `plugins/<name>` is a relative symlink
 * to the active one. Discovery never enters dot-folders and follows a link
 * only when it stays inside the plugins folder, so exactly the active version
 * is found. Switching versions replaces the link with `rename`, one atomic
 * step: a reader (or a kill) sees the old version or the new, never neither.
 * Downloads are staged in `plugins/.staging-<pid>-<random>`, on the same file
 * system, so that moving a checked version into `.versions` is a rename too.
 *
 * `plinth.lock.json` is the record (what was asked for, from where, with
 * which integrity); the link is the truth of what is active. A kill between
 * writing the record and switching the link is repaired on the next read: an
 * entry whose version is not the active one falls back to its `previous`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rename, rm, symlink, unlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { type LockEntry, type LockFile, PlinthError, isPlinthError, withFileLock, writeFileAtomic } from 'plinth/sdk';
import { isAlive, installedVersionFolder, lockFileSchema } from 'plinth/internal';

export class PluginStore {
  readonly pluginsDir: string;
  readonly versionsDir: string;
  readonly lockFile: string;

  constructor(readonly home: string) {
    this.pluginsDir = join(home, 'plugins');
    this.versionsDir = join(this.pluginsDir, '.versions');
    this.lockFile = join(home, 'plugins.lock.json');
  }

  /** `plugins/<name>`: what discovery finds. */
  activePath(name: string): string {
    return join(this.pluginsDir, ...name.split('/'));
  }

  versionDir(name: string, version: string): string {
    return join(this.versionsDir, installedVersionFolder(name, version));
  }

  /**
   * The active version of `name`: `undefined` when nothing is at `plugins/<name>`.
   * @throws PlinthError `PLN_E_MARKET_NOT_OURS` when a folder the user put there (not a link plinth made) holds it.
   */
  async activeVersion(name: string): Promise<string | undefined> {
    const path = this.activePath(name);
    const info = await lstat(path).catch(() => undefined);
    if (!info) return undefined;
    if (info.isSymbolicLink()) {
      const target = await readlink(path);
      const prefix = installedVersionFolder(name, '');
      const base = target.split('/').at(-1) ?? '';
      if (base.startsWith(prefix) && join(dirname(path), target).startsWith(this.versionsDir)) return base.slice(prefix.length);
    }
    throw new PlinthError('PLN_E_MARKET_NOT_OURS', `${path} was not installed by plinth: it is left as it is`, {
      plugin: name,
      hint: `move ${path} elsewhere (or use \`plinth ext link\` for a folder under development), then install again`,
      details: { dir: path },
    });
  }

  /** Points `plugins/<name>` at `.versions/<name>@<version>`, in one rename. */
  async activate(name: string, version: string): Promise<void> {
    const path = this.activePath(name);
    await mkdir(dirname(path), { recursive: true });
    const temp = join(this.pluginsDir, `.link-${process.pid}-${randomBytes(6).toString('hex')}`);
    await symlink(relative(dirname(path), this.versionDir(name, version)), temp, 'dir');
    try {
      await rename(temp, path);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
  }

  /** Removes the `plugins/<name>` link (never a folder). */
  async deactivate(name: string): Promise<void> {
    const path = this.activePath(name);
    const info = await lstat(path).catch(() => undefined);
    if (info?.isSymbolicLink()) await unlink(path);
    if (name.startsWith('@')) await rm(dirname(path), { recursive: false }).catch(() => undefined); // an emptied scope folder
  }

  /** A fresh staging folder, named after this process so that a crashed one's is recognised. */
  async stage(): Promise<string> {
    await mkdir(this.pluginsDir, { recursive: true });
    return mkdtemp(join(this.pluginsDir, `.staging-${process.pid}-`));
  }

  /**
   * Removes staging folders, temporary links and plugin locks (`.lock-<name>`) left by processes
   * that died (a lock whose owner on this machine is gone; one being written, or another machine's, is
   * left to {@link PluginStore.withPluginLock}), and finishes a `--force` reinstall that died between its two renames
   * (see {@link PluginStore.asideDir}): the version folder set aside goes
   * back when nothing took its place, and is removed when the verified
   * download did (the same version, checked against the same integrity).
   */
  async cleanLeftovers(): Promise<void> {
    const dead = (pid: string | undefined) => Number(pid) !== process.pid && !isAlive(Number(pid));
    for (const entry of await readdir(this.pluginsDir).catch(() => [] as string[])) {
      const owner = /^\.(?:staging|link)-(\d+)-/.exec(entry);
      if (owner && dead(owner[1])) await rm(join(this.pluginsDir, entry), { recursive: true, force: true });
      else if (entry.startsWith('.lock-')) await removeDeadLock(join(this.pluginsDir, entry), dead);
    }
    for (const entry of await readdir(this.versionsDir).catch(() => [] as string[])) {
      const aside = /^(.+)\.replaced-(\d+)$/.exec(entry);
      if (!aside || !dead(aside[2])) continue;
      const folder = join(this.versionsDir, aside[1]!);
      if (await lstat(folder).catch(() => undefined)) await rm(join(this.versionsDir, entry), { recursive: true, force: true });
      else await rename(join(this.versionsDir, entry), folder);
    }
  }

  /** Where a `--force` reinstall sets the version folder aside while the new one moves in (named after this process). */
  asideDir(name: string, version: string): string {
    return `${this.versionDir(name, version)}.replaced-${process.pid}`;
  }

  /** Removes every version folder of `name` but those in `keep`. */
  async prune(name: string, keep: readonly string[]): Promise<void> {
    const prefix = installedVersionFolder(name, '');
    const entries = await readdir(this.versionsDir).catch(() => [] as string[]);
    for (const entry of entries) {
      if (entry.startsWith(prefix) && !keep.includes(entry.slice(prefix.length))) await rm(join(this.versionsDir, entry), { recursive: true, force: true });
    }
  }

  /** Serialises installs of one plugin across processes: one waits for the other, up to `waitMs`. */
  async withPluginLock<T>(name: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
    await mkdir(this.pluginsDir, { recursive: true });
    const lockFile = join(this.pluginsDir, `.lock-${lockName(name)}`);
    try {
      // A lock is stale when its process is gone; an install may take minutes, so age alone does not break it.
      return await withFileLock(lockFile, fn, { timeoutMs: waitMs, staleMs: 24 * 3600_000 });
    } catch (error) {
      if (isPlinthError(error) && error.code === 'PLN_E_FILE_LOCKED') {
        const pid = error.details?.pid;
        throw new PlinthError('PLN_E_MARKET_BUSY', `another plinth (pid ${typeof pid === 'number' ? pid : 'unknown'}) is installing "${name}"; waited ${waitMs} ms`, {
          plugin: name,
          cause: error,
          hint: 'wait for it to finish and run the command again (a lock left by a process that died is removed by itself)',
          details: { step: 'lock', lockFile },
        });
      }
      throw error;
    }
  }

  /** The lock file, repaired against the active links (see the module comment). */
  async read(): Promise<LockFile> {
    const data = await this.readRaw();
    for (const [name, entry] of Object.entries(data.plugins)) {
      const active = await this.activeVersion(name).catch(() => undefined);
      if (active === entry.version) continue;
      if (entry.previous && active === entry.previous.version) data.plugins[name] = entry.previous;
      else if (active === undefined) delete data.plugins[name];
    }
    return data;
  }

  /** Changes the lock file under its own lock; `change` may return nothing to leave it. */
  async update(change: (data: LockFile) => void | Promise<void>): Promise<LockFile> {
    await mkdir(this.home, { recursive: true });
    return withFileLock(`${this.lockFile}.lock`, async () => {
      const data = await this.read();
      await change(data);
      await writeFileAtomic(this.lockFile, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o644 });
      return data;
    });
  }

  private async readRaw(): Promise<LockFile> {
    let text: string;
    try {
      text = await readFile(this.lockFile, 'utf8');
    } catch {
      return { lockfileVersion: 1, plugins: {} };
    }
    const parsed = lockFileSchema.safeParse(safeParse(text));
    if (!parsed.success) {
      throw new PlinthError('PLN_E_MARKET_LOCK_INVALID', `${this.lockFile} is not a plinth lock file: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
        hint: `restore it from a backup, or remove it (installed plugins stay; \`plinth ext install\` records them again)`,
        details: { file: this.lockFile },
      });
    }
    return parsed.data;
  }
}

/**
 * Removes `lockFile` when it names a process of this machine that is gone, and it has not changed
 * since it was read (then another process broke it and took it).
 */
async function removeDeadLock(lockFile: string, dead: (pid: string | undefined) => boolean): Promise<void> {
  const text = await readFile(lockFile, 'utf8').catch(() => undefined);
  const owner = text === undefined ? undefined : (safeParse(text) as { pid?: unknown; host?: unknown } | undefined);
  if (typeof owner?.pid !== 'number' || owner.host !== hostname() || !dead(String(owner.pid))) return;
  if ((await readFile(lockFile, 'utf8').catch(() => undefined)) !== text) return;
  await unlink(lockFile).catch(() => undefined);
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export type { LockEntry };

/**
 * A plugin name as one file name: `@scope/name` → `@scope+name`. Anything else
 * that is not a plugin name's character (a URL given by mistake:
 * `https://github.com/o/r` used to make `.lock-https:+/github.com/o/r`, a path
 * into folders that do not exist) is percent-encoded, so the lock is always one
 * file in the plugins folder.
 */
export function lockName(name: string): string {
  return name.replace(/[^\w@.-]/g, (c) => (c === '/' ? '+' : `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}
