/**
 * Spawn mode: one process per run. The input is written to stdin (a hook that
 * never reads it, or closes stdin at once, is fine: EPIPE is ignored), stdout
 * and stderr are read with a byte limit, and a timeout, an oversized output or
 * a cancellation kills the whole process tree at once.
 */
import { type Outcome, describeAbort } from './outcome.js';
import { Tail } from './output.js';
import { type HookProcess, type Launch, type ProcessOwner, startProcess } from './process.js';

export interface SpawnLimits {
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
}

export interface SpawnHooks {
  /** Each process while it runs, so that the runner can kill it on close. */
  readonly started?: (process: HookProcess) => void;
  readonly ended?: (process: HookProcess) => void;
  readonly onEscapees?: (pids: readonly number[]) => void;
}

export async function runOnce(
  owner: ProcessOwner,
  launch: Launch,
  inputLine: string,
  limits: SpawnLimits,
  signal?: AbortSignal,
  hooks: SpawnHooks = {},
): Promise<{ outcome: Outcome; stderrTail: string; sandboxHint?: string }> {
  const child = startProcess(owner, launch, { input: inputLine, ...(hooks.onEscapees ? { onEscapees: hooks.onEscapees } : {}) });
  hooks.started?.(child);

  const stdout: Buffer[] = [];
  const stderr = new Tail();
  let stdoutBytes = 0;
  /** Why we killed it, when we did: the first reason wins. */
  let stopped: Outcome | undefined;
  const stop = (why: Outcome): void => {
    if (stopped !== undefined) return;
    stopped = why;
    child.kill();
  };

  child.stdout?.on('data', (chunk: Buffer) => {
    if (stopped !== undefined) return;
    stdoutBytes += chunk.length;
    if (stdoutBytes > limits.maxOutputBytes) stop({ kind: 'too_large', stream: 'stdout', limit: limits.maxOutputBytes });
    else stdout.push(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr.push(chunk);
    if (stderr.total > limits.maxOutputBytes) stop({ kind: 'too_large', stream: 'stderr', limit: limits.maxOutputBytes });
  });

  const timer = setTimeout(() => stop({ kind: 'timeout', afterMs: limits.timeoutMs }), limits.timeoutMs);
  const onAbort = (): void => stop({ kind: 'cancelled', why: describeAbort(signal) });
  if (signal?.aborted === true) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });

  const end = await child.ended;
  clearTimeout(timer);
  signal?.removeEventListener('abort', onAbort);
  hooks.ended?.(child);

  const outcome: Outcome =
    stopped ??
    (end.spawnError !== undefined
      ? { kind: 'spawn_error', detail: end.spawnError }
      : end.signal !== null
        ? { kind: 'signal', signal: end.signal }
        : end.exitCode !== 0
          ? { kind: 'exit', code: end.exitCode ?? -1, ...(stdoutBytes > 0 && { stdoutTail: Buffer.concat(stdout).toString('utf8').slice(-4096) }) }
          : { kind: 'output', bytes: Buffer.concat(stdout), exitCode: 0 });
  const stderrTail = stderr.text();
  const sandboxHint = outcome.kind === 'exit' ? child.explainExit?.(stderrTail) : undefined;
  return { outcome, stderrTail, ...(sandboxHint !== undefined && { sandboxHint }) };
}
