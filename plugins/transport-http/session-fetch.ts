/**
 * The `fetch` under a streamable HTTP transport: where the transport learns
 * that the server forgot its session or cannot be reached at all, two things
 * the SDK's StreamableHTTPClientTransport treats as one more failed request.
 *
 * - An `initialize` never carries a session id: the transport specification
 *   says a new session starts with an InitializeRequest "without a session ID
 *   attached", and the SDK would attach the old one.
 * - A GET stream of a session the server answered before, now answered as an
 *   unknown session: the session is gone (`sessionLost`). The SDK would retry
 *   the stream with the dead session until its retries run out; answering it
 *   405 ("no stream offered") ends that quietly, and the new session opens a
 *   stream of its own. A GET refused on a session's first try is a server
 *   without GET streams, not a lost session (or every new session would be lost
 *   again).
 * - A request that could not reach the server at all (refused, no route, no
 *   such host): `unreachable`. After the transport closed, GET retries the SDK
 *   still has scheduled are answered 405 too, so they stop.
 */
import type { FetchLike } from '@modelcontextprotocol/client';

/** What the fetch tells its transport. */
export interface SessionFetchEvents {
  /** The server no longer knows `sessionId` (a GET stream it had served was refused). */
  sessionLost(sessionId: string): void;
  /** A request found nobody at the server's address. */
  unreachable(error: unknown): void;
  /** The transport is closed: nothing more to reopen. */
  closed(): boolean;
}

/** Connection errors that mean nothing answers at the address, as Node (and undici) name them. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

const SESSION_HEADER = 'mcp-session-id';

/** Wraps `base` (default: the global fetch, looked up at each call) for one transport. */
export function sessionFetch(base: FetchLike | undefined, events: SessionFetchEvents): FetchLike {
  // Sessions whose GET stream the server accepted once: only those can be lost by a later refusal.
  const streamed = new Set<string>();
  return async (url, init) => {
    const send = base ?? globalThis.fetch;
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method === 'GET' && events.closed()) return noStream();
    const headers = new Headers(init?.headers);
    let session = headers.get(SESSION_HEADER) ?? undefined;
    if (method === 'POST' && session !== undefined && isInitialize(init?.body)) {
      headers.delete(SESSION_HEADER);
      init = { ...init, headers };
      session = undefined;
    }
    let response: Response;
    try {
      response = await send(url, init);
    } catch (error) {
      if (isUnreachable(error)) events.unreachable(error);
      throw error;
    }
    if (method !== 'GET' || session === undefined) return response;
    if (response.ok) {
      streamed.add(session);
      return response;
    }
    if (!(await sessionGone(response.status, () => response.clone().text()))) return response;
    await response.body?.cancel().catch(() => undefined);
    if (streamed.delete(session)) events.sessionLost(session);
    return noStream();
  };
}

/**
 * Whether an HTTP answer to a request that carried a session id says the
 * session is unknown: 404, as the specification asks; or 400 naming the
 * session or an uninitialized server, as servers built on the SDK's examples
 * (server-everything among them) answer for a session they do not have.
 */
export async function sessionGone(status: number | undefined, body: () => Promise<string>): Promise<boolean> {
  if (status === 404) return true;
  if (status !== 400) return false;
  const text = await body().catch(() => '');
  return /session|not initialized/i.test(text);
}

/** Whether `error` (or what caused it) is a connection that found nobody at the address. */
export function isUnreachable(error: unknown): boolean {
  return connectionCode(error) !== undefined;
}

/** The code (ECONNREFUSED, …) of the connection failure behind `error`, when it is one that found nobody at the address. */
export function connectionCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 4) return undefined;
  const { code, errors, cause } = error as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && UNREACHABLE.has(code)) return code;
  // Several addresses tried (localhost as ::1 and 127.0.0.1): unreachable when every one was.
  if (Array.isArray(errors) && errors.length > 0) {
    const codes = errors.map((e) => connectionCode(e, depth + 1));
    if (codes.every((c) => c !== undefined)) return codes[0];
  }
  return connectionCode(cause, depth + 1);
}

/** The answer the SDK takes for "this server offers no GET stream": it stops trying, without an error. */
function noStream(): Response {
  return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
}

/** Whether a POST body is (or, in a batch, contains) an `initialize` request. */
function isInitialize(body: RequestInit['body'] | undefined): boolean {
  if (typeof body !== 'string' || !body.includes('"initialize"')) return false;
  try {
    const parsed: unknown = JSON.parse(body);
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
  } catch {
    return false;
  }
}
