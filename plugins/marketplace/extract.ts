/**
 * Unpacking a downloaded (and already verified) plugin tarball without
 * trusting it.
 *
 *   const { dir, manifest } = await extractSafely(tarball, staging);   // dir = <staging>/package
 *
 * `staging` is a fresh, empty folder the caller made inside plinth's own
 * folder (the tarball itself may sit in it). The tarball is opened once and
 * read once, through our own gunzip with byte counters, into tar's `Parser`
 * (which reads the headers, PAX and GNU long names included). Every header
 * passes the checks below before its body is read; what passes is written by
 * our own writer (tree-writer.ts), never by tar: folders with `mkdir`, files
 * created exclusively, without following links, with a normalised mode (owner
 * read/write always, group/others never write; the umask may only tighten
 * it), each one hashed as it is written. The first bad entry stops the reading
 * and refuses the whole tarball (`PLN_E_TARBALL_UNSAFE`, naming the entry and
 * why); the files written before it are removed with the staging folder.
 * Then the manifest: `package/manifest.json` must be valid and every path it
 * names for code to run (`main`, a hook's or MCP server's script, `cwd`) must
 * stay inside the plugin. On any failure the staging folder is removed, once
 * every file being written is closed, so nothing is left behind; nothing is
 * ever written outside it.
 *
 * There is no scan of the headers before the writing, nor a walk of the folder
 * after it: only our writer writes in the staging folder, so a bad entry found
 * late leaves no trace either way, and what was written is what the writer
 * recorded (`Extracted.tree`, which every load compares the folder with).
 *
 * What an entry must be: a regular file or folder (no links of any kind, no
 * devices or FIFOs), under `package/` (npm's layout), named by a relative path
 * without `..`, `.`, empty segments, backslashes, colons (Windows drives and
 * streams) or control characters, not deeper than `maxDepth`, without
 * setuid, setgid or sticky bits, no name longer than 255 bytes nor path longer
 * than 2048 (refused here, not left to fail the write as a disk error), owned by nobody in particular (uid/gid 0 or
 * absent, as `npm pack` writes them, or the current user's), and not a second
 * entry for a path already seen (compared without case, as some disks do).
 */
import { constants, type FileHandle, lstat, open, readFile, rm } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { PlinthError, type Manifest, parseManifest, safeLine } from 'plinth/sdk';
import { type InstalledTree, readPeerFolder } from 'plinth/internal';
import { Parser, type ReadEntry } from 'tar';
import { ForeignWrite, TreeWriter, type WrittenTree } from './tree-writer.js';

/** How much a plugin tarball may hold. */
export interface ExtractLimits {
  /** Entries in the archive (files and folders). */
  readonly maxEntries: number;
  /** Path segments below `package/` (`package/a/b.js` is 2). */
  readonly maxDepth: number;
  /** The sum of the files' sizes. */
  readonly maxTotalBytes: number;
  /** One file's size. */
  readonly maxFileBytes: number;
  /**
   * The uncompressed archive itself, headers and padding included: bounds
   * a gzip bomb that hides its bulk where no entry counts it (padding, past
   * the end of the archive), whatever its compression ratio.
   */
  readonly maxArchiveBytes: number;
}

const MiB = 1024 * 1024;

/** The defaults: generous for a plugin (code, docs, assets), small for a disk. */
export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = Object.freeze({
  maxEntries: 10_000,
  maxDepth: 32,
  maxTotalBytes: 128 * MiB,
  maxFileBytes: 64 * MiB,
  maxArchiveBytes: 160 * MiB,
});

/** What was extracted. */
export interface Extracted {
  /** The plugin folder: `<staging>/package`. */
  readonly dir: string;
  readonly manifest: Manifest;
  /** Regular files written. */
  readonly files: number;
  /** Their bytes. */
  readonly bytes: number;
  /**
   * What was written, as it was written: each file's SHA-256 of the bytes
   * written, its size and times from the `fstat` after the last write; paths
   * relative to `dir`. What `hashTree(dir)` returns, without reading it back.
   */
  readonly tree: InstalledTree;
}

