/**
 * Runs what was approved, not what a path holds by the time the child reads
 * it. The trust plugin hashes a workspace subject's files when it checks
 * them; a file swapped between that check and the child's own read would run
 * unapproved. So the files of a request's `pinned` are copied, each checked
 * against its approved SHA-256 from the very bytes read (one open
 * descriptor), into a private folder that mirrors their folders from the
 * working folder down; every other entry of those folders is a link to the
 * original (`node_modules`, `package.json`, data). The program, and each
 * argument that names a pinned file (`tools/server.js`, `--require=./p.js`),
 * is pointed at the copy. A swap after the copy cannot reach it: the copy's
 * folders are plinth's, not the workspace's (a bind over the original path
 * would not do: renaming over a mount point in the workspace drops it).
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { PlinthError } from 'plinth/sdk';

/** At most this many links are made for the other entries of the mirrored folders. */
const MAX_LINKS = 10_000;

export interface ApprovedCopy {
  /** The private folder (readable by the child, read-only for it when confined). */
  readonly root: string;
  /** The program to start: the copy when it is a pinned file. */
  readonly file: string;
  readonly args: readonly string[];
  /** Removes the folder (at once: it is small, and gone before whoever waits for the child's end goes on). */
  release(): void;
}

/** Whether `inner` is `outer` or inside it. */
function isWithin(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

/** The deepest folder holding every path. */
function commonFolder(paths: readonly string[]): string {
  let common = dirname(paths[0]!);
  for (const path of paths) while (!isWithin(path, common)) common = dirname(common);
  return common;
}

/** What a pinned file holds now, read once from one descriptor; refused when it is not what was approved. */
async function approvedBytes(path: string, sha256: string, label: string, owner: string): Promise<{ bytes: Buffer; mode: number }> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const info = await handle.stat();
    if (!info.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' });
    const bytes = await handle.readFile();
    const now = createHash('sha256').update(bytes).digest('hex');
    if (now === sha256) return { bytes, mode: info.mode };
    throw changed(path, label, owner, `its content is not what was approved (sha256 ${now.slice(0, 12)}, approved ${sha256.slice(0, 12)})`);
  } catch (error) {
    if (error instanceof PlinthError) throw error;
    throw changed(path, label, owner, `it cannot be read as it was approved (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  } finally {
    await handle?.close();
  }
}

function changed(path: string, label: string, owner: string, what: string): PlinthError {
  return new PlinthError('PLN_E_TRUST_CHANGED_AT_RUN', `${label} was not started: ${path} changed after it was approved: ${what}`, {
    plugin: owner,
    hint: 'something rewrote the file between the approval check and the start; find what writes into that folder. Start it again to check it anew (a change that stays needs approval again)',
    details: { path },
  });
}

/**
 * Copies the pinned files into a new private folder (mirroring their
 * folders from `cwd`, or from the deepest folder holding them all when some
 * are outside it) and points `file` and `args` at the copies.
 * @throws PlinthError `PLN_E_TRUST_CHANGED_AT_RUN` when a file is not as approved (nothing is left behind).
 */
export async function approvedCopy(pinned: ReadonlyArray<{ path: string; sha256: string }>, request: { file: string; args: readonly string[]; cwd: string; label: string; owner: string }): Promise<ApprovedCopy> {
  const pins = new Map(pinned.map((pin) => [resolve(pin.path), pin.sha256]));
  const paths = [...pins.keys()];
  const cwd = resolve(request.cwd);
  const base = paths.every((path) => isWithin(path, cwd)) ? cwd : commonFolder(paths);
  const root = await mkdtemp(join(tmpdir(), 'plinth-approved-'));
  const mirror = (path: string) => join(root, path);
  try {
    // The folders on the way from `base` to each file are real folders in the mirror; all else there is a link.
    const chain = new Set<string>([base]);
    for (const path of paths) for (let dir = dirname(path); isWithin(dir, base) && !chain.has(dir); dir = dirname(dir)) chain.add(dir);
    for (const dir of chain) await mkdir(mirror(dir), { recursive: true, mode: 0o700 });
    for (const [path, sha256] of pins) {
      const { bytes, mode } = await approvedBytes(path, sha256, request.label, request.owner);
      await writeFile(mirror(path), bytes, { mode: 0o600 });
      await chmod(mirror(path), mode & 0o100 ? 0o500 : 0o400);
    }
    let links = 0;
    for (const dir of chain) {
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        const path = join(dir, name);
        if (chain.has(path) || pins.has(path)) continue;
        if (++links > MAX_LINKS) break;
        await symlink(path, mirror(path)).catch(() => undefined);
      }
    }
    // Above `base`, what module lookups walk up to (a monorepo's node_modules, a package.json's "type"): links too.
    for (let dir = dirname(base); ; dir = dirname(dir)) {
      for (const name of ['node_modules', 'package.json']) {
        await mkdir(mirror(dir), { recursive: true, mode: 0o700 });
        await symlink(join(dir, name), mirror(join(dir, name))).catch(() => undefined);
      }
      if (dirname(dir) === dir) break;
    }
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const copyOf = (word: string): string | undefined => {
    const path = resolve(cwd, word);
    return pins.has(path) ? mirror(path) : undefined;
  };
  const args = request.args.map((arg) => {
    const whole = copyOf(arg);
    if (whole !== undefined) return whole;
    const flag = /^(-[^=]*=)(.+)$/s.exec(arg);
    const value = flag ? copyOf(flag[2]!) : undefined;
    return value !== undefined ? `${flag![1]}${value}` : arg;
  });
  return {
    root,
    file: copyOf(request.file) ?? request.file,
    args,
    release: () => {
      try {
        rmSync(root, { recursive: true, force: true });
      } catch {
        // Left in the temporary folder: it holds copies of approved files only.
      }
    },
  };
}
