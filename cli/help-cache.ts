/**
 * The answers of `plinth --help`, `plinth` alone and `plinth <group> --help`,
 * kept so that the next identical call prints them without loading the kernel
 * (about two thirds of such a start is loading and preparing it).
 *
 * An answer is the command table as the help prints it, made from the settings
 * files and every plugin folder and manifest discovery read
 * (internal/fs/read-paths.ts records them), plinth's own package.json and its
 * CLI module. It is kept with:
 * - its key: the command line, the working folder, the whole environment but
 *   for the shell's bookkeeping (PWD, OLDPWD, SHLVL, `_`) as a digest (no
 *   value is written), whether stdout is a terminal, and the Node that runs plinth;
 * - the identity of every input (device, inode, size, mtime, ctime, and the
 *   link's own when a path is a symbolic link; or that it was missing).
 * It is served only when the key is the same and every input's identity is
 * unchanged: adding, removing or editing a plugin or a settings file, or
 * another plinth, is a miss, answered by the kernel as before and kept again.
 * An answer is kept only when the command wrote nothing to stderr (a warning
 * must be shown again) and when no input changed within {@link RACY_MS} of
 * keeping it: a file rewritten within the file system's timestamp granularity
 * (a second or two on some) could keep its identity, as git's "racily clean"
 * index entries.
 *
 * The file is `help.json` in the user's own cache folder (cli/compile-cache.ts:
 * made 0700, refused when not the user's own), written atomically (a temporary
 * file renamed over it): concurrent writers never leave it torn, the last one
 * wins, and an answer lost that way is a miss. It keeps the {@link MAX_ENTRIES}
 * most recent answers (one per working folder and command line). A file that
 * is not a table of this format is ignored and replaced.
 */
import { lstatSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../kernel/paths.js';
import { compileCacheDir, unsafeCacheDir } from './compile-cache.js';

/** Inputs changed this recently when an answer is made: the answer is not kept. */
export const RACY_MS = 2_500;
/** Answers kept. */
export const MAX_ENTRIES = 16;
const FORMAT = 1;
/** Set by the shell at every command or `cd`; nothing plinth reads. */
const SHELL_BOOKKEEPING = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);

/** One kept answer. */
interface Entry {
  readonly key: string;
  readonly inputs: ReadonlyArray<readonly [path: string, identity: string]>;
  readonly stdout: string;
  readonly code: number;
}

interface Table {
  readonly format: number;
  readonly entries: Entry[];
}

/** The answer to print. */
export interface HelpAnswer {
  readonly stdout: string;
  readonly code: number;
}

/** Where answers are kept, or undefined when the user's cache folder cannot be used. */
export function helpCacheFile(dir: string = compileCacheDir()): string | undefined {
  return unsafeCacheDir(dir) === undefined ? join(dir, 'help.json') : undefined;
}

/**
 * Files plinth's own answer depends on besides those discovery reads: its
 * package.json (the version) and the module holding this code (a build
 * replaces every file of dist/, so a new build is a new identity).
 */
export function ownInputs(): string[] {
  return [join(packageRoot(), 'package.json'), fileURLToPath(import.meta.url)];
}

