/**
 * Which authorization server a sign-in talks to, checked where a mix-up could
 * slip in (the MCP authorization specification of 2026-07-28):
 *
 * - authorization-server metadata is used only when its `issuer` is the issuer
 *   identifier it was discovered for (RFC 8414 §3.3, OpenID Discovery §4.3):
 *   the one the protected-resource metadata named, or the MCP server's origin
 *   for a server without one. The lone `/` of an empty path is the only
 *   difference allowed (`https://as.example` and `https://as.example/` name the
 *   same well-known URL);
 * - the authorization response's `iss` (RFC 9207 §2.4) is compared with the
 *   recorded issuer by simple string comparison before the code goes anywhere,
 *   an error response included: a present `iss` must be that issuer whether or
 *   not the metadata advertises `authorization_response_iss_parameter_supported`
 *   (the specification's local policy for servers that send it before
 *   advertising it), and an absent one is refused when the metadata advertises it;
 * - stored credentials (client, tokens) are bound to the issuer that gave them
 *   (SEP-2352): {@link sameAuthorizationServer} tells whether a binding holds.
 */
import type { OAuthDiscoveryState, FetchLike } from '@modelcontextprotocol/client';
import type { PlinthError } from 'plinth/sdk';
import { oauthError } from './errors.js';

/** What the sign-in records before redirecting: the issuer the response must name, and whether that server says it always does. */
export interface ExpectedIssuer {
  readonly issuer: string;
  /** The metadata's `authorization_response_iss_parameter_supported` is `true`. */
  readonly advertised: boolean;
}

/** Text from a server made safe for a terminal: control characters dropped, length bounded. */
function shown(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').slice(0, 300);
}

/** `https://as.example/` → `https://as.example`; anything with a path, query or fragment is left as it is. */
function withoutRootSlash(issuer: string): string {
  const url = URL.parse(issuer);
  return url !== null && issuer.endsWith('/') && url.pathname === '/' && url.search === '' && url.hash === '' ? issuer.slice(0, -1) : issuer;
}

/** Whether two issuer identifiers name the same authorization server: identical, but for the lone `/` of an empty path. */
export function sameAuthorizationServer(a: string, b: string): boolean {
  return a === b || withoutRootSlash(a) === withoutRootSlash(b);
}

/**
 * Throws `PLN_E_OAUTH_ISSUER_MISMATCH` unless the metadata of `state` is the
 * metadata of the authorization server it was discovered for. A discovery
 * without authorization-server metadata (the 2025-03-26 default endpoints) has
 * nothing to check.
 */
export function checkMetadataIssuer(server: string, state: OAuthDiscoveryState): void {
  const metadata = state.authorizationServerMetadata;
  if (metadata === undefined) return;
  const expected = String(state.authorizationServerUrl);
  const received = typeof metadata.issuer === 'string' ? metadata.issuer : '';
  if (sameAuthorizationServer(expected, received)) return;
  throw issuerMismatch(
    server,
    `The authorization-server metadata found for MCP server "${server}" names issuer ${received === '' ? '(none)' : shown(received)}, but it was discovered for ${shown(expected)} (RFC 8414 §3.3): it is not used`,
    expected,
    received,
    'metadata',
  );
}

/** The issuer a response must name for the authorization server `state` found. */
export function expectedIssuer(state: OAuthDiscoveryState, advertised: boolean | undefined): ExpectedIssuer {
  const metadata = state.authorizationServerMetadata;
  if (metadata !== undefined) return { issuer: metadata.issuer, advertised: advertised ?? (metadata as { authorization_response_iss_parameter_supported?: unknown }).authorization_response_iss_parameter_supported === true };
  // No metadata: the default endpoints at the origin; the origin is the issuer a response could name.
  const url = URL.parse(String(state.authorizationServerUrl));
  return { issuer: url === null ? String(state.authorizationServerUrl) : url.origin, advertised: false };
}

/**
 * RFC 9207 §2.4 on the URL the authorization server redirected to (after the
 * `state` check, before anything else is read from it). Throws
 * `PLN_E_OAUTH_ISSUER_MISMATCH` for an `iss` other than the expected issuer
 * (or several), `PLN_E_OAUTH_ISSUER_MISSING` for none where the server
 * advertises it.
 */
