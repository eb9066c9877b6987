/**
 * A server's resources: every page of the list and of the templates, reading
 * one (with its text formatted for a terminal), and subscriptions, shared by
 * listeners of one URI: the first sends `resources/subscribe`, the last
 * disposer `resources/unsubscribe`, and each `notifications/resources/updated`
 * reaches every listener of its URI.
 */
import type { Client, ReadResourceResult, Resource, ResourceTemplateType } from '@modelcontextprotocol/client';
import type { Disposer, Logger } from 'plinth/sdk';
import { orThrow } from './classify.js';
import { DEFAULT_INPUT_ROUNDS, requestInRounds } from './input-required.js';
import { requestMeta } from './request-meta.js';
import { formatResourceContents, type ResourceContent } from './format.js';
import { paginate } from './tools.js';
import type { ResourceInfo, ResourceRead, ResourceTemplateInfo } from './types.js';

/** What the resource and prompt requests need from their server. */
export interface CatalogContext {
  readonly client: Client;
  readonly server: string;
  readonly timeoutMs: number;
  readonly redact: (text: string) => string;
  readonly log: Logger;
  /** Rounds of `input_required` answered per `prompts/get` or `resources/read` (default DEFAULT_INPUT_ROUNDS). */
  readonly inputRounds?: number;
  /** The log level asked of a 2026-07-28 server per request (the plugin's `serverLogLevel`). */
  readonly serverLogLevel?: string;
}

/** Every resource of the server (none when it offers no resources). */
export async function listResources(context: CatalogContext): Promise<ResourceInfo[]> {
  const { client, server, timeoutMs } = context;
  if (!client.getServerCapabilities()?.resources) return [];
  const listed = await orThrow({ what: 'resources/list', server, timeoutMs, redact: context.redact }, () =>
    paginate<Resource>(async (cursor) => {
      const page = await client.listResources(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
      return { items: page.resources, nextCursor: page.nextCursor };
    }),
  );
  return listed.map((r) => ({
    server,
    uri: r.uri,
    name: r.name,
    ...(r.title !== undefined && { title: r.title }),
    ...(r.mimeType !== undefined && { mimeType: r.mimeType }),
    ...(r.description !== undefined && { description: r.description }),
    ...(r.size !== undefined && { size: r.size }),
  }));
}

/** Every resource template of the server. */
export async function listResourceTemplates(context: CatalogContext): Promise<ResourceTemplateInfo[]> {
  const { client, server, timeoutMs } = context;
  if (!client.getServerCapabilities()?.resources) return [];
  const listed = await orThrow({ what: 'resources/templates/list', server, timeoutMs, redact: context.redact }, () =>
    paginate<ResourceTemplateType>(async (cursor) => {
      const page = await client.listResourceTemplates(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
      return { items: page.resourceTemplates, nextCursor: page.nextCursor };
    }),
  );
  return listed.map((t) => ({
    server,
    uriTemplate: t.uriTemplate,
    name: t.name,
    ...(t.title !== undefined && { title: t.title }),
    ...(t.mimeType !== undefined && { mimeType: t.mimeType }),
    ...(t.description !== undefined && { description: t.description }),
  }));
}

/** One resource's contents, and the same as terminal text. */
export async function readResource(context: CatalogContext, uri: string): Promise<ResourceRead> {
  const { client, server, timeoutMs } = context;
  const meta = requestMeta(client, { logLevel: context.serverLogLevel });
  const rounds = { client, what: `resources/read ${uri} on server "${server}"`, rounds: context.inputRounds ?? DEFAULT_INPUT_ROUNDS, timeoutMs, signal: new AbortController().signal };
  const outcome = await orThrow({ what: `resources/read ${uri}`, server, timeoutMs, redact: context.redact }, () =>
    requestInRounds(rounds, { uri, ...(meta && { _meta: meta }) }, (params, remaining) =>
      // A round after the first carries answers: its result is never cached (nor served from the cache).
      client.readResource(params as never, { timeout: remaining, allowInputRequired: true, ...(params !== undefined && ('inputResponses' in params || 'requestState' in params) && { cacheMode: 'bypass' as const }) }),
    ),
  );
  const result = (outcome as { result: ReadResourceResult }).result;
  const contents = result.contents as ReadonlyArray<Record<string, unknown>>;
  return { contents, text: formatResourceContents(contents as readonly ResourceContent[]) };
}

/** The subscriptions of one server. */
export interface Subscriptions {
  subscribe(uri: string, listener: () => void): Promise<Disposer>;
  /** A `notifications/resources/updated` arrived. */
  updated(uri: string): void;
  /** The server is gone: forget every listener (nothing to unsubscribe from). */
  clear(): void;
}

export function createSubscriptions(context: CatalogContext): Subscriptions {
  const { client, server, timeoutMs } = context;
  const listeners = new Map<string, Set<() => void>>();
  // One subscribe request per URI, shared by listeners that arrive while it runs.
  const pending = new Map<string, Promise<void>>();

  return {
    async subscribe(uri, listener) {
      let set = listeners.get(uri);
      if (!set) {
        let request = pending.get(uri);
        if (!request) {
          request = orThrow({ what: `resources/subscribe ${uri}`, server, timeoutMs, redact: context.redact }, async () => {
            await client.subscribeResource({ uri }, { timeout: timeoutMs });
          });
          pending.set(uri, request);
          request.then(
            () => pending.delete(uri),
            () => pending.delete(uri),
          );
        }
        await request;
        set = listeners.get(uri) ?? new Set();
        listeners.set(uri, set);
      }
      const own = () => listener();
      set.add(own);
      let disposed = false;
      return () => {
        if (disposed) return;
        disposed = true;
        const current = listeners.get(uri);
        if (!current?.delete(own) || current.size > 0) return;
        listeners.delete(uri);
        client.unsubscribeResource({ uri }, { timeout: timeoutMs }).catch((error: unknown) => {
          context.log.debug(context.redact(`server "${server}": resources/unsubscribe ${uri} failed: ${error instanceof Error ? error.message : String(error)}`));
        });
      };
    },
    updated(uri) {
      for (const listener of [...(listeners.get(uri) ?? [])]) {
        try {
          listener();
        } catch (error) {
          context.log.warn(`server "${server}": a listener of resource ${uri} failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    },
    clear() {
      listeners.clear();
    },
  };
}
