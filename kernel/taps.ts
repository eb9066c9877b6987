/**
 * Named, removable taps on tapable hooks. tapable has no `untap`; plugins that
 * unload (teardown, hot reload) must leave no tap behind, so a tap is found by a
 * unique key and spliced out, and the hook recompiles its call on next use.
 */
import type { Disposer, TapOptions } from '../sdk/plugin.js';

type Fn = (...args: never[]) => unknown;

/** The part of a tapable hook this module uses (tapable's types omit `_resetCompilation`). */
interface TappableHook {
  taps: Array<{ key?: symbol }>;
  tap(options: object, fn: Fn): void;
  tapAsync?(options: object, fn: Fn): void;
  tapPromise?(options: object, fn: Fn): void;
}

export type TapKind = 'sync' | 'async' | 'promise';

/** Taps `fn` on `hook` under `name`; the returned disposer removes exactly this tap. */
export function addTap(hook: object, kind: TapKind, name: string, fn: Fn, options: TapOptions = {}): Disposer {
  const target = hook as TappableHook;
  const key = Symbol(name);
  // tapable accepts an array for `before` although its typings say string.
  const tap = { name, key, ...options };
  if (kind === 'sync') target.tap(tap, fn);
  else if (kind === 'async') target.tapAsync!(tap, fn);
  else target.tapPromise!(tap, fn);
  return () => {
    const index = target.taps.findIndex((t) => t.key === key);
    if (index === -1) return;
    target.taps.splice(index, 1);
    // The compiled `call`/`promise` captured the old tap list.
    (hook as { _resetCompilation(): void })._resetCompilation();
  };
}

/** Calls the taps `name` made on `hook` (a `promise` hook), one after another: a late plugin's own `ready`, say. */
export async function callTapsOf(hook: object, name: string, ...args: unknown[]): Promise<void> {
  for (const tap of [...(hook as TappableHook).taps] as Array<{ name?: string; fn?: Fn }>) {
    if (tap.name === name && tap.fn) await (tap.fn as (...a: unknown[]) => unknown)(...args);
  }
}
