/**
 * A real OAuth 2.1 authorization server and an MCP server protected by bearer
 * tokens, on 127.0.0.1, for the oauth plugin's integration tests. The HTTP side
 * is the MCP SDK's own server-side auth (authorization, token, registration and
 * revocation handlers, bearer middleware); only the in-memory provider behind it
 * is ours. Nobody clicks "allow": the authorization endpoint answers at once
 * with a redirect to the client's redirect URI, which a test follows with
 * {@link OAuthFixture.followAuthorization}.
 *
 * Options reproduce the MCP client conformance scenarios (`auth/…`): a
 * server that protects only its POSTs (`protectGet: false`), lets `initialize`
 * through without a token (`openInitialize`), asks for more scope on
 * `tools/call` (`callScope`: 403 `insufficient_scope`), publishes no metadata
 * at all (`authServerMetadata: 'none'`), accepts Client ID Metadata Documents
 * (`clientMetadataDocuments`) or machine-to-machine clients
 * (`clientCredentials`: the `client_credentials` grant, basic, post or
 * `private_key_jwt`), takes identity assertion grants from a trusted identity
 * provider (`jwtBearer`: RFC 7523, cross-app access; see idp-server.ts), and
 * binds tokens to DPoP keys (`dpop`: RFC 9449 proofs checked at the token
 * endpoint and, with `cnf.jkt` and `ath`, at the MCP server; nonces optional).
 *
 *   const fixture = await startOAuthFixture({ resourceMetadata: 'path' });
 *   // … sign in against fixture.mcpUrl, follow the redirect, call `whoami` …
 *   await fixture.close();
 */
