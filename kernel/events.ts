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
 * The walk starts synchronously, outside any promise: while handlers answer at
 * once, an emit is never in flight (nothing can hang, the watchdog has nothing
 * to watch) and costs the one resolved promise it returns. The first handler
 * that answers with a promise puts the emit in flight, under the watchdog.
 */
import { AsyncSeriesWaterfallHook } from 'tapable';
import { type BlockedBy, EVENTS, EVENT_ALIASES, canonicalEvent, type Decision, type EventHandler, type EventName, type EventResult, mergeHostDirectives } from '../sdk/events.js';
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

/** One handler of the direct walk (all of one shape, so that the walk's property reads stay monomorphic). */
interface Step {
  readonly plugin: string;
  readonly handler: EventHandler;
}

/**
 * An event's hook and the taps to walk directly, cached until they change:
 * reached by the event's name or any alias in one lookup.
 */
interface Route {
  readonly name: EventName;
  readonly hook: AsyncSeriesWaterfallHook<[EmitState]>;
  /** `hook.taps.length` when `steps` was taken; -1 when it must be taken again. */
  length: number;
  /** The ordered handlers; undefined when tapable must dispatch (interceptors, foreign taps). */
  steps: ReadonlyArray<Step> | undefined;
}

/**
 * One emit: what flows through the event's waterfall and, once a handler answers
 * with a promise, its entry in the list of emits in flight. One object of one
 * shape per emit, whatever its handlers do.
 */
class Emit implements EmitState, Inflight {
  // Fields assigned in the constructor, not declared with initializers: the hot path's
  // allocation is then one plain object of one shape (class field definitions cost more).
  declare readonly event: EventName;
  declare allow: boolean;
  declare readonly messages: string[];
  declare readonly systemMessages: string[];
  declare context: Record<string, unknown>;
  declare blockedBy?: BlockedBy;
  declare host?: Decision['host'];
  declare current: string | undefined;
  declare settled: boolean;
  declare started: number;
  declare prev: Inflight | undefined;
  declare next: Inflight | undefined;
  /** Answers the caller; set once the emit is in flight. */
  declare resolve: ((decision: Decision) => void) | undefined;
  declare private readonly bus: EventBus;

  constructor(event: EventName, context: Record<string, unknown>, bus: EventBus) {
    this.event = event;
    this.allow = true;
    this.messages = [];
    this.systemMessages = [];
    this.context = context;
    this.host = undefined;
    this.current = undefined;
    this.settled = false;
    this.started = 0;
    this.prev = undefined;
    this.next = undefined;
    this.resolve = undefined;
    this.bus = bus;
  }

  redact(text: string): string {
    return this.bus.redact(text);
  }

  /** Answers the caller once with `decision`; later calls do nothing. */
  finish(decision: Decision): void {
    this.bus.landed(this);
    if (this.settled) return;
    this.settled = true;
    this.resolve!(decision);
  }

  /** The chain ended: answers with the decision it came to. */
  done(): void {
    this.finish(toDecision(this));
  }
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

/** The resolve function of the promise just made with `capture` (an executor runs at once). */
let captured: ((decision: Decision) => void) | undefined;
const capture = (resolve: (decision: Decision) => void): void => {
  captured = resolve;
};

/** The buses whose watchdog runs: asked, when the process is about to end, to hold it up while an emit waits. */
const watched = new Set<EventBus>();
let listening = false;

function holdWaiting(): void {
  for (const bus of watched) bus.holdIfWaiting();
}

export class EventBus {
  readonly hooks: EventHooks;
  /** How long one emit may wait for its handlers (settings may change it after construction). */
  timeoutMs: number;
  private readonly inflight = new InflightList();
  private watchdog: NodeJS.Timeout | undefined;
  /** Whether the watchdog holds the process up (it was about to end while emits were in flight). */
  private holding = false;
  /** Advanced by each watchdog sweep; emits are stamped with it. */
  private tick = 0;
  /** Each event name and alias → its route (hook and cached handlers). */
  private readonly routes = new Map<string, Route>();

