/**
 * The kernel: finds plugins, resolves them by semver, loads them one at a time
 * in dependency order, answers events and service requests, and shuts them down
 * in reverse. It knows nothing of hooks, MCP or marketplaces: plugins do.
 */
import { resolve as resolvePath } from 'node:path';
import type { CommandRegistry, CommandSpec } from '../sdk/commands.js';
import { PlinthError, describeCause, isPlinthError, wrapPluginError } from '../sdk/errors.js';
import { canonicalEvent, type Decision, type EventHandler } from '../sdk/events.js';
import { type LogLevel, type LogSink, createLogger, parseLogLevel } from '../internal/terminal/log.js';
import type {
  ConfigLayerView,
  Disposer,
  KernelInspection,
  LivePlugins,
  LiveReport,
  Logger,
  PluginInfo,
  PluginState,
  PluginStatus,
  ReadyInfo,
  SettingsProblem,
  StatusSection,
  TapOptions,
  Teardown,
} from '../sdk/plugin.js';
import { Redactor, redactError } from '../internal/text/redact.js';
import { isStoredSettingRef } from '../internal/settings/stored.js';
import type { ServiceName, ServiceType } from '../sdk/services.js';
import { KERNEL_API_VERSION } from '../sdk/version.js';
import { type Config, disabledPlugins, loadConfig, pluginDirScopes, settingsFiles, timeouts } from './config/load.js';
import { fillStoredSettings, hasStoredSettings, redactSettings, resolvePluginSettings, sensitiveValues } from './config/plugin-settings.js';
import { DEFAULT_TIMEOUTS, type Timeouts } from './config/schema.js';
import { knownKeys, unknownKeys } from './config/unknown-keys.js';
import { restrictWorkspace, workspacePolicy } from './config/workspace-policy.js';
import { type DiscoverySource, discoverPlugins } from './discovery.js';
import { EventBus, rejectUnknown } from './events.js';
import { blockGuardedEvents, guardedEvents } from './guards.js';
import { type LifecycleHooks, createLifecycleHooks } from './lifecycle.js';
import { loadPluginCode } from './loader.js';
import { builtinPluginsDir, defaultHome } from './paths.js';
import { createCapabilities, optionalChecker } from './capabilities.js';
import { type PluginApi, createPluginApi } from './plugin-api.js';
import { resolve } from './resolve/index.js';
import { HOST, ServiceRegistry, serviceChoices } from './services.js';
import { type InlinePlugin, inlineCandidate, parseManifestOrThrow, withoutShadowing } from './candidates.js';
import { runSetup } from './setup.js';
import { type ShutdownReport, runShutdown, stopOne } from './shutdown.js';
import { LiveSet, isRunning, sameCandidate } from './live.js';
import { callTapsOf } from './taps.js';
import { withTimeout } from './timeout.js';
import { type Candidate, PROJECT_SOURCES, type PluginSource, type Resolution } from './types.js';

export interface KernelOptions {
  /** The user folder; default `PLINTH_HOME`, else `~/.plinth`. */
  home?: string;
  /** The project folder whose `.plinth/` holds workspace settings and plugins; default the current directory. */
  workspace?: string;
  /** A named profile from settings; default `PLINTH_PROFILE`. */
  profile?: string;
  /** More plugin folders (the CLI's `--plugin-dir`), highest precedence; source `path`, which the trust plugin does not check. */
  pluginDirs?: readonly string[];
  /** Load the builtin plugins (default true). */
  builtin?: boolean;
  /** Plugins given in memory, as if found in a plugin folder. */
  plugins?: readonly InlinePlugin[];
  /** The environment to read `PLINTH_*` and settings' `envVar`s from; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Default `PLINTH_LOG`, else `warn`. */
  logLevel?: LogLevel;
  /** Receives log lines (already redacted); default stderr. */
  logSink?: LogSink;
}

/** Where each plugin is at, with its code and what it registered. */
interface PluginRecord {
  readonly info: PluginInfo;
  readonly candidate: Candidate | undefined;
  state: PluginState;
  error?: PlinthError;
  settings?: Record<string, unknown>;
  loadMs?: number;
  activation?: Promise<void>;
  api?: PluginApi;
  teardown?: Teardown;
  abort: AbortController;
  /** Removes the blocking handlers of the events this plugin guards, set while it is not running. */
  guardOff?: Disposer | undefined;
  /** Eager, but left waiting by a scoped boot (`boot({ only })`): it starts as a lazy plugin does. */
  deferred?: true;
}

/** A command a resolved plugin declares, from its manifest. */
export interface DeclaredCommand {
  readonly name: string;
  readonly summary: string;
  readonly usage?: string;
  readonly plugin: string;
  /** Runs with only its plugin set up, no boot (builtin plugins only). */
  readonly standalone?: true;
  /** Runs after a boot of its plugin, its dependencies and the guards: `boot({ only: [plugin] })`. */
  readonly boot?: 'own';
}

/** What `boot` sets up. */
export interface BootOptions {
  /** Only these plugins, their dependencies and the guards; the other eager plugins wait until they are used. */
  readonly only?: readonly string[];
}

/** What boot found and did. */
export interface BootReport extends ReadyInfo {
  /** Manifests that could not be read or validated. */
  readonly invalid: readonly PlinthError[];
  readonly config: Pick<Config, 'files' | 'profile'>;
}

