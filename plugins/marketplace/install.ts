/**
 * One install, step by step: resolve, download, verify, extract, validate,
 * approve, move, record, load. Nothing of the previous state changes before
 * every plugin of the plan is downloaded, verified, extracted and approved;
 * the move is a rename and the switch an atomic link swap, and a new version
 * that fails to load is switched back. Every error names its step
 * (`details.step`) and has a `PLN_E_…` code.
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ApprovalRequest, type InstallOptions, type LockEntry, type LockSource, type Manifest, type MarketChange, PlinthError, type PluginKernel, KERNEL_API_VERSION, type Launcher, describeError, isPlinthError, parseManifest } from 'plinth/sdk';
import { type InstalledTree, checkTree, describeTreeCheck, hashTree, readPeerFolder } from 'plinth/internal';
import semver from 'semver';
import ssri from 'ssri';
import { declarationChanges, declarationsOf } from './declared.js';
import { extractSafely } from './extract.js';
import type { HostTokens } from './host-tokens.js';
import { download } from './fetcher.js';
import { refuseCredentials } from './git.js';
import { type NpmDependencies, describeNpm, installNpmDependencies, readNpmDependencies } from './npm-deps.js';
import type { Registry } from './registries.js';
import type { Planned } from './resolve.js';
import type { PluginStore } from './store.js';
import { integrityChecker } from './verify.js';
import { packFolder } from './pack-folder.js';

/** What the steps need. */
/** `{ token }` when there is one (a Registry's optional field). */
function tokenOf(token: string | undefined): { token?: string } {
  return token === undefined ? {} : { token };
}

export interface InstallContext {
  /** Tokens per host for archives (host-tokens.ts). */
  readonly tokens?: HostTokens;
  readonly kernel: PluginKernel;
  readonly store: PluginStore;
  readonly limits: { readonly timeoutMs: number; readonly maxBytes: number; readonly lockWaitMs: number };
  readonly env: Record<string, string | undefined>;
  /** The workspace root, for {@link readManifest} of a peer plugin. */
  readonly workspace?: string;
}

/** A plugin downloaded, verified and extracted into staging, waiting to be moved into place. */
export interface Staged {
  readonly name: string;
  readonly version: string;
  readonly dir: string;
  readonly manifest: Manifest;
  readonly integrity: string;
  readonly range: string;
  readonly registry: string;
  readonly registryUrl?: string;
  readonly resolved: string;
  readonly dependency: boolean;
  readonly signature?: { readonly keyid: string; readonly sig: string };
  /** What the folder holds, and how far that is known: see {@link StagedTree}. */
  readonly tree: StagedTree;
  /** Its package.json's npm dependencies (none for a folder kept from before: they are in it already). */
  readonly npm?: NpmDependencies;
  /** The registry it came from, which npm installs its npm dependencies from (a tarball file: the one its name goes to). */
  readonly source?: Registry;
  /** Fetched from outside the registries (git, a marketplace's folder, an archive): recorded as the lock entry's `source`. */
  readonly origin?: LockSource;
}

/**
 * What a staged folder's files are, by where the record comes from:
 * - `written`: this install's extraction wrote them and recorded each one as it
 *   wrote it; the record is taken as is (renaming the folder into place keeps
 *   every file's inode, and so its size and times);
 * - `recorded`: a folder kept from an earlier install (a rollback), recorded
 *   then; it may have changed since, so it is checked in full against that
 *   record before it is switched to;
 * - `unrecorded`: a kept folder installed before plinth recorded trees; what it
 *   holds now is recorded.
 */
export type StagedTree =
  | { readonly kind: 'written'; readonly tree: InstalledTree }
  | { readonly kind: 'recorded'; readonly tree: InstalledTree }
  | { readonly kind: 'unrecorded' };

