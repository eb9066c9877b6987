/**
 * A plugin's npm dependencies: what its `package.json` asks for, what its
 * tarball bundles (`bundleDependencies`), and installing the rest into its
 * staged folder with npm itself, before the folder is moved into place.
 *
 *   const npm = await readNpmDependencies(staged.dir);       // at extraction: shown for approval
 *   const tree = await installNpmDependencies(staged, npm, options);   // after approval, before the move
 *
 * npm runs through the launcher (`npm ci` when the tarball ships a lockfile,
 * else `npm install --no-package-lock`), always with `--ignore-scripts` and
 * `--omit=dev`, in a folder of its own beside the staged plugin (holding a
 * copy of `package.json` and the lockfile only: a `.npmrc` the tarball ships is
 * never read), with an environment that names the plugin's registry and
 * nothing else: a user config written for this run (mode 0600, removed after)
 * holds the registry and, when it has one, its token scoped to its URL;
 * `replace-registry-host=always` points a lockfile's `resolved` URLs at it;
 * every other host goes through a proxy that refuses (npm's `noproxy` names
 * the registry's host only). No bin links (`--no-bin-links`): the folder
 * holds files only, recorded with the rest of the tree that every load checks.
 */
import { lstat, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Launcher, PlinthError, safeLine } from 'plinth/sdk';
import { type InstalledTree, hashTree, treeDigest } from 'plinth/internal';
import semver from 'semver';

/** What a plugin's package.json asks of npm. */
export interface NpmDependencies {
  /** `dependencies` and `optionalDependencies`: name → spec, as written. */
  readonly declared: Readonly<Record<string, string>>;
  /** Names the tarball brings in its own `node_modules/` (listed in `bundleDependencies` and present). */
  readonly bundled: readonly string[];
  /** `npm-shrinkwrap.json` or `package-lock.json`, when the tarball ships one. */
  readonly lockfile?: string;
  /** The package.json's text, copied for npm as it is. */
  readonly packageJson?: string;
}

/** Nothing to install. */
export const NO_NPM_DEPENDENCIES: NpmDependencies = Object.freeze({ declared: {}, bundled: [] });

const MAX_PACKAGE_JSON = 1024 * 1024;

/** The npm dependencies of the plugin in `dir` (none when it has no package.json). */
export async function readNpmDependencies(dir: string, plugin: string): Promise<NpmDependencies> {
  const file = join(dir, 'package.json');
  const info = await lstat(file).catch(() => undefined);
  if (!info) return NO_NPM_DEPENDENCIES;
  if (!info.isFile() || info.size > MAX_PACKAGE_JSON) throw npmError(plugin, 'read', `its package.json is not a file of at most ${MAX_PACKAGE_JSON} bytes`, 'ask the publisher to repack it');
  const text = await readFile(file, 'utf8');
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(text) as Record<string, unknown>;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('not an object');
  } catch (error) {
    throw npmError(plugin, 'read', `its package.json is not a JSON object (${safeLine((error as Error).message)})`, 'ask the publisher to repack it');
  }
  const declared: Record<string, string> = { ...specs(data.optionalDependencies), ...specs(data.dependencies) };
  const listed = data.bundleDependencies ?? data.bundledDependencies;
  const bundleNames = listed === true ? Object.keys(declared) : Array.isArray(listed) ? listed.filter((n): n is string => typeof n === 'string') : [];
  const bundled: string[] = [];
  for (const name of bundleNames) {
    if (await lstat(join(dir, 'node_modules', name, 'package.json')).then((i) => i.isFile(), () => false)) bundled.push(name);
  }
  let lockfile: string | undefined;
  for (const name of ['npm-shrinkwrap.json', 'package-lock.json']) {
    if (await lstat(join(dir, name)).then((i) => i.isFile(), () => false)) {
      lockfile = name;
      break;
    }
  }
  return { declared, bundled: bundled.sort(), packageJson: text, ...(lockfile && { lockfile }) };
}