/** A command registered by a plugin, with its owner. */
export interface RegisteredCommand extends CommandSpec {
  readonly plugin: string;
  readonly summary: string;
}

export type { InlinePlugin, ShutdownReport };

export class Kernel {
  readonly apiVersion = KERNEL_API_VERSION;
  /** Lifecycle hooks (tapable), for the host to tap directly. */
  readonly hooks: LifecycleHooks = createLifecycleHooks();
  /** Redacts sensitive setting values from any text or value. */
  readonly redactor = new Redactor();
  readonly log: Logger & { child(scope: string): Logger };
  /** Adds, removes and replaces plugins while the kernel runs (see live.ts). */
  readonly plugins: LivePlugins;

  readonly home: string;
  readonly workspace: string;

  private readonly env: Record<string, string | undefined>;
  private readonly events: EventBus;
  private readonly records = new Map<string, PluginRecord>();
  /** Active plugins in the order their setup finished; shutdown walks it backwards. */
  private readonly loadOrder: PluginRecord[] = [];
  private readonly lazyByEvent = new Map<string, string[]>();
  private services: ServiceRegistry | undefined;
  private timeouts: Timeouts = DEFAULT_TIMEOUTS;
  private configState: Config | undefined;
  private resolutionState: Resolution | undefined;
  private preparing: Promise<Resolution> | undefined;
  private started = 0;
  private booting: Promise<BootReport> | undefined;
  private closing: Promise<ShutdownReport> | undefined;
  private closed = false;
  /** The settings as plugins see them: other plugins' sensitive values redacted. */
  private pluginConfig: Readonly<Record<string, unknown>> = {};
  private pluginLayers: readonly ConfigLayerView[] = [];
  private serving: Promise<void> | undefined;
  /** Warnings about the settings files (values ignored, unknown keys), found by prepare. */
  private readonly configProblemList: PlinthError[] = [];
  private sources: DiscoverySource[] = [];
  private inline: Candidate[] = [];
  private readonly live = new LiveSet();
  /** Set once `ready` fires: a plugin that starts later gets its own `ready` (and `serve`) taps called, and others hear of it through `manifest`. */
  private readyInfo: ReadyInfo | undefined;
  private served = false;

  constructor(private readonly options: KernelOptions = {}) {
    this.env = options.env ?? process.env;
    this.home = options.home ? resolvePath(options.home) : defaultHome(this.env);
    this.workspace = resolvePath(options.workspace ?? process.cwd());
    this.log = createLogger('kernel', {
      level: options.logLevel ?? parseLogLevel(this.env.PLINTH_LOG, 'warn'),
      ...(options.logSink && { sink: options.logSink }),
      redact: (text) => this.redactor.text(text),
    });
    this.events = new EventBus({
      timeoutMs: DEFAULT_TIMEOUTS.event,
      report: (error) => this.reportError(error),
      redact: (text) => this.redactor.text(text),
    });
    this.plugins = this.live.api({
      reconcile: (force) => this.reconcile(force),
      folders: () => this.sources.filter((s) => s.source !== 'builtin'),
      assertRunning: () => {
        if (this.closing) throw new PlinthError('PLN_E_KERNEL_CLOSED', 'the kernel is shutting down: plugins cannot change now');
        if (!this.readyInfo) throw new PlinthError('PLN_E_KERNEL_STATE', 'plugins can be added, removed and replaced once the kernel has booted', { hint: 'await kernel.boot() first' });
      },
      dirOf: (name) => this.records.get(name)?.info.dir || undefined,
      sourceOf: (name) => this.records.get(name)?.info.source,
    });
  }

  /** The merged settings; available after `prepare`. */
  get config(): Config {
    if (!this.configState) throw notReady('config');
    return this.configState;
  }

  /** The resolution; available after `prepare`. */
  get resolution(): Resolution {
    if (!this.resolutionState) throw notReady('resolution');
    return this.resolutionState;
  }

  /** Event hooks (tapable AsyncSeriesWaterfallHooks), for interceptors. */
  get eventHooks(): EventBus['hooks'] {
    return this.events.hooks;
  }

  /**
   * Reads settings and every manifest and resolves them; imports no plugin code.
   * Throws PLN_E_CONFIG_* when settings are invalid.
   */
  prepare(): Promise<Resolution> {
    this.preparing ??= this.doPrepare();
    return this.preparing;
  }

