/**
 * The requests of one streamable HTTP connection that wait for an answer,
 * by session: the client's, crossed off as answers arrive and failed when the
 * session they were sent in is lost; and the transport's own (a new session's
 * `initialize`), whose answers stop here instead of reaching the client, which
 * never asked.
 */
import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/client';

export type RequestId = string | number;

/** A JSON-RPC answer to a request of the transport's own. */
export interface Answer {
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly message?: string };
}

/** JSON-RPC "connection closed", as the SDK rejects requests of a closed connection (the mcp plugin reports PLN_E_MCP_DISCONNECTED). */
const CONNECTION_CLOSED = -32000;

export class RequestLedger {
  /** The client's requests not answered yet → the session they were sent in (undefined: being sent again). */
  readonly #unanswered = new Map<RequestId, string | undefined>();
  /** Requests of the transport's own → who waits for the answer. */
  readonly #ours = new Map<RequestId, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  #deliver: ((message: JSONRPCMessage) => void) | undefined;

  /**
   * Puts the ledger in front of the handler the client sets as `transport.onmessage`.
   * The handler is captured when read, so that the SDK's chaining of an earlier
   * handler (`prev = t.onmessage; t.onmessage = (m) => { prev(m); … }`) cannot loop.
   */
  install(transport: Transport): void {
    let handler: Transport['onmessage'];
    Object.defineProperty(transport, 'onmessage', {
      configurable: true,
      enumerable: true,
      get: () => {
        const current = handler;
        return current && ((message: JSONRPCMessage, extra?: Parameters<NonNullable<Transport['onmessage']>>[1]) => void (this.#received(message) || current(message, extra)));
      },
      set: (value: Transport['onmessage']) => {
        handler = value;
      },
    });
    this.#deliver = (message) => transport.onmessage?.(message);
  }

  /** The client sent requests `ids` in `session` (undefined: they are about to be sent again, in a new one). */
  sent(ids: readonly RequestId[], session: string | undefined): void {
    for (const id of ids) this.#unanswered.set(id, session);
  }

  /** Requests that will not be answered through this ledger (their send failed, the client cancelled them). */
  forget(ids: readonly RequestId[]): void {
    for (const id of ids) this.#unanswered.delete(id);
  }

  /** Waits for the answer to the transport's own request `id`, at most `ms`; `cancel(id)` withdraws the wait. */
  expect(id: RequestId, ms: number): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#ours.delete(id);
        reject(new Error(`no answer within ${ms} ms`));
      }, ms);
      timer.unref();
      const settle = <T>(done: (value: T) => void) => (value: T) => {
        clearTimeout(timer);
        this.#ours.delete(id);
        done(value);
      };
      this.#ours.set(id, { resolve: settle(resolve), reject: settle(reject) });
    });
  }

  /** Withdraws the wait for `id`, rejecting it with `reason`. */
  cancel(id: RequestId, reason: string): void {
    this.#ours.get(id)?.reject(new Error(reason));
  }

  /** Fails the client's requests `lost` had accepted: the server that forgot the session will not answer them. */
  abandon(lost: string): void {
    for (const [id, session] of [...this.#unanswered]) {
      if (session !== lost) continue;
      this.#unanswered.delete(id);
      this.#deliver?.({
        jsonrpc: '2.0',
        id,
        error: { code: CONNECTION_CLOSED, message: 'the server lost the session this request was sent in (it restarted?) and will not answer it; a new session was started' },
      });
    }
  }

  /** The connection closed: the SDK fails the client's requests itself; ours are rejected. */
  close(): void {
    for (const id of [...this.#ours.keys()]) this.cancel(id, 'the transport closed');
    this.#unanswered.clear();
  }

  /** Whether `message` answered a request of the transport's own (and so is not the client's). */
  #received(message: JSONRPCMessage): boolean {
    const { id, method } = message as { id?: RequestId; method?: unknown };
    if (id === undefined || method !== undefined) return false;
    const ours = this.#ours.get(id);
    if (ours) {
      ours.resolve(message as Answer);
      return true;
    }
    this.#unanswered.delete(id);
    return false;
  }
}
