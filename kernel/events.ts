/**
 * Agent events: one tapable AsyncSeriesWaterfallHook per canonical event. The
 * state flowing through the waterfall collects the decision; a handler that
 * blocks ends the chain, a handler that throws blocks (fail closed) and is
 * named, and a handler that never settles is reported by a watchdog instead of
 * hanging the host.
 *
 * Handlers are registered as tapable taps (so ordering by stage/before and
 * interceptors' `register` apply), but while no interceptor watches calls, emit
 * walks the ordered taps itself: a synchronous handler then costs no promise,
 * and an async one a single `then`, which keeps emit as cheap as a bare hook.
 */
import { AsyncSeriesWaterfallHook } from 'tapable';
import { type BlockedBy, EVENTS, EVENT_ALIASES, canonicalEvent, type Decision, type EventHandler, type EventName, type EventResult } from '../sdk/events.js';
import type { Disposer, TapOptions } from '../sdk/plugin.js';
import { PlinthError, describeCause, wrapPluginError } from '../sdk/errors.js';
import { closestName } from '../internal/text/suggest.js';
import { addTap } from './taps.js';
import { type Inflight, InflightList } from './inflight.js';
import { isThenable } from './timeout.js';

/** What flows through an event's waterfall. */
export interface EmitState extends Decision {
  readonly event: EventName;
  /** The plugin whose handler is running; named when it hangs. */
  current: string | undefined;
  /** Set once the caller has been answered (by the chain or the watchdog). */
  settled: boolean;
  readonly redact: (text: string) => string;
}

export type EventHooks = { readonly [E in EventName]: AsyncSeriesWaterfallHook<[EmitState]> };

export interface EventBusOptions {
  /** How long one emit may wait for its handlers before the hung one is named and the event blocked. */
  timeoutMs: number;
  /** Told about handlers that throw or hang. */
  report(error: PlinthError): void;
  /** Applied to every message a decision carries: handlers may quote secrets. */
  redact(text: string): string;
}

/** A tap made by `EventBus.on`: tapable's entry, plus the handler for the direct walk. */
interface HandlerTap {
  readonly plugin?: string;
  readonly handler?: EventHandler;
}

interface PendingEmit extends Inflight {
  readonly state: EmitState;
}

/** Resolves an event name or alias, or throws PLN_E_EVENT_UNKNOWN. */
export function requireEvent(name: string): EventName {
  const event = canonicalEvent(name);
  if (event === undefined) throw unknownEvent(name);
  return event;
}

/** A rejected promise for an unknown event: emit reports bad input by rejecting, never by throwing. */
export function rejectUnknown(name: string): Promise<never> {
  return Promise.reject(unknownEvent(name));
}

function unknownEvent(name: string): PlinthError {
  // A host's or plugin's typo is found here first: the nearest name, canonical or alias, is the likely fix.
  const near = closestName(name, [...EVENTS, ...Object.keys(EVENT_ALIASES)]);
  return new PlinthError('PLN_E_EVENT_UNKNOWN', `unknown event "${name}"${near ? ` (did you mean "${near}"?)` : ''}`, {
    hint: `use one of: ${EVENTS.join(', ')} (or a hook protocol alias such as pre-tool-call)`,
  });
}

