/** The kernel's lifecycle hooks, as tapable hooks for the host and as named taps for plugins. */
import { AsyncSeriesBailHook, AsyncSeriesHook, SyncHook } from 'tapable';
import type { CommandRegistry } from '../sdk/commands.js';
import type { Disposer, PluginHook, PluginHooks, PluginInfo, ReadyInfo, SettingsCheck, StatusBoard, TapOptions } from '../sdk/plugin.js';
import { type PlinthError, wrapPluginError } from '../sdk/errors.js';
import { addTap } from './taps.js';
import { withTimeout } from './timeout.js';
import type { Resolution } from './types.js';

/** The raw tapable hooks; a host taps them directly, plugins through `scopeHooks`. */
export interface LifecycleHooks {
  /** Resolution is done, no plugin code has run. */
  readonly resolve: AsyncSeriesHook<[Resolution]>;
  /** Before each plugin's code is imported; a string result refuses it. */
  readonly load: AsyncSeriesBailHook<[PluginInfo], string | undefined>;
  readonly ready: AsyncSeriesHook<[ReadyInfo]>;
  /** The host stays up (`plinth up`): start background work such as watchers and servers. */
  readonly serve: AsyncSeriesHook<[]>;
  /** `plinth up` prints the status; plugins add sections. */
  readonly status: AsyncSeriesHook<[StatusBoard]>;
  readonly shutdown: AsyncSeriesHook<[]>;
  readonly manifest: AsyncSeriesHook<[PluginInfo]>;
  /** A plugin left while the kernel runs. */
  readonly unload: AsyncSeriesHook<[PluginInfo]>;
  readonly commands: SyncHook<[CommandRegistry]>;
  /** `config validate`: owners of settings sections add the problems they find. */
  readonly validate: AsyncSeriesHook<[SettingsCheck]>;
}

export function createLifecycleHooks(): LifecycleHooks {
  return {
    resolve: new AsyncSeriesHook(['resolution'], 'resolve'),
    load: new AsyncSeriesBailHook(['plugin'], 'load'),
    ready: new AsyncSeriesHook(['ready'], 'ready'),
    serve: new AsyncSeriesHook([], 'serve'),
    status: new AsyncSeriesHook(['board'], 'status'),
    shutdown: new AsyncSeriesHook([], 'shutdown'),
    manifest: new AsyncSeriesHook(['plugin'], 'manifest'),
    unload: new AsyncSeriesHook(['plugin'], 'unload'),
    commands: new SyncHook(['registry'], 'commands'),
    validate: new AsyncSeriesHook(['check'], 'validate'),
  };
}

export interface ScopeOptions {
  readonly plugin: string;
  /** Time limit for one async tap call. */
  readonly timeoutMs: number;
  /** Told about taps that throw or hang; the hook goes on with the next tap. */
  report(error: PlinthError): void;
  /** Every plugin known so far, replayed to a new `manifest` tap. */
  knownPlugins(): readonly PluginInfo[];
  /** Work started by a tap (the manifest replay) that setup must wait for. */
  track(work: Promise<void>): void;
  /** Wraps the registry so that only commands declared in this plugin's manifest are accepted. */
  scopeRegistry(registry: CommandRegistry): CommandRegistry;
  /** Applies a registration (or, for a replacement still setting up, keeps it for later), so that unloading the plugin undoes it. */
  register(apply: () => Disposer): Disposer;
}

/**
 * The lifecycle hooks as one plugin sees them: each tap is named after the
 * plugin, bounded in time, and its failure is reported with plugin and hook
 * instead of stopping the other taps. A failing `load` tap refuses the plugin
 * being loaded (fail closed), since `load` is where trust decides.
 */
export function scopeHooks(hooks: LifecycleHooks, scope: ScopeOptions): PluginHooks {
  const { plugin, timeoutMs, report } = scope;
  const guard = <R>(hook: string, run: () => R | Promise<R>, fallback: R, rethrow = false): Promise<R> => {
    const onTimeout = () => wrapPluginError('PLN_E_HOOK_TIMEOUT', plugin, hook, new Error(`no answer within ${timeoutMs} ms`));
    let work: R | Promise<R>;
    try {
      work = run();
    } catch (error) {
      work = Promise.reject(error);
    }
    return withTimeout(work, timeoutMs, onTimeout).catch((error: unknown) => {
      const wrapped = wrapPluginError('PLN_E_HOOK_FAILED', plugin, hook, error);
      if (rethrow) throw wrapped;
      report(wrapped);
      return fallback;
    });
  };

  const asyncTap = <Args extends unknown[], R>(hook: object, name: string, fallback: R, rethrow = false): PluginHook<Args, R | void> => ({
    tap: (handler, options?: TapOptions) =>
      scope.register(() => addTap(hook, 'promise', plugin, (...args: Args) => guard<R | void>(name, () => handler(...args), fallback, rethrow), options)),
  });

  return {
    load: asyncTap<[PluginInfo], string | undefined>(hooks.load, 'load', undefined, true),
    ready: asyncTap<[ReadyInfo], void>(hooks.ready, 'ready', undefined),
    serve: asyncTap<[], void>(hooks.serve, 'serve', undefined),
    status: asyncTap<[StatusBoard], void>(hooks.status, 'status', undefined),
    shutdown: asyncTap<[], void>(hooks.shutdown, 'shutdown', undefined),
    unload: asyncTap<[PluginInfo], void>(hooks.unload, 'unload', undefined),
    // A check that throws or hangs checked nothing: that is a problem of the settings, never "valid".
    validate: {
      tap: (handler, options) =>
        scope.register(() =>
          addTap(
            hooks.validate,
            'promise',
            plugin,
            async (check: SettingsCheck) => {
              try {
                await guard<void>('validate', () => handler(check), undefined, true);
              } catch (error) {
                const failed = error as PlinthError;
                check.add({ code: failed.code, message: `plugin "${plugin}" could not check its settings: ${failed.message}`, hint: 'run the command again; if it persists, report it to the plugin\'s author' });
              }
            },
            options,
          ),
        ),
    },
    manifest: {
      tap(handler, options) {
        const dispose = asyncTap<[PluginInfo], void>(hooks.manifest, 'manifest', undefined).tap(handler, options);
        scope.track(
          (async () => {
            for (const info of scope.knownPlugins()) await guard('manifest', () => handler(info), undefined);
          })(),
        );
        return dispose;
      },
    },
    commands: {
      tap: (handler, options) =>
        scope.register(() =>
          addTap(
            hooks.commands,
            'sync',
            plugin,
            (registry: CommandRegistry) => {
              try {
                handler(scope.scopeRegistry(registry));
              } catch (error) {
                report(wrapPluginError('PLN_E_HOOK_FAILED', plugin, 'commands', error));
              }
            },
            options,
          ),
        ),
    },
  };
}
