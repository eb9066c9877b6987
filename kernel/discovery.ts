/**
 * Plugin discovery: finds `manifest.json` files in the plugin sources and
 * validates them. Nothing here imports plugin code, and nothing throws for a
 * bad plugin: every problem becomes a coded error in `invalid`.
 */
import { readFile } from 'node:fs';
import type { Dirent } from 'node:fs';
import { readdir, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseJsonText } from '../internal/text/json.js';
import { manifestError, parseManifest } from '../sdk/manifest.js';
import { folderFiles, type PeerContext, readPeerFolder } from '../internal/peer/manifest.js';
import { describeCause, PlinthError } from '../sdk/errors.js';
import { safeLine } from '../sdk/format.js';
import type { Candidate, PluginSource } from './types.js';
import { prebuiltManifest } from './builtin-manifests.js';
import { noteRead } from '../internal/fs/read-paths.js';

/** One folder to scan, and the source its plugins count as. */
export interface DiscoverySource {
  readonly dir: string;
  readonly source: PluginSource;
  /** A folder linked with `plinth ext link`: its candidates are marked `linked`. */
  readonly linked?: true;
}

/** What discovery found: valid plugins, and what could not be used. */
export interface DiscoveryResult {
  candidates: Candidate[];
  /** `PLN_E_MANIFEST_UNREADABLE`, `PLN_E_MANIFEST_INVALID` and `PLN_E_PLUGIN_LINK_OUTSIDE` errors, naming the file or link. */
  invalid: PlinthError[];
}

/**
 * How deep below its source folder a plugin may sit: `name`, `@scope/name`, a
 * group folder (`vendor/@scope/name`) and one more (`repo/plugins/vendor/name`).
 * Deeper is more likely a copied tree than a plugin, and the bound keeps a
 * misplaced folder (a home directory dropped into `plugins/`) from costing a
 * crawl at every start. It only limits descent through folders that are not plugins.
 */
export const MAX_DEPTH = 4;

/**
 * Manifest reads at once. Reading is bound by the main thread's callbacks (four
 * per file: open, stat, read, close), so the more reads are queued up front the
 * better: on 1,000 manifests, 1,024 readers beat 64 by about a third. The cap
 * only guards the descriptor limit, which Node raises to the hard limit at
 * startup (4,096 or more on common systems).
 */
const READERS = 1024;

/**
 * Finds every plugin in `sources`. A folder holding a manifest.json is one
 * plugin and is not searched further; so is a folder without one that holds a
 * Claude Code plugin (`.claude-plugin/plugin.json`), a Codex plugin (`.codex-plugin/plugin.json`)
 * or a Gemini CLI extension (`gemini-extension.json`), and a folder in Claude Code's standard
 * layout alone (`hooks/hooks.json`, `.mcp.json`, `commands/`, …) where plugins are dropped:
 * directly in a plugin folder plinth scans (never deeper, where a project with its own `.mcp.json`
 * would be taken for one, nor a linked folder, whose removed manifest means it is no plugin any
 * more): its manifest is made from those (internal/peer/manifest.ts,
 * with `context.workspace` for the peers' workspace variables); any other folder is searched down to
 * {@link MAX_DEPTH} levels below its source. Dot-folders (an install stages its
 * download in one) and `node_modules` are not entered. A symlinked folder is
 * followed only when its real path lies inside the source folder; one leading
 * out is skipped with `PLN_E_PLUGIN_LINK_OUTSIDE`. A missing folder yields
 * nothing. Results keep the order of `sources`, then folder names in code-point
 * order, depth first; a folder reached twice (through a link) counts once.
 */
export async function discoverPlugins(sources: ReadonlyArray<DiscoverySource>, context: PeerContext = {}): Promise<DiscoveryResult> {
  const found = (await Promise.all(sources.map((source) => scanSource(source, context)))).flat();
  return { candidates: found.filter((f): f is Candidate => !(f instanceof PlinthError)), invalid: found.filter((f) => f instanceof PlinthError) };
}

