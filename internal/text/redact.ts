/**
 * Keeps secrets (sensitive setting values, tokens) out of logs, errors and
 * `--json` output: a Redactor learns the secrets, then masks them wherever
 * they appear in text or in structured values.
 */
import { PlinthError, describeCause, isPlinthError } from '../../sdk/errors.js';

/** What a secret is replaced with. */
export const REDACTED = '[redacted]';

// Shorter strings ("true", "dev") would mask ordinary words everywhere and hide nothing worth hiding.
const MIN_SECRET_LENGTH = 4;

// A value shorter than this may well be a piece of an ordinary word (a token "short" in "shorter"):
// it is masked only as a whole token. Longer ones are masked wherever they occur, even glued to
// other letters, since no word of plinth's own holds a chance 8-character value.
const ANYWHERE_FROM_LENGTH = 8;

const WORD_CHAR = /[\p{L}\p{N}_]/u;
// An escape that ends in a letter or digit is no part of the next word: `\nshort` in JSON,
// `%20short` in a URL, `\x1b[1mshort` on a terminal (raw or as plinth shows it).
const ESCAPE_BEFORE = /(?:\\[nrtbfv0]|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|%[0-9a-fA-F]{2}|(?:\u001b|\\x1b|\\u001b)\[[0-9;?]*[A-Za-z])$/;

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
   * `s` with every occurrence of every secret replaced by `[redacted]`. A
   * secret shorter than 8 characters is masked only as a whole token, where
   * no letter, digit or `_` continues it on either side ("Bearer short",
   * `?token=short&`, `"short"`, but not "shorter"); a longer one everywhere. Where
   * secrets overlap (one ends where another begins, or one holds another) the
   * whole covered stretch is masked, so no part of either shows.
   */
  text(s: string): string {
    const own = this.#own(s);
    return this.#then ? this.#then(own) : own;
  }

  #own(s: string): string {
    if (this.#secrets.size === 0 || s.length < MIN_SECRET_LENGTH) return s;
    const covered: Found[] = [];
    for (const secret of this.#secrets) {
      const anywhere = secret.length >= ANYWHERE_FROM_LENGTH;
      for (let at = s.indexOf(secret); at !== -1; at = s.indexOf(secret, at + 1)) covered.push({ start: at, end: at + secret.length, anywhere });
    }
    if (covered.length === 0) return s;

    covered.sort((a, b) => a.start - b.start);
    let out = '';
    let pos = 0;
    let i = 0;
    while (i < covered.length) {
      const { start } = covered[i] as Found;
      let { end, anywhere } = covered[i] as Found;
      // Extend over every range that overlaps or touches this one.
      while (++i < covered.length && (covered[i] as Found).start <= end) {
        end = Math.max(end, (covered[i] as Found).end);
        anywhere ||= (covered[i] as Found).anywhere;
      }
      // A stretch of short secrets alone is judged as one token: two that overlap ("abcdef" and
      // "defghi" in "abcdefghi") are a whole token together, though each is glued to the other.
      if (!anywhere && insideWord(s, start, end)) continue;
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

interface Found {
  start: number;
  end: number;
  /** Masked even inside a word: a long secret. */
  anywhere: boolean;
}

/** Whether the stretch `s[start, end)` is part of a longer word: a word character continues it on either side. */
function insideWord(s: string, start: number, end: number): boolean {
  const continuesBefore = start > 0 && WORD_CHAR.test(charAt(s, start)) && WORD_CHAR.test(charBefore(s, start)) && !ESCAPE_BEFORE.test(s.slice(Math.max(0, start - 16), start));
  const continuesAfter = end < s.length && WORD_CHAR.test(charBefore(s, end)) && WORD_CHAR.test(charAt(s, end));
  return continuesBefore || continuesAfter;
}

// Whole code points, so that a letter outside the BMP next to a secret counts as a letter.
function charBefore(s: string, at: number): string {
  const low = s.charCodeAt(at - 1);
  return at >= 2 && low >= 0xdc00 && low <= 0xdfff ? s.slice(at - 2, at) : s.slice(at - 1, at);
}

function charAt(s: string, at: number): string {
  return String.fromCodePoint(s.codePointAt(at) as number);
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
