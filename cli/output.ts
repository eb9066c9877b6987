/**
 * What commands print: human text or JSON on stdout, notes on stderr, always
 * redacted, and always safe for a terminal: text from servers, hooks and
 * plugins reaches here, so escape sequences and other control characters are
 * shown, never sent (`safeText`; JSON through `safeJson`, which keeps it the
 * same document).
 */
import type { CommandOutput } from '../sdk/commands.js';
import { formatError, safeJson, safeText } from '../sdk/format.js';
import { type PlinthError, describeCause, isPlinthError } from '../sdk/errors.js';
import type { Redactor } from '../sdk/redact.js';
import { writeStandard } from '../sdk/std-streams.js';

export interface Streams {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The process's streams; whatever the CLI writes to them (help, warnings, output) is made safe here last. */
export const processStreams: Streams = {
  stdout: (text) => writeStandard(process.stdout, safeText(text)),
  stderr: (text) => writeStandard(process.stderr, safeText(text)),
};

/**
 * The process's streams for a `--json` run, where stdout is the command's one
 * document: everything else that writes to stdout in this process (a plugin's
 * `console.log`, a library's banner) goes to stderr until `restore`, so a
 * script reading stdout always gets valid JSON. Only the returned `stdout`
 * reaches the real one.
 */
export function reserveStdoutForJson(): { streams: Streams; restore(): void } {
  const stdout = process.stdout;
  const ownWrite = stdout.write;
  const toStderr = ((chunk: unknown, ...rest: unknown[]) => (process.stderr.write as (...args: unknown[]) => boolean)(chunk, ...rest)) as typeof stdout.write;
  stdout.write = toStderr;
  return {
    streams: {
      stdout: (text) => {
        if (!stdout.destroyed && !stdout.writableEnded) ownWrite.call(stdout, safeText(text));
      },
      stderr: processStreams.stderr,
    },
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