/** Downloads `planned` into `staging`, verifies it before extracting it, and checks the manifest inside. */
export async function fetchPlanned(context: InstallContext, planned: Planned, staging: string, options: InstallOptions): Promise<Staged> {
  const file = join(staging, `${planned.name.replace('/', '+')}-${planned.version}.tgz`);
  // Hashed as it arrives, judged once it is all written, before extraction: the file is not read twice.
  const integrity = await step('verify', planned.name, options.signal, async () => integrityChecker(planned.integrity, { subject: file, ...(planned.size !== undefined && { size: planned.size }) }));
  await step('download', planned.name, options.signal, () =>
    download(planned.registry, planned.tarball, file, {
      timeoutMs: context.limits.timeoutMs,
      maxBytes: context.limits.maxBytes,
      step: 'download',
      observe: integrity.update,
      ...(options.signal && { signal: options.signal }),
      ...(options.progress && { progress: (received: number, total: number | undefined) => options.progress!(planned.name, received, total) }),
    }),
  );
  await step('verify', planned.name, options.signal, async () => integrity.finish());
  const staged = await extractAndCheck(context, file, staging, planned.name, planned.version, options);
  return { ...staged, integrity: planned.integrity, range: planned.range, registry: planned.registry.name, ...(planned.registry.name === 'command-line' && { registryUrl: planned.registry.url.href }), resolved: planned.tarball.href, dependency: planned.dependency, source: planned.registry, ...(planned.signature && { signature: planned.signature }) };
}

/** A tarball on disk (`plinth ext install ./x.tgz`): its integrity is computed, since nothing claims one. */
export async function fetchLocal(context: InstallContext, file: string, staging: string, options: InstallOptions): Promise<Staged> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) {
    // A plugin folder (plinth's, a Claude Code plugin, a Gemini CLI extension) is linked, or packed first.
    const hint = info?.isDirectory()
      ? `${file} is a folder: link it with \`plinth ext link ${file}\`, or pack it with \`plinth registry pack ${file}\` and install the .tgz`
      : 'give the path of a .tgz made by `plinth registry pack` or `npm pack`';
    throw new PlinthError('PLN_E_MARKET_TARBALL', info?.isDirectory() ? `${file}: a folder, not a tarball` : `${file}: no such tarball`, { hint, details: { step: 'resolve', file } });
  }
  const integrity = (await ssri.fromStream(createReadStream(file), { algorithms: ['sha512'] })).toString();
  const staged = await extractAndCheck(context, file, staging, undefined, undefined, options);
  return { ...staged, integrity, range: file, registry: 'file', resolved: file, dependency: false };
}

/**
 * A folder fetched from a git repository or read in a marketplace (`folder`),
 * packed under `package/` without `.git` and extracted as a tarball would be
 * (pack-folder.ts, extract.ts): the same checks, the same recorded tree. Its
 * integrity is the packed tarball's sha512; `origin` says where it came from.
 */
export async function fetchFolder(context: InstallContext, folder: string, staging: string, options: InstallOptions, origin: LockSource, shown: string, within?: string): Promise<Staged> {
  await step('download', shown, options.signal, () => mkdir(staging, { recursive: true }));
  const file = join(staging, 'folder.tgz');
  await step('extract', shown, options.signal, () => packFolder(folder, file, shown, within));
  const integrity = (await ssri.fromStream(createReadStream(file), { algorithms: ['sha512'] })).toString();
  const staged = await extractAndCheck(context, file, staging, undefined, undefined, options);
  const resolved = origin.commit ? `${origin.url}#${origin.commit}${origin.path ? `:${origin.path}` : ''}` : `${origin.url}${origin.path ? `#:${origin.path}` : ''}`;
  return { ...staged, integrity, range: origin.ref ?? '', registry: origin.marketplace ?? origin.kind, resolved, dependency: false, origin };
}

/**
 * An archive URL pinned by its SHA-256 (`sha256`, hex): downloaded, its digest
 * checked before a byte of it is extracted (`PLN_E_INTEGRITY_MISMATCH`,
 * nothing installed), then extracted as a registry's tarball.
 */
