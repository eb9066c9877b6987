/**
 * How a hook's returned `context` changes the event's context: its top-level
 * fields replace those fields, the others stay. A script then returns only what
 * it changes (`{"allow": true, "context": {"args": {…}}}`), and two hooks of one
 * parallel stage conflict only when they set the same field differently.
 */
type Context = Readonly<Record<string, unknown>>;

/** Field → its new value. */
export type Changes = Map<string, unknown>;

/** Structural equality of JSON-like values; a field set to `undefined` equals an absent one. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    return a.length === bs.length && a.every((v, i) => sameValue(v, bs[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!sameValue(ao[k], bo[k])) return false;
  return true;
}

/** The fields `returned` sets to something other than what `before` has. */
export function changesOf(before: Context, returned: Context): Changes {
  const changes: Changes = new Map();
  for (const key of Object.keys(returned)) if (!sameValue(before[key], returned[key])) changes.set(key, returned[key]);
  return changes;
}

/** `context` with `changes` applied; `context` itself when there are none. */
export function applyChanges(context: Context, changes: ReadonlyMap<string, unknown>): Context {
  if (changes.size === 0) return context;
  const next: Record<string, unknown> = { ...context };
  // defineProperty, so that a `__proto__` field stays a field.
  for (const [key, value] of changes) Object.defineProperty(next, key, { value, enumerable: true, writable: true, configurable: true });
  return next;
}
