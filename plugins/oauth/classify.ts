/**
 * Turns what the SDK's OAuth client throws into plinth's codes. The split that
 * matters to a user: the authorization server said no to the saved sign-in
 * (`invalid_grant`: sign in again) versus it could not be reached (the network,
 * a 5xx, a time limit: tokens are kept and a later try may work).
 */
import { type PlinthError, describeError, isPlinthError } from 'plinth/sdk';
import { type Answer, unreadableAnswer, zodFields } from './answers.js';
import { oauthError } from './errors.js';
import { sdkIssuerMismatch } from './issuer.js';

/** What was being done when it failed, for the message. */
export type Step = 'discovery' | 'registration' | 'token exchange' | 'client credentials' | 'jwt bearer' | 'refresh' | 'revocation';

/** The brands the SDK stamps on its errors, under a registered symbol: they survive a second copy of the SDK. */
const BRANDS = Symbol.for('mcp.sdk.errorBrands');

/**
 * The OAuth error code (`invalid_grant`, …) of an `OAuthError` the SDK made
 * from an authorization server's answer. Read from the error's brand and
 * `code` rather than `instanceof` of an imported class: the SDK may be loaded
 * twice (from source and from the build), and this file loads none of it.
 */
export function oauthErrorCode(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const brands = (error as { [BRANDS]?: { has?: (b: string) => boolean } })[BRANDS];
  const isOAuthError = (typeof brands?.has === 'function' && brands.has('mcp.OAuthError')) || error.name === 'OAuthError';
  const code = (error as { code?: unknown }).code;
  return isOAuthError && typeof code === 'string' ? code : undefined;
}

/**
 * Whether `error` means the server could not be reached or answered as broken
 * (worth trying again later). The SDK calls any unreadable error answer
 * `server_error`: when the answer is known to be a 4xx, it is not that.
 */
function isUnreachable(error: unknown, answer?: Answer): boolean {
  const code = oauthErrorCode(error);
  if (code === 'server_error' && answer !== undefined && answer.status < 500 && BODY_QUOTE.test((error as Error).message)) return false;
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

/**
 * The OAuth error code and description of `error`, or its message: never more
 * than the server said, and never a body the server sent. The SDK quotes a body
 * that is not an OAuth error response in full (`Invalid OAuth error response: …
 * Raw body: …`) and a parse error quotes its start; a proxy's or a login
 * page's body may echo the request, code and client secret included.
 */
export function describeOAuth(error: unknown): string {
  const code = oauthErrorCode(error);
  if (code !== undefined) {
    const message = withoutBody((error as Error).message);
    return message ? `${code}: ${message}` : code;
  }
  if (error instanceof SyntaxError) return 'an answer that is not JSON';
  const fields = zodFields(error);
  if (fields !== undefined) return fields.length > 0 ? `an answer without a valid ${fields.join(', ')}` : 'an answer that is not what OAuth expects';
  return describeError(error);
}

/** The error to keep as a cause: the SDK's own, unless its message quotes a body (then a stand-in that says what {@link describeOAuth} says). */
export function causeOf(error: unknown): unknown {
  const quotes = error instanceof SyntaxError || zodFields(error) !== undefined || (error instanceof Error && BODY_QUOTE.test(error.message));
  return quotes ? new Error(describeOAuth(error)) : error;
}

/** Where the SDK starts quoting a body that is not an OAuth error response. */
const BODY_QUOTE = /Invalid OAuth error response: [\s\S]*$/;

function withoutBody(message: string): string {
  return message.replace(BODY_QUOTE, 'an answer that is not an OAuth error response');
}

/** The hint of an answer that could not be read: the fault is the server's, not the user's settings. */
const BROKEN_ANSWER_HINT = 'the server answered with something OAuth cannot read (the address and status are in the message): check the server\'s "url", and tell whoever runs it';

/**
 * A PlinthError for a failed `step` with `server`; PlinthErrors pass through
 * unchanged. `answer` is the last answer received: an answer the SDK could not
 * read (not JSON, fields missing) is described by its address and status
 * rather than by the parse error, which quotes the body.
 */
export function classify(error: unknown, server: string, step: Step, answer?: Answer): PlinthError {
  if (isPlinthError(error)) return error;
  const mismatch = sdkIssuerMismatch(server, error);
  if (mismatch !== undefined) return mismatch;
  const unreadable = unreadableAnswer(error, answer);
  const what = unreadable ?? describeOAuth(error);
  const cause = causeOf(error);
  if (isUnreachable(error, answer)) {
    return oauthError('PLN_E_OAUTH_UNREACHABLE', server, `The authorization server of MCP server "${server}" could not be reached during ${step}: ${what}`, { cause, details: { step } });
  }
  if (unreadable !== undefined) {
    const options = { cause, hint: BROKEN_ANSWER_HINT, details: { step, status: answer!.status } };
    if (step === 'discovery') return oauthError('PLN_E_OAUTH_DISCOVERY', server, `The OAuth metadata of MCP server "${server}" could not be read: ${unreadable}`, options);
    if (step === 'registration') return oauthError('PLN_E_OAUTH_REGISTRATION', server, `plinth could not register itself with the authorization server of MCP server "${server}": ${unreadable}`, options);
    return oauthError('PLN_E_OAUTH_FAILED', server, `OAuth ${step} with MCP server "${server}" failed: ${unreadable}`, options);
  }
  if (step === 'refresh' && isRejectedGrant(error)) {
    return oauthError('PLN_E_OAUTH_SIGNIN_REQUIRED', server, `MCP server "${server}" needs you to sign in again (its authorization server no longer accepts the saved sign-in: ${what}): run \`plinth auth login ${server}\``, {
      cause,
      details: { step },
    });
  }
  if (step === 'token exchange' && oauthErrorCode(error) !== undefined) {
    return oauthError('PLN_E_OAUTH_EXCHANGE_FAILED', server, `The authorization server of MCP server "${server}" refused to exchange the authorization code (${what})`, { cause, details: { step } });
  }
  if (step === 'registration' || /dynamic client registration/i.test(what)) {
    return oauthError('PLN_E_OAUTH_REGISTRATION', server, `plinth could not register itself with the authorization server of MCP server "${server}": ${what}`, { cause, details: { step: 'registration' } });
  }
  if (step === 'discovery' && oauthErrorCode(error) === undefined) {
    return oauthError('PLN_E_OAUTH_DISCOVERY', server, `The OAuth metadata of MCP server "${server}" could not be found or read: ${what}`, { cause, details: { step } });
  }
  return oauthError('PLN_E_OAUTH_FAILED', server, `OAuth ${step} with MCP server "${server}" failed: ${what}`, { cause, details: { step } });
}
