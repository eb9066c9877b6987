/**
 * One health check of one server: MCP `ping` with a time limit, or, for a
 * server that answers ping with "method not found", the cheapest list request
 * its capabilities allow. A modern (2026-07-28) connection has no `ping`: it
 * is checked with `server/discover`, which every modern server must answer.
 * No check is ever answered from the client's response cache (a server's
 * `ttlMs` would let a dead server look alive): `discover` does not read it,
 * and list requests go with `cacheMode: 'bypass'`. Only the SDK's types are
 * imported: the client comes from the `mcp` service, so checking a server
 * loads nothing.
 */
import type { Client } from '@modelcontextprotocol/client';
import type { ServerHealth } from 'plinth/sdk';

/** The request a check sends. */
export type ProbeMethod = ServerHealth['probe'];

/** What one check found. */
export type ProbeOutcome =
  | { readonly ok: true; readonly method: ProbeMethod; readonly latencyMs: number }
  | {
      readonly ok: false;
      readonly method: ProbeMethod;
      readonly latencyMs: number;
      readonly reason: string;
      /** The connection itself is gone (closed, not connected): a restart case, not a slow server. */
      readonly down: boolean;
    };

// JSON-RPC and SDK error codes, by value: importing the SDK's enums would load the SDK.
const METHOD_NOT_FOUND = -32601;
/**
 * Not the server's answer: the connection closed under the request. The SDK rejects with its own
 * `CONNECTION_CLOSED` (or `NOT_CONNECTED`); plinth's transports answer what a dead connection
 * leaves with -32000 and the reason (v1's `ErrorCode.ConnectionClosed`).
 */
const CONNECTION_CLOSED: ReadonlySet<unknown> = new Set([-32000, 'CONNECTION_CLOSED', 'NOT_CONNECTED']);
/** Raised by the SDK itself when the request's timeout passed (`REQUEST_TIMEOUT`; -32001 in v1). */
const REQUEST_TIMEOUT: ReadonlySet<unknown> = new Set([-32001, 'REQUEST_TIMEOUT']);

/** Checks `client` once with `method` (falling back from `ping` when the server lacks it; `server/discover` on a modern connection). */
export async function probe(client: Client, asked: ProbeMethod, timeoutMs: number): Promise<ProbeOutcome> {
  const method = methodFor(client, asked);
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  try {
    await send(client, method, timeoutMs);
    return { ok: true, method, latencyMs: elapsed() };
  } catch (error) {
    const code = errorCode(error);
    if (code === METHOD_NOT_FOUND) {
      // ping is optional in practice; a list request shows the server answers just as well.
      if (method === 'ping') return probe(client, listMethod(client), timeoutMs);
      // The server answered, even if with an error: it is alive and responsive.
      return { ok: true, method, latencyMs: elapsed() };
    }
    const down = CONNECTION_CLOSED.has(code) || /not connected/i.test(message(error)) || connectionGone(error);
    return { ok: false, method, latencyMs: elapsed(), reason: describe(method, code, error, timeoutMs), down };
  }
}

/** `server/discover` on a modern connection (it has no ping); on a legacy one, `ping` or the list request it fell back to. */
export function methodFor(client: Client, asked: ProbeMethod): ProbeMethod {
  const modern = client.getProtocolEra?.() === 'modern';
  if (modern) return 'server/discover';
  return asked === 'server/discover' ? 'ping' : asked;
}

/** The cheapest list request the server declares; `tools/list` when it declares none. */
export function listMethod(client: Client): ProbeMethod {
  const capabilities = client.getServerCapabilities();
  if (capabilities?.tools) return 'tools/list';
  if (capabilities?.resources) return 'resources/list';
  if (capabilities?.prompts) return 'prompts/list';
  return 'tools/list';
}

async function send(client: Client, method: ProbeMethod, timeout: number): Promise<void> {
  // A cached list is no sign of life.
  const options = { timeout, cacheMode: 'bypass' as const };
  switch (method) {
    case 'ping':
      await client.ping({ timeout });
      return;
    case 'server/discover':
      await client.discover({ timeout });
      return;
    case 'tools/list':
      await client.listTools(undefined, options);
      return;
    case 'resources/list':
      await client.listResources(undefined, options);
      return;
    case 'prompts/list':
      await client.listPrompts(undefined, options);
      return;
  }
}

function describe(method: ProbeMethod, code: number | string | undefined, error: unknown, timeoutMs: number): string {
  if (REQUEST_TIMEOUT.has(code)) return `${method} got no answer within ${timeoutMs} ms`;
  if (CONNECTION_CLOSED.has(code)) return `the connection closed during ${method}`;
  if (connectionGone(error)) return `${method} failed: the connection to the server failed (${goneCode(error)})`;
  return `${method} failed: ${message(error)}`;
}

/**
 * Errors of the connection itself, as Node and its fetch name them: nothing
 * answers at a remote server's address (refused, no route, no such host), or
 * the connection broke under the check (reset, socket closed, pipe gone). The
 * server is down: a restart case, not a slow server to count failures for.
 */
const CONNECTION_GONE = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
]);

/** Whether `error`, or what caused it (fetch failed → connect ECONNREFUSED), is such a connection error. */
function connectionGone(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const { code, errors, cause } = error as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && CONNECTION_GONE.has(code)) return true;
  // Several addresses tried (localhost as ::1 and 127.0.0.1): gone when every one failed so.
  if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => connectionGone(e, depth + 1))) return true;
  return connectionGone(cause, depth + 1);
}

/** The first error code along `error`'s causes, for the reason line. */
function goneCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    const { code, errors, cause } = current as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof code === 'string') return code;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return 'no code';
}

/** The code of a `ProtocolError` (numeric, JSON-RPC) or an `SdkError` (a string), recognised by shape (the SDK may be another copy). */
function errorCode(error: unknown): number | string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'number' || typeof code === 'string' ? code : undefined;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
