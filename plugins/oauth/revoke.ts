/**
 * Token revocation (RFC 7009) at sign-out. The SDK's client has no revocation
 * request, so this is the one OAuth request plinth makes itself: the refresh
 * token first (servers revoke the access tokens issued from it with it), then
 * the access token, each authenticated as the token requests are.
 */
import { buildDiscoveryUrls, selectClientAuthMethod } from '@modelcontextprotocol/client';
import type { OAuthClientInformationMixed, FetchLike } from '@modelcontextprotocol/client';
import { describeOAuth } from './classify.js';
import type { OAuthRecord } from './record.js';
import type { LogoutResult } from 'plinth/sdk';

interface RevocationMetadata {
  revocation_endpoint?: string;
  revocation_endpoint_auth_methods_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
}

export type Revocation = Pick<LogoutResult, 'revocation' | 'revocationError'>;

/** Revokes the record's tokens where its authorization server offers revocation. Never throws. */
export async function revokeTokens(record: OAuthRecord, fetchFn: FetchLike): Promise<Revocation> {
  const tokens = record.tokens;
  if (tokens === undefined) return { revocation: 'none' };
  const metadata = await revocationMetadata(record, fetchFn);
  const endpoint = metadata?.revocation_endpoint;
  if (endpoint === undefined || record.client === undefined) return { revocation: 'unsupported' };
  const methods = metadata?.revocation_endpoint_auth_methods_supported ?? metadata?.token_endpoint_auth_methods_supported ?? [];
  const asked: Array<[string, 'refresh_token' | 'access_token']> = [];
  if (tokens.refresh_token !== undefined) asked.push([tokens.refresh_token, 'refresh_token']);
  asked.push([tokens.access_token, 'access_token']);
  for (const [token, hint] of asked) {
    try {
      const response = await fetchFn(endpoint, { method: 'POST', ...authenticated(record.client, methods, { token, token_type_hint: hint }) });
      // RFC 7009 §2.2: 200 for a revoked, unknown or already revoked token alike.
      if (!response.ok) {
        const body = await response.text().catch(() => '');
        return { revocation: 'failed', revocationError: `the revocation endpoint answered HTTP ${response.status}${oauthErrorOf(body)}` };
      }
      await response.body?.cancel().catch(() => undefined);
    } catch (error) {
      return { revocation: 'failed', revocationError: describeOAuth(error) };
    }
  }
  return { revocation: 'revoked' };
}

/**
 * The metadata that names the revocation endpoint. The SDK keeps only the
 * fields of the OpenID schema for an OpenID provider, which has no
 * `revocation_endpoint`: then the metadata documents are read again, as
 * discovery found them, for that field alone.
 */
async function revocationMetadata(record: OAuthRecord, fetchFn: FetchLike): Promise<RevocationMetadata | undefined> {
  const stored = record.discovery?.authorizationServerMetadata as RevocationMetadata | undefined;
  const issuer = record.discovery?.authorizationServerUrl;
  if (stored?.revocation_endpoint !== undefined || issuer === undefined) return stored;
  for (const { url } of buildDiscoveryUrls(issuer)) {
    try {
      const response = await fetchFn(url, { headers: { accept: 'application/json' } });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        continue;
      }
      const document = (await response.json()) as RevocationMetadata;
      if (typeof document.revocation_endpoint === 'string') return { ...stored, ...pickRevocation(document) };
    } catch {
      // Unreachable or not JSON: the next location, then "unsupported".
    }
  }
  return stored;
}

function pickRevocation(document: RevocationMetadata): RevocationMetadata {
  return {
    revocation_endpoint: document.revocation_endpoint,
    ...(Array.isArray(document.revocation_endpoint_auth_methods_supported) && { revocation_endpoint_auth_methods_supported: document.revocation_endpoint_auth_methods_supported }),
  };
}

/** The request body and headers, with the client authenticated the way the server supports. */
function authenticated(client: OAuthClientInformationMixed, methods: string[], params: Record<string, string>): { headers: Headers; body: URLSearchParams } {
  const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
  const body = new URLSearchParams(params);
  const secret = 'client_secret' in client ? client.client_secret : undefined;
  const method = selectClientAuthMethod(client, methods);
  if (method === 'client_secret_basic' && secret !== undefined) {
    // RFC 6749 §2.3.1: both parts form-urlencoded before Basic encoding.
    const credentials = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials).toString('base64')}`);
  } else {
    body.set('client_id', client.client_id);
    if (method === 'client_secret_post' && secret !== undefined) body.set('client_secret', secret);
  }
  return { headers, body };
}

/** ` (invalid_client: …)` from an OAuth error body, or nothing: only the error fields are repeated. */
function oauthErrorOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; error_description?: unknown };
    if (typeof parsed.error !== 'string') return '';
    return ` (${parsed.error}${typeof parsed.error_description === 'string' ? `: ${parsed.error_description}` : ''})`;
  } catch {
    return '';
  }
}