/** The one folder every entry lives under, as npm packs it. */
const ROOT = 'package';
const STEP = 'extract';
const MAX_MANIFEST_BYTES = 1024 * 1024;
const ALLOWED_TYPES = new Set(['File', 'OldFile', 'Directory']);
/** One path segment, in bytes: NAME_MAX of Linux's and macOS's file systems. */
const MAX_NAME_BYTES = 255;
/** A whole entry path, in bytes: half of PATH_MAX (4096), the rest left for where the plugin is installed. */
const MAX_PATH_BYTES = 2048;

/**
 * Extracts `tarball` into `<staging>/package` and reads its manifest.
 * @throws PlinthError `PLN_E_TARBALL_UNSAFE` for an entry or manifest path
 *   that could reach outside the folder, `PLN_E_TARBALL_INVALID` for an archive
 *   that cannot be read or has no manifest, `PLN_E_TARBALL_NOT_PLUGIN` for a
 *   well-formed npm package without a plugin's manifest, `PLN_E_MANIFEST_INVALID` for a bad
 *   manifest, `PLN_E_STAGING_INVALID` (staging left alone) when `staging` is
 *   not an existing real folder without a `package` in it; a system error
 *   (a full disk, a permission) as it came, after the staging folder is removed.
 */
export async function extractSafely(tarball: string, staging: string, limits: Partial<ExtractLimits> = {}): Promise<Extracted> {
  const bounds: ExtractLimits = { ...DEFAULT_EXTRACT_LIMITS, ...limits };
  await checkStaging(staging);
  let file: FileHandle | undefined;
  try {
    // Not through a symlink; and a FIFO would block the open (with O_NONBLOCK it opens, and fstat refuses it).
    file = await open(tarball, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)).catch((error: unknown) => {
      throw invalid(tarball, `it cannot be opened: ${(error as Error).message}`, error);
    });
    if (!(await file.stat()).isFile()) throw invalid(tarball, 'it is not a regular file');
    const { tree, files, bytes } = await readArchive(tarball, file, new EntryGuard(tarball, bounds), bounds, new TreeWriter(staging));
    await file.close();
    file = undefined;
    const dir = join(staging, ROOT);
    if (!(await lstat(dir).catch(() => undefined))?.isDirectory()) throw invalid(tarball, `it has no "${ROOT}/" folder`);
    const manifest = await readPluginManifest(tarball, dir);
    return { dir, manifest, files, bytes, tree };
  } catch (error) {
    await file?.close().catch(() => undefined);
    // The refusal matters more than a failure to clean up (which only a permission change could cause).
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  }
}
async function checkStaging(staging: string): Promise<void> {
  const refuse = (why: string) =>
    new PlinthError('PLN_E_STAGING_INVALID', `${STEP}: the staging folder ${staging} ${why}`, {
      hint: 'a bug in the caller: extract into a new empty folder it created inside plinth\'s own folder',
      details: { step: STEP, staging },
    });
  const info = await lstat(staging).catch(() => undefined);
  if (!info?.isDirectory()) throw refuse(info?.isSymbolicLink() ? 'is a symbolic link' : 'is not an existing folder');
  if (await lstat(join(staging, ROOT)).then(() => true, () => false)) throw refuse(`already holds a "${ROOT}" entry`);
}

/** A refused entry: its name (shown safely) and why. */
function unsafe(tarball: string, entry: string, reason: string): PlinthError {
  const name = safeLine(entry.length > 300 ? `${entry.slice(0, 300)}…` : entry);
  return new PlinthError('PLN_E_TARBALL_UNSAFE', `${STEP}: refused ${tarball}: entry "${name}": ${reason}`, {
    hint: 'nothing was installed; this tarball is not a plain plugin package: ask its publisher to repack it with "plinth registry pack" or "npm pack"',
    details: { step: STEP, entry: name, reason },
  });
}

function invalid(tarball: string, reason: string, cause?: unknown): PlinthError {
  return new PlinthError('PLN_E_TARBALL_INVALID', `${STEP}: ${tarball} is not a readable plugin tarball: ${reason}`, {
    hint: 'nothing was installed; the file is damaged or is not a gzipped tar of a plugin: retry the download, or ask the publisher to repack it',
    details: { step: STEP, reason },
    ...(cause !== undefined && { cause }),
  });
}

/**
 * The checks on one archive's entries, in order: each entry alone (type,
 * path, mode, owner, size) and against those before it (count, total size,
 * duplicates, a file where a folder is needed).
 */
