/**
 * A child whose process starts once something asynchronous is ready (the
 * sandbox's decision and its proxy), returned at once so that `start()`
 * stays synchronous: its streams stand in for the real process's until it
 * starts, then forward to them; a kill before then means it never starts; a
 * refusal ends it as a child that never started, with the error.
 *
 * The stand-ins forward each chunk by hand rather than through `pipe()` and
 * pass-through streams: a persistent hook or server sends every request and
 * answer through them, and a pipe adds a stream hop and a tick each way.
 */
import { Readable, Writable } from 'node:stream';
import type { ChildEnd, ChildStopOptions, PlinthError } from 'plinth/sdk';
import type { InternalChild } from './child.js';

export function deferredChild(file: string, stdio: readonly ['pipe' | 'ignore', 'pipe' | 'ignore', 'pipe' | 'ignore'], ready: Promise<() => InternalChild>, onRefused: (end: ChildEnd) => void): InternalChild {
  let real: InternalChild | undefined;
  const input = stdio[0] === 'pipe' ? forwardedInput(() => real?.stdin ?? null) : null;
  const stdin = input?.stream ?? null;
  const stdout = stdio[1] === 'pipe' ? forwardedOutput() : null;
  const stderr = stdio[2] === 'pipe' ? forwardedOutput() : null;
  let cancelled: string | undefined;
  let settle: (end: ChildEnd) => void = () => {};
  let settleExit: (end: ChildEnd) => void = () => {};
  let spawned: (pid: number | undefined) => void = () => {};
  const ended = new Promise<ChildEnd>((resolve) => (settle = resolve));
  const exit = new Promise<ChildEnd>((resolve) => (settleExit = resolve));
  const started = new Promise<number | undefined>((resolve) => (spawned = resolve));
  let done = false;

  const finish = (end: ChildEnd): void => {
    done = true;
    stdout?.end();
    stderr?.end();
    stdin?.destroy();
    spawned(undefined);
    settleExit(end);
    settle(end);
  };

  void ready.then(
    (spawn) => {
      if (cancelled !== undefined) return finish({ exitCode: null, signal: 'SIGKILL' });
      real = spawn();
      spawned(real.pid);
      input?.started();
      if (stdout && real.stdout) stdout.from(real.stdout);
      else stdout?.end();
      if (stderr && real.stderr) stderr.from(real.stderr);
      else stderr?.end();
      void real.exit.then(settleExit);
      void real.ended.then((end) => {
        done = true;
        settle(end);
      });
    },
    (error: PlinthError) => {
      const end: ChildEnd = { exitCode: null, signal: null, spawnError: `${error.code ?? 'error'}: ${error.message}`, refused: error };
      onRefused(end);
      finish(end);
    },
  );

  const killFor = (reason: string): void => {
    if (real !== undefined) real.killFor(reason);
    else cancelled ??= reason;
  };
  return {
    get pid() {
      return real?.pid;
    },
    spawned: started,
    file,
    stdin,
    stdout: stdout?.stream ?? null,
    stderr: stderr?.stream ?? null,
    exit,
    ended,
    get exited() {
      return real !== undefined ? real.exited : done;
    },
    get stopping() {
      return real?.stopping ?? false;
    },
    kill: () => killFor('killed'),
    killFor,
    stop: (graces: ChildStopOptions) => {
      if (real !== undefined) return real.stop(graces);
      killFor('stopped');
      return ended;
    },
  };
}

/**
 * The child's stdin before and after it starts: what is written before is held (with its callback,
 * so the writer sees backpressure) and written once the real stdin exists; after, each write goes
 * straight to it. Ending or destroying it ends or destroys the real one.
 */
function forwardedInput(target: () => Writable | null): { stream: Writable; started(): void } {
  let held: { chunk: Buffer | string; encoding: BufferEncoding; done: (error?: Error | null) => void } | undefined;
  let ending: ((error?: Error | null) => void) | undefined;
  const write = (chunk: Buffer | string, encoding: BufferEncoding, done: (error?: Error | null) => void): void => {
    const to = target();
    if (to === null) {
      held = { chunk, encoding, done };
      return;
    }
    // The real stdin's own errors (EPIPE when the child is gone) are the child's to report; the writer is not failed by them.
    if (to.write(chunk, encoding)) done();
    else to.once('drain', () => done());
  };
  const stream = new Writable({
    decodeStrings: false,
    write,
    final(done) {
      const to = target();
      if (to === null) {
        ending = done;
        return;
      }
      to.end();
      done();
    },
    destroy(error, done) {
      target()?.destroy();
      done(error);
    },
  });
  return {
    stream,
    started() {
      const first = held;
      held = undefined;
      if (first) write(first.chunk, first.encoding, first.done);
      if (ending) {
        target()?.end();
        ending();
        ending = undefined;
      }
    },
  };
}

/**
 * The child's stdout or stderr: empty until the child starts, then each chunk of the real stream pushed
 * as it comes; the real stream is paused while the reader is behind, and resumed when it reads.
 */
function forwardedOutput(): { stream: Readable; from(source: NodeJS.ReadableStream): void; end(): void } {
  let source: NodeJS.ReadableStream | undefined;
  const stream = new Readable({
    read() {
      source?.resume();
    },
  });
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    stream.push(null);
  };
  return {
    stream,
    from(real) {
      source = real;
      real.on('data', (chunk: Buffer) => {
        if (!stream.push(chunk)) real.pause();
      });
      real.once('end', end);
      real.once('close', end);
      real.on('error', () => end());
    },
    end,
  };
}
