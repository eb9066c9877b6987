/**
 * What a callback URL says, whether it reached the callback server or was
 * pasted: the state is checked first (a request without the right state may be
 * forged, whatever else it carries), then an error wins over a code.
 */
import { timingSafeEqual } from 'node:crypto';
import type { AuthorizationErrorParams } from './page.js';

export type CallbackVerdict =
  /** The right state and a code: the caller exchanges it. */
  | { readonly kind: 'code' }
  /** The right state and an `error`: the authorization server refused or failed. */
  | { readonly kind: 'error'; readonly params: AuthorizationErrorParams }
  /** No state, several, or another one. */
  | { readonly kind: 'forged'; readonly missing: boolean }
  /** The right state but neither a code nor an error. */
  | { readonly kind: 'invalid' };

/** Compares in constant time for equal lengths, so the response time tells nothing about how much of a guess was right. */
export function statesMatch(received: string, expected: string): boolean {
  const a = Buffer.from(received, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function inspectCallback(url: URL, expectedState: string): CallbackVerdict {
  const params = url.searchParams;
  const states = params.getAll('state');
  if (states.length === 0 || states[0] === '') return { kind: 'forged', missing: true };
  // Two states: which one a later check reads is up to its parser, so neither is trusted.
  if (states.length > 1 || !statesMatch(states[0]!, expectedState)) return { kind: 'forged', missing: false };
  const error = params.get('error');
  if (error) {
    const description = params.get('error_description');
    const uri = params.get('error_uri');
    return { kind: 'error', params: { error, ...(description && { description }), ...(uri && { uri }) } };
  }
  if (params.get('code')) return { kind: 'code' };
  return { kind: 'invalid' };
}

/**
 * Whether a pasted `url` is a sign-in result at all: it carries a code or an
 * error. A state alone does not count: the authorization URL carries the very
 * same state, and pasting it by mistake must get a hint, not end the sign-in.
 */
export function looksLikeCallback(url: URL): boolean {
  return url.searchParams.has('code') || url.searchParams.has('error');
}
