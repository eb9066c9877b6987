/**
 * The SDK's `OAuthClientProvider` for one MCP server, backed by the stored
 * record. The SDK does discovery, registration, PKCE, the token requests and
 * the retry after a 401; this class decides what it may do where:
 *
 * - for a connection (`plinth up`, `plinth call`, a hook's tool call) it hands
 *   out the stored tokens, refreshes them ahead of expiry, and never starts a
 *   sign-in or registers a client: where one would be needed it throws
 *   `PLN_E_OAUTH_SIGNIN_REQUIRED` (or `PLN_E_OAUTH_UNREACHABLE` when the
 *   authorization server could not be asked), naming `plinth auth login`;
 * - for a sign-in (`plinth auth login`) it starts from fresh discovery and no
 *   tokens, and hands the authorization URL to the sign-in channel;
 * - for a machine-to-machine server (`"grant": "client_credentials"`) it has no
 *   redirect URL, so the SDK asks the token endpoint directly, authenticating
 *   with the client secret (basic or post) or a signed JWT (`private_key_jwt`,
 *   the SDK's `createPrivateKeyJwtAuth`): no browser, in a connection too.
 *
 * When a connection would need a sign-in, the SDK has already chosen what to
 * ask for from the request that failed (the `resource_metadata` and `scope` of
 * its `WWW-Authenticate`, a 403 `insufficient_scope` included): the provider
 * lets it build the authorization request (never sent) and keeps that
 * challenge for the sign-in that follows.
 *
 * The PKCE verifier and the `state` live in memory only, for one sign-in.
 */