type Found = Candidate | PlinthError;
const UNREADABLE = 'make it readable by plinth (check its permissions), or remove it; every other plugin still loads';

interface Folder {
  readonly dir: string;
  /** Its real path: where a folder reached through a link really is. */
  readonly real: string;
  readonly depth: number;
}

async function scanSource({ dir, source, linked }: DiscoverySource, context: PeerContext): Promise<Found[]> {
  const given = path.resolve(dir);
  noteRead(given);
  const real = await realpath(given).catch((error: unknown) => (isNotFound(error) ? undefined : given));
  if (real === undefined) return [];
  const root = { dir: given, real };
  const scan = async (folder: Folder): Promise<Array<[Found, string?]>> => {
    // A folder without manifest.json is listed once: to see whether it is a peer's, then to search it.
    let listing: Promise<Dirent[]> | undefined;
    const list = () => (listing ??= (noteRead(folder.dir), readdir(folder.dir, { withFileTypes: true })));
    // Claude Code's standard layout alone makes a plugin only where plugins are dropped: directly in a plugin folder plinth scans.
    // Not a linked folder (one whose manifest was removed is no plugin any more), not deeper (a project's own .mcp.json).
    const layout = !linked && folder.depth === 1;
    const self = await loadPlugin(folder.dir, source, linked, context, list, layout);
    if (self !== undefined) return [[self, folder.real]];
    if (folder.depth === MAX_DEPTH) return [];
    const children = await listFolders(folder, root, list());
    if (children instanceof PlinthError) return [[children]];
    return (await Promise.all(children.map((child) => (child instanceof PlinthError ? [[child] as [Found]] : scan(child))))).flat();
  };
  const seen = new Set<string>();
  const found = await scan({ ...root, depth: 0 });
  return found.filter(([, at]) => at === undefined || (!seen.has(at) && Boolean(seen.add(at)))).map(([item]) => item);
}

/** The subfolders of `folder` worth searching, sorted; a symlink to a folder outside `root` becomes an error in its place. */
async function listFolders(folder: Folder, root: { dir: string; real: string }, listing: Promise<Dirent[]>): Promise<Array<Folder | PlinthError> | PlinthError> {
  const entries = await listing.catch((error: unknown) => {
    if (isNotFound(error)) return [];
    return new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${safeLine(folder.dir)}: cannot list plugin folder: ${describeCause(error)}`, { cause: error, hint: UNREADABLE, details: { dir: folder.dir } });
  });
  if (entries instanceof PlinthError) return entries;
  const folders = entries.filter((e) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith('.') && e.name !== 'node_modules');
  const listed = await Promise.all(
    folders.sort((a, b) => byCodePoint(a.name, b.name)).map(async (entry): Promise<Folder | PlinthError | undefined> => {
      const dir = path.join(folder.dir, entry.name);
      const depth = folder.depth + 1;
      if (!entry.isSymbolicLink()) return { dir, real: path.join(folder.real, entry.name), depth };
      noteRead(dir);
      const target = await realpath(dir).catch((error: unknown) => (isNotFound(error) ? null : undefined));
      if (target === null) return brokenLink(dir);
      if (target === undefined) return undefined;
      // A link back to a folder on the way here is a loop: everything in it is found without it.
      if (inside(folder.real, target)) return undefined;
      if (inside(target, root.real)) return { dir, real: target, depth };
      noteRead(target);
      if (!(await stat(target).catch(() => undefined))?.isDirectory()) return undefined; // a link to a file is no plugin
      return new PlinthError('PLN_E_PLUGIN_LINK_OUTSIDE', `${safeLine(dir)}: a symlink to ${safeLine(target)}, outside the plugin folder ${safeLine(root.dir)}; it is not followed`, {
        hint: `to use that folder as a plugin, remove the symlink and run \`plinth ext link ${safeLine(target)}\``,
        details: { link: dir, target, dir: root.dir },
      });
    }),
  );
  return listed.filter((item) => item !== undefined);
}

