/**
 * A subject as it is now: its fingerprint, and what a person is shown of it
 * (`shown`: one line per field that affects what runs or where data goes,
 * secrets masked), which is also kept with an approval so that the next
 * question can say what changed without the store holding a secret.
 */
import { createHash } from 'node:crypto';
import { isAbsolute, relative, resolve } from 'node:path';
import { type KnownHashes, canonicalJson, fileState } from './fingerprint.js';
import { type NamedState, SHOWN_ONLY, lookupFolder, namedStates } from './run-files.js';
import { HIDDEN, isSecretValue, shownValue } from './secrets.js';
import { type TrustRun, type TrustSubject } from 'plinth/sdk';
import { SECRET_NAME } from 'plinth/internal';
import { printable, shellQuote, shortFingerprint } from './verdict.js';

/** Bumped if the hashed document ever changes shape: every approval is then asked for again. 2: `runs` and the files its words name. */
const FORMAT = 'plinth-trust/2';

/** Field label → what is shown for it, in the order shown. Never holds a secret. */
export type Shown = Readonly<Record<string, string>>;

export interface Snapshot {
  readonly fingerprint: string;
  readonly shown: Shown;
  /**
   * For a workspace subject (with `workspace` given): the files inside the
   * workspace whose content the fingerprint holds (named, or in a walked
   * folder), by absolute path, with that content's SHA-256: what the launcher
   * runs exactly (see TrustVerdict.pinned).
   */
  readonly pinned?: ReadonlyArray<{ readonly path: string; readonly sha256: string }>;
}

/** More files than this in `subject.files` are shown as one line (a plugin's folder). */
const LISTED_FILES = 20;

/**
 * SHA-256 (hex) of the canonical JSON of `{ format, definition, files, runs }`,
 * and what is shown. `approvedPerWorkspace`: whether the subject's approval is
 * kept per workspace (then a defaulted cwd's relative words count). For a
 * `user` subject only named files that are code count (see `isCodeFile`).
 * `recorded`: hashes known without reading (an installed plugin's files, see
 * recorded-hashes.ts; large files kept by hash-cache.ts); the fingerprint is
 * the same without them. `touched`: filled with every path looked at (see
 * snapshot-memo.ts).
 */
export async function snapshot(
  subject: Pick<TrustSubject, 'definition' | 'files' | 'runs' | 'source'>,
  approvedPerWorkspace: boolean,
  redact: (text: string) => string = (t) => t,
  recorded?: KnownHashes,
  workspace?: string,
  touched?: Set<string>,
): Promise<Snapshot> {
  const trustedOnFirstUse = subject.source === 'user';
  // A workspace subject's script folders count too (item: `require('./util.js')`), and what it was approved as is pinned for the run.
  const perWorkspace = subject.source === 'workspace' && workspace !== undefined;
  const pins = perWorkspace ? new Map<string, string>() : undefined;
  const paths = [...new Set(subject.files)].sort();
  for (const path of paths) touched?.add(path);
  const files = await Promise.all(paths.map((path) => fileState(path, recorded)));
  const run = subject.runs;
  const cwd = run ? lookupFolder(run, approvedPerWorkspace) : undefined;
  // Subjects trusted on first use (`user`) are the user's own: only code they name counts, not the data it writes.
  const named = run ? await namedStates(run, cwd, trustedOnFirstUse, undefined, recorded, { ...(perWorkspace && { entryFoldersWithin: workspace }), ...(pins && { pins }), ...(touched && { touched }) }) : [];
  const runs = run === undefined ? null : runDocument(run, named.filter((state) => !SHOWN_ONLY.has(state.state)));
  const document = canonicalJson({ format: FORMAT, definition: subject.definition ?? null, files, runs });
  const fingerprint = createHash('sha256').update(document, 'utf8').digest('hex');

  const shown: Record<string, string> = {};
  const put = (label: string, value: string) => Object.defineProperty(shown, label, { value: printable(redact(value)), enumerable: true, writable: true, configurable: true });
  if (run) showRun(run, named, approvedPerWorkspace, put);
  put('other settings', `sha256 ${shortFingerprint(createHash('sha256').update(canonicalJson(subject.definition ?? null), 'utf8').digest('hex'))}`);
  if (files.length > LISTED_FILES) {
    const digest = createHash('sha256').update(canonicalJson(files), 'utf8').digest('hex');
    put('files', `${files.length} files, sha256 ${shortFingerprint(digest)}`);
  } else {
    for (const file of files) put(`file ${file.path}`, file.state === 'file' ? `sha256 ${shortFingerprint(file.sha256)}` : file.state);
  }
  const pinned = pins && [...pins].filter(([path]) => isWithin(path, resolve(workspace!))).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([path, sha256]) => ({ path, sha256 }));
  return { fingerprint, shown, ...(pinned !== undefined && pinned.length > 0 && { pinned }) };
}