  private async doPrepare(): Promise<Resolution> {
    this.started = performance.now();
    const loaded = await this.loadSettings();

    const sources: Array<{ dir: string; source: PluginSource }> = [];
    if (this.options.builtin !== false) sources.push({ dir: builtinPluginsDir(), source: 'builtin' });
    sources.push({ dir: resolvePath(this.home, 'plugins'), source: 'user' });
    sources.push({ dir: resolvePath(this.workspace, '.plinth', 'plugins'), source: 'workspace' });
    // A folder named in a settings file counts as that file's source; only the
    // command line (or the host's own `pluginDirs`) names `path` folders.
    for (const { dir, scope } of pluginDirScopes(loaded)) sources.push({ dir: resolvePath(dir), source: scope });
    for (const dir of this.options.pluginDirs ?? []) sources.push({ dir: resolvePath(dir), source: 'path' });
    this.sources = sources;
    this.inline = (this.options.plugins ?? []).map((plugin) => inlineCandidate(plugin));
    const { found, config, ignored } = await this.readPlugins(loaded);
    this.configState = config;
    this.timeouts = timeouts(config);
    this.events.timeoutMs = this.timeouts.event;
    const files = settingsFiles(loaded);
    this.configProblemList.push(...ignored, ...(files ? unknownKeys([files.user, files.workspace], knownKeys(found.manifests)) : []));
    for (const warning of this.configProblemList) this.reportError(warning);
    const resolution = this.resolveFound(found);
    this.resolutionState = resolution;

    const sourceOf = new Map(resolution.plugins.map((c) => [c.manifest.name, c.source]));
    // For choices, a plugin that does not load counts by its best candidate: a workspace
    // choice of a workspace plugin that is excluded is ignored too, not an error for all.
    const choiceSource = (name: string) => sourceOf.get(name) ?? resolution.candidates.get(name)?.[0]?.source;
    this.services = new ServiceRegistry({
      choices: serviceChoices(config, choiceSource, (error) => this.reportError(error)),
      activate: (name) => this.activate(name),
      sourceOf: (name) => this.records.get(name)?.info.source ?? sourceOf.get(name),
      note: (text) => this.log.info(text),
    });
    for (const candidate of resolution.plugins) this.adopt(candidate);
    this.learnDeclarations(resolution);
    for (const excluded of resolution.excluded) if (!this.records.has(excluded.name)) this.exclude(excluded);
    for (const error of resolution.invalid) this.reportError(error);
    for (const excluded of resolution.excluded) {
      if (excluded.error.code !== 'PLN_E_PLUGIN_DISABLED') this.reportError(excluded.error);
    }
    await this.hooks.resolve.promise(resolution);
    return resolution;
  }

  /**
   * Prepares, then sets up every eager plugin in dependency order. With `only`,
   * sets up just those plugins (the eager ones; lazy ones wait for their use),
   * their dependencies and every guard (`guard: true`); each other eager plugin
   * waits as a lazy one does, set up when its service is asked for, an event it
   * declares fires, or a live change replaces it. The first call decides.
   */
  boot(options: BootOptions = {}): Promise<BootReport> {
    this.booting ??= this.doBoot(options.only && new Set(options.only));
    return this.booting;
  }

  private async doBoot(only: ReadonlySet<string> | undefined): Promise<BootReport> {
    const resolution = await this.prepare();
    for (const candidate of resolution.plugins) {
      const { name, activation, guard } = candidate.manifest;
      if (activation === 'lazy') continue;
      // Guards are set up whatever the command: they check what every other plugin does.
      if (only && !only.has(name) && !guard) {
        this.defer(this.records.get(name)!);
        continue;
      }
      await this.activate(name).catch(() => undefined);
    }
    const ready: BootReport = {
      plugins: this.status(),
      durationMs: performance.now() - this.started,
      invalid: resolution.invalid,
      config: { files: this.config.files, profile: this.config.profile },
    };
    this.readyInfo = ready;
    await this.hooks.ready.promise(ready);
    return ready;
  }

  /**
   * Boots if needed, then tells plugins the host stays up (the `serve` hook):
   * `plinth up` calls this; one-shot commands do not.
   */
  serve(): Promise<void> {
    this.serving ??= this.boot().then(() => {
      this.served = true;
      return this.hooks.serve.promise();
    });
    return this.serving;
  }

  /** The sections plugins add to the status (`plinth up`), in tap order. */
  async statusSections(): Promise<StatusSection[]> {
    const sections: StatusSection[] = [];
    await this.hooks.status.promise({ add: (section) => void sections.push(section) });
    return sections;
  }

  /**
   * Imports and sets up one plugin, after its dependencies. Resolves when it is
   * active; rejects with its error (also kept in its status) otherwise.
   */
  activate(name: string): Promise<void> {
    const record = this.records.get(name);
    if (!record) {
      return Promise.reject(new PlinthError('PLN_E_PLUGIN_UNKNOWN', `no plugin named "${name}" is installed`, { hint: 'run `plinth plugins list`' }));
    }
    if (record.state === 'excluded') return Promise.reject(record.error);
    record.activation ??= this.runActivation(record);
    return record.activation;
  }

  private async runActivation(record: PluginRecord): Promise<void> {
    if (this.closing) throw new PlinthError('PLN_E_KERNEL_CLOSED', 'the kernel is shutting down', { plugin: record.info.name });
    record.state = 'loading';
    const started = performance.now();
    try {
      await this.startDependencies(record);
      await this.setUp(record, false);
    } catch (error) {
      const coded = isPlinthError(error) ? error : wrapPluginError('PLN_E_PLUGIN_SETUP', record.info.name, 'setup', error);
      return this.fail(record, coded, coded.code === 'PLN_E_DEP_FAILED' ? 'skipped' : 'failed');
    }
    record.loadMs = performance.now() - started;
    record.state = 'active';
    this.loadOrder.push(record);
    this.log.debug(`loaded ${record.info.name}@${record.info.version} in ${record.loadMs.toFixed(1)} ms`);
    await this.catchUp(record);
  }