import { randomBytes } from 'node:crypto';
import { discoverOAuthProtectedResourceMetadata, createPrivateKeyJwtAuth } from '@modelcontextprotocol/client';
import type { AddClientAuthentication, DpopSession, OAuthClientProvider, OAuthDiscoveryState, OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/client';
import { type Logger, type PlinthError, isPlinthError, safeLine } from 'plinth/sdk';
import type { McpServerDefinition } from 'plinth/sdk';
import type { CrossAppTarget } from './cross-app.js';
import { type StoredDpopKey, dpopAlgorithm, dpopSession, isStoredDpopKey, newDpopKey } from './dpop.js';
import { oauthError } from './errors.js';
import { checkMetadataIssuer, sameAuthorizationServer } from './issuer.js';
import { type OAuthChallenge, type OAuthRecord, type TokenVault, boundIssuer, withTokens } from './record.js';
import { type RefreshDeps, expired, refreshDue, refreshTokens, refreshable } from './refresh.js';
import type { ServerOAuthConfig } from './settings.js';

/** Tokens another process refreshed or stored are picked up at the latest after this long. */
const RELOAD_AFTER_MS = 30_000;

/** A redirect URI for connections, which never redirect: the SDK needs one to stay on the authorization-code flow. */
const UNUSED_REDIRECT = 'http://127.0.0.1/callback';

/**
 * The client id a connection without a registration lets the SDK put into an
 * authorization request that is never sent: the SDK then picks the scope and
 * the metadata from the failed request, and registers nothing.
 */
const NOT_REGISTERED = 'plinth-not-registered';

export type ProviderMode =
  | { readonly kind: 'connection' }
  | { readonly kind: 'login'; readonly redirectUrl: string; readonly state: string; readonly open: (authorizationUrl: URL) => Promise<void> };

export interface ProviderDeps {
  readonly server: McpServerDefinition & { readonly url: string };
  readonly config: ServerOAuthConfig;
  readonly vault: TokenVault;
  readonly refresh: RefreshDeps;
  readonly log: Logger;
  readonly mode: ProviderMode;
  /** A connection that needs a sign-in: what the server's challenge asked for (the sign-in uses it). */
  readonly onChallenge?: (challenge: OAuthChallenge) => void;
  /** Cross-app access (`oauth.crossApp`): the ID-JAG for the authorization server and resource discovery found. */
  readonly idJag?: (target: CrossAppTarget) => Promise<string>;
  /** A sign-in whose server challenged with the `DPoP` scheme: DPoP even where neither metadata document says so. */
  readonly dpopChallenged?: boolean;
}

/** RFC 7523's grant type: the ID-JAG is the assertion. */
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export class StoredOAuthProvider implements OAuthClientProvider {
  readonly #deps: ProviderDeps;
  #record: OAuthRecord | undefined;
  #loadedAt = Number.NEGATIVE_INFINITY;
  #verifier: string | undefined;
  /** The tokens last handed to the transport: a refusal of other tokens is not theirs. */
  #handedOut: OAuthTokens | undefined;
  /** The saved sign-in was refused during this provider's life. */
  #refused = false;
  /**
   * What this provider's last discovery found; a sign-in discovers afresh, once,
   * before using any. A connection without a stored sign-in keeps it here only,
   * so that a server that merely answers 401 leaves nothing stored.
   */
  #lastDiscovery: OAuthDiscoveryState | undefined;
  #jwtAuth: AddClientAuthentication | undefined;
  /** The protected-resource metadata URL a challenge named (kept apart: the stream's GET and a POST discover at once, one without it). */
  #challengedMetadataUrl: string | undefined;
  /** The scopes the protected-resource metadata lists: what the SDK asks for when the challenge names none. */
  #listedScopes: string | undefined;
  /**
   * A sign-in's registration with an authorization server other than the one
   * the stored sign-in is bound to: kept here, and stored with the tokens it
   * leads to, so that the stored record never mixes two servers' credentials.
   */
  #pendingClient: OAuthClientInformationMixed | undefined;
  /** A DPoP key made for the next token request; stored with the tokens it gets. */
  #pendingDpop: Promise<StoredDpopKey> | undefined;
  /** The session of the key in use: one per key, so that the servers' nonces are remembered. */
  #dpopSession: { thumbprint: string; session: Promise<DpopSession> } | undefined;
  /** The authorization server and resource the SDK's last discovery settled on (cross-app access asks the IdP for them). */
  #authorizationServer: string | undefined;
  #resourceUrl: string | undefined;
  #loggedRegistration = false;

  constructor(deps: ProviderDeps) {
    this.#deps = deps;
  }

  /** Undefined for a machine-to-machine server: the SDK then uses the provider's token request, with no browser. */
  get redirectUrl(): string | undefined {
    const { mode } = this.#deps;
    if (this.#machine) return undefined;
    return mode.kind === 'login' ? mode.redirectUrl : (this.#record?.redirectUrl ?? UNUSED_REDIRECT);
  }

  get clientMetadata(): OAuthClientMetadata & { application_type?: 'native' | 'web' } {
    const { config } = this.#deps;
    if (this.#machine) {
      return {
        client_name: config.clientName,
        redirect_uris: [],
        grant_types: [config.grant === 'jwt_bearer' ? JWT_BEARER : 'client_credentials'],
        token_endpoint_auth_method: config.tokenEndpointAuthMethod ?? 'client_secret_basic',
        ...(config.scope !== undefined && { scope: config.scope }),
      };
    }
    const redirect = this.redirectUrl ?? UNUSED_REDIRECT;
    return {
      client_name: config.clientName,
      redirect_uris: [redirect],
      // SEP-837: OpenID servers take a client without one for a web app, which may not redirect to the loopback.
      application_type: applicationType(redirect),
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: config.clientSecret !== undefined ? 'client_secret_basic' : 'none',
      ...(config.scope !== undefined && { scope: config.scope }),
    };
  }

  /** The Client ID Metadata Document plinth offers, where the authorization server accepts them (the SDK checks that it does). */
  get clientMetadataUrl(): string | undefined {
    return this.#machine ? undefined : this.#deps.config.clientMetadataUrl;
  }

  /** `private_key_jwt`: a client assertion signed with the configured key (the SDK's helper); other methods are the SDK's own. */
  get addClientAuthentication(): AddClientAuthentication | undefined {
    const { config } = this.#deps;
    if (config.grant !== 'client_credentials' || config.tokenEndpointAuthMethod !== 'private_key_jwt') return undefined;
    this.#jwtAuth ??= createPrivateKeyJwtAuth({
      issuer: config.clientId!,
      subject: config.clientId!,
      privateKey: config.privateKey!,
      alg: config.signingAlgorithm ?? 'RS256',
    });
    return this.#jwtAuth;
  }

  /**
   * The client_credentials grant of a machine-to-machine server, or the jwt-bearer grant of cross-app access
   * (the ID-JAG from the identity provider, RFC 7523); undefined otherwise (the SDK's authorization-code exchange).
   */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined | Promise<URLSearchParams> {
    if (!this.#machine) return undefined;
    if (this.#deps.config.grant === 'jwt_bearer') return this.#jwtBearerRequest(scope);
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    const asked = this.#machineScope(scope);
    if (asked) params.set('scope', asked);
    return params;
  }

  /**
   * The scope a grant without a browser asks for. The SDK (v2, SEP-835) falls back to the protected-resource
   * metadata's list before the configured scopes: a configured scope is what this client asks for, unless a
   * challenge named one.
   */
  #machineScope(scope: string | undefined): string | undefined {
    const listed = this.#listedScopes ?? this.#record?.discovery?.resourceMetadata?.scopes_supported?.join(' ');
    const configured = this.#deps.config.scope;
    return (scope === undefined || scope === listed) && configured !== undefined ? configured : scope;
  }

  async #jwtBearerRequest(scope: string | undefined): Promise<URLSearchParams> {
    const { server, idJag } = this.#deps;
    const found = this.#lastDiscovery ?? this.#record?.discovery;
    const authorizationServer = this.#authorizationServer ?? found?.authorizationServerMetadata?.issuer ?? (found === undefined ? undefined : String(found.authorizationServerUrl));
    const resource = this.#resourceUrl ?? found?.resourceMetadata?.resource ?? server.url;
    if (idJag === undefined || authorizationServer === undefined) {
      throw oauthError('PLN_E_OAUTH_FAILED', server.name, `Cross-app access to MCP server "${server.name}" cannot ask for a grant: its authorization server was not discovered`);
    }
    const asked = this.#machineScope(scope);
    const assertion = await idJag({ authorizationServer, resource, ...(asked !== undefined && { scope: asked }) });
    const params = new URLSearchParams({ grant_type: JWT_BEARER, assertion });
    if (asked) params.set('scope', asked);
    return params;
  }

  /** The issuer the SDK resolved (it calls this after discovery, in every auth()). */
  saveAuthorizationServerUrl(issuer: string): void {
    this.#authorizationServer = issuer;
  }

  /** The resource indicator the SDK resolved (RFC 8707). */
  saveResourceUrl(resource: string): void {
    this.#resourceUrl = resource;
  }

  /**
   * DPoP (RFC 9449): the session of the key the stored tokens are bound to; for a
   * token request where the MCP server wants DPoP (dpop.ts says when), a new key,
   * stored with the tokens it gets. A connection asks for tokens itself only for
   * a grant without a browser: a sign-in's Bearer tokens stay Bearer.
   */
  async dpop(): Promise<DpopSession | undefined> {
    const { config, mode } = this.#deps;
    if (config.dpop === false) return undefined;
    if (this.#pendingDpop !== undefined) return this.#sessionOf(await this.#pendingDpop);
    if (mode.kind === 'connection') {
      const record = await this.#current();
      if (record?.tokens !== undefined && isStoredDpopKey(record.dpop)) return this.#sessionOf(record.dpop);
      if (!this.#machine) return undefined;
    }
    const alg = dpopAlgorithm(this.#lastDiscovery ?? this.#record?.discovery, this.#deps.dpopChallenged === true, config.dpop);
    if (alg === undefined) return undefined;
    this.#pendingDpop ??= newDpopKey(alg);
    return this.#sessionOf(await this.#pendingDpop);
  }

  #sessionOf(key: StoredDpopKey): Promise<DpopSession> {
    if (this.#dpopSession?.thumbprint !== key.thumbprint) this.#dpopSession = { thumbprint: key.thumbprint, session: dpopSession(key) };
    return this.#dpopSession.session;
  }

  async state(): Promise<string> {
    const { mode } = this.#deps;
    // A connection's authorization request is never sent (see redirectToAuthorization): any value does.
    return mode.kind === 'login' ? mode.state : randomBytes(16).toString('base64url');
  }

  /**
   * Which client plinth is, in the 2025-11-25 specification's order: a Client ID
   * Metadata Document where the authorization server accepts them, else the
   * configured (pre-registered) client, else the one registered dynamically.
   */
  async clientInformation(ctx?: { issuer: string }): Promise<(OAuthClientInformationMixed & { issuer?: string }) | undefined> {
    const { config, mode } = this.#deps;
    const stored = this.#stamped(await this.#storedClient());
    // A configured client (and a connection's placeholder) is for the authorization server the server names: bound to it
    // as configured, so that the SDK does not take it for a credential stored without its binding (and warn on stderr).
    const boundHere = ctx === undefined ? {} : { issuer: ctx.issuer };
    if (this.#offersMetadataDocument()) {
      if (stored?.client_id === config.clientMetadataUrl) return stored;
      // Undefined: the SDK takes the document's URL as the client id (and saves it).
      if (mode.kind === 'login') return undefined;
    }
    if (config.clientId !== undefined) {
      return {
        client_id: config.clientId,
        ...boundHere,
        ...(config.clientSecret !== undefined && { client_secret: config.clientSecret }),
        ...(this.#machine && config.tokenEndpointAuthMethod !== undefined && config.tokenEndpointAuthMethod !== 'private_key_jwt' && { token_endpoint_auth_method: config.tokenEndpointAuthMethod }),
      };
    }
    if (mode.kind === 'login') {
      // A registration made for another callback port cannot take this redirect: register again.
      const uris = (stored as { redirect_uris?: unknown } | undefined)?.redirect_uris;
      if (stored !== undefined && (!Array.isArray(uris) || uris.includes(mode.redirectUrl))) return stored;
      this.#logRegistration();
      return undefined;
    }
    // A connection never registers: without a client it goes on to an authorization request that is never sent.
    return stored ?? { client_id: NOT_REGISTERED, ...boundHere };
  }

  /** A registration stored before bindings were recorded, with the binding plinth reads for it (the server of the discovery stored with it). */
  #stamped(client: (OAuthClientInformationMixed & { issuer?: string }) | undefined): (OAuthClientInformationMixed & { issuer?: string }) | undefined {
    if (client === undefined || client.issuer !== undefined || this.#record === undefined) return client;
    const issuer = boundIssuer(this.#record, client);
    return issuer === undefined ? client : { ...client, issuer };
  }

  async saveClientInformation(client: OAuthClientInformationMixed & { issuer?: string }): Promise<void> {
    const { config, mode } = this.#deps;
    if (client.client_id === NOT_REGISTERED) return;
    if (config.clientId !== undefined && client.client_id === config.clientId) return; // configured, not ours to keep
    const issuer = client.issuer ?? this.#discoveredIssuer();
    if (mode.kind === 'login' && issuer !== undefined && heldElsewhere(await this.#current(), issuer)) {
      this.#pendingClient = client;
      return;
    }
    await this.#change((record) => ({ ...record, client }));
  }

  /**
   * The stored registration, where it may be presented: one bound to another
   * authorization server than the one this sign-in discovered is not (SEP-2352;
   * a registration stored before bindings were recorded is bound to the server
   * of the discovery stored with it).
   */
  async #storedClient(): Promise<OAuthClientInformationMixed | undefined> {
    const record = await this.#current();
    if (this.#deps.mode.kind !== 'login') return record?.client;
    if (this.#pendingClient !== undefined) return this.#pendingClient;
    const issuer = this.#discoveredIssuer();
    const bound = record?.client === undefined ? undefined : boundIssuer(record, record.client);
    return issuer !== undefined && bound !== undefined && !sameAuthorizationServer(bound, issuer) ? undefined : record?.client;
  }

  /**
   * The SDK goes on to dynamic registration (RFC 7591), which the 2026-07-28 specification deprecates
   * in favour of Client ID Metadata Documents: said once per sign-in, with what to configure instead.
   */
  #logRegistration(): void {
    if (this.#loggedRegistration) return;
    const { server, config, log } = this.#deps;
    const metadata = (this.#lastDiscovery ?? this.#record?.discovery)?.authorizationServerMetadata;
    if (metadata?.registration_endpoint === undefined) return;
    this.#loggedRegistration = true;
    const accepts = metadata.client_id_metadata_document_supported === true;
    const instead = accepts
      ? config.clientMetadataUrl === undefined
        ? 'its authorization server accepts Client ID Metadata Documents: set "oauth.clientMetadataUrl" to the https URL of plinth\'s document to sign in without registering'
        : 'set "oauth.clientMetadataUrl"'
      : 'its authorization server does not accept Client ID Metadata Documents (client_id_metadata_document_supported); a pre-registered "oauth.clientId" avoids registering';
    log.info(`MCP server "${server.name}": registering plinth dynamically at ${safeLine(metadata.registration_endpoint)} (RFC 7591, deprecated by the MCP specification of 2026-07-28); ${instead}`);
  }

  /** The authorization server this provider's discovery found. */
  #discoveredIssuer(): string | undefined {
    return this.#lastDiscovery === undefined ? undefined : String(this.#lastDiscovery.authorizationServerUrl);
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    if (this.#deps.mode.kind === 'login') return undefined;
    const stored = await this.#current();
    if (stored?.tokens === undefined) return undefined;
    // A machine-to-machine server: never refreshed; an expired token is simply asked for again (the SDK does, on the 401).
    if (this.#machine) return expired(stored) ? undefined : stored.tokens;
    let record: OAuthRecord | undefined = stored;
    if (refreshDue(stored, this.#deps.refresh.skewMs) && refreshable(stored)) {
      try {
        record = this.#remember(await refreshTokens(this.#deps.refresh, stored));
      } catch (error) {
        // Still valid for a while: use it, a later request refreshes.
        if (!(isPlinthError(error) && error.code === 'PLN_E_OAUTH_UNREACHABLE') || expired(stored)) {
          if (isPlinthError(error) && error.code === 'PLN_E_OAUTH_SIGNIN_REQUIRED') this.#forget();
          throw error;
        }
        this.#deps.log.warn(`${error.message}; the current access token is used until it expires`);
      }
    }
    this.#handedOut = record?.tokens;
    if (record?.tokens === undefined || record.tokens.issuer !== undefined) return record?.tokens;
    // Stored before bindings were recorded: bound to the authorization server of the discovery stored with them.
    const issuer = boundIssuer(record, record.tokens);
    return issuer === undefined ? record.tokens : { ...record.tokens, issuer };
  }

  async saveTokens(tokens: OAuthTokens & { issuer?: string }): Promise<void> {
    const { mode } = this.#deps;
    const discovery = this.#lastDiscovery;
    const pending = this.#pendingClient;
    // New tokens from a request signed with a new key are bound to it (a DPoP token_type); a refresh keeps the stored key.
    const newKey = this.#pendingDpop === undefined ? undefined : await this.#pendingDpop;
    const bound = (record: OAuthRecord): OAuthRecord => {
      if (newKey === undefined) return record;
      const { dpop: _old, ...rest } = record;
      return tokens.token_type.toLowerCase() === 'dpop' ? { ...rest, dpop: newKey } : rest;
    };
    this.#pendingDpop = undefined;
    await this.#change((record) => {
      const { challenge: _answered, ...rest } = record;
      if (mode.kind !== 'login') return bound(withTokens(rest, tokens));
      // A sign-in: the record becomes this authorization server's alone (its discovery, its registration, its tokens).
      const { client, discovery: _before, ...others } = rest;
      const issuer = tokens.issuer ?? (discovery === undefined ? undefined : String(discovery.authorizationServerUrl));
      const kept = client !== undefined && (issuer === undefined || sameAuthorizationServer(boundIssuer(record, client) ?? issuer, issuer)) ? client : undefined;
      const registration = pending ?? kept;
      const { dpop: _previousKey, ...unbound } = others;
      return bound(withTokens(
        {
          ...unbound,
          ...(registration !== undefined && { client: registration }),
          ...((discovery ?? record.discovery) !== undefined && { discovery: discovery ?? record.discovery }),
          redirectUrl: mode.redirectUrl,
        },
        tokens,
      ));
    });
    this.#pendingClient = undefined;
    this.#refused = false;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const { mode } = this.#deps;
    if (mode.kind !== 'login') throw await this.#signInNeeded(await this.#keepChallenge(authorizationUrl));
    // The URL comes from the server's metadata: only a web page may be shown to the user.
    if (authorizationUrl.protocol !== 'https:' && authorizationUrl.protocol !== 'http:') {
      throw oauthError('PLN_E_OAUTH_DISCOVERY', this.#deps.server.name, `The authorization endpoint of MCP server "${this.#deps.server.name}" is not a web address (${authorizationUrl.protocol})`);
    }
    await mode.open(authorizationUrl);
  }

  saveCodeVerifier(verifier: string): void {
    if (this.#deps.mode.kind === 'login') this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw oauthError('PLN_E_OAUTH_FAILED', this.#deps.server.name, `No sign-in to MCP server "${this.#deps.server.name}" is in progress in this process`);
    return this.#verifier;
  }

  /**
   * A sign-in discovers afresh, then uses what it found. A connection uses the
   * discovery stored with its sign-in — checked again: one stored before the
   * metadata's issuer was checked and found wrong is discovered again, and when
   * the server refused the tokens handed out (the SDK asks only after a 401 or
   * 403), its protected-resource metadata is read again to see whether it moved
   * to another authorization server (SEP-2352), which needs a new sign-in.
   */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    if (this.#deps.mode.kind === 'login') return this.#lastDiscovery;
    // The SDK asks first thing in every auth(): a good moment to see what other processes stored.
    const record = await this.#current({ reload: true });
    const stored = record?.discovery;
    if (record === undefined || stored === undefined) return this.#lastDiscovery;
    try {
      checkMetadataIssuer(this.#deps.server.name, stored);
    } catch {
      return undefined;
    }
    if (this.#handedOut !== undefined) await this.#checkNotMoved(record, stored);
    return stored;
  }

  /** Throws PLN_E_OAUTH_SIGNIN_REQUIRED when the server's protected-resource metadata no longer names the authorization server of the stored sign-in. */
  async #checkNotMoved(record: OAuthRecord, stored: OAuthDiscoveryState): Promise<void> {
    const { server, refresh } = this.#deps;
    const metadataUrl = this.#challengedMetadataUrl ?? stored.resourceMetadataUrl;
    let listed: string[] | undefined;
    try {
      const metadata = await discoverOAuthProtectedResourceMetadata(server.url, metadataUrl === undefined ? {} : { resourceMetadataUrl: metadataUrl }, refresh.fetch);
      listed = metadata.authorization_servers;
    } catch (error) {
      // A refused address is reported; metadata that cannot be read tells nothing: the stored sign-in goes on as before.
      if (isPlinthError(error)) throw error;
      return;
    }
    const before = boundIssuer(record, record.tokens) ?? String(stored.authorizationServerUrl);
    if (listed === undefined || listed.length === 0 || listed.some((issuer) => sameAuthorizationServer(issuer, before))) return;
    throw movedError(server.name, before, listed[0]!);
  }

  /** What the last discovery of this provider found (undefined before any). */
  get discovered(): OAuthDiscoveryState | undefined {
    return this.#lastDiscovery;
  }

  /**
   * What the SDK discovered, before anything uses it: metadata whose issuer is
   * not the authorization server it was discovered for is refused
   * (PLN_E_OAUTH_ISSUER_MISMATCH). A sign-in stores it with the tokens when the
   * stored sign-in is another authorization server's; a connection whose stored
   * sign-in is another authorization server's needs a new sign-in.
   */
  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    const { mode, server } = this.#deps;
    checkMetadataIssuer(server.name, state);
    this.#lastDiscovery = state;
    if (state.resourceMetadataUrl !== undefined) this.#challengedMetadataUrl = state.resourceMetadataUrl;
    if (state.resourceMetadata?.scopes_supported !== undefined) this.#listedScopes = state.resourceMetadata.scopes_supported.join(' ');
    const record = await this.#current();
    if (mode.kind === 'connection' && record === undefined) return;
    const issuer = String(state.authorizationServerUrl);
    if (heldElsewhere(record, issuer)) {
      if (mode.kind === 'login') return;
      throw movedError(server.name, boundIssuer(record!, record!.tokens ?? record!.client) ?? 'another authorization server', issuer);
    }
    await this.#change((current) => ({ ...current, discovery: state }));
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.#verifier = undefined;
      return;
    }
    const handedOut = this.#handedOut;
    // A connection without a stored sign-in (a machine-to-machine client refused) has nothing to forget, and stores nothing.
    if (this.#deps.mode.kind === 'connection' && (await this.#current()) === undefined) {
      if (scope === 'tokens' || scope === 'all') this.#refused = true;
      return;
    }
    await this.#change((record) => {
      const { client, tokens, expiresAt, obtainedAt, discovery, dpop, ...rest } = record;
      // Another process refreshed since these tokens were handed out: the refusal was of spent tokens.
      const keepTokens = scope === 'tokens' && tokens !== undefined && handedOut !== undefined && tokens.refresh_token !== handedOut.refresh_token;
      if (keepTokens) return record;
      return {
        ...rest,
        ...(scope !== 'all' && scope !== 'client' && client !== undefined && { client }),
        ...(scope !== 'all' && scope !== 'tokens' && tokens !== undefined && { tokens, expiresAt, obtainedAt, ...(dpop !== undefined && { dpop }) }),
        ...(scope !== 'all' && scope !== 'discovery' && discovery !== undefined && { discovery }),
      } as OAuthRecord;
    });
    if (scope === 'tokens' || scope === 'all') this.#refused = true;
  }

  /**
   * Why a connection cannot go on without a sign-in. When the stored record still
   * has a refresh token, the SDK's own refresh failed without the server refusing
   * it (the SDK does not say why): refreshing once more tells "unreachable, tokens
   * kept" from "refused, sign in again".
   */
  async #signInNeeded(challenge: OAuthChallenge): Promise<PlinthError> {
    const name = this.#deps.server.name;
    const record = await this.#current({ reload: true });
    const stepUp = wantsMore(challenge.scope, record?.tokens?.scope);
    if (!this.#refused && !stepUp && refreshable(record)) {
      try {
        this.#remember(await refreshTokens(this.#deps.refresh, record, { force: true }));
        return oauthError('PLN_E_OAUTH_UNREACHABLE', name, `The authorization server of MCP server "${name}" did not answer a moment ago; the sign-in is now refreshed, try again`);
      } catch (error) {
        if (isPlinthError(error)) return error;
        throw error;
      }
    }
    const found = record?.discovery ?? this.#lastDiscovery;
    const noMetadata = found !== undefined && found.resourceMetadata === undefined && found.authorizationServerMetadata === undefined;
    const scope = challenge.scope === undefined ? {} : { scope: challenge.scope };
    if (stepUp) {
      return oauthError('PLN_E_OAUTH_SIGNIN_REQUIRED', name, `MCP server "${name}" asks for more access than was granted (scope "${challenge.scope}"): run \`plinth auth login ${name}\` to sign in again with it`, {
        details: scope,
      });
    }
    const why = this.#refused ? 'its authorization server no longer accepts the saved sign-in' : record?.tokens !== undefined ? 'the server refused the stored access token and it cannot be refreshed' : 'no sign-in is stored for it';
    return oauthError('PLN_E_OAUTH_SIGNIN_REQUIRED', name, `MCP server "${name}" needs you to sign in${this.#refused ? ' again' : ''} (${why}): run \`plinth auth login ${name}\``, {
      // A server of the 2025-03-26 specification publishes no metadata: the sign-in uses the default endpoints at its origin.
      ...(noMetadata && record === undefined && {
        hint: `run \`plinth auth login ${name}\` (it publishes no OAuth metadata, so the default endpoints at its origin are used); if it takes a key in a header instead, check the server's "headers"`,
      }),
      details: scope,
    });
  }

  /**
   * What the server's challenge asked for, from the authorization request the SDK built for it; handed on, and kept with a stored sign-in.
   * A scope the SDK fell back to (the metadata's list, the configured scopes) is no challenge's: it is not kept.
   */
  async #keepChallenge(authorizationUrl: URL): Promise<OAuthChallenge> {
    const asked = authorizationUrl.searchParams.get('scope') ?? undefined;
    const listed = this.#listedScopes ?? this.#record?.discovery?.resourceMetadata?.scopes_supported?.join(' ');
    const scope = asked !== undefined && asked !== listed && asked !== this.#deps.config.scope ? asked : undefined;
    const resourceMetadataUrl = this.#challengedMetadataUrl ?? this.#record?.discovery?.resourceMetadataUrl;
    const challenge: OAuthChallenge = { ...(scope !== undefined && { scope }), ...(resourceMetadataUrl !== undefined && { resourceMetadataUrl }) };
    this.#deps.onChallenge?.(challenge);
    // Another process's `plinth auth login` finds it with the sign-in it extends (a connection without one stores nothing).
    if ((await this.#current()) !== undefined) {
      await this.#change((record) => ({ ...record, challenge: { ...record.challenge, ...challenge } })).catch((error: unknown) => this.#deps.log.debug(`keeping the challenge: ${String(error)}`));
    }
    return challenge;
  }

  /** The authorization server accepts Client ID Metadata Documents and one is configured. */
  #offersMetadataDocument(): boolean {
    const { config } = this.#deps;
    const found = this.#lastDiscovery ?? this.#record?.discovery;
    return !this.#machine && config.clientMetadataUrl !== undefined && found?.authorizationServerMetadata?.client_id_metadata_document_supported === true;
  }

  /** A grant without a browser: client_credentials, or cross-app access's jwt-bearer. */
  get #machine(): boolean {
    return this.#deps.config.grant !== 'authorization_code';
  }

  async #current(options: { reload?: boolean } = {}): Promise<OAuthRecord | undefined> {
    if (options.reload || Date.now() - this.#loadedAt > RELOAD_AFTER_MS) {
      const read = this.#deps.vault.read(this.#deps.server.name);
      // A sign-in starts afresh from a record it cannot read; a connection reports why it cannot.
      this.#remember(this.#deps.mode.kind === 'login' ? await read.catch(() => undefined) : await read);
    }
    return this.#record;
  }

  /** Keeps `record` when it belongs to this server's URL (tokens obtained for another URL are never used). */
  #remember(record: OAuthRecord | undefined): OAuthRecord | undefined {
    this.#record = record?.serverUrl === this.#deps.server.url ? record : undefined;
    this.#loadedAt = Date.now();
    return this.#record;
  }

  #forget(): void {
    this.#record = undefined;
    this.#loadedAt = Number.NEGATIVE_INFINITY;
  }

  /** Changes the stored record under its lock; a record for another URL is started afresh. */
  async #change(change: (record: OAuthRecord) => OAuthRecord): Promise<void> {
    const { name, url } = this.#deps.server;
    const next = await this.#deps.vault.update(
      name,
      async (current) => {
        const base: OAuthRecord = current?.serverUrl === url ? current : { version: 1, server: name, serverUrl: url };
        const record = change(base);
        return { record, result: record };
      },
      { replaceUnreadable: this.#deps.mode.kind === 'login' },
    );
    this.#remember(next);
  }
}

/** `native` for a redirect to this machine (a loopback address or `localhost`) or to an app's own scheme, else `web`. */
function applicationType(redirectUrl: string): 'native' | 'web' {
  const url = URL.parse(redirectUrl);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) return 'native';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host) ? 'native' : 'web';
}

