/**
 * Signing in to one MCP server. The SDK's `auth()` runs twice: first it
 * discovers, registers where needed and builds the authorization URL with PKCE
 * (S256), the `state` and the `resource`; the channel shows that URL and waits
 * for the callback; then `auth()` exchanges the code for tokens, which the
 * provider stores. What plinth adds is the order, the checks on the callback
 * (error, state, code) and errors a person can act on.
 *
 * What to ask for comes from the server's challenge: the one a connection's
 * failed request received (kept by the provider), else the answer to the
 * request a connection sends first. A step-up (a challenge naming scopes the
 * stored sign-in lacks) asks for those together with what was granted before.
 * A machine-to-machine server (`client_credentials`) gets its tokens in one
 * request, without a browser or a channel.
 */
import { randomBytes } from 'node:crypto';
import { auth, extractWWWAuthenticateParams, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/client';
import type { FetchLike } from '@modelcontextprotocol/client';
import { type Logger, PlinthError } from 'plinth/sdk';
import type { McpServerDefinition } from 'plinth/sdk';
import { type AnswerLog, describeAnswer, recordAnswers, unreadableAnswer } from './answers.js';
import { type Step, causeOf, classify, describeOAuth } from './classify.js';
import { oauthError } from './errors.js';
import { StoredOAuthProvider } from './provider.js';
import type { CrossAppTarget } from './cross-app.js';
import type { OAuthChallenge, OAuthRecord, TokenVault } from './record.js';
import type { RefreshDeps } from './refresh.js';
import type { ServerOAuthConfig } from './settings.js';
import { type ExpectedIssuer, checkResponseIssuer, expectedIssuer, recordIssSupport, sdkIssuerMismatch } from './issuer.js';
import { inspectCallback } from './signin/callback-params.js';
import { callbackTimeoutError, invalidCallbackError, stateMismatchError } from './signin/errors.js';
import type { SignInChannel, SignInRequest } from 'plinth/sdk';

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
  /** What a connection's failed request was challenged with, when one was (it wins over asking the server again). */
  readonly challenge?: OAuthChallenge;
  /** Cross-app access: the ID-JAG from the identity provider. */
  readonly idJag?: (target: CrossAppTarget) => Promise<string>;
}

/** What the server asked for: its status (401, 403) and the parameters of its `WWW-Authenticate`. */
interface Challenge {
  readonly status: number;
  readonly resourceMetadataUrl?: URL;
  readonly scope?: string;
  /** The server's `WWW-Authenticate` offers the `DPoP` scheme (RFC 9449 §7.1): it wants DPoP-bound tokens. */
  readonly dpop?: boolean;
}