/** What makes two calls the same call, as a string. */
export function helpKey(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd(), tty: boolean = process.stdout.isTTY === true): string {
  const kept = Object.entries(env)
    .filter(([name, value]) => value !== undefined && !SHELL_BOOKKEEPING.has(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // The environment as a digest: its values (tokens, keys) are never written to the file.
  return JSON.stringify({ format: FORMAT, argv, cwd, tty, node: process.execPath, version: process.version, env: digest(JSON.stringify(kept)) });
}

/**
 * A digest of `text`: four 53-bit lanes of a multiply-xorshift hash with
 * different seeds. Not cryptographic: node:crypto alone costs more to load
 * than a kept answer takes to print, and the environment is the user's own,
 * so only an accidental collision could matter.
 */
export function digest(text: string): string {
  const lanes: string[] = [];
  for (const seed of [0x9e3779b9, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f]) {
    let h1 = 0xdeadbeef ^ seed;
    let h2 = 0x41c6ce57 ^ seed;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    lanes.push((4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0'));
  }
  return lanes.join('');
}

/**
 * The identity of `path`: its stat (following links) and, for a link, its own;
 * `missing` when it does not exist; `error:<code>` when it cannot be stat'ed.
 */
export function identity(path: string): string {
  const id = (info: { dev: number; ino: number; size: number; mtimeMs: number; ctimeMs: number; mode: number }) => `${info.dev}:${info.ino}:${info.mode}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
  let own;
  try {
    own = lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : `error:${code ?? '?'}`;
  }
  if (!own.isSymbolicLink()) return id(own);
  try {
    return `link ${id(own)} -> ${id(statSync(path))}`;
  } catch (error) {
    return `link ${id(own)} -> error:${(error as NodeJS.ErrnoException).code ?? '?'}`;
  }
}

function readTable(file: string): Table | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const table = value as Partial<Table> | null;
  if (typeof table !== 'object' || table === null || table.format !== FORMAT || !Array.isArray(table.entries)) return undefined;
  const valid = table.entries.filter(
    (e): e is Entry =>
      typeof e === 'object' &&
      e !== null &&
      typeof e.key === 'string' &&
      typeof e.stdout === 'string' &&
      Number.isInteger(e.code) &&
      Array.isArray(e.inputs) &&
      e.inputs.every((i) => Array.isArray(i) && i.length === 2 && typeof i[0] === 'string' && typeof i[1] === 'string'),
  );
  return { format: FORMAT, entries: valid };
}

/** The kept answer for `key` when every input is as it was; undefined otherwise (never throws). */
export function readHelp(key: string, file: string | undefined = helpCacheFile()): HelpAnswer | undefined {
  if (file === undefined) return undefined;
  const entry = readTable(file)?.entries.find((e) => e.key === key);
  if (entry === undefined || entry.inputs.length === 0) return undefined;
  for (const [path, id] of entry.inputs) if (identity(path) !== id) return undefined;
  return { stdout: entry.stdout, code: entry.code };
}

/**
 * Keeps `answer` for `key`, made from `inputs`; false when it is not kept (an
 * input changed too recently, or the file cannot be written). Never throws.
 */
export async function writeHelp(key: string, inputs: Iterable<string>, answer: HelpAnswer, file: string | undefined = helpCacheFile(), now: number = Date.now()): Promise<boolean> {
  if (file === undefined) return false;
  const identities: Array<[string, string]> = [];
  for (const path of new Set(inputs)) {
    const id = identity(path);
    if (id.startsWith('error:') || id.includes('-> error:')) return false;
    if (id !== 'missing' && changedSince(path, now - RACY_MS)) return false;
    identities.push([path, id]);
  }
  const others = (readTable(file)?.entries ?? []).filter((e) => e.key !== key);
  const table: Table = { format: FORMAT, entries: [{ key, inputs: identities, stdout: answer.stdout, code: answer.code }, ...others].slice(0, MAX_ENTRIES) };
  try {
    // Loaded only to keep an answer: a served answer never loads the sdk.
    const { writeFileAtomic } = await import('../sdk/files.js');
    await writeFileAtomic(file, JSON.stringify(table), { mode: 0o600, durable: false });
    return true;
  } catch {
    return false;
  }
}

/** Whether `path` (or the link at it) was modified or changed at or after `since` (ms), or is dated in the future. */
function changedSince(path: string, since: number): boolean {
  const infos = [lstatSync(path, { throwIfNoEntry: false }), statSync(path, { throwIfNoEntry: false })];
  return infos.some((info) => info !== undefined && (info.mtimeMs >= since || info.ctimeMs >= since));
}

/** The global options that take a value (cli/main.ts): the word after one is its value, not a command. */
const VALUED = new Set(['--home', '--workspace', '--profile', '--plugin-dir']);

/**
 * Whether `argv` may ask for the command table (`--help` or `-h` before any `--`,
 * or no command word at all): only then is an answer looked up or kept. A wrong
 * guess costs a lookup, never a wrong answer (answers are kept by exact command line).
 */
export function mayBeHelp(argv: readonly string[]): boolean {
  const dashes = argv.indexOf('--');
  const before = dashes === -1 ? argv : argv.slice(0, dashes);
  if (before.includes('--help') || before.includes('-h')) return true;
  for (let i = 0; i < before.length; i++) {
    const arg = before[i]!;
    if (VALUED.has(arg)) i++;
    else if (!arg.startsWith('-')) return false;
  }
  return dashes === -1;
}
