/**
 * The one rule for what a hook or a server runs (`subject.runs`): every word
 * of `command`, of each argument and of each env value that names an
 * existing file or folder contributes that file's content, or the folder's
 * (recursively, bounded). No guessing which argument is "the script": `node
 * -r ./benign.js a.js` covers both files, `python3.11 s3.py` and `bin/srv`
 * are covered like any other, and a folder (`node lib`) by its content.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isSecretValue } from './secrets.js';
import type { TrustRun } from 'plinth/sdk';
import { type KnownHashes, canonicalJson, fileState } from './fingerprint.js';
import { type FileLimits, PLUGIN_FILE_LIMITS, folderFiles } from './plugin-files.js';

/**
 * At most this many files (and bytes), over all the folders one subject
 * names. Past it a folder is not half-read: it is marked `too-large`, which
 * the approval text says, and its content is not covered.
 */
export const RUN_FOLDER_LIMITS: FileLimits = PLUGIN_FILE_LIMITS;

/** What one word that names something contributes; `word` is as written (relative words stay relative). */
export type NamedState =
  | { readonly word: string; readonly state: 'file'; readonly sha256: string }
  | { readonly word: string; readonly state: 'folder'; readonly files: number; readonly sha256: string }
  | { readonly word: string; readonly state: 'too-large'; readonly limit: string }
  | { readonly word: string; readonly state: 'special' }
  | { readonly word: string; readonly state: 'unreadable'; readonly code: string }
  /** Shown, not fingerprinted: a data file of a subject trusted on first use (see {@link isCodeFile}). */
  | { readonly word: string; readonly state: 'data' }
  /** A path with a `${…}` reference in it: resolved only at start, so flagged rather than fingerprinted. */
  | { readonly word: string; readonly state: 'reference' }
  /** The working folder or a folder above it (`.`, `..`): flagged, not walked. */
  | { readonly word: string; readonly state: 'working-folder' }
  /** A shell command that reaches files through eval, `$(…)`, variables, globs, quotes inside words or `source`: flagged, not fingerprinted (the text itself is). */
  | { readonly word: string; readonly state: 'indirect'; readonly constructs: readonly string[] }
  /** What a workspace subject's named files may load that is not fingerprinted (node_modules, dot-folders, outside their folders): flagged. */
  | { readonly word: string; readonly state: 'not-covered'; readonly text: string };

/** States that are shown but not part of the fingerprint: they say what is NOT covered, or what the words already hold. */
export const SHOWN_ONLY: ReadonlySet<NamedState['state']> = new Set(['data', 'reference', 'working-folder', 'indirect', 'not-covered']);

/** Options of {@link namedStates} beyond the rule every subject shares. */
export interface NamedOptions {
  /**
   * A workspace subject's workspace: the folder of each file its words name
   * inside it (the entry script's folder: `require('./util.js')`) is walked
   * too, by the rule for named folders (node_modules and dot-folders skipped,
   * bounded, the working folder not walked), and what is not is said.
   */
  readonly entryFoldersWithin?: string;
  /** Filled with the absolute path and SHA-256 of every file read (named, or in a walked folder): what was approved, for running exactly that. */
  readonly pins?: Map<string, string>;
  /**
   * Filled with every path looked at: each word's path (named something or not), each file
   * read, each folder listed, each folder a glob searched. While none of them changed, the
   * states are the same (snapshot-memo.ts).
   */
  readonly touched?: Set<string>;
}

/** Globs are expanded to at most this many matches each. */
const MAX_GLOB_MATCHES = 64;

/** Longer words are not paths worth a system call. */
const MAX_WORD = 4096;

/** Names of files that are code whatever their mode: scripts, modules, binaries, and what tells Node what to run. */
const CODE_FILE = /(?:\.(?:[cm]?[jt]sx?|py[cwz]?|sh|bash|zsh|fish|ksh|rb|pl|pm|php|lua|r|jl|tcl|jar|class|wasm|so|dylib|dll|node|exe|ps1|psm1|bat|cmd|go|rs|java|kts?|swift|cs|exs?|erl|clj|groovy|scala|dart)|(?:^|\/)package\.json)$/i;