import { type KeyObject, createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
// The authorization server, the bearer middleware and the HTTP+SSE endpoint are the v1 SDK's
// (a legacy server: v2 has no authorization server, and no SSE server transport);
// the MCP server behind them is v2's.
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  InvalidGrantError,
  InvalidScopeError,
  InvalidTargetError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type {
  OAuthClientInformationFull,
  OAuthMetadata,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';

export interface OAuthFixtureOptions {
  /** Lifetime of access tokens; `expires_in` is returned. Default 3600. */
  accessTokenTtlSeconds?: number;
  /** A refresh issues a new refresh token and kills the old one (reusing it: `invalid_grant`). Default true. When false, the refresh response carries no `refresh_token` and the old one stays valid. */
  rotateRefreshTokens?: boolean;
  /** Whether the code exchange returns a refresh token. Default true. */
  issueRefreshTokens?: boolean;
  /** `registration_endpoint` advertised and served (RFC 7591). Default true. */
  dynamicRegistration?: boolean;
  /** A client known before any registration; with a `clientSecret` it is confidential (`client_secret_post`), without one public. */
  preRegistered?: { clientId: string; clientSecret?: string; redirectUris: string[] };
  /** `revocation_endpoint` advertised and served (RFC 7009). Default true. */
  revocation?: boolean;
  /** Scopes the authorization server grants; an authorization request without `scope` gets all of them. Default `['mcp:read', 'mcp:write']`. */
  scopesSupported?: string[];
  /** Space-separated scopes the MCP server requires: put into the 401 `WWW-Authenticate` (and a token without them gets 403 `insufficient_scope`). */
  challengeScope?: string;
  /**
   * Where the protected-resource metadata (RFC 9728) is found. Default `'header'`.
   * - `'header'`: only through `resource_metadata` in the 401 `WWW-Authenticate`; served at a non-well-known path.
   * - `'path'`: `/.well-known/oauth-protected-resource/mcp`, not named in the 401.
   * - `'root'`: `/.well-known/oauth-protected-resource`, not named in the 401; its `resource` is the MCP server's origin.
   * - `'none'`: no metadata at all (the legacy layout: the authorization server is the MCP server's origin).
   */
  resourceMetadata?: 'header' | 'path' | 'root' | 'none';
  /**
   * Where the authorization-server metadata is served, relative to the issuer (`<origin><issuerPath>`). Default `'oauth'`.
   * - `'oauth'`: RFC 8414, `/.well-known/oauth-authorization-server<issuerPath>`.
   * - `'openid'`: OpenID Connect Discovery, appended: `<issuerPath>/.well-known/openid-configuration`.
   * - `'openid-path'`: OpenID, path-inserted: `/.well-known/openid-configuration<issuerPath>`.
   * - `'none'`: no metadata at all: the endpoints are the 2025-03-26 defaults `/authorize`, `/token`, `/register` at the origin (with `resourceMetadata: 'none'`).
   * Without an issuer path the two OpenID forms are the same URL.
   */
  authServerMetadata?: 'oauth' | 'openid' | 'openid-path' | 'none';
  /** The authorization server on its own port, apart from the MCP server. Default false. */
  separateAuthServer?: boolean;
  /** Path of the issuer on the authorization server's origin. Default `'/tenant1'` with `separateAuthServer`, else `''`. Must be `''` with `resourceMetadata: 'none'`. */
  issuerPath?: string;
  /** The user says no: the authorization endpoint redirects with `error=access_denied`. Default false. */
  deny?: boolean;
  /** A refresh is answered only after this long (ms): long enough for several clients to find the same token due. Default 0. */
  refreshDelayMs?: number;
  /** Whether a GET of the MCP endpoint is challenged (401) like a POST. Default true; false: it answers 405 at once, as a server that protects only its POSTs. */
  protectGet?: boolean;
  /** `initialize` and notifications pass without a token; every other request needs one. Default false. */
  openInitialize?: boolean;
  /** Space-separated scopes a `tools/call` needs (a token without them gets 403 `insufficient_scope` naming them): a step-up. */
  callScope?: string;
  /** Client ID Metadata Documents the authorization server "fetches" (keyed by the client id URL; nothing leaves the machine); their presence advertises `client_id_metadata_document_supported`. */
  clientMetadataDocuments?: Record<string, { redirect_uris: string[]; client_name?: string }>;
  /**
   * What the authorization redirect carries as `iss` (RFC 9207), errors included. Default `'none'`.
   * `'right'`: the issuer; `'wrong'`: another authorization server's (`https://attacker.example`); `'none'`: no `iss`.
   */
  iss?: 'right' | 'wrong' | 'none';
  /** The metadata advertises `authorization_response_iss_parameter_supported: true`. Default false. */
  advertiseIss?: boolean;
  /** The `issuer` the authorization-server metadata names, when it is not the server's own (RFC 8414 §3.3 mismatch). */
  metadataIssuer?: string;
  /** The `authorization_servers` of the protected-resource metadata, when they are not this fixture's issuer (a metadata-named address). */
  authorizationServers?: string[];
  /** A machine-to-machine client: the `client_credentials` grant with this client's credentials, checked as `method` says. */
  clientCredentials?: {
    clientId: string;
    method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
    clientSecret?: string;
    /** For `private_key_jwt`: the PEM public key the client assertion (ES256) is verified with. */
    publicKey?: string;
  };
  /**
   * The RFC 7523 `jwt-bearer` grant of cross-app access: an ID-JAG (`typ` `oauth-id-jag+jwt`, ES256) issued by
   * the trusted identity provider `idpIssuer` (verified with `idpPublicKey`) for this authorization server
   * (`aud`), this MCP server (`resource`) and the client `clientId` (`client_id`), presented by that client
   * authenticated with `clientSecret` (basic or post). The token is the assertion's `sub`'s (`whoami` says so).
   */
  jwtBearer?: { idpIssuer: string; idpPublicKey: KeyObject; clientId: string; clientSecret: string };
  /**
   * DPoP (RFC 9449): every token request needs a valid proof, and its tokens are bound to the proof's key
   * (`token_type: DPoP`, `cnf.jkt`); the MCP server takes such a token only as `Authorization: DPoP` with a
   * proof of that key for the request (`htm`, `htu`, `ath`). `advertise` (default true) puts
   * `dpop_signing_alg_values_supported` into the authorization-server metadata; the protected-resource
   * metadata says `dpop_bound_access_tokens_required`. `nonce`: both servers first answer a proof without
   * their current nonce with a `use_dpop_nonce` challenge. `challengeOnly`: neither metadata document says
   * anything about DPoP; only the MCP server's 401 to a request without a token adds a `DPoP` challenge.
   * `optional`: an authorization server that supports DPoP for resources that want it, in front of one that
   * does not say so (its metadata silent) and takes Bearer tokens: a token request without a proof gets a
   * Bearer token.
   */
  dpop?: { advertise?: boolean; nonce?: boolean; challengeOnly?: boolean; optional?: boolean };
  /**
   * Which protocol era the MCP endpoint speaks (the authorization in front of it is the same). Default `'legacy'`:
   * 2025-11-25, stateless streamable HTTP. `'dual'`: the v2 SDK's `createMcpHandler`, 2026-07-28 and the stateless
   * 2025 fallback; `'modern'`: 2026-07-28 only (`legacy: 'reject'`).
   */
  era?: 'legacy' | 'dual' | 'modern';
}

/** One proof as the token endpoint or the MCP server checked it. */
export interface DpopRecord {
  readonly where: 'token' | 'resource';
  /** The proof's key thumbprint, when the proof was readable. */
  readonly jkt?: string;
  /** `ok`, or why it was refused (`use_dpop_nonce`, `invalid_dpop_proof`, `wrong key`, `bearer`). */
  readonly outcome: string;
}

/** One `jwt-bearer` token request as it arrived (never the assertion). */
export interface JwtBearerRecord {
  readonly clientId?: string;
  readonly accepted: boolean;
  /** Why it was refused. */
  readonly error?: string;
  readonly subject?: string;
  readonly scope?: string;
}

/** One `client_credentials` token request as it arrived (never the secret). */
export interface ClientCredentialsRecord {
  readonly clientId?: string;
  /** How the client authenticated: `client_secret_basic`, `client_secret_post`, `private_key_jwt`, or `none` found. */
  readonly method: string;
  readonly accepted: boolean;
  readonly scope?: string;
  readonly resource?: string;
}

/** Requests as they arrived; those dropped by {@link OAuthFixture.setDown} are not counted. */
export interface OAuthFixtureCounters {
  /** Requests to the authorization endpoint. */
  authorize: number;
  /** Requests to the token endpoint, any grant. */
  token: number;
  /** Token requests with `grant_type=refresh_token`. */
  refresh: number;
  /** Requests to the registration endpoint. */
  register: number;
  /** Requests to the revocation endpoint. */
  revoke: number;
  /** Requests to the MCP endpoint, authorized or not. */
  mcpRequests: number;
  /** 401 answers of the MCP endpoint. */
  unauthorized: number;
  /** Requests for every URL with a `/.well-known/` part and for the header-only metadata URL, found or not, keyed by full URL without query (`http://127.0.0.1:PORT/.well-known/…`). */
  metadataRequests: Record<string, number>;
}

/** One request that reached the provider's `authorize` (what the client asked for). */
export interface AuthorizationRecord {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  readonly resource?: string;
  readonly state?: string;
}

export interface RegisteredClient {
  readonly client_id: string;
  readonly client_secret?: string;
  readonly redirect_uris: readonly string[];
}

export interface OAuthFixture {
  /** The protected MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  readonly mcpUrl: string;
  /** The same server over the older HTTP+SSE transport, `…/mcp/sse` (under the resource's path, so the same tokens apply). */
  readonly sseUrl: string;
  /** The authorization server's issuer identifier, `http://127.0.0.1:PORT[/issuerPath]`. */
  readonly issuer: string;
  /** The resource indicator tokens are bound to (the protected-resource metadata's `resource`); undefined with `resourceMetadata: 'none'`. */
  readonly resource: string | undefined;
  /** Where the protected-resource metadata is served; undefined with `resourceMetadata: 'none'`. */
  readonly resourceMetadataUrl: string | undefined;
  /** Where the authorization-server metadata is served. */
  readonly authServerMetadataUrl: string;
  readonly endpoints: {
    readonly authorization: string;
    readonly token: string;
    readonly registration?: string;
    readonly revocation?: string;
  };
  readonly counters: OAuthFixtureCounters;
  /** Every PKCE code verifier presented at the token endpoint, in order (for scans of what a client prints). */
  readonly verifiers: readonly string[];
  /** Every token presented at the revocation endpoint by an authenticated client, in order. */
  readonly revoked: readonly string[];
  /** Every authorization request that reached the provider, in order. */
  readonly authorizations: readonly AuthorizationRecord[];
  /** Every `client_credentials` token request, in order. */
  readonly clientCredentialRequests: readonly ClientCredentialsRecord[];
  /** Every `jwt-bearer` token request, in order. */
  readonly jwtBearerRequests: readonly JwtBearerRecord[];
  /** Every DPoP proof checked (with `dpop`), in order. */
  readonly dpopProofs: readonly DpopRecord[];
  /** Every access and refresh token ever issued, so a test can scan output for them. */
  issuedTokens(): { access: string[]; refresh: string[] };
  /** The pre-registered client (first) and every dynamically registered one, with their secrets. */
  registeredClients(): RegisteredClient[];
  /** Every access token issued so far fails verification from now on (401 `invalid_token`); later ones are fine. */
  expireAccessTokens(): void;
  /** Every refresh token issued so far is dead: the next refresh answers `invalid_grant`. */
  revokeAllRefreshTokens(): void;
  /**
   * The authorization server stops answering: with `separateAuthServer` its listening socket is
   * closed (connection refused) and the MCP server stays up; on a shared origin every request to
   * an authorization-server URL has its connection destroyed while the MCP server still answers.
   * `setDown(false)` brings it back on the same port.
   */
  setDown(down: boolean): Promise<void>;
  /** What a browser does: GET the authorization URL without following the redirect, and return the `Location` (the callback URL with `code` and `state`, or `error`). */
  followAuthorization(url: string | URL): Promise<URL>;
  /** Every dynamic registration request's body as it arrived (before the SDK's handler drops unknown fields such as `application_type`). */
  readonly registrationRequests: readonly Record<string, unknown>[];
  /**
   * The MCP server moves to another authorization server (SEP-2352): a second one starts on its own port
   * (issuer `http://127.0.0.1:PORT/moved`, its own clients and tokens), the protected-resource metadata names
   * only it, and the MCP server accepts only its tokens from now on.
   */
  moveAuthServer(): Promise<MovedAuthServer>;
  /** Closes every server and connection. */
  close(): Promise<void>;
}

/** The authorization server a fixture moved to. */
export interface MovedAuthServer {
  readonly issuer: string;
  readonly counters: { register: number; authorize: number; token: number };
  /** Every client id presented to it (authorization and token requests), in order. */
  readonly clientIds: readonly string[];
}

const MCP_PATH = '/mcp';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** The 'header' layout serves its metadata here, where no well-known probe finds it. */
const HEADER_ONLY_METADATA_PATH = '/meta/protected-resource';
const CODE_TTL_SECONDS = 600;

const newToken = (): string => randomBytes(32).toString('base64url');
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** RFC 8707 identifiers compared the way the SDK's bearer middleware does: fragment and one trailing slash aside. */
function sameResource(a: string | URL, b: string | URL): boolean {
  const comparable = (value: string | URL): string => String(value).replace(/#.*$/, '').replace(/\/$/, '');
  return comparable(a) === comparable(b);
}

interface Settings {
  /** The issuer an `iss` in the redirect names ('right'), undefined for none. */
  iss: string | undefined;
  readonly ttl: number;
  readonly rotate: boolean;
  readonly issueRefresh: boolean;
  readonly scopes: readonly string[];
  readonly deny: boolean;
  /** The resource indicator tokens must be bound to; undefined when there is no protected-resource metadata. */
  resource: string | undefined;
}

interface CodeGrant {
  readonly clientId: string;
  readonly challenge: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  readonly resource?: string;
  readonly expiresAt: number;
}

interface AccessGrant {
  /** The DPoP key thumbprint the token is bound to (`cnf.jkt`). */
  jkt?: string;
  /** The user an identity assertion grant was for. */
  readonly subject?: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly resource?: string;
  /** Tokens born of one authorization share a grant, so revoking its refresh token kills its access tokens too. */
  readonly grant: number;
  expiresAt: number;
  revoked: boolean;
}

interface RefreshGrant {
  jkt?: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly resource?: string;
  readonly grant: number;
  dead?: 'rotated' | 'revoked';
}

/** The in-memory authorization server behind the SDK's handlers; also the MCP server's token verifier. */
class FixtureProvider implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  /** Client ID Metadata Documents, by client id URL. */
  readonly documents = new Map<string, { redirect_uris: string[]; client_name?: string }>();
  readonly codes = new Map<string, CodeGrant>();
  readonly access = new Map<string, AccessGrant>();
  readonly refresh = new Map<string, RefreshGrant>();
  readonly revoked: string[] = [];
  readonly authorizations: AuthorizationRecord[] = [];
  readonly clientsStore: OAuthRegisteredClientsStore;
  #grants = 0;

  constructor(
    private readonly settings: Settings,
    dynamicRegistration: boolean,
  ) {
    const getClient = (clientId: string): OAuthClientInformationFull | undefined => {
      const document = this.documents.get(clientId);
      // A URL client id: the client is what its metadata document says (a public client).
      if (document !== undefined) return { client_id: clientId, ...document, token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] };
      return this.clients.get(clientId);
    };
    const registerClient = (client: OAuthClientInformationFull): OAuthClientInformationFull => {
      this.clients.set(client.client_id, client);
      return client;
    };
    // Without registerClient the SDK treats registration as unsupported.
    this.clientsStore = dynamicRegistration ? { getClient, registerClient } : { getClient };
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const resource = params.resource?.href;
    this.authorizations.push({
      clientId: client.client_id,
      redirectUri: params.redirectUri,
      scopes: params.scopes ?? [],
      ...(resource === undefined ? {} : { resource }),
      ...(params.state === undefined ? {} : { state: params.state }),
    });
    const target = new URL(params.redirectUri);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    if (this.settings.iss !== undefined) target.searchParams.set('iss', this.settings.iss);
    if (this.settings.deny) {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The user declined the authorization request');
      res.redirect(302, target.href);
      return;
    }
    const unknown = (params.scopes ?? []).filter((scope) => !this.settings.scopes.includes(scope));
    // Thrown OAuth errors become an error redirect in the SDK's handler.
    if (unknown.length > 0) throw new InvalidScopeError(`Unknown scope: ${unknown.join(' ')}`);
    this.#checkResource(resource);
    const scopes = params.scopes && params.scopes.length > 0 ? params.scopes : [...this.settings.scopes];
    const code = newToken();
    this.codes.set(code, {
      clientId: client.client_id,
      challenge: params.codeChallenge,
      redirectUri: params.redirectUri,
      scopes,
      ...(resource === undefined ? {} : { resource }),
      expiresAt: nowSeconds() + CODE_TTL_SECONDS,
    });
    target.searchParams.set('code', code);
    res.redirect(302, target.href);
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string): Promise<string> {
    return this.#code(client, authorizationCode).challenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    authorizationCode: string,
    _codeVerifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    // The SDK's token handler has already checked the PKCE verifier against the stored challenge.
    const code = this.#code(client, authorizationCode);
    this.codes.delete(authorizationCode);
    if (redirectUri !== undefined && redirectUri !== code.redirectUri) {
      throw new InvalidGrantError('redirect_uri differs from the one in the authorization request');
    }
    if (resource !== undefined && code.resource !== undefined && !sameResource(resource, code.resource)) {
      throw new InvalidTargetError('resource differs from the one in the authorization request');
    }
    const boundTo = code.resource ?? resource?.href;
    this.#checkResource(boundTo);
    const grant = ++this.#grants;
    const tokens = this.#issueAccess(client.client_id, code.scopes, boundTo, grant);
    if (!this.settings.issueRefresh) return tokens;
    return { ...tokens, refresh_token: this.#issueRefresh(client.client_id, code.scopes, boundTo, grant) };
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    const grant = this.refresh.get(refreshToken);
    if (grant === undefined || grant.clientId !== client.client_id) {
      throw new InvalidGrantError('Unknown refresh token');
    }
    if (grant.dead !== undefined) throw new InvalidGrantError(`The refresh token was ${grant.dead}`);
    if (resource !== undefined && grant.resource !== undefined && !sameResource(resource, grant.resource)) {
      throw new InvalidTargetError('resource differs from the one the refresh token was issued for');
    }
    const narrowed = scopes ?? [...grant.scopes];
    const widened = narrowed.filter((scope) => !grant.scopes.includes(scope));
    if (widened.length > 0) throw new InvalidScopeError(`Scope not granted before: ${widened.join(' ')}`);
    const tokens = this.#issueAccess(client.client_id, narrowed, grant.resource, grant.grant);
    if (!this.settings.rotate) return tokens;
    grant.dead = 'rotated';
    return { ...tokens, refresh_token: this.#issueRefresh(client.client_id, grant.scopes, grant.resource, grant.grant) };
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const grant = this.access.get(token);
    if (grant === undefined) throw new InvalidTokenError('Unknown access token');
    if (grant.revoked) throw new InvalidTokenError('The access token was revoked');
    if (grant.expiresAt <= nowSeconds()) throw new InvalidTokenError('The access token has expired');
    return {
      token,
      clientId: grant.clientId,
      scopes: [...grant.scopes],
      expiresAt: grant.expiresAt,
      ...(grant.resource === undefined ? {} : { resource: new URL(grant.resource) }),
      extra: { ...(grant.jkt === undefined ? {} : { jkt: grant.jkt }), ...(grant.subject === undefined ? {} : { subject: grant.subject }) },
    };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    this.revoked.push(request.token);
    // RFC 7009: a token that is unknown or another client's is answered 200 all the same, and left alone.
    const access = this.access.get(request.token);
    if (access?.clientId === client.client_id) access.revoked = true;
    const refresh = this.refresh.get(request.token);
    if (refresh?.clientId === client.client_id) {
      refresh.dead = 'revoked';
      for (const grant of this.access.values()) if (grant.grant === refresh.grant) grant.revoked = true;
    }
  }

  #code(client: OAuthClientInformationFull, authorizationCode: string): CodeGrant {
    const code = this.codes.get(authorizationCode);
    if (code === undefined || code.clientId !== client.client_id) {
      throw new InvalidGrantError('Unknown or already used authorization code');
    }
    if (code.expiresAt <= nowSeconds()) throw new InvalidGrantError('The authorization code has expired');
    return code;
  }

  /** A token must be for this MCP server when the server publishes a resource identifier (RFC 8707). */
  #checkResource(resource: string | undefined): void {
    const expected = this.settings.resource;
    if (resource !== undefined && (expected === undefined || !sameResource(resource, expected))) {
      throw new InvalidTargetError(`This authorization server issues no tokens for ${resource}`);
    }
  }

  /** Access for a machine-to-machine client: no refresh token, as RFC 6749 §4.4.3 advises. */
  issueClientCredentials(clientId: string, scopes: readonly string[], resource: string | undefined, subject?: string): OAuthTokens {
    this.#checkResource(resource);
    return this.#issueAccess(clientId, scopes, resource ?? this.settings.resource, ++this.#grants, subject);
  }

  #issueAccess(clientId: string, scopes: readonly string[], resource: string | undefined, grant: number, subject?: string): OAuthTokens {
    const token = newToken();
    this.access.set(token, {
      ...(subject === undefined ? {} : { subject }),
      clientId,
      scopes,
      ...(resource === undefined ? {} : { resource }),
      grant,
      expiresAt: nowSeconds() + this.settings.ttl,
      revoked: false,
    });
    return { access_token: token, token_type: 'Bearer', expires_in: this.settings.ttl, scope: scopes.join(' ') };
  }

  #issueRefresh(clientId: string, scopes: readonly string[], resource: string | undefined, grant: number): string {
    const token = newToken();
    this.refresh.set(token, { clientId, scopes, ...(resource === undefined ? {} : { resource }), grant });
    return token;
  }
}

