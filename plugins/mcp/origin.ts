/**
 * Which call a server's request came along with. A caller of `callTool` may
 * give an `origin` (any value: the gateway gives its downstream call); the
 * `tools/call` is sent inside it, and whatever the transport then delivers in
 * that call's own asynchronous context carries it: over streamable HTTP, the
 * messages the server sent on the call's response stream (the SDK's
 * `relatedRequestId`). The request handlers read it and hand it to the host's
 * `mcp:elicitation`, `mcp:sampling` and `mcp:roots`.
 *
 * Messages of connections opened during a call must not carry it: connection
 * attempts run outside every origin (`outsideCalls`), so a stdio server started
 * or restarted while a call was in flight does not lend that call to all its
 * later requests. Over stdio and legacy SSE nothing tells a request's call:
 * their requests carry no origin.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<{ readonly origin: unknown }>();

/** Runs `run` (the sending of one call) with `origin` as the origin of what arrives along it. */
export function withCallOrigin<T>(origin: unknown, run: () => T): T {
  return current.run({ origin }, run);
}

/** The origin of the call the current server request came along with; undefined when none is known. */
export function callOrigin(): unknown {
  return current.getStore()?.origin;
}

/** Runs `run` outside every call's origin (a connection, which outlives the call that started it). */
export function outsideCalls<T>(run: () => T): T {
  return current.exit(run);
}