export function checkResponseIssuer(server: string, callback: URL, expected: ExpectedIssuer): void {
  const all = callback.searchParams.getAll('iss');
  if (all.length === 0) {
    if (!expected.advertised) return;
    throw oauthError(
      'PLN_E_OAUTH_ISSUER_MISSING',
      server,
      `The authorization response for MCP server "${server}" carries no iss, although its authorization server ${shown(expected.issuer)} says it always sends one (authorization_response_iss_parameter_supported): refused as a possible mix-up, no code was exchanged`,
      { details: { expectedIssuer: expected.issuer, receivedIssuer: null } },
    );
  }
  const received = all[0]!;
  if (all.length === 1 && received === expected.issuer) return;
  throw issuerMismatch(
    server,
    `The authorization response for MCP server "${server}" names issuer ${all.length > 1 ? `${all.length} times` : shown(received)}, but the authorization request went to ${shown(expected.issuer)} (RFC 9207): refused as a possible mix-up, no code was exchanged`,
    expected.issuer,
    all.length > 1 ? all.join(' ') : received,
    'response',
  );
}

/**
 * The SDK's own `IssuerMismatchError` (v2 checks the metadata's issuer during
 * discovery, and `iss` where it reads the redirect itself) as plinth's
 * `PLN_E_OAUTH_ISSUER_MISMATCH`, or undefined for any other error. Recognised
 * by its brand: the SDK may be loaded twice.
 */
export function sdkIssuerMismatch(server: string, error: unknown): PlinthError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const brands = (error as { [BRANDS]?: { has?: (b: string) => boolean } })[BRANDS];
  if (!(typeof brands?.has === 'function' && brands.has('mcp.IssuerMismatchError'))) return undefined;
  const { kind, expected, received } = error as { kind?: unknown; expected?: unknown; received?: unknown };
  const wanted = typeof expected === 'string' ? expected : '';
  const got = typeof received === 'string' ? received : '';
  if (kind === 'metadata') {
    return issuerMismatch(
      server,
      `The authorization-server metadata found for MCP server "${server}" names issuer ${got === '' ? '(none)' : shown(got)}, but it was discovered for ${shown(wanted)} (RFC 8414 §3.3): it is not used`,
      wanted,
      got,
      'metadata',
    );
  }
  return issuerMismatch(
    server,
    `The authorization response for MCP server "${server}" names issuer ${got === '' ? '(none)' : shown(got)}, but the authorization request went to ${shown(wanted)} (RFC 9207): refused as a possible mix-up, no code was exchanged`,
    wanted,
    got,
    'response',
  );
}

/** The brands the SDK stamps on its errors, under a registered symbol. */
const BRANDS = Symbol.for('mcp.sdk.errorBrands');

function issuerMismatch(server: string, message: string, expected: string, received: string, where: 'metadata' | 'response'): PlinthError {
  return oauthError('PLN_E_OAUTH_ISSUER_MISMATCH', server, message, {
    details: { expectedIssuer: expected, receivedIssuer: shown(received), where },
  });
}

/**
 * What each authorization-server metadata document fetched through `fetch`
 * says about `authorization_response_iss_parameter_supported`, by its issuer.
 * The SDK's OpenID schema drops the field, so it is read from the answer
 * itself (a copy; the SDK reads the original).
 */
export function recordIssSupport(fetch: FetchLike): { fetch: FetchLike; advertised(issuer: string): boolean | undefined } {
  const byIssuer = new Map<string, boolean>();
  return {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const url = URL.parse(input instanceof Request ? input.url : String(input));
      const metadata = url !== null && /\/\.well-known\/(oauth-authorization-server|openid-configuration)(\/|$)/.test(url.pathname);
      if (metadata && response.ok) {
        try {
          const body = (await response.clone().json()) as { issuer?: unknown; authorization_response_iss_parameter_supported?: unknown };
          if (typeof body.issuer === 'string') byIssuer.set(body.issuer, body.authorization_response_iss_parameter_supported === true);
        } catch {
          // Not JSON: the SDK reports it.
        }
      }
      return response;
    },
    advertised: (issuer) => byIssuer.get(issuer),
  };
}