/** An MCP server for one request (stateless streamable HTTP): `whoami` tells who the token belongs to, `echo` echoes. */
function createMcpServer(): McpServer {
  const server = new McpServer({ name: 'oauth-fixture', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'The client id, scopes and resource of the access token this call carried (never the token).' },
    async (ctx) => {
      const auth = ctx.http?.authInfo;
      if (auth === undefined) return { isError: true, content: [{ type: 'text', text: 'no access token' }] };
      const text = JSON.stringify({ clientId: auth.clientId, scopes: auth.scopes, resource: auth.resource?.href, ...auth.extra });
      return { content: [{ type: 'text', text }] };
    },
  );
  server.registerTool(
    'echo',
    { description: 'Returns its input.', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

async function handleMcp(req: Request, res: Response): Promise<void> {
  // Stateless: no session, so no GET stream to offer and nothing to DELETE.
  if (req.method !== 'POST') {
    res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    return;
  }
  const server = createMcpServer();
  const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    if (!res.headersSent) {
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: String(error) }, id: null });
    }
  }
}

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function stop(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Keep-alive connections would hold close() open, and keep answering a "down" server.
    server.closeAllConnections();
  });
}

function countMetadata(counters: OAuthFixtureCounters, origin: string) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    // includes, not startsWith: OpenID's appended form puts the well-known part after the issuer path.
    if (req.path.includes('/.well-known/') || req.path === HEADER_ONLY_METADATA_PATH) {
      const url = origin + req.path;
      counters.metadataRequests[url] = (counters.metadataRequests[url] ?? 0) + 1;
    }
    next();
  };
}

