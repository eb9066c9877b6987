/**
 * The `oauth` service's contract (sign-in, sign-out, status, and the SDK auth
 * provider for a connection), and the sign-in channel a
 * host replaces to open the authorization URL and receive the callback its own
 * way. Discovery, PKCE, registration and token exchange are the SDK's.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import type { AsyncSeriesBailHook } from 'tapable';
import type { McpServerDefinition } from './mcp-server.js';
import type { SecretBackendName, SecretStore } from './secrets.js';

/** What a sign-in needs from the channel that carries it. */
export interface SignInRequest {
  /** The MCP server signing in. */
  readonly server: string;
  /** The `state` sent with the authorization request; the callback must carry it back. */
  readonly state: string;
  /** A port asked for by the server's or the plugin's settings; 0 or undefined: any free port. */
  readonly port?: number;
  /** Aborted when the sign-in is called off (Ctrl-C, time limit). */
  readonly signal: AbortSignal;
}

/**
 * How the authorization URL reaches the user and the callback comes back. The
 * default listens on 127.0.0.1 for one request, opens the browser without a
 * shell, prints the URL, and accepts the callback URL pasted into the terminal.
 * A host (an IDE) taps {@link OAuthService.hooks}.channel to use its own window.
 */
export interface SignInChannel {
  /** The redirect URI registered with the authorization server and sent in the request. */
  readonly redirectUrl: string;
  /** Shows the authorization URL to the user (a browser, a window); the URL is always printed too by the default channel. */
  open(authorizationUrl: URL): Promise<void>;
  /** Resolves with the URL the authorization server redirected to (code or error, and state). Rejects when `request.signal` aborts. */
  callback(): Promise<URL>;
  /** Frees what the channel holds (the listening socket, the terminal). Always called, once. */
  close(): Promise<void>;
}

/** Options of {@link OAuthService.login}. */
export interface LoginOptions {
  /** Where progress lines go (the URL to open, "waiting for the browser…"). */
  readonly progress?: (line: string) => void;
  /** Called off by the caller (Ctrl-C). */
  readonly signal?: AbortSignal;
}

/** The outcome of a sign-in: never a token. */
export interface LoginResult {
  readonly server: string;
  readonly backend: SecretBackendName;
  readonly scope?: string;
  /** ISO time the access token expires, when the server said. */
  readonly expiresAt?: string;
  readonly refreshable: boolean;
  /** The authorization server that issued the tokens. */
  readonly issuer?: string;
}

/** The outcome of a sign-out. */
export interface LogoutResult {
  readonly server: string;
  /** Whether tokens were stored before. */
  readonly removed: boolean;
  /** `revoked`: the server confirmed; `unsupported`: it offers no revocation endpoint; `failed`: it could not be reached or refused (the local tokens are deleted anyway); `none`: nothing to revoke. */
  readonly revocation: 'revoked' | 'unsupported' | 'failed' | 'none';
  /** Why revocation failed, without any token. */
  readonly revocationError?: string;
}

/** One server's sign-in state for `plinth auth status`: never a token. */
export interface AuthStatus {
  readonly server: string;
  readonly url?: string;
  /** `signed-in`; `expired` (a refresh will be tried); `signed-out`; `other-url` (tokens were obtained for another URL); `unreadable` (the backend holding them failed: see `error`). */
  readonly state: 'signed-in' | 'expired' | 'signed-out' | 'other-url' | 'unreadable';
  readonly backend?: SecretBackendName;
  readonly scope?: string;
  readonly expiresAt?: string;
  readonly refreshable?: boolean;
  readonly issuer?: string;
  readonly error?: { readonly code: string; readonly message: string };
}

/** Options of {@link OAuthService.providerFor}. */
export interface ProviderOptions {
  /** Aborts refreshes in flight when the connection is called off. */
  readonly signal?: AbortSignal;
}

/** The `oauth` service. */
export interface OAuthService {
  /**
   * The SDK auth provider a remote transport gets for `server`: it hands out the
   * stored tokens, refreshes them ahead of expiry under a lock shared across
   * processes, and never starts a sign-in — where one is needed it rejects with
   * `PLN_E_OAUTH_SIGNIN_REQUIRED` naming `plinth auth login <server>`. Undefined for
   * a server without a `url` or with `"oauth": false`.
   */
  providerFor(server: McpServerDefinition, options?: ProviderOptions): OAuthClientProvider | undefined;
  /** Signs in to `server` (discovery, registration, PKCE, browser or pasted callback, token exchange) and stores the tokens. Refused inside a hook. */
  login(server: string, options?: LoginOptions): Promise<LoginResult>;
  /** Revokes the tokens at the server where it offers revocation (RFC 7009), then deletes them locally. */
  logout(server: string, options?: { readonly signal?: AbortSignal }): Promise<LogoutResult>;
  /** Sign-in state of one server, or of every remote server and every server with stored tokens. */
  status(server?: string): Promise<readonly AuthStatus[]>;
  /** Where new tokens go, and whether the OS keychain can be used (runs the keychain probe once). */
  storage(): ReturnType<SecretStore['describe']>;
  readonly hooks: {
    /** Tap to replace the default sign-in channel: return a channel, or undefined to leave it to the next tap (and finally the default). */
    readonly channel: AsyncSeriesBailHook<[SignInRequest], SignInChannel | undefined>;
  };
}

declare module '../index.js' {
  interface Services {
    oauth: OAuthService;
  }
}