export async function fetchArchive(context: InstallContext, url: URL, sha256: string, staging: string, options: InstallOptions, marketplace?: string): Promise<Staged> {
  refuseCredentials(url.href);
  await step('download', url.href, options.signal, () => mkdir(staging, { recursive: true }));
  const file = join(staging, 'archive.tgz');
  const expected = `sha256-${Buffer.from(sha256, 'hex').toString('base64')}`;
  const integrity = await step('verify', url.href, options.signal, async () => integrityChecker(expected, { subject: url.href }));
  await step('download', url.href, options.signal, () =>
    download({ name: marketplace ?? 'archive', url: new URL(url.origin), ...tokenOf(context.tokens?.for(url)) }, url, file, { timeoutMs: context.limits.timeoutMs, maxBytes: context.limits.maxBytes, step: 'download', anyOrigin: true, observe: integrity.update, ...(options.signal && { signal: options.signal }) }),
  );
  await step('verify', url.href, options.signal, async () => integrity.finish());
  const staged = await extractAndCheck(context, file, staging, undefined, undefined, options);
  return { ...staged, integrity: expected, range: '', registry: marketplace ?? 'archive', resolved: url.href, dependency: false, origin: { kind: 'archive', url: url.href, ...(marketplace && { marketplace }) } };
}

async function extractAndCheck(context: InstallContext, file: string, staging: string, name: string | undefined, version: string | undefined, options: InstallOptions) {
  await step('extract', name ?? file, options.signal, () => pauseForTests(context.env, 'extract', options.signal));
  const tree = join(staging, 'tree');
  await step('extract', name ?? file, options.signal, () => mkdir(tree, { recursive: true }));
  const extracted = await step('extract', name ?? file, options.signal, () => extractSafely(file, tree));
  const manifest = extracted.manifest;
  if (name !== undefined && (manifest.name !== name || manifest.version !== version)) {
    throw new PlinthError('PLN_E_MARKET_MISMATCH', `validate: the registry offered ${name}@${version}, but the tarball holds ${manifest.name}@${manifest.version}`, {
      plugin: name,
      hint: 'the registry serves a wrong or swapped tarball: nothing was installed; tell its operator, or use another registry',
      details: { step: 'validate', claimed: `${name}@${version}`, found: `${manifest.name}@${manifest.version}` },
    });
  }
  refuseKernel(manifest);
  const npm = await step('validate', manifest.name, options.signal, () => readNpmDependencies(extracted.dir, manifest.name));
  return { name: manifest.name, version: manifest.version, dir: extracted.dir, manifest, npm, tree: { kind: 'written', tree: extracted.tree } as const };
}

/**
 * The manifest's `kernel` range, not the registry's copy of it, says whether
 * this kernel can load the plugin: one it cannot is refused before anything
 * is moved into place (the registry's `kernel`, when it lists one, only
 * helped choose the version).
 */
function refuseKernel(manifest: Manifest): void {
  if (semver.satisfies(KERNEL_API_VERSION, manifest.kernel, { includePrerelease: true })) return;
  throw new PlinthError('PLN_E_MARKET_KERNEL', `validate: ${manifest.name}@${manifest.version} needs kernel ${manifest.kernel} (its manifest says so), and this plinth's kernel API is ${KERNEL_API_VERSION}: not installed`, {
    plugin: manifest.name,
    hint: `nothing was installed; install a version of ${manifest.name} made for kernel ${KERNEL_API_VERSION} (\`plinth ext install ${manifest.name}@<version>\`), or update plinth`,
    details: { step: 'validate', kernel: manifest.kernel, kernelApi: KERNEL_API_VERSION },
  });
}

/** What npm needs besides the staged plugin. */
export interface NpmContext {
  readonly launcher: () => Promise<Launcher>;
  readonly cache: string;
  readonly timeoutMs: number;
}

/**
 * Installs the npm dependencies of a freshly staged plugin into its folder
 * (npm-deps.ts), before anything is moved into place: the staged plugin with
 * those files added to its recorded tree. A folder kept from before (a
 * rollback) has them already.
 */
