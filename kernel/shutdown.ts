/**
 * Shutdown: the shutdown taps, then each plugin's teardown in reverse load
 * order, each under a time limit and all within an overall one. Never hangs,
 * never throws: what went wrong is in the report, naming the plugin.
 */
import type { AsyncSeriesHook } from 'tapable';
import type { Teardown } from '../sdk/plugin.js';
import type { Timeouts } from './config/schema.js';
import { PlinthError, isPlinthError, wrapPluginError } from '../sdk/errors.js';
import { redactError } from '../internal/text/redact.js';
import type { KernelState } from './state.js';
import { withTimeout } from './timeout.js';

/** One loaded plugin, as shutdown sees it. */
export interface Stoppable {
  readonly name: string;
  readonly teardown: Teardown | undefined;
  /** Before its teardown: abort its signal. */
  stop(): void;
  /** After its teardown: undo its registrations. */
  release(): void;
}

/** What `shutdown()` did: plugins torn down and what failed (redacted), never thrown. */
export interface ShutdownReport {
  /** How long shutdown took. */
  readonly durationMs: number;
  /** The plugins torn down, in the order they stopped (reverse load order). */
  readonly stopped: readonly string[];
  /** Failures of teardowns and shutdown taps; shutdown goes on past each. */
  readonly errors: readonly PlinthError[];
}

/** The kernel's shutdown: services closed, then `runShutdown` over the active plugins in reverse load order, then events closed; errors redacted. */
export async function shutdownKernel(state: KernelState): Promise<ShutdownReport> {
  state.services?.close();
  const report = await runShutdown(state.hooks.shutdown, [...state.loadOrder].reverse().map((record) => ({
    name: record.info.name,
    teardown: record.teardown,
    stop: () => {
      record.abort.abort(new PlinthError('PLN_E_KERNEL_CLOSED', 'the kernel is shutting down'));
    },
    release: () => {
      record.api?.dispose();
      record.state = 'stopped';
    },
  })), state.timeouts);
  state.events.close();
  state.closed = true;
  // Not logged: the caller gets them in the report and decides how to show them.
  return { ...report, errors: report.errors.map((error) => redactError(error, state.redactor)) };
}

/** Stops `plugins` in the order given (the caller passes reverse load order). */
export async function runShutdown(taps: AsyncSeriesHook<[]>, plugins: readonly Stoppable[], timeouts: Pick<Timeouts, 'shutdown' | 'teardown'>): Promise<ShutdownReport> {
  const started = performance.now();
  const deadline = Date.now() + timeouts.shutdown;
  const errors: PlinthError[] = [];
  const stopped: string[] = [];
  const remaining = (limit: number) => Math.max(1, Math.min(limit, deadline - Date.now()));

  await withTimeout(taps.promise(), remaining(timeouts.shutdown), () => new PlinthError('PLN_E_HOOK_TIMEOUT', 'shutdown taps did not finish in time', { hook: 'shutdown' })).catch(
    (error: unknown) => void errors.push(isPlinthError(error) ? error : wrapPluginError('PLN_E_HOOK_FAILED', 'kernel', 'shutdown', error)),
  );
  for (const plugin of plugins) {
    const error = await stopOne(plugin, remaining(timeouts.teardown));
    if (error) errors.push(error);
    stopped.push(plugin.name);
  }
  return { durationMs: performance.now() - started, stopped, errors };
}

/** Stops one plugin: aborts its signal, runs its teardown within `limit` ms, undoes its registrations. Never throws. */
export async function stopOne(plugin: Stoppable, limit: number): Promise<PlinthError | undefined> {
  const { name, teardown } = plugin;
  let failure: PlinthError | undefined;
  plugin.stop();
  if (teardown) {
    try {
      await withTimeout(
        Promise.resolve().then(teardown),
        limit,
        () => new PlinthError('PLN_E_TEARDOWN_TIMEOUT', `plugin "${name}" did not finish its teardown within ${limit} ms`, { plugin: name, hook: 'teardown', hint: 'its resources may not be released; fix its teardown' }),
      );
    } catch (error) {
      failure = isPlinthError(error) && error.plugin === name ? error : wrapPluginError('PLN_E_PLUGIN_TEARDOWN', name, 'teardown', error);
    }
  }
  plugin.release();
  return failure;
}
