/**
 * The SDK's StreamableHTTPClientTransport, keeping its session through a
 * server restart and ending it when closed. The SDK keeps the session
 * (`mcp-session-id`) and resumes a broken SSE stream with `Last-Event-ID` by
 * itself; what it leaves to the caller:
 *
 * - **A session the server no longer knows** (HTTP 404, see ./session-fetch.ts
 *   for the 400s some servers send instead): the specification says the client
 *   MUST start a new session with a new InitializeRequest. Here the transport
 *   repeats the client's own `initialize` (same capabilities, same client info)
 *   and `notifications/initialized`, then sends the refused message again, once:
 *   the caller sees its answer, not the 404. Requests the old session had
 *   accepted and not answered will never be answered: they are failed with
 *   JSON-RPC `-32000` (connection closed), so no call waits for its timeout.
 * - **A server that cannot be reached** (connection refused, no route) once
 *   connected: the server is down. The transport tells `onDown` listeners and
 *   closes, so every pending request fails at once and the client's `onclose`
 *   runs (the mcp plugin marks the server disconnected, the health plugin
 *   reconnects it with backoff).
 * - **The DELETE that ends the session** (`terminateSession`), which `close()`
 *   sends first, within a time limit.
 *
 * A subclass, not a wrapper, so everything else of the SDK class (`sessionId`,
 * `finishAuth` for OAuth, `resumeStream`, `protocolVersion`) stays as it is.
 * Its requests go through `fetchWithOwnSignals`, so that the transport's one
 * abort signal does not collect a listener per request (see ../mcp/request-signals.ts).
 * Loaded on the first `create()`: it imports the SDK.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { StreamableHTTPClientTransportOptions, JSONRPCMessage } from '@modelcontextprotocol/client';
import type { Disposer, Logger } from 'plinth/sdk';
import { fetchWithOwnSignals } from 'plinth/sdk';
import { connectionCode, sessionFetch, sessionGone, type SessionFetchEvents } from './session-fetch.js';
import { RequestLedger, type RequestId } from './session-ledger.js';

export interface SessionOptions {
  /** How long the DELETE may take before the transport closes anyway. */
  readonly terminateTimeoutMs: number;
  /** How long starting a new session (initialize) may take, after the server lost the old one. */
  readonly renewTimeoutMs: number;
  readonly log: Logger;
  readonly redact: (text: string) => string;
  /** For log lines. */
  readonly server: string;
}

type SendOptions = Parameters<StreamableHTTPClientTransport['send']>[1];

/** Streamable HTTP that starts a new session when the server lost its own, and terminates the session on close. */
export class SessionHttpTransport extends StreamableHTTPClientTransport {
  readonly #session: SessionOptions;
  #closing: Promise<void> | undefined;
  /** The client's `initialize` params, repeated to start a new session. */
  #handshake: unknown;
  /** The client finished its handshake: from then on an unreachable server is a server down. */
  #ready = false;
  #renewing: Promise<void> | undefined;
  /** The server went away (set before the listeners hear it, so that they cannot start it twice). */
  #lost = false;
  #renewals = 0;
  readonly #ledger = new RequestLedger();
  readonly #down = new Set<(reason: string) => void>();
  /** Messages of our own, not the client's. */
  readonly #own = new WeakSet<object>();
  /**
   * Runs in the asynchronous context the transport was made in. A new session
   * is started from whichever request found the old one lost; its standalone
   * stream must not carry that request's context (the mcp plugin tells by it
   * which call a server's request came along), so it starts from here.
   */
  readonly #outside = AsyncLocalStorage.snapshot();

