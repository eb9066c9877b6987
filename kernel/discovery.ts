/**
 * Plugin discovery: finds `manifest.json` files in the plugin sources and
 * validates them. Nothing here imports plugin code, and nothing throws for a
 * bad plugin: every problem becomes a coded error in `invalid`.
 */
import { readFile } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseManifest, type ManifestIssue } from '../sdk/manifest.js';
import { describeCause, PlinthError } from '../sdk/errors.js';
import type { Candidate, PluginSource } from './types.js';

/** One folder to scan, and the source its plugins count as. */
export interface DiscoverySource {
  readonly dir: string;
  readonly source: PluginSource;
}

/** What discovery found: valid plugins, and manifests that could not be used. */
export interface DiscoveryResult {
  candidates: Candidate[];
  /** `PLN_E_MANIFEST_UNREADABLE` and `PLN_E_MANIFEST_INVALID` errors, naming the file. */
  invalid: PlinthError[];
}

const MANIFEST = 'manifest.json';

/**
 * Manifests read at once. Reading is bound by the main thread's callbacks (four
 * per file: open, stat, read, close), so the more reads are queued up front the
 * better: on 1,000 manifests, 1,024 readers beat 64 by about a third. The cap
 * only guards the descriptor limit, which Node raises to the hard limit at
 * startup (4,096 or more on common systems).
 */
const READERS = 1024;

/**
 * Finds every plugin in `sources`. A source folder that holds a manifest.json is
 * one plugin; otherwise each immediate subfolder holding one is a plugin, and
 * `@scope` folders are searched one level deeper. A missing folder yields nothing.
 * Results keep the order of `sources`, then folder names in code-point order.
 */
export async function discoverPlugins(sources: ReadonlyArray<DiscoverySource>): Promise<DiscoveryResult> {
  const listed = await Promise.all(sources.map((s) => listSource(path.resolve(s.dir), s.source)));
  // One pool for all sources, then back into source order.
  const loaded = await loadAll(listed.flatMap((l) => l.folders));
  let offset = 0;
  const ordered = listed.flatMap((l) => {
    const own = loaded.slice(offset, (offset += l.folders.length));
    return [...l.found, ...own];
  });
  const candidates: Candidate[] = [];
  const invalid: PlinthError[] = [];
  for (const found of ordered) {
    if (found === undefined) continue;
    if (found instanceof PlinthError) invalid.push(found);
    else candidates.push(found);
  }
  return { candidates, invalid };
}

type Found = Candidate | PlinthError | undefined;

interface Folder {
  readonly dir: string;
  readonly source: PluginSource;
}

/** The folders of one source that may hold a plugin, or the source itself when it is one. */
async function listSource(dir: string, source: PluginSource): Promise<{ found: Found[]; folders: Folder[] }> {
  // Reading the manifest directly answers both "is this a plugin" (ENOENT)
  // and "what is in it", where a stat first would add a round trip.
  const self = await loadPlugin({ dir, source });
  if (self !== undefined) return { found: [self], folders: [] };
  const children = await listFolders(dir);
  if (children instanceof PlinthError) return { found: [children], folders: [] };
  const found: Found[] = [];
  const nested = await Promise.all(
    children.map(async (name): Promise<Folder[]> => {
      const child = path.join(dir, name);
      if (!name.startsWith('@')) return [{ dir: child, source }];
      const scoped = await listFolders(child);
      if (!(scoped instanceof PlinthError)) return scoped.map((inner) => ({ dir: path.join(child, inner), source }));
      found.push(scoped);
      return [];
    }),
  );
  return { found, folders: nested.flat() };
}

/** Loads every folder's manifest with a fixed number of concurrent readers; results keep the input order. */
async function loadAll(folders: readonly Folder[]): Promise<Found[]> {
  const results: Found[] = new Array<Found>(folders.length);
  let next = 0;
  const reader = async (): Promise<void> => {
    while (next < folders.length) {
      const i = next++;
      results[i] = await loadPlugin(folders[i] as Folder);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READERS, folders.length) }, reader));
  return results;
}

/**
 * Subfolder names (and symlinks, which is how linked plugins appear), sorted.
 * Dot-folders are skipped: an install stages its download in one, and a
 * half-extracted plugin must never be discovered.
 */