class EntryGuard {
  #entries = 0;
  #bytes = 0;
  /** Case-folded paths of files, of folders given as entries, and of every folder an entry implies. */
  readonly #files = new Set<string>();
  readonly #dirs = new Set<string>();
  readonly #impliedDirs = new Set<string>();
  readonly #uid = process.getuid?.();
  readonly #gid = process.getgid?.();

  constructor(
    readonly tarball: string,
    readonly limits: ExtractLimits,
  ) {}

  /** The refusal for `entry`, or undefined when it may be extracted. */
  check(entry: ReadEntry): PlinthError | undefined {
    const refuse = (reason: string) => unsafe(this.tarball, entry.path, reason);
    if (++this.#entries > this.limits.maxEntries) return refuse(`the archive has more than ${this.limits.maxEntries} entries`);
    if (!ALLOWED_TYPES.has(entry.type)) return refuse(`${describeType(entry.type)}: a plugin may hold only regular files and folders`);
    const isDir = entry.type === 'Directory';
    // The path exactly as tar will use it (a PAX or GNU long name applied), before tar's own
    // sanitising: tar would rebase an absolute path or skip a ".." one, and both are refused instead.
    const problem = pathProblem(entry.path, isDir);
    if (problem) return refuse(problem);
    const segments = entry.path.replace(/\/$/, '').split('/');
    if (segments.length - 1 > this.limits.maxDepth) return refuse(`nested ${segments.length - 1} levels deep, more than ${this.limits.maxDepth}`);
    const mode = entry.mode ?? 0;
    if (mode & 0o7000) return refuse(`mode ${mode.toString(8).padStart(4, '0')} sets ${specialBits(mode)}`);
    const owner = this.#foreignOwner(entry);
    if (owner) return refuse(owner);
    if (!isDir) {
      if (entry.size > this.limits.maxFileBytes) return refuse(`${entry.size} bytes, more than the ${this.limits.maxFileBytes} allowed for one file`);
      this.#bytes += entry.size;
      if (this.#bytes > this.limits.maxTotalBytes) return refuse(`the files add up to more than ${this.limits.maxTotalBytes} bytes`);
    }
    return this.#placeProblem(segments, isDir, refuse);
  }

  /** uid and gid as `npm pack` writes them (none, or 0), or the current user's; anything else belongs to someone else. */
  #foreignOwner(entry: ReadEntry): string | undefined {
    const foreign = (id: number | undefined, own: number | undefined) => id !== undefined && id !== 0 && id !== own;
    if (foreign(entry.uid, this.#uid)) return `owned by uid ${entry.uid}: a plugin's files belong to whoever installs it`;
    if (foreign(entry.gid, this.#gid)) return `owned by gid ${entry.gid}: a plugin's files belong to whoever installs it`;
    return undefined;
  }

  /** Duplicates (without case or Unicode form, as some disks compare names) and a file standing where a folder must be. */
  #placeProblem(segments: string[], isDir: boolean, refuse: (reason: string) => PlinthError): PlinthError | undefined {
    const key = (parts: string[]) => parts.join('/').normalize('NFC').toLowerCase();
    for (let i = 1; i < segments.length; i++) {
      const parent = key(segments.slice(0, i));
      if (this.#files.has(parent)) return refuse(`lies under "${safeLine(segments.slice(0, i).join('/'))}", which the archive gives as a file`);
      this.#impliedDirs.add(parent);
    }
    const self = key(segments);
    if (this.#files.has(self) || this.#dirs.has(self)) return refuse('a second entry for a path already in the archive');
    if (isDir) this.#dirs.add(self);
    else if (this.#impliedDirs.has(self)) return refuse('a file where the archive already has a folder');
    else this.#files.add(self);
    return undefined;
  }
}

/** What is wrong with an entry's path, or undefined. */
function pathProblem(name: string, isDir: boolean): string | undefined {
  if (name === '') return 'an empty name';
  if (safeLine(name) !== name) return 'the name holds control or bidirectional-override characters';
  if (name.includes('\\')) return 'a backslash in the name (a Windows path separator)';
  if (name.startsWith('/')) return 'an absolute path';
  if (name.includes(':')) return /^[A-Za-z]:/.test(name) ? 'a Windows drive path' : 'a colon in the name (a Windows drive or stream)';
  const segments = (isDir ? name.replace(/\/$/, '') : name).split('/');
  if (segments.includes('..')) return 'a ".." segment (path traversal)';
  if (segments.includes('.')) return 'a "." segment';
  if (segments.includes('')) return 'an empty path segment';
  if (segments[0] !== ROOT || (segments.length === 1 && !isDir)) return `outside "${ROOT}/", the one folder a plugin tarball holds`;
  const long = segments.find((segment) => Buffer.byteLength(segment) > MAX_NAME_BYTES);
  if (long !== undefined) return `a name of ${Buffer.byteLength(long)} bytes, more than the ${MAX_NAME_BYTES} a file system allows`;
  if (Buffer.byteLength(name) > MAX_PATH_BYTES) return `a path of ${Buffer.byteLength(name)} bytes, more than the ${MAX_PATH_BYTES} a plugin may use`;
  return undefined;
}

function describeType(type: string): string {
  const names: Record<string, string> = {
    SymbolicLink: 'a symbolic link',
    Link: 'a hard link',
    CharacterDevice: 'a character device',
    BlockDevice: 'a block device',
    FIFO: 'a FIFO',
    ContiguousFile: 'a contiguous file',
    GNUDumpDir: 'a GNU dump folder',
  };
  return names[type] ?? (type === 'Unsupported' ? 'an entry of a type tar does not know' : `an entry of type ${safeLine(type)}`);
}

function specialBits(mode: number): string {
  return [mode & 0o4000 && 'setuid', mode & 0o2000 && 'setgid', mode & 0o1000 && 'sticky'].filter(Boolean).join(' and ');
}

/**
 * An entry's mode as it will be written: never writable by group or others
 * (another local user must not be able to edit a plugin's code), always
 * readable and writable by the owner (a mode of 0 would leave the installer
 * unable to read its own plugin). Special bits were refused already.
 */
function writeMode(entry: ReadEntry): number {
  const owner = entry.type === 'Directory' ? 0o700 : 0o600;
  return ((entry.mode ?? 0) & 0o755) | owner;
}

const COMPRESSED_MAGIC = [Buffer.from([0x1f, 0x8b]), Buffer.from([0x28, 0xb5, 0x2f, 0xfd])];

/**
 * Feeds `tarball` (read from `file`, from its start), gunzipped by us and
 * counted, into tar's parser; every header passes `guard` before its body is
 * read, and `writer` writes what passed. Returns once every file written is closed, so that nothing is
 * still being written when a failure removes the staging folder; throws the
 * first problem met.
 */
async function readArchive(tarball: string, file: FileHandle, guard: EntryGuard, limits: ExtractLimits, writer: TreeWriter): Promise<WrittenTree> {
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    writer.abort(failure);
  };
  // No compression sniffing: we gunzip, and count, ourselves. A refused entry is skipped, and reading stops.
  const parser = new Parser({
    zstd: false,
    brotli: false,
    filter: (_path, entry) => {
      if (failure) return false;
      const problem = guard.check(entry as ReadEntry);
      if (problem) fail(problem);
      return !problem;
    },
  });
  // Types tar does not know are skipped before the filter sees them, and so are oversized PAX headers.
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    fail(unsafe(tarball, entry.path, entry.meta ? `an extended header larger than tar reads` : `${describeType(entry.type)}: a plugin may hold only regular files and folders`));
  });
  parser.on('warn', (code: string, message: string | Error) => fail(tarProblem(tarball, code, message)));
  parser.on('error', (error: Error & { tarCode?: string }) => fail(tarProblem(tarball, error.tarCode ?? '', error)));
  // Entries come one at a time, in order; the writer takes the next once it has room (backpressure into the parser).
  let taken = Promise.resolve();
  parser.on('entry', (entry: ReadEntry) => {
    taken = taken.then(() => (failure ? entry.resume() : writer.accept(entry, writeMode(entry)))).then(() => undefined, fail);
  });
  const settled = new Promise<void>((done) => parser.on('close', done));

  let archiveBytes = 0;
  let head: Buffer | undefined = Buffer.alloc(0);
  try {
    // Large reads and gunzip chunks: fewer, larger writes into the parser (measured on a 5 MB plugin).
    await pipeline(file.createReadStream({ start: 0, autoClose: false, highWaterMark: 1 << 20 }), createGunzip({ chunkSize: 1 << 18 }), async (chunks: AsyncIterable<Buffer>) => {
      for await (let chunk of chunks) {
        // A write that failed (a full disk) stops the reading too; finish() below says why.
        if (failure || writer.failed) return;
        archiveBytes += chunk.length;
        if (archiveBytes > limits.maxArchiveBytes) {
          fail(unsafe(tarball, '(the archive)', `unpacks to more than ${limits.maxArchiveBytes} bytes (a gzip bomb?)`));
          return;
        }
        // tar would unpack a compressed stream inside ours on its own, past our counters: refuse one.
        if (head) {
          head = Buffer.concat([head, chunk]);
          if (head.length < 4) continue;
          if (COMPRESSED_MAGIC.some((magic) => head!.subarray(0, magic.length).equals(magic))) {
            fail(unsafe(tarball, '(the archive)', 'compressed twice'));
            return;
          }
          [chunk, head] = [head, undefined];
        }
        if (!parser.write(chunk)) await Promise.race([new Promise((drained) => parser.once('drain', drained)), settled]);
      }
      if (head?.length) parser.write(head);
    });
  } catch (error) {
    fail(invalid(tarball, `it could not be read and gunzipped: ${(error as Error).message}`, error));
  }
  parser.end();
  await settled;
  await taken;
  const written = await writer.finish().catch((error: unknown) => {
    fail(error instanceof ForeignWrite ? unsafe(tarball, error.entry, error.message) : (error as Error));
    return undefined;
  });
  if (failure || !written) throw failure;
  return written;
}

/** A warning or error of tar's: a damaged archive is invalid; anything else (tar refusing a path, a write failing) is a refusal. */
function tarProblem(tarball: string, code: string, message: string | Error): PlinthError {
  const text = typeof message === 'string' ? message : message.message;
  const entry = typeof message === 'object' ? (message as { entry?: { path?: string } }).entry?.path : undefined;
  if (code === 'TAR_BAD_ARCHIVE' || code === 'TAR_ENTRY_INVALID') return invalid(tarball, `${code}: ${safeLine(text)}`);
  return unsafe(tarball, entry ?? '(the archive)', `tar refused it: ${code}: ${safeLine(text)}`);
}

/** `package/manifest.json`, valid, naming nothing to run outside the plugin. */
async function readPluginManifest(tarball: string, dir: string): Promise<Manifest> {
  const file = join(dir, 'manifest.json');
  const info = await lstat(file).catch(() => undefined);
  if (!info) {
    // A Claude Code plugin or Gemini CLI extension packed as it is: its manifest is made from the peer's.
    const peer = await readPeerFolder(dir).catch((error: unknown) => {
      throw invalid(tarball, `its peer manifest cannot be read: ${(error as Error).message}`, error);
    });
    if (peer !== undefined) {
      // Checked as discovery will read it (its paths expanded, none may lead out); shown for approval as written, not with this staging folder's paths.
      const shown = `${ROOT}/${relative(dir, peer.file).split(sep).join('/')}`;
      checkedManifest(tarball, dir, peer.data, shown);
      return checkedManifest(tarball, dir, (await readPeerFolder(dir, { asWritten: true }))!.data, shown);
    }
  }
  if (!info) {
    const npm = await npmPackage(dir);
    if (npm) throw notAPlugin(tarball, npm);
  }
  if (!info?.isFile()) throw invalid(tarball, `it has no ${ROOT}/manifest.json (nor a Claude Code plugin's or Gemini CLI extension's manifest)`);
  if (info.size > MAX_MANIFEST_BYTES) throw invalid(tarball, `${ROOT}/manifest.json is ${info.size} bytes, more than a manifest needs (${MAX_MANIFEST_BYTES})`);
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw invalid(tarball, `${ROOT}/manifest.json is not valid JSON: ${(error as Error).message}`, error);
  }
  return checkedManifest(tarball, dir, data, `${ROOT}/manifest.json`);
}

/** `package/package.json`'s name and version when it is a readable npm package manifest, else undefined. */
async function npmPackage(dir: string): Promise<{ name: string; version: string } | undefined> {
  const file = join(dir, 'package.json');
  const info = await lstat(file).catch(() => undefined);
  if (!info?.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
  try {
    const data = JSON.parse(await readFile(file, 'utf8')) as { name?: unknown; version?: unknown };
    return typeof data.name === 'string' && typeof data.version === 'string' ? { name: safeLine(data.name.slice(0, 214)), version: safeLine(data.version.slice(0, 64)) } : undefined;
  } catch {
    return undefined;
  }
}

/** A well-formed npm package that is not a plugin: no manifest of plinth's or of a peer's. Not damaged, so no retry is suggested. */
function notAPlugin(tarball: string, npm: { name: string; version: string }): PlinthError {
  return new PlinthError('PLN_E_TARBALL_NOT_PLUGIN', `${STEP}: ${tarball} is the npm package ${npm.name}@${npm.version}, not a plinth plugin: it has no ${ROOT}/manifest.json, nor a Claude Code plugin's (.claude-plugin/plugin.json), Codex plugin's (.codex-plugin/plugin.json) or Gemini CLI extension's (gemini-extension.json) manifest`, {
    hint: 'nothing was installed; a plinth plugin ships manifest.json beside package.json (`plinth registry pack <folder>` packs one, `plinth plugin new <name>` makes one); an npm library is not installed with plinth ext install',
    details: { step: STEP, package: `${npm.name}@${npm.version}` },
  });
}

/** `data` validated as a manifest that names nothing to run outside the plugin; `shown` names its file in errors. */
function checkedManifest(tarball: string, dir: string, data: unknown, shown: string): Manifest {
  const parsed = parseManifest(data);
  if (!parsed.ok) {
    const issues = parsed.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
    throw new PlinthError('PLN_E_MANIFEST_INVALID', `${STEP}: ${tarball}: ${shown}:\n${issues.join('\n')}`, {
      hint: 'nothing was installed; ask the publisher to fix the manifest (the schema is in plinth/sdk)',
      details: { step: STEP, issues: parsed.issues },
    });
  }
  const escape = manifestEscapes(parsed.manifest, dir)[0];
  if (escape) throw unsafe(tarball, shown, `${escape.field} is "${safeLine(escape.value)}", outside the plugin folder`);
  return parsed.manifest;
}

/** A path a manifest names that leads outside the plugin. */
export interface ManifestEscape {
  /** Where in the manifest: `main`, `hooks.before_tool[0].args[1]`, `mcpServers.files.cwd`. */
  readonly field: string;
  readonly value: string;
}

/**
 * The paths in `manifest` that lead outside `dir`: `main`; and for each hook
 * and MCP server, its `cwd`, its `command` when it is a relative path
 * (`./bin/x`; a bare program such as `node` is found on PATH, an absolute one
 * is the user's own program), and each argument that is a path (absolute,
 * or relative with a `/` or starting with `.`; flags and URLs are not paths).
 */
export function manifestEscapes(manifest: Manifest, dir: string): ManifestEscape[] {
  const root = resolve(dir);
  const outside = (path: string, base = root) => {
    const rel = relative(root, resolve(base, path));
    return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
  };
  const found: ManifestEscape[] = [];
  if (manifest.main !== undefined && outside(manifest.main)) found.push({ field: 'main', value: manifest.main });
  const runners: Array<[string, unknown]> = [];
  for (const [event, list] of Object.entries(manifest.hooks)) {
    if (Array.isArray(list)) list.forEach((entry, i) => runners.push([`hooks.${event}[${i}]`, entry]));
  }
  for (const [name, entry] of Object.entries(manifest.mcpServers)) runners.push([`mcpServers.${name}`, entry]);
  for (const [field, entry] of runners) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { cwd, command, args } = entry as { cwd?: unknown; command?: unknown; args?: unknown };
    let base = root;
    if (typeof cwd === 'string') {
      if (outside(cwd)) found.push({ field: `${field}.cwd`, value: cwd });
      base = resolve(root, cwd);
    }
    if (typeof command === 'string' && !isAbsolute(command) && /[/\\]/.test(command) && outside(command, base)) {
      found.push({ field: `${field}.command`, value: command });
    }
    if (Array.isArray(args)) {
      args.forEach((arg, i) => {
        if (typeof arg === 'string' && isPathArgument(arg) && outside(arg, base)) found.push({ field: `${field}.args[${i}]`, value: arg });
      });
    }
  }
  return found;
}

function isPathArgument(arg: string): boolean {
  if (arg.startsWith('-') || /^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) return false;
  return isAbsolute(arg) || arg.startsWith('.') || /[/\\]/.test(arg);
}
