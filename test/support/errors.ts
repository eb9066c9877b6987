/** Asserting on the PlinthError an operation fails with. */
import { type PlinthError, isPlinthError } from '../../sdk/index.js';

/** The PlinthError a promise rejects with (fails the test if it resolves, or rejects with anything else). */
export async function rejection(promise: Promise<unknown>): Promise<PlinthError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPlinthError(error)) throw new Error(`expected a PlinthError, got ${String(error)}`);
  return error;
}
