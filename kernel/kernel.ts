/**
 * The kernel: finds plugins, resolves them by semver, loads them one at a time
 * in dependency order, answers events and service requests, and shuts them down
 * in reverse. It knows nothing of hooks, MCP or marketplaces: plugins do.
 *
 * The `Kernel` class is the API over the parts, each in its own module and all
 * sharing one `KernelState` (state.ts): prepare.ts (settings, discovery,
 * resolution), records.ts (the plugin table), activation.ts (setting a plugin
 * up, boot, lazy activation), reconcile.ts (live changes), inspection.ts,
 * validate.ts and commands.ts (what it tells), shutdown.ts.
 */
import { resolve as resolvePath } from 'node:path';
import { PlinthError } from '../sdk/errors.js';
import type { Decision, EventHandler } from '../sdk/events.js';
import { type LogLevel, type LogSink, createLogger, parseLogLevel } from '../internal/terminal/log.js';
import type {
  Disposer,
  KernelInspection,
  LivePlugins,
  Logger,
  PluginStatus,
  ReadyInfo,
  SettingsProblem,
  StatusSection,
  TapOptions,
} from '../sdk/plugin.js';
import { Redactor } from '../internal/text/redact.js';
import type { ServiceName, ServiceType } from '../sdk/services.js';
import { KERNEL_API_VERSION } from '../sdk/version.js';
import { activate, activateEager, emitWaking } from './activation.js';
import type { InlinePlugin } from './candidates.js';
import { type DeclaredCommand, type RegisteredCommand, commands, declaredCommands } from './commands.js';
import type { Config, ConfigFile } from './config/load.js';
import { DEFAULT_TIMEOUTS } from './config/schema.js';
import { EventBus } from './events.js';
import { inspect, status } from './inspection.js';
import { type LifecycleHooks, createLifecycleHooks } from './lifecycle.js';
import { LiveSet } from './live.js';
import { defaultHome } from './paths.js';
import { prepare } from './prepare.js';
import { reconcile } from './reconcile.js';
import { settingsEnv } from './records.js';
import { HOST } from './services.js';
import { type ShutdownReport, shutdownKernel } from './shutdown.js';
import { type KernelState, configOf, notReady, reportError, resolutionOf } from './state.js';
import type { Resolution } from './types.js';
import { validateSettings } from './validate.js';

/** Where a kernel finds its settings and plugins, and where it logs: everything has a default. */
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

/** What `boot` sets up. */
export interface BootOptions {
  /** Only these plugins, their dependencies and the guards; the other eager plugins wait until they are used. */
  readonly only?: readonly string[];
}

/** What boot found and did. */
export interface BootReport extends ReadyInfo {
  /** Manifests that could not be read or validated. */
  readonly invalid: readonly PlinthError[];
  readonly config: { readonly files: readonly ConfigFile[]; readonly profile: string | undefined };
}

export type { DeclaredCommand, InlinePlugin, RegisteredCommand, ShutdownReport };

/**
 * The host's kernel: finds, resolves and loads plugins, runs their hooks and
 * events, and shuts them down. Create it with {@link createKernel}.
 *
 * @example
 * import { createKernel } from 'plinth';
 *
 * const kernel = createKernel({ workspace: process.cwd() });
 * const report = await kernel.boot();
 * const decision = await kernel.emit('before_tool', { tool: 'rm', args: { path: 'notes.txt' } });
 * if (!decision.allow) console.error(decision.messages.join('\n'));
 * await kernel.shutdown();
 */
export class Kernel {
  readonly apiVersion = KERNEL_API_VERSION;
  /** Lifecycle hooks (tapable), for the host to tap directly. */
  readonly hooks: LifecycleHooks = createLifecycleHooks();
  /**
   * Redacts sensitive setting values from any text or value: the CLI's, hosts have `redact()`.
   * @internal
   */
  readonly redactor = new Redactor();
  /** The kernel's own log; `child(scope)` gives a logger whose lines name `scope`. */
  readonly log: Logger & {
    /** A logger whose lines are prefixed with `scope`, same level and sink. */
    child(scope: string): Logger;
  };
  /** Adds, removes and replaces plugins while the kernel runs (see live.ts). */
  readonly plugins: LivePlugins;

  readonly home: string;
  readonly workspace: string;

  /** What the parts share: the plugin records, the load order, what prepare read (state.ts). */
  private readonly state: KernelState;
  private preparing: Promise<Resolution> | undefined;
  private booting: Promise<BootReport> | undefined;
  private closing: Promise<ShutdownReport> | undefined;
  private serving: Promise<void> | undefined;

  constructor(options: KernelOptions = {}) {
    const env = options.env ?? process.env;
    this.home = options.home ? resolvePath(options.home) : defaultHome(env);
    this.workspace = resolvePath(options.workspace ?? process.cwd());
    this.log = createLogger('kernel', {
      level: options.logLevel ?? parseLogLevel(env.PLINTH_LOG, 'warn'),
      ...(options.logSink && { sink: options.logSink }),
      redact: (text) => this.redactor.text(text),
    });
    const events = new EventBus({
      timeoutMs: DEFAULT_TIMEOUTS.event,
      report: (error) => reportError(state, error),
      redact: (text) => this.redactor.text(text),
    });
    const state: KernelState = {
      home: this.home,
      workspace: this.workspace,
      env,
      options,
      hooks: this.hooks,
      redactor: this.redactor,
      log: this.log,
      events,
      kernel: this,
      live: new LiveSet(),
      records: new Map(),
      loadOrder: [],
      lazyByEvent: new Map(),
      configProblems: [],
      services: undefined,
      timeouts: DEFAULT_TIMEOUTS,
      config: undefined,
      resolution: undefined,
      pluginConfig: {},
      pluginLayers: [],
      sources: [],
      inline: [],
      started: 0,
      readyInfo: undefined,
      served: false,
      closing: false,
      closed: false,
    };
    this.state = state;
    this.plugins = state.live.api({
      reconcile: (force) => reconcile(state, force),
      folders: () => state.sources.filter((s) => s.source !== 'builtin'),
      assertRunning: () => {
        if (state.closing) throw new PlinthError('PLN_E_KERNEL_CLOSED', 'the kernel is shutting down: plugins cannot change now');
        if (!state.readyInfo) throw new PlinthError('PLN_E_KERNEL_STATE', 'plugins can be added, removed and replaced once the kernel has booted', { hint: 'await kernel.boot() first' });
      },
      dirOf: (name) => state.records.get(name)?.info.dir || undefined,
      sourceOf: (name) => state.records.get(name)?.info.source,
    });
  }