export async function withNpmDependencies(npm: NpmContext, staged: Staged, signal?: AbortSignal): Promise<Staged> {
  if (!staged.npm || staged.tree.kind !== 'written') return staged;
  const written = staged.tree.tree;
  const tree = await step('npm', staged.name, signal, () =>
    installNpmDependencies(
      { name: staged.name, version: staged.version, dir: staged.dir, work: join(dirname(dirname(staged.dir)), 'npm'), tree: written },
      staged.npm!,
      { launcher: npm.launcher, registry: staged.source, cache: npm.cache, timeoutMs: npm.timeoutMs, ...(signal && { signal }) },
    ),
  );
  return tree === written ? staged : { ...staged, tree: { kind: 'written', tree } };
}

/** The approval request for what is about to be installed, with what changed against the installed versions. */
export async function approvalFor(staged: readonly Staged[], installed: (name: string) => Promise<{ manifest: Manifest; npm: NpmDependencies } | undefined>): Promise<ApprovalRequest & { unchanged: boolean }> {
  const plugins: Array<ApprovalRequest['plugins'][number]> = [];
  let unchanged = true;
  for (const s of staged) {
    const declarations = declarationsOf(s.manifest, s.npm ? describeNpm(s.npm) : []);
    const was = await installed(s.name);
    const before = was?.manifest;
    const changed = was ? declarationChanges(declarationsOf(was.manifest, describeNpm(was.npm)), declarations) : undefined;
    if (!before || changed!.length > 0) unchanged = false;
    plugins.push({ name: s.name, version: s.version, ...(before && { from: before.version }), ...(s.origin && { source: s.resolved }), declarations, ...(changed && { changed }) });
  }
  return { plugins, unchanged };
}

/** Asks (or takes `--yes`); without a way to ask, stops with how to approve. */
export async function approve(request: ApprovalRequest, options: InstallOptions, again: string): Promise<void> {
  if (options.yes === true) return;
  const answer = options.approve ? await options.approve(request) : 'there is no terminal to ask on';
  if (answer === true) return;
  const names = request.plugins.map((p) => `${p.name}@${p.version}`).join(', ');
  throw new PlinthError('PLN_E_MARKET_APPROVAL', answer === false ? `approve: ${names} not approved: nothing was installed` : `approve: ${names} must be approved before it is installed, and plinth could not ask: ${answer}`, {
    hint: `review what it declares (shown above), then run \`${again} --yes\``,
    details: { step: 'approve', plugins: request.plugins },
  });
}

/**
 * Moves `staged` into place, records it and makes it the active version, then
 * loads it into the running kernel (when it runs; a first install only with
 * `loadNew`). A failure to load switches back to the previous version (or
 * removes a fresh install) and is thrown.
 */
/**
 * `force`: install the active version again (restores its files). `loadNew`
 * (default true): load a plugin installed for the first time into this kernel
 * (see `InstallOptions.loadNew`).
 */