  constructor(url: URL, options: StreamableHTTPClientTransportOptions, session: SessionOptions) {
    const events: SessionFetchEvents = { sessionLost: () => undefined, unreachable: () => undefined, closed: () => false };
    super(url, { ...options, fetch: fetchWithOwnSignals(sessionFetch(options.fetch, events)) });
    this.#session = session;
    events.sessionLost = (lost) => void this.#renew(lost).catch(() => undefined); // a failure closes the transport
    events.unreachable = (error) => {
      if (this.#ready) this.#lose(`the server cannot be reached at ${url.origin} (${describe(error)})`);
    };
    events.closed = () => this.#closing !== undefined || this.#lost;
    this.#ledger.install(this);
  }

  /** Calls `listener` when the server goes away (it cannot be reached, or refused a new session); the transport closes right after. */
  onDown(listener: (reason: string) => void): Disposer {
    this.#down.add(listener);
    return () => void this.#down.delete(listener);
  }

  /** Sends `message` in the current session; when the server answers that it lost the session, in a new one. */
  override async send(message: JSONRPCMessage | JSONRPCMessage[], options?: SendOptions): Promise<void> {
    // Ours (a new session's handshake, sent again by the SDK after an OAuth sign-in): straight through.
    if (this.#own.has(message)) return super.send(message, options);
    const messages = Array.isArray(message) ? message : [message];
    for (const m of messages) this.#note(m);
    await this.#renewing?.catch(() => undefined); // a new session is being started: send in that one
    const session = this.sessionId;
    const requests = messages.filter((m) => isRequest(m) && m.method !== 'initialize').map((m) => (m as { id: RequestId }).id);
    this.#ledger.sent(requests, session);
    try {
      await super.send(message, options);
    } catch (error) {
      const retry = session !== undefined && this.#closing === undefined && !messages.some(isInitialize) && (await lostSession(error));
      if (!retry) {
        this.#ledger.forget(requests);
        throw error;
      }
      // Never reached the server: sent again below, not among the requests the lost session leaves unanswered.
      this.#ledger.sent(requests, undefined);
      try {
        await this.#renew(session);
        this.#ledger.sent(requests, this.sessionId);
        await super.send(message, options);
      } catch (failure) {
        this.#ledger.forget(requests);
        throw failure;
      }
    }
  }

  /** Sends the session's DELETE (bounded), then closes the streams. Safe to call more than once. */
  override close(): Promise<void> {
    this.#closing ??= this.#terminateThenClose();
    return this.#closing;
  }

  // ---- the client's messages -------------------------------------------------

  /** Remembers what a new session needs (the handshake), and forgets requests the client gave up. */
  #note(message: JSONRPCMessage): void {
    const { method, params } = message as { method?: unknown; params?: { requestId?: RequestId } };
    if (method === 'initialize') this.#handshake = params;
    else if (method === 'notifications/initialized') this.#ready = true;
    else if (method === 'notifications/cancelled' && params?.requestId !== undefined) this.#ledger.forget([params.requestId]);
  }

  // ---- a new session ---------------------------------------------------------

  /** Starts a new session in place of `lost` (once, however many requests found it lost). Rejects when none could be started. */
  #renew(lost: string): Promise<void> {
    if (this.#closing) return Promise.reject(new Error('the transport is closed'));
    if (this.#renewing) return this.#renewing;
    if (this.sessionId !== lost) return Promise.resolve(); // renewed already
    this.#renewing = this.#outside(() => this.#newSession(lost)).finally(() => (this.#renewing = undefined));
    return this.#renewing;
  }

  async #newSession(lost: string): Promise<void> {
    const { log, server, renewTimeoutMs } = this.#session;
    const id = `plinth-session-${++this.#renewals}`;
    try {
      if (this.#handshake === undefined) throw new Error('the client never initialized');
      log.info(`${server}: the server no longer knows this client's session (it restarted?): starting a new session`);
      const answer = this.#ledger.expect(id, renewTimeoutMs);
      answer.catch(() => undefined); // awaited below, unless the send fails first (then cancelled, not awaited)
      // The fetch leaves the old session id off an initialize (./session-fetch.ts); the answer's header sets the new one.
      await super.send(this.#mine({ jsonrpc: '2.0', id, method: 'initialize', params: this.#handshake as Record<string, unknown> }));
      const answered = await answer;
      if (answered.error) throw new Error(`initialize was refused: ${answered.error.message ?? 'no reason given'}`);
      const version = answered.result?.protocolVersion;
      if (typeof version === 'string') this.setProtocolVersion(version);
      await super.send(this.#mine({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    } catch (error) {
      this.#ledger.cancel(id, 'no new session');
      const reason = `the server lost this client's session and no new one could be started: ${describe(error)}`;
      this.#lose(reason);
      throw new Error(reason, { cause: error });
    }
    log.info(`${server}: new session started`);
    this.#ledger.abandon(lost);
  }

  #mine(message: JSONRPCMessage): JSONRPCMessage {
    this.#own.add(message);
    return message;
  }

  // ---- the end -----------------------------------------------------------------

  /** The server is gone: tell the listeners (their reason then explains the close), then close without the DELETE (nobody is there to receive it). */
  #lose(reason: string): void {
    if (this.#closing || this.#lost) return;
    this.#lost = true;
    this.#session.log.debug(this.#session.redact(`${this.#session.server}: ${reason}`));
    for (const listener of [...this.#down]) {
      try {
        listener(reason);
      } catch {
        // A listener's failure must not keep the transport open.
      }
    }
    this.#closing ??= this.#closeStreams();
  }

  async #terminateThenClose(): Promise<void> {
    if (this.sessionId !== undefined) {
      // A refused or slow DELETE is not the caller's error: the session ends on our side regardless.
      const onerror = this.onerror;
      this.onerror = undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          this.terminateSession(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${this.#session.terminateTimeoutMs} ms`)), this.#session.terminateTimeoutMs);
          }),
        ]);
      } catch (error) {
        this.#session.log.debug(this.#session.redact(`${this.#session.server}: session not terminated: ${describe(error)}`));
      } finally {
        clearTimeout(timer);
        this.onerror = onerror;
      }
    }
    await this.#closeStreams();
  }

  /** Closes the streams (aborting a DELETE still under way too: its signal follows the transport's) and settles what waits. */
  async #closeStreams(): Promise<void> {
    this.#ledger.close();
    await super.close();
  }
}

/** Whether the SDK's error for a refused POST says the server lost the session. */
async function lostSession(error: unknown): Promise<boolean> {
  if (typeof error !== 'object' || error === null) return false;
  const { status, message } = error as { status?: unknown; message?: unknown };
  // SdkHttpError: `status` is the HTTP status, the message quotes the body.
  return typeof status === 'number' && sessionGone(status, async () => String(message ?? ''));
}

function isRequest(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId; method: string } {
  return 'method' in message && 'id' in message && message.id !== undefined;
}

function isInitialize(message: JSONRPCMessage): boolean {
  return 'method' in message && message.method === 'initialize';
}

function describe(error: unknown): string {
  return connectionCode(error) ?? (error instanceof Error ? error.message : String(error));
}