function count(increment: () => void) {
  return (_req: Request, _res: Response, next: NextFunction): void => {
    increment();
    next();
  };
}

/** The authorization-server metadata document, RFC 8414 or (with the fields OpenID requires) OpenID Connect Discovery. */
function authServerMetadata(
  issuer: string,
  endpoints: OAuthFixture['endpoints'],
  scopes: readonly string[],
  refresh: boolean,
  openid: boolean,
  extra: { cimd: boolean; advertiseIss: boolean; clientCredentials?: NonNullable<OAuthFixtureOptions['clientCredentials']>['method']; jwtBearer?: boolean; dpop?: boolean },
): OAuthMetadata {
  const machine = extra.clientCredentials ?? (extra.jwtBearer ? 'client_secret_basic' : undefined);
  return {
    issuer,
    authorization_endpoint: endpoints.authorization,
    token_endpoint: endpoints.token,
    ...(endpoints.registration === undefined ? {} : { registration_endpoint: endpoints.registration }),
    ...(endpoints.revocation === undefined
      ? {}
      : { revocation_endpoint: endpoints.revocation, revocation_endpoint_auth_methods_supported: ['client_secret_post', 'none'] }),
    response_types_supported: ['code'],
    grant_types_supported: [
      ...(refresh ? ['authorization_code', 'refresh_token'] : ['authorization_code']),
      ...(extra.clientCredentials ? ['client_credentials'] : []),
      ...(extra.jwtBearer ? [JWT_BEARER] : []),
    ],
    code_challenge_methods_supported: ['S256'],
    // The SDK's client authentication middleware reads credentials from the body only: no client_secret_basic (but the client_credentials handler here does).
    token_endpoint_auth_methods_supported: machine ? [machine] : ['client_secret_post', 'none'],
    ...(machine === 'private_key_jwt' ? { token_endpoint_auth_signing_alg_values_supported: ['ES256'] } : {}),
    ...(extra.cimd ? { client_id_metadata_document_supported: true } : {}),
    ...(extra.advertiseIss ? { authorization_response_iss_parameter_supported: true } : {}),
    ...(extra.dpop ? { dpop_signing_alg_values_supported: ['ES256', 'ES384', 'EdDSA'] } : {}),
    scopes_supported: [...scopes],
    ...(openid
      ? { jwks_uri: `${issuer}/jwks`, subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] }
      : {}),
  };
}