  /** Activates each dependency of `record`; throws PLN_E_DEP_FAILED naming the first that does not load. */
  private async startDependencies(record: PluginRecord): Promise<void> {
    const { name, manifest } = record.info;
    for (const dependency of Object.keys(manifest.dependencies)) {
      try {
        await this.activate(dependency);
      } catch (cause) {
        const chain = isPlinthError(cause) && cause.plugin && cause.plugin !== dependency ? ` (via "${cause.plugin}")` : '';
        throw new PlinthError('PLN_E_DEP_FAILED', `plugin "${name}" was skipped: its dependency "${dependency}" did not load${chain}: ${describeCause(cause)}`, {
          plugin: name,
          hook: 'setup',
          cause,
          hint: `fix "${dependency}" first; \`plinth plugins why ${dependency}\` explains it`,
        });
      }
    }
  }

  /**
   * Checks, imports and sets up `record` (its settings, the `load` gate, its code, `setup`);
   * throws its coded error. `staged`: its registrations wait for `api.commit()` (a replacement).
   */
  private async setUp(record: PluginRecord, staged: boolean): Promise<void> {
    const { name, manifest } = record.info;
    if (record.error) throw record.error; // its settings were invalid
    if (PROJECT_SOURCES.has(record.info.source) && this.hooks.load.taps.length === 0) {
      // Fail closed: code that came with the project runs only if something checks it first.
      throw new PlinthError('PLN_E_PLUGIN_REFUSED', `plugin "${name}" was refused: it is a ${record.info.source} plugin and no plugin checks ${record.info.source} plugins before their code runs`, {
        plugin: name,
        hook: 'load',
        hint: 'enable the builtin trust plugin (it asks for approval of workspace plugins), or load the plugin with --plugin-dir if you trust it',
      });
    }
    try {
      const veto = await this.hooks.load.promise(record.info);
      if (typeof veto === 'string') throw new PlinthError('PLN_E_PLUGIN_REFUSED', `plugin "${name}" was refused: ${veto}`, { plugin: name, hook: 'load' });
    } catch (error) {
      throw isPlinthError(error) && error.code === 'PLN_E_PLUGIN_REFUSED' ? error : wrapPluginError('PLN_E_PLUGIN_REFUSED', name, 'load', error);
    }
    if (record.settings && hasStoredSettings(record.settings)) {
      // Sensitive values kept in the secret store (`plinth ext config`): read once the plugin may load, before its code sees them.
      const stored = fillStoredSettings(name, manifest.settings, record.settings, this.env, () => this.get('secrets'));
      record.settings = await withTimeout(stored, this.timeouts.setup, () => new PlinthError('PLN_E_HOOK_TIMEOUT', `plugin "${name}": the secret store did not answer in time`, { plugin: name, hook: 'settings' }));
      for (const secret of sensitiveValues(manifest.settings, record.settings)) this.redactor.add(secret);
    }
    const api = createPluginApi(
      {
        info: record.info,
        hooks: this.hooks,
        events: this.events,
        services: this.services!,
        config: this.pluginConfig,
        configLayers: this.pluginLayers,
        hookTimeoutMs: this.timeouts.setup,
        report: (error) => this.reportError(error),
        knownPlugins: () => this.knownPlugins(),
        kernel: this,
      },
      { staged },
    );
    record.api = api;
    // After boot every import is fresh: an enabled, reloaded or updated plugin runs the code on disk now.
    const definition = record.candidate && (manifest.main !== undefined || record.candidate.definition) ? await loadPluginCode(record.candidate, this.readyInfo !== undefined) : undefined;
    if (definition) {
      const context = {
        ...record.info,
        settings: record.settings ?? {},
        log: this.log.child(name),
        paths: { home: this.home, workspace: this.workspace },
        signal: record.abort.signal,
        ...createCapabilities({
          info: record.info,
          home: this.home,
          workspace: this.workspace,
          owner: record.abort.signal,
          launcher: () => this.get('launcher'),
          mcp: () => this.get('mcp'),
          checker: () => optionalChecker(() => this.get('capabilities')),
        }),
      };
      const teardown = await runSetup(definition, api.kernel, context, this.timeouts.setup);
      if (teardown) record.teardown = teardown;
    }
    await withTimeout(api.settled(), this.timeouts.setup, () => new PlinthError('PLN_E_HOOK_TIMEOUT', `plugin "${name}" did not finish reading manifests in time`, { plugin: name, hook: 'manifest' }));
  }

  /** A plugin that starts after `ready` gets its own `ready` and `serve` taps called, as if it had been there. */
  private async catchUp(record: PluginRecord): Promise<void> {
    if (!this.readyInfo) return;
    await callTapsOf(this.hooks.ready, record.info.name, { ...this.readyInfo, plugins: this.status() });
    if (this.served) await callTapsOf(this.hooks.serve, record.info.name);
  }

  private fail(record: PluginRecord, error: PlinthError, state: 'failed' | 'skipped' = 'failed'): never {
    const safe = redactError(error, this.redactor);
    record.state = state;
    record.error = safe;
    record.abort.abort(safe);
    record.api?.dispose();
    this.guardWhileDown(record, safe);
    this.reportError(safe);
    throw safe;
  }