function specs(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The packages npm must install: those declared and not bundled. */
export function toInstall(npm: NpmDependencies): Record<string, string> {
  return Object.fromEntries(Object.entries(npm.declared).filter(([name]) => !npm.bundled.includes(name)));
}

/** Lines for the approval: `zod@^3.23.0`, `left-pad@1.3.0 (bundled)`. */
export function describeNpm(npm: NpmDependencies): string[] {
  return Object.entries(npm.declared)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, spec]) => `${name}@${spec}${npm.bundled.includes(name) ? ' (bundled)' : ''}`);
}

/**
 * A spec npm resolves from the registry alone: a semver range, a dist-tag,
 * or an `npm:` alias of one. Anything else (a git URL, a tarball URL, a
 * `file:` or `link:` path, GitHub's `user/repo`) would fetch from elsewhere or
 * link outside the plugin.
 */
function registrySpec(spec: string): boolean {
  const plain = (s: string) => s === '' || semver.validRange(s) !== null || /^[a-z][a-z0-9._-]*$/i.test(s);
  if (spec.startsWith('npm:')) {
    const target = spec.slice(4);
    const at = target.lastIndexOf('@');
    return at > 0 ? plain(target.slice(at + 1)) : /^(@[a-z0-9._-]+\/)?[a-z0-9._-]+$/i.test(target);
  }
  return plain(spec);
}

