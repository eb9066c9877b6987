/**
 * Which files of a plugin folder go into its tarball. The rule, fixed and the
 * same for every plugin (documented in registry/README.md):
 *
 * - every regular file under the folder, at any depth, is packed;
 * - left out, at any depth: `node_modules/`, every name starting with a dot
 *   (`.git/`, `.env`, `.DS_Store`, `.npmrc`: version control, secrets and
 *   editor litter; dot-folders are also never discovered as plugins), and
 *   `*.tgz` (earlier packs lying in the folder, so packing stays repeatable);
 *   except, at the top of the folder, a Claude Code plugin's own `.claude-plugin/`
 *   and `.mcp.json`, which are its manifest (sdk/peer-manifest.ts);
 * - a symbolic link whose target is inside the folder is packed as the file
 *   (or folder) it points to: a tarball never holds a link, since installs
 *   refuse them; a link pointing outside, or one that loops, is refused;
 * - sockets, FIFOs and devices are refused;
 * - empty folders are not recorded (as with `npm pack`, a tarball holds files only).
 */
import { lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { PlinthError } from '../sdk/errors.js';

/** One file to pack: its path inside the plugin (`/`-separated) and whether it is executable. */
export interface PackFile {
  readonly path: string;
  readonly executable: boolean;
  readonly size: number;
}

/** Whether a name found in the folder is left out by the rule above. */
export function isSkipped(name: string): boolean {
  return name === 'node_modules' || name.startsWith('.') || name.endsWith('.tgz');
}

/** The dot-names packed at the top of a plugin folder: a Claude Code plugin's manifest files. */
const PEER_DOT_NAMES: ReadonlySet<string> = new Set(['.claude-plugin', '.mcp.json']);

/** Every file to pack, sorted by path (code-unit order, the same on every machine). */
export async function listPackFiles(dir: string): Promise<PackFile[]> {
  const root = await realpath(resolve(dir));
  const files: PackFile[] = [];
  await walk(root, '', [root], files);
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function walk(root: string, rel: string, ancestors: readonly string[], out: PackFile[]): Promise<void> {
  const here = rel === '' ? root : join(root, rel);
  const entries = await readdir(here, { withFileTypes: true });
  for (const entry of entries) {
    if (isSkipped(entry.name) && !(rel === '' && PEER_DOT_NAMES.has(entry.name))) continue;
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
    const absolute = join(root, path);
    let info = await lstat(absolute);
    let real = absolute;
    if (info.isSymbolicLink()) {
      real = await linkTarget(root, path, absolute);
      info = await stat(real);
    }
    if (info.isDirectory()) {
      if (ancestors.includes(real)) {
        throw new PlinthError('PLN_E_REGISTRY_PACK_LINK', `"${path}" is a link to one of the folders that contain it, so packing would never end`, {
          hint: 'remove the link, or replace it with the files it should bring',
          details: { path },
        });
      }
      await walk(root, path, [...ancestors, real], out);
    } else if (info.isFile()) {
      out.push({ path, executable: (info.mode & 0o111) !== 0, size: info.size });
    } else {
      throw new PlinthError('PLN_E_REGISTRY_PACK_ENTRY', `"${path}" is not a regular file or folder (a socket, FIFO or device), which a plugin tarball cannot hold`, {
        hint: 'move it out of the plugin folder',
        details: { path },
      });
    }
  }
}

/** The real path a link inside the plugin points to; refused when that is outside the plugin or missing. */
async function linkTarget(root: string, path: string, absolute: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (cause) {
    throw new PlinthError('PLN_E_REGISTRY_PACK_LINK', `"${path}" is a link to "${await readlink(absolute).catch(() => '?')}", which does not exist`, {
      cause,
      hint: 'remove the broken link or create what it points to',
      details: { path },
    });
  }
  const inside = relative(root, real);
  if (inside.startsWith(`..${sep}`) || inside === '..' || resolve(root, inside) !== real) {
    throw new PlinthError('PLN_E_REGISTRY_PACK_LINK', `"${path}" is a link to "${real}", outside the plugin folder`, {
      hint: 'a tarball carries only the plugin folder: copy what the link points to into the folder, or remove the link',
      details: { path, target: real },
    });
  }
  if (inside.split(sep).some(isSkipped)) {
    throw new PlinthError('PLN_E_REGISTRY_PACK_LINK', `"${path}" is a link into "${inside}", which packing leaves out (node_modules, dot-files, *.tgz)`, {
      hint: 'copy the file into the plugin folder under a name that is packed, or remove the link',
      details: { path, target: inside },
    });
  }
  return real;
}
