/**
 * Rate limits of hook runs, on an injected clock: a per-hook sliding window of
 * 60 s, a per-hook cooldown, a global per-minute limit, and the counts that
 * `plinth hooks list` shows.
 */
import { describe, expect, it } from 'vitest';
import { createRateLimiter, type RateLimitedHook } from '../plugins/hooks/rate-limit.js';

/** A clock the test moves by hand. */
function clock(start = 1_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const hook = (id: string, rateLimit: RateLimitedHook['rateLimit'] = {}): RateLimitedHook => ({ id, rateLimit });

describe('per-hook executions per minute', () => {
  it('refuses the run over the limit until the oldest start leaves the 60 s window', () => {
    const time = clock();
    const limiter = createRateLimiter({ now: time.now });
    const lint = hook('user:lint', { perMinute: 3 });

    expect(limiter.take(lint)).toEqual({ ok: true }); // t = 0 s
    time.advance(10_000);
    expect(limiter.take(lint).ok).toBe(true); // t = 10 s
    time.advance(10_000);
    expect(limiter.take(lint).ok).toBe(true); // t = 20 s
    time.advance(10_000);

    const refused = limiter.take(lint); // t = 30 s: three starts in the window
    expect(refused).toMatchObject({ ok: false, failure: 'rate_limited', retryInMs: 30_000 });
    if (refused.ok) throw new Error('unreachable');
    expect(refused.message).toContain('user:lint');
    expect(refused.message).toContain('3 runs per minute');

    time.advance(29_999);
    expect(limiter.take(lint)).toMatchObject({ ok: false, retryInMs: 1 }); // t = 59.999 s
    time.advance(1);
    expect(limiter.take(lint).ok).toBe(true); // t = 60 s: the start at 0 s has left the window
    expect(limiter.take(lint).ok).toBe(false); // the starts at 10 s, 20 s and 60 s are in it
  });

  it('counts hooks separately', () => {
    const time = clock();
    const limiter = createRateLimiter({ now: time.now });
    const a = hook('a', { perMinute: 1 });
    const b = hook('b', { perMinute: 1 });
    expect(limiter.take(a).ok).toBe(true);
    expect(limiter.take(b).ok).toBe(true);
    expect(limiter.take(a).ok).toBe(false);
  });

  it('treats a missing or non-positive limit as no limit', () => {
    const limiter = createRateLimiter({ now: () => 0 });
    for (let i = 0; i < 1000; i++) expect(limiter.take(hook('free')).ok).toBe(true);
    expect(limiter.take(hook('zero', { perMinute: 0, cooldownMs: 0 })).ok).toBe(true);
  });
});

describe('cooldown', () => {
  it('refuses a start sooner than cooldownMs after the previous start', () => {
    const time = clock();
    const limiter = createRateLimiter({ now: time.now });
    const format = hook('workspace:format', { cooldownMs: 1_000 });

    expect(limiter.take(format).ok).toBe(true);
    time.advance(400);
    const refused = limiter.take(format);
    expect(refused).toMatchObject({ ok: false, failure: 'cooldown', retryInMs: 600 });
    if (refused.ok) throw new Error('unreachable');
    expect(refused.message).toContain('workspace:format');
    expect(refused.message).toContain('1000 ms');

    time.advance(600);
    expect(limiter.take(format).ok).toBe(true);
  });

  it('measures from the last start that was allowed, not from a refusal', () => {
    const time = clock();
    const limiter = createRateLimiter({ now: time.now });
    const h = hook('h', { cooldownMs: 1_000 });
    limiter.take(h); // 0
    time.advance(900);
    expect(limiter.take(h).ok).toBe(false); // 900: refused, not recorded
    time.advance(100);
    expect(limiter.take(h).ok).toBe(true); // 1000
  });

  it('is checked before the per-minute limit', () => {
    const time = clock();
    const limiter = createRateLimiter({ now: time.now });
    const h = hook('h', { perMinute: 1, cooldownMs: 5_000 });
    limiter.take(h);
    time.advance(1_000);
    expect(limiter.take(h)).toMatchObject({ ok: false, failure: 'cooldown', retryInMs: 4_000 });
    time.advance(4_000);
    expect(limiter.take(h)).toMatchObject({ ok: false, failure: 'rate_limited', retryInMs: 55_000 });
  });
});

describe('global executions per minute', () => {
  it('limits all hooks together and names the global limit', () => {
    const time = clock();
    const limiter = createRateLimiter({ globalPerMinute: 2, now: time.now });
    expect(limiter.take(hook('a')).ok).toBe(true);
    time.advance(5_000);
    expect(limiter.take(hook('b')).ok).toBe(true);

    const refused = limiter.take(hook('c'));
    expect(refused).toMatchObject({ ok: false, failure: 'rate_limited', retryInMs: 55_000 });
    if (refused.ok) throw new Error('unreachable');
    expect(refused.message).toContain('"c"');
    expect(refused.message).toContain('global limit of 2');

    time.advance(55_000);
    expect(limiter.take(hook('c')).ok).toBe(true);
  });

  it('does not count a start its own limits refused', () => {
    const limiter = createRateLimiter({ globalPerMinute: 2, now: () => 0 });
    const a = hook('a', { perMinute: 1 });
    expect(limiter.take(a).ok).toBe(true);
    expect(limiter.take(a).ok).toBe(false); // refused by its own limit: not a global start
    expect(limiter.take(hook('b')).ok).toBe(true);
    expect(limiter.globalCounts()).toEqual({ perMinute: 2, lastMinute: 2, total: 2, limited: 0 });
  });
});

describe('counts', () => {
  it('shows starts in the last minute, all starts, and refusals, per hook (sorted by id) and globally', () => {
    const time = clock();
    const limiter = createRateLimiter({ globalPerMinute: 10, now: time.now });
    const zeta = hook('zeta', { perMinute: 2 });
    const alpha = hook('alpha', { cooldownMs: 100 });

    limiter.take(zeta);
    limiter.take(zeta);
    limiter.take(zeta); // refused
    limiter.take(alpha);
    limiter.take(alpha); // refused (cooldown)

    expect(limiter.counts()).toEqual([
      { id: 'alpha', lastMinute: 1, total: 1, limited: 1 },
      { id: 'zeta', lastMinute: 2, total: 2, limited: 1 },
    ]);
    expect(limiter.globalCounts()).toEqual({ perMinute: 10, lastMinute: 3, total: 3, limited: 0 });

    time.advance(60_000);
    limiter.take(alpha);
    expect(limiter.counts()).toEqual([
      { id: 'alpha', lastMinute: 1, total: 2, limited: 1 },
      { id: 'zeta', lastMinute: 0, total: 2, limited: 1 },
    ]);
    expect(limiter.globalCounts()).toEqual({ perMinute: 10, lastMinute: 1, total: 4, limited: 0 });
  });

  it('leaves perMinute out of the global counts when there is no global limit', () => {
    const limiter = createRateLimiter({ now: () => 0 });
    limiter.take(hook('a'));
    expect(limiter.globalCounts()).toEqual({ lastMinute: 1, total: 1, limited: 0 });
  });

  it('uses a monotonic clock by default', () => {
    const limiter = createRateLimiter();
    expect(limiter.take(hook('a', { cooldownMs: 60_000 })).ok).toBe(true);
    expect(limiter.take(hook('a', { cooldownMs: 60_000 })).ok).toBe(false);
  });
});
