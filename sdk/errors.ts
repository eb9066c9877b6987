/**
 * Every error plinth raises is a PlinthError with a stable `PLN_E_…` code, a
 * message a user can act on and, where a plugin caused it, that plugin's name.
 * Each code is documented in docs/errors.md; a test keeps that table complete.
 */

/** A stable error code. Plugins define their own under the same prefix. */
export type ErrorCode = `PLN_E_${string}`;

/** What a {@link PlinthError} says besides its code and message: who, where, what to do. */
export interface PlinthErrorOptions {
  /** The plugin whose manifest or code caused the error. */
  plugin?: string;
  /** The hook, phase or call the plugin was in (`setup`, `teardown`, `before_tool`, …). */
  hook?: string;
  /** What the user can do about it. */
  hint?: string;
  cause?: unknown;
  /** Structured facts for `--json` output; never secrets. */
  details?: Record<string, unknown>;
}

/**
 * plinth's one error class: a stable {@link ErrorCode} to branch on, the plugin
 * and hook involved, and a hint for the user (docs/errors.md lists the codes).
 *
 * @example
 * throw new PlinthError('PLN_E_SETTING_REQUIRED', 'weather: no API key', { plugin: 'weather', hint: 'plinth ext config weather apiKey <key>' });
 */
export class PlinthError extends Error {
  override readonly name = 'PlinthError';
  /** What went wrong, stable across versions: test this, not the message. */
  readonly code: ErrorCode;
  /** The plugin whose manifest or code caused the error. */
  readonly plugin: string | undefined;
  /** The hook, phase or call the plugin was in. */
  readonly hook: string | undefined;
  /** What the user can do about it. */
  readonly hint: string | undefined;
  /** Structured data for `--json` output. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: PlinthErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.plugin = options.plugin;
    this.hook = options.hook;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** A plain object for `--json` output and logs. */
  toJSON(): Record<string, unknown> {
    const cause = this.cause;
    return {
      code: this.code,
      message: this.message,
      ...(this.plugin && { plugin: this.plugin }),
      ...(this.hook && { hook: this.hook }),
      ...(this.hint && { hint: this.hint }),
      ...(this.details && { details: this.details }),
      ...(cause !== undefined && { cause: isPlinthError(cause) ? cause.toJSON() : describeCause(cause) }),
    };
  }
}

/**
 * Recognises a PlinthError by shape rather than `instanceof`: code loaded
 * through jiti may carry another copy of this class.
 */
export function isPlinthError(value: unknown): value is PlinthError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'PlinthError' &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}

/**
 * Any thrown value in a line, with the messages of its causes when they add
 * something (`fetch failed: connect ECONNREFUSED 127.0.0.1:9`), never a stack.
 */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    const message = describeCause(current);
    if (message && !parts.some((part) => part.includes(message))) parts.push(message);
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return parts.join(': ') || 'unknown error';
}

/** A short description of any thrown value. */
export function describeCause(cause: unknown): string {
  if (cause instanceof Error) return cause.message || cause.name;
  if (typeof cause === 'object' && cause !== null && typeof (cause as Error).message === 'string') {
    return (cause as Error).message;
  }
  return String(cause);
}

/**
 * Why a file could not be read, in the words a person knows ("there is no
 * such file", not `ENOENT`), for messages about a path the user gave.
 */
export function describeFileError(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'there is no such file';
  if (code === 'EISDIR') return 'it is a folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return describeCause(cause);
}

/** Wraps whatever a plugin threw so that it names the plugin and hook; keeps the original as `cause`. */
export function wrapPluginError(
  code: ErrorCode,
  plugin: string,
  hook: string,
  cause: unknown,
): PlinthError {
  if (isPlinthError(cause) && cause.plugin === plugin && cause.hook === hook) return cause;
  const inner = isPlinthError(cause) ? `${cause.code}: ${cause.message}` : describeCause(cause);
  return new PlinthError(code, `plugin "${plugin}" failed in ${hook}: ${inner}`, { plugin, hook, cause });
}
