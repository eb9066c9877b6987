/**
 * Which files of a plugin folder go into its tarball. The rule, fixed and the
 * same for every plugin (documented in registry/README.md):
 *
 * - every regular file under the folder, at any depth, is packed;
 * - left out, at any depth: `node_modules/`, every name starting with a dot
 *   (`.git/`, `.env`, `.DS_Store`, `.npmrc`: version control, secrets and
 *   editor litter; dot-folders are also never discovered as plugins),
 *   `*.tgz` (earlier packs lying in the folder, so packing stays repeatable),
 *   and caches a run leaves (`__pycache__/`, `*.pyc`, `*.pyo`,
 *   `*.tsbuildinfo`): the same sources give the same bytes, run or not;
 * - except the npm packages `package.json` bundles (`bundleDependencies`, or
 *   `true` for every dependency): `node_modules/<name>/` of each, whole (its
 *   own nested `node_modules/` included, dot-names and caches still left
 *   out), and the packages they depend on that npm hoisted to the top
 *   `node_modules/`, as `npm pack` bundles them;
 *   except, at the top of the folder, a Claude Code plugin's own `.claude-plugin/`,
 *   a Codex plugin's `.codex-plugin/`, and `.mcp.json`, which are their manifest (internal/peer/manifest.ts);
 * - a symbolic link whose target is inside the folder is packed as the file
 *   (or folder) it points to: a tarball never holds a link, since installs
 *   refuse them; a link pointing outside, or one that loops, is refused;
 * - sockets, FIFOs and devices are refused;
 * - empty folders are not recorded (as with `npm pack`, a tarball holds files only).
 */
import { lstat, readFile, readdir, readlink, realpath, stat } from 'node:fs/promises';
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
  return name === 'node_modules' || isLeftOut(name);
}

/** Left out everywhere, bundled packages included: dot-names, packs, and caches. */
function isLeftOut(name: string): boolean {
  return name.startsWith('.') || name.endsWith('.tgz') || name === '__pycache__' || /\.(pyc|pyo|tsbuildinfo)$/.test(name);
}

/** The dot-names packed at the top of a plugin folder: a Claude Code or Codex plugin's manifest files. */
const PEER_DOT_NAMES: ReadonlySet<string> = new Set(['.claude-plugin', '.codex-plugin', '.mcp.json']);

/** Every file to pack, sorted by path (code-unit order, the same on every machine). */
export async function listPackFiles(dir: string): Promise<PackFile[]> {
  const root = await realpath(resolve(dir));
  const files: PackFile[] = [];
  await walk(root, '', [root], files, false);
  for (const name of await bundledPackages(root)) await walk(root, `node_modules/${name}`, [root], files, true);
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The packages under `node_modules/` that `package.json` bundles, with the
 * packages they need that sit at the top of `node_modules/` (hoisted), by name.
 * @throws PlinthError `PLN_E_REGISTRY_PACK_BUNDLE` for a bundled package that is not installed.
 */
async function bundledPackages(root: string): Promise<string[]> {
  const pkg = await readJson(join(root, 'package.json'));
  const listed = pkg?.bundleDependencies ?? pkg?.bundledDependencies;
  const names = listed === true ? Object.keys(dependenciesOf(pkg)) : Array.isArray(listed) ? listed.filter((n): n is string => typeof n === 'string') : [];
  const found = new Set<string>();
  const visit = async (name: string, from: string | undefined, nested: string | undefined): Promise<void> => {
    // A package nested in its dependent's own node_modules is packed with it.
    if (nested !== undefined && (await readJson(join(root, nested, 'node_modules', name, 'package.json')))) return;
    if (found.has(name)) return;
    const own = await readJson(join(root, 'node_modules', name, 'package.json'));
    if (!own) {
      if (from !== undefined) return; // an optional dependency not installed, or one npm placed elsewhere: npm pack leaves it out too
      throw new PlinthError('PLN_E_REGISTRY_PACK_BUNDLE', `package.json bundles "${name}", which is not installed in node_modules/`, {
        hint: 'run `npm install` in the plugin folder first, or remove it from bundleDependencies',
        details: { package: name },
      });
    }
    found.add(name);
    for (const dep of Object.keys(dependenciesOf(own))) await visit(dep, name, `node_modules/${name}`);
  };
  for (const name of names) await visit(name, undefined, undefined);
  return [...found].sort();
}

function dependenciesOf(pkg: Record<string, unknown> | undefined): Record<string, unknown> {
  const deps = (value: unknown) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
  return { ...deps(pkg?.optionalDependencies), ...deps(pkg?.dependencies) };
}

async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const data: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `bundled`: inside a bundled package, where its own `node_modules/` is packed too. */
async function walk(root: string, rel: string, ancestors: readonly string[], out: PackFile[], bundled: boolean): Promise<void> {
  const here = rel === '' ? root : join(root, rel);
  const entries = await readdir(here, { withFileTypes: true });
  for (const entry of entries) {
    if ((bundled ? isLeftOut(entry.name) : isSkipped(entry.name)) && !(rel === '' && PEER_DOT_NAMES.has(entry.name))) continue;
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
      await walk(root, path, [...ancestors, real], out, bundled);
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