/**
 * A link whose target is gone: said, not passed over, since a plugin that was
 * there (an installed version whose folder was deleted, a linked checkout that
 * moved) would otherwise vanish from every listing without a word.
 */
async function brokenLink(link: string): Promise<PlinthError> {
  noteRead(link);
  const target = await readlink(link).catch(() => '?');
  const scope = path.basename(path.dirname(link));
  const name = scope.startsWith('@') ? `${scope}/${path.basename(link)}` : path.basename(link);
  return new PlinthError('PLN_E_PLUGIN_LINK_BROKEN', `${safeLine(link)}: a symlink to ${safeLine(target)}, which does not exist; nothing is loaded from it`, {
    hint: `put back what it points to, or remove the link; if \`plinth ext install\` installed it, \`plinth ext install --force ${safeLine(name)}\` restores it`,
    details: { link, target },
  });
}

/** Reads and validates `<dir>/manifest.json`, or the manifest made from a peer's folder; `undefined` when there is neither. */
async function loadPlugin(dir: string, source: PluginSource, linked: true | undefined, context: PeerContext, list: () => Promise<Dirent[]>, layout: boolean): Promise<Found | undefined> {
  const file = path.join(dir, 'manifest.json');
  let text: string;
  try {
    text = await readText(file);
  } catch (error) {
    if (isNotFound(error)) return loadPeerPlugin(dir, source, linked, context, list, layout);
    return new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${safeLine(file)}: cannot read: ${describeCause(error)}`, { cause: error, hint: UNREADABLE, details: { file } });
  }
  const prebuilt = source === 'builtin' ? prebuiltManifest(file, text) : undefined;
  if (prebuilt !== undefined) return { manifest: prebuilt, dir, file, source, ...(linked && { linked }) };
  const json = parseJsonText(text);
  if (!json.ok) {
    const { line, column, problem } = json.error;
    return new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${safeLine(file)}:${line}:${column}: invalid JSON: ${problem}`, {
      hint: 'fix the JSON at the line and column given; every other plugin still loads',
      details: { file, line, column },
    });
  }
  const parsed = parseManifest(json.value);
  if (parsed.ok) return { manifest: parsed.manifest, dir, file, source, ...(linked && { linked }) };
  return manifestError(json.value, parsed.issues, file);
}

/** A peer's folder as a candidate (its `file` is the peer's manifest); `undefined` when the folder is none. */
async function loadPeerPlugin(dir: string, source: PluginSource, linked: true | undefined, context: PeerContext, list: () => Promise<Dirent[]>, layout: boolean): Promise<Found | undefined> {
  let peer;
  try {
    peer = await readPeerFolder(dir, context, folderFiles(dir, list().then((entries) => entries.map((e) => e.name))), { layout });
  } catch (error) {
    if (error instanceof PlinthError) return error;
    throw error;
  }
  if (peer === undefined) return undefined;
  const parsed = parseManifest(peer.data);
  if (parsed.ok) return { manifest: parsed.manifest, dir, file: peer.file, source, ...(linked && { linked }) };
  return manifestError(peer.data, parsed.issues, peer.file);
}

/** Reads in flight, and the reads waiting for one of them to finish. */
let reading = 0;
const waiting: Array<() => void> = [];

/**
 * At most {@link READERS} at once. `fs.promises.readFile` goes through a
 * FileHandle with an fstat and chunked reads; on Node 20 the callback form
 * reads 1,000 small manifests about five times faster.
 */
async function readText(file: string): Promise<string> {
  if (reading < READERS) reading++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    noteRead(file);
    return await new Promise((resolve, reject) => readFile(file, 'utf8', (error, text) => (error ? reject(error) : resolve(text))));
  } finally {
    const next = waiting.shift();
    if (next) next();
    else reading--;
  }
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Whether `dir` is `parent` or lies below it. */
function inside(dir: string, parent: string): boolean {
  return dir === parent || dir.startsWith(parent + path.sep);
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