export async function commit(context: InstallContext, staged: Staged, signal?: AbortSignal, { force = false, loadNew = true }: { force?: boolean; loadNew?: boolean } = {}): Promise<MarketChange> {
  const { store, kernel } = context;
  signal?.throwIfAborted();
  const before = (await store.read()).plugins[staged.name];
  const from = await store.activeVersion(staged.name);
  if (from === staged.version && force && before?.version === staged.version) return reinstall(context, staged, before);
  // The version already active is not installed again (`--force` does, to restore its files).
  if (from === staged.version) return { name: staged.name, from, to: staged.version, registry: staged.registry, integrity: before?.integrity ?? staged.integrity, loaded: isRunning(kernel, staged.name) };
  const target = store.versionDir(staged.name, staged.version);
  // A rollback's folder is in place already; anything else at `target` is a leftover of a killed install, never the active version.
  if (staged.dir !== target) {
    await rm(target, { recursive: true, force: true });
    await step('move', staged.name, undefined, async () => {
      await mkdir(store.versionsDir, { recursive: true });
      await rename(staged.dir, target);
    });
  }
  await pauseForTests(context.env, 'move');
  // What every load is checked against (internal/registry/installed-tree.ts).
  const tree = await recordedTree(staged, target);
  const entry: LockEntry = {
    name: staged.name,
    version: staged.version,
    integrity: staged.integrity,
    range: staged.range,
    registry: staged.registry,
    ...(staged.registryUrl && { registryUrl: staged.registryUrl }),
    resolved: staged.resolved,
    installedAt: new Date().toISOString(),
    // Asked for by name once, it stays so when a dependent asks for it again.
    ...(staged.dependency && (before === undefined || before.dependency === true) && { dependency: true }),
    ...(staged.signature && { signature: staged.signature }),
    tree,
    ...(staged.origin && { source: staged.origin }),
    // `plinth up`'s automatic updates stay on through updates and rollbacks, until `ext auto-update <name> off`.
    ...(before?.autoUpdate === true && { autoUpdate: true }),
    ...(before && { previous: withoutPrevious(before) }),
  };
  await step('record', staged.name, undefined, () => store.update((data) => void (data.plugins[staged.name] = entry)));
  await step('move', staged.name, undefined, () => store.activate(staged.name, staged.version));
  const loaded = await loadOrRevert(context, staged, before, from, loadNew || from !== undefined);
  await store.prune(staged.name, [staged.version, ...(from && from !== staged.version ? [from] : [])]);
  return { name: staged.name, ...(from && { from }), to: staged.version, registry: staged.registry, integrity: staged.integrity, loaded };
}

/**
 * The tree to record for `staged`, now at `target`: the one its extraction
 * wrote; for a folder kept from before (a rollback), the one recorded then,
 * once the folder is found to still hold it (its files are not taken as they
 * are now).
 */
async function recordedTree(staged: Staged, target: string): Promise<InstalledTree> {
  const files = staged.tree;
  if (files.kind === 'written') return files.tree;
  if (files.kind === 'unrecorded') return step('record', staged.name, undefined, () => hashTree(target));
  const check = await checkTree(target, files.tree, { full: true });
  if (!check.ok) {
    throw new PlinthError('PLN_E_MARKET_FILES_CHANGED', `move: ${staged.name}@${staged.version} in ${target} changed on disk since it was installed (${describeTreeCheck(check)}): not switched back to`, {
      plugin: staged.name,
      hint: `install it again instead: \`plinth ext install --force ${staged.name}@${staged.version}\``,
      details: { step: 'move', changed: check.changed, added: check.added, removed: check.removed },
    });
  }
  return files.tree;
}

/**
 * `--force` of the active version: its folder is replaced by the verified
 * download (two renames: the old folder aside, the new one in; the link
 * never changes), the record gets the new tree, and the plugin is loaded
 * again. A failure before the second rename puts the old folder back.
 */
async function reinstall(context: InstallContext, staged: Staged, before: LockEntry): Promise<MarketChange> {
  const { store, kernel } = context;
  const target = store.versionDir(staged.name, staged.version);
  const aside = store.asideDir(staged.name, staged.version);
  await rm(aside, { recursive: true, force: true });
  await step('move', staged.name, undefined, async () => {
    // A folder that is gone (deleted by hand) has nothing to set aside: the download just moves in.
    const setAside = (await stat(target).catch(() => undefined)) !== undefined;
    if (setAside) await rename(target, aside);
    // No atomic exchange of two folders in Node: a kill here leaves the old one aside, put back by the next command (store.cleanLeftovers).
    await pauseForTests(context.env, 'replace');
    try {
      await rename(staged.dir, target);
    } catch (error) {
      if (setAside) await rename(aside, target);
      throw error;
    }
  });
  // A --force reinstall is always of a fresh download: what its extraction wrote is recorded.
  const tree = await recordedTree(staged, target);
  const { revoked: _revoked, source: _source, ...rest } = before;
  // The same version from another kind of source (a registry, git, an archive) is recorded as coming from there.
  const { registryUrl: _url, signature: _signature, ...unsigned } = rest;
  const kept = staged.origin !== undefined || before.source !== undefined ? { ...unsigned, registry: staged.registry, range: staged.range, ...(staged.registryUrl && { registryUrl: staged.registryUrl }) } : rest;
  await step('record', staged.name, undefined, () => store.update((data) => void (data.plugins[staged.name] = { ...kept, ...(staged.origin && { source: staged.origin }), integrity: staged.integrity, resolved: staged.resolved, installedAt: new Date().toISOString(), ...(staged.signature && { signature: staged.signature }), tree })));
  await rm(aside, { recursive: true, force: true });
  const trust = await kernel.get('trust');
  await trust.approve(await trust.pluginSubject({ name: staged.name, version: staged.version, dir: store.activePath(staged.name), manifest: await placedManifest(context, staged) }, 'user'));
  const failure = await loadLive(kernel, staged.name, store.activePath(staged.name)).catch((error: unknown) => (isPlinthError(error) ? error : undefined));
  if (failure instanceof PlinthError) throw new PlinthError('PLN_E_MARKET_LOAD', `load: ${staged.name}@${staged.version} was installed again but does not load: ${failure.message}`, { plugin: staged.name, cause: failure, ...(failure.hint && { hint: failure.hint }), details: { step: 'load', version: staged.version } });
  return { name: staged.name, from: staged.version, to: staged.version, registry: staged.registry, integrity: staged.integrity, loaded: isRunning(kernel, staged.name) };
}

