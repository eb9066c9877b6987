/**
 * The last bytes a server wrote to stderr, for diagnosis (`plinth mcp status`,
 * the error of a server that failed to start). Bounded: older output is
 * dropped a whole line at a time, so that a secret cut in half at the edge
 * cannot survive redaction as a fragment.
 */

const NEWLINE = 0x0a;

/** A bounded tail of a byte stream. */
export class StderrTail {
  #chunks: Buffer[] = [];
  #size = 0;
  /** True once anything was dropped from the front. */
  #truncated = false;

  /** @param maxBytes the most bytes kept (at least 1). */
  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.length === 0) return;
    this.#chunks.push(bytes);
    this.#size += bytes.length;
    // Trimming copies the kept bytes, so let the buffer grow to twice the bound first.
    if (this.#size > 2 * this.maxBytes) this.#trim();
  }

  /** Bytes kept (never more than `maxBytes`). */
  get size(): number {
    if (this.#size > this.maxBytes) this.#trim();
    return this.#size;
  }

  /** The kept text, `…` first when older output was dropped. Not redacted: the caller does that. */
  text(): string {
    if (this.#size > this.maxBytes) this.#trim();
    const text = Buffer.concat(this.#chunks, this.#size).toString('utf8');
    return this.#truncated ? `…${text}` : text;
  }

  /** The last non-empty line, for one-line reasons. */
  lastLine(): string {
    const lines = this.text().split('\n').map((line) => line.trim()).filter((line) => line !== '');
    return lines.at(-1) ?? '';
  }

  #trim(): void {
    let all = Buffer.concat(this.#chunks, this.#size);
    all = all.subarray(all.length - this.maxBytes);
    // Start at a line boundary when one is in reach; otherwise at least at a character boundary.
    const newline = all.indexOf(NEWLINE);
    if (newline >= 0 && newline < all.length - 1) all = all.subarray(newline + 1);
    else while (all.length > 0 && (all[0]! & 0xc0) === 0x80) all = all.subarray(1);
    this.#chunks = [Buffer.from(all)];
    this.#size = all.length;
    this.#truncated = true;
  }
}
