/**
 * The `oauth` service: a provider per connection, sign-in, sign-out and status,
 * over the record vault. Servers are the mcp plugin's definitions; a record
 * whose server was removed from the settings can still be signed out of.
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import { type Logger, type PluginKernel, PlinthError, isPlinthError, safeText } from 'plinth/sdk';
import { closestName } from 'plinth/internal';
import type { Launcher } from 'plinth/sdk';
import { AsyncSeriesBailHook } from 'tapable';
import type { McpServerDefinition } from 'plinth/sdk';
import { guardedFetch } from './address.js';
import { type CrossAppTarget, requestIdJag } from './cross-app.js';
import { oauthError } from './errors.js';
import { signIn } from './login.js';
import { StoredOAuthProvider } from './provider.js';
import type { OAuthChallenge, OAuthRecord, TokenVault } from './record.js';
import { type RefreshDeps, expired } from './refresh.js';
import { type Revocation, revokeTokens } from './revoke.js';
import { type OAuthSettings, type ServerOAuthConfig, serverOAuthConfig } from './settings.js';
import { createLoopbackChannel } from './signin/loopback-channel.js';
import type { AuthStatus, LoginOptions, LoginResult, LogoutResult, OAuthService, SecretStore, SignInChannel, SignInRequest } from 'plinth/sdk';

export interface OAuthServiceDeps {
  readonly kernel: Pick<PluginKernel, 'get'>;
  readonly secrets: SecretStore;
  readonly vault: TokenVault;
  readonly settings: OAuthSettings;
  readonly log: Logger;
  /** The environment the sign-in runs in (whether it is inside a hook). */
  readonly env?: NodeJS.ProcessEnv;
  /** The `launcher` service, which starts the browser opener. */
  readonly launcher?: () => Promise<Launcher>;
}

type RemoteDefinition = McpServerDefinition & { readonly url: string };

