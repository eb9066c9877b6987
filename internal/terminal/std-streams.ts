/**
 * Writing to the process's stdout and stderr when they may be gone. After the
 * terminal closes (SIGHUP) a write answers EIO; when the reader of a pipe has
 * exited it answers EPIPE. Node reports either as an `error` event on the
 * stream, and an `error` event nobody listens to ends the process: in the
 * middle of shutdown, that would leave MCP servers and other children running.
 */

const tolerant = new WeakSet<NodeJS.WritableStream>();

/**
 * From now on a failed write to stdout or stderr ends that stream's output
 * quietly instead of crashing the process. What was to be written has nowhere
 * to go, so nothing is lost that could have been shown. Idempotent.
 */
export function tolerateClosedStandardStreams(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (tolerant.has(stream)) continue;
    tolerant.add(stream);
    stream.on('error', () => stream.destroy());
  }
}

/** Writes `text` to `stream` unless it is already gone. */
export function writeStandard(stream: NodeJS.WriteStream, text: string): void {
  if (stream.destroyed || stream.writableEnded) return;
  stream.write(text);
}
