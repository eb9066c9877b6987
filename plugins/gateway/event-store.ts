/**
 * The gateway's HTTP front keeps what it sent on each session's SSE streams,
 * so that a client whose stream broke reconnects with `Last-Event-ID` and gets
 * what it missed (the SDK's StreamableHTTPServerTransport replays from an
 * `eventStore`, and with one it opens every stream with a priming event: an id
 * and `retry:`). One store per session, bounded: the newest `maxEvents`
 * events and `maxBytes` of them are kept, older ones dropped; an id that was
 * dropped (or never was) is refused with HTTP 400, and the client starts over.
 */
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

interface Stored {
  readonly id: string;
  readonly streamId: string;
  /** Undefined for a priming event (it carries no message and is not replayed). */
  readonly message: JSONRPCMessage | undefined;
  readonly bytes: number;
}

/** A bounded in-memory EventStore for one session. */
export class BoundedEventStore implements EventStore {
  readonly #events: Stored[] = [];
  readonly #byId = new Map<string, Stored>();
  #next = 1;
  #bytes = 0;

  constructor(
    private readonly maxEvents = 1000,
    private readonly maxBytes = 4 * 1024 * 1024,
  ) {}

  /** Events kept now. */
  get size(): number {
    return this.#events.length;
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = String(this.#next++);
    const real = 'jsonrpc' in message ? message : undefined;
    const stored: Stored = { id, streamId, message: real, bytes: real ? JSON.stringify(real).length : 0 };
    this.#events.push(stored);
    this.#byId.set(id, stored);
    this.#bytes += stored.bytes;
    while (this.#events.length > this.maxEvents || (this.#bytes > this.maxBytes && this.#events.length > 1)) {
      const dropped = this.#events.shift()!;
      this.#byId.delete(dropped.id);
      this.#bytes -= dropped.bytes;
    }
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#byId.get(eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.#byId.get(lastEventId);
    if (!last) throw new Error(`event ${lastEventId} is not kept (any more)`);
    const after = Number(last.id);
    for (const event of this.#events) {
      if (event.streamId !== last.streamId || Number(event.id) <= after || event.message === undefined) continue;
      await send(event.id, event.message);
    }
    return last.streamId;
  }
}