export function createOAuthService(deps: OAuthServiceDeps): OAuthService {
  const { settings, vault, log } = deps;
  const env = deps.env ?? process.env;
  const hooks = { channel: new AsyncSeriesBailHook<[SignInRequest], SignInChannel | undefined>(['request']) };
  const fetchFor = (signal?: AbortSignal) => boundedFetch(settings.requestTimeoutMs, signal);
  /** Every OAuth request for a server goes through the address rule (address.ts). */
  const guarded = (server: string, serverUrl: string, signal?: AbortSignal) => guardedFetch(fetchFor(signal), server, serverUrl);
  const refreshDeps = (server: string, serverUrl: string, signal?: AbortSignal): RefreshDeps => ({
    server,
    vault,
    fetch: guarded(server, serverUrl, signal),
    skewMs: settings.refreshSkewSeconds * 1000,
    requestTimeoutMs: settings.requestTimeoutMs,
  });

  /**
   * Cross-app access: the identity provider is the user's own configuration, not an address a
   * server's metadata named, so its requests go with the time limit but without the address rule.
   */
  const idJagFor = (server: McpServerDefinition, config: ServerOAuthConfig, signal?: AbortSignal): ((target: CrossAppTarget) => Promise<string>) | undefined =>
    config.crossApp === undefined
      ? undefined
      : (target) => requestIdJag({ server, config: config.crossApp!, fetch: fetchFor(signal), env, ...(deps.launcher && { launcher: deps.launcher }) }, target);

  const mcp = () => deps.kernel.get('mcp');
  /** Per server, what the last connection's failed request was challenged with (this process). */
  const challenges = new Map<string, OAuthChallenge>();

  /**
   * Signing in sends the server requests (and the headers it is configured with, `${env:…}` values included):
   * like starting it, that needs its approval first. Fails closed.
   */
  const approved = async (name: string, signal?: AbortSignal): Promise<void> => {
    try {
      await (await mcp()).ensureTrusted(name, signal === undefined ? {} : { signal });
    } catch (error) {
      if (!isPlinthError(error) || error.code !== 'PLN_E_MCP_UNTRUSTED') throw error;
      const approveCommand = typeof error.details?.approveCommand === 'string' ? error.details.approveCommand : undefined;
      throw oauthError('PLN_E_OAUTH_UNTRUSTED', name, `Signing in to MCP server "${name}" was refused: ${error.message.replace(/^MCP server "[^"]*" was not started: /, '')}; nothing was sent to it`, {
        cause: error,
        ...(approveCommand !== undefined && { hint: `review it, then run: ${approveCommand}, and sign in again` }),
        details: { ...error.details, ...(approveCommand !== undefined && { approveCommand }) },
      });
    }
  };

  /** The definition of a remote server, or the error that says why `name` cannot be signed in to. */
  const remote = async (name: string): Promise<RemoteDefinition> => {
    const service = await mcp();
    const definition = service.definition(name);
    if (definition === undefined) {
      const known = service.servers().map((s) => s.name);
      const near = closestName(name, known);
      throw new PlinthError('PLN_E_MCP_SERVER_UNKNOWN', `No MCP server is named "${name}"${near ? ` (did you mean "${near}"?)` : ''}`, {
        plugin: 'oauth',
        hint: 'run `plinth mcp list` for the configured servers',
        details: { server: name },
      });
    }
    if (definition.url === undefined || definition.oauth === false) {
      throw oauthError('PLN_E_OAUTH_NOT_REMOTE', name, `MCP server "${name}" ${definition.url === undefined ? 'is a local server (it has no "url")' : 'has "oauth": false'}: it does not sign in`, {
        details: { origin: definition.origin },
      });
    }
    return definition as RemoteDefinition;
  };

  const service: OAuthService = {
    hooks,

    providerFor(server, options = {}) {
      if (server.url === undefined) return undefined;
      const config = serverOAuthConfig(server, env);
      if (config === undefined) return undefined;
      return new StoredOAuthProvider({
        server: server as RemoteDefinition,
        config,
        vault,
        refresh: refreshDeps(server.name, server.url, options.signal),
        log,
        mode: { kind: 'connection' },
        ...withIdJag(idJagFor(server, config, options.signal)),
        // Requests fail at once (the stream's GET, a POST): one that learnt less does not wipe out what another learnt.
        onChallenge: (challenge) => void challenges.set(server.name, { ...challenges.get(server.name), ...challenge }),
      });
    },

    async login(name: string, options: LoginOptions = {}): Promise<LoginResult> {
      if (env.PLINTH_HOOK_EVENT !== undefined) {
        throw oauthError('PLN_E_OAUTH_NOT_INTERACTIVE', name, `Signing in to MCP server "${name}" was refused: it was asked for from inside a hook (${env.PLINTH_HOOK_EVENT})`);
      }
      const definition = await remote(name);
      const config = serverOAuthConfig(definition, env)!;
      await approved(name, options.signal);
      const stored = await vault.read(name).catch(() => undefined);
      const challenge = challenges.get(name) ?? (stored?.serverUrl === definition.url ? stored.challenge : undefined);
      // The lines carry the authorization URL (and its state): for the person signing in, not for the
      // log. The server and its metadata chose those URLs, so they are made safe for the terminal.
      const progress = options.progress ?? ((line: string) => void process.stderr.write(`${safeText(line)}\n`));
      const configured = config.callbackPort ?? (settings.callbackPort || undefined);
      // The port of the stored registration's redirect URI, so that the registration is used again rather than a new one made.
      const remembered = configured === undefined ? registeredPort(stored, definition.url) : undefined;
      const loopback = (request: SignInRequest) => createLoopbackChannel(request, { timeoutMs: settings.callbackTimeoutMs, openBrowser: settings.openBrowser, progress, ...(deps.launcher && { launcher: deps.launcher }) });
      const record = await signIn({
        server: definition,
        config,
        vault,
        refresh: refreshDeps(name, definition.url, options.signal),
        fetch: guarded(name, definition.url, options.signal),
        log,
        channel: async (request) => {
          const host = await hooks.channel.promise(request);
          if (host !== undefined) return host;
          try {
            return await loopback(request);
          } catch (error) {
            // Only a configured port must be that port; a remembered one is a preference.
            if (remembered === undefined || !isPlinthError(error) || error.code !== 'PLN_E_OAUTH_CALLBACK_PORT') throw error;
            return loopback({ ...request, port: 0 });
          }
        },
        port: configured ?? remembered ?? 0,
        timeoutMs: settings.callbackTimeoutMs,
        ...(options.signal !== undefined && { signal: options.signal }),
        ...(challenge !== undefined && { challenge }),
        ...withIdJag(idJagFor(definition, config, options.signal)),
      });
      challenges.delete(name);
      return {
        server: name,
        backend: (await vault.where(name)) ?? 'file',
        ...described(record),
      };
    },

    async logout(name: string, options = {}): Promise<LogoutResult> {
      let record: OAuthRecord | undefined;
      let unreadable: { code: string; message: string } | undefined;
      try {
        record = await vault.read(name);
      } catch (error) {
        // Signing out is how a person gets rid of a sign-in plinth cannot read: it is removed, unrevoked.
        unreadable = isPlinthError(error) ? error : { code: 'PLN_E_OAUTH_FAILED', message: String(error) };
      }
      if (record === undefined && unreadable === undefined) return { server: name, removed: false, revocation: 'none' };
      const revocation: Revocation = record
        ? await revokeTokens(record, guarded(name, record.serverUrl, options.signal))
        : { revocation: 'failed', revocationError: `the stored sign-in could not be read, so nothing was revoked (${unreadable!.code})` };
      if (revocation.revocation === 'failed') log.warn(`MCP server "${name}": revoking the tokens at the server failed (${revocation.revocationError}); deleting them here anyway`);
      await vault.update(name, async () => ({ record: undefined, result: undefined }), { replaceUnreadable: true });
      return { server: name, removed: true, ...revocation };
    },

    storage: () => deps.secrets.describe(),

    async status(name?: string): Promise<readonly AuthStatus[]> {
      const service = await mcp();
      const stored = await vault.servers();
      let names: string[];
      if (name !== undefined) {
        if (service.definition(name) === undefined && !stored.includes(name)) await remote(name);
        names = [name];
      } else {
        const remotes = service.servers().map((s) => service.definition(s.name)).filter((d) => d?.url !== undefined && d.oauth !== false).map((d) => d!.name);
        names = [...new Set([...remotes, ...stored])];
      }
      return Promise.all(names.map((server) => statusOf(server, service.definition(server))));
    },
  };

  async function statusOf(server: string, definition: McpServerDefinition | undefined): Promise<AuthStatus> {
    const url = definition?.url;
    const base = { server, ...(url !== undefined && { url }) };
    const backend = await vault.where(server);
    if (backend === undefined) return { ...base, state: 'signed-out' };
    let record: OAuthRecord | undefined;
    try {
      record = await vault.read(server);
    } catch (error) {
      const { code, message } = isPlinthError(error) ? error : { code: 'PLN_E_OAUTH_FAILED', message: String(error) };
      return { ...base, state: 'unreadable', backend, error: { code, message } };
    }
    if (record?.tokens === undefined) return { ...base, state: 'signed-out', backend };
    const state = url !== undefined && record.serverUrl !== url ? 'other-url' : expired(record) ? 'expired' : 'signed-in';
    return { ...base, state, backend, ...described(record) };
  }

  return service;
}

