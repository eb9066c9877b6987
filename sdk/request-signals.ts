/**
 * A `fetch` that gives each request an abort signal of its own, aborted with
 * the signal the caller passed.
 *
 * Why: the SDK's transport passes one long-lived signal (its AbortController,
 * aborted by `close()`) to every request of a connection. Node's fetch
 * (undici) adds an abort listener to the signal of each request it is given
 * and removes it only once that request has been garbage-collected, after
 * raising the signal's limit to 1,500; so on a busy connection the listeners
 * pile up on that one signal between collections, and every request past the
 * limit prints a MaxListenersExceededWarning. Raising the limit further would
 * hide the pile, not stop it.
 *
 * Here the long-lived signal gets one listener in all, and undici's listener
 * lands on the request's own signal, which is collected with the request.
 * Each request's signal is followed weakly: it lives as long as fetch keeps
 * it (as long as undici's listener on the shared signal used to live), its
 * controller with it, and it is dropped from the followers once collected.
 * Not `AbortSignal.any`: on Node 20 the source signal keeps one WeakRef per
 * derived signal for as long as the source lives, a slow leak per request.
 */

import type { FetchLike } from '@modelcontextprotocol/client';

/** A request's signal → its controller, for as long as the signal lives (a WeakMap value lives with its key). */
const controllers = new WeakMap<AbortSignal, AbortController>();
/** A long-lived signal → the request signals that follow it, held weakly. */
const followers = new WeakMap<AbortSignal, Set<WeakRef<AbortSignal>>>();
/** Drops a collected request signal from its set, so that the set does not grow with the requests. */
const forget = new FinalizationRegistry<{ readonly set: Set<WeakRef<AbortSignal>>; readonly ref: WeakRef<AbortSignal> }>(({ set, ref }) => set.delete(ref));

/**
 * Wraps `base` (default: the global fetch, looked up at each call) so that a
 * request given a signal is sent with a signal of its own that aborts, with
 * the same reason, when the given one does. Requests without a signal, or with
 * one already aborted, are passed through as they are.
 */
export function fetchWithOwnSignals(base?: FetchLike): FetchLike {
  return (url, init) => {
    const send = base ?? globalThis.fetch;
    const shared = init?.signal;
    if (!shared || shared.aborted) return send(url, init);
    return send(url, { ...init, signal: follow(shared) });
  };
}

/** A new signal that aborts when `shared` does. */
function follow(shared: AbortSignal): AbortSignal {
  let set = followers.get(shared);
  if (set === undefined) {
    const created = new Set<WeakRef<AbortSignal>>();
    followers.set(shared, created);
    shared.addEventListener(
      'abort',
      () => {
        for (const ref of created) {
          const signal = ref.deref();
          if (signal !== undefined) controllers.get(signal)?.abort(shared.reason);
        }
        created.clear();
      },
      { once: true },
    );
    set = created;
  }
  const controller = new AbortController();
  const { signal } = controller;
  controllers.set(signal, controller);
  const ref = new WeakRef(signal);
  set.add(ref);
  forget.register(signal, { set, ref });
  return signal;
}
