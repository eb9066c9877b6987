/**
 * The kernel as one plugin sees it. Every registration is named after the
 * plugin and recorded, so that unloading the plugin undoes exactly what it did.
 */
import type { CommandRegistry, CommandSpec } from '../sdk/commands.js';
import type { ConfigLayerView, Disposer, PluginInfo, PluginKernel } from '../sdk/plugin.js';
import { PlinthError, type PlinthError as PlinthErrorType } from '../sdk/errors.js';
import { type EventBus, requireEvent } from './events.js';
import { type LifecycleHooks, scopeHooks } from './lifecycle.js';
import type { ServiceRegistry } from './services.js';
import { KERNEL_API_VERSION } from '../sdk/version.js';

/** What a plugin's view needs from the kernel. */
export interface PluginApiDeps {
  readonly info: PluginInfo;
  readonly hooks: LifecycleHooks;
  readonly events: EventBus;
  readonly services: ServiceRegistry;
  readonly config: Readonly<Record<string, unknown>>;
  readonly configLayers: readonly ConfigLayerView[];
  readonly hookTimeoutMs: number;
  report(error: PlinthErrorType): void;
  knownPlugins(): readonly PluginInfo[];
  kernel: Pick<PluginKernel, 'emit' | 'get' | 'status' | 'inspect' | 'validateSettings' | 'redact' | 'settingsEnv' | 'plugins'>;
}

/** A plugin's view of the kernel, plus what the kernel needs to unload it. */
export interface PluginApi {
  readonly kernel: PluginKernel;
  /** Work the plugin's taps started during setup (the manifest replay); undefined when there is none. */
  settled(): Promise<void> | undefined;
  /** Applies what a staged view (a replacement's setup) registered; a no-op for a live one. */
  commit(): void;
  /** Undoes every registration, newest first; later registrations are refused. */
  dispose(): void;
}

export function createPluginApi(deps: PluginApiDeps, options: { staged?: boolean } = {}): PluginApi {
  const plugin = deps.info.name;
  const owned = new Set<Disposer>();
  const pending: Promise<void>[] = [];
  // A replacement sets up while the version it replaces still runs: its registrations
  // wait here, checked but not applied, until the old version is gone (commit).
  const staged: Array<() => void> | undefined = options.staged ? [] : undefined;
  let closed = false;

  const own = (disposer: Disposer): Disposer => {
    if (closed) {
      disposer();
      throw new PlinthError('PLN_E_PLUGIN_INACTIVE', `plugin "${plugin}" registered something after it was unloaded`, {
        plugin,
        hint: 'register hooks, handlers, services and commands during setup, and stop timers in the teardown',
      });
    }
    const once = () => {
      // Forgotten once undone: a plugin that swaps handlers while running does not pile up spent disposers.
      if (!owned.delete(once)) return;
      disposer();
    };
    owned.add(once);
    return once;
  };

  const register = (apply: () => Disposer, check?: () => void): Disposer => {
    if (!staged) return own(apply());
    check?.();
    let disposer: Disposer | undefined;
    let cancelled = false;
    staged.push(() => {
      if (!cancelled) disposer = own(apply());
    });
    return () => {
      cancelled = true;
      disposer?.();
    };
  };
  const declared = deps.info.manifest.commands;
  const scopeRegistry = (registry: CommandRegistry): CommandRegistry => ({
    add(command: CommandSpec) {
      if (!Object.hasOwn(declared, command.name)) {
        throw new PlinthError('PLN_E_COMMAND_UNDECLARED', `plugin "${plugin}" adds command "${command.name}" without declaring it`, {
          plugin,
          hook: 'commands',
          hint: `declare it in manifest.json: "commands": { "${command.name}": { "summary": "…" } }`,
        });
      }
      registry.add(command);
    },
  });

  const kernel: PluginKernel = {
    apiVersion: KERNEL_API_VERSION,
    config: deps.config,
    configLayers: deps.configLayers,
    hooks: scopeHooks(deps.hooks, {
      plugin,
      timeoutMs: deps.hookTimeoutMs,
      report: deps.report,
      knownPlugins: deps.knownPlugins,
      track: (work) => void pending.push(work),
      scopeRegistry,
      register,
    }),
    on: (event, handler, options) => register(() => deps.events.on(plugin, event, handler, options), () => requireEvent(event)),
    emit: (event, context) => deps.kernel.emit(event, context),
    provide: (name, implementation) => register(() => deps.services.provide(plugin, name, implementation), () => deps.services.check(plugin, name)),
    get: (name) => deps.kernel.get(name),
    status: () => deps.kernel.status(),
    inspect: () => deps.kernel.inspect(),
    validateSettings: () => deps.kernel.validateSettings(),
    redact: (text) => deps.kernel.redact(text),
    settingsEnv: (name) => deps.kernel.settingsEnv(name),
    plugins: deps.kernel.plugins,
  };

  return {
    kernel,
    // Most plugins start none: no promise, and no time limit armed for nothing.
    settled: () => (pending.length === 0 ? undefined : Promise.all(pending.splice(0)).then(() => undefined)),
    commit() {
      for (const apply of staged?.splice(0) ?? []) apply();
    },
    dispose() {
      staged?.splice(0);
      closed = true;
      for (const disposer of [...owned].reverse()) disposer();
    },
  };
}