/** The loopback port of the redirect URI `record`'s client was registered with, when it was registered for `url`. */
function registeredPort(record: OAuthRecord | undefined, url: string): number | undefined {
  const uris = (record?.client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  if (record?.serverUrl !== url || !Array.isArray(uris) || typeof uris[0] !== 'string') return undefined;
  try {
    const redirect = new URL(uris[0]);
    return redirect.hostname === '127.0.0.1' && redirect.port !== '' ? Number(redirect.port) : undefined;
  } catch {
    return undefined;
  }
}

/** What status and sign-in may show of a record: never a token. */
function described(record: OAuthRecord): Pick<LoginResult, 'scope' | 'expiresAt' | 'refreshable' | 'issuer'> {
  const scope = record.tokens?.scope;
  const issuer = record.tokens?.issuer ?? record.discovery?.authorizationServerUrl;
  return {
    ...(scope !== undefined && { scope }),
    ...(record.expiresAt !== undefined && { expiresAt: new Date(record.expiresAt).toISOString() }),
    refreshable: record.tokens?.refresh_token !== undefined,
    ...(issuer !== undefined && { issuer }),
  };
}

function withIdJag(idJag: ((target: CrossAppTarget) => Promise<string>) | undefined): { idJag?: (target: CrossAppTarget) => Promise<string> } {
  return idJag === undefined ? {} : { idJag };
}

/** fetch with a time limit on every request, and the caller's signal. */
function boundedFetch(timeoutMs: number, signal?: AbortSignal): FetchLike {
  return (url, init) => {
    const signals = [AbortSignal.timeout(timeoutMs), ...(init?.signal ? [init.signal] : []), ...(signal ? [signal] : [])];
    return fetch(url, { ...init, signal: AbortSignal.any(signals) });
  };
}
