/**
 * `plinth registry pack`: a plugin folder → a gzipped tar whose entries are
 * under `package/` (npm's layout), the same bytes for the same folder on any
 * machine: entries sorted, one fixed mtime, no owner (uid/gid 0, no names),
 * modes 0644 or 0755, gzip without a time stamp. The manifest is validated
 * first; what is packed follows the rule in pack-files.ts.
 */
import { readFile } from 'node:fs/promises';
import { join, posix, resolve } from 'node:path';
import type { Stats } from 'node:fs';
import { create } from 'tar';
import { PlinthError, isPlinthError } from '../sdk/errors.js';
import { type Manifest, manifestError, parseManifest } from '../sdk/manifest.js';
import { readPeerFolder } from '../internal/peer/manifest.js';
import { type TarballDigests, tarballDigests } from './digests.js';
import { checkRelativeImports } from './pack-imports.js';
import { listPackFiles } from './pack-files.js';

/** The one mtime of every entry: npm's own (1985-10-26T08:15:00Z), so both tools agree. */
export const PACK_MTIME = new Date('1985-10-26T08:15:00.000Z');

export interface PackedPlugin extends TarballDigests {
  readonly manifest: Manifest;
  /** The gzipped tar. */
  readonly bytes: Buffer;
  /** Paths inside the plugin, sorted (in the tarball each is under `package/`). */
  readonly files: readonly string[];
  /** The total size of the files, unpacked. */
  readonly unpackedSize: number;
  /** The file name `npm pack` would give it: `name-1.0.0.tgz`, `scope-name-1.0.0.tgz`. */
  readonly fileName: string;
}

/**
 * Packs the plugin in `dir`.
 *
 * @throws PlinthError `PLN_E_REGISTRY_PACK_MANIFEST` when there is no readable manifest.json,
 *   `PLN_E_MANIFEST_INVALID` when it is invalid, `PLN_E_REGISTRY_PACK_MAIN` when `main` is missing
 *   or outside the folder, `PLN_E_REGISTRY_PACK_LINK` / `PLN_E_REGISTRY_PACK_ENTRY` for links out
 *   of the folder and special files, `PLN_E_REGISTRY_PACK_IMPORT` for a relative import that leaves it.
 */
export async function packPlugin(dir: string): Promise<PackedPlugin> {
  const root = resolve(dir);
  const manifest = await readPluginManifest(root);
  const files = await listPackFiles(root);
  const paths = files.map((f) => f.path);
  if (manifest.main !== undefined) checkMain(manifest, paths);
  // Bundled npm packages import within node_modules as they please; the plugin's own code must stay in its folder.
  await checkRelativeImports(root, paths.filter((p) => !p.startsWith('node_modules/')));
  const executable = new Set(files.filter((f) => f.executable).map((f) => f.path));
  const bytes = await tarball(root, paths, executable);
  return {
    manifest,
    bytes,
    files: paths,
    unpackedSize: files.reduce((sum, f) => sum + f.size, 0),
    fileName: npmPackFileName(manifest.name, manifest.version),
    ...tarballDigests(bytes),
  };
}

/** `@scope/name` 1.0.0 → `scope-name-1.0.0.tgz`, as `npm pack` names it. */
export function npmPackFileName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

/** Reads and validates `<root>/manifest.json`. */
export async function readPluginManifest(root: string): Promise<Manifest> {
  const file = join(root, 'manifest.json');
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (cause) {
    const missing = (cause as NodeJS.ErrnoException).code === 'ENOENT';
    // A Claude Code plugin or Gemini CLI extension is packed as it is; its manifest is made again at install.
    // Made here with its variables as written, so that the registry's document names no path of this machine.
    const peer = missing ? await readPeerFolder(root, { asWritten: true }) : undefined;
    if (peer !== undefined) {
      const parsed = parseManifest(peer.data);
      if (!parsed.ok) throw manifestError(peer.data, parsed.issues, peer.file);
      return parsed.manifest;
    }
    throw new PlinthError('PLN_E_REGISTRY_PACK_MANIFEST', missing ? `${root} has no manifest.json, so it is not a plugin folder` : `${file} is not valid JSON`, {
      cause,
      hint: missing ? 'give the folder of a plugin (the one holding its manifest.json, or a Claude Code plugin\'s or Gemini CLI extension\'s manifest); `plinth plugin new <name>` makes one' : 'correct the JSON of manifest.json',
      details: { file },
    });
  }
  const parsed = parseManifest(data);
  if (!parsed.ok) throw manifestError(data, parsed.issues, file);
  return parsed.manifest;
}

/** `main` must name a file that is packed: inside the folder, not left out by the rule. */
function checkMain(manifest: Manifest, paths: readonly string[]): void {
  const main = manifest.main!;
  const normal = posix.normalize(main.replace(/\\/g, '/'));
  const climbs = main.startsWith('/') || /^[a-zA-Z]:/.test(main) || normal === '..' || normal.startsWith('../');
  if (climbs || !paths.includes(normal)) {
    throw new PlinthError('PLN_E_REGISTRY_PACK_MAIN', climbs ? `"main" (${main}) points outside the plugin folder` : `"main" (${main}) names a file that is not packed (missing, or left out: node_modules, dot-files, *.tgz)`, {
      plugin: manifest.name,
      hint: 'set "main" to the entry module inside the plugin folder, relative to manifest.json, e.g. "./index.ts"',
      details: { main },
    });
  }
}

/** A link cache that remembers nothing, so that a file with several hard links is packed as a file each time, never as a link entry. */
class NoHardLinks<K, V> extends Map<K, V> {
  override get(): V | undefined {
    return undefined;
  }
}

async function tarball(root: string, paths: readonly string[], executable: ReadonlySet<string>): Promise<Buffer> {
  const stream = create(
    {
      cwd: root,
      prefix: 'package/',
      gzip: { level: 9 },
      portable: true,
      mtime: PACK_MTIME,
      noDirRecurse: true,
      // Links inside the folder were checked by listPackFiles; what they point to is packed.
      follow: true,
      linkCache: new NoHardLinks(),
      // The filter sees each entry's stat before its header is written: the only mode is 0644 or 0755.
      filter: (path: string, stat: Stats | unknown) => {
        if (isStats(stat)) stat.mode = (stat.mode & ~0o7777) | (executable.has(path) ? 0o755 : 0o644);
        return true;
      },
    },
    [...paths],
  );
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
  } catch (cause) {
    if (isPlinthError(cause)) throw cause;
    throw new PlinthError('PLN_E_REGISTRY_PACK_READ', `could not read the plugin folder ${root} while packing it`, { cause, hint: 'check that its files are readable and not being changed', details: { dir: root } });
  }
  return Buffer.concat(chunks);
}

function isStats(value: unknown): value is Stats {
  return typeof value === 'object' && value !== null && typeof (value as Stats).isFile === 'function';
}