/** Whether `record` holds credentials (a registration, tokens) bound to an authorization server other than `issuer`. */
function heldElsewhere(record: OAuthRecord | undefined, issuer: string): boolean {
  if (record === undefined) return false;
  return [record.client, record.tokens].some((value) => {
    const bound = value === undefined ? undefined : boundIssuer(record, value);
    return bound !== undefined && !sameAuthorizationServer(bound, issuer);
  });
}

/** The server names another authorization server than the one its stored sign-in is from: that sign-in is not sent there. */
function movedError(server: string, before: string, now: string): PlinthError {
  return oauthError(
    'PLN_E_OAUTH_SIGNIN_REQUIRED',
    server,
    `MCP server "${server}" now names authorization server ${safeLine(now)}, but its stored sign-in is from ${safeLine(before)}: sign in again with \`plinth auth login ${server}\` (credentials of one authorization server are never sent to another)`,
    { details: { previousIssuer: before, issuer: now } },
  );
}

/** Whether `asked` (space-separated) names a scope that `granted` lacks: more access than a refresh can give. */
function wantsMore(asked: string | undefined, granted: string | undefined): boolean {
  if (asked === undefined || granted === undefined) return false;
  const have = new Set(granted.split(' ').filter(Boolean));
  return asked.split(' ').some((scope) => scope !== '' && !have.has(scope));
}