  /**
   * The one step of every live change: discover and resolve again, then stop
   * what no longer resolves (dependents first), replace what changed (or is in
   * `force`), and start what is new, in load order. A replacement that fails
   * leaves the running version in place; the report says what happened.
   */
  private async reconcile(force: ReadonlySet<string>): Promise<LiveReport> {
    // The settings files are read again: enabled state, links and plugin settings as they are now.
    // An invalid file keeps the settings in force (and says so); `timeouts`, `services` and `pluginDirs` wait for a restart.
    const before = this.config;
    let settingsError: PlinthError | undefined;
    let found: Awaited<ReturnType<Kernel['discoverAll']>>;
    try {
      const read = await this.readPlugins(await this.loadSettings());
      this.configState = read.config;
      found = read.found;
    } catch (error) {
      settingsError = isPlinthError(error) ? error : wrapPluginError('PLN_E_CONFIG_INVALID', 'kernel', 'settings', error);
      found = await this.discoverAll();
    }
    const resolution = this.resolveFound(found);
    const entry = (config: Config, name: string) => JSON.stringify(config.settings.plugins?.[name]?.settings ?? null);
    const changed = new Set([...force, ...[...this.records.keys()].filter((name) => entry(before, name) !== entry(this.config, name))]);
    const chosen = new Map(resolution.plugins.map((c) => [c.manifest.name, c]));
    const report = { added: [] as string[], removed: [] as string[], replaced: [] as string[], failed: settingsError ? [settingsError] : ([] as PlinthError[]) };
    const running = [...this.records.values()].filter(isRunning);
    const byLoadOrder = [...this.loadOrder].reverse();
    for (const record of [...byLoadOrder, ...running.filter((r) => !byLoadOrder.includes(r))]) {
      if (!isRunning(record) || chosen.has(record.info.name)) continue;
      await this.stop(record);
      report.removed.push(record.info.name);
    }
    this.resolutionState = resolution;
    this.learnDeclarations(resolution);
    for (const candidate of resolution.plugins) {
      const name = candidate.manifest.name;
      const record = this.records.get(name);
      if (record && isRunning(record)) {
        if (!changed.has(name) && sameCandidate(record.candidate, candidate)) continue;
        const error = await this.replace(record, candidate);
        if (error) report.failed.push(error);
        else report.replaced.push(name);
        continue;
      }
      record?.guardOff?.(); // a guard that is back stops blocking in its name
      const added = this.adopt(candidate);
      if (candidate.manifest.activation !== 'lazy') {
        const failed = await this.activate(name).then(() => undefined, (error: PlinthError) => error);
        if (failed) {
          report.failed.push(failed);
          continue;
        }
      }
      await this.hooks.manifest.promise(added.info);
      report.added.push(name);
    }
    for (const excluded of resolution.excluded) {
      const record = this.records.get(excluded.name);
      if (!record || !isRunning(record)) this.exclude(excluded);
    }
    for (const [name, record] of this.records) if (!isRunning(record) && !chosen.has(name) && !resolution.excluded.some((e) => e.name === name)) this.records.delete(name);
    return report;
  }

  /** Stops a running plugin for good: owners drop its declarations (`unload`), then its teardown runs and its registrations go. */
  private async stop(record: PluginRecord): Promise<void> {
    await this.hooks.unload.promise(record.info);
    const error = await this.release(record);
    if (error) this.reportError(error);
    this.services!.undeclare(record.info.name);
    this.forgetEvents(record.info.name);
  }

  /** Drops `name` from the plugins that an event activates. */
  private forgetEvents(name: string): void {
    for (const [event, names] of this.lazyByEvent) {
      const rest = names.filter((n) => n !== name);
      if (rest.length > 0) this.lazyByEvent.set(event, rest);
      else this.lazyByEvent.delete(event);
    }
  }

  /** Teardown and unregistration of one running (or lazy) plugin, under the teardown limit. */
  private release(record: PluginRecord): Promise<PlinthError | undefined> {
    const index = this.loadOrder.indexOf(record);
    if (index !== -1) this.loadOrder.splice(index, 1);
    return stopOne(
      {
        name: record.info.name,
        teardown: record.teardown,
        stop: () => record.abort.abort(new PlinthError('PLN_E_PLUGIN_STOPPED', `plugin "${record.info.name}" was stopped`, { plugin: record.info.name })),
        release: () => {
          record.api?.dispose();
          record.state = 'stopped';
        },
      },
      this.timeouts.teardown,
    );
  }

  /**
   * Swaps `old` for the plugin in `candidate`: the new version is checked, freshly
   * imported and set up with its registrations held back; only then does the old
   * one go and the new one's registrations apply. Returns the error that kept the old one.
   */
  private async replace(old: PluginRecord, candidate: Candidate): Promise<PlinthError | undefined> {
    const next = this.adopt(candidate, false);
    // A waiting eager plugin is set up by its replacement: that is what proves the new version loads.
    if (old.state !== 'lazy' || (old.deferred && candidate.manifest.activation !== 'lazy')) {
      next.state = 'loading';
      const started = performance.now();
      try {
        await this.startDependencies(next);
        await this.setUp(next, true);
      } catch (error) {
        const safe = redactError(isPlinthError(error) ? error : wrapPluginError('PLN_E_PLUGIN_SETUP', next.info.name, 'setup', error), this.redactor);
        next.abort.abort(safe);
        next.api?.dispose();
        this.reportError(safe);
        return safe;
      }
      const at = this.loadOrder.indexOf(old);
      const error = await this.release(old);
      if (error) this.reportError(error);
      next.api!.commit();
      next.loadMs = performance.now() - started;
      next.state = 'active';
      this.loadOrder.splice(at === -1 ? this.loadOrder.length : at, 0, next);
      next.activation = Promise.resolve();
    }
    this.records.set(next.info.name, next);
    this.forgetEvents(next.info.name);
    this.indexEvents(next);
    await this.catchUp(next);
    await this.hooks.manifest.promise(next.info);
    return undefined;
  }

