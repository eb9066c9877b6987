/**
 * What plinth keeps per server after a sign-in: the client registration, the
 * tokens with their expiry, the discovery result (so a refresh needs no
 * discovery) and the redirect URI. One JSON document per server in the
 * `secrets` service, under `mcp-oauth:<server>`; tokens never cross servers.
 * Changes go through {@link TokenVault.update}, which holds a lock file shared
 * by every plinth process, so a refresh in one process and a sign-out in
 * another take turns.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { OAuthDiscoveryState, OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/client';
import { withFileLock } from 'plinth/sdk';
import { z } from 'zod';
import type { StoredDpopKey } from './dpop.js';
import { oauthError } from './errors.js';
import type { SecretBackendName, SecretStore } from 'plinth/sdk';

const KEY_PREFIX = 'mcp-oauth:';

const recordSchema = z.looseObject({
  version: z.literal(1),
  server: z.string(),
  /** Tokens are used only for the URL they were obtained for. */
  serverUrl: z.string(),
  redirectUrl: z.string().optional(),
  client: z.looseObject({ client_id: z.string() }).optional(),
  tokens: z.looseObject({ access_token: z.string(), token_type: z.string() }).optional(),
  /** Epoch ms; absent when the server did not say (`expires_in`). */
  expiresAt: z.number().optional(),
  obtainedAt: z.number().optional(),
  discovery: z.looseObject({ authorizationServerUrl: z.string() }).optional(),
  challenge: z.looseObject({ scope: z.string().optional(), resourceMetadataUrl: z.string().optional() }).optional(),
});

/**
 * What a server's challenge asked for when a connection needed a sign-in: the
 * `scope` and the protected-resource metadata URL of its `WWW-Authenticate` (a
 * 403 `insufficient_scope` included), as the SDK read them from the request
 * that failed. The sign-in that follows asks for exactly that.
 */
export interface OAuthChallenge {
  readonly scope?: string;
  readonly resourceMetadataUrl?: string;
}

/** One server's stored sign-in. */
export interface OAuthRecord {
  readonly version: 1;
  readonly server: string;
  readonly serverUrl: string;
  readonly redirectUrl?: string;
  readonly client?: OAuthClientInformationMixed & { issuer?: string };
  readonly tokens?: OAuthTokens & { issuer?: string };
  readonly expiresAt?: number;
  readonly obtainedAt?: number;
  readonly discovery?: OAuthDiscoveryState;
  /** The last challenge a connection could not answer with the stored tokens (cleared by the next sign-in). */
  readonly challenge?: OAuthChallenge;
  /** The DPoP key pair the tokens are bound to (RFC 9449 `cnf.jkt`), private key included: kept with them, never shown. */
  readonly dpop?: StoredDpopKey;
}

/** The secret store key of a server's record. */
function recordKey(server: string): string {
  return `${KEY_PREFIX}${server}`;
}

/** Stored records, read and changed under a per-server lock. */
export class TokenVault {
  readonly #secrets: SecretStore;
  readonly #lockDir: string;
  readonly #lockWaitMs: number;

  constructor(secrets: SecretStore, home: string, lockWaitMs: number) {
    this.#secrets = secrets;
    this.#lockDir = join(home, 'oauth');
    this.#lockWaitMs = lockWaitMs;
  }

  /** The record of `server`, or undefined. A record that is not valid JSON of the right shape is an error (never "signed out"). */
  async read(server: string): Promise<OAuthRecord | undefined> {
    const text = await this.#secrets.get(recordKey(server));
    if (text === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const checked = recordSchema.safeParse(parsed);
    if (!checked.success) {
      throw oauthError('PLN_E_OAUTH_FAILED', server, `The stored sign-in of MCP server "${server}" is not in a form plinth reads`, {
        hint: `run \`plinth auth logout ${server}\`, then \`plinth auth login ${server}\``,
      });
    }
    return checked.data as OAuthRecord;
  }

  /** Where `server`'s record is kept, without reading it. */
  where(server: string): Promise<SecretBackendName | undefined> {
    return this.#secrets.where(recordKey(server));
  }

  /** Servers with a stored record. */
  async servers(): Promise<string[]> {
    return (await this.#secrets.keys(KEY_PREFIX)).map((key) => key.slice(KEY_PREFIX.length));
  }

  /**
   * Runs `change` on the current record under the server's lock and stores what
   * it returns (undefined deletes the record). The lock is held for `fn`'s whole
   * run, so a refresh done inside it is done once across processes. With
   * `replaceUnreadable`, a record that cannot be read counts as none.
   */
  async update<T>(
    server: string,
    change: (current: OAuthRecord | undefined) => Promise<{ record: OAuthRecord | undefined; result: T }>,
    options: { holdMs?: number; replaceUnreadable?: boolean } = {},
  ): Promise<T> {
    await mkdir(this.#lockDir, { recursive: true, mode: 0o700 });
    const holdMs = options.holdMs ?? 5_000;
    return withFileLock(
      join(this.#lockDir, `${encodeURIComponent(server)}.lock`),
      async () => {
        // A sign-in replaces a record it cannot read (a keychain that lost it), a sign-out removes it: that is how a person repairs it.
        let unreadable = false;
        const current = options.replaceUnreadable
          ? await this.read(server).catch(() => {
              unreadable = true;
              return undefined;
            })
          : await this.read(server);
        const { record, result } = await change(current);
        if (record === undefined) {
          if (current !== undefined || unreadable) await this.#secrets.delete(recordKey(server));
        } else if (record !== current) {
          await this.#secrets.set(recordKey(server), JSON.stringify(record));
        }
        return result;
      },
      // A holder is stale only well after its longest legitimate hold (a refresh bounded by the request timeout).
      { timeoutMs: this.#lockWaitMs + holdMs, staleMs: holdMs + 30_000 },
    );
  }
}

/**
 * The authorization server `value` (the record's registration or tokens) is
 * bound to (SEP-2352): the `issuer` the SDK stamped on it when it was obtained,
 * or, for one stored before plinth kept that stamp, the authorization server of
 * the discovery stored with it (the sign-in stored both together).
 */
export function boundIssuer(record: OAuthRecord, value: { issuer?: string } | undefined): string | undefined {
  if (typeof value?.issuer === 'string') return value.issuer;
  return record.discovery === undefined ? undefined : String(record.discovery.authorizationServerUrl);
}

/** The record with `tokens` as just received: expiry computed from `expires_in` now. */
export function withTokens(record: OAuthRecord, tokens: OAuthTokens & { issuer?: string }, now = Date.now()): OAuthRecord {
  const { expiresAt: _expiresAt, ...rest } = record;
  return {
    ...rest,
    tokens,
    obtainedAt: now,
    ...(typeof tokens.expires_in === 'number' && { expiresAt: now + tokens.expires_in * 1000 }),
  };
}

/** The record without its tokens (a refresh token the server no longer accepts), and the DPoP key they were bound to. */
export function withoutTokens(record: OAuthRecord): OAuthRecord {
  const { tokens: _tokens, expiresAt: _expiresAt, obtainedAt: _obtainedAt, dpop: _dpop, ...rest } = record;
  return rest;
}
