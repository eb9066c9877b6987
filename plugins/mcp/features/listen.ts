/**
 * The change stream of a modern (2026-07-28) connection: one
 * `subscriptions/listen` per server, whose filter is what plinth needs — the
 * `list_changed` of tools, prompts and resources the server offers, and the
 * URIs someone subscribed to. Its notifications reach the client's
 * `setNotificationHandler` registrations, the same ones a legacy connection's
 * unsolicited notifications reach, so the rest of the features do not care
 * which era delivered them.
 *
 * A stream's filter cannot change: a new set of URIs opens a new stream and,
 * once it is acknowledged, closes the old one (no gap). A stream that drops
 * without the server's answer (`'remote'`: an HTTP stream cut, a server
 * restarted behind the same URL) is opened again, 250 ms after, doubling up
 * to 30 s, until it is acknowledged or the server is detached; what changed
 * meanwhile is unknown, so `gap` runs then (the caller lists again). A stream
 * the server ended on purpose (`'graceful'`) is not reopened. A legacy
 * connection has no stream: `resources/subscribe` and the unsolicited
 * notifications carry the same.
 */
import type { Client, McpSubscription, SubscriptionFilter } from '@modelcontextprotocol/client';
import type { Logger } from 'plinth/sdk';

const FIRST_RETRY_MS = 250;
/** The longest wait for a stream's acknowledgement: a server that never sends one must not hold up its connection for a whole call timeout. */
const MAX_ACK_MS = 10_000;
const MAX_RETRY_MS = 30_000;

/** What the stream needs from its server. */
export interface ListenContext {
  readonly client: Client;
  readonly server: string;
  readonly timeoutMs: number;
  readonly redact: (text: string) => string;
  readonly log: Logger;
}

/** One server's change stream. */
export interface ChangeStream {
  /** Whether this connection is modern: changes come on a stream plinth opens, and `resources/subscribe` does not exist. */
  readonly modern: boolean;
  /** Opens the stream with the lists' `list_changed` (at attach). Never rejects: a refusal is logged. */
  open(): Promise<void>;
  /**
   * Sets the subscribed URIs and re-listens when they changed. Resolves with
   * the filter the server honoured; rejects when the new stream could not be
   * opened (the previous one, if any, stays).
   */
  setResources(uris: ReadonlySet<string>): Promise<SubscriptionFilter>;
  /** Closes the stream for good (detach). */
  close(): void;
}

/** `open` on a legacy connection, and everything after `close`, do nothing. */
export function createChangeStream(context: ListenContext, gap: () => void): ChangeStream {
  const { client, server, log } = context;
  const modern = client.getProtocolEra() === 'modern';
  let current: { subscription: McpSubscription; key: string } | undefined;
  let uris: readonly string[] = [];
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let retry: NodeJS.Timeout | undefined;
  // One change of stream at a time: a subscribe during a re-listen waits for it.
  let queue: Promise<unknown> = Promise.resolve();
  const honoured = new WeakMap<McpSubscription, SubscriptionFilter>();

  const wanted = (): SubscriptionFilter => {
    const offered = client.getServerCapabilities() ?? {};
    const filter: SubscriptionFilter = {};
    if (offered.tools?.listChanged) filter.toolsListChanged = true;
    if (offered.prompts?.listChanged) filter.promptsListChanged = true;
    if (offered.resources?.listChanged) filter.resourcesListChanged = true;
    if (offered.resources?.subscribe && uris.length > 0) filter.resourceSubscriptions = [...uris];
    return filter;
  };

  /** Opens a stream with the wanted filter unless the open one has it; the old one closes once the new one is acknowledged. */
  const apply = async (): Promise<SubscriptionFilter> => {
    const filter = wanted();
    const key = JSON.stringify(filter);
    if (current?.key === key) return honoured.get(current.subscription) ?? filter;
    const previous = current;
    if (Object.keys(filter).length === 0) {
      current = undefined;
      void previous?.subscription.close();
      return filter;
    }
    const subscription = await client.listen(filter, { timeout: Math.min(context.timeoutMs, MAX_ACK_MS) });
    if (closed) {
      void subscription.close();
      return subscription.honoredFilter;
    }
    current = { subscription, key };
    honoured.set(subscription, subscription.honoredFilter);
    retryMs = FIRST_RETRY_MS;
    void subscription.closed.then((cause) => ended(subscription, cause));
    void previous?.subscription.close();
    return subscription.honoredFilter;
  };

  const serial = <T>(run: () => Promise<T>): Promise<T> => {
    const next = queue.then(run, run);
    queue = next.catch(() => undefined);
    return next;
  };

  const ended = (subscription: McpSubscription, cause: 'local' | 'graceful' | 'remote') => {
    if (closed || current?.subscription !== subscription) return;
    current = undefined;
    if (cause === 'graceful') {
      log.info(`server "${server}" ended its change stream (subscriptions/listen); changes are no longer followed until it reconnects`);
      return;
    }
    if (cause === 'remote') reopenLater();
  };

  const reopenLater = () => {
    if (closed || retry !== undefined) return;
    const delay = retryMs;
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    retry = setTimeout(() => {
      retry = undefined;
      void serial(apply).then(
        () => {
          if (closed) return;
          log.debug(`server "${server}": change stream reopened`);
          gap();
        },
        (error: unknown) => {
          log.debug(context.redact(`server "${server}": reopening the change stream failed (${message(error)}); trying again`));
          reopenLater();
        },
      );
    }, delay);
    retry.unref();
  };

  return {
    modern,
    async open() {
      if (!modern || closed) return;
      try {
        await serial(apply);
      } catch (error) {
        log.warn(context.redact(`server "${server}": its change stream (subscriptions/listen) could not be opened: ${message(error)}; list changes and resource updates are not followed`));
      }
    },
    setResources(next) {
      return serial(async () => {
        const before = uris;
        uris = [...next].sort();
        try {
          return await apply();
        } catch (error) {
          uris = before;
          throw error;
        }
      });
    },
    close() {
      if (closed) return;
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      retry = undefined;
      const open = current;
      current = undefined;
      void open?.subscription.close().catch(() => undefined);
    },
  };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