export class EventBus {
  readonly hooks: EventHooks;
  /** How long one emit may wait for its handlers (settings may change it after construction). */
  timeoutMs: number;
  private readonly inflight = new InflightList();
  private watchdog: NodeJS.Timeout | undefined;
  /** Whether the watchdog holds the process up (emits are in flight). */
  private holding = false;
  /** Advanced by each watchdog sweep; emits are stamped with it. */
  private tick = 0;
  /** Per hook: the taps to walk directly, or undefined when tapable must dispatch (interceptors, foreign taps). */
  private readonly walkable = new Map<EventName, { length: number; taps: ReadonlyArray<HandlerTap> | undefined }>();

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
    // What tapable calls when an interceptor watches the hook; the direct walk in
    // `emit` does the same with `step`.
    const fn = (state: EmitState, next: (error: null, state: EmitState) => void): void => {
      if (!state.allow || state.settled) return next(null, state);
      const result = step(state, plugin, handler, report);
      if (isThenable<EventResult | void>(result)) {
        result.then(
          (value) => next(null, apply(state, plugin, value)),
          (error: unknown) => next(null, fail(state, plugin, error, report)),
        );
      } else next(null, state);
    };
    this.walkable.delete(name);
    const dispose = addTap(this.hooks[name], 'async', plugin, fn, { ...options, plugin, handler } as TapOptions);
    return () => {
      this.walkable.delete(name);
      dispose();
    };
  }

  /** Fires `event` through every handler and returns the combined decision. */
  emit(event: string, context: Record<string, unknown> = {}): Promise<Decision> {
    const name = canonicalEvent(event);
    if (name === undefined) return rejectUnknown(event);
    const state: EmitState = {
      event: name,
      allow: true,
      messages: [],
      systemMessages: [],
      context,
      current: undefined,
      settled: false,
      redact: this.options.redact,
    };
    const hook = this.hooks[name];
    if (hook.taps.length === 0) return Promise.resolve(toDecision(state));
    return new Promise<Decision>((resolve) => {
      const pending: PendingEmit = {
        state,
        started: this.tick,
        prev: undefined,
        next: undefined,
        finish: (decision) => {
          this.inflight.remove(pending);
          this.release();
          if (state.settled) return;
          state.settled = true;
          resolve(decision);
        },
      };
      this.inflight.add(pending);
      this.armWatchdog();
      const done = (): void => pending.finish(toDecision(state));
      const taps = this.walkTaps(name);
      if (taps) {
        walk(state, taps, 0, this.options.report, done);
      } else {
        hook.callAsync(state, (error) => {
          // Handlers never pass an error on; a failing interceptor is the only way here.
          if (error) fail(state, state.current ?? 'kernel', error, this.options.report);
          done();
        });
      }
    });
  }

  /** Stops the watchdog; pending emits are answered as blocked. */
  close(): void {
    for (const item of this.inflight.items()) {
      const { state } = item as PendingEmit;
      item.finish(toDecision(blocked(state, 'kernel', 'the kernel shut down before the event finished', 'PLN_E_KERNEL_CLOSED')));
    }
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = undefined;
    this.holding = false;
  }

  /**
   * The ordered taps of `event` as a snapshot (a handler may dispose itself mid-emit),
   * cached until a tap is added or removed; undefined when tapable must dispatch.
   */
  private walkTaps(event: EventName): ReadonlyArray<HandlerTap> | undefined {
    const hook = this.hooks[event];
    const cached = this.walkable.get(event);
    // A length change catches taps made on the raw hook, which `on` never sees.
    if (cached && cached.length === hook.taps.length && hook.interceptors.length === 0) return cached.taps;
    const taps = hook.taps as unknown as ReadonlyArray<HandlerTap>;
    const direct = hook.interceptors.length === 0 && taps.every((tap) => tap.handler !== undefined);
    const snapshot = direct ? taps.slice() : undefined;
    this.walkable.set(event, { length: taps.length, taps: snapshot });
    return snapshot;
  }

  // One coarse timer for all emits, rather than a timer per handler call: an emit
  // times out within one period after timeoutMs.
  private period(): number {
    return Math.max(10, Math.min(1000, Math.floor(this.timeoutMs / 4)));
  }

  /**
   * Armed while emits are in flight, and stopped by the sweep that finds none.
   * It holds the process up only while an emit waits (ref'd on the first, let
   * go when the last one finishes): a caller is waiting for the decision, and a
   * handler stuck on a promise that nothing holds (no socket, no timer) would
   * otherwise let the process end mid-emit — a command exiting 13 with no
   * answer, a host's pending decision gone — instead of the event being
   * blocked after timeoutMs. Idle, it never keeps a finished process alive.
   */
  private armWatchdog(): void {
    if (!this.watchdog) this.watchdog = setInterval(() => this.sweep(), this.period());
    if (!this.holding) {
      this.holding = true;
      this.watchdog.ref();
    }
  }

  /** The last emit in flight finished: the watchdog no longer holds the process up. */
  private release(): void {
    if (!this.holding || !this.inflight.empty) return;
    this.holding = false;
    this.watchdog?.unref();
  }

  private sweep(): void {
    this.tick++;
    const ticks = Math.ceil(this.timeoutMs / this.period());
    for (const item of this.inflight.items()) {
      // Stamps fall between sweeps: waiting one sweep more than timeoutMs/period never times out early.
      if (this.tick - item.started <= ticks) continue;
      const { state } = item as PendingEmit;
      const plugin = state.current ?? 'kernel';
      const error = new PlinthError('PLN_E_EVENT_TIMEOUT', `plugin "${plugin}" did not answer ${state.event} within ${this.timeoutMs} ms`, {
        plugin,
        hook: state.event,
        hint: 'the event was blocked; fix the handler or raise timeouts.event in settings.json',
      });
      this.options.report(error);
      item.finish(toDecision(blocked(state, plugin, error.message, error.code)));
    }
    if (this.inflight.empty && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
      this.holding = false;
    }
  }
}