  private loadSettings(): ReturnType<typeof loadConfig> {
    return loadConfig({ home: this.home, workspace: this.workspace, ...(this.options.profile !== undefined && { profile: this.options.profile }), env: this.env });
  }

  /** The links the settings name, every plugin folder, and the settings restricted by what the manifests say the workspace may not set. */
  private async readPlugins(loaded: Awaited<ReturnType<typeof loadConfig>>) {
    // Only the user's own file links folders: a linked plugin loads unchecked, as the user's.
    this.live.link((loaded.layers ?? []).filter((l) => l.scope === 'user').flatMap((l) => l.settings.links ?? []));
    const found = await this.discoverAll();
    return { found, ...restrictWorkspace(loaded, workspacePolicy(found.manifests)) };
  }

  /** Candidates from every folder (builtin, user, workspace, settings, command line, live), then the inline ones; linked and removed applied. */
  private async discoverAll(): Promise<{ candidates: Candidate[]; invalid: PlinthError[]; manifests: Candidate['manifest'][] }> {
    const found = await discoverPlugins([...this.sources, ...this.live.sources()], { workspace: this.workspace });
    const { kept, shadowing } = withoutShadowing([...found.candidates, ...this.inline]);
    return {
      candidates: this.live.select(kept),
      invalid: [...found.invalid, ...shadowing],
      manifests: [...found.candidates, ...this.inline].map((c) => c.manifest),
    };
  }

  private resolveFound(found: { candidates: Candidate[]; invalid: PlinthError[] }): Resolution {
    return resolve({ candidates: found.candidates, invalid: found.invalid, kernelVersion: KERNEL_API_VERSION, disabled: this.live.disabled(disabledPlugins(this.config)) });
  }

  /**
   * While `record` is not running, the events it guards are blocked in its name (see guards.ts):
   * those its manifest declares and those any of the user's candidates of its name declares.
   */
  private guardWhileDown(record: PluginRecord, error: PlinthError): void {
    if (record.guardOff) return;
    const { name } = record.info;
    const events = guardedEvents(record.candidate ?? record.info, this.resolutionState?.candidates.get(name) ?? []);
    record.guardOff = blockGuardedEvents(this.events, name, events, record.state, error);
  }

  /** Fires an agent event (name or alias) and returns the combined decision. */
  emit(event: string, context: Record<string, unknown> = {}): Promise<Decision> {
    if (this.closed) return Promise.reject(closedError('emit'));
    // Not async: on the hot path (no lazy plugin waiting) this adds no promise.
    if (this.lazyByEvent.size > 0) {
      const name = canonicalEvent(event);
      if (name === undefined) return rejectUnknown(event);
      const waiting = this.lazyByEvent.get(name);
      if (waiting) {
        // Forgotten only once activated: an emit that arrives meanwhile waits too,
        // rather than passing a lazy guard that is still setting up.
        return Promise.all(waiting.map((plugin) => this.activate(plugin).catch(() => undefined))).then(() => {
          this.lazyByEvent.delete(name);
          return this.events.emit(name, context);
        });
      }
    }
    return this.events.emit(event, context);
  }

  /** Gets a service, importing a lazy provider when needed. */
  get<K extends ServiceName>(name: K): Promise<ServiceType<K>> {
    if (!this.services) return Promise.reject(notReady('services'));
    return this.services.get(name) as Promise<ServiceType<K>>;
  }

  /** Provides a service as the host application (provider name `host`). */
  provide<K extends ServiceName>(name: K, implementation: ServiceType<K>): Disposer {
    if (!this.services) throw notReady('services');
    return this.services.provide(HOST, name, implementation);
  }

  /** Handles an event as the host application. */
  on(event: string, handler: EventHandler, options?: TapOptions): Disposer {
    if (this.closed) throw closedError('on');
    return this.events.on(HOST, event, handler, options);
  }

  /** Every plugin's state, in resolution order, then the excluded ones. */
  status(): PluginStatus[] {
    return [...this.records.values()].map((record) => ({
      name: record.info.name,
      version: record.info.version,
      source: record.info.source,
      state: record.state,
      provides: record.info.manifest.provides,
      dir: record.info.dir,
      ...(record.info.linked && { linked: true as const }),
      ...(record.loadMs !== undefined && { loadMs: record.loadMs }),
      ...(record.error && { error: { code: record.error.code, message: this.redactor.text(record.error.message), ...(record.error.hint && { hint: this.redactor.text(record.error.hint) }) } }),
    }));
  }

