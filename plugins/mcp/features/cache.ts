/**
 * The response cache plinth's clients share (SEP-2549 cache hints: `ttlMs`,
 * `cacheScope` on a modern server's discover, list and read results).
 *
 * The SDK's `Client` serves a still-fresh `tools/list`, `prompts/list`,
 * `resources/list`, `resources/templates/list` or `resources/read` result
 * without a request, evicts on `list_changed` and `resources/updated`, and
 * never stores what `cacheMode: 'bypass'` fetched. What is plinth's to
 * decide is which clients share a store, and which principal each writes
 * `private` entries for:
 *
 * - one store per server *as configured* (its name and what it reaches: URL,
 *   or command, arguments and folder), kept across reconnections, so a
 *   restarted server's still-fresh answers stand; a server's definition that
 *   goes takes its store along ({@link ResponseCaches.forget});
 * - `cachePartition`: a digest of the authorization context the connection
 *   uses — the headers and environment it is given and, for an OAuth server,
 *   the access token at connect time. Private entries are written and read
 *   under it only, so credentials that differ never see each other's
 *   private answers; public ones are shared within the server's store.
 *
 * Loads no SDK code until a store is made (the core imports this at setup).
 */
import { createHash } from 'node:crypto';
import type { OAuthClientProvider, ResponseCacheStore } from '@modelcontextprotocol/client';
import type { McpServerDefinition } from 'plinth/sdk';

/** What a client of one server is given: the shared store and its principal's partition. */
export interface ClientCacheOptions {
  readonly responseCacheStore: ResponseCacheStore;
  readonly cachePartition: string;
}

/** The stores of every configured server. */
export interface ResponseCaches {
  /** For a new client of `definition` (with the OAuth provider its transport gets, if any). */
  options(definition: McpServerDefinition, authProvider?: OAuthClientProvider): Promise<ClientCacheOptions>;
  /** The server's definition is gone: drop its store. */
  forget(server: string): void;
}

/** At most this many `resources/read` entries per server (the list singletons are not counted). */
const MAX_READ_ENTRIES = 512;

export function createResponseCaches(): ResponseCaches {
  const stores = new Map<string, { target: string; store: ResponseCacheStore }>();
  return {
    async options(definition, authProvider) {
      const target = targetOf(definition);
      let held = stores.get(definition.name);
      if (held?.target !== target) {
        const { InMemoryResponseCacheStore } = await import('@modelcontextprotocol/client');
        held = { target, store: new InMemoryResponseCacheStore({ maxEntries: MAX_READ_ENTRIES }) };
        stores.set(definition.name, held);
      }
      return { responseCacheStore: held.store, cachePartition: await authorizationContext(definition, authProvider) };
    },
    forget(server) {
      stores.delete(server);
    },
  };
}

/** What the server reaches: another URL or command is another server, whose answers the old ones are not. */
function targetOf(definition: McpServerDefinition): string {
  return JSON.stringify([definition.url ?? null, definition.command ?? null, definition.args, definition.cwd ?? null]);
}

/**
 * A digest of the credentials a connection presents (never the credentials
 * themselves: the partition is a key in memory, and a digest is what may
 * show in a debugger). The OAuth provider's current access token counts: a
 * sign-in as someone else, or a refreshed token, is another context (a
 * refresh only costs the private entries).
 */
export async function authorizationContext(definition: McpServerDefinition, authProvider?: OAuthClientProvider): Promise<string> {
  let token: string | undefined;
  try {
    token = (await authProvider?.tokens())?.access_token;
  } catch {
    token = undefined; // unreadable tokens: the connection will ask again; its partition is the one without
  }
  const sorted = (record: Readonly<Record<string, string>> | undefined) => Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const material = JSON.stringify([sorted(definition.headers), sorted(definition.env), token ?? null]);
  return createHash('sha256').update(material).digest('base64url').slice(0, 32);
}
