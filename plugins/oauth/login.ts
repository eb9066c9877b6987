/**
 * Signing in to one MCP server. The SDK's `auth()` runs twice: first it
 * discovers, registers where needed and builds the authorization URL with PKCE
 * (S256), the `state` and the `resource`; the channel shows that URL and waits
 * for the callback; then `auth()` exchanges the code for tokens, which the
 * provider stores. What plinth adds is the order, the checks on the callback
 * (error, state, code) and errors a person can act on.
 */
import { randomBytes } from 'node:crypto';
import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type Logger, PlinthError } from 'plinth/sdk';
import type { McpServerDefinition } from '../mcp/types.js';
import { type Step, classify, describeOAuth } from './classify.js';
import { oauthError } from './errors.js';
import { StoredOAuthProvider } from './provider.js';
import type { OAuthRecord, TokenVault } from './record.js';
import type { RefreshDeps } from './refresh.js';
import type { ServerOAuthConfig } from './settings.js';
import { inspectCallback } from './signin/callback-params.js';
import { callbackTimeoutError, invalidCallbackError, stateMismatchError } from './signin/errors.js';
import type { SignInChannel, SignInRequest } from './types.js';

export interface LoginDeps {
  readonly server: McpServerDefinition & { readonly url: string };
  readonly config: ServerOAuthConfig;
  readonly vault: TokenVault;
  readonly refresh: RefreshDeps;
  readonly fetch: FetchLike;
  readonly log: Logger;
  /** Opens the channel (a host's, or the default loopback one). */
  readonly channel: (request: SignInRequest) => Promise<SignInChannel>;
  readonly port: number;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** Signs in and resolves with the record stored. Nothing stored before is touched unless the sign-in succeeds. */
export async function signIn(deps: LoginDeps): Promise<OAuthRecord> {
  const name = deps.server.name;
  const state = randomBytes(32).toString('base64url');
  const limit = AbortSignal.timeout(deps.timeoutMs);
  const signal = deps.signal ? AbortSignal.any([deps.signal, limit]) : limit;
  const channel = await deps.channel({ server: name, state, port: deps.port, signal });
  try {
    const challenge = await challengeOf(deps, signal);
    const provider = new StoredOAuthProvider({
      server: deps.server,
      config: deps.config,
      vault: deps.vault,
      refresh: deps.refresh,
      log: deps.log,
      mode: { kind: 'login', redirectUrl: channel.redirectUrl, state, open: (url) => channel.open(url) },
    });
    // Configured scopes win; otherwise the server's challenge, then what its metadata lists (the SDK's order).
    const scope = deps.config.scope ?? challenge.scope;
    const options = {
      serverUrl: deps.server.url,
      ...(challenge.resourceMetadataUrl !== undefined && { resourceMetadataUrl: challenge.resourceMetadataUrl }),
      ...(scope !== undefined && { scope }),
      fetchFn: deps.fetch,
    };
    let step: Step = 'discovery';
    try {
      try {
        await auth(provider, options);
      } catch (error) {
        throw noMetadata(provider, challenge.status, name) ?? error;
      }
      const code = checkCallback(await raced(channel.callback(), signal, name, deps.timeoutMs), state, name);
      step = 'token exchange';
      const result = await auth(provider, { ...options, authorizationCode: code });
      if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue tokens');
    } catch (error) {
      throw signal.aborted && !(error instanceof PlinthError) ? abortError(signal, limit, name, deps.timeoutMs) : classify(error, name, step);
    }
    const record = await deps.vault.read(name);
    if (record?.tokens === undefined) throw oauthError('PLN_E_OAUTH_FAILED', name, `Signing in to MCP server "${name}" ended without tokens being stored`);
    return record;
  } finally {
    await channel.close().catch((error: unknown) => deps.log.debug(`closing the sign-in channel: ${String(error)}`));
  }
}

/**
 * What the server says when asked without a token: its status, and the
 * protected-resource metadata URL and scope of its `WWW-Authenticate`
 * challenge. A GET creates no session on a streamable HTTP server and opens
 * (then drops) the stream of an SSE one. A server that does not challenge a
 * GET (it may protect only its POSTs) is still signed in to through its
 * well-known metadata.
 */
async function challengeOf(deps: LoginDeps, signal: AbortSignal): Promise<{ status: number; resourceMetadataUrl?: URL; scope?: string }> {
  const probe = new AbortController();
  const both = AbortSignal.any([signal, probe.signal]);
  let response: Response;
  try {
    response = await deps.fetch(deps.server.url, { method: 'GET', headers: { ...deps.server.headers, accept: 'text/event-stream' }, signal: both });
  } catch (error) {
    if (signal.aborted) throw error;
    throw oauthError('PLN_E_OAUTH_UNREACHABLE', deps.server.name, `MCP server "${deps.server.name}" could not be reached at its URL: ${describeOAuth(error)}`, {
      cause: error,
      hint: `check the server's "url" and that it is running, then run \`plinth auth login ${deps.server.name}\` again`,
    });
  } finally {
    probe.abort();
  }
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return { status: response.status, ...(resourceMetadataUrl !== undefined && { resourceMetadataUrl }), ...(scope !== undefined && { scope }) };
}

/**
 * When the sign-in failed and discovery found no OAuth metadata at all, that is
 * the reason to give (not the 404 of a guessed registration endpoint).
 */
function noMetadata(provider: StoredOAuthProvider, status: number, server: string): PlinthError | undefined {
  const found = provider.discovered;
  if (found !== undefined && (found.resourceMetadata !== undefined || found.authorizationServerMetadata !== undefined)) return undefined;
  const asked = status === 401 || status === 403 ? `it answered HTTP ${status} without a token` : `it answered HTTP ${status} without a token: it may not need a sign-in`;
  return oauthError('PLN_E_OAUTH_DISCOVERY', server, `MCP server "${server}" publishes no OAuth metadata (${asked})`, {
    hint: 'check the server\'s "url"; a server that takes a key in a header needs "headers", not a sign-in',
  });
}

/**
 * The code from the URL the authorization server redirected to, after the
 * checks every channel's URL gets (a host's channel may not check): a missing
 * or different `state` is a possible forgery, an `error` the server's refusal.
 */
function checkCallback(url: URL, state: string, server: string): string {
  const verdict = inspectCallback(url, state);
  switch (verdict.kind) {
    case 'forged':
      throw stateMismatchError(server, 'browser', verdict.missing);
    case 'invalid':
      throw invalidCallbackError(server, 'browser');
    case 'error': {
      const { error, description } = verdict.params;
      throw oauthError('PLN_E_OAUTH_DENIED', server, `The authorization server did not grant access to MCP server "${server}": ${printable(error)}${description ? ` (${printable(description)})` : ''}`, {
        details: { error: printable(error) },
      });
    }
    case 'code':
      return url.searchParams.get('code')!;
  }
}

/** Text from a URL made safe for a terminal: control characters (an escape sequence) dropped, length bounded. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').slice(0, 300);
}

/** `promise`, or the reason the sign-in was called off. */
function raced<T>(promise: Promise<T>, signal: AbortSignal, server: string, timeoutMs: number): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal, undefined, server, timeoutMs));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, undefined, server, timeoutMs));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function abortError(signal: AbortSignal, limit: AbortSignal | undefined, server: string, timeoutMs: number): PlinthError {
  const reason: unknown = signal.reason;
  if (reason instanceof PlinthError) return reason;
  const timedOut = (limit?.aborted ?? false) || (reason instanceof Error && reason.name === 'TimeoutError');
  if (timedOut) return callbackTimeoutError(server, timeoutMs);
  return oauthError('PLN_E_OAUTH_FAILED', server, `Signing in to MCP server "${server}" was called off`, { cause: reason });
}
