/**
 * A child whose process starts once something asynchronous is ready (the
 * sandbox's decision and its proxy), returned at once so that `start()`
 * stays synchronous: its streams are pass-throughs joined to the real
 * process's when it starts; a kill before then means it never starts; a
 * refusal ends it as a child that never started, with the error.
 */
import { PassThrough } from 'node:stream';
import type { ChildEnd, ChildStopOptions, PlinthError } from 'plinth/sdk';
import type { InternalChild } from './child.js';

export function deferredChild(file: string, stdio: readonly ['pipe' | 'ignore', 'pipe' | 'ignore', 'pipe' | 'ignore'], ready: Promise<() => InternalChild>, onRefused: (end: ChildEnd) => void): InternalChild {
  const stdin = stdio[0] === 'pipe' ? new PassThrough() : null;
  const stdout = stdio[1] === 'pipe' ? new PassThrough() : null;
  const stderr = stdio[2] === 'pipe' ? new PassThrough() : null;
  let real: InternalChild | undefined;
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
      if (stdin && real.stdin) stdin.pipe(real.stdin);
      if (stdout && real.stdout) real.stdout.pipe(stdout);
      else stdout?.end();
      if (stderr && real.stderr) real.stderr.pipe(stderr);
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
    stdout,
    stderr,
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