/** Signs in and resolves with the record stored. Nothing stored before is touched unless the sign-in succeeds. */
export async function signIn(deps: LoginDeps): Promise<OAuthRecord> {
  if (deps.config.grant !== 'authorization_code') return signInAsMachine(deps);
  const name = deps.server.name;
  const state = randomBytes(32).toString('base64url');
  const limit = AbortSignal.timeout(deps.timeoutMs);
  const signal = deps.signal ? AbortSignal.any([deps.signal, limit]) : limit;
  const channel = await deps.channel({ server: name, state, port: deps.port, signal });
  try {
    const challenge = await challengeFor(deps, signal);
    const provider = signInProvider(deps, { redirectUrl: channel.redirectUrl, state, open: (url) => channel.open(url) }, challenge.dpop);
    const issSupport = recordIssSupport(deps.fetch);
    const answers = recordAnswers(issSupport.fetch);
    const scope = scopeToAsk(deps.config.scope, challenge.scope, await grantedScope(deps));
    const options = {
      serverUrl: deps.server.url,
      ...(challenge.resourceMetadataUrl !== undefined && { resourceMetadataUrl: challenge.resourceMetadataUrl }),
      ...(scope !== undefined && { scope }),
      fetchFn: answers.fetch,
    };
    let step: Step = 'discovery';
    try {
      try {
        await auth(provider, options);
      } catch (error) {
        // The SDK checks the metadata's issuer itself (RFC 8414 §3.3), before plinth sees the metadata.
        throw sdkIssuerMismatch(name, error) ?? noMetadata(provider, challenge, name, error, answers) ?? error;
      }
      // The issuer the response must name: recorded before the browser could answer, from the metadata just checked.
      const found = provider.discovered;
      const expected = found === undefined ? undefined : expectedIssuer(found, found.authorizationServerMetadata === undefined ? undefined : issSupport.advertised(found.authorizationServerMetadata.issuer));
      const callback = await raced(channel.callback(), signal, name, deps.timeoutMs);
      const code = checkCallback(callback, state, name, expected);
      // The SDK checks the response's iss too (RFC 9207): it needs the one that came, or it refuses as if none did.
      const iss = callback.searchParams.get('iss') ?? undefined;
      step = 'token exchange';
      const result = await auth(provider, { ...options, authorizationCode: code, ...(iss !== undefined && { iss }) });
      if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue tokens');
    } catch (error) {
      if (signal.aborted && !(error instanceof PlinthError)) throw abortError(signal, limit, name, deps.timeoutMs);
      throw classify(error, name, step === 'discovery' && registering(provider, answers) ? 'registration' : step, answers.last());
    }
    return await storedRecord(deps);
  } finally {
    await channel.close().catch((error: unknown) => deps.log.debug(`closing the sign-in channel: ${String(error)}`));
  }
}

/** `client_credentials`: the SDK discovers the token endpoint and asks it directly with the configured credentials; no browser. */
async function signInAsMachine(deps: LoginDeps): Promise<OAuthRecord> {
  const name = deps.server.name;
  const signal = deps.signal ? AbortSignal.any([deps.signal, AbortSignal.timeout(deps.timeoutMs)]) : AbortSignal.timeout(deps.timeoutMs);
  const challenge = await challengeFor(deps, signal);
  // No redirect is ever used: a machine-to-machine server has no redirect URL.
  const provider = signInProvider(deps, { redirectUrl: '', state: '', open: async () => {} }, challenge.dpop);
  const answers = recordAnswers(deps.fetch);
  try {
    const result = await auth(provider, {
      serverUrl: deps.server.url,
      ...(challenge.resourceMetadataUrl !== undefined && { resourceMetadataUrl: challenge.resourceMetadataUrl }),
      fetchFn: answers.fetch,
    });
    if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue tokens');
  } catch (error) {
    if (error instanceof PlinthError) throw error;
    throw classify(error, name, deps.config.grant === 'jwt_bearer' ? 'jwt bearer' : 'client credentials', answers.last());
  }
  return storedRecord(deps);
}

/** The provider of one sign-in: the stored record's, in login mode with this redirect. */
function signInProvider(deps: LoginDeps, redirect: { redirectUrl: string; state: string; open: (url: URL) => Promise<void> }, dpopChallenged = false): StoredOAuthProvider {
  const { server, config, vault, refresh, log, idJag } = deps;
  return new StoredOAuthProvider({ server, config, vault, refresh, log, mode: { kind: 'login', ...redirect }, ...(idJag !== undefined && { idJag }), ...(dpopChallenged && { dpopChallenged }) });
}

async function storedRecord(deps: LoginDeps): Promise<OAuthRecord> {
  const name = deps.server.name;
  const record = await deps.vault.read(name);
  if (record?.tokens === undefined) throw oauthError('PLN_E_OAUTH_FAILED', name, `Signing in to MCP server "${name}" ended without tokens being stored`);
  return record;
}

/** The scope the stored sign-in for this URL was granted, if any. */
async function grantedScope(deps: LoginDeps): Promise<string | undefined> {
  const record = await deps.vault.read(deps.server.name).catch(() => undefined);
  return record?.serverUrl === deps.server.url ? record.tokens?.scope : undefined;
}