async function listFolders(dir: string): Promise<string[] | PlinthError> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isNotFound(error)) return [];
    return new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${dir}: cannot list plugin folder: ${describeCause(error)}`, {
      cause: error,
      details: { dir },
    });
  }
  return entries
    .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort(byCodePoint);
}

/** Reads and validates `<dir>/manifest.json`; `undefined` when there is none. */
async function loadPlugin({ dir, source }: Folder): Promise<Found> {
  const file = path.join(dir, MANIFEST);
  let text: string;
  try {
    text = await readText(file);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    return new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${file}: cannot read: ${describeCause(error)}`, {
      cause: error,
      details: { file },
    });
  }
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return jsonError(file, text, error);
  }
  const parsed = parseManifest(data);
  if (parsed.ok) return { manifest: parsed.manifest, dir, file, source };
  return schemaError(file, data, parsed.issues);
}

function schemaError(file: string, data: unknown, issues: ManifestIssue[]): PlinthError {
  const lines = issues.map((issue) => (issue.path === '' ? `${file}: ${issue.message}` : `${file}: ${issue.path}: ${issue.message}`));
  const name = typeof data === 'object' && data !== null ? (data as { name?: unknown }).name : undefined;
  return new PlinthError('PLN_E_MANIFEST_INVALID', lines.join('\n'), {
    ...(typeof name === 'string' && { plugin: name }),
    hint: 'fix the listed fields; the manifest format is the zod schema exported by plinth/sdk',
    details: { file, issues },
  });
}

function jsonError(file: string, text: string, error: unknown): PlinthError {
  const reason = describeCause(error);
  const offset = errorOffset(reason, text);
  const where = offset === undefined ? undefined : lineColumn(text, offset);
  // V8 appends a copy of the input ("…" is not valid JSON) and a raw offset;
  // the file:line:column prefix says the same thing more usefully.
  const short = reason.replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '').replace(/ in JSON at position \d+.*$/s, '');
  const at = where === undefined ? file : `${file}:${where.line}:${where.column}`;
  return new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${at}: invalid JSON: ${short}`, {
    cause: error,
    details: { file, ...where },
  });
}

/** Offset of a JSON syntax error: from V8's message when it has one, else found by scanning. */
function errorOffset(message: string, text: string): number | undefined {
  const position = /at position (\d+)/.exec(message);
  if (position?.[1] !== undefined) return Number(position[1]);
  if (/Unexpected end of JSON input/.test(message)) return text.length;
  // Node 20's "Unexpected token 'x', "…" is not valid JSON" has no offset.
  return scanForJsonError(text);
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: end - lineStart + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/y;
const LITERAL = /true|false|null/y;
const SPACE = /[ \t\n\r]*/y;

/**
 * The offset of the first JSON syntax error in `text`, by a minimal validating
 * scan. Only used when V8 does not say where the error is, so it favours
 * brevity over speed.
 */
function scanForJsonError(text: string): number | undefined {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const skip = (): void => {
    SPACE.lastIndex = i;
    SPACE.test(text);
    i = SPACE.lastIndex;
  };
  const token = (re: RegExp): boolean => {
    re.lastIndex = i;
    if (!re.test(text)) return false;
    i = re.lastIndex;
    return true;
  };
  const expect = (char: string): void => {
    skip();
    if (text[i] !== char) fail();
    i++;
  };
  // `{…}` and `[…]`: items separated by commas, no trailing comma.
  const list = (close: string, item: () => void): void => {
    i++;
    skip();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      item();
      skip();
      if (text[i] === close) break;
      expect(',');
    }
    i++;
  };
  const member = (): void => {
    skip();
    if (!token(STRING)) fail();
    expect(':');
    value();
  };
  const value = (): void => {
    skip();
    if (text[i] === '{') list('}', member);
    else if (text[i] === '[') list(']', value);
    else if (!token(STRING) && !token(NUMBER) && !token(LITERAL)) fail();
  };
  try {
    value();
    skip();
    return i < text.length ? i : undefined;
  } catch (at) {
    // A RangeError from absurd nesting: no location rather than a crash.
    return typeof at === 'number' ? at : undefined;
  }
}

/**
 * `fs.promises.readFile` goes through a FileHandle with an fstat and chunked
 * reads; on Node 20 the callback form reads 1,000 small manifests about five
 * times faster, so discovery wraps it rather than using the promise API.
 */
function readText(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    readFile(file, 'utf8', (error, text) => (error ? reject(error) : resolve(text)));
  });
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
