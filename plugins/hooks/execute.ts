/**
 * Running a plan into one decision. Whatever the timing of concurrent runs, the
 * result is the same: each stage's answers are combined in plan order once all
 * of them are in.
 */
import { type HostDirectives, mergeHostDirectives } from 'plinth/sdk';
import { type Changes, applyChanges, changesOf, sameValue } from './context-merge.js';
import type { Plan } from './plan.js';
import type { RateLimiter } from './rate-limit.js';
import { RUN_FAILED_CODE, runFailureFix } from './run-failure.js';
import type { HookDefinition, HookFailure, HookOutcome, PlanResult, RunResult } from './types.js';

type Context = Readonly<Record<string, unknown>>;

/** What a `run` function answers for a hook it decided not to run (never approved, for instance). */
export interface HookSkip {
  readonly status: 'skipped';
  readonly failure?: HookFailure;
  /** Kept in the outcome and in the decision's messages (e.g. the command that approves the hook). */
  readonly message?: string;
  /** Added to the decision's system messages: the model is told that a hook did not run. */
  readonly systemMessage?: string;
  readonly durationMs?: number;
}

/**
 * What a `run` function answers for a hook that should guard the event but cannot run (its
 * approval is out of date, its script is missing, …): a failure that blocks whatever the
 * hook's `onError` says, since `onError` covers how a run ends, not whether the guard exists.
 */
export interface HookRefusal {
  readonly status: 'blocked';
  readonly failure: HookFailure;
  /** Why, naming the hook; the first message of a decision it blocks. */
  readonly message: string;
  /** A `PLN_E_…` code for the block. */
  readonly code: string;
  /** What the user can do: the command that approves it, the file to restore. */
  readonly fix: string;
}

/**
 * Runs one hook with the context it should see. Should not throw (a throw is
 * reported as a `spawn_failed` failure of that hook).
 */
export type RunHook = (hook: HookDefinition, context: Context) => Promise<RunResult | HookSkip | HookRefusal>;

/** Options of {@link execute}. */
export interface ExecuteOptions {
  /** Asked before each run, in plan order; a refusal is a `rate_limited` or `cooldown` failure of the hook. */
  readonly limiter?: RateLimiter;
}


