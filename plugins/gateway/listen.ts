/**
 * What a modern client's `subscriptions/listen` asks of the gateway beyond list changes: the
 * resources whose updates it wants (the gateway subscribes upstream for it while it listens).
 */

/** The resource URIs a `subscriptions/listen` request asks updates for (none for any other message). */
export function listenedUris(message: unknown): readonly string[] {
  const m = message as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } } | null;
  if (!m || m.method !== 'subscriptions/listen') return [];
  const uris = m.params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : [];
}
