/** The `marketplace` service: search, install, outdated, update, rollback and uninstall. */
import { mkdir, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve as resolvePath } from 'node:path';
import semver from 'semver';
import { type InstallOptions, type InstallResult, type Launcher, type LockEntry, type LockFile, type Logger, type MarketChange, type MarketNote, type MarketplaceService, type OutdatedEntry, type OutdatedResult, PlinthError, type RevokedEntry, type PluginKernel, type SearchHit, isPlinthError, safeLine } from 'plinth/sdk';
import { compareSearchResults, packumentUrl, prepareQuery, prepareSearchDoc, searchPackageVersion, searchScore } from 'plinth/internal';
import { DocumentCache } from './cache.js';
import { type DocumentContext, fetchPackument, fetchSearchObjects } from './documents.js';
import { type InstallContext, type NpmContext, type Staged, approvalFor, approve, commit, fetchArchive, fetchFolder, fetchLocal, fetchPlanned, readManifest, step, withNpmDependencies } from './install.js';
import { COMMIT, cloneAt } from './git.js';
import { type HostTokenSetting, HostTokens } from './host-tokens.js';
import { type GitFollow, followGit, scratchIn } from './git-update.js';
import { MarketplacePolicy, type PolicySettings } from './policy.js';
import { Marketplaces, NOT_FOLLOWED } from './marketplaces.js';
import { CATALOGUE_FILES, type CatalogueEntry, GITHUB_REPO, gitUrlOf, insidePath } from './peer-catalogue.js';
import { NO_NPM_DEPENDENCIES, readNpmDependencies } from './npm-deps.js';
import { type Registry, commandLineRegistry, configuredRegistries, registryFor } from './registries.js';
import { type Planned, type Present, parseSpec, pickVersion, planInstall } from './resolve.js';
import { RegistryTrustKeeper } from './registry-trust.js';
import { unsupportedSource } from './source.js';
import { fetchRevocations, replacementFor, revokedError, revokedInstalled } from './revocations.js';
import { PluginStore } from './store.js';
import { TrustState } from './trust-state.js';
import { verifyInstalled } from './verify-installed.js';

/** The errors of one git source that `ext update` of everything notes and goes past (see `update`). */
const UNFOLLOWED_NOW: ReadonlySet<string> = new Set(['PLN_E_MARKET_GIT_REWRITTEN', 'PLN_E_MARKET_GIT', 'PLN_E_MARKET_POLICY']);

export interface MarketplaceOptions {
  readonly kernel: PluginKernel;
  readonly home: string;
  /** The workspace root: a peer plugin's manifest (Gemini's `${workspacePath}`) is made with it, as discovery makes it. */
  readonly workspace?: string;
  readonly settings: { readonly downloadTimeoutMs: number; readonly maxDownloadBytes: number; readonly lockWaitMs: number; readonly npmTimeoutMs: number; readonly gitTimeoutMs?: number; readonly hostTokens?: readonly HostTokenSetting[] } & Partial<PolicySettings>;
  /** The launcher service, through which npm runs (a plugin's npm dependencies). */
  readonly launcher: () => Promise<Launcher>;
  readonly log: Logger;
  /** The embedded default registry's folder, used when none is configured. */
  readonly embeddedRegistry?: string;
  readonly env?: Record<string, string | undefined>;
  /** The added marketplaces (marketplaces.ts); made from `home` when not given. */
  readonly marketplaces?: Marketplaces;
}

