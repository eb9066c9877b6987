/**
 * What commands print: human text or JSON on stdout, notes on stderr, always
 * redacted, and always safe for a terminal: text from servers, hooks and
 * plugins reaches here, so escape sequences and other control characters are
 * shown, never sent (`safeText`; JSON through `safeJson`, which keeps it the
 * same document).
 */
import { Writable } from 'node:stream';
import type { CommandOutput } from '../sdk/commands.js';
import { formatError, safeJson, safeText } from '../sdk/format.js';
import { type PlinthError, describeCause, isPlinthError } from '../sdk/errors.js';
import type { Redactor } from '../internal/text/redact.js';
import { writeStandard } from '../internal/terminal/std-streams.js';

export interface Streams {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The process's streams; whatever the CLI writes to them (help, warnings, output) is made safe here last. */
export const processStreams: Streams = {
  stdout: (text) => writeStandard(process.stdout, safeText(text)),
  stderr: (text) => writeStandard(process.stderr, safeText(text)),
};

/** stdout kept for one writer: see {@link reserveStdout}. */
export interface ReservedStdout {
  /** The process's streams, with `stdout` writing to the real one. */
  readonly streams: Streams;
  /** A stream onto the real stdout, for a protocol that owns it (`serve --stdio`). */
  readonly output: NodeJS.WritableStream;
  /** Gives stdout back to everyone. */
  restore(): void;
}

/**
 * Keeps stdout for one writer — a `--json` run's one document, `serve
 * --stdio`'s MCP messages — because anything else on it breaks what reads
 * it: everything else that writes to stdout in this process (a plugin's
 * `console.log`, a library's banner) goes to stderr until `restore`. Only the
 * returned `streams.stdout` and `output` reach the real stdout.
 */
export function reserveStdout(): ReservedStdout {
  const stdout = process.stdout;
  const ownWrite = stdout.write;
  const toStderr = ((chunk: unknown, ...rest: unknown[]) => (process.stderr.write as (...args: unknown[]) => boolean)(chunk, ...rest)) as typeof stdout.write;
  stdout.write = toStderr;
  const gone = () => stdout.destroyed || stdout.writableEnded;
  return {
    streams: {
      stdout: (text) => {
        if (!gone()) ownWrite.call(stdout, safeText(text));
      },
      stderr: processStreams.stderr,
    },
    output: new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        if (gone()) return done();
        // The real stdout's own backpressure: the callback runs once the chunk is handed on.
        (ownWrite as (chunk: Buffer | string, callback: () => void) => boolean).call(stdout, chunk, () => done());
      },
    }),
    restore: () => {
      if (stdout.write === toStderr) stdout.write = ownWrite;
    },
  };
}

export function createOutput(streams: Streams, redactor: Redactor): CommandOutput {
  return {
    print: (text) => streams.stdout(`${safeText(redactor.text(text))}\n`),
    json: (value) => streams.stdout(`${safeJson(redactor.text(JSON.stringify(redactor.value(value), null, 2)))}\n`),
    note: (text) => streams.stderr(`${safeText(redactor.text(text))}\n`),
  };
}

/** Prints an error for a person (stderr) or a script (`--json`, stdout). */
export function printError(error: unknown, json: boolean, streams: Streams, redactor: Redactor): void {
  if (json) {
    const body = isPlinthError(error) ? (error as PlinthError).toJSON() : { message: describeCause(error) };
    streams.stdout(`${safeJson(redactor.text(JSON.stringify({ error: redactor.value(body) }, null, 2)))}\n`);
  } else {
    streams.stderr(`${safeText(redactor.text(formatError(error)))}\n`);
  }
}

export { formatError, formatTable as table } from '../sdk/format.js';