/**
 * The manifest to approve: a peer plugin's is made from its folder and names
 * the folder's paths, so it is made again where the plugin now lives, as
 * discovery will make it.
 */
async function placedManifest(context: InstallContext, staged: Staged): Promise<Manifest> {
  if (!staged.manifest.peer) return staged.manifest;
  return (await readManifest(context.store.activePath(staged.name), context.workspace)) ?? staged.manifest;
}

/** Approves the switched-to version with trust, then (with `load`) loads it live; undoes the switch when it does not load. */
async function loadOrRevert(context: InstallContext, staged: Staged, before: LockEntry | undefined, from: string | undefined, load: boolean): Promise<boolean> {
  const { store, kernel } = context;
  const trust = await kernel.get('trust');
  const subjectFor = async (manifest: Manifest, version: string) => trust.pluginSubject({ name: manifest.name, version, dir: store.activePath(manifest.name), manifest }, 'user');
  let failure: PlinthError | 'not-running' | undefined;
  try {
    await trust.approve(await subjectFor(await placedManifest(context, staged), staged.version));
    failure = load ? await loadLive(kernel, staged.name, store.activePath(staged.name)) : 'not-running';
  } catch (error) {
    // Whatever goes wrong once the new version is linked (its folder too large to fingerprint, the kernel throwing) is undone as a failed load.
    failure = isPlinthError(error) ? error : new PlinthError('PLN_E_MARKET_LOAD', describeError(error), { plugin: staged.name, cause: error });
  }
  if (failure === undefined) return isRunning(kernel, staged.name);
  if (failure === 'not-running') return false;
  // Back to what was there: the link, the record and the approval of the old version.
  if (from !== undefined && from !== staged.version) await store.activate(staged.name, from);
  else await store.deactivate(staged.name);
  await store.update((data) => {
    if (before) data.plugins[staged.name] = before;
    else delete data.plugins[staged.name];
  });
  if (from !== undefined && from !== staged.version) {
    const manifest = await readManifest(store.activePath(staged.name), context.workspace);
    if (manifest) await trust.approve(await subjectFor(manifest, from)).catch(() => undefined);
  } else await kernel.plugins.rescan().catch(() => undefined);
  await rm(store.versionDir(staged.name, staged.version), { recursive: true, force: true });
  throw new PlinthError('PLN_E_MARKET_LOAD', `load: ${staged.name}@${staged.version} was installed but does not load: ${failure.message}; ${from ? `${staged.name}@${from} is back in place` : 'it was removed again'}`, {
    plugin: staged.name,
    cause: failure,
    hint: failure.hint ?? `the plugin's author must fix it; \`plinth plugins why ${staged.name}\` explains`,
    details: { step: 'load', version: staged.version, ...(from && { kept: from }) },
  });
}

