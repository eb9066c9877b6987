/**
 * Masks MCP server secrets. Plugins cannot teach the kernel's redactor new
 * secrets, so the mcp plugin keeps its own: every resolved env and header
 * value a definition lists in `secrets`, then the kernel's own masking on top.
 * Everything the plugin prints, stores or logs goes through it.
 */

/** What a secret is replaced with (the kernel's marker). */
export const REDACTED = '[redacted]';

// As the kernel: shorter strings would mask ordinary words and hide nothing worth hiding.
const MIN_SECRET_LENGTH = 4;

/** A redactor of server secrets layered over the kernel's. */
export interface SecretRedactor {
  /** Learns secrets (and their JSON-string and URL-encoded forms). Short strings are ignored. */
  add(secrets: Iterable<string>): void;
  /** `text` with every known secret masked, then the kernel's sensitive values. */
  text(text: string): string;
  /** A copy of `value` with every string masked, through plain objects and arrays. */
  value<T>(value: T): T;
}

/** Creates a redactor; `base` is the kernel's (`kernel.redact`). */
export function createRedactor(base: (text: string) => string = (t) => t): SecretRedactor {
  const secrets = new Set<string>();

  /** Where secrets overlap or touch, the whole covered stretch is masked, so no part of either shows. */
  const text = (input: string): string => {
    if (secrets.size === 0 || input.length < MIN_SECRET_LENGTH) return base(input);
    const covered: Array<[number, number]> = [];
    for (const secret of secrets) {
      for (let at = input.indexOf(secret); at !== -1; at = input.indexOf(secret, at + 1)) covered.push([at, at + secret.length]);
    }
    if (covered.length === 0) return base(input);
    covered.sort((a, b) => a[0] - b[0]);
    let out = '';
    let pos = 0;
    for (let i = 0; i < covered.length; ) {
      const start = covered[i]![0];
      let end = covered[i]![1];
      while (++i < covered.length && covered[i]![0] <= end) end = Math.max(end, covered[i]![1]);
      out += input.slice(pos, start) + REDACTED;
      pos = end;
    }
    return base(out + input.slice(pos));
  };

  const copy = (value: unknown, seen: WeakMap<object, unknown>): unknown => {
    if (typeof value === 'string') return text(value);
    if (typeof value !== 'object' || value === null) return value;
    const done = seen.get(value);
    if (done !== undefined) return done;
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      seen.set(value, out);
      for (const item of value) out.push(copy(item, seen));
      return out;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    seen.set(value, out);
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, key, { value: copy(item, seen), enumerable: true, writable: true, configurable: true });
    }
    return out;
  };

  return {
    add(more) {
      for (const secret of more) {
        if (typeof secret === 'string' && secret.length >= MIN_SECRET_LENGTH) for (const form of forms(secret)) secrets.add(form);
      }
    },
    text,
    value: <T>(value: T): T => copy(value, new WeakMap()) as T,
  };
}

/** The secret as written, inside a JSON string, and URL-encoded: logs and errors carry all three. */
function forms(secret: string): string[] {
  const out = [secret, JSON.stringify(secret).slice(1, -1)];
  try {
    out.push(encodeURIComponent(secret));
  } catch {
    // A lone surrogate has no URL form, so it cannot appear in one either.
  }
  return out.filter((f) => f.length >= MIN_SECRET_LENGTH);
}
