/**
 * How one run of a hook ended, in either mode, and the `RunResult` it becomes:
 * the one place where failures get their code and a message naming the hook.
 */
import { parseResponse } from '../protocol.js';
import type { HookDefinition, HookFailure, RunResult } from '../types.js';
import { decodeUtf8 } from './output.js';

export type Outcome =
  /** Spawn mode: stdout of a clean exit. Persistent mode: one answer line. */
  | { readonly kind: 'output'; readonly bytes: Uint8Array; /** Spawn mode: the process exited (with 0). */ readonly exitCode?: number }
  /** Spawn mode: a non-zero exit. Persistent mode: any exit before answering. */
  | { readonly kind: 'exit'; readonly code: number; readonly beforeAnswer?: boolean; /** Spawn mode: the end of what it wrote to stdout (an asyncRewake's message when stderr is empty). */ readonly stdoutTail?: string }
  /** Killed by a signal plinth did not send. */
  | { readonly kind: 'signal'; readonly signal: string; readonly beforeAnswer?: boolean }
  | { readonly kind: 'timeout'; readonly afterMs: number }
  | { readonly kind: 'cancelled'; readonly why: string }
  | { readonly kind: 'too_large'; readonly stream: 'stdout' | 'stderr'; readonly limit: number }
  | { readonly kind: 'spawn_error'; readonly detail: string }
  /** Refused before any process started. */
  | { readonly kind: 'refused'; readonly failure: 'not_allowed' | 'script_missing' | 'spawn_failed'; readonly detail: string };

/** What fixes a hook that cannot start, by why (the pre-spawn checks' failures). */
export function preflightHint(failure: 'not_allowed' | 'script_missing' | 'spawn_failed'): string {
  switch (failure) {
    case 'not_allowed':
      return 'run an allowed program (setting plugins.hooks.settings.allowedCommands, in your user settings), or change its "command"';
    case 'script_missing':
      return 'restore the script, or correct its "args"';
    case 'spawn_failed':
      return 'install the program, or correct its "command" or "cwd"';
  }
}

/**
 * What fixes a run that never got to decide, or undefined when the hook ran and ended as it chose.
 * A hook that could not start (the program or its interpreter not found or not executable: the
 * shells' exit 127 and 126, or no spawn at all), that was killed by a signal plinth did not send (a
 * crash, the sandbox's seccomp or limits), or whose exit the sandbox explains (it died on a path its
 * confinement hides) decided nothing: on a gate event it blocks whatever its `onError` says. Only a
 * hook that ran and returned a non-blocking exit is a peer's "non-blocking error".
 */
export function cannotRunFix(outcome: Outcome, sandboxHint?: string): string | undefined {
  if (sandboxHint !== undefined) return sandboxHint;
  switch (outcome.kind) {
    case 'spawn_error':
      return preflightHint('spawn_failed');
    case 'signal':
      return `it was killed by ${outcome.signal} before it could decide: run its command by hand to see why (a confined hook may have hit the sandbox's limits: \`plinth perms status\`)`;
    case 'exit':
      if (outcome.code === 127) return 'a program it runs (its interpreter, or one its script starts) was not found (exit 127): install it or correct the command; a confined hook sees only what its grants show (`plinth perms status`)';
      if (outcome.code === 126) return 'a program it runs is not executable (exit 126): make it executable (chmod +x) or run it through its interpreter';
      return undefined;
    default:
      return undefined;
  }
}

/** A cancellation's reason, for the message. */
export function describeAbort(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  if (typeof reason === 'string') return reason;
  return 'the run was cancelled';
}

/** `hook "name" (id)`, or `hook "id"` when they are the same. */
export function hookLabel(hook: Pick<HookDefinition, 'id' | 'name'>): string {
  return hook.name === hook.id ? `hook "${hook.id}"` : `hook "${hook.name}" (${hook.id})`;
}

/** The last line or so of stderr, for a message. */
function lastWords(stderrTail: string): string {
  const text = stderrTail.trim();
  if (text === '') return 'no stderr';
  const tail = text.length > 300 ? `…${text.slice(-300)}` : text;
  return `stderr: ${tail}`;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

export function toRunResult(
  hook: Pick<HookDefinition, 'id' | 'name'>,
  outcome: Outcome,
  facts: { readonly durationMs: number; readonly stderrTail: string },
): RunResult {
  const label = hookLabel(hook);
  const fail = (failure: HookFailure, message: string, extra: { exitCode?: number; signal?: string } = {}): RunResult => ({
    ok: false,
    failure,
    message,
    durationMs: facts.durationMs,
    stderrTail: facts.stderrTail,
    ...extra,
  });
  switch (outcome.kind) {
    case 'output': {
      const text = decodeUtf8(outcome.bytes);
      if (text === undefined) return fail('invalid_json', `${label} wrote output that is not UTF-8 text (binary output), not a JSON response`);
      const parsed = parseResponse(text);
      if (!parsed.ok) {
        const what = parsed.failure === 'invalid_json' ? 'did not answer with JSON' : 'answered with an invalid response';
        return fail(parsed.failure, `${label} ${what}: ${parsed.message}`);
      }
      return {
        ok: true,
        response: parsed.response,
        durationMs: facts.durationMs,
        stderrTail: facts.stderrTail,
        ...(outcome.exitCode !== undefined && { exitCode: outcome.exitCode }),
      };
    }
    case 'exit':
      if (outcome.beforeAnswer === true && outcome.code === 0) {
        return fail('invalid_json', `${label} exited before answering (empty output; ${lastWords(facts.stderrTail)})`, { exitCode: 0 });
      }
      return fail(
        'exit_nonzero',
        `${label} exited with code ${outcome.code}${outcome.beforeAnswer === true ? ' before answering' : ''} (${lastWords(facts.stderrTail)})`,
        { exitCode: outcome.code },
      );
    case 'signal':
      return fail('crashed', `${label} crashed: killed by ${outcome.signal}${outcome.beforeAnswer === true ? ' before answering' : ''} (${lastWords(facts.stderrTail)})`, {
        signal: outcome.signal,
      });
    case 'timeout':
      return fail('timeout', `${label} timed out after ${outcome.afterMs} ms; it was killed with its child processes`, { signal: 'SIGKILL' });
    case 'cancelled':
      return fail('timeout', `${label} was stopped: ${outcome.why}`, { signal: 'SIGKILL' });
    case 'too_large':
      return fail('output_too_large', `${label} wrote more than ${formatBytes(outcome.limit)} to ${outcome.stream}; it was killed with its child processes`, {
        signal: 'SIGKILL',
      });
    case 'spawn_error':
      return fail('spawn_failed', `${label} could not start: ${outcome.detail}`);
    case 'refused':
      return fail(outcome.failure, `${label} was not run: ${outcome.detail}`);
  }
}