function quoteList(ids: readonly string[]): string {
  const quoted = ids.map((id) => `"${id}"`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}

type Answer =
  | { readonly kind: 'ran'; readonly result: Extract<RunResult, { ok: true }> }
  | {
      readonly kind: 'failed';
      readonly failure: HookFailure;
      readonly message: string;
      readonly durationMs: number;
      readonly exitCode?: number;
      readonly stderrTail?: string;
      /** Set for a {@link HookRefusal}: blocks whatever `onError` says. */
      readonly refused?: { readonly code: string; readonly fix: string };
    }
  | { readonly kind: 'skipped'; readonly failure?: HookFailure; readonly message?: string; readonly systemMessage?: string; readonly durationMs: number };

async function invoke(run: RunHook, hook: HookDefinition, context: Context): Promise<Answer> {
  let result: RunResult | HookSkip | HookRefusal;
  try {
    result = await run(hook, context);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { kind: 'failed', failure: 'spawn_failed', message: `Hook "${hook.id}" could not be run: ${reason}`, durationMs: 0 };
  }
  if ('status' in result) {
    if (result.status === 'blocked') {
      return { kind: 'failed', failure: result.failure, message: result.message, durationMs: 0, refused: { code: result.code, fix: result.fix } };
    }
    return {
      kind: 'skipped',
      ...(result.failure && { failure: result.failure }),
      ...(result.message !== undefined && { message: result.message }),
      ...(result.systemMessage !== undefined && { systemMessage: result.systemMessage }),
      durationMs: result.durationMs ?? 0,
    };
  }
  if (result.ok) return { kind: 'ran', result };
  return {
    kind: 'failed',
    failure: result.failure,
    message: result.message,
    durationMs: result.durationMs,
    ...(result.exitCode !== undefined && { exitCode: result.exitCode }),
    ...(result.stderrTail && { stderrTail: result.stderrTail }),
  };
}

function describe(outcome: HookOutcome): string {
  if (outcome.status === 'failed') return 'failed';
  if (outcome.status === 'skipped') return 'was skipped';
  return 'blocked the event';
}

/**
 * Runs a plan for one event, starting from `context`, and combines the answers.
 *
 * - A returned `context` is merged into the current one (its top-level fields
 *   replace those fields; others stay) for the hooks after it and the caller. In a
 *   concurrent stage every hook sees the stage's input; their changes are merged
 *   field by field after the stage. Two hooks changing one
 *   field to different values is a `conflict`: neither change to that field is
 *   applied, both hooks fail and the event is blocked, whatever their `onError`.
 * - A block (`allow: false`, or a failure of a hook whose `onError` is `block`)
 *   names the hook in `blockedBy` (the first in plan order) and stops later
 *   stages; so does `continue: false`, without blocking. Hooks not run are
 *   `skipped` with a message saying why.
 * - A failed run counts as the hook's `onError` says; its message is kept either way.
 * - A hook whose dependency failed, blocked or was skipped is skipped (`dependency_failed`).
 * - `options.limiter` is asked before each run, in plan order.
 *
 * `messages` holds, in plan order, each hook's message (its answer's, or its
 * failure's, or its skip's — but not the "not run: … blocked" notes, which only
 * the outcomes carry), then each conflict once; `systemMessages` every answer's.
 */
export async function execute(plan: Plan, context: Context, run: RunHook, options: ExecuteOptions = {}): Promise<PlanResult> {
  const outcomes: HookOutcome[] = [];
  const byId = new Map<string, HookOutcome>();
  const messages: string[] = [];
  const systemMessages: string[] = [];
  let current = context;
  let blockedBy: string | undefined;
  let stoppedBy: string | undefined;
  let host: HostDirectives | undefined;

  /** Adds an outcome; `message` is what goes into the decision's messages (not always the outcome's). */
  const record = (outcome: HookOutcome, message: string | undefined): void => {
    outcomes.push(outcome);
    byId.set(outcome.hook.id, outcome);
    if (message !== undefined && message !== '') messages.push(message);
    if (outcome.systemMessage !== undefined && outcome.systemMessage !== '') systemMessages.push(outcome.systemMessage);
    if (!outcome.allow) blockedBy ??= outcome.hook.id;
    if (outcome.stop) stoppedBy ??= outcome.hook.id;
  };
  const ref = (hook: HookDefinition) => ({ id: hook.id, name: hook.name, source: hook.source });

  for (const { hook, failure, message } of plan.failed) {
    record({ hook: ref(hook), status: 'failed', allow: hook.onError === 'allow', failure, message, durationMs: 0 }, message);
  }

  for (const stage of plan.stages) {
    if (blockedBy !== undefined || stoppedBy !== undefined) {
      const message =
        blockedBy !== undefined
          ? `Not run: hook "${blockedBy}" blocked the event.`
          : `Not run: hook "${stoppedBy}" stopped the chain (continue: false).`;
      for (const hook of stage) record({ hook: ref(hook), status: 'skipped', allow: true, message, durationMs: 0 }, undefined);
      continue;
    }

    // Decide synchronously, in plan order (dependencies, then rate limits), then run concurrently.
    const input = current;
    const answers = await Promise.all(
      stage.map((hook): Answer | Promise<Answer> => {
        for (const dep of plan.dependencies.get(hook.id) ?? []) {
          const outcome = byId.get(dep);
          if (outcome && outcome.status === 'ran' && outcome.allow) continue;
          const why = outcome ? describe(outcome) : 'did not run';
          return { kind: 'skipped', failure: 'dependency_failed', message: `Hook "${hook.id}" was not run: it depends on "${dep}", which ${why}.`, durationMs: 0 };
        }
        const verdict = options.limiter?.take(hook);
        if (verdict && !verdict.ok) return { kind: 'failed', failure: verdict.failure, message: verdict.message, durationMs: 0 };
        return invoke(run, hook, input);
      }),
    );

    // Changes per hook, then the fields two hooks set differently.
    const changes = answers.map((a): Changes =>
      a.kind === 'ran' && a.result.response.context !== undefined ? changesOf(input, a.result.response.context) : new Map(),
    );
    const writers = new Map<string, number[]>();
    changes.forEach((c, i) => c.forEach((_, key) => writers.set(key, [...(writers.get(key) ?? []), i])));
    const conflicted = new Map<number, string[]>(); // hook index → conflict sentences
    const conflicts: string[] = [];
    const merged: Changes = new Map();
    for (const [key, who] of writers) {
      const values = who.map((i) => changes[i]!.get(key));
      const first = values[0];
      if (values.every((v) => sameValue(v, first))) {
        merged.set(key, first);
        continue;
      }
      const sentence = `Hooks ${quoteList(who.map((i) => stage[i]!.id))} ran in parallel and changed the context field "${key}" to different values; ${who.length === 2 ? 'neither change was' : 'none of their changes was'} applied and the event is blocked.`;
      conflicts.push(sentence);
      for (const i of who) conflicted.set(i, [...(conflicted.get(i) ?? []), sentence]);
    }

    stage.forEach((hook, i) => {
      const answer = answers[i]!;
      if (answer.kind === 'skipped') {
        const { kind: _, ...rest } = answer;
        record({ hook: ref(hook), status: 'skipped', allow: true, ...rest }, rest.message);
        return;
      }
      if (answer.kind === 'failed') {
        const { kind: _, refused, ...rest } = answer;
        const allow = refused ? false : hook.onError === 'allow';
        // A failed run that blocks is the hook's fault, not its decision: it says so with a code and what mends it.
        const fix = refused?.fix ?? (allow ? undefined : runFailureFix(hook.id, rest.failure));
        const code = refused?.code ?? (fix === undefined ? undefined : RUN_FAILED_CODE);
        record({ hook: ref(hook), status: 'failed', allow, ...rest, ...(code !== undefined && { code }), ...(fix !== undefined && { fix }) }, rest.message);
        return;
      }
      const { response, durationMs, stderrTail, exitCode } = answer.result;
      if (!clashOf(conflicted, i)) host = mergeHostDirectives(host, response.host);
      const applied = [...changes[i]!.keys()].filter((key) => merged.has(key));
      const clash = conflicted.get(i);
      const own = response.message;
      record(
        {
          hook: ref(hook),
          status: clash ? 'failed' : 'ran',
          allow: clash ? false : response.allow,
          ...(clash && { failure: 'conflict' as const, code: RUN_FAILED_CODE, fix: runFailureFix(hook.id, 'conflict')! }),
          ...(clash
            ? { message: clash.join(' ') + (own ? ` Its own message: ${own}` : '') }
            : own !== undefined && { message: own }),
          ...(response.systemMessage !== undefined && { systemMessage: response.systemMessage }),
          ...(response.continue === false && { stop: true }),
          ...(applied.length > 0 && { changed: applied }),
          durationMs,
          ...(exitCode !== undefined && { exitCode }),
          ...(stderrTail && { stderrTail }),
        },
        own,
      );
    });
    messages.push(...conflicts);
    current = applyChanges(input, merged);
  }

  const blocker = blockedBy === undefined ? undefined : byId.get(blockedBy);
  return {
    allow: blockedBy === undefined,
    ...(blockedBy !== undefined && { blockedBy }),
    ...(blocker?.code !== undefined && { code: blocker.code }),
    ...(blocker?.fix !== undefined && { fix: blocker.fix }),
    messages,
    systemMessages,
    context: current,
    outcomes,
    ...(host !== undefined && { host }),
  };
}

/** Whether hook `i` of a stage lost a conflict (its answer then counts for nothing but the block). */
function clashOf(conflicted: ReadonlyMap<number, readonly string[]>, i: number): boolean {
  return conflicted.has(i);
}
