/**
 * What approving a plugin covers: its manifest and every file in its folder
 * (`node_modules` and dot-folders aside), so that editing any of them, or
 * adding one, needs approval again. Bounded: a folder too large to fingerprint
 * on every start is refused rather than half-checked.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PlinthError, type PluginInfo, safeLine } from 'plinth/sdk';
import type { TrustSource, TrustSubject } from 'plinth/sdk';

/** At most this many files, of at most this many bytes in all, are fingerprinted for one plugin. */
export const PLUGIN_FILE_LIMITS = { files: 2_000, bytes: 50 * 1024 * 1024 } as const;

export interface FileLimits {
  readonly files: number;
  readonly bytes: number;
}

/**
 * Every file under `dir`, sorted: regular files, symbolic links to files, and
 * dangling links (they hash as missing, so creating the target later changes
 * the fingerprint). Folders named `node_modules` or starting with a dot are
 * skipped; linked folders are followed once each.
 * @throws PlinthError `PLN_E_TRUST_PLUGIN_FILES` over the limits, or when a folder cannot be listed.
 */
export async function pluginFiles(name: string, dir: string, limits: FileLimits = PLUGIN_FILE_LIMITS): Promise<string[]> {
  const tooLarge = (what: string) =>
    new PlinthError('PLN_E_TRUST_PLUGIN_FILES', `its folder ${safeLine(dir)} is too large to fingerprint: ${what} (node_modules and dot-folders not counted)`, {
      plugin: 'trust',
      hint: `move build output and data out of the plugin folder, or, if you trust "${name}", load it with --plugin-dir ${safeLine(dir)}`,
      details: { plugin: name, dir, ...limits },
    });
  const unlisted = (folder: string, error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    return new PlinthError('PLN_E_TRUST_PLUGIN_FILES', `its folder ${safeLine(folder)} cannot be listed (${code}), so it cannot be fingerprinted`, {
      plugin: 'trust',
      cause: error,
      hint: `make ${safeLine(folder)} readable by you`,
      details: { plugin: name, dir: folder },
    });
  };
  return folderFiles(dir, limits, tooLarge, unlisted);
}

/**
 * The files under `dir` by {@link pluginFiles}' rule, sorted; `tooLarge` and
 * `unlisted` make the error thrown past `limits` or for a folder that cannot
 * be listed; `listing` is told each folder before it is listed.
 */
export async function folderFiles(
  dir: string,
  limits: FileLimits,
  tooLarge: (what: string) => Error,
  unlisted: (folder: string, error: unknown) => Error,
  listing?: (folder: string) => void,
): Promise<string[]> {
  const files: string[] = [];
  let bytes = 0;
  const seen = new Set<string>();
  const folders = [dir];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    const real = await realpath(folder).catch(() => folder);
    if (seen.has(real)) continue;
    seen.add(real);
    if (seen.size > limits.files) throw tooLarge(`more than ${limits.files.toLocaleString('en-US')} folders`);
    let entries;
    listing?.(folder);
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      throw unlisted(folder, error);
    }
    // Stats in parallel (bounded), then taken in listing order: the limits trip at the same file as one by one.
    for (let start = 0; start < entries.length; start += STAT_BATCH) {
      const batch = entries.slice(start, start + STAT_BATCH);
      const kinds = await Promise.all(batch.map((entry) => entryKind(join(folder, entry.name), entry)));
      for (const [i, entry] of batch.entries()) {
        const path = join(folder, entry.name);
        const { isDir, isFile, size } = kinds[i]!;
        if (isDir) {
          if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) folders.push(path);
          continue;
        }
        if (!isFile) continue; // FIFOs, sockets, devices: not code jiti could import
        files.push(path);
        bytes += size;
        if (files.length > limits.files) throw tooLarge(`more than ${limits.files.toLocaleString('en-US')} files`);
        if (bytes > limits.bytes) throw tooLarge(`more than ${Math.round(limits.bytes / 1024 / 1024)} MB`);
      }
    }
  }
  return files.sort();
}

/** How many entries of one folder are stat'ed at once: enough for libuv's threads, not a folder's worth of promises. */
const STAT_BATCH = 64;

/**
 * What one listed entry is: a folder, a file (with its size), or neither.
 * A link counts as what it points to; a dangling link counts as a file: it
 * hashes as missing until its target exists.
 */
async function entryKind(path: string, entry: Dirent): Promise<{ isDir: boolean; isFile: boolean; size: number }> {
  if (entry.isSymbolicLink()) {
    const target = await stat(path).catch(() => undefined);
    return { isDir: target?.isDirectory() ?? false, isFile: target === undefined || target.isFile(), size: target?.size ?? 0 };
  }
  if (entry.isFile()) return { isDir: false, isFile: true, size: (await stat(path).catch(() => undefined))?.size ?? 0 };
  return { isDir: entry.isDirectory(), isFile: false, size: 0 };
}

/**
 * The manifest as fingerprinted. A peer's `servers` (where each MCP server of a Claude plugin or
 * Gemini extension was written, for messages) is left out: it is worked out from files the
 * fingerprint already covers, and including it asked every pinned peer plugin again once when
 * plinth learned to record it.
 */
function fingerprinted(manifest: PluginInfo['manifest']): unknown {
  if (manifest.peer?.servers === undefined) return manifest;
  const { servers: _servers, ...peer } = manifest.peer;
  return { ...manifest, peer };
}

/**
 * The subject checked before a plugin's code is imported: kind `plugin`, its
 * name as id, its validated manifest as definition, and its folder's files
 * (plus `main`, wherever it points).
 */
export async function pluginSubject(plugin: Pick<PluginInfo, 'name' | 'version' | 'dir' | 'manifest'>, source: TrustSource, limits?: FileLimits): Promise<TrustSubject> {
  const files = await pluginFiles(plugin.name, plugin.dir, limits);
  if (plugin.manifest.main !== undefined) files.push(resolve(plugin.dir, plugin.manifest.main));
  const description = plugin.manifest.description.trim();
  return {
    kind: 'plugin',
    id: plugin.name,
    source,
    definition: fingerprinted(plugin.manifest),
    files,
    summary: `${plugin.name}@${plugin.version} in ${safeLine(plugin.dir)}${description ? `\n${description}` : ''}`,
  };
}