/**
 * Whether a file is code: a code name (see {@link CODE_FILE}), an execute
 * bit, or a `#!` first line. For subjects trusted on first use (the user's
 * own), only code counts: the data files their arguments name (a log, a
 * state file) change at every run, and a workspace cannot choose their names.
 */
export async function isCodeFile(path: string, mode: number): Promise<boolean> {
  if (CODE_FILE.test(path) || (mode & 0o111) !== 0) return true;
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer.toString('latin1') === '#!';
  } catch {
    return true; // unreadable: let the fingerprint say so
  } finally {
    await handle?.close();
  }
}

/**
 * The words of one argument or env value that may name a path: the whole
 * text, what follows its first `=` (`--require=./x.js`), and, when it has
 * spaces (`bash -c "node ./x.js"`, `NODE_OPTIONS=--require ./p.js`), each
 * shell word of it, unquoted, with its own `=` part.
 */
export function candidateWords(text: string): string[] {
  const words = [text];
  const afterEquals = (word: string) => {
    const at = word.indexOf('=');
    if (at > 0 && at < word.length - 1) words.push(word.slice(at + 1));
  };
  afterEquals(text);
  if (/\s/.test(text)) {
    // What a shell finds through `c=cfg; … $c.txt` and `c""fg.txt`: the word after quote removal, and with
    // the variables this very text assigns substituted. What cannot be known (`$HOME`, `$(…)`'s output) is flagged (shellIndirection).
    const assigned = new Map<string, string>();
    for (const match of text.matchAll(/(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=((?:[^\s;&|()<>`'"]|'[^']*'|"[^"$`]*")*)/g)) assigned.set(match[1]!, unquote(match[2]!));
    for (const token of text.split(/[\s;&|()<>`]+/)) {
      const word = token.replace(/^['"]+|['"]+$/g, '');
      if (word === '') continue;
      words.push(word);
      afterEquals(word);
      const plain = unquote(word);
      if (plain !== word && plain !== '') words.push(plain);
      if (assigned.size > 0 && word.includes('$')) {
        const substituted = unquote(word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (all, braced: string | undefined, bare: string | undefined) => assigned.get((braced ?? bare)!) ?? all));
        if (substituted !== word && substituted !== '' && !substituted.includes('$')) words.push(substituted);
      }
    }
  }
  return words.filter((word) => word !== '' && word.length <= MAX_WORD && !word.includes('\0'));
}

/** A shell word after quote removal: `c""fg.txt` and `c\fg.txt` are `cfg.txt`. */
function unquote(word: string): string {
  return word.replace(/'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)/g, (_all, single: string | undefined, double: string | undefined, escaped: string | undefined) => single ?? double?.replace(/\\(.)/g, '$1') ?? escaped ?? '');
}

/** Shell programs whose `-c` argument is a command line. */
const SHELLS = /^(?:sh|bash|dash|zsh|ksh|mksh|ash|busybox)$/;

/**
 * The constructs of a shell command line by which it may reach a file that
 * no word names as written: `eval`, `source` and `.`, `$(…)` and backticks,
 * variables, quotes inside a word, globs. Empty when there are none. What
 * such a command reads is not fingerprinted beyond what can be found
 * (globs expanded here, quotes removed, variables the line itself assigns).
 */
export function shellIndirection(text: string): string[] {
  const found: string[] = [];
  const add = (what: string, when: boolean) => when && found.push(what);
  add('eval', /(?:^|[\s;&|(`])eval(?:\s|$)/.test(text));
  add('source or .', /(?:^|[\s;&|(`])(?:source|\.)\s+\S/.test(text));
  add('$(…)', /\$\(/.test(text));
  add('backticks', /`/.test(text));
  // ${workspace}-style placeholders and ${env:…} references are plinth's, resolved before the shell runs.
  add('variables', /\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?!$-]|\{(?![A-Za-z]+:)[^}]*\})/.test(text));
  add('quotes inside a word', text.split(/[\s;&|()<>`]+/).some((token) => /['"\\]/.test(token.replace(/^['"]+|['"]+$/g, ''))));
  add('globs', /(?:^|[^\\])[*?]|\[[^\]\s]*\]/.test(text.replace(/'[^']*'/g, '')));
  add('a program that reads its input as code (xargs, sh -s, … < file)', /(?:^|[\s;&|(])(?:xargs|env\s+-S)\s|<\s*\S/.test(text));
  return found;
}

/** The command lines among `run`'s arguments: the one after a shell's `-c`, and any argument with spaces (read as shell words). */
function shellTexts(run: TrustRun): string[] {
  const args = run.args ?? [];
  const shell = run.command !== undefined && SHELLS.test(basename(run.command));
  return args.filter((arg, i) => /\s/.test(arg) || (shell && i > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(args[i - 1]!)));
}

/**
 * Where relative words are looked up, or undefined when they are not: a
 * defaulted cwd (the folder plinth runs in) of a subject approved once for
 * every folder must not make its identity depend on that folder.
 */
export function lookupFolder(run: TrustRun, approvedPerWorkspace: boolean): string | undefined {
  if (run.cwd === undefined) return undefined;
  if (run.cwdIsDefault === true && !approvedPerWorkspace) return undefined;
  return run.cwd;
}

/** Every word of `run` that may name a path, in order, once each. `PATH` is read as a search path, not as words. */
export function runWords(run: TrustRun, cwd: string | undefined): string[] {
  const words: string[] = [];
  if (run.command !== undefined) words.push(run.command);
  for (const arg of run.args ?? []) words.push(...candidateWords(arg));
  for (const [name, value] of Object.entries(run.env ?? {})) {
    // A secret's value is never shown, so neither is a path it holds (a key file): it counts as written.
    if (name !== 'PATH' && !isSecretValue(name, value)) words.push(...candidateWords(value));
  }
  // A PATH the definition sets can point a bare command at its own folder (`PATH: "bin"`): what it finds
  // there counts. Entries that plinth's own PATH has too are the system's, as without that PATH.
  const path = run.env?.PATH;
  if (path !== undefined && run.command !== undefined && !run.command.includes('/')) {
    const host = new Set((process.env.PATH ?? '').split(delimiter));
    for (const dir of path.split(delimiter)) {
      if (dir !== '' && !host.has(dir) && (isAbsolute(dir) || cwd !== undefined)) words.push(join(dir, run.command));
    }
  }
  return [...new Set(words)];
}

/**
 * The state of every word of `run` that names an existing file or folder,
 * looked up relative to `cwd` (absolute words always). Words that name
 * nothing contribute nothing, so creating one later changes the fingerprint;
 * a word with a glob that names nothing contributes what it matches.
 * `recorded`: hashes known without reading (see fingerprint.ts `fileState`).
 * `options`: see {@link NamedOptions}.
 */
export async function namedStates(run: TrustRun, cwd: string | undefined, codeOnly: boolean, limits: FileLimits = RUN_FOLDER_LIMITS, recorded?: KnownHashes, options: NamedOptions = {}): Promise<NamedState[]> {
  const states: NamedState[] = [];
  const budget = { files: limits.files, bytes: limits.bytes };
  const pins = options.pins;
  const touched = options.touched;
  /** Absolute paths of the files named, and of the folders walked, for the entry folders below. */
  const namedFiles: Array<{ word: string; path: string }> = [];
  const walked: string[] = [];
  const queue = runWords(run, cwd).map((word) => ({ word, glob: true }));
  const queued = new Set(queue.map((item) => item.word));
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    const { word } = item;
    // `${env:…}` is resolved when the server starts, not here: what such a word names cannot be
    // fingerprinted, so it is flagged for the person approving instead of silently left out.
    if (/\$\{[^}]*\}/.test(word) && /[/\\]/.test(word) && !/\s/.test(word)) {
      states.push({ word, state: 'reference' });
      continue;
    }
    if (!isAbsolute(word) && cwd === undefined) continue;
    const path = isAbsolute(word) ? word : resolve(cwd!, word);
    touched?.add(path);
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG' || code === 'ELOOP') {
        // `cfg.tx?`: what the shell would find counts (each match as if named), so an edited match needs approval again.
        if (item.glob && /[*?[]/.test(word)) {
          for (const match of await globMatches(path, touched)) {
            const named = isAbsolute(word) ? match : relative(cwd!, match);
            if (!queued.has(named)) {
              queued.add(named);
              queue.push({ word: named, glob: false });
            }
          }
        }
        continue;
      }
      states.push({ word, state: 'unreadable', code: code ?? 'EUNKNOWN' });
      continue;
    }
    if (info.isDirectory()) {
      // The working folder itself (`eslint .`) or one above it is what the program works on, and walking it
      // would need approval after every edit anywhere in it: flagged instead, for the person approving.
      if (cwd !== undefined && isWithin(resolve(cwd), path)) states.push({ word, state: 'working-folder' });
      else {
        states.push(await folderState(word, path, budget, codeOnly, recorded, pins, touched));
        walked.push(path);
      }
      continue;
    }
    if (codeOnly && info.isFile() && !(await isCodeFile(path, info.mode))) {
      states.push({ word, state: 'data' });
      continue;
    }
    const file = await fileState(path, recorded);
    if (file.state === 'file') {
      states.push({ word, state: 'file', sha256: file.sha256 });
      pins?.set(path, file.sha256);
      namedFiles.push({ word, path });
    } else if (file.state === 'unreadable') states.push({ word, state: 'unreadable', code: file.code });
    else if (file.state === 'special') states.push({ word, state: 'special' });
  }
  for (const text of shellTexts(run)) {
    const constructs = shellIndirection(text);
    if (constructs.length > 0) states.push({ word: text, state: 'indirect', constructs });
  }
  if (options.entryFoldersWithin !== undefined) states.push(...(await entryFolders(namedFiles, walked, options.entryFoldersWithin, cwd, budget, codeOnly, recorded, pins, touched)));
  return states;
}

/**
 * A workspace subject's entry folders: the folder of each file its words name
 * inside the workspace, walked by the rule for named folders (so that
 * `require('./util.js')` beside the script is covered), unless a named
 * folder already holds it, or it is the working folder or above (not walked,
 * as for `node .`). Then one line saying what stays NOT fingerprinted.
 */
async function entryFolders(
  named: ReadonlyArray<{ word: string; path: string }>,
  walked: string[],
  workspace: string,
  cwd: string | undefined,
  budget: { files: number; bytes: number },
  codeOnly: boolean,
  recorded: KnownHashes | undefined,
  pins: Map<string, string> | undefined,
  touched: Set<string> | undefined,
): Promise<NamedState[]> {
  const states: NamedState[] = [];
  const root = resolve(workspace);
  const inside = named.filter((file) => isWithin(file.path, root));
  if (inside.length === 0) return states;
  const notWalked: string[] = [];
  for (const file of inside) {
    const dir = dirname(file.path);
    if (walked.some((folder) => isWithin(dir, folder))) continue;
    const word = cwd !== undefined ? relative(cwd, dir) || '.' : dir;
    if ((cwd !== undefined && isWithin(resolve(cwd), dir)) || dir === root) {
      if (!notWalked.includes(word)) notWalked.push(word);
      continue;
    }
    walked.push(dir);
    const state = await folderState(word, dir, budget, codeOnly, recorded, pins, touched);
    states.push(state);
  }
  const words = inside.map((file) => file.word).join(', ');
  const outside = notWalked.length > 0 ? `; ${notWalked.join(', ')} (the working folder or the workspace's root) is not walked: code loaded from there is NOT fingerprinted either` : '';
  states.push({ word: '', state: 'not-covered', text: `what ${words} load${inside.length === 1 ? 's' : ''} from node_modules, dot-folders or outside the folders listed here${outside}` });
  return states;
}

/** The existing paths a glob names (`*`, `?`, `[…]` in any segment), sorted, at most {@link MAX_GLOB_MATCHES}. */
async function globMatches(pattern: string, touched: Set<string> | undefined): Promise<string[]> {
  const segments = pattern.split(sep).filter((segment, i) => segment !== '' || i === 0);
  let bases = [segments[0] === '' ? sep : segments[0]!];
  for (const segment of segments.slice(1)) {
    const next: string[] = [];
    for (const base of bases) {
      if (!/[*?[]/.test(segment)) {
        next.push(join(base, segment));
        continue;
      }
      const matcher = globRegExp(segment);
      touched?.add(base);
      const names = await readdir(base).catch(() => [] as string[]);
      for (const name of names.sort()) if (matcher.test(name) && (name[0] !== '.' || segment[0] === '.')) next.push(join(base, name));
    }
    bases = next.slice(0, MAX_GLOB_MATCHES);
  }
  const found: string[] = [];
  for (const path of bases) {
    touched?.add(path);
    if (await stat(path).then(() => true, () => false)) found.push(path);
  }
  return found;
}

/** One glob segment as a regular expression (`*`, `?`, `[…]`, `[!…]`). */
function globRegExp(segment: string): RegExp {
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '[') {
      const end = segment.indexOf(']', i + 2);
      if (end < 0) source += '\\[';
      else {
        const body = segment.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
        source += `[${body}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** Whether `inner` is `outer` or inside it. */
function isWithin(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

class TooLarge extends Error {}

/** A folder's content as one digest over its files' relative paths and contents; `too-large` past what is left of the budget. */
async function folderState(word: string, dir: string, budget: { files: number; bytes: number }, codeOnly: boolean, recorded: KnownHashes | undefined, pins?: Map<string, string>, touched?: Set<string>): Promise<NamedState> {
  const limit = `more than ${RUN_FOLDER_LIMITS.files.toLocaleString('en-US')} files or ${Math.round(RUN_FOLDER_LIMITS.bytes / 1024 / 1024)} MB in the folders it names`;
  let files: string[];
  try {
    files = await folderFiles(
      dir,
      budget,
      (what) => new TooLarge(what),
      (_folder, error) => Object.assign(new Error('unlisted'), { code: (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN' }),
      touched && ((folder) => touched.add(folder)),
    );
  } catch (error) {
    if (error instanceof TooLarge) return { word, state: 'too-large', limit };
    return { word, state: 'unreadable', code: (error as { code?: string }).code ?? 'EUNKNOWN' };
  }
  const entries = [];
  const read = new Map<string, string>();
  let bytes = 0;
  for (const file of files) {
    touched?.add(file);
    const info = await stat(file).catch(() => undefined);
    bytes += info?.size ?? 0;
    if (codeOnly && info !== undefined && !(await isCodeFile(file, info.mode))) continue;
    const { path: _path, ...state } = await fileState(file, recorded);
    entries.push({ path: relative(dir, file), ...state });
    if (state.state === 'file') read.set(file, state.sha256);
  }
  budget.files -= files.length;
  budget.bytes -= bytes;
  if (budget.files < 0 || budget.bytes < 0) return { word, state: 'too-large', limit };
  for (const [file, sha256] of read) pins?.set(file, sha256);
  return { word, state: 'folder', files: entries.length, sha256: createHash('sha256').update(canonicalJson(entries), 'utf8').digest('hex') };
}