  /** The declared settings of `plugin` that name an `envVar`, as environment variables (see PluginKernel.settingsEnv). */
  settingsEnv(plugin: string): Readonly<Record<string, string>> {
    const record = this.records.get(plugin);
    const env: Record<string, string> = {};
    if (!record?.settings) return env;
    for (const decl of record.info.manifest.settings) {
      const value = record.settings[decl.name];
      if (decl.envVar === undefined || value === undefined || value === null || isStoredSettingRef(value)) continue;
      env[decl.envVar] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    return env;
  }

  /** `text` with every sensitive setting value masked. */
  redact(text: string): string {
    return this.redactor.text(text);
  }

  /** What the kernel found, decided and read, as data for inspection tools (the `inspect` plugin formats it). */
  inspect(): KernelInspection {
    // What is wrong in the files: the warnings prepare found, then each plugin's own settings that failed their declarations.
    const settingErrors = [...this.records.values()].flatMap((r) => (r.error && SETTING_CODES.has(r.error.code) ? [r.error] : []));
    return {
      plugins: this.status(),
      resolution: this.resolution,
      invalid: this.resolution.invalid.map((e) => ({ code: e.code, message: this.redactor.text(e.message) })),
      config: {
        files: this.config.files,
        profile: this.config.profile,
        settings: this.redactor.value(this.pluginConfig),
        problems: [...this.configProblemList, ...settingErrors].map((e) => redactError(e, this.redactor)),
      },
    };
  }

  /**
   * What the owners of the settings' sections (`configKeys`) find wrong in them: each owner in use is
   * set up (a lazy one too) and asked through the `validate` hook. An owner that could not start
   * checked nothing: that is a problem too (`PLN_E_CONFIG_UNCHECKED`), never silence. After `boot()`.
   */
  async validateSettings(): Promise<SettingsProblem[]> {
    if (!this.readyInfo) throw new PlinthError('PLN_E_KERNEL_STATE', 'kernel.validateSettings() was called before boot() finished', { hint: 'await kernel.boot() first' });
    const problems: SettingsProblem[] = [];
    const inUse = (keys: readonly string[]) => keys.filter((key) => Object.hasOwn(this.config.settings, key));
    for (const record of [...this.records.values()]) {
      const keys = inUse(record.info.manifest.configKeys);
      if (keys.length === 0) continue;
      if (record.state === 'lazy') await this.activate(record.info.name).catch(() => undefined);
      // Disabled on purpose (itself or what it needs): its sections are read by nothing.
      if (isRunning(record) || record.error?.code === 'PLN_E_PLUGIN_DISABLED' || record.error?.code === 'PLN_E_DEP_DISABLED') continue;
      const why = record.error ? `: ${record.error.code}: ${record.error.message}` : '';
      problems.push({
        code: 'PLN_E_CONFIG_UNCHECKED',
        message: `the settings' ${keys.map((k) => `"${k}"`).join(', ')} could not be checked: plugin "${record.info.name}", which reads ${keys.length === 1 ? 'it' : 'them'}, is ${record.state}${why}`,
        hint: record.error?.hint ?? `run \`plinth plugins why ${record.info.name}\``,
      });
    }
    const files = this.config.files.filter((f) => f.exists).map((f) => f.file);
    await this.hooks.validate.promise({ files, add: (problem) => void problems.push(problem) });
    return problems.map((p) => ({ ...p, message: this.redactor.text(p.message), ...(p.hint !== undefined && { hint: this.redactor.text(p.hint) }) }));
  }

  /** Commands declared by the resolved plugins, from manifests alone. */
  declaredCommands(): DeclaredCommand[] {
    const list: DeclaredCommand[] = [];
    for (const candidate of this.resolution.plugins) {
      for (const [name, decl] of Object.entries(candidate.manifest.commands)) {
        // Only plinth's own commands may skip the boot: it is what sets up every guard (hooks, trust's gate) before anything runs.
        const standalone = decl.standalone === true && candidate.source === 'builtin';
        // A boot of its own plugin still sets up every guard, so any plugin may ask for it.
        const own = !standalone && decl.boot === 'own';
        list.push({ name, summary: decl.summary, ...(decl.usage && { usage: decl.usage }), plugin: candidate.manifest.name, ...(standalone && { standalone: true as const }), ...(own && { boot: 'own' as const }) });
      }
    }
    // Code-point order: localeCompare would load ICU (about 10 ms) on every CLI start.
    return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Activates `plugin` and collects the commands plugins registered through the `commands` hook. */
  async commands(plugin?: string): Promise<Map<string, RegisteredCommand>> {
    if (plugin) await this.activate(plugin);
    const found = new Map<string, RegisteredCommand>();
    const owners = new Map(this.declaredCommands().map((c) => [c.name, c]));
    const registry: CommandRegistry = {
      add: (command) => {
        const owner = owners.get(command.name);
        found.set(command.name, { ...command, plugin: owner?.plugin ?? HOST, summary: owner?.summary ?? '' });
      },
    };
    this.hooks.commands.call(registry);
    return found;
  }

  /**
   * Runs shutdown taps, then each plugin's teardown in reverse load order, each
   * under a time limit; never hangs and never throws.
   */
  shutdown(): Promise<ShutdownReport> {
    this.closing ??= this.doShutdown();
    return this.closing;
  }

  private async doShutdown(): Promise<ShutdownReport> {
    this.services?.close();
    const report = await runShutdown(this.hooks.shutdown, [...this.loadOrder].reverse().map((record) => ({
      name: record.info.name,
      teardown: record.teardown,
      stop: () => {
        record.abort.abort(new PlinthError('PLN_E_KERNEL_CLOSED', 'the kernel is shutting down'));
      },
      release: () => {
        record.api?.dispose();
        record.state = 'stopped';
      },
    })), this.timeouts);
    this.events.close();
    this.closed = true;
    // Not logged: the caller gets them in the report and decides how to show them.
    return { ...report, errors: report.errors.map((error) => redactError(error, this.redactor)) };
  }

  /**
   * A record for a resolved candidate, its settings resolved (secrets known to the
   * redactor before any code runs) and its events indexed; `keep: false` for a
   * replacement that is not in the table until it has set up.
   */
  private adopt(candidate: Candidate, keep = true): PluginRecord {
    const { manifest } = candidate;
    const info: PluginInfo = { name: manifest.name, version: manifest.version, source: candidate.source, dir: candidate.dir, manifest, ...(candidate.linked && { linked: true as const }) };
    const record: PluginRecord = { info, candidate, state: manifest.activation === 'lazy' ? 'lazy' : 'loading', abort: new AbortController() };
    this.resolveSettings(record);
    if (keep) {
      this.records.set(info.name, record);
      this.indexEvents(record);
    }
    return record;
  }

  /** A record for a plugin resolution left out; it guards its events unless the user disabled it. */
  private exclude(excluded: Resolution['excluded'][number]): void {
    const { candidate, name, error } = excluded;
    const manifest = candidate?.manifest ?? parseManifestOrThrow({ name, version: '0.0.0', kernel: '*' });
    // A linked folder stays linked while it is excluded (disabled): what `ext list` and `plugins list` show.
    const info: PluginInfo = { name, version: candidate ? manifest.version : '', source: candidate?.source ?? 'path', dir: candidate?.dir ?? '', manifest, ...(candidate?.linked && { linked: true as const }) };
    const previous = this.records.get(name);
    const record: PluginRecord = { info, candidate, state: 'excluded', error, abort: new AbortController(), guardOff: previous?.guardOff };
    this.records.set(name, record);
    if (error.code !== 'PLN_E_PLUGIN_DISABLED') this.guardWhileDown(record, redactError(error, this.redactor));
    else {
      record.guardOff?.();
      record.guardOff = undefined;
    }
  }

  /** What every resolved plugin declares: the services it may provide, and its settings as other plugins see them. */
  private learnDeclarations(resolution: Resolution): void {
    for (const { manifest } of resolution.plugins) {
      this.services!.undeclare(manifest.name);
      this.services!.declare(manifest.name, manifest.provides);
    }
    const decls = new Map([...resolution.candidates].map(([name, list]) => [name, list.flatMap((c) => c.manifest.settings)]));
    this.pluginConfig = redactSettings(this.config.settings, decls);
    this.pluginLayers = (this.config.layers ?? []).map((layer) => ({ ...layer, settings: redactSettings(layer.settings, decls) }));
  }

  // Settings are checked for every resolved plugin at prepare time, so secrets are
  // known to the redactor before any code (lazy or not) could log them.
  private resolveSettings(record: PluginRecord): void {
    const { name, manifest } = record.info;
    try {
      const settings = resolvePluginSettings(name, manifest.settings, this.config.settings.plugins?.[name]?.settings, this.env);
      for (const secret of sensitiveValues(manifest.settings, settings)) this.redactor.add(secret);
      record.settings = settings;
    } catch (error) {
      record.error = isPlinthError(error) ? error : wrapPluginError('PLN_E_SETTING_INVALID', name, 'settings', error);
    }
  }

  /**
   * Checks the events a manifest names (`events`, `guards`); for a lazy plugin,
   * remembers them as the events that activate it.
   */
  private indexEvents(record: PluginRecord): void {
    const { events, guards, activation } = record.info.manifest;
    for (const event of new Set([...events, ...guards])) {
      const name = canonicalEvent(event);
      if (name === undefined) {
        this.reportError(new PlinthError('PLN_E_EVENT_UNKNOWN', `plugin "${record.info.name}" declares unknown event "${event}"`, { plugin: record.info.name, hook: 'manifest' }));
        continue;
      }
      if (activation === 'lazy') this.wakeOn(name, record.info.name);
    }
  }

  /** An eager plugin a scoped boot leaves waiting: from now on it starts as a lazy one does (its events were checked at adopt). */
  private defer(record: PluginRecord): void {
    if (record.state !== 'loading') return;
    record.state = 'lazy';
    record.deferred = true;
    const { events, guards } = record.info.manifest;
    for (const event of new Set([...events, ...guards])) {
      const name = canonicalEvent(event);
      if (name !== undefined) this.wakeOn(name, record.info.name);
    }
  }

  private wakeOn(event: string, plugin: string): void {
    const list = this.lazyByEvent.get(event) ?? [];
    list.push(plugin);
    this.lazyByEvent.set(event, list);
  }

  private knownPlugins(): PluginInfo[] {
    return [...this.records.values()].filter(isRunning).map((record) => record.info);
  }

  // Not named `report`: the test kernel puts its boot report on the instance under that name.
  private reportError(error: PlinthError): void {
    this.log.warn(`${error.code}: ${error.message}${error.hint ? `\n  fix: ${error.hint}` : ''}`);
  }
}

/** The codes of a plugin's settings that fail their declarations: problems in the settings files, for `config validate`. */
const SETTING_CODES: ReadonlySet<string> = new Set(['PLN_E_SETTING_INVALID', 'PLN_E_SETTING_REQUIRED']);

/** Creates a kernel; call `boot()` to load plugins. */
export function createKernel(options?: KernelOptions): Kernel {
  return new Kernel(options);
}

function closedError(call: string): PlinthError {
  return new PlinthError('PLN_E_KERNEL_CLOSED', `kernel.${call}() was called after shutdown`, { hint: 'create a new kernel to start again' });
}

function notReady(what: string): PlinthError {
  return new PlinthError('PLN_E_KERNEL_STATE', `the kernel's ${what} is not available before prepare()`, { hint: 'await kernel.prepare() or kernel.boot() first' });
}
