/**
 * The oauth plugin's error codes and the hints that go with them (each code is
 * a row of docs/errors.md). Messages name the server and what happened, never
 * a token, code, verifier or client secret.
 */
import { PlinthError } from 'plinth/sdk';

export type OAuthCode =
  | 'PLN_E_OAUTH_SIGNIN_REQUIRED'
  | 'PLN_E_OAUTH_NOT_INTERACTIVE'
  | 'PLN_E_OAUTH_NOT_REMOTE'
  | 'PLN_E_OAUTH_UNREACHABLE'
  | 'PLN_E_OAUTH_DISCOVERY'
  | 'PLN_E_OAUTH_REGISTRATION'
  | 'PLN_E_OAUTH_DENIED'
  | 'PLN_E_OAUTH_EXCHANGE_FAILED'
  | 'PLN_E_OAUTH_FAILED'
  | 'PLN_E_OAUTH_CONFIG'
  | 'PLN_E_OAUTH_UNTRUSTED'
  | 'PLN_E_OAUTH_ISSUER_MISMATCH'
  | 'PLN_E_OAUTH_ISSUER_MISSING'
  | 'PLN_E_OAUTH_ADDRESS_REFUSED'
  | 'PLN_E_OAUTH_ID_TOKEN'
  | 'PLN_E_OAUTH_IDP_REFUSED';

/** The hint of each code; `<server>` is filled in. */
const HINTS: Readonly<Record<OAuthCode, string>> = {
  PLN_E_OAUTH_SIGNIN_REQUIRED: 'run `plinth auth login <server>`, then start the server again',
  PLN_E_OAUTH_NOT_INTERACTIVE: 'sign in from a terminal with `plinth auth login <server>`; hooks and non-interactive runs use the tokens stored by it',
  PLN_E_OAUTH_NOT_REMOTE: 'OAuth applies to servers with a "url" (streamable HTTP or SSE); remove "oauth" from a local server, or set "oauth": true on a remote one',
  PLN_E_OAUTH_UNREACHABLE: 'check the network and the authorization server, then try again; stored tokens are kept',
  PLN_E_OAUTH_DISCOVERY: 'check the server\'s "url"; the server must publish OAuth protected-resource or authorization-server metadata (RFC 9728 / RFC 8414)',
  PLN_E_OAUTH_REGISTRATION: 'register plinth with the authorization server yourself and set "oauth": { "clientId": "…" } (and "clientSecret" for a confidential client, best as "${env:NAME}") on the server',
  PLN_E_OAUTH_DENIED: 'sign in again with `plinth auth login <server>` and approve the request',
  PLN_E_OAUTH_EXCHANGE_FAILED: 'sign in again with `plinth auth login <server>`; if it keeps failing, the authorization server\'s own logs say why it refused the code',
  PLN_E_OAUTH_FAILED: 'the authorization server\'s answer is in the message; check the server\'s oauth settings, then sign in again with `plinth auth login <server>`',
  PLN_E_OAUTH_CONFIG: 'fix the "oauth" entry of the server (or the oauth plugin\'s settings) as the message says',
  PLN_E_OAUTH_ISSUER_MISMATCH: 'nothing was exchanged or stored; run `plinth auth login <server>` again, and if it happens again tell whoever runs the server: its metadata or its authorization server names another issuer (a mix-up attempt, or a misconfiguration)',
  PLN_E_OAUTH_ISSUER_MISSING: 'nothing was exchanged or stored; run `plinth auth login <server>` again, and if it happens again tell whoever runs the authorization server: it advertises the iss parameter (RFC 9207) but did not send it',
  PLN_E_OAUTH_ADDRESS_REFUSED: 'the server\'s OAuth metadata points at an address plinth does not send OAuth requests to (link-local, unspecified, or this machine for a server that is not on it); check the server\'s "url", and tell whoever runs the server',
  PLN_E_OAUTH_ID_TOKEN: 'sign in to your identity provider so that the ID token is there (the variable set, or the command working), then try again',
  PLN_E_OAUTH_IDP_REFUSED: 'check "oauth.crossApp" (the identity provider, its client id and secret) and that your ID token is current; the identity provider\'s own logs say why it refused',
  PLN_E_OAUTH_UNTRUSTED: 'review the server\'s definition, approve it with `plinth trust approve mcp-server <server>`, then run `plinth auth login <server>` again',
};

/** A PlinthError of the oauth plugin about `server`. */
export function oauthError(
  code: OAuthCode,
  server: string | undefined,
  message: string,
  options: { cause?: unknown; hint?: string; details?: Record<string, unknown> } = {},
): PlinthError {
  return new PlinthError(code, message, {
    plugin: 'oauth',
    hint: (options.hint ?? HINTS[code]).replaceAll('<server>', server ?? '<server>'),
    ...(options.cause !== undefined && { cause: options.cause }),
    details: { ...(server !== undefined && { server }), ...options.details },
  });
}
