/**
 * Node's module compile cache for plinth's own modules (Node ≥ 22.1:
 * `module.enableCompileCache`; absent on Node 20, where this does nothing and
 * touches no file). Turned on by cli/bin.ts before the kernel's modules load,
 * so that a command compiles its modules from V8's cached code instead of from
 * source.
 *
 * The folder is `<os.tmpdir()>/plinth-compile-cache-<uid>`:
 * - not under the plinth home: what is cached is plinth's installed code, the
 *   same for every home, so a fresh `--home` (CI, tests, a one-off home) does
 *   not start cold and write its own copy, and a home on a slow or synced disk
 *   is not written at every start;
 * - not Node's default (`<tmpdir>/node-compile-cache`): a temporary folder is
 *   shared by every user of the machine, and cached code is code that runs. The
 *   folder is the user's own (made 0700; used only when it is a real folder
 *   owned by this user and no one else can write to it), so another user can
 *   neither plant entries nor swap the folder for a link;
 * - in the temporary folder: it is a cache, rebuilt by the next start when the
 *   system clears it. Node keys each entry by the module's path and content and
 *   by its own version, so an update of plinth or Node is never served stale code.
 *
 * `NODE_COMPILE_CACHE` set by the user wins (Node has already enabled it there);
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off, as for any Node program.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The part of `node:module` used here (present from Node 22.1). */
export interface CompileCacheHost {
  enableCompileCache?: (dir?: string) => { status: number; message?: string; directory?: string };
  constants?: { compileCacheStatus?: Record<string, number> };
}

export type CompileCacheOutcome =
  /** This Node has no compile cache (Node < 22.1). */
  | { readonly state: 'absent' }
  /** Not used: the folder is not the user's own, or could not be made. */
  | { readonly state: 'refused'; readonly dir: string; readonly reason: string }
  /** Node's answer: enabled, already enabled (NODE_COMPILE_CACHE), disabled or failed. */
  | { readonly state: 'enabled' | 'already' | 'disabled' | 'failed'; readonly dir: string };

/** The cache folder of this user: `<tmpdir>/plinth-compile-cache-<uid>` (`…-cache` where there are no uids: Windows' temporary folder is per user). */
export function compileCacheDir(base: string = tmpdir(), uid: number | undefined = process.getuid?.()): string {
  return join(base, uid === undefined ? 'plinth-compile-cache' : `plinth-compile-cache-${uid}`);
}

/** Why `dir` may not hold cached code for this user, or undefined when it may (made if missing). */
export function unsafeCacheDir(dir: string, uid: number | undefined = process.getuid?.()): string | undefined {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return `cannot make it: ${(error as Error).message}`;
  }
  let info;
  try {
    info = lstatSync(dir);
  } catch (error) {
    return `cannot read it: ${(error as Error).message}`;
  }
  if (!info.isDirectory()) return info.isSymbolicLink() ? 'it is a symbolic link' : 'it is not a folder';
  if (uid !== undefined && info.uid !== uid) return `it belongs to user ${info.uid}`;
  if (uid !== undefined && (info.mode & 0o022) !== 0) return 'others may write to it';
  return undefined;
}

/** Turns on `host`'s compile cache in {@link compileCacheDir}; never throws. */
export function enableCompileCache(host: CompileCacheHost = nodeModule as CompileCacheHost, dir: string = compileCacheDir()): CompileCacheOutcome {
  if (typeof host.enableCompileCache !== 'function') return { state: 'absent' };
  // Node ignores the folder given when NODE_COMPILE_CACHE is set, and does nothing when it is disabled: no folder to check.
  if (process.env.NODE_COMPILE_CACHE === undefined && process.env.NODE_DISABLE_COMPILE_CACHE === undefined) {
    const reason = unsafeCacheDir(dir);
    if (reason !== undefined) return { state: 'refused', dir, reason };
  }
  try {
    const result = host.enableCompileCache(dir);
    const codes = host.constants?.compileCacheStatus ?? {};
    const state = result.status === codes.ENABLED ? 'enabled' : result.status === codes.ALREADY_ENABLED ? 'already' : result.status === codes.DISABLED ? 'disabled' : 'failed';
    return { state, dir: result.directory ?? dir };
  } catch {
    return { state: 'failed', dir };
  }
}
