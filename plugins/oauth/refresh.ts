/**
 * Refreshing a server's access token, once across processes: under the
 * record's lock the record is read again, and if another process refreshed
 * meanwhile its tokens are used as they are. A rotated refresh token is stored
 * before the new access token is handed out, so a crash after the refresh can
 * never leave only the spent refresh token behind.
 */
import { refreshAuthorization } from '@modelcontextprotocol/client';
import { dpopSession, isStoredDpopKey } from './dpop.js';
import type { FetchLike } from '@modelcontextprotocol/client';
import { classify, isRejectedGrant, oauthErrorCode } from './classify.js';
import { sameAuthorizationServer } from './issuer.js';
import { type OAuthRecord, type TokenVault, boundIssuer, withTokens, withoutTokens } from './record.js';

/** Whether `record`'s access token expires within `skewMs` (false when the server gave no expiry). */
export function refreshDue(record: OAuthRecord, skewMs: number, now = Date.now()): boolean {
  return record.expiresAt !== undefined && record.expiresAt - skewMs <= now;
}

/** Whether `record`'s access token has expired. */
export function expired(record: OAuthRecord, now = Date.now()): boolean {
  return record.expiresAt !== undefined && record.expiresAt <= now;
}

/**
 * Whether `record` holds what a refresh needs, all of one authorization server:
 * a refresh token and a registration bound to the server of the stored
 * discovery (SEP-2352: one server's credentials never go to another).
 */
export function refreshable(record: OAuthRecord | undefined): record is OAuthRecord & Required<Pick<OAuthRecord, 'tokens' | 'discovery' | 'client'>> {
  if (record?.tokens?.refresh_token === undefined || record.discovery === undefined || record.client === undefined) return false;
  const issuer = String(record.discovery.authorizationServerUrl);
  return [record.tokens, record.client].every((value) => sameAuthorizationServer(boundIssuer(record, value) ?? issuer, issuer));
}

export interface RefreshDeps {
  readonly server: string;
  readonly vault: TokenVault;
  readonly fetch: FetchLike;
  readonly skewMs: number;
  /** How long the refresh request may take: the lock is held that long at most. */
  readonly requestTimeoutMs: number;
}

/**
 * Refreshes `server`'s tokens unless another process already did (or `force`:
 * the server answered 401 to the current access token). Resolves with the
 * record now stored (undefined: signed out meanwhile). Rejects with `PLN_E_OAUTH_SIGNIN_REQUIRED` when the server
 * refused the refresh token (the tokens are deleted; the registration is kept)
 * and `PLN_E_OAUTH_UNREACHABLE` when it could not be asked (the tokens are kept).
 */
export async function refreshTokens(deps: RefreshDeps, seen: OAuthRecord, options: { force?: boolean } = {}): Promise<OAuthRecord | undefined> {
  const refusal: { error?: unknown } = {};
  const record = await deps.vault.update(
    deps.server,
    async (current) => {
      if (current === undefined || current.serverUrl !== seen.serverUrl) return { record: current, result: current };
      const rotatedElsewhere = current.tokens?.access_token !== seen.tokens?.access_token;
      if (rotatedElsewhere || (!options.force && !refreshDue(current, deps.skewMs))) return { record: current, result: current };
      if (!refreshable(current)) return { record: current, result: current };
      try {
        const { authorizationServerUrl, authorizationServerMetadata, resourceMetadata } = current.discovery;
        // A DPoP-bound refresh token is refreshed with a proof of the same key (RFC 9449 §5).
        const dpop = isStoredDpopKey(current.dpop) ? await dpopSession(current.dpop) : undefined;
        const tokens = await refreshAuthorization(authorizationServerUrl, {
          ...(dpop !== undefined && { dpop }),
          metadata: authorizationServerMetadata,
          clientInformation: current.client,
          refreshToken: current.tokens.refresh_token!,
          ...(resourceMetadata?.resource !== undefined && { resource: new URL(resourceMetadata.resource) }),
          fetchFn: deps.fetch,
        });
        const next = withTokens(current, { ...tokens, issuer: String(authorizationServerUrl) });
        return { record: next, result: next };
      } catch (error) {
        refusal.error = error;
        if (!isRejectedGrant(error)) return { record: current, result: current };
        // A refused refresh token is dead (and with it the registration, when the client was refused).
        const { client: _client, ...unregistered } = withoutTokens(current);
        return { record: oauthErrorCode(error) === 'invalid_grant' ? withoutTokens(current) : unregistered, result: undefined };
      }
    },
    { holdMs: deps.requestTimeoutMs + 1_000 },
  );
  if (refusal.error !== undefined) throw classify(refusal.error, deps.server, 'refresh');
  return record;
}