/** Runs handlers from `index` on, synchronously while they answer synchronously. */
function walk(state: EmitState, taps: ReadonlyArray<HandlerTap>, index: number, report: (error: PlinthError) => void, done: () => void): void {
  for (let i = index; i < taps.length; i++) {
    if (!state.allow || state.settled) break;
    const { plugin, handler } = taps[i] as Required<HandlerTap>;
    const result = step(state, plugin, handler, report);
    if (isThenable<EventResult | void>(result)) {
      result.then(
        (value) => {
          apply(state, plugin, value);
          walk(state, taps, i + 1, report, done);
        },
        (error: unknown) => {
          fail(state, plugin, error, report);
          done();
        },
      );
      return;
    }
  }
  done();
}

/** Calls one handler; applies a synchronous answer at once and returns a pending one. */
function step(state: EmitState, plugin: string, handler: EventHandler, report: (error: PlinthError) => void): PromiseLike<EventResult | void> | undefined {
  state.current = plugin;
  let result: ReturnType<EventHandler>;
  try {
    result = handler(state.context, state.event);
  } catch (error) {
    fail(state, plugin, error, report);
    return undefined;
  }
  if (isThenable<EventResult | void>(result)) return result;
  apply(state, plugin, result);
  return undefined;
}

function apply(state: EmitState, plugin: string, result: EventResult | void): EmitState {
  if (result === undefined || result === null || state.settled) return state;
  const messages = texts(state, result.message);
  if (messages) state.messages.push(...messages);
  const systemMessages = texts(state, result.systemMessage);
  if (systemMessages) state.systemMessages.push(...systemMessages);
  if (result.context !== undefined) state.context = result.context;
  if (result.allow === false) {
    state.allow = false;
    const blockedBy: BlockedBy = { plugin };
    if (result.by !== undefined) blockedBy.by = result.by;
    if (messages?.[0] !== undefined) blockedBy.reason = messages[0];
    if (typeof result.code === 'string' && result.code !== '') blockedBy.code = result.code;
    if (typeof result.fix === 'string' && result.fix !== '') blockedBy.fix = state.redact(result.fix);
    state.blockedBy = blockedBy;
  }
  return state;
}

/** A handler's message(s), redacted; undefined when there are none. */
function texts(state: EmitState, value: string | readonly string[] | undefined): string[] | undefined {
  if (!value) return undefined;
  if (typeof value === 'string') return [state.redact(value)];
  const list = value.filter((text) => typeof text === 'string' && text !== '').map(state.redact);
  return list.length > 0 ? list : undefined;
}

function fail(state: EmitState, plugin: string, error: unknown, report: (error: PlinthError) => void): EmitState {
  const wrapped = wrapPluginError('PLN_E_EVENT_HANDLER', plugin, state.event, error);
  report(wrapped);
  return blocked(state, plugin, `handler failed: ${describeCause(error)}`, wrapped.code);
}

function blocked(state: EmitState, plugin: string, reason: string, code: string): EmitState {
  if (state.settled) return state;
  const safe = state.redact(reason);
  state.allow = false;
  state.blockedBy = { plugin, reason: safe, code };
  state.messages.push(`${plugin}: ${safe}`);
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
