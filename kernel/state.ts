/**
 * What the kernel's parts share: one record per plugin, the load order, the
 * events that wake a lazy plugin, and what prepare read. The `Kernel` class
 * (kernel.ts) holds one `KernelState` and hands it to each part (prepare,
 * records, activation, reconcile, inspection, shutdown); no part reaches into
 * the class.
 */
import { PlinthError } from '../sdk/errors.js';
import type { ConfigLayerView, Disposer, Logger, PluginInfo, PluginState, ReadyInfo, Teardown } from '../sdk/plugin.js';
import type { Redactor } from '../internal/text/redact.js';
import type { InlinePlugin } from './candidates.js';
import type { Config } from './config/load.js';
import type { Timeouts } from './config/schema.js';
import type { DiscoverySource } from './discovery.js';
import type { EventBus } from './events.js';
import type { LifecycleHooks } from './lifecycle.js';
import type { LiveSet } from './live.js';
import type { PluginApi, PluginApiDeps } from './plugin-api.js';
import type { ServiceRegistry } from './services.js';
import type { Candidate, Resolution } from './types.js';

/** Where each plugin is at, with its code and what it registered. */
export interface PluginRecord {
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

/** What prepare reads of the kernel's options (see `KernelOptions`). */
export interface SourceOptions {
  readonly profile?: string;
  readonly pluginDirs?: readonly string[];
  readonly builtin?: boolean;
  readonly plugins?: readonly InlinePlugin[];
}

/** The kernel's state, as its parts read and change it. */
export interface KernelState {
  readonly home: string;
  readonly workspace: string;
  readonly env: Record<string, string | undefined>;
  readonly options: SourceOptions;
  readonly hooks: LifecycleHooks;
  readonly redactor: Redactor;
  readonly log: Logger & { child(scope: string): Logger };
  readonly events: EventBus;
  /** The kernel as each plugin's view reaches it (`emit`, `get`, `status`…): the `Kernel` itself. */
  readonly kernel: PluginApiDeps['kernel'];
  /** The live lifecycle's bookkeeping (live.ts). */
  readonly live: LiveSet;
  readonly records: Map<string, PluginRecord>;
  /** Active plugins in the order their setup finished; shutdown walks it backwards. */
  readonly loadOrder: PluginRecord[];
  /** Event → the waiting plugins it activates. */
  readonly lazyByEvent: Map<string, string[]>;
  /** Warnings about the settings files (values ignored, unknown keys), found by prepare. */
  readonly configProblems: PlinthError[];
  services: ServiceRegistry | undefined;
  timeouts: Timeouts;
  /** The merged settings; set by prepare, read again by each live change. */
  config: Config | undefined;
  resolution: Resolution | undefined;
  /** The settings as plugins see them: other plugins' sensitive values redacted. */
  pluginConfig: Readonly<Record<string, unknown>>;
  pluginLayers: readonly ConfigLayerView[];
  /** The plugin folders prepare reads (builtin, user, workspace, settings, command line). */
  sources: DiscoverySource[];
  /** The plugins given in memory, as candidates. */
  inline: Candidate[];
  /** When prepare started (`performance.now()`). */
  started: number;
  /** Set once `ready` fires: a plugin that starts later gets its own `ready` (and `serve`) taps called, and others hear of it through `manifest`. */
  readyInfo: ReadyInfo | undefined;
  served: boolean;
  /** Set once `shutdown()` was called. */
  closing: boolean;
  /** Set once shutdown finished. */
  closed: boolean;
}

/** Logs a coded warning (already redacted by the logger). */
export function reportError(state: KernelState, error: PlinthError): void {
  state.log.warn(`${error.code}: ${error.message}${error.hint ? `\n  fix: ${error.hint}` : ''}`);
}

/** The merged settings; throws before prepare. */
export function configOf(state: KernelState): Config {
  if (!state.config) throw notReady('config');
  return state.config;
}

/** The resolution; throws before prepare. */
export function resolutionOf(state: KernelState): Resolution {
  if (!state.resolution) throw notReady('resolution');
  return state.resolution;
}

export function notReady(what: string): PlinthError {
  return new PlinthError('PLN_E_KERNEL_STATE', `the kernel's ${what} is not available before prepare()`, { hint: 'await kernel.prepare() or kernel.boot() first' });
}
