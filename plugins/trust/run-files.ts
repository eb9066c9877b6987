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
import { open, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, relative, resolve } from 'node:path';
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
  | { readonly word: string; readonly state: 'working-folder' };

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
    for (const token of text.split(/[\s;&|()<>`]+/)) {
      const word = token.replace(/^['"]+|['"]+$/g, '');
      if (word === '') continue;
      words.push(word);
      afterEquals(word);
    }
  }
  return words.filter((word) => word !== '' && word.length <= MAX_WORD && !word.includes('\0'));
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
 * nothing contribute nothing, so creating one later changes the fingerprint.
 * `recorded`: hashes known without reading (see fingerprint.ts `fileState`).
 */
export async function namedStates(run: TrustRun, cwd: string | undefined, codeOnly: boolean, limits: FileLimits = RUN_FOLDER_LIMITS, recorded?: KnownHashes): Promise<NamedState[]> {
  const states: NamedState[] = [];
  const budget = { files: limits.files, bytes: limits.bytes };
  for (const word of runWords(run, cwd)) {
    // `${env:…}` is resolved when the server starts, not here: what such a word names cannot be
    // fingerprinted, so it is flagged for the person approving instead of silently left out.
    if (/\$\{[^}]*\}/.test(word) && /[/\\]/.test(word) && !/\s/.test(word)) {
      states.push({ word, state: 'reference' });
      continue;
    }
    if (!isAbsolute(word) && cwd === undefined) continue;
    const path = isAbsolute(word) ? word : resolve(cwd!, word);
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG' || code === 'ELOOP') continue;
      states.push({ word, state: 'unreadable', code: code ?? 'EUNKNOWN' });
      continue;
    }
    if (info.isDirectory()) {
      // The working folder itself (`eslint .`) or one above it is what the program works on, and walking it
      // would need approval after every edit anywhere in it: flagged instead, for the person approving.
      if (cwd !== undefined && isWithin(resolve(cwd), path)) states.push({ word, state: 'working-folder' });
      else states.push(await folderState(word, path, budget, codeOnly, recorded));
      continue;
    }
    if (codeOnly && info.isFile() && !(await isCodeFile(path, info.mode))) {
      states.push({ word, state: 'data' });
      continue;
    }
    const file = await fileState(path, recorded);
    if (file.state === 'file') states.push({ word, state: 'file', sha256: file.sha256 });
    else if (file.state === 'unreadable') states.push({ word, state: 'unreadable', code: file.code });
    else if (file.state === 'special') states.push({ word, state: 'special' });
  }
  return states;
}

/** Whether `inner` is `outer` or inside it. */
function isWithin(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

class TooLarge extends Error {}

/** A folder's content as one digest over its files' relative paths and contents; `too-large` past what is left of the budget. */
async function folderState(word: string, dir: string, budget: { files: number; bytes: number }, codeOnly: boolean, recorded: KnownHashes | undefined): Promise<NamedState> {
  const limit = `more than ${RUN_FOLDER_LIMITS.files.toLocaleString('en-US')} files or ${Math.round(RUN_FOLDER_LIMITS.bytes / 1024 / 1024)} MB in the folders it names`;
  let files: string[];
  try {
    files = await folderFiles(
      dir,
      budget,
      (what) => new TooLarge(what),
      (_folder, error) => Object.assign(new Error('unlisted'), { code: (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN' }),
    );
  } catch (error) {
    if (error instanceof TooLarge) return { word, state: 'too-large', limit };
    return { word, state: 'unreadable', code: (error as { code?: string }).code ?? 'EUNKNOWN' };
  }
  const entries = [];
  let bytes = 0;
  for (const file of files) {
    const info = await stat(file).catch(() => undefined);
    bytes += info?.size ?? 0;
    if (codeOnly && info !== undefined && !(await isCodeFile(file, info.mode))) continue;
    const { path: _path, ...state } = await fileState(file, recorded);
    entries.push({ path: relative(dir, file), ...state });
  }
  budget.files -= files.length;
  budget.bytes -= bytes;
  if (budget.files < 0 || budget.bytes < 0) return { word, state: 'too-large', limit };
  return { word, state: 'folder', files: entries.length, sha256: createHash('sha256').update(canonicalJson(entries), 'utf8').digest('hex') };
}
