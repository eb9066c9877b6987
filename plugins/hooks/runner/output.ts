/** Reading what a hook writes: strict UTF-8 for answers, a bounded tail of stderr. */

/** How much of the end of stderr a result keeps. */
export const STDERR_TAIL_BYTES = 2048;

const strict = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');

/** `bytes` as text, or undefined when they are not UTF-8 (binary output). A leading BOM is dropped. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The last `limit` bytes written to a stream; memory stays bounded however much is written. */
export class Tail {
  private bytes: Buffer = Buffer.alloc(0);
  /** Everything written since the last `reset`, counted. */
  total = 0;

  constructor(private readonly limit = STDERR_TAIL_BYTES) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.bytes =
      chunk.length >= this.limit
        ? Buffer.from(chunk.subarray(chunk.length - this.limit))
        : Buffer.concat([this.bytes, chunk]).subarray(-this.limit);
  }

  reset(): void {
    this.bytes = Buffer.alloc(0);
    this.total = 0;
  }

  /** The tail as text, starting at a character boundary; invalid bytes become U+FFFD. */
  text(): string {
    let start = 0;
    // Skip UTF-8 continuation bytes the cut left at the start.
    while (start < this.bytes.length && start < 3 && ((this.bytes[start] ?? 0) & 0xc0) === 0x80) start++;
    return lenient.decode(this.bytes.subarray(start));
  }
}