export function createMarketplace(options: MarketplaceOptions): MarketplaceService {
  const { kernel, log } = options;
  const env = options.env ?? process.env;
  const store = new PluginStore(options.home);
  const cache = new DocumentCache(join(options.home, 'cache', 'registry'));
  const limits = { timeoutMs: options.settings.downloadTimeoutMs, maxBytes: options.settings.maxDownloadBytes, lockWaitMs: options.settings.lockWaitMs };
  const tokens = new HostTokens(options.settings.hostTokens ?? [], env);
  const installContext: InstallContext = { kernel, store, limits, env, tokens, ...(options.workspace !== undefined && { workspace: options.workspace }) };
  const npmContext: NpmContext = { launcher: options.launcher, cache: join(options.home, 'cache', 'npm'), timeoutMs: options.settings.npmTimeoutMs };
  const configured = (): Registry[] => configuredRegistries(kernel.configLayers, env, options.embeddedRegistry === undefined ? {} : { embedded: options.embeddedRegistry });
  /** `--registry` (a URL, a folder, or a registry's name), else the configured ones (the embedded one among them, `namedOnly` once others are set). */
  const registries = (override?: string): Registry[] => (override !== undefined ? [commandLineRegistry(override, configured)] : configured());
  const documents = (signal: AbortSignal | undefined, notes: MarketNote[], revalidate = false): DocumentContext => ({ cache, limits: { timeoutMs: limits.timeoutMs, ...(signal && { signal }) }, notes, revalidate });
  const trustState = new TrustState(options.home);
  const policy = new MarketplacePolicy({ allowedMarketplaces: options.settings.allowedMarketplaces ?? [], blockedMarketplaces: options.settings.blockedMarketplaces ?? [], requirePinnedCommit: options.settings.requirePinnedCommit === true, minReleaseAgeDays: options.settings.minReleaseAgeDays ?? 0 });
  const marketplaces = options.marketplaces ?? new Marketplaces({ home: options.home, launcher: options.launcher, timeoutMs: options.settings.gitTimeoutMs ?? 300_000, maxBytes: options.settings.maxDownloadBytes, policy, tokens });
  const gitOptions = (signal?: AbortSignal) => ({ launcher: options.launcher, timeoutMs: options.settings.gitTimeoutMs ?? 300_000, tokens, ...(signal && { signal }) });
  /** Documents plus one operation's view of each registry's keys and index (asked once per registry). */
  const planning = (request: InstallOptions, notes: MarketNote[], revalidate = false) => ({
    ...documents(request.signal, notes, revalidate),
    trust: new RegistryTrustKeeper(trustState, { trustKeys: request.trustKeys, trustKeyIds: request.trustKeyIds }),
  });
  /** For what installs nothing: keys nobody trusted yet are left unchecked rather than asked about. */
  const reading = (signal: AbortSignal | undefined, notes: MarketNote[]) => ({ ...documents(signal, notes, true), trust: new RegistryTrustKeeper(trustState, { readOnly: true }) });

  /** The installed entries their registries revoked; marks them (and unmarks the others) in the lock file. */
  const revocationsFor = async (entries: readonly LockEntry[], context: ReturnType<typeof reading>): Promise<RevokedEntry[]> => {
    const byRegistry = new Map<string, { registry: Registry; entries: LockEntry[] }>();
    for (const entry of entries) {
      if (entry.registry === 'file' || fetchedOutside(entry)) continue;
      let registry: Registry;
      try {
        registry = registryOf(entry);
      } catch (error) {
        // Its registry is no longer configured: said, as for one that cannot be reached.
        if (!isPlinthError(error) || error.code !== 'PLN_E_MARKET_REGISTRY_CONFIG') throw error;
        context.notes.push({ registry: entry.registry, kind: 'unreachable', message: `${entry.name}: revocations not checked: ${error.message}` });
        continue;
      }
      const group = byRegistry.get(registry.url.href) ?? { registry, entries: [] };
      group.entries.push(entry);
      byRegistry.set(registry.url.href, group);
    }
    const revoked: RevokedEntry[] = [];
    const checked = new Set<string>();
    for (const { registry, entries: group } of byRegistry.values()) {
      try {
        const list = await fetchRevocations(context, context.trust, registry);
        revoked.push(...(await revokedInstalled(context, context.trust, registry, group, list)));
        for (const entry of group) checked.add(entry.name);
      } catch (error) {
        // Only a registry that cannot be reached at all (and of which nothing is cached) is passed over, saying so;
        // revocations that are missing, older, expired or not the index's are an error: they are how a revocation is hidden.
        if (!isPlinthError(error) || error.code !== 'PLN_E_MARKET_REGISTRY_UNREACHABLE') throw error;
        context.notes.push({ registry: registry.name, kind: 'unreachable', message: `revocations not checked: ${error.message}` });
      }
    }
    const lock = await store.read();
    const stale = Object.values(lock.plugins).some((e) => checked.has(e.name) && JSON.stringify(e.revoked) !== JSON.stringify(markOf(revoked.find((r) => r.name === e.name && r.version === e.version))));
    if (stale) {
      await store.update((data) => {
        for (const entry of Object.values(data.plugins)) {
          if (!checked.has(entry.name)) continue;
          const mark = markOf(revoked.find((r) => r.name === entry.name && r.version === entry.version));
          if (mark) entry.revoked = mark;
          else delete entry.revoked;
        }
      });
    }
    return revoked;
  };

  /**
   * Refuses `entry` (a version to switch back to) when its registry revoked
   * it: the registry's `use`, else the newest version an install would
   * accept, is named. Failing to establish the revocations refuses too,
   * except a registry that cannot be reached at all and of which nothing is
   * cached: a note says the revocations were not checked.
   */
  const refuseRevoked = async (entry: Omit<LockEntry, 'previous'>, context: ReturnType<typeof reading>): Promise<void> => {
    if (entry.registry === 'file' || fetchedOutside(entry)) return;
    const registry = registryOf(entry);
    let trust;
    try {
      trust = await context.trust.forRegistry(context, registry);
    } catch (error) {
      if (!isPlinthError(error) || error.code !== 'PLN_E_MARKET_REGISTRY_UNREACHABLE') throw error;
      context.notes.push({ registry: registry.name, kind: 'unreachable', message: `revocations not checked: ${error.message}` });
      return;
    }
    const hit = trust.revoked.find((r) => r.name === entry.name && r.version === entry.version);
    if (!hit) return;
    const packument = hit.use === undefined ? await fetchPackument(context, registry, entry.name).catch(() => undefined) : undefined;
    throw revokedError('rollback', registry, hit, hit.use ?? (packument && replacementFor(trust, registry, packument)), 'not rolled back to');
  };

  /**
   * Where an installed plugin is updated from: the `--registry` URL it came from, else the registry of the name it was
   * installed from (the embedded `plinth` too, once other registries are configured), else the configured one for its name.
   */
  const registryOf = (entry: { name: string; registry: string; registryUrl?: string | undefined }): Registry => {
    if (entry.registry === 'command-line' && entry.registryUrl) return commandLineRegistry(entry.registryUrl);
    const list = registries();
    const same = list.find((r) => r.name === entry.registry);
    if (!same) return registryFor(list, entry.name);
    const { namedOnly: _, ...chosen } = same;
    return chosen;
  };

  /** Builtin and other plugins the kernel found, and the installed ones, by name. */
  const present = async (): Promise<Map<string, Present>> => {
    const map = new Map<string, Present>();
    for (const c of kernel.inspect().resolution.plugins) map.set(c.manifest.name, { version: c.manifest.version, source: c.source });
    for (const [name, entry] of Object.entries((await store.read()).plugins)) map.set(name, { version: entry.version, source: 'user' });
    return map;
  };

  /** What is present, with what is being installed in this command already counted as there. */
  const presentWith = async (staged: readonly Staged[]): Promise<Map<string, Present>> => {
    const map = await present();
    for (const s of staged) map.set(s.name, { version: s.version, source: 'user' });
    return map;
  };

  /** Downloads and checks everything, asks once, then commits dependencies first. Staging is always removed. */
  const installStaged = async (stage: (staging: string) => Promise<Staged[]>, request: InstallOptions, again: string, reapproveOnly: boolean, locked?: string): Promise<MarketChange[]> => {
    await store.cleanLeftovers();
    const staging = await store.stage();
    try {
      const staged = await stage(staging);
      const changing = [];
      const forced = new Set<string>();
      const lockNow = await store.read();
      for (const s of staged) {
        const active = await store.activeVersion(s.name);
        // A git source at another commit (or another archive) is the same version with other files: installed again over it.
        const moved = active === s.version && s.origin !== undefined && (lockNow.plugins[s.name]?.source?.commit !== s.origin.commit || lockNow.plugins[s.name]?.resolved !== s.resolved);
        if (moved) forced.add(s.name);
        // --force installs the asked-for version again over itself (dependencies that are in place stay).
        if (active !== s.version || moved || (request.force === true && !s.dependency)) changing.push(s);
      }
      if (changing.length === 0) return [];
      // A peer plugin's manifest as written (the staged one is shown so), so that the same declarations compare equal.
      const approval = await approvalFor(changing, async (name) => {
        if (!(await store.activeVersion(name))) return undefined;
        const manifest = await readManifest(store.activePath(name), undefined, true);
        return manifest && { manifest, npm: await readNpmDependencies(store.activePath(name), name).catch(() => NO_NPM_DEPENDENCIES) };
      });
      // An update that declares the same as before needs no new approval.
      if (!(reapproveOnly && approval.unchanged)) await approve(approval, request, again);
      // Approved: npm installs their npm dependencies, every one before any is moved into place (a failure changes nothing).
      const ready: Staged[] = [];
      for (const s of changing) ready.push(await withNpmDependencies(npmContext, s, request.signal));
      const changes: MarketChange[] = [];
      for (const s of ready) {
        const apply = () => commit(installContext, s, request.signal, { force: (request.force === true && !s.dependency) || forced.has(s.name), loadNew: request.loadNew !== false });
        changes.push(await (s.name === locked ? apply() : store.withPluginLock(s.name, limits.lockWaitMs, apply)));
        log.info(`installed ${s.name}@${s.version} from ${s.registry}`, { integrity: s.integrity });
      }
      return changes;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  };

  /** Stages each planned version in a folder of its own under `staging`, as the resolver chooses it. */
  const stager = (staging: string, request: InstallOptions) => {
    let index = 0;
    return async (planned: Planned): Promise<Staged> => {
      const dir = join(staging, String(index++));
      await mkdir(dir, { recursive: true });
      return fetchPlanned(installContext, planned, dir, request);
    };
  };

  /**
   * What `spec` names outside the registries, or undefined for a registry name or a tarball path:
   * `plugin@marketplace` (an added marketplace's entry), a git URL or GitHub's `owner/repo` (`#ref`),
   * an archive URL (`#sha256=<hex>`).
   */
  const fetchedSource = async (spec: string, registry: string | undefined): Promise<FetchedSource | undefined> => {
    const hash = spec.indexOf('#');
    const [base, fragment] = hash > 0 ? [spec.slice(0, hash), spec.slice(hash + 1)] : [spec, undefined];
    const at = base.lastIndexOf('@');
    // With --registry, name@x is always a registry's name and range or tag.
    if (at > 0 && registry === undefined && !base.includes('://') && !/^[\w.-]+@[\w.-]+:/.test(base)) {
      const records = await marketplaces.records();
      const market = base.slice(at + 1);
      if (records[market]) return { kind: 'entry', plugin: base.slice(0, at), marketplace: market, ...(fragment && { ref: fragment }) };
    }
    const sha = fragment?.startsWith('sha256=') ? fragment.slice('sha256='.length) : undefined;
    if (/^https?:\/\//i.test(base) && /\.(tgz|tar\.gz)$/i.test(new URL(base).pathname)) {
      if (!sha || !/^[0-9a-f]{64}$/i.test(sha)) {
        throw new PlinthError('PLN_E_MARKET_SOURCE', `${safeLine(base)} is an archive: plinth installs one only with its SHA-256 pinned`, {
          hint: `give its digest: \`plinth ext install ${safeLine(base)} --sha256 <64 hex digits>\` (\`sha256sum\` of the file its publisher names); nothing was fetched`,
          details: { step: 'resolve', source: base },
        });
      }
      return { kind: 'archive', url: new URL(base), sha256: sha.toLowerCase() };
    }
    const isGit = /^(https?|git|ssh|file):\/\//i.test(base) || /^git\+(https?|ssh|file):\/\//i.test(base) || /^[\w.-]+@[\w.-]+:[^/]/.test(base) || (GITHUB_REPO.test(base) && !base.startsWith('.') && !/\.(tgz|tar\.gz)$/.test(base));
    if (!isGit) return undefined;
    return { kind: 'git', url: gitUrlOf(base.replace(/^git\+/, '')), ...(fragment && { ref: fragment }) };
  };

  /** Installs a plugin fetched from git, a marketplace entry or an archive: fetched into staging, then the path every install takes. */
  const installFetched = async (source: FetchedSource, spec: string, request: InstallOptions, notes: MarketNote[]): Promise<InstallResult> => {
    const again = `plinth ext install ${spec}`;
    if (source.kind === 'entry') {
      const record = await marketplaces.get(source.marketplace);
      policy.check({ name: record.name, url: record.source.kind === 'path' ? record.source.path : record.source.url }, `marketplace "${record.name}"`);
      const catalogue = await marketplaces.catalogue(record);
      const entry = catalogue.plugins.find((p) => p.name === source.plugin);
      if (!entry) {
        const skipped = catalogue.skipped.find((s) => s.startsWith(`${source.plugin}: `));
        throw new PlinthError('PLN_E_MARKETPLACE_UNKNOWN', skipped ? `marketplace "${record.name}" lists ${safeLine(source.plugin)} with a source plinth cannot install: ${skipped}` : `marketplace "${record.name}" has no plugin "${safeLine(source.plugin)}"`, {
          hint: `\`plinth ext search ${safeLine(source.plugin)}\` lists what the registries and marketplaces have; \`plinth ext marketplace update ${record.name}\` fetches its catalogue again`,
          details: { step: 'resolve', marketplace: record.name, plugin: source.plugin },
        });
      }
      const npm = entry.source;
      if (typeof npm === 'object' && npm.source === 'npm') {
        // Through the registry code, from the registry the entry names (else the configured ones).
        const result = await service.install(`${npm.package}@${npm.version ?? 'latest'}`, { ...request, ...(npm.registry && { registry: npm.registry }) });
        const names = new Set(result.changes.map((c) => c.name));
        if (names.has(npm.package)) await store.update((data) => void (data.plugins[npm.package] && (data.plugins[npm.package]!.source = { kind: 'npm', url: npm.registry ?? result.changes.find((c) => c.name === npm.package)!.registry, marketplace: record.name })));
        return { changes: result.changes, notes: [...notes, ...result.notes] };
      }
      return installStagedFetch((staging) => stageEntry(entry, record.name, staging, request, source.ref, catalogue.pluginRoot), request, again, notes);
    }
    if (source.kind === 'archive') return installStagedFetch((staging) => fetchArchive(installContext, source.url, source.sha256, join(staging, 'archive'), request), request, again, notes);
    policy.check({ url: source.url }, `git repository ${safeLine(source.url)}`);
    policy.checkPinned(source.ref !== undefined && COMMIT.test(source.ref), `${safeLine(source.url)}${source.ref ? `#${safeLine(source.ref)}` : ''}`, `name the commit: \`plinth ext install ${safeLine(source.url)}#<40-hex commit id>\``);
    return installStagedFetch(async (staging) => {
      const checkout = join(staging, 'git');
      const commitId = await step('download', source.url, request.signal, () => cloneAt(source.url, checkout, source.ref, undefined, gitOptions(request.signal)));
      await refuseMarketplaceRepository(checkout, spec);
      return fetchFolder(installContext, checkout, join(staging, 'stage'), request, { kind: 'git', url: source.url, ...(source.ref && { ref: source.ref }), commit: commitId }, source.url);
    }, request, again, notes);
  };

  /** Fetches a marketplace entry's plugin (not an npm one) into `staging`. */
  const stageEntry = async (entry: CatalogueEntry, market: string, staging: string, request: InstallOptions, refOverride?: string, pluginRoot?: string, pin?: string): Promise<Staged> => {
    const record = await marketplaces.get(market);
    const src = entry.source;
    // A relative path string is a folder of the marketplace, below Claude Code's `metadata.pluginRoot` when it sets one.
    const local = typeof src === 'string' && !(GITHUB_REPO.test(src) && !src.startsWith('.')) ? (pluginRoot ? `${pluginRoot.replace(/\/+$/, '')}/${src}` : src) : typeof src === 'object' && src.source === 'local' ? src.path : undefined;
    if (local !== undefined) {
      const root = marketplaces.rootOf(record);
      const inside = insidePath(local);
      if (root === undefined) {
        throw new PlinthError('PLN_E_MARKET_SOURCE', `${entry.name}@${market}: its source is the folder "${safeLine(local)}" of the marketplace, and marketplace "${market}" was added from the URL of its marketplace.json: there is no repository to take the folder from`, {
          hint: 'add the marketplace from its git repository instead (`plinth ext marketplace add <git url | owner/repo>`)',
          details: { step: 'resolve', marketplace: market, plugin: entry.name },
        });
      }
      if (inside === undefined) throw new PlinthError('PLN_E_MARKET_SOURCE', `${entry.name}@${market}: its source "${safeLine(local)}" leads outside the marketplace: not installed`, { hint: 'ask the marketplace\'s publisher to fix the entry', details: { step: 'resolve', marketplace: market, plugin: entry.name } });
      const folder = join(root, inside);
      return fetchFolder(installContext, folder, staging, request, { kind: 'local', url: record.source.kind === 'git' ? record.source.url : root, ...(record.commit && { commit: record.commit }), path: inside, marketplace: market }, `${entry.name}@${market}`, root);
    }
    if (typeof src === 'object' && src.source === 'archive') return fetchArchive(installContext, new URL(src.url), src.sha256.toLowerCase(), staging, request, market);
    if (typeof src === 'object' && src.source === 'npm') throw new Error('npm entries are installed through the registries');
    // git: GitHub's owner/repo (a string or a `github` source), a git URL, or a subfolder of one.
    if (typeof src === 'object' && src.source === 'local') throw new Error('local entries are read in the marketplace');
    const git = typeof src === 'string' ? { url: gitUrlOf(src) } : src.source === 'github' ? { url: gitUrlOf(src.repo), ref: src.ref, sha: src.sha } : { url: gitUrlOf(src.url), ref: src.ref, sha: src.sha, path: src.path };
    const ref = refOverride ?? git.ref;
    policy.check({ url: git.url }, `git repository ${safeLine(git.url)} (${entry.name}@${market})`);
    policy.checkPinned(pin !== undefined || (refOverride === undefined ? git.sha !== undefined : COMMIT.test(refOverride)), `${entry.name}@${market}`, 'ask the marketplace\'s publisher to pin a `sha` in its entry, or install a commit: `plinth ext install <plugin>@<marketplace>#<commit id>`');
    const sub = git.path === undefined ? '' : insidePath(git.path);
    if (sub === undefined) throw new PlinthError('PLN_E_MARKET_SOURCE', `${entry.name}@${market}: its path "${safeLine(git.path ?? '')}" leads outside the repository: not installed`, { hint: 'ask the marketplace\'s publisher to fix the entry', details: { step: 'resolve', marketplace: market, plugin: entry.name } });
    const checkout = join(staging, 'git');
    const commitId = await step('download', git.url, request.signal, () => cloneAt(git.url, checkout, ref, pin ?? (refOverride === undefined ? git.sha : undefined), gitOptions(request.signal)));
    return fetchFolder(installContext, sub === '' ? checkout : join(checkout, sub), join(staging, 'stage'), request, { kind: 'git', url: git.url, ...(ref && { ref }), commit: commitId, ...(sub && { path: sub }), marketplace: market }, `${entry.name}@${market}`, checkout);
  };

  /** The path every install takes once `fetch` staged the plugin: its plugin dependencies from the registries, approval, npm, commit. */
  const installStagedFetch = async (fetch: (staging: string) => Promise<Staged>, request: InstallOptions, again: string, notes: MarketNote[], reapproveOnly = false): Promise<InstallResult> => {
    const changes = await installStaged(async (staging) => {
      const fetched = await fetch(join(staging, 'fetched'));
      const npmSource = (() => {
        try {
          return registryFor(registries(request.registry), fetched.name);
        } catch {
          return undefined;
        }
      })();
      const staged: Staged = { ...fetched, ...(npmSource && { source: npmSource }) };
      const deps: Staged[] = [];
      const stage = stager(staging, request);
      for (const [dep, range] of Object.entries(staged.manifest.dependencies)) {
        const present = await presentWith(deps);
        deps.push(...(await planInstall(planning(request, notes), registries(request.registry), { name: dep, range }, present, stage, staged)));
      }
      return [...deps, staged];
    }, request, again, reapproveOnly);
    return { changes, notes };
  };

  /** Where a git-sourced entry would update to (git-update.ts), fetched in a staging folder removed after. */
  const followOf = async (entry: LockEntry, signal: AbortSignal | undefined): Promise<GitFollow> => {
    const scratch = await store.stage();
    try {
      return await followGit(entry, { marketplaces, policy, git: gitOptions(signal), scratch: scratchIn(scratch) });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  };

  /**
   * Under `minReleaseAgeDays`: the version `range` picks for `entry` among those its registry says were published
   * before `releasedBy` (its full packument's `time`; a version without one counts as too young), or undefined (and
   * a `held` note) when that is not newer than the installed one while a younger one is.
   */
  const versionOldEnough = async (registry: Registry, entry: LockEntry, range: string, releasedBy: number, signal: AbortSignal | undefined, notes: MarketNote[]): Promise<string | undefined> => {
    const context = documents(signal, notes, true);
    const packument = await fetchPackument(context, registry, entry.name);
    const full = JSON.parse(await cache.get(registry, packumentUrl(registry.url.href, entry.name), { ...context.limits, maxBytes: 32 * 1024 * 1024, accept: 'application/json', step: 'resolve', revalidate: true }, notes)) as { time?: Record<string, string> };
    const young = new Set(Object.keys(packument.versions).filter((v) => !(Date.parse(full.time?.[v] ?? '') <= releasedBy)));
    const newest = safePick(packument, range, registry, new Set());
    if (newest === undefined || !semver.gt(newest, entry.version) || !young.has(newest)) return range;
    const allowed = safePick(packument, semver.validRange(range) ? range : '*', registry, young);
    if (allowed !== undefined && semver.gt(allowed, entry.version)) return allowed;
    notes.push({ registry: registry.name, kind: 'held', message: `${entry.name} not updated to ${newest}: published ${full.time?.[newest] ?? 'at a time the registry does not give'}, younger than the ${policy.settings.minReleaseAgeDays} day(s) the setting plugins.marketplace.minReleaseAgeDays requires` });
    return undefined;
  };

  /** `ext update` of a plugin installed from git or a marketplace's folder: what followOf found, installed as any fetched source. */
  const updateGit = async (entry: LockEntry, request: InstallOptions, notes: MarketNote[]): Promise<MarketChange[]> => {
    const follow = await followOf(entry, request.signal);
    if (follow.status === 'current' || follow.status === 'pinned') return [];
    if (follow.status === 'unfollowed') throw notUpdatable(entry);
    if (follow.status === 'held') {
      notes.push({ registry: entry.registry, kind: 'held', message: `${entry.name} not updated: ${follow.reason ?? ''}` });
      return [];
    }
    if (follow.status === 'rewritten' && request.acceptRewrite !== true) {
      throw new PlinthError('PLN_E_MARKET_GIT_REWRITTEN', `${entry.name}: ${follow.reason ?? 'its ref was rewritten'}: not updated`, {
        plugin: entry.name,
        hint: `check with the publisher why it moved; to take it anyway: \`plinth ext update ${entry.name} --accept-rewrite\` (what it declares is shown again when it changed)`,
        details: { step: 'resolve', url: follow.url, ...(follow.ref && { ref: follow.ref }), installed: entry.source?.commit, commit: follow.commit },
      });
    }
    const again = `plinth ext update ${entry.name}${follow.status === 'rewritten' ? ' --accept-rewrite' : ''}`;
    const market = follow.market;
    const stage = market
      ? (staging: string) => stageEntry(market.entry, market.name, staging, request, undefined, market.catalogue.pluginRoot, follow.commit)
      : async (staging: string) => {
          const url = follow.url!;
          const checkout = join(staging, 'git');
          const commitId = await step('download', url, request.signal, () => cloneAt(url, checkout, follow.ref, follow.commit, gitOptions(request.signal)));
          return fetchFolder(installContext, checkout, join(staging, 'stage'), request, { kind: 'git', url, ...(follow.ref && { ref: follow.ref }), commit: commitId }, url);
        };
    return (await installStagedFetch(stage, request, again, notes, true)).changes;
  };

  const service: MarketplaceService = {
    async search(text, { signal, limit = 20, offset = 0, registry: override } = {}) {
      const notes: MarketNote[] = [];
      const query = prepareQuery(text);
      const hits: SearchHit[] = [];
      const seen = new Set<string>();
      const list = registries(override).filter((r) => r.namedOnly !== true);
      // One more than the page, to tell whether another page follows; each registry ranks its own, merged below.
      const wanted = offset + limit + 1;
      if (list.length === 0) {
        throw new PlinthError('PLN_E_MARKET_REGISTRY_CONFIG', 'no registry is configured to search ("registries" is empty)', {
          hint: 'add one to "registries" in your settings.json, e.g. [{ "name": "local", "url": "http://127.0.0.1:4873" }], or remove "registries" to use plinth\'s embedded registry (`--registry plinth` searches it alone)',
          details: { step: 'search' },
        });
      }
      const failures: unknown[] = [];
      for (const registry of list) {
        let response;
        try {
          response = await fetchSearchObjects(documents(signal, notes), registry, text, wanted);
        } catch (error) {
          if (!isPlinthError(error) || !/^PLN_E_MARKET_(REGISTRY_UNREACHABLE|REGISTRY_RESPONSE|NOT_FOUND)$/.test(error.code)) throw error;
          // One registry down does not stop the others' results; every one down is an error.
          failures.push(error);
          if (failures.length === list.length) throw error;
          notes.push({ registry: registry.name, kind: 'unreachable', message: error.message });
          continue;
        }
        for (const { package: pkg } of response) {
          if (seen.has(pkg.name)) continue; // the first registry that has a name is the one install uses
          const score = searchScore(query, prepareSearchDoc(pkg));
          if (score <= 0) continue;
          seen.add(pkg.name);
          hits.push({ name: pkg.name, version: searchPackageVersion(pkg) ?? '', description: pkg.description ?? '', keywords: pkg.keywords ?? [], registry: registry.name, score });
        }
      }
      // The added marketplaces' catalogues, beside the registries (not with --registry): each hit names its marketplace.
      if (override === undefined) {
        const added = await marketplaces.list().catch((error: unknown) => {
          // A damaged list of marketplaces does not hide the registries' results: said in a note.
          notes.push({ registry: 'marketplaces', kind: 'unreachable', message: (error as Error).message });
          return [];
        });
        for (const info of added) {
          let catalogue;
          try {
            catalogue = await marketplaces.catalogue(info);
          } catch (error) {
            notes.push({ registry: `marketplace:${info.name}`, kind: 'unreachable', message: (error as Error).message });
            continue;
          }
          for (const entry of catalogue.plugins) {
            const score = searchScore(query, prepareSearchDoc({ name: entry.name, description: entry.description, keywords: [...entry.keywords] }));
            if (score <= 0) continue;
            hits.push({ name: entry.name, version: entry.version ?? '', description: entry.description, keywords: [...entry.keywords], registry: `marketplace:${info.name}`, score });
          }
        }
      }
      hits.sort(compareSearchResults);
      return { query: text, hits: hits.slice(offset, offset + limit), more: hits.length > offset + limit, notes };
    },

    async install(spec, request = {}) {
      const notes: MarketNote[] = [];
      const fetched = await fetchedSource(spec, request.registry);
      if (fetched) return installFetched(fetched, spec, request, notes);
      const local = isTarballPath(spec);
      const unsupported = unsupportedSource(spec, local);
      if (unsupported) throw unsupported;
      const again = `plinth ext install ${spec}${request.registry ? ` --registry ${request.registry}` : ''}`;
      if (local) {
        const file = isAbsolute(spec) ? spec : resolvePath(spec);
        // Its npm dependencies come from the registry its name goes to (installStagedFetch).
        return installStagedFetch((staging) => fetchLocal(installContext, file, staging, request), request, again, notes);
      }
      const target = parseSpec(spec);
      const changes = await store.withPluginLock(target.name, limits.lockWaitMs, async () => {
        const context = planning(request, notes);
        // The target is committed under the lock already held; its dependencies take their own.
        return installStaged(
          async (staging) => {
            const stage = stager(staging, request);
            return planInstall(context, registries(request.registry), target, await present(), stage).catch(async (error: unknown) => {
              // A cached document may predate the version asked for: ask the registry again before saying there is none.
              if (!isPlinthError(error) || (error.code !== 'PLN_E_MARKET_NO_MATCH' && error.code !== 'PLN_E_MARKET_NOT_FOUND') || error.details?.step !== 'resolve') throw error;
              return planInstall({ ...context, revalidate: true }, registries(request.registry), target, await present(), stage);
            });
          },
          request,
          again,
          false,
          target.name,
        );
      });
      return { changes, notes };
    },

    async outdated({ signal } = {}) {
      const notes: MarketNote[] = [];
      const lock = await store.read();
      const plugins: OutdatedEntry[] = [];
      /** What could not be checked is said to be so, never counted as up to date. */
      const unchecked: OutdatedResult['unchecked'] = [];
      const registryOrSkip = (entry: LockEntry): Registry | undefined => {
        try {
          return registryOf(entry);
        } catch (error) {
          if (!isPlinthError(error) || error.code !== 'PLN_E_MARKET_REGISTRY_CONFIG') throw error;
          unchecked.push({ name: entry.name, version: entry.version, registry: entry.registry, reason: error.message });
          return undefined;
        }
      };
      for (const entry of Object.values(lock.plugins).filter(fetchedOutside)) {
        let follow: GitFollow;
        try {
          follow = await followOf(entry, signal);
        } catch (error) {
          // Its repository or marketplace unreachable, gone, or refused by the policy: said, never counted as up to date.
          if (!isPlinthError(error)) throw error;
          unchecked.push({ name: entry.name, version: entry.version, registry: entry.registry, reason: error.message });
          continue;
        }
        if (follow.status === 'unfollowed') notes.push({ registry: entry.registry, kind: 'unchecked', message: `${entry.name}@${entry.version} was installed from an archive (${entry.resolved}): not checked for updates ${NOT_FOLLOWED}` });
        else if (follow.status === 'held') notes.push({ registry: entry.registry, kind: 'held', message: `${entry.name}: ${follow.reason ?? ''}` });
        else if (follow.status === 'newer' || follow.status === 'rewritten') {
          const label = follow.version && follow.version !== entry.version ? follow.version : follow.ref && follow.ref !== entry.source?.ref ? follow.ref : follow.commit!.slice(0, 12);
          plugins.push({
            name: entry.name,
            current: entry.version,
            wanted: label,
            latest: label,
            range: entry.source?.ref ?? 'HEAD',
            registry: entry.source?.marketplace ? `marketplace:${entry.source.marketplace}` : 'git',
            ...(entry.source?.commit && { commit: entry.source.commit }),
            ...(follow.commit && { newCommit: follow.commit }),
            ...(follow.ref && { newRef: follow.ref }),
            status: follow.status,
            ...(follow.status === 'rewritten' && follow.reason && { reason: follow.reason }),
          });
        }
      }
      const checkable = Object.values(lock.plugins).filter((entry) => entry.registry !== 'file' && !fetchedOutside(entry) && registryOrSkip(entry) !== undefined);
      // Revocations first: a revoked version is never offered as an update.
      const context = reading(signal, notes);
      const revoked = await revocationsFor(checkable, context);
      for (const entry of checkable) {
        const registry = registryOf(entry);
        const trust = await context.trust.forRegistry(context, registry).catch(() => undefined);
        const withdrawn = new Set((trust?.revoked ?? []).filter((r) => r.name === entry.name).map((r) => r.version));
        let packument;
        try {
          packument = await fetchPackument(documents(signal, notes, true), registry, entry.name);
        } catch (error) {
          // One plugin's registry down (and not cached) does not hide the others' updates.
          if (!isPlinthError(error) || !error.code.startsWith('PLN_E_MARKET_')) throw error;
          notes.push({ registry: registry.name, kind: 'unreachable', message: `${entry.name}: ${error.message}` });
          unchecked.push({ name: entry.name, version: entry.version, registry: registry.name, reason: error.message });
          continue;
        }
        const wanted = safePick(packument, semver.validRange(entry.range) ? entry.range : (packument['dist-tags'][entry.range] ?? entry.version), registry, withdrawn) ?? entry.version;
        const latest = safePick(packument, 'latest', registry, withdrawn) ?? safePick(packument, '*', registry, withdrawn) ?? entry.version;
        if (semver.gt(wanted, entry.version) || semver.gt(latest, entry.version)) plugins.push({ name: entry.name, current: entry.version, wanted, latest, range: entry.range, registry: registry.name });
      }
      return { plugins, revoked, unchecked, notes };
    },

    async update(names, request = {}) {
      const notes: MarketNote[] = [];
      const lock = await store.read();
      const chosen = names.length === 0 ? Object.values(lock.plugins).filter((e) => e.registry !== 'file' && (!fetchedOutside(e) || followable(e))) : names.map((name) => lock.plugins[name] ?? notInstalled(name));
      const changes: MarketChange[] = [];
      for (const entry of chosen) if (fetchedOutside(entry) && !followable(entry)) throw notUpdatable(entry);
      for (const entry of chosen) {
        if (fetchedOutside(entry)) {
          try {
            changes.push(...(await updateGit(entry, request, notes)));
          } catch (error) {
            // Updating everything: a source that cannot be followed now (rewritten, unreachable, refused by the policy)
            // is said with its fix, and the others are still updated. Named on the command line, it fails the command.
            if (names.length > 0 || !isPlinthError(error) || !UNFOLLOWED_NOW.has(error.code)) throw error;
            notes.push({ registry: entry.registry, kind: error.code === 'PLN_E_MARKET_GIT' ? 'unreachable' : 'held', message: `${entry.name} not updated: ${error.message}${error.hint ? `; ${error.hint}` : ''}` });
          }
          continue;
        }
        let range = request.latest ? 'latest' : entry.range;
        const releasedBy = policy.releasedBy();
        if (releasedBy !== undefined) {
          // A minimum release age: the newest version the range allows among those published long enough ago, else none.
          const registry = request.registry !== undefined ? registries(request.registry)[0]! : registryOf(entry);
          const oldEnough = await versionOldEnough(registry, entry, range, releasedBy, request.signal, notes);
          if (oldEnough === undefined) continue;
          range = oldEnough;
        }
        const again = `plinth ext update ${entry.name}${request.latest ? ' --latest' : ''}`;
        const done = await store.withPluginLock(entry.name, limits.lockWaitMs, async () => {
          const list = request.registry !== undefined ? registries(request.registry) : [registryOf(entry)];
          const others = new Map([...(await present())].filter(([name]) => name !== entry.name));
          return installStaged(
            async (staging) => {
              const plan = await planInstall(planning(request, notes, true), list, { name: entry.name, range }, others, stager(staging, request));
              return plan.map((p) => (p.name === entry.name ? { ...p, range: request.latest ? `^${p.version}` : entry.range, dependency: entry.dependency === true } : p));
            },
            request,
            again,
            true,
            entry.name,
          );
        });
        changes.push(...done);
      }
      return { changes, notes };
    },

    async rollback(name, options = {}) {
      const notes: MarketNote[] = [];
      return store.withPluginLock(name, limits.lockWaitMs, async () => {
        const entry = (await store.read()).plugins[name] ?? notInstalled(name);
        const previous = entry.previous;
        if (!previous) {
          throw new PlinthError('PLN_E_MARKET_NO_PREVIOUS', `${name}@${entry.version} has no previous version to go back to`, { plugin: name, hint: `install the version you want: \`plinth ext install ${name}@<version>\``, details: { step: 'rollback' } });
        }
        if (previous.revoked) {
          throw new PlinthError('PLN_E_MARKET_REVOKED', `rollback: ${name}@${previous.version} was revoked by its registry (${previous.revoked.reason}): not rolled back to`, { plugin: name, hint: previous.revoked.use ? `use ${previous.revoked.use} instead: \`plinth ext install ${name}@${previous.revoked.use}\`` : `\`plinth ext outdated\` shows what to move to`, details: { step: 'rollback', version: previous.version, reason: previous.revoked.reason, ...(previous.revoked.use && { use: previous.revoked.use }) } });
        }
        // Revoked since it was last checked? Its registry's revocations are asked now (as an install would), before anything changes.
        await refuseRevoked(previous, reading(options.signal, notes));
        const dir = store.versionDir(name, previous.version);
        const manifest = await readManifest(dir);
        if (!manifest) {
          throw new PlinthError('PLN_E_MARKET_NO_PREVIOUS', `${name}@${previous.version} is recorded as the previous version, but its folder ${dir} is gone`, { plugin: name, hint: `install it again: \`plinth ext install ${name}@${previous.version}\``, details: { step: 'rollback' } });
        }
        const staged: Staged = { name, version: previous.version, dir, manifest, integrity: previous.integrity, range: previous.range, registry: previous.registry, ...(previous.registryUrl && { registryUrl: previous.registryUrl }), resolved: previous.resolved, dependency: previous.dependency === true, ...(previous.signature && { signature: previous.signature }), ...(previous.source && { origin: previous.source }), tree: previous.tree ? { kind: 'recorded', tree: previous.tree } : { kind: 'unrecorded' } };
        // The folder is already in place: commit moves nothing and switches the link.
        const change = await commit(installContext, staged, options.signal);
        return { changes: [change], notes } satisfies InstallResult;
      });
    },

    async uninstall(name) {
      return store.withPluginLock(name, limits.lockWaitMs, async () => {
        const lock = await store.read();
        const entry = lock.plugins[name] ?? notInstalled(name);
        const dependents: string[] = [];
        for (const other of Object.keys(lock.plugins)) {
          if (other === name) continue;
          const manifest = await readManifest(store.activePath(other));
          if (manifest && manifest.dependencies[name] !== undefined) dependents.push(`${other}@${manifest.version}`);
        }
        if (dependents.length > 0) {
          throw new PlinthError('PLN_E_MARKET_DEPENDED_ON', `${name} is not removed: ${dependents.join(', ')} depend${dependents.length === 1 ? 's' : ''} on it`, {
            plugin: name,
            hint: `uninstall ${dependents.map((d) => d.split('@').slice(0, -1).join('@')).join(', ')} first`,
            details: { step: 'uninstall', dependents },
          });
        }
        await store.deactivate(name);
        await store.update((data) => void delete data.plugins[name]);
        await kernel.plugins.remove(name).catch(() => undefined); // not running, or the kernel is not booted
        const removed = [store.activePath(name)];
        await store.prune(name, []);
        removed.push(store.versionDir(name, entry.version));
        return { name, version: entry.version, removed };
      });
    },

    installed: (): Promise<LockFile> => store.read(),

    async setAutoUpdate(name, on) {
      const data = await store.update((lock) => {
        const entry = lock.plugins[name] ?? notInstalled(name);
        if (on) entry.autoUpdate = true;
        else delete entry.autoUpdate;
      });
      return data.plugins[name]!;
    },

    async verify(names, { signal } = {}) {
      const notes: MarketNote[] = [];
      const lock = await store.read();
      const chosen = names.length === 0 ? Object.values(lock.plugins) : names.map((name) => lock.plugins[name] ?? notInstalled(name));
      const revoked = await revocationsFor(chosen, reading(signal, notes));
      const linked = new Set(kernel.status().filter((p) => p.linked === true).map((p) => p.name));
      const plugins = [];
      for (const entry of chosen) plugins.push(await verifyInstalled(store, entry, { linked: linked.has(entry.name), revoked: revoked.find((r) => r.name === entry.name) }));
      return { plugins, revoked, notes };
    },
  };
  return service;
}

function markOf(entry: RevokedEntry | undefined): LockEntry['revoked'] {
  return entry ? { reason: entry.reason, ...(entry.use && { use: entry.use }) } : undefined;
}

/** The version `range` picks, never a revoked one (`withdrawn`). */
function safePick(packument: Parameters<typeof pickVersion>[0], range: string, registry: Registry, withdrawn: ReadonlySet<string>): string | undefined {
  try {
    const version = pickVersion(packument, range, registry, undefined, withdrawn).version;
    return withdrawn.has(version) ? undefined : version;
  } catch {
    return undefined;
  }
}

function notInstalled(name: string): never {
  throw new PlinthError('PLN_E_MARKET_NOT_INSTALLED', `"${name}" was not installed with plinth ext install`, { plugin: name, hint: '`plinth ext outdated` and plugins.lock.json list what is installed; builtin and linked plugins are managed otherwise', details: { step: 'resolve' } });
}

/** `./x.tgz`, `/abs/x`, `x.tar.gz`: a file; anything else is a name (`@scope/name@range`). */
function isTarballPath(spec: string): boolean {
  return /\.(tgz|tar\.gz)$/.test(spec) || spec.startsWith('.') || isAbsolute(spec);
}

/** What `ext install` names outside the registries. */
type FetchedSource =
  | { readonly kind: 'entry'; readonly plugin: string; readonly marketplace: string; readonly ref?: string }
  | { readonly kind: 'git'; readonly url: string; readonly ref?: string }
  | { readonly kind: 'archive'; readonly url: URL; readonly sha256: string };

/** Installed from git, a marketplace's folder or an archive: not updated nor checked against a registry. */
function fetchedOutside(entry: { source?: LockEntry['source'] }): boolean {
  return entry.source !== undefined && entry.source.kind !== 'npm';
}

/** Installed from git or a marketplace's folder: `outdated` and `update` follow it (git-update.ts). */
function followable(entry: { source?: LockEntry['source'] }): boolean {
  return entry.source?.kind === 'git' || entry.source?.kind === 'local';
}

function notUpdatable(entry: LockEntry): PlinthError {
  const from = entry.source?.marketplace ? `${entry.name}@${entry.source.marketplace}` : `${entry.source?.url ?? entry.resolved}${entry.source?.ref ? `#${entry.source.ref}` : ''}`;
  return new PlinthError('PLN_E_MARKET_SOURCE', `${entry.name} was installed from an archive (${safeLine(entry.resolved)}), pinned by its digest: ext update has nothing to follow`, {
    plugin: entry.name,
    hint: `install another archive (or the marketplace's entry once it names a new one) to move: \`plinth ext install ${safeLine(from)}\``,
    details: { step: 'resolve', source: entry.source },
  });
}

/**
 * A repository given to `ext install` that is a marketplace (a catalogue, and no plugin manifest of
 * plinth's or a peer's at its root): said so, with the commands that install from it.
 */
async function refuseMarketplaceRepository(checkout: string, spec: string): Promise<void> {
  const has = (path: string) => stat(join(checkout, path)).then(() => true, () => false);
  const plugin = (await Promise.all(['manifest.json', '.claude-plugin/plugin.json', 'gemini-extension.json', '.codex-plugin/plugin.json'].map(has))).some(Boolean);
  if (plugin) return;
  const catalogue = (await Promise.all(CATALOGUE_FILES.map((c) => has(c.path)))).some(Boolean);
  if (!catalogue) return;
  throw new PlinthError('PLN_E_MARKET_SOURCE', `${safeLine(spec)} is a plugin marketplace, not a plugin: nothing was installed`, {
    hint: `add it, then install one of its plugins: \`plinth ext marketplace add ${safeLine(spec)}\`, then \`plinth ext install <plugin>@<marketplace>\` (\`plinth ext search\` lists them)`,
    details: { step: 'validate', source: spec },
  });
}
