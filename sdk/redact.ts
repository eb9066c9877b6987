/**
 * Keeps secrets (sensitive setting values, tokens) out of logs, errors and
 * `--json` output: a Redactor learns the secrets, then masks them wherever
 * they appear in text or in structured values.
 */
import { PlinthError, describeCause, isPlinthError } from './errors.js';

/** What a secret is replaced with. */
export const REDACTED = '[redacted]';

// Shorter strings ("true", "dev") would mask ordinary words everywhere and hide nothing worth hiding.
const MIN_SECRET_LENGTH = 4;

/** Names (of env variables, headers, flags) whose values are secrets, wherever a definition is shown or resolved. */
export const SECRET_NAME = /token|secret|passw|key|auth|credential|cookie|session|signature|private/i;

/** Masks every known secret in text and in values. */
export class Redactor {
  readonly #secrets = new Set<string>();
  /** Masking applied after this redactor's own (a plugin's redactor layered over the kernel's). */
  readonly #then: ((text: string) => string) | undefined;

  constructor(options: { then?: (text: string) => string } = {}) {
    this.#then = options.then;
  }

  /**
   * Learns a secret. Also learns the forms it takes inside a JSON string and
   * a URL, since logs carry both. Ignores strings shorter than 4 characters.
   */
  add(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH) return;
    this.#secrets.add(secret);
    this.#secrets.add(JSON.stringify(secret).slice(1, -1));
    try {
      this.#secrets.add(encodeURIComponent(secret));
    } catch {
      // A lone surrogate has no URL form, so it cannot appear in one either.
    }
  }

  /** Whether any secret has been learned. */
  get empty(): boolean {
    return this.#secrets.size === 0;
  }

  /**
   * `s` with every occurrence of every secret replaced by `[redacted]`. Where
   * secrets overlap (one ends where another begins, or one holds another) the
   * whole covered stretch is masked, so no part of either shows.
   */
  text(s: string): string {
    const own = this.#own(s);
    return this.#then ? this.#then(own) : own;
  }

  #own(s: string): string {
    if (this.#secrets.size === 0 || s.length < MIN_SECRET_LENGTH) return s;
    const covered: Array<[start: number, end: number]> = [];
    for (const secret of this.#secrets) {
      for (let at = s.indexOf(secret); at !== -1; at = s.indexOf(secret, at + 1)) covered.push([at, at + secret.length]);
    }
    if (covered.length === 0) return s;

    covered.sort((a, b) => a[0] - b[0]);
    let out = '';
    let pos = 0;
    let i = 0;
    while (i < covered.length) {
      const [start] = covered[i] as [number, number];
      let end = (covered[i] as [number, number])[1];
      // Extend over every range that overlaps or touches this one.
      while (++i < covered.length && (covered[i] as [number, number])[0] <= end) {
        end = Math.max(end, (covered[i] as [number, number])[1]);
      }
      out += s.slice(pos, start) + REDACTED;
      pos = end;
    }
    return out + s.slice(pos);
  }

  /**
   * A copy of `v` with every string redacted, and every number that is a
   * learned secret replaced by `"[redacted]"`, through plain objects and
   * arrays. Errors become plain `{ name, message, code? }` objects (a
   * PlinthError keeps its `toJSON` fields). Other objects (Dates, Maps, class
   * instances) are kept as they are. With no secrets learned, returns `v` itself.
   */
  value<T>(v: T): T {
    if (this.#secrets.size === 0 && !this.#then) return v;
    return this.#copy(v, new WeakMap()) as T;
  }

  #copy(v: unknown, seen: WeakMap<object, unknown>): unknown {
    if (typeof v === 'string') return this.text(v);
    // A sensitive number is learned as it prints; in structured output it is a number, not text.
    if (typeof v === 'number') return this.#secrets.has(String(v)) ? REDACTED : v;
    if (typeof v !== 'object' || v === null) return v;
    const done = seen.get(v);
    if (done !== undefined) return done;

    if (Array.isArray(v)) {
      const out: unknown[] = [];
      seen.set(v, out);
      for (const item of v) out.push(this.#copy(item, seen));
      return out;
    }
    if (v instanceof Error) return this.#copy(plainError(v), seen);
    if (!isPlainObject(v)) return v;

    const out: Record<string, unknown> = {};
    seen.set(v, out);
    for (const [key, item] of Object.entries(v)) {
      define(out, key, this.#copy(item, seen));
    }
    return out;
  }
}

function plainError(error: Error): Record<string, unknown> {
  // Shape, not class: a jiti-loaded plugin may bring its own copy of PlinthError.
  if (isPlinthError(error) && typeof error.toJSON === 'function') return { name: error.name, ...error.toJSON() };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, ...(typeof code === 'string' && { code }) };
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Own-property assignment, so a `"__proto__"` key stays data. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * A copy of `error` whose message, hint, details and cause chain are redacted;
 * `error` itself when there is nothing to hide. Errors leave the kernel through
 * this, since a plugin's message may quote a secret it was given.
 */
export function redactError(error: PlinthError, redactor: Redactor): PlinthError {
  if (redactor.empty) return error;
  const cause = error.cause;
  return new PlinthError(error.code, redactor.text(error.message), {
    ...(error.plugin && { plugin: error.plugin }),
    ...(error.hook && { hook: error.hook }),
    ...(error.hint && { hint: redactor.text(error.hint) }),
    ...(error.details && { details: redactor.value(error.details) }),
    ...(cause !== undefined && { cause: isPlinthError(cause) ? redactError(cause, redactor) : new Error(redactor.text(describeCause(cause))) }),
  });
}