export async function startOAuthFixture(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const prmLayout = options.resourceMetadata ?? 'header';
  const asLayout = options.authServerMetadata ?? 'oauth';
  const separate = options.separateAuthServer ?? false;
  const issuerPath = (options.issuerPath ?? (separate ? '/tenant1' : '')).replace(/\/$/, '');
  if (asLayout === 'none' && prmLayout !== 'none') throw new Error("authServerMetadata 'none' is the 2025-03-26 layout: resourceMetadata 'none' too");
  if (prmLayout === 'none' && (separate || issuerPath !== '')) {
    throw new Error("resourceMetadata 'none' means the MCP server's origin is the authorization server: no separateAuthServer, no issuerPath");
  }
  if (issuerPath !== '' && !issuerPath.startsWith('/')) throw new Error(`issuerPath must start with '/': ${issuerPath}`);

  const counters: OAuthFixtureCounters = {
    authorize: 0,
    token: 0,
    refresh: 0,
    register: 0,
    revoke: 0,
    mcpRequests: 0,
    unauthorized: 0,
    metadataRequests: {},
  };
  const settings: Settings = {
    iss: undefined,
    ttl: options.accessTokenTtlSeconds ?? 3600,
    rotate: options.rotateRefreshTokens ?? true,
    issueRefresh: options.issueRefreshTokens ?? true,
    scopes: options.scopesSupported ?? ['mcp:read', 'mcp:write'],
    deny: options.deny ?? false,
    resource: undefined,
  };
  const dynamicRegistration = options.dynamicRegistration ?? true;
  const revocation = options.revocation ?? true;
  const provider = new FixtureProvider(settings, dynamicRegistration);
  for (const [url, document] of Object.entries(options.clientMetadataDocuments ?? {})) provider.documents.set(url, document);
  const clientCredentialRequests: ClientCredentialsRecord[] = [];
  const jwtBearerRequests: JwtBearerRecord[] = [];
  const dpopProofs: DpopRecord[] = [];
  /** The current DPoP nonces of the token endpoint and the MCP server (with `dpop.nonce`). */
  const nonces = { token: newToken(), resource: newToken() };
  const seenJtis = new Set<string>();
  const pre = options.preRegistered;
  if (pre !== undefined) {
    provider.clients.set(pre.clientId, {
      client_id: pre.clientId,
      ...(pre.clientSecret === undefined ? {} : { client_secret: pre.clientSecret }),
      redirect_uris: [...pre.redirectUris],
      token_endpoint_auth_method: pre.clientSecret === undefined ? 'none' : 'client_secret_post',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
  }

  // Listen first: every URL in the metadata names the port.
  const mcpServer = createServer();
  const authServer = separate ? createServer() : mcpServer;
  const servers = separate ? [mcpServer, authServer] : [mcpServer];
  const mcpPort = await listen(mcpServer);
  const authPort = separate ? await listen(authServer) : mcpPort;
  const mcpOrigin = `http://127.0.0.1:${mcpPort}`;
  const authOrigin = `http://127.0.0.1:${authPort}`;
  const issuer = authOrigin + issuerPath;
  const mcpUrl = mcpOrigin + MCP_PATH;
  settings.iss = { right: issuer, wrong: 'https://attacker.example', none: undefined }[options.iss ?? 'none'];

  const resource = prmLayout === 'none' ? undefined : prmLayout === 'root' ? mcpOrigin : mcpUrl;
  settings.resource = resource;
  const prmPath = {
    header: HEADER_ONLY_METADATA_PATH,
    path: `/.well-known/oauth-protected-resource${MCP_PATH}`,
    root: '/.well-known/oauth-protected-resource',
    none: undefined,
  }[prmLayout];
  const asMetadataPath = {
    oauth: `/.well-known/oauth-authorization-server${issuerPath}`,
    openid: `${issuerPath}/.well-known/openid-configuration`,
    'openid-path': `/.well-known/openid-configuration${issuerPath}`,
    none: '/.well-known/oauth-authorization-server',
  }[asLayout];
  const endpoints: OAuthFixture['endpoints'] = {
    authorization: `${issuer}/authorize`,
    token: `${issuer}/token`,
    ...(dynamicRegistration ? { registration: `${issuer}/register` } : {}),
    ...(revocation ? { revocation: `${issuer}/revoke` } : {}),
  };
  const resourceMetadataUrl = prmPath === undefined ? undefined : mcpOrigin + prmPath;
  const authServerMetadataUrl = authOrigin + asMetadataPath;

  let down = false;
  const authPaths = new Set([
    asMetadataPath,
    ...Object.values(endpoints).map((url) => new URL(url).pathname),
    `${issuerPath}/jwks`,
  ]);
  const mcpApp: Express = express();
  const authApp: Express = separate ? express() : mcpApp;
  if (!separate) {
    // One origin: "down" has to be selective, so the MCP server can still answer.
    mcpApp.use((req, _res, next) => {
      if (down && authPaths.has(req.path)) req.socket.destroy();
      else next();
    });
  }
  mcpApp.use(countMetadata(counters, mcpOrigin));
  if (separate) authApp.use(countMetadata(counters, authOrigin));

  /** The `client_credentials` grant (the SDK's token handler has none): the client authenticated as configured, or 401 `invalid_client`. */
  const clientCredentialsGrant = (req: Request, res: Response): void => {
    const body = req.body as Record<string, string | undefined>;
    const expected = options.clientCredentials;
    const { clientId, method, valid } = authenticateClient(req, body, expected, [issuer, `${issuer}/`, endpoints.token]);
    const accepted = expected !== undefined && valid && clientId === expected.clientId && method === expected.method;
    clientCredentialRequests.push({
      ...(clientId === undefined ? {} : { clientId }),
      method,
      accepted,
      ...(body.scope === undefined ? {} : { scope: body.scope }),
      ...(body.resource === undefined ? {} : { resource: body.resource }),
    });
    if (!accepted) {
      res.status(401).json({ error: 'invalid_client', error_description: `client authentication failed (${method})` });
      return;
    }
    try {
      const scopes = body.scope ? body.scope.split(' ') : [...settings.scopes];
      res.json(provider.issueClientCredentials(clientId!, scopes, body.resource));
    } catch (error) {
      res.status(400).json({ error: 'invalid_target', error_description: String(error) });
    }
  };

  /** The `jwt-bearer` grant (RFC 7523) of cross-app access: the client, then the ID-JAG, checked as `jwtBearer` says. */
  const jwtBearerGrant = (req: Request, res: Response): void => {
    const body = req.body as Record<string, string | undefined>;
    const expected = options.jwtBearer;
    const refuse = (status: number, error: string, clientId?: string): void => {
      jwtBearerRequests.push({ ...(clientId === undefined ? {} : { clientId }), accepted: false, error });
      res.status(status).json({ error: status === 401 ? 'invalid_client' : 'invalid_grant', error_description: error });
    };
    if (expected === undefined) return refuse(400, 'this authorization server takes no jwt-bearer grant');
    const { clientId, valid } = authenticateClient(req, body, { clientId: expected.clientId, method: 'client_secret_basic', clientSecret: expected.clientSecret }, []);
    if (!valid || clientId !== expected.clientId) return refuse(401, 'client authentication failed', clientId);
    const claims = body.assertion === undefined ? undefined : verifiedJwt(body.assertion, expected.idpPublicKey, 'oauth-id-jag+jwt');
    if (claims === undefined) return refuse(400, 'the assertion is not an ID-JAG signed by the trusted identity provider', clientId);
    const audience = [claims.aud].flat();
    if (claims.iss !== expected.idpIssuer) return refuse(400, 'the ID-JAG is from another issuer', clientId);
    if (!audience.some((aud) => aud === issuer || aud === `${issuer}/`)) return refuse(400, 'the ID-JAG is for another audience', clientId);
    if (claims.client_id !== clientId) return refuse(400, 'the ID-JAG is for another client', clientId);
    if (typeof claims.resource !== 'string' || settings.resource === undefined || !sameResource(claims.resource, settings.resource)) return refuse(400, 'the ID-JAG is for another resource', clientId);
    if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds()) return refuse(400, 'the ID-JAG has expired', clientId);
    if (typeof claims.jti !== 'string' || seenJtis.has(claims.jti)) return refuse(400, 'the ID-JAG was used before', clientId);
    seenJtis.add(claims.jti);
    const scope = body.scope ?? (typeof claims.scope === 'string' ? claims.scope : undefined);
    const scopes = scope ? scope.split(' ') : [...settings.scopes];
    const subject = String(claims.sub);
    jwtBearerRequests.push({ clientId: clientId!, accepted: true, subject, ...(scope === undefined ? {} : { scope }) });
    res.json(provider.issueClientCredentials(clientId!, scopes, settings.resource, subject));
  };

  /**
   * DPoP at the token endpoint: a valid proof of a key for this request (and the current nonce, with
   * `dpop.nonce`), a refresh token presented with the key it is bound to; the tokens the request
   * gets are bound to that key (the answer is rewritten on its way out: `token_type: DPoP`).
   */
  const dpopAtToken = (req: Request, res: Response, next: NextFunction): void => {
    if (options.dpop === undefined || (options.dpop.optional && req.headers.dpop === undefined)) return next();
    const checked = checkDpopProof(req.headers.dpop, { htm: 'POST', htu: endpoints.token, ...(options.dpop.nonce ? { nonce: nonces.token } : {}) }, seenJtis);
    dpopProofs.push({ where: 'token', ...(checked.jkt === undefined ? {} : { jkt: checked.jkt }), outcome: checked.error ?? 'ok' });
    if (checked.error === 'use_dpop_nonce') {
      res.status(400).set('DPoP-Nonce', nonces.token).json({ error: 'use_dpop_nonce', error_description: 'Authorization server requires nonce in DPoP proof' });
      return;
    }
    if (checked.error !== undefined) {
      res.status(400).json({ error: 'invalid_dpop_proof', error_description: checked.error });
      return;
    }
    const body = req.body as Record<string, string | undefined>;
    const presented = body.grant_type === 'refresh_token' && body.refresh_token !== undefined ? provider.refresh.get(body.refresh_token) : undefined;
    if (presented?.jkt !== undefined && presented.jkt !== checked.jkt) {
      res.status(400).json({ error: 'invalid_grant', error_description: 'the refresh token is bound to another DPoP key' });
      return;
    }
    const json = res.json.bind(res);
    res.json = (answer: unknown) => {
      const tokens = answer as { access_token?: unknown; refresh_token?: unknown; token_type?: unknown } | undefined;
      if (typeof tokens?.access_token === 'string') {
        const access = provider.access.get(tokens.access_token);
        if (access !== undefined) access.jkt = checked.jkt;
        if (typeof tokens.refresh_token === 'string') {
          const refresh = provider.refresh.get(tokens.refresh_token);
          if (refresh !== undefined) refresh.jkt = checked.jkt;
        }
        return json({ ...tokens, token_type: 'DPoP' });
      }
      return json(answer);
    };
    next();
  };

  const noLimit = { rateLimit: false } as const;
  const verifiers: string[] = [];
  const extra = {
    cimd: options.clientMetadataDocuments !== undefined,
    advertiseIss: options.advertiseIss ?? false,
    ...(options.clientCredentials ? { clientCredentials: options.clientCredentials.method } : {}),
    ...(options.jwtBearer ? { jwtBearer: true } : {}),
    ...(options.dpop !== undefined && options.dpop.advertise !== false && !options.dpop.challengeOnly ? { dpop: true } : {}),
  };
  if (asLayout !== 'none') {
    const metadata = authServerMetadata(issuer, endpoints, settings.scopes, settings.issueRefresh, asLayout !== 'oauth', extra);
    authApp.use(asMetadataPath, metadataHandler({ ...metadata, issuer: options.metadataIssuer ?? issuer }));
  }
  const registrationRequests: Record<string, unknown>[] = [];
  if (asLayout === 'openid' || asLayout === 'openid-path') authApp.get(`${issuerPath}/jwks`, (_req, res) => void res.json({ keys: [] }));
  authApp.use(`${issuerPath}/authorize`, count(() => counters.authorize++), authorizationHandler({ provider, ...noLimit }));
  authApp.use(
    `${issuerPath}/token`,
    count(() => counters.token++),
    express.urlencoded({ extended: false }),
    dpopAtToken,
    (req, _res, next) => {
      const body = req.body as { grant_type?: unknown; code_verifier?: unknown } | undefined;
      if (typeof body?.code_verifier === 'string') verifiers.push(body.code_verifier);
      if (body?.grant_type === 'client_credentials') return void clientCredentialsGrant(req, _res);
      if (body?.grant_type === JWT_BEARER) return void jwtBearerGrant(req, _res);
      if (body?.grant_type !== 'refresh_token') return next();
      counters.refresh++;
      setTimeout(next, options.refreshDelayMs ?? 0);
    },
    tokenHandler({ provider, ...noLimit }),
  );
  if (dynamicRegistration) {
    authApp.use(
      `${issuerPath}/register`,
      count(() => counters.register++),
      express.json(),
      (req, _res, next) => {
        if (req.method === 'POST') registrationRequests.push({ ...(req.body as Record<string, unknown>) });
        next();
      },
      clientRegistrationHandler({ clientsStore: provider.clientsStore, ...noLimit }),
    );
  }
  if (revocation) {
    authApp.use(`${issuerPath}/revoke`, count(() => counters.revoke++), revocationHandler({ provider, ...noLimit }));
  }

  const protectedResource = (servers: string[]) =>
    metadataHandler({
      resource: resource!,
      authorization_servers: servers,
      scopes_supported: [...settings.scopes],
      bearer_methods_supported: ['header'],
      resource_name: 'plinth oauth fixture',
      ...(options.dpop === undefined || options.dpop.challengeOnly || options.dpop.optional ? {} : { dpop_bound_access_tokens_required: true, dpop_signing_alg_values_supported: ['ES256', 'ES384', 'EdDSA'] }),
    } as Parameters<typeof metadataHandler>[0]);
  let prmHandler = protectedResource(options.authorizationServers ?? [issuer]);
  if (prmPath !== undefined && resource !== undefined) mcpApp.use(prmPath, (req, res, next) => prmHandler(req, res, next));
  /** Verifies tokens: this fixture's authorization server's, or after a move the new one's only. */
  let verifier: OAuthServerProvider = provider;
  const currentVerifier = { verifyAccessToken: (token: string) => verifier.verifyAccessToken(token) };
  let moved: { server: Server; info: MovedAuthServer } | undefined;
  const countMcp = (_req: Request, res: Response, next: () => void): void => {
    counters.mcpRequests++;
    res.on('finish', () => {
      if (res.statusCode === 401) counters.unauthorized++;
    });
    next();
  };
  const bearer = requireBearerAuth({
    verifier: currentVerifier,
    ...(options.challengeScope === undefined ? {} : { requiredScopes: options.challengeScope.split(' ').filter(Boolean) }),
    ...(prmLayout === 'header' && resourceMetadataUrl !== undefined ? { resourceMetadataUrl } : {}),
    ...(resource === undefined ? {} : { expectedResource: new URL(resource) }),
  });
  // A tools/call that needs more than the rest: 403 insufficient_scope naming `callScope` (a step-up).
  const callBearer =
    options.callScope === undefined
      ? bearer
      : requireBearerAuth({
          verifier: currentVerifier,
          requiredScopes: options.callScope.split(' ').filter(Boolean),
          ...(resourceMetadataUrl !== undefined ? { resourceMetadataUrl } : {}),
          ...(resource === undefined ? {} : { expectedResource: new URL(resource) }),
        });
  const gate = (req: Request, res: Response, next: NextFunction): void => {
    if (req.method === 'GET' && options.protectGet === false) {
      res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
      return;
    }
    const method = (req.body as { method?: unknown } | undefined)?.method;
    if (options.openInitialize && typeof method === 'string' && (method === 'initialize' || method.startsWith('notifications/'))) return next();
    if (method === 'tools/call') return void callBearer(req, res, next);
    void bearer(req, res, next);
  };
  /**
   * DPoP at the MCP server: a DPoP-bound token only as `Authorization: DPoP` with a proof of its key for this
   * request (`htm`, `htu`, `ath`; the current nonce with `dpop.nonce`), never as Bearer. It goes on to the
   * bearer check as the token it is.
   */
  const dpopAtResource = (req: Request, res: Response, next: NextFunction): void => {
    if (options.dpop === undefined) return next();
    const header = req.headers.authorization ?? '';
    const refuse = (error: string, description: string, jkt?: string): void => {
      dpopProofs.push({ where: 'resource', ...(jkt === undefined ? {} : { jkt }), outcome: error === 'use_dpop_nonce' ? error : description });
      if (error === 'use_dpop_nonce') res.set('DPoP-Nonce', nonces.resource);
      res.status(401).set('WWW-Authenticate', `DPoP error="${error}", error_description="${description}", algs="ES256 ES384 EdDSA"`).json({ error, error_description: description });
    };
    if (/^bearer /i.test(header)) {
      if (provider.access.get(header.slice(7))?.jkt !== undefined) return refuse('invalid_token', 'bearer');
      return next();
    }
    if (header === '' && options.dpop.challengeOnly) {
      // The bearer check's 401 gets a second challenge, for the DPoP scheme (RFC 9449 §7.1).
      const setHeader = res.setHeader.bind(res);
      res.setHeader = ((name: string, value: number | string | readonly string[]) =>
        name.toLowerCase() === 'www-authenticate' ? setHeader(name, [String(value), 'DPoP algs="ES256 ES384 EdDSA"']) : setHeader(name, value)) as typeof res.setHeader;
    }
    if (!/^dpop /i.test(header)) return next();
    const token = header.slice(5);
    const checked = checkDpopProof(req.headers.dpop, { htm: req.method, htu: mcpUrl, ath: sha256(token), ...(options.dpop.nonce ? { nonce: nonces.resource } : {}) }, seenJtis);
    if (checked.error === 'use_dpop_nonce') return refuse('use_dpop_nonce', 'Resource server requires nonce in DPoP proof', checked.jkt);
    if (checked.error !== undefined) return refuse('invalid_dpop_proof', checked.error, checked.jkt);
    if (provider.access.get(token)?.jkt !== checked.jkt) return refuse('invalid_token', 'wrong key', checked.jkt);
    dpopProofs.push({ where: 'resource', jkt: checked.jkt!, outcome: 'ok' });
    req.headers.authorization = `Bearer ${token}`;
    next();
  };
  const eraHandler =
    options.era === undefined || options.era === 'legacy'
      ? undefined
      : toNodeHandler(createMcpHandler(() => createMcpServer(), { legacy: options.era === 'modern' ? 'reject' : 'stateless' }));
  mcpApp.all(MCP_PATH, countMcp, express.json(), dpopAtResource, gate, (req, res) =>
    // The bearer check put the token's AuthInfo on req.auth, which the v2 adapter passes on as authInfo.
    eraHandler === undefined ? handleMcp(req, res) : eraHandler(req as never, res, req.body),
  );
  // The older HTTP+SSE transport, behind the same bearer check: a stream per client, its messages POSTed beside it.
  const sseSessions = new Map<string, SSEServerTransport>();
  mcpApp.get(`${MCP_PATH}/sse`, countMcp, bearer, async (_req, res) => {
    const transport = new SSEServerTransport(`${MCP_PATH}/messages`, res);
    const server = createMcpServer();
    sseSessions.set(transport.sessionId, transport);
    res.on('close', () => {
      sseSessions.delete(transport.sessionId);
      void server.close();
    });
    await server.connect(transport);
  });
  mcpApp.post(`${MCP_PATH}/messages`, countMcp, bearer, express.json(), async (req, res) => {
    const transport = sseSessions.get(String(req.query.sessionId));
    if (transport === undefined) {
      res.status(404).json({ error: 'unknown session' });
      return;
    }
    await transport.handlePostMessage(req, res, req.body);
  });

  mcpServer.on('request', mcpApp);
  if (separate) authServer.on('request', authApp);

  return {
    verifiers,
    mcpUrl,
    sseUrl: `${mcpUrl}/sse`,
    issuer,
    resource,
    resourceMetadataUrl,
    authServerMetadataUrl,
    endpoints,
    counters,
    revoked: provider.revoked,
    authorizations: provider.authorizations,
    clientCredentialRequests,
    jwtBearerRequests,
    dpopProofs,
    issuedTokens: () => ({ access: [...provider.access.keys()], refresh: [...provider.refresh.keys()] }),
    registeredClients: () =>
      [...provider.clients.values()].map((client) => ({
        client_id: client.client_id,
        ...(client.client_secret === undefined ? {} : { client_secret: client.client_secret }),
        redirect_uris: [...client.redirect_uris],
      })),
    expireAccessTokens: () => {
      for (const grant of provider.access.values()) grant.expiresAt = 0;
    },
    revokeAllRefreshTokens: () => {
      for (const grant of provider.refresh.values()) grant.dead ??= 'revoked';
    },
    setDown: async (value) => {
      if (value === down) return;
      down = value;
      if (!separate) return;
      if (down) await stop(authServer);
      else await listen(authServer, authPort);
    },
    followAuthorization: async (url) => {
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      const body = await response.text();
      if (response.status < 300 || response.status >= 400 || location === null) {
        throw new Error(`The authorization endpoint answered ${response.status} without a redirect: ${body}`);
      }
      return new URL(location, url);
    },
    registrationRequests,
    moveAuthServer: async () => {
      if (moved !== undefined) return moved.info;
      const server = createServer();
      const port = await listen(server);
      const movedIssuer = `http://127.0.0.1:${port}/moved`;
      const movedProvider = new FixtureProvider({ ...settings, iss: undefined }, true);
      const info = { issuer: movedIssuer, counters: { register: 0, authorize: 0, token: 0 }, clientIds: [] as string[] };
      const app = express();
      const movedEndpoints = { authorization: `${movedIssuer}/authorize`, token: `${movedIssuer}/token`, registration: `${movedIssuer}/register` };
      app.use(
        '/.well-known/oauth-authorization-server/moved',
        metadataHandler(authServerMetadata(movedIssuer, movedEndpoints, settings.scopes, settings.issueRefresh, false, { cimd: false, advertiseIss: false })),
      );
      const seen = (counter: 'authorize' | 'token') => (req: Request, _res: Response, next: NextFunction) => {
        info.counters[counter]++;
        const id = (req.query.client_id ?? (req.body as { client_id?: unknown } | undefined)?.client_id) as unknown;
        if (typeof id === 'string') info.clientIds.push(id);
        next();
      };
      app.use('/moved/authorize', seen('authorize'), authorizationHandler({ provider: movedProvider, ...noLimit }));
      app.use('/moved/token', express.urlencoded({ extended: false }), seen('token'), tokenHandler({ provider: movedProvider, ...noLimit }));
      app.use('/moved/register', count(() => info.counters.register++), clientRegistrationHandler({ clientsStore: movedProvider.clientsStore, ...noLimit }));
      server.on('request', app);
      servers.push(server);
      moved = { server, info };
      prmHandler = protectedResource([movedIssuer]);
      verifier = movedProvider;
      return info;
    },
    close: async () => {
      await Promise.all(servers.map(stop));
    },
  };
}

/**
 * Who the client of a token request says it is, how, and whether that holds:
 * HTTP Basic, the body's `client_secret`, or a `private_key_jwt` assertion
 * (ES256, verified with the configured public key: issuer and subject the
 * client id, audience the issuer or the token endpoint, not expired).
 */
function authenticateClient(
  req: Request,
  body: Record<string, string | undefined>,
  expected: OAuthFixtureOptions['clientCredentials'],
  audiences: readonly string[],
): { clientId?: string; method: string; valid: boolean } {
  const header = req.headers.authorization;
  if (header?.startsWith('Basic ')) {
    const [id, secret] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
    const clientId = decodeURIComponent(id ?? '');
    return { clientId, method: 'client_secret_basic', valid: expected?.clientSecret !== undefined && decodeURIComponent(secret ?? '') === expected.clientSecret };
  }
  if (body.client_assertion !== undefined) {
    const valid = body.client_assertion_type === 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' && expected?.publicKey !== undefined;
    const claims = valid ? verifiedJwt(body.client_assertion, createPublicKey(expected.publicKey!)) : undefined;
    const clientId = typeof claims?.iss === 'string' ? claims.iss : undefined;
    const audience = [claims?.aud].flat();
    const ok =
      claims !== undefined && claims.sub === clientId && audience.some((aud) => typeof aud === 'string' && audiences.includes(aud)) && typeof claims.exp === 'number' && claims.exp > nowSeconds();
    return { ...(clientId === undefined ? {} : { clientId }), method: 'private_key_jwt', valid: ok };
  }
  if (body.client_secret !== undefined) {
    return { ...(body.client_id === undefined ? {} : { clientId: body.client_id }), method: 'client_secret_post', valid: expected?.clientSecret !== undefined && body.client_secret === expected.clientSecret };
  }
  return { ...(body.client_id === undefined ? {} : { clientId: body.client_id }), method: 'none', valid: false };
}

/** The claims of an ES256 JWT whose signature `key` verifies (and whose `typ` is `typ`, when given), else undefined. */
function verifiedJwt(jwt: string, key: KeyObject, typ?: string): Record<string, unknown> | undefined {
  const [header, payload, signature] = jwt.split('.');
  if (header === undefined || payload === undefined || signature === undefined) return undefined;
  const head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown; typ?: unknown };
  if (head.alg !== 'ES256' || (typ !== undefined && head.typ !== typ)) return undefined;
  const ok = verify('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  return ok ? (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>) : undefined;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** RFC 7638: the SHA-256 thumbprint of a public JWK (its required members, in order). */
function jwkThumbprint(jwk: Record<string, unknown>): string {
  const members = jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : jwk.kty === 'OKP' ? ['crv', 'kty', 'x'] : ['e', 'kty', 'n'];
  return sha256(JSON.stringify(Object.fromEntries(members.map((name) => [name, jwk[name]]))));
}

/**
 * A DPoP proof checked as RFC 9449 §4.3 says: a `dpop+jwt` signed with the public key in its `jwk`
 * header (ES256/384, EdDSA), for this method and URL, issued within the last minute, a `jti` never
 * seen, the access token's hash (`ath`) and the server's nonce where asked for.
 */
function checkDpopProof(
  proof: string | string[] | undefined,
  expected: { htm: string; htu: string; ath?: string; nonce?: string },
  seenJtis: Set<string>,
): { jkt?: string; error?: string } {
  if (typeof proof !== 'string') return { error: 'no DPoP proof' };
  const [header, payload, signature] = proof.split('.');
  if (header === undefined || payload === undefined || signature === undefined) return { error: 'not a JWT' };
  let head: { typ?: unknown; alg?: unknown; jwk?: Record<string, unknown> };
  let claims: Record<string, unknown>;
  try {
    head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as typeof head;
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return { error: 'not a JWT' };
  }
  if (head.typ !== 'dpop+jwt' || typeof head.jwk !== 'object' || head.jwk === null || 'd' in head.jwk) return { error: 'not a DPoP proof with a public jwk' };
  const hash = { ES256: 'sha256', ES384: 'sha384', EdDSA: null }[String(head.alg)];
  if (hash === undefined) return { error: `unsupported alg ${String(head.alg)}` };
  const jkt = jwkThumbprint(head.jwk);
  const key = createPublicKey({ key: head.jwk as never, format: 'jwk' });
  const signed = Buffer.from(`${header}.${payload}`);
  const ok = verify(hash, signed, hash === null ? key : { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!ok) return { jkt, error: 'bad signature' };
  if (claims.htm !== expected.htm) return { jkt, error: 'htm' };
  if (typeof claims.htu !== 'string' || claims.htu.replace(/[?#].*$/, '') !== expected.htu) return { jkt, error: 'htu' };
  if (typeof claims.iat !== 'number' || Math.abs(claims.iat - nowSeconds()) > 60) return { jkt, error: 'iat' };
  if (expected.ath !== undefined && claims.ath !== expected.ath) return { jkt, error: 'ath' };
  if (expected.nonce !== undefined && claims.nonce !== expected.nonce) return { jkt, error: 'use_dpop_nonce' };
  if (typeof claims.jti !== 'string' || seenJtis.has(claims.jti)) return { jkt, error: 'jti replayed' };
  seenJtis.add(claims.jti);
  return { jkt };
}
