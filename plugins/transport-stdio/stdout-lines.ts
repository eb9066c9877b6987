/**
 * A server's stdout as the stdio specification frames it: one JSON-RPC
 * message per line, parsed with the SDK's own `deserializeMessage` and bounded
 * as the SDK's `ReadBuffer` bounds it. Unlike `ReadBuffer`, it keeps what a
 * line that is not JSON-RPC said: a server that prints its logs (or a banner,
 * or a usage text) on stdout never answers `initialize`, and without the line
 * the only symptom is a connect timeout.
 */
import { STDIO_DEFAULT_MAX_BUFFER_SIZE, deserializeMessage } from '@modelcontextprotocol/client';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';

/** How much of the first line that is not JSON-RPC is kept: redacted whole (a secret cut in half would pass), then quoted shorter. */
const KEPT_CHARS = 4096;
/** How much of it a message quotes. */
const QUOTE_CHARS = 200;
const NEWLINE = 0x0a;

/** What one line was. */
export type StdoutLine = { readonly message: JSONRPCMessage } | { readonly notJsonRpc: Error };

/** The lines of stdout that were not JSON-RPC. */
export interface StdoutNoise {
  readonly lines: number;
  /** The first of them (its first {@link KEPT_CHARS} characters); not redacted (the caller does that). */
  readonly first: string;
}

export class StdoutLines {
  #buffer: Buffer | undefined;
  #messages = 0;
  #noise = 0;
  #first = '';

  /** Adds bytes; throws, and forgets what it held, past the SDK's bound for one line. */
  append(chunk: Buffer): void {
    const size = (this.#buffer?.length ?? 0) + chunk.length;
    if (size > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.clear();
      throw new Error(`the server wrote more than ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes on stdout without a line end`);
    }
    this.#buffer = this.#buffer ? Buffer.concat([this.#buffer, chunk]) : chunk;
  }

  /** The next complete line, or null until one is there. Blank lines are skipped. */
  next(): StdoutLine | null {
    for (;;) {
      const index = this.#buffer?.indexOf(NEWLINE) ?? -1;
      if (index === -1) return null;
      const line = this.#buffer!.toString('utf8', 0, index).replace(/\r$/, '');
      this.#buffer = this.#buffer!.subarray(index + 1);
      if (line.trim() === '') continue;
      try {
        const message = deserializeMessage(line);
        this.#messages++;
        return { message };
      } catch (error) {
        if (this.#noise++ === 0) this.#first = line.slice(0, KEPT_CHARS);
        return { notJsonRpc: error as Error };
      }
    }
  }

  /** How many JSON-RPC messages came. */
  get messages(): number {
    return this.#messages;
  }

  /** The lines that were not JSON-RPC, if any. */
  noise(): StdoutNoise | undefined {
    return this.#noise === 0 ? undefined : { lines: this.#noise, first: this.#first };
  }

  clear(): void {
    this.#buffer = undefined;
  }
}

/**
 * `wrote 3 lines on stdout that are not JSON-RPC (the first: "Listening on
 * port 3000")`, for a server that wrote no JSON-RPC at all; the line is redacted before it is shortened.
 */
export function describeNoise(noise: StdoutNoise, redact: (text: string) => string): string {
  const lines = noise.lines === 1 ? '1 line' : `${noise.lines} lines`;
  const first = redact(noise.first);
  const quoted = first.length > QUOTE_CHARS ? `${first.slice(0, QUOTE_CHARS)}…` : first;
  return `wrote ${lines} on stdout that ${noise.lines === 1 ? 'is' : 'are'} not JSON-RPC, and no JSON-RPC message (the first: ${JSON.stringify(quoted)})`;
}

/** What to do about it. */
export const NOISE_HINT = 'an MCP stdio server writes only JSON-RPC messages on stdout: its logs belong on stderr (console.error in Node, sys.stderr in Python); if it prints nothing else, check that "command" and "args" start an MCP server';
