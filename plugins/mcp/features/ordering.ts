/**
 * Keeps a request's notifications ahead of its response.
 *
 * The SDK (1.x) dispatches notifications one microtask late but responses at
 * once, so a `notifications/progress` that arrives in the same read as the
 * response it belongs to (a tool that reports progress right before
 * returning) finds its handler already retired: the progress is lost and
 * `onerror` reports "a progress notification for an unknown token"
 * (modelcontextprotocol/typescript-sdk#2580). Delaying each response by one
 * microtask lets the notifications read before it run first, in arrival order.
 */
import type { Client, JSONRPCMessage } from '@modelcontextprotocol/client';

const ordered = new WeakSet<object>();

/** Wraps the connected client's transport once; a no-op before `connect` or when already done. */
export function keepNotificationsBeforeResponses(client: Client): void {
  const transport = client.transport;
  const deliver = transport?.onmessage;
  if (!transport || !deliver || ordered.has(transport)) return;
  ordered.add(transport);
  transport.onmessage = (message, extra) => {
    if (isResponse(message)) queueMicrotask(() => deliver.call(transport, message, extra));
    else deliver.call(transport, message, extra);
  };
}

function isResponse(message: JSONRPCMessage): boolean {
  return !('method' in message) && 'id' in message;
}