/** Loads the plugin at `dir` into a booted kernel: the failure, `not-running` when the kernel is not booted (the next start loads it), else undefined. */
async function loadLive(kernel: PluginKernel, name: string, dir: string): Promise<PlinthError | 'not-running' | undefined> {
  let report;
  try {
    report = isRunning(kernel, name) ? await kernel.plugins.replace(name, dir) : await kernel.plugins.rescan();
  } catch (error) {
    if (isPlinthError(error) && error.code === 'PLN_E_KERNEL_STATE') return 'not-running';
    throw error;
  }
  const failed = report.failed.find((e) => e.plugin === name);
  if (failed) return failed;
  const status = kernel.status().find((p) => p.name === name);
  if (status && (status.state === 'failed' || status.state === 'excluded' || status.state === 'skipped')) {
    return new PlinthError((status.error?.code as `PLN_E_${string}` | undefined) ?? 'PLN_E_MARKET_LOAD', status.error?.message ?? `it is ${status.state}`, { plugin: name, ...(status.error?.hint && { hint: status.error.hint }) });
  }
  return undefined;
}

function isRunning(kernel: PluginKernel, name: string): boolean {
  return kernel.status().some((p) => p.name === name && (p.state === 'active' || p.state === 'lazy'));
}

/** The manifest in `dir`, or undefined when there is none or it is invalid. */
export async function readManifest(dir: string, workspace?: string, asWritten?: true): Promise<Manifest | undefined> {
  try {
    const text = await readFile(join(dir, 'manifest.json'), 'utf8').catch(async (error: unknown) => {
      // A Claude Code plugin or Gemini CLI extension: the manifest discovery makes of it.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return (await readPeerFolder(dir, { ...(workspace !== undefined && { workspace }), ...(asWritten && { asWritten }) }))?.data;
    });
    const parsed = parseManifest(typeof text === 'string' ? JSON.parse(text) : text);
    return parsed.ok ? parsed.manifest : undefined;
  } catch {
    return undefined;
  }
}

function withoutPrevious(entry: LockEntry): Omit<LockEntry, 'previous'> {
  const { previous: _previous, ...rest } = entry;
  return rest;
}

/**
 * Runs one step; an error that is not already coded becomes one naming the
 * step, and an abort (Ctrl-C, SIGTERM) becomes `PLN_E_MARKET_INTERRUPTED`.
 */
export async function step<T>(name: string, plugin: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  if (signal?.aborted) throw interrupted(name, plugin);
  try {
    return await fn();
  } catch (error) {
    if (signal?.aborted) throw interrupted(name, plugin, error);
    if (isPlinthError(error)) {
      if (error.details?.step === undefined) (error as { details: Record<string, unknown> }).details = { ...error.details, step: name };
      throw error;
    }
    const errno = (error as NodeJS.ErrnoException).code;
    throw new PlinthError('PLN_E_MARKET_STEP', `${name}: ${plugin}: ${(error as Error).message ?? String(error)}`, {
      plugin,
      cause: error,
      hint: 'nothing was changed; check the disk and the permissions of your plinth folder, then run the command again',
      details: { step: name, ...(errno && { errno }) },
    });
  }
}

function interrupted(name: string, plugin: string, cause?: unknown): PlinthError {
  return new PlinthError('PLN_E_MARKET_INTERRUPTED', `${name}: installing ${plugin} was interrupted; nothing was changed`, { plugin, ...(cause !== undefined && { cause }), hint: 'run the command again', details: { step: name } });
}

/**
 * For the tests that kill an install at a given step: `PLINTH_MARKET_PAUSE_AT=<step>`
 * says so on stderr and waits, so that the test can kill it there.
 */
async function pauseForTests(env: Record<string, string | undefined>, at: string, signal?: AbortSignal): Promise<void> {
  if (env.PLINTH_MARKET_PAUSE_AT !== at) return;
  process.stderr.write(`marketplace: paused at ${at}\n`);
  await sleep(60_000, undefined, signal ? { signal } : {});
}