/**
 * Configured scopes win; otherwise the server's challenge (then what its metadata
 * lists: the SDK's order). A challenge naming scopes beyond those granted (a step-up,
 * 403 `insufficient_scope`) asks for them together with what was granted before.
 */
function scopeToAsk(configured: string | undefined, challenged: string | undefined, granted: string | undefined): string | undefined {
  const base = configured ?? challenged;
  if (challenged === undefined || granted === undefined) return base;
  const have = new Set(granted.split(' ').filter(Boolean));
  const more = challenged.split(' ').filter((scope) => scope !== '' && !have.has(scope));
  if (more.length === 0) return base;
  return [...new Set([...granted.split(' '), ...(configured?.split(' ') ?? []), ...challenged.split(' ')].filter(Boolean))].join(' ');
}

/** The challenge a connection's failed request received, else the server's answer to the request a connection sends first. */
async function challengeFor(deps: LoginDeps, signal: AbortSignal): Promise<Challenge> {
  const kept = deps.challenge;
  if (kept !== undefined && (kept.scope !== undefined || kept.resourceMetadataUrl !== undefined)) {
    const url = kept.resourceMetadataUrl !== undefined ? URL.parse(kept.resourceMetadataUrl) : null;
    return { status: 401, ...(url !== null && { resourceMetadataUrl: url }), ...(kept.scope !== undefined && { scope: kept.scope }) };
  }
  if (deps.server.transport === 'sse') return challengeOf(deps, 'GET', signal);
  const posted = await challengeOf(deps, 'POST', signal);
  // `auto` goes on to SSE after a 4xx other than 401 (connect.ts): so does the question.
  if (deps.server.transport === 'auto' && posted.status >= 400 && posted.status < 500 && posted.status !== 401 && posted.status !== 403) {
    return challengeOf(deps, 'GET', signal);
  }
  return posted;
}

/**
 * What the server says to a connection's first request without a token — an
 * `initialize` POST (streamable HTTP) or the stream's GET (SSE) — : its status,
 * and the protected-resource metadata URL and scope of its `WWW-Authenticate`
 * challenge. A server that lets `initialize` through without a token (it may
 * protect only later requests) is still signed in to through its well-known
 * metadata; a session it opened for the question is closed again.
 */
async function challengeOf(deps: LoginDeps, method: 'GET' | 'POST', signal: AbortSignal): Promise<Challenge> {
  const probe = new AbortController();
  const both = AbortSignal.any([signal, probe.signal]);
  const { url, headers, name } = deps.server;
  let response: Response;
  try {
    response =
      method === 'GET'
        ? await deps.fetch(url, { method, headers: { ...headers, accept: 'text/event-stream' }, signal: both })
        : await deps.fetch(url, {
            method,
            headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 0,
              method: 'initialize',
              params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'plinth', version: '1' } },
            }),
            signal: both,
          });
  } catch (error) {
    if (signal.aborted) throw error;
    throw oauthError('PLN_E_OAUTH_UNREACHABLE', name, `MCP server "${name}" could not be reached at its URL: ${describeOAuth(error)}`, {
      cause: error,
      hint: `check the server's "url" and that it is running, then run \`plinth auth login ${name}\` again`,
    });
  } finally {
    probe.abort();
  }
  const session = response.headers.get('mcp-session-id');
  if (response.ok && session !== null) {
    await deps.fetch(url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': session }, signal }).then(
      (closed) => closed.body?.cancel(),
      () => undefined,
    );
  }
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  const dpop = offersDpop(response.headers.get('www-authenticate'));
  return { status: response.status, ...(resourceMetadataUrl !== undefined && { resourceMetadataUrl }), ...(scope !== undefined && { scope }), ...(dpop && { dpop }) };
}