  /**
   * The merged settings; available after `prepare`. Hosts read them redacted through `inspect()`.
   * @internal
   */
  get config(): Config {
    return configOf(this.state);
  }

  /** The resolution; available after `prepare`. */
  get resolution(): Resolution {
    return resolutionOf(this.state);
  }

  /**
   * Event hooks (tapable AsyncSeriesWaterfallHooks), for the tests' interceptors; hosts use `on` and `emit`.
   * @internal
   */
  get eventHooks(): EventBus['hooks'] {
    return this.state.events.hooks;
  }

  /**
   * Reads settings and every manifest and resolves them; imports no plugin code.
   * Throws PLN_E_CONFIG_* when settings are invalid.
   */
  prepare(): Promise<Resolution> {
    this.preparing ??= prepare(this.state);
    return this.preparing;
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
    await activateEager(this.state, resolution, only);
    const ready: BootReport = {
      plugins: this.status(),
      durationMs: performance.now() - this.state.started,
      invalid: resolution.invalid,
      config: { files: this.config.files, profile: this.config.profile },
    };
    this.state.readyInfo = ready;
    await this.hooks.ready.promise(ready);
    return ready;
  }

  /**
   * Boots if needed, then tells plugins the host stays up (the `serve` hook):
   * `plinth up` calls this; one-shot commands do not.
   */
  serve(): Promise<void> {
    this.serving ??= this.boot().then(() => {
      this.state.served = true;
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
    return activate(this.state, name);
  }

  /** Fires an agent event (name or alias) and returns the combined decision. */
  emit(event: string, context: Record<string, unknown> = {}): Promise<Decision> {
    if (this.state.closed) return Promise.reject(closedError('emit'));
    return emitWaking(this.state, event, context);
  }

  /** Gets a service, importing a lazy provider when needed. */
  get<K extends ServiceName>(name: K): Promise<ServiceType<K>> {
    if (!this.state.services) return Promise.reject(notReady('services'));
    return this.state.services.get(name) as Promise<ServiceType<K>>;
  }

  /** Provides a service as the host application (provider name `host`). */
  provide<K extends ServiceName>(name: K, implementation: ServiceType<K>): Disposer {
    if (!this.state.services) throw notReady('services');
    return this.state.services.provide(HOST, name, implementation);
  }

  /** Handles an event as the host application. */
  on(event: string, handler: EventHandler, options?: TapOptions): Disposer {
    if (this.state.closed) throw closedError('on');
    return this.state.events.on(HOST, event, handler, options);
  }

  /** Every plugin's state, in resolution order, then the excluded ones. */
  status(): PluginStatus[] {
    return status(this.state);
  }

  /** The declared settings of `plugin` that name an `envVar`, as environment variables (see PluginKernel.settingsEnv). */
  settingsEnv(plugin: string): Readonly<Record<string, string>> {
    return settingsEnv(this.state, plugin);
  }

  /** `text` with every sensitive setting value masked. */
  redact(text: string): string {
    return this.redactor.text(text);
  }

  /** What the kernel found, decided and read, as data for inspection tools (the `inspect` plugin formats it). */
  inspect(): KernelInspection {
    return inspect(this.state);
  }

  /**
   * What the owners of the settings' sections (`configKeys`) find wrong in them: each owner in use is
   * set up (a lazy one too) and asked through the `validate` hook. An owner that could not start
   * checked nothing: that is a problem too (`PLN_E_CONFIG_UNCHECKED`), never silence. After `boot()`.
   */
  validateSettings(): Promise<SettingsProblem[]> {
    return validateSettings(this.state);
  }

  /** Commands declared by the resolved plugins, from manifests alone. */
  declaredCommands(): DeclaredCommand[] {
    return declaredCommands(this.state);
  }

  /** Activates `plugin` and collects the commands plugins registered through the `commands` hook. */
  commands(plugin?: string): Promise<Map<string, RegisteredCommand>> {
    return commands(this.state, plugin);
  }

  /**
   * Runs shutdown taps, then each plugin's teardown in reverse load order, each
   * under a time limit; never hangs and never throws.
   */
  shutdown(): Promise<ShutdownReport> {
    if (!this.closing) {
      // Set once shutdownKernel's synchronous start (services closed, the first shutdown tap called) has run.
      this.closing = shutdownKernel(this.state);
      this.state.closing = true;
    }
    return this.closing;
  }
}

/** Creates a kernel; call `boot()` to load plugins. */
export function createKernel(options?: KernelOptions): Kernel {
  return new Kernel(options);
}

function closedError(call: string): PlinthError {
  return new PlinthError('PLN_E_KERNEL_CLOSED', `kernel.${call}() was called after shutdown`, { hint: 'create a new kernel to start again' });
}
