/**
 * Turns what the SDK's OAuth client throws into plinth's codes. The split that
 * matters to a user: the authorization server said no to the saved sign-in
 * (`invalid_grant`: sign in again) versus it could not be reached (the network,
 * a 5xx, a time limit: tokens are kept and a later try may work).
 */
import { type PlinthError, describeError, isPlinthError } from 'plinth/sdk';
import { oauthError } from './errors.js';

/** What was being done when it failed, for the message. */
export type Step = 'discovery' | 'registration' | 'token exchange' | 'client credentials' | 'refresh' | 'revocation';

/**
 * The OAuth error code (`invalid_grant`, …) of an error the SDK made from an
 * authorization server's answer. Read from the error rather than `instanceof`,
 * which fails when the SDK is loaded twice (from source and from the build).
 */
export function oauthErrorCode(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as { errorCode?: unknown }).errorCode : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Whether `error` means the server could not be reached or answered as broken (worth trying again later). */
function isUnreachable(error: unknown): boolean {
  const code = oauthErrorCode(error);
  if (code !== undefined) return code === 'server_error' || code === 'temporarily_unavailable';
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return true;
  // fetch rejects with a TypeError ("fetch failed") whose cause is the socket error.
  return error instanceof TypeError;
}

/** Whether the authorization server rejected the refresh token or the client (the saved sign-in is dead). */
export function isRejectedGrant(error: unknown): boolean {
  const code = oauthErrorCode(error);
  return code === 'invalid_grant' || code === 'invalid_client' || code === 'unauthorized_client';
}

/** The OAuth error code and description of `error`, or its message: never more than the server said. */
export function describeOAuth(error: unknown): string {
  const code = oauthErrorCode(error);
  if (code !== undefined) return (error as Error).message ? `${code}: ${(error as Error).message}` : code;
  return describeError(error);
}

/** A PlinthError for a failed `step` with `server`; PlinthErrors pass through unchanged. */
export function classify(error: unknown, server: string, step: Step): PlinthError {
  if (isPlinthError(error)) return error;
  const what = describeOAuth(error);
  if (isUnreachable(error)) {
    return oauthError('PLN_E_OAUTH_UNREACHABLE', server, `The authorization server of MCP server "${server}" could not be reached during ${step}: ${what}`, { cause: error, details: { step } });
  }
  if (step === 'refresh' && isRejectedGrant(error)) {
    return oauthError('PLN_E_OAUTH_SIGNIN_REQUIRED', server, `MCP server "${server}" needs you to sign in again (its authorization server no longer accepts the saved sign-in: ${what}): run \`plinth auth login ${server}\``, {
      cause: error,
      details: { step },
    });
  }
  if (step === 'token exchange' && oauthErrorCode(error) !== undefined) {
    return oauthError('PLN_E_OAUTH_EXCHANGE_FAILED', server, `The authorization server of MCP server "${server}" refused to exchange the authorization code (${what})`, { cause: error, details: { step } });
  }
  if (step === 'registration' || /dynamic client registration/i.test(what)) {
    return oauthError('PLN_E_OAUTH_REGISTRATION', server, `plinth could not register itself with the authorization server of MCP server "${server}": ${what}`, { cause: error, details: { step: 'registration' } });
  }
  if (step === 'discovery' && oauthErrorCode(error) === undefined) {
    return oauthError('PLN_E_OAUTH_DISCOVERY', server, `The OAuth metadata of MCP server "${server}" could not be found or read: ${what}`, { cause: error, details: { step } });
  }
  return oauthError('PLN_E_OAUTH_FAILED', server, `OAuth ${step} with MCP server "${server}" failed: ${what}`, { cause: error, details: { step } });
}
