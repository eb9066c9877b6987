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
 *   tokens, and hands the authorization URL to the sign-in channel.
 *
 * The PKCE verifier and the `state` live in memory only, for one sign-in.
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type Logger, type PlinthError, isPlinthError } from 'plinth/sdk';
import type { McpServerDefinition } from '../mcp/types.js';
import { oauthError } from './errors.js';
import { type OAuthRecord, type TokenVault, withTokens } from './record.js';
import { type RefreshDeps, expired, refreshDue, refreshTokens, refreshable } from './refresh.js';
import type { ServerOAuthConfig } from './settings.js';

/** Tokens another process refreshed or stored are picked up at the latest after this long. */
const RELOAD_AFTER_MS = 30_000;

/** A redirect URI for connections, which never redirect: the SDK needs one to stay on the authorization-code flow. */
const UNUSED_REDIRECT = 'http://127.0.0.1/callback';

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
}

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

  constructor(deps: ProviderDeps) {
    this.#deps = deps;
  }

  get redirectUrl(): string {
    const { mode } = this.#deps;
    return mode.kind === 'login' ? mode.redirectUrl : (this.#record?.redirectUrl ?? UNUSED_REDIRECT);
  }

  get clientMetadata(): OAuthClientMetadata {
    const { config } = this.#deps;
    return {
      client_name: config.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: config.clientSecret !== undefined ? 'client_secret_basic' : 'none',
      ...(config.scope !== undefined && { scope: config.scope }),
    };
  }

  async state(): Promise<string> {
    const { mode } = this.#deps;
    if (mode.kind === 'login') return mode.state;
    throw await this.#signInNeeded();
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { config, mode } = this.#deps;
    if (config.clientId !== undefined) return { client_id: config.clientId, ...(config.clientSecret !== undefined && { client_secret: config.clientSecret }) };
    const client = (await this.#current())?.client;
    if (mode.kind === 'login') {
      // A registration made for another callback port cannot take this redirect: register again.
      const uris = (client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
      return client !== undefined && (!Array.isArray(uris) || uris.includes(mode.redirectUrl)) ? client : undefined;
    }
    if (client === undefined) throw await this.#signInNeeded();
    return client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    if (this.#deps.config.clientId !== undefined) return; // configured, not ours to keep
    await this.#change((record) => ({ ...record, client }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    if (this.#deps.mode.kind === 'login') return undefined;
    const stored = await this.#current();
    if (stored?.tokens === undefined) return undefined;
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
    return record?.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const { mode } = this.#deps;
    await this.#change((record) => withTokens({ ...record, ...(mode.kind === 'login' && { redirectUrl: mode.redirectUrl }) }, tokens));
    this.#refused = false;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const { mode } = this.#deps;
    if (mode.kind !== 'login') throw await this.#signInNeeded();
    // The URL comes from the server's metadata: only a web page may be shown to the user.
    if (authorizationUrl.protocol !== 'https:' && authorizationUrl.protocol !== 'http:') {
      throw oauthError('PLN_E_OAUTH_DISCOVERY', this.#deps.server.name, `The authorization endpoint of MCP server "${this.#deps.server.name}" is not a web address (${authorizationUrl.protocol})`);
    }
    await mode.open(authorizationUrl);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw oauthError('PLN_E_OAUTH_FAILED', this.#deps.server.name, `No sign-in to MCP server "${this.#deps.server.name}" is in progress in this process`);
    return this.#verifier;
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    if (this.#deps.mode.kind === 'login' && this.#lastDiscovery === undefined) return undefined;
    // The SDK asks first thing in every auth(): a good moment to see what other processes stored.
    return (await this.#current({ reload: true }))?.discovery ?? this.#lastDiscovery;
  }

  /** What the last discovery of this provider found (undefined before any). */
  get discovered(): OAuthDiscoveryState | undefined {
    return this.#lastDiscovery;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    this.#lastDiscovery = state;
    if (this.#deps.mode.kind === 'connection' && (await this.#current()) === undefined) return;
    await this.#change((record) => ({ ...record, discovery: state }));
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.#verifier = undefined;
      return;
    }
    const handedOut = this.#handedOut;
    await this.#change((record) => {
      const { client, tokens, expiresAt, obtainedAt, discovery, ...rest } = record;
      // Another process refreshed since these tokens were handed out: the refusal was of spent tokens.
      const keepTokens = scope === 'tokens' && tokens !== undefined && handedOut !== undefined && tokens.refresh_token !== handedOut.refresh_token;
      if (keepTokens) return record;
      return {
        ...rest,
        ...(scope !== 'all' && scope !== 'client' && client !== undefined && { client }),
        ...(scope !== 'all' && scope !== 'tokens' && tokens !== undefined && { tokens, expiresAt, obtainedAt }),
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
  async #signInNeeded(): Promise<PlinthError> {
    const name = this.#deps.server.name;
    const record = await this.#current({ reload: true });
    if (!this.#refused && refreshable(record)) {
      try {
        this.#remember(await refreshTokens(this.#deps.refresh, record, { force: true }));
        return oauthError('PLN_E_OAUTH_UNREACHABLE', name, `The authorization server of MCP server "${name}" did not answer a moment ago; the sign-in is now refreshed, try again`);
      } catch (error) {
        if (isPlinthError(error)) return error;
        throw error;
      }
    }
    const found = record?.discovery ?? this.#lastDiscovery;
    if (record === undefined && !this.#deps.config.explicit && found !== undefined && found.resourceMetadata === undefined && found.authorizationServerMetadata === undefined) {
      return oauthError('PLN_E_OAUTH_DISCOVERY', name, `MCP server "${name}" answered 401 Unauthorized and publishes no OAuth metadata`, {
        hint: `if it takes a key in a header, check the server's "headers"; if it does use OAuth, set "oauth": true on it and run \`plinth auth login ${name}\``,
      });
    }
    const why = this.#refused ? 'its authorization server no longer accepts the saved sign-in' : record?.tokens !== undefined ? 'the server refused the stored access token and it cannot be refreshed' : 'no sign-in is stored for it';
    return oauthError('PLN_E_OAUTH_SIGNIN_REQUIRED', name, `MCP server "${name}" needs you to sign in${this.#refused ? ' again' : ''} (${why}): run \`plinth auth login ${name}\``);
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
