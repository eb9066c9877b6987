/**
 * Rate limits for hook runs: per hook, executions per minute (a sliding 60 s
 * window) and a cooldown (the least time between two starts); globally,
 * executions per minute over every hook together. Every refusal is counted, and
 * the counts are what `plinth hooks list` shows.
 */
import type { GlobalRateCounts, HookDefinition, HookRateCounts } from './types.js';

/** The sliding window of a per-minute limit. */
export const WINDOW_MS = 60_000;

/** What {@link RateLimiter.take} answers. A refusal says why, when to retry, and a sentence for the user. */
export type TakeResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** `cooldown`: too soon after its last start; `rate_limited`: its own or the global per-minute limit. */
      readonly failure: 'rate_limited' | 'cooldown';
      /** Milliseconds until a start would be allowed (for this reason; another limit may still refuse). */
      readonly retryInMs: number;
      /** Names the hook and the limit. */
      readonly message: string;
    };

/** The subset of a definition the limiter reads. */
export type RateLimitedHook = Pick<HookDefinition, 'id' | 'rateLimit'>;

/** Decides, hook by hook, whether a run may start now; a granted start is recorded. */
export interface RateLimiter {
  /**
   * Asks to start `hook` now. Checks, in this order, its cooldown, its own
   * per-minute limit, then the global one; the start is recorded only when all
   * three allow it. Synchronous, so that the order of calls decides.
   */
  take(hook: RateLimitedHook): TakeResult;
  /** Counts of every hook that has asked, sorted by id. */
  counts(): HookRateCounts[];
  /** Counts over all hooks. */
  globalCounts(): GlobalRateCounts;
}

/** Options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** Executions per minute over all hooks together. Default: no global limit. */
  readonly globalPerMinute?: number;
  /** Milliseconds on a monotonic clock. Default: `performance.now()`, so wall-clock changes do not matter. */
  readonly now?: () => number;
}

/** Start times within the window, oldest first; trimmed as time passes. */
class Window {
  private times: number[] = [];
  private head = 0;

  /** Drops starts that left the window at `now`, and returns how many remain. */
  size(now: number): number {
    while (this.head < this.times.length && now - this.times[this.head]! >= WINDOW_MS) this.head++;
    if (this.head > 64 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    return this.times.length - this.head;
  }

  oldest(): number | undefined {
    return this.times[this.head];
  }

  push(now: number): void {
    this.times.push(now);
  }
}

interface HookState {
  readonly window: Window;
  last?: number;
  total: number;
  limited: number;
}

/** A limit that is not a positive number is no limit (the definition schema rejects those anyway). */
function limitOf(value: number | undefined): number | undefined {
  return typeof value === 'number' && value > 0 ? value : undefined;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.ceil(ms)} ms` : `${(Math.ceil(ms / 100) / 10).toFixed(1)} s`;
}

/**
 * Creates a rate limiter. One per hooks plugin instance: the counts live as
 * long as it does.
 *
 * ```ts
 * const limiter = createRateLimiter({ globalPerMinute: 120 });
 * const verdict = limiter.take(hook);
 * if (!verdict.ok) log.warn(verdict.message);
 * ```
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? (() => performance.now());
  const globalLimit = limitOf(options.globalPerMinute);
  const global = { window: new Window(), total: 0, limited: 0 };
  const hooks = new Map<string, HookState>();

  function stateOf(id: string): HookState {
    let state = hooks.get(id);
    if (!state) {
      state = { window: new Window(), total: 0, limited: 0 };
      hooks.set(id, state);
    }
    return state;
  }

  function refuse(state: HookState, failure: 'rate_limited' | 'cooldown', retryInMs: number, message: string): TakeResult {
    state.limited++;
    const retry = Math.max(0, retryInMs);
    return { ok: false, failure, retryInMs: retry, message: `${message}; it may run again in ${seconds(retry)}.` };
  }

  return {
    take(hook) {
      const t = now();
      const state = stateOf(hook.id);
      const cooldown = limitOf(hook.rateLimit.cooldownMs);
      if (cooldown !== undefined && state.last !== undefined && t - state.last < cooldown) {
        return refuse(
          state,
          'cooldown',
          state.last + cooldown - t,
          `Hook "${hook.id}" was not run: it started ${seconds(t - state.last)} ago and its cooldown is ${cooldown} ms`,
        );
      }
      // Sizing trims the windows, so they stay bounded even without a limit.
      const hookRecent = state.window.size(t);
      const globalRecent = global.window.size(t);
      const perMinute = limitOf(hook.rateLimit.perMinute);
      if (perMinute !== undefined && hookRecent >= perMinute) {
        return refuse(
          state,
          'rate_limited',
          state.window.oldest()! + WINDOW_MS - t,
          `Hook "${hook.id}" was not run: it reached its limit of ${perMinute} runs per minute`,
        );
      }
      if (globalLimit !== undefined && globalRecent >= globalLimit) {
        global.limited++;
        return refuse(
          state,
          'rate_limited',
          global.window.oldest()! + WINDOW_MS - t,
          `Hook "${hook.id}" was not run: all hooks together reached the global limit of ${globalLimit} runs per minute`,
        );
      }
      state.window.push(t);
      state.last = t;
      state.total++;
      global.window.push(t);
      global.total++;
      return { ok: true };
    },

    counts() {
      const t = now();
      return [...hooks.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([id, state]) => ({ id, lastMinute: state.window.size(t), total: state.total, limited: state.limited }));
    },

    globalCounts() {
      const counts = { lastMinute: global.window.size(now()), total: global.total, limited: global.limited };
      return globalLimit === undefined ? counts : { perMinute: globalLimit, ...counts };
    },
  };
}
