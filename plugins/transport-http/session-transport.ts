/**
 * The SDK's StreamableHTTPClientTransport, ending its session when closed.
 * The SDK keeps the session (`mcp-session-id`) and resumes a broken SSE
 * stream with `Last-Event-ID` by itself; what it leaves to the caller is the
 * DELETE that tells the server the session is over (`terminateSession`),
 * which `close()` here sends first, within a time limit.
 *
 * A subclass, not a wrapper, so everything else of the SDK class (`sessionId`,
 * `finishAuth` for OAuth, `resumeStream`, `protocolVersion`) stays as it is.
 * Its requests go through `fetchWithOwnSignals`, so that the transport's one
 * abort signal does not collect a listener per request (see ../mcp/request-signals.ts).
 * Loaded on the first `create()`: it imports the SDK.
 */
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Logger } from 'plinth/sdk';
import { fetchWithOwnSignals } from '../mcp/request-signals.js';

export interface SessionOptions {
  /** How long the DELETE may take before the transport closes anyway. */
  readonly terminateTimeoutMs: number;
  readonly log: Logger;
  readonly redact: (text: string) => string;
  /** For log lines. */
  readonly server: string;
}

/** Streamable HTTP whose `close()` terminates the session on the server first. */
export class SessionHttpTransport extends StreamableHTTPClientTransport {
  readonly #session: SessionOptions;
  #closing: Promise<void> | undefined;

  constructor(url: URL, options: StreamableHTTPClientTransportOptions, session: SessionOptions) {
    super(url, { ...options, fetch: fetchWithOwnSignals(options.fetch) });
    this.#session = session;
  }

  /** Sends the session's DELETE (bounded), then closes the streams. Safe to call more than once. */
  override close(): Promise<void> {
    this.#closing ??= this.#terminateThenClose();
    return this.#closing;
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
        this.#session.log.debug(this.#session.redact(`${this.#session.server}: session not terminated: ${error instanceof Error ? error.message : String(error)}`));
      } finally {
        clearTimeout(timer);
        this.onerror = onerror;
      }
    }
    // Aborts a DELETE still under way too: its signal follows the transport's (../mcp/request-signals.ts).
    await super.close();
  }
}