  constructor(private readonly options: EventBusOptions) {
    this.timeoutMs = options.timeoutMs;
    const hooks = {} as Record<EventName, AsyncSeriesWaterfallHook<[EmitState]>>;
    for (const event of EVENTS) {
      hooks[event] = new AsyncSeriesWaterfallHook<[EmitState]>(['state'], event);
      this.routes.set(event, { name: event, hook: hooks[event], length: -1, steps: undefined });
    }
    for (const [alias, event] of Object.entries(EVENT_ALIASES)) this.routes.set(alias, this.routes.get(event)!);
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
          (value) => next(null, settle(state, plugin, value, report)),
          (error: unknown) => next(null, fail(state, plugin, error, report)),
        );
      } else next(null, state);
    };
    const route = this.routes.get(name)!;
    route.length = -1;
    const dispose = addTap(this.hooks[name], 'async', plugin, fn, { ...options, plugin, handler } as TapOptions);
    return () => {
      route.length = -1;
      dispose();
    };
  }

  /** Fires `event` through every handler and returns the combined decision. */
  emit(event: string, context: Record<string, unknown> = {}): Promise<Decision> {
    const route = this.routes.get(event);
    if (route === undefined) return rejectUnknown(event);
    const state = new Emit(route.name, context, this);
    if (route.hook.taps.length === 0) return Promise.resolve(toDecision(state));
    const steps = this.steps(route);
    if (steps === undefined) return this.dispatch(state, route.hook);
    // Synchronous while handlers answer synchronously: nothing is in flight yet.
    const report = this.options.report;
    for (let i = 0; i < steps.length && state.allow; i++) {
      const { plugin, handler } = steps[i]!;
      const pending = step(state, plugin, handler, report);
      if (pending !== undefined) return this.rest(state, steps, i, pending);
    }
    return Promise.resolve(toDecision(state));
  }

  /** The rest of an emit whose handler `steps[index]` answered with a promise: in flight, under the watchdog. */
  private rest(state: Emit, steps: ReadonlyArray<Step>, index: number, answer: PromiseLike<EventResult | void>): Promise<Decision> {
    // Apart from emit's loop (a closure there would give every turn of it a context of its own),
    // and with the one executor that closes over nothing.
    const promise = new Promise<Decision>(capture);
    this.lift(state, captured!);
    follow(state, steps, index, answer, this.options.report);
    return promise;
  }

  /** An emit tapable dispatches (an interceptor watches, or a tap was made on the raw hook). */
  private dispatch(state: Emit, hook: AsyncSeriesWaterfallHook<[EmitState]>): Promise<Decision> {
    return new Promise<Decision>((resolve) => {
      this.lift(state, resolve);
      hook.callAsync(state, (error) => {
        // Handlers never pass an error on; a failing interceptor is the only way here.
        if (error) fail(state, state.current ?? 'kernel', error, this.options.report);
        state.done();
      });
    });
  }

  /** `state` is in flight: named by the watchdog if it hangs, answered blocked at close. */
  private lift(state: Emit, resolve: (decision: Decision) => void): void {
    state.resolve = resolve;
    state.started = this.tick;
    this.inflight.add(state);
    this.armWatchdog();
  }

  /** Applied to every message a decision carries. */
  redact(text: string): string {
    return this.options.redact(text);
  }

  /** An emit in flight was answered (by its chain, the watchdog or close). */
  landed(state: Emit): void {
    this.inflight.remove(state);
    this.release();
  }

  /** Stops the watchdog; pending emits are answered as blocked. */
  close(): void {
    for (const item of this.inflight.items()) {
      const state = item as Emit;
      item.finish(toDecision(blocked(state, 'kernel', 'the kernel shut down before the event finished', 'PLN_E_KERNEL_CLOSED')));
    }
    this.disarm();
  }

  /**
   * The ordered handlers of `route` as a snapshot (a handler may dispose itself mid-emit),
   * cached until a tap is added or removed; undefined when tapable must dispatch.
   */
  private steps(route: Route): ReadonlyArray<Step> | undefined {
    const { hook } = route;
    // A length change catches taps made on the raw hook, which `on` never sees.
    if (route.length === hook.taps.length && hook.interceptors.length === 0) return route.steps;
    const taps = hook.taps as unknown as ReadonlyArray<HandlerTap>;
    const direct = hook.interceptors.length === 0 && taps.every((tap) => tap.handler !== undefined);
    route.steps = direct ? taps.map((tap) => ({ plugin: tap.plugin!, handler: tap.handler! })) : undefined;
    route.length = taps.length;
    return route.steps;
  }

  // One coarse timer for all emits, rather than a timer per handler call: an emit
  // times out within one period after timeoutMs.
  private period(): number {
    return Math.max(10, Math.min(1000, Math.floor(this.timeoutMs / 4)));
  }

  /**
   * Armed while emits are in flight, and stopped by the sweep that finds none.
   * It holds the process up only while an emit waits: a caller is waiting for
   * the decision, and a handler stuck on a promise that nothing holds (no
   * socket, no timer) would otherwise let the process end mid-emit — a command
   * exiting 13 with no answer, a host's pending decision gone — instead of the
   * event being blocked after timeoutMs. Idle, it never keeps a finished process
   * alive. The timer is unref'd, and Node's `beforeExit` (the process has
   * nothing left to do) refs it while an emit waits: holding the process then,
   * rather than ref'ing and unref'ing it around every emit, costs an emit nothing.
   */
  private armWatchdog(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => this.sweep(), this.period()).unref();
    watched.add(this);
    if (!listening) {
      listening = true;
      process.on('beforeExit', holdWaiting);
    }
  }

  /** The process is about to end: while an emit waits, the watchdog holds it up until the emit is answered. */
  holdIfWaiting(): void {
    if (this.holding || this.inflight.empty || !this.watchdog) return;
    this.holding = true;
    this.watchdog.ref();
  }

  /** The last emit in flight finished: the watchdog no longer holds the process up. */
  private release(): void {
    if (!this.holding || !this.inflight.empty) return;
    this.holding = false;
    this.watchdog?.unref();
  }

  /** The watchdog stops (no emit in flight, or the kernel closed). */
  private disarm(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = undefined;
    this.holding = false;
    watched.delete(this);
  }

  private sweep(): void {
    this.tick++;
    const ticks = Math.ceil(this.timeoutMs / this.period());
    for (const item of this.inflight.items()) {
      // Stamps fall between sweeps: waiting one sweep more than timeoutMs/period never times out early.
      if (this.tick - item.started <= ticks) continue;
      const state = item as Emit;
      const plugin = state.current ?? 'kernel';
      const error = new PlinthError('PLN_E_EVENT_TIMEOUT', `plugin "${plugin}" did not answer ${state.event} within ${this.timeoutMs} ms`, {
        plugin,
        hook: state.event,
        hint: 'the event was blocked; fix the handler or raise timeouts.event in settings.json',
      });
      this.options.report(error);
      item.finish(toDecision(blocked(state, plugin, error.message, error.code)));
    }
    if (this.inflight.empty) this.disarm();
  }
}

