/**
 * The hook protocol v1.0.0: the JSON document a hook reads on stdin and the
 * JSON document it answers with on stdout. Output is untrusted: it is parsed
 * without letting `__proto__` or `constructor.prototype` keys through, and
 * validated with zod; anything that is not a valid response is a failure of
 * the hook that wrote it.
 */
import { z } from 'zod';
import type { EventName } from 'plinth/sdk';
import { type HookDefinition, type HookInput, type HookResponse, type RunInput, isPeerInput } from './types.js';

/** The protocol version plinth speaks, sent as `version` in every input. */
export const PROTOCOL_VERSION = '1.0.0';

/**
 * The input for one run of `hook`. `subscribedAs` is the event name as the hook
 * spelled it in its definition (see {@link subscribedSpelling}).
 */
export function buildInput(
  hook: Pick<HookDefinition, 'name' | 'version'>,
  subscribedAs: string,
  context: Readonly<Record<string, unknown>>,
  sessionId?: string,
): HookInput {
  return {
    version: PROTOCOL_VERSION,
    event: subscribedAs,
    context,
    metadata: {
      timestamp: new Date().toISOString(),
      hookName: hook.name,
      ...(hook.version === undefined ? {} : { hookVersion: hook.version }),
      ...(sessionId === undefined ? {} : { sessionId }),
    },
  };
}

/** How `hook` spelled the canonical `event` when it subscribed (the canonical name when it did not say). */
export function subscribedSpelling(hook: Pick<HookDefinition, 'events' | 'subscribedAs'>, event: EventName): string {
  const at = hook.events.indexOf(event);
  return (at < 0 ? undefined : hook.subscribedAs[at]) ?? event;
}

/** The input as the single line written to a hook's stdin (JSON never contains a raw newline). Throws on unserialisable context. */
export function encodeInput(input: RunInput): string {
  return `${JSON.stringify(isPeerInput(input) ? input.document : input)}\n`;
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

const plainObject = z.custom<Record<string, unknown>>(isPlainObject);

/** A valid response: `allow` required, the rest optional, unknown keys ignored. */
export const responseSchema = z.object({
  allow: z.boolean(),
  message: z.string().optional(),
  systemMessage: z.string().optional(),
  metadata: plainObject.optional(),
  context: plainObject.optional(),
  continue: z.boolean().optional(),
});

export type ParsedResponse =
  | { readonly ok: true; readonly response: HookResponse }
  | { readonly ok: false; readonly failure: 'invalid_json' | 'invalid_output'; readonly message: string };

/**
 * Drops the keys that could change a prototype when a consumer copies or merges
 * the value: `__proto__` (JSON.parse makes it an own property, but an
 * assignment copy would set the prototype) and `constructor` holding a
 * `prototype`. Returning undefined from a reviver deletes the key.
 */
export function dropPrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') return undefined;
  if (key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype')) return undefined;
  return value;
}

/**
 * Parses a hook's whole stdout (spawn mode) or one answer line (persistent
 * mode). Surrounding whitespace is fine; the rest must be one JSON object that
 * is a valid response. Messages say what is wrong, not which hook (the runner
 * adds that).
 */
/** Text in which {@link dropPrototypeKeys} might find a key to drop: the names, or a `\u` escape that could spell them. */
const MAY_HOLD_PROTOTYPE_KEYS = /__proto__|constructor|\\u/;

export function parseResponse(stdout: string): ParsedResponse {
  const text = stdout.trim();
  if (text === '') return { ok: false, failure: 'invalid_json', message: 'empty output' };
  let value: unknown;
  try {
    // The reviver costs more than the parse: without a key it could drop (nor an escape that could spell one), the result is the same.
    value = MAY_HOLD_PROTOTYPE_KEYS.test(text) ? JSON.parse(text, dropPrototypeKeys) : JSON.parse(text);
  } catch (error) {
    return { ok: false, failure: 'invalid_json', message: `invalid JSON: ${(error as Error).message} (output starts with ${preview(text)})` };
  }
  if (!isPlainObject(value)) {
    return { ok: false, failure: 'invalid_output', message: `the output is JSON ${kindOf(value)}, not an object with an "allow" field` };
  }
  const parsed = responseSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => describeIssue(issue.path, value));
    return { ok: false, failure: 'invalid_output', message: `not a valid response: ${problems.join('; ')}` };
  }
  const { allow, message, systemMessage, metadata, context } = parsed.data;
  const response: HookResponse = {
    allow,
    ...(message === undefined ? {} : { message }),
    ...(systemMessage === undefined ? {} : { systemMessage }),
    ...(metadata === undefined ? {} : { metadata }),
    ...(context === undefined ? {} : { context }),
    ...(parsed.data.continue === undefined ? {} : { continue: parsed.data.continue }),
  };
  return { ok: true, response };
}

const EXPECTED: Readonly<Record<string, string>> = {
  allow: 'a boolean',
  message: 'a string',
  systemMessage: 'a string',
  metadata: 'an object',
  context: 'an object',
  continue: 'a boolean',
};

function describeIssue(path: readonly PropertyKey[], value: Record<string, unknown>): string {
  const key = String(path[0] ?? '');
  if (!Object.hasOwn(value, key)) return `"${key}" is missing`;
  return `"${key}" must be ${EXPECTED[key] ?? 'valid'} (got ${kindOf(value[key])})`;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function preview(text: string): string {
  const head = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return JSON.stringify(head);
}
