/** Bounded waiting on plugin code, which may return a promise that never settles. */

/** Whether a value is a thenable; checked by shape since jiti-loaded code may bring its own Promise. */
export function isThenable<T = unknown>(value: unknown): value is PromiseLike<T> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Resolves with `work`, or rejects with `onTimeout()` after `ms` milliseconds.
 * The work is not cancelled (JavaScript cannot); callers clean up after it.
 */
export function withTimeout<T>(work: T | PromiseLike<T>, ms: number, onTimeout: () => Error): Promise<T> {
  if (!isThenable<T>(work)) return Promise.resolve(work);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
