/**
 * Agent events: one tapable AsyncSeriesWaterfallHook per canonical event. The
 * state flowing through the waterfall collects the decision; a handler that
 * blocks ends the chain, a handler that throws blocks (fail closed) and is
 * named, and a handler that never settles is reported by a watchdog instead of
 * hanging the host.
 */
import { AsyncSeriesWaterfallHook } from 'tapable';
import { EVENTS, canonicalEvent, type Decision, type EventHandler, type EventName, type EventResult } from '../sdk/events.js';
import type { Disposer, TapOptions } from '../sdk/plugin.js';
import { PlinthError, describeCause, wrapPluginError } from './errors.js';
import { addTap } from './taps.js';
import { isThenable } from './timeout.js';

/** What flows through an event's waterfall. */
export interface EmitState extends Decision {
  readonly event: EventName;
  /** The plugin whose handler is running; named when it hangs. */
  current: string | undefined;
  /** Set once the caller has been answered (by the chain or the watchdog). */
  settled: boolean;
}

export type EventHooks = { readonly [E in EventName]: AsyncSeriesWaterfallHook<[EmitState]> };

export interface EventBusOptions {
  /** How long one emit may wait for its handlers before the hung one is named and the event blocked. */
  timeoutMs: number;
  /** Told about handlers that throw or hang. */
  report(error: PlinthError): void;
}

interface PendingEmit {
  readonly state: EmitState;
  readonly started: number;
  finish(decision: Decision): void;
}

/** Resolves an event name or alias, or throws PLN_E_EVENT_UNKNOWN. */
export function requireEvent(name: string): EventName {
  const event = canonicalEvent(name);
  if (event === undefined) {
    throw new PlinthError('PLN_E_EVENT_UNKNOWN', `unknown event "${name}"`, {
      hint: `use one of: ${EVENTS.join(', ')} (or a hook protocol alias such as pre-tool-call)`,
    });
  }
  return event;
}

export class EventBus {
  readonly hooks: EventHooks;
  /** How long one emit may wait for its handlers (settings may change it after construction). */
  timeoutMs: number;
  private readonly pending = new Set<PendingEmit>();
  private watchdog: NodeJS.Timeout | undefined;

  constructor(private readonly options: EventBusOptions) {
    this.timeoutMs = options.timeoutMs;
    const hooks = {} as Record<EventName, AsyncSeriesWaterfallHook<[EmitState]>>;
    for (const event of EVENTS) hooks[event] = new AsyncSeriesWaterfallHook<[EmitState]>(['state'], event);
    this.hooks = hooks;
  }

  /** Whether any handler listens to `event`. */
  has(event: EventName): boolean {
    return this.hooks[event].taps.length > 0;
  }

  /** Registers `handler` for `event`, named after `plugin`. */
  on(plugin: string, event: string, handler: EventHandler, options?: TapOptions): Disposer {
    const name = requireEvent(event);
    const report = this.options.report;
    const fn = (state: EmitState): Promise<EmitState> => {
      if (!state.allow || state.settled) return Promise.resolve(state);
      state.current = plugin;
      let result: ReturnType<EventHandler>;
      try {
        result = handler(state.context, name);
      } catch (error) {
        return Promise.resolve(fail(state, plugin, error, report));
      }
      if (isThenable<EventResult | void>(result)) {
        return Promise.resolve(result).then(
          (value) => apply(state, plugin, value),
          (error: unknown) => fail(state, plugin, error, report),
        );
      }
      return Promise.resolve(apply(state, plugin, result));
    };
    return addTap(this.hooks[name], 'promise', plugin, fn, options);
  }

  /** Fires `event` through every handler and returns the combined decision. */
  emit(event: string, context: Record<string, unknown> = {}): Promise<Decision> {
    const name = requireEvent(event);
    const state: EmitState = {
      event: name,
      allow: true,
      messages: [],
      systemMessages: [],
      context,
      current: undefined,
      settled: false,
    };
    const hook = this.hooks[name];
    if (hook.taps.length === 0) return Promise.resolve(toDecision(state));
    return new Promise<Decision>((resolve) => {
      const pending: PendingEmit = {
        state,
        started: Date.now(),
        finish: (decision) => {
          this.pending.delete(pending);
          if (state.settled) return;
          state.settled = true;
          resolve(decision);
        },
      };
      this.pending.add(pending);
      this.armWatchdog();
      hook.promise(state).then(
        () => pending.finish(toDecision(state)),
        // The wrapper never rejects; a failing interceptor is the only way here.
        (error: unknown) => pending.finish(toDecision(fail(state, state.current ?? 'kernel', error, this.options.report))),
      );
    });
  }

  /** Stops the watchdog; pending emits are answered as blocked. */
  close(): void {
    for (const pending of this.pending) {
      pending.finish(blocked(pending.state, 'kernel', 'the kernel shut down before the event finished', 'PLN_E_KERNEL_CLOSED'));
    }
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  // One coarse timer for all emits, rather than a timer per handler call: the
  // event path stays as cheap as a bare tapable hook.
  private armWatchdog(): void {
    if (this.watchdog) return;
    const period = Math.max(10, Math.min(1000, Math.floor(this.timeoutMs / 4)));
    this.watchdog = setInterval(() => this.checkPending(), period);
    this.watchdog.unref();
  }

  private checkPending(): void {
    const now = Date.now();
    for (const pending of this.pending) {
      if (now - pending.started < this.timeoutMs) continue;
      const plugin = pending.state.current ?? 'kernel';
      const error = new PlinthError(
        'PLN_E_EVENT_TIMEOUT',
        `plugin "${plugin}" did not answer ${pending.state.event} within ${this.timeoutMs} ms`,
        { plugin, hook: pending.state.event, hint: 'the event was blocked; fix the handler or raise timeouts.event in settings.json' },
      );
      this.options.report(error);
      pending.finish(blocked(pending.state, plugin, error.message, error.code));
    }
    if (this.pending.size === 0 && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
  }
}

function apply(state: EmitState, plugin: string, result: EventResult | void): EmitState {
  if (result === undefined || result === null || state.settled) return state;
  if (result.message) state.messages.push(result.message);
  if (result.systemMessage) state.systemMessages.push(result.systemMessage);
  if (result.context !== undefined) state.context = result.context;
  if (result.allow === false) {
    state.allow = false;
    state.blockedBy = result.message === undefined ? { plugin } : { plugin, reason: result.message };
  }
  return state;
}

function fail(state: EmitState, plugin: string, error: unknown, report: (error: PlinthError) => void): EmitState {
  const wrapped = wrapPluginError('PLN_E_EVENT_HANDLER', plugin, state.event, error);
  report(wrapped);
  return blocked(state, plugin, `handler failed: ${describeCause(error)}`, wrapped.code);
}

function blocked(state: EmitState, plugin: string, reason: string, code: string): EmitState {
  state.allow = false;
  state.blockedBy = { plugin, reason, code };
  state.messages.push(`${plugin}: ${reason}`);
  return state;
}

function toDecision(state: EmitState): Decision {
  const decision: Decision = {
    allow: state.allow,
    messages: state.messages,
    systemMessages: state.systemMessages,
    context: state.context,
  };
  if (state.blockedBy) decision.blockedBy = state.blockedBy;
  return decision;
}