/** Waits for the answer of `steps[index]`, then walks on from the next handler. */
function follow(state: Emit, steps: ReadonlyArray<Step>, index: number, answer: PromiseLike<EventResult | void>, report: (error: PlinthError) => void): void {
  const { plugin } = steps[index]!;
  try {
    answer.then(
      (value) => {
        if (value !== undefined) settle(state, plugin, value, report);
        walk(state, steps, index + 1, report);
      },
      (error: unknown) => {
        fail(state, plugin, error, report);
        state.done();
      },
    );
  } catch (error) {
    // A thenable whose `then` throws: its handler failed.
    fail(state, plugin, error, report);
    state.done();
  }
}

/** Runs handlers from `index` on, synchronously while they answer synchronously; answers once the chain ends. */
function walk(state: Emit, steps: ReadonlyArray<Step>, index: number, report: (error: PlinthError) => void): void {
  for (let i = index; i < steps.length; i++) {
    if (!state.allow || state.settled) break;
    const { plugin, handler } = steps[i]!;
    const pending = step(state, plugin, handler, report);
    if (pending !== undefined) return follow(state, steps, i, pending, report);
  }
  state.done();
}

/** Calls one handler; applies a synchronous answer at once and returns a pending one. */
function step(state: EmitState, plugin: string, handler: EventHandler, report: (error: PlinthError) => void): PromiseLike<EventResult | void> | undefined {
  state.current = plugin;
  let result: ReturnType<EventHandler>;
  try {
    result = handler(state.context, state.event);
    if (result === undefined) return undefined;
    if (isThenable<EventResult | void>(result)) return result;
    apply(state, plugin, result);
  } catch (error) {
    // A handler that throws, or answers what cannot be read (a message that is no text), blocks.
    fail(state, plugin, error, report);
  }
  return undefined;
}

/** Applies a handler's late answer; one that cannot be read blocks, as a throw does. */
function settle(state: EmitState, plugin: string, value: EventResult | void, report: (error: PlinthError) => void): EmitState {
  try {
    return apply(state, plugin, value);
  } catch (error) {
    return fail(state, plugin, error, report);
  }
}

function apply(state: EmitState, plugin: string, result: EventResult | void): EmitState {
  if (result === undefined || result === null || state.settled) return state;
  const messages = texts(state, result.message);
  if (messages) state.messages.push(...messages);
  const systemMessages = texts(state, result.systemMessage);
  if (systemMessages) state.systemMessages.push(...systemMessages);
  if (result.context !== undefined) state.context = result.context;
  if (result.host !== undefined) state.host = mergeHostDirectives(state.host, result.host);
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
  const list = value.filter((text) => typeof text === 'string' && text !== '').map((text) => state.redact(text));
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
  if (state.host) decision.host = state.host;
  return decision;
}