export interface NpmInstallOptions {
  readonly launcher: () => Promise<Launcher>;
  /** The registry the plugin came from: npm installs from it alone. */
  readonly registry: { readonly name: string; readonly url: URL; readonly token?: string } | undefined;
  /** npm's cache folder. */
  readonly cache: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** A staged plugin: its folder, what was written into it, and the folder beside it npm may work in. */
export interface NpmTarget {
  readonly name: string;
  readonly version: string;
  /** The plugin folder (`…/package`). */
  readonly dir: string;
  /** A new folder's path beside it, for npm's project. */
  readonly work: string;
  readonly tree: InstalledTree;
}

/**
 * Installs what `npm` asks for and the tarball does not bundle into
 * `<dir>/node_modules`; returns the tree with those files added (the same
 * tree when there is nothing to install).
 * @throws PlinthError `PLN_E_MARKET_NPM` naming what failed; the staged folder is then thrown away with the staging.
 */
export async function installNpmDependencies(target: NpmTarget, npm: NpmDependencies, options: NpmInstallOptions): Promise<InstalledTree> {
  const wanted = toInstall(npm);
  const names = Object.keys(wanted);
  if (names.length === 0) return target.tree;
  const odd = names.filter((name) => !registrySpec(wanted[name]!));
  if (odd.length > 0) {
    throw npmError(target.name, 'spec', `${target.name}@${target.version} asks npm for ${odd.map((n) => `${n}@${wanted[n]}`).join(', ')}, which is not a version from a registry (a git, file, link or URL dependency)`, 'ask its author to depend on registry versions, or to bundle that package (bundleDependencies; `plinth registry pack` packs them)');
  }
  const registry = options.registry;
  if (!registry || (registry.url.protocol !== 'http:' && registry.url.protocol !== 'https:')) {
    throw npmError(target.name, 'registry', `${target.name}@${target.version} needs npm packages (${names.join(', ')}), and ${registry ? `registry "${registry.name}" is a folder, which npm cannot install from` : 'no npm registry is configured to install them from'}`, "ask its author to bundle them (bundleDependencies in package.json; `plinth registry pack` packs them), or install it from an npm registry");
  }
  const work = target.work;
  await mkdir(work, { recursive: true });
  // What npm reads of the plugin: its package.json and lockfile, nothing else of the tarball.
  const bundledToo = npm.bundled.length > 0;
  const lockfile = bundledToo ? undefined : npm.lockfile;
  await writeFile(join(work, 'package.json'), bundledToo ? JSON.stringify({ name: 'plinth-npm-install', version: '0.0.0', private: true, dependencies: wanted }) : npm.packageJson!);
  if (lockfile) await writeFile(join(work, lockfile), await readFile(join(target.dir, lockfile)));
  const config = join(work, '.config');
  await mkdir(config, { mode: 0o700 });
  const userconfig = join(config, 'npmrc');
  const globalconfig = join(config, 'global-npmrc');
  const url = registry.url.href;
  // The token lives in this file only (0600, removed below): never on a command line, never in the environment.
  const nerfDart = `//${registry.url.host}${registry.url.pathname}`;
  await writeFile(userconfig, `registry=${url}\n${registry.token ? `${nerfDart}:_authToken=${registry.token}\n` : ''}`, { mode: 0o600 });
  await writeFile(globalconfig, '', { mode: 0o600 });
  const args = [lockfile ? 'ci' : 'install', ...(lockfile ? [] : ['--no-package-lock']), '--omit=dev', '--ignore-scripts', '--no-bin-links', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];
  let result;
  try {
    const launcher = await options.launcher();
    result = await launcher.run(
      {
        owner: 'marketplace',
        purpose: `npm dependencies of ${target.name}@${target.version}`,
        program: 'npm',
        args,
        cwd: work,
        env: {
          npm_config_userconfig: userconfig,
          npm_config_globalconfig: globalconfig,
          npm_config_registry: url,
          npm_config_cache: options.cache,
          npm_config_replace_registry_host: 'always',
          // Every host but the registry's goes through a proxy that refuses: npm is offline from any other registry.
          npm_config_proxy: OFFLINE_PROXY,
          npm_config_https_proxy: OFFLINE_PROXY,
          npm_config_noproxy: registry.url.hostname,
          npm_config_update_notifier: 'false',
          npm_config_fund: 'false',
          npm_config_audit: 'false',
        },
        timeoutMs: options.timeoutMs,
        stdin: 'ignore',
      },
      options.signal ? { signal: options.signal } : {},
    );
  } finally {
    await rm(config, { recursive: true, force: true });
  }
  if (result.exitCode !== 0) {
    const why = result.timedOut ? `timed out after ${Math.round(options.timeoutMs / 1000)} s` : `exit ${result.exitCode ?? result.signal ?? '?'}`;
    const output = safeLine(lastLines(result.stderr.toString('utf8') || result.stdout.toString('utf8'), 6).replaceAll(registry.token ?? '\u0000', '[token]'));
    throw npmError(target.name, 'install', `npm could not install the npm dependencies of ${target.name}@${target.version} (${names.join(', ')}) from registry "${registry.name}": ${why}${output ? `: ${output}` : ''}`, `nothing was changed; check that registry "${registry.name}" has those packages (npm installs them from it alone), or raise npmTimeoutMs`);
  }
  return placeModules(target, join(work, 'node_modules'));
}

/** A proxy address nothing listens on: a request to any host but the registry's fails at once. */
const OFFLINE_PROXY = 'http://127.0.0.1:9';

/** Moves what npm installed into the plugin's `node_modules` (beside what it bundles) and records those files. */
async function placeModules(target: NpmTarget, installed: string): Promise<InstalledTree> {
  if (!(await lstat(installed).then((i) => i.isDirectory(), () => false))) return target.tree;
  let tree: InstalledTree;
  try {
    tree = await hashTree(installed);
  } catch (error) {
    throw npmError(target.name, 'install', `npm left something other than files and folders in node_modules (${safeLine((error as Error).message)})`, 'nothing was changed; report it to plinth');
  }
  const modules = join(target.dir, 'node_modules');
  await mkdir(modules, { recursive: true });
  const files: Record<string, InstalledTree['files'][string]> = { ...target.tree.files };
  for (const entry of await readdir(installed)) {
    // A bundled package the tarball brings wins over npm's copy of the same name.
    if (await lstat(join(modules, entry)).then(() => true, () => false)) continue;
    await rename(join(installed, entry), join(modules, entry));
    // Renamed, each file keeps its inode, so its recorded size and times stay true.
    for (const [path, file] of Object.entries(tree.files)) if (path === entry || path.startsWith(`${entry}/`)) files[`node_modules/${path}`] = file;
  }
  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { digest: treeDigest(sorted), files: sorted };
}

function lastLines(text: string, count: number): string {
  return text.trim().split('\n').slice(-count).join(' | ');
}

function npmError(plugin: string, reason: string, message: string, hint: string): PlinthError {
  return new PlinthError('PLN_E_MARKET_NPM', `npm: ${message}`, { plugin, hint, details: { step: 'npm', reason } });
}