/** Whether a `WWW-Authenticate` value has a `DPoP` challenge (a scheme, not a word inside a quoted parameter). */
function offersDpop(header: string | null): boolean {
  if (header === null) return false;
  return /(?:^|,)\s*DPoP(?:\s|,|$)/i.test(header.replace(/"(?:[^"\\]|\\.)*"/g, '""'));
}

/**
 * Whether the first `auth()` failed at dynamic registration: its last request
 * was the POST to the registration endpoint that discovery found.
 */
function registering(provider: StoredOAuthProvider, answers: AnswerLog): boolean {
  const last = answers.last();
  const endpoint = provider.discovered?.authorizationServerMetadata?.registration_endpoint;
  return last?.method === 'POST' && endpoint !== undefined && answers.from(endpoint) === last;
}

/**
 * When the sign-in failed and discovery found no OAuth metadata, that is the
 * reason to give — told apart from metadata that is there but broken. A
 * server that challenged (401, 403) was tried at the default endpoints of its
 * origin first, as the 2025-03-26 specification says; they failed too. A
 * challenge that names its protected-resource metadata says the server does
 * publish some: that document could not be read (the SDK goes on without it),
 * and what it answered is the reason. An answer the SDK could not read on the
 * way (the authorization server's metadata document) is `classify`'s to describe.
 */
function noMetadata(provider: StoredOAuthProvider, challenge: Challenge, server: string, error: unknown, answers: AnswerLog): PlinthError | undefined {
  // plinth's own refusal (an issuer that does not match, an address refused) is the reason.
  if (error instanceof PlinthError) return undefined;
  const found = provider.discovered;
  if (found !== undefined && (found.resourceMetadata !== undefined || found.authorizationServerMetadata !== undefined)) return undefined;
  const last = answers.last();
  // A metadata document that came (2xx) but could not be read: broken, not missing.
  if (last?.method === 'GET' && last.status >= 200 && last.status < 300 && unreadableAnswer(error, last) !== undefined) return undefined;
  const { status, resourceMetadataUrl } = challenge;
  const challenged = status === 401 || status === 403;
  const cause = causeOf(error);
  const defaults = `the default endpoints at its origin did not work either (${unreadableAnswer(error, last) ?? describeOAuth(error)})`;
  if (challenged && resourceMetadataUrl !== undefined) {
    const answer = answers.from(resourceMetadataUrl);
    const got = answer === undefined ? 'it could not be fetched' : `${describeAnswer(answer)}, not metadata it could read`;
    return oauthError('PLN_E_OAUTH_DISCOVERY', server, `MCP server "${server}" names its OAuth metadata at ${resourceMetadataUrl.href} (in its HTTP ${status} challenge), but ${got}; ${defaults}`, {
      cause,
      hint: 'the server\'s OAuth metadata is broken (its address and answer are in the message): check the server\'s "url", and tell whoever runs it',
    });
  }
  const asked = challenged ? `it answered HTTP ${status} without a token` : `it answered HTTP ${status} without a token: it may not need a sign-in`;
  return oauthError('PLN_E_OAUTH_DISCOVERY', server, `MCP server "${server}" publishes no OAuth metadata (${asked})${challenged ? `, and ${defaults}` : ''}`, {
    cause,
    hint: 'check the server\'s "url"; a server that takes a key in a header needs "headers", not a sign-in',
  });
}

/**
 * The code from the URL the authorization server redirected to, after the
 * checks every channel's URL gets (a host's channel may not check): a missing
 * or different `state` is a possible forgery, an `error` the server's refusal.
 */
function checkCallback(url: URL, state: string, server: string, expected: ExpectedIssuer | undefined): string {
  const verdict = inspectCallback(url, state);
  if (verdict.kind === 'forged') throw stateMismatchError(server, 'browser', verdict.missing);
  // RFC 9207: before the code goes anywhere, and before an error from an unknown server is believed.
  if (expected !== undefined) checkResponseIssuer(server, url, expected);
  switch (verdict.kind) {
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