function isWithin(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

/** What `runs` adds to the hashed document: its fields (a defaulted cwd left out) and the states of what its words name. */
function runDocument(run: TrustRun, named: readonly NamedState[]): unknown {
  return {
    command: run.command ?? null,
    args: run.args ?? [],
    env: run.env ?? {},
    cwd: run.cwd !== undefined && run.cwdIsDefault !== true ? run.cwd : null,
    url: run.url ?? null,
    headers: run.headers ?? {},
    named,
  };
}

function showRun(run: TrustRun, named: readonly NamedState[], approvedPerWorkspace: boolean, put: (label: string, value: string) => void): void {
  if (run.command !== undefined) put('command', shellQuote(run.command));
  if ((run.args ?? []).length > 0) put('args', maskArgs(run.args ?? []).map(shellQuote).join(' '));
  if (run.cwd !== undefined) {
    // A defaulted cwd of a subject approved for every folder is not shown by path: what is kept must not depend on the folder.
    if (run.cwdIsDefault !== true) put('cwd', run.cwd);
    else if (approvedPerWorkspace) put('cwd', `${run.cwd} (not set: the folder plinth runs in)`);
    else put('cwd', 'not set: the folder plinth runs in (relative paths are not looked up there)');
  }
  if (run.url !== undefined) put('url', run.url);
  // A reference (`${env:AWS_SECRET_ACCESS_KEY}`) is shown as written, whatever the name: where a value comes from is no secret.
  for (const [name, value] of Object.entries(run.env ?? {})) put(`env ${name}`, shownValue(name, value) ?? HIDDEN);
  for (const [name, value] of Object.entries(run.headers ?? {})) put(`header ${name}`, shownValue(name, value, true) ?? `${HIDDEN} value`);
  for (const state of named) put(state.state === 'not-covered' ? 'NOT fingerprinted' : state.state === 'indirect' ? `shell ${abridged(state.word)}` : `${namedLabel(state)} ${state.word}`, namedText(state));
}

/** Arguments with credentials masked: one that looks like a credential, the value after a flag that names a secret (`--token x`, `--api-key=x`). */
function maskArgs(args: readonly string[]): string[] {
  return args.map((arg, i) => {
    const flag = /^(--?[^=]+)=(.*)$/s.exec(arg);
    if (flag && (SECRET_NAME.test(flag[1]!) || isSecretValue('', flag[2]!))) return `${flag[1]}=${HIDDEN}`;
    const previous = i > 0 ? args[i - 1]! : '';
    if (previous.startsWith('-') && !previous.includes('=') && SECRET_NAME.test(previous) && !arg.startsWith('-')) return HIDDEN;
    return isSecretValue('', arg) ? HIDDEN : arg;
  });
}

/** A command line as a label: at most 60 characters. */
function abridged(text: string): string {
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

function namedLabel(state: NamedState): 'file' | 'folder' | 'path' {
  if (state.state === 'file' || state.state === 'data') return 'file';
  if (state.state === 'folder' || state.state === 'too-large' || state.state === 'working-folder') return 'folder';
  return 'path';
}

function namedText(state: NamedState): string {
  switch (state.state) {
    case 'file':
      return `sha256 ${shortFingerprint(state.sha256)}`;
    case 'folder':
      return `${state.files} ${state.files === 1 ? 'file' : 'files'}, sha256 ${shortFingerprint(state.sha256)}`;
    case 'too-large':
      return `NOT fingerprinted: ${state.limit}; changes inside it will not be noticed`;
    case 'special':
      return 'a FIFO or device (not read)';
    case 'unreadable':
      return `unreadable (${state.code})`;
    case 'data':
      return 'data (its content is not fingerprinted)';
    case 'working-folder':
      return 'the working folder (or one above it): its content is NOT fingerprinted';
    case 'reference':
      return 'holds a ${…} reference: what it names once resolved is NOT fingerprinted';
    case 'indirect':
      return `files this command reads are NOT fingerprinted where it reaches them through ${state.constructs.join(', ')} (only files named as written, after quote removal, by the variables it sets itself, or by globs that match now are)`;
    case 'not-covered':
      return state.text;
  }
}

/**
 * What differs between what was shown at the last approval and now, one line
 * each (`env NODE_OPTIONS: added: --require ./p.js`). Empty when nothing
 * shown changed (a hidden value did, or `before` was not kept).
 */
export function changes(before: Shown | undefined, now: Shown): string[] {
  if (before === undefined) return [];
  const lines: string[] = [];
  for (const [label, value] of Object.entries(now)) {
    const was = own(before, label);
    if (was === undefined) lines.push(`${label}: added: ${value}`);
    else if (was !== value) lines.push(`${label}: was ${was}, now ${value}`);
  }
  for (const [label, value] of Object.entries(before)) if (!Object.hasOwn(now, label)) lines.push(`${label}: removed (was ${value})`);
  return lines;
}

/** The labels of {@link changes}, for a one-line reason. */
export function changedLabels(before: Shown | undefined, now: Shown): string[] {
  if (before === undefined) return [];
  const labels = new Set([...Object.keys(before), ...Object.keys(now)]);
  return [...labels].filter((label) => own(before, label) !== own(now, label));
}

const own = (shown: Shown, label: string): string | undefined => (Object.hasOwn(shown, label) ? shown[label] : undefined);
