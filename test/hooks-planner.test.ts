/**
 * The planner and the matcher, with in-memory hooks: which hooks run for an
 * event, in which stages, and how their answers combine into one decision.
 * `run` functions here answer from a script (or from deferred promises the test
 * resolves in a chosen order); real processes are tested with the runner.
 */
import { describe, expect, it } from 'vitest';
import { matches } from '../plugins/hooks/matcher.js';
import { execute, type HookRefusal, type HookSkip, type RunHook } from '../plugins/hooks/execute.js';
import { plan, type Plan } from '../plugins/hooks/plan.js';
import { createRateLimiter } from '../plugins/hooks/rate-limit.js';
import { hookDefinition } from './support/hook-definition.js';
import type { HookDefinition, HookResponse, PlanResult, RunResult, Strategy } from '../plugins/hooks/types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Context = Record<string, unknown>;

/** A hook definition with plain defaults: user source, `before_tool`, no matcher, blocks on error. */
function hook(id: string, fields: Partial<Mutable<HookDefinition>> = {}): HookDefinition {
  return hookDefinition({ id, action: { type: 'command', command: 'node', args: [`hooks/${id}.js`] }, cwd: '/work/project', ...fields });
}

/** A hook's answer. */
const answer = (response: Partial<HookResponse> = {}, durationMs = 5): RunResult => ({
  ok: true,
  response: { allow: true, ...response },
  durationMs,
  stderrTail: '',
});

/** A failed run, as the runner reports it. */
const failure = (id: string, failure: 'timeout' | 'exit_nonzero' | 'invalid_json' = 'exit_nonzero'): RunResult => ({
  ok: false,
  failure,
  message: `Hook "${id}" failed: ${failure}`,
  durationMs: 7,
  exitCode: failure === 'exit_nonzero' ? 2 : undefined,
  stderrTail: 'boom',
});

/** A `run` that answers from a script (default: allow) and records what each hook saw. */
function scripted(script: Record<string, RunResult | HookSkip | HookRefusal | ((context: Context) => RunResult)> = {}) {
  const calls: Array<{ id: string; context: Context }> = [];
  const run: RunHook = async (h, context) => {
    calls.push({ id: h.id, context: context as Context });
    const entry = script[h.id] ?? answer();
    return typeof entry === 'function' ? entry(context as Context) : entry;
  };
  return { run, calls, ran: () => calls.map((c) => c.id) };
}

const stageIds = (p: Plan) => p.stages.map((stage) => stage.map((h) => h.id));
const summary = (result: PlanResult) => result.outcomes.map((o) => `${o.hook.id}:${o.status}${o.failure ? `:${o.failure}` : ''}`);

describe('plan: strategies', () => {
  const hooks = [
    hook('a', { priority: 1, parallel: true }),
    hook('b', { priority: 5, dependsOn: ['d'] }),
    hook('c', { priority: 9, parallel: true }),
    hook('d', { priority: 0 }),
    hook('e', { priority: 5, parallel: true, dependsOn: ['a'] }),
  ];

  it('sequential: one per stage, definition order, each after its dependencies', () => {
    expect(stageIds(plan(hooks, 'sequential'))).toEqual([['a'], ['c'], ['d'], ['b'], ['e']]);
  });

  it('priority: one per stage, higher priority first, still after dependencies; ties by definition order', () => {
    // c (9) first; b (5) waits for d (0); e (5) waits for a (1); so a, then e (5) before d (0).
    expect(stageIds(plan(hooks, 'priority'))).toEqual([['c'], ['a'], ['e'], ['d'], ['b']]);
    const ties = [hook('x', { priority: 2 }), hook('y', { priority: 2 }), hook('z', { priority: 3 })];
    expect(stageIds(plan(ties, 'priority'))).toEqual([['z'], ['x'], ['y']]);
  });

  it('parallel: stages by dependency level', () => {
    expect(stageIds(plan(hooks, 'parallel'))).toEqual([['a', 'c', 'd'], ['b', 'e']]);
    const chain = [hook('top', { dependsOn: ['mid'] }), hook('mid', { dependsOn: ['low'] }), hook('low'), hook('free')];
    expect(stageIds(plan(chain, 'parallel'))).toEqual([['low', 'free'], ['mid'], ['top']]);
  });

  it('optimized (the default): parallel-safe hooks without dependencies together, then the rest one at a time', () => {
    expect(stageIds(plan(hooks))).toEqual([['a', 'c'], ['d'], ['b'], ['e']]);
    expect(plan(hooks).strategy).toBe('optimized');
    expect(stageIds(plan([hook('solo')], 'optimized'))).toEqual([['solo']]);
  });

  it('leaves out disabled hooks and plans nothing for no hooks', () => {
    expect(stageIds(plan([hook('on'), hook('off', { enabled: false })], 'sequential'))).toEqual([['on']]);
    for (const strategy of ['sequential', 'parallel', 'optimized', 'priority'] as Strategy[]) {
      expect(plan([], strategy).stages).toEqual([]);
    }
  });
});

describe('plan: dependsOn', () => {
  it('resolves a dependency by id, or by name among hooks of the same source and plugin', () => {
    const hooks = [
      hook('formatter/lint', { name: 'lint', source: 'extension', plugin: 'formatter', dependsOn: ['format'] }),
      hook('other/format', { name: 'format', source: 'extension', plugin: 'other' }),
      hook('formatter/format', { name: 'format', source: 'extension', plugin: 'formatter' }),
      hook('user:audit', { dependsOn: ['formatter/lint'] }),
    ];
    const p = plan(hooks, 'sequential');
    expect(p.dependencies.get('formatter/lint')).toEqual(['formatter/format']);
    expect(p.dependencies.get('user:audit')).toEqual(['formatter/lint']);
    expect(stageIds(p)).toEqual([['other/format'], ['formatter/format'], ['formatter/lint'], ['user:audit']]);
    expect(p.notes).toEqual([]);
  });

  it('ignores a dependency on a hook that does not run for this event, with a note', () => {
    const p = plan([hook('a', { dependsOn: ['ghost'] }), hook('b')], 'sequential');
    expect(stageIds(p)).toEqual([['a'], ['b']]);
    expect(p.dependencies.get('a')).toEqual([]);
    expect(p.notes).toHaveLength(1);
    expect(p.notes[0]).toContain('"a" depends on "ghost"');
    expect(p.notes[0]).toContain('ignored');
  });

  it('fails the hooks of a dependency cycle, naming the cycle; their dependents are skipped', async () => {
    const hooks = [
      hook('a', { dependsOn: ['b'], onError: 'allow' }),
      hook('b', { dependsOn: ['a'], onError: 'allow' }),
      hook('c', { dependsOn: ['a'] }),
      hook('d'),
    ];
    const p = plan(hooks, 'sequential');
    expect(p.failed.map((f) => [f.hook.id, f.failure])).toEqual([
      ['a', 'dependency_failed'],
      ['b', 'dependency_failed'],
    ]);
    expect(p.failed[0]!.message).toContain('a → b → a');
    expect(p.failed[1]!.message).toContain('b → a → b');
    expect(stageIds(p)).toEqual([['c'], ['d']]);

    const { run, ran } = scripted();
    const result = await execute(p, {}, run);
    expect(ran()).toEqual(['d']);
    expect(summary(result)).toEqual([
      'a:failed:dependency_failed',
      'b:failed:dependency_failed',
      'c:skipped:dependency_failed',
      'd:ran',
    ]);
    expect(result.allow).toBe(true); // the cycle's hooks say onError: allow
    expect(result.messages[0]).toContain('cycle');
  });

  it('blocks the event when a hook of a cycle blocks on error (the default), before anything runs', async () => {
    const p = plan([hook('self', { dependsOn: ['self'] }), hook('other')], 'optimized');
    expect(p.failed[0]!.message).toContain('self → self');
    const { run, ran } = scripted();
    const result = await execute(p, {}, run);
    expect(ran()).toEqual([]);
    expect(result).toMatchObject({ allow: false, blockedBy: 'self' });
    expect(summary(result)).toEqual(['self:failed:dependency_failed', 'other:skipped']);
  });

  it('skips a hook whose dependency failed, blocked or was skipped', async () => {
    const hooks = [
      hook('fails', { onError: 'allow' }),
      hook('after-fails', { dependsOn: ['fails'] }),
      hook('untrusted'),
      hook('after-untrusted', { dependsOn: ['untrusted'] }),
      hook('after-skipped', { dependsOn: ['after-fails'] }),
    ];
    const { run, ran } = scripted({
      fails: failure('fails'),
      untrusted: { status: 'skipped', failure: 'untrusted', message: 'Hook "untrusted" is not approved: run `plinth hooks trust untrusted`.' },
    });
    const result = await execute(plan(hooks, 'sequential'), {}, run);
    expect(ran()).toEqual(['fails', 'untrusted']);
    expect(summary(result)).toEqual([
      'fails:failed:exit_nonzero',
      'after-fails:skipped:dependency_failed',
      'untrusted:skipped:untrusted',
      'after-untrusted:skipped:dependency_failed',
      'after-skipped:skipped:dependency_failed',
    ]);
    expect(result.outcomes[1]!.message).toBe('Hook "after-fails" was not run: it depends on "fails", which failed.');
    expect(result.outcomes[3]!.message).toContain('which was skipped');
    expect(result.allow).toBe(true);

    const blocked = await execute(plan([hook('gate'), hook('next', { dependsOn: ['gate'] })], 'parallel'), {}, scripted({ gate: answer({ allow: false }) }).run);
    expect(summary(blocked)).toEqual(['gate:ran', 'next:skipped']);
    expect(blocked.blockedBy).toBe('gate');
  });
});

describe('execute: context', () => {
  it('feeds a returned context to the hooks after it (sequential)', async () => {
    const { run, calls } = scripted({
      redact: (ctx) => answer({ context: { ...ctx, args: { path: '[redacted]' } } }),
      tag: (ctx) => answer({ context: { ...ctx, tagged: true } }),
    });
    const start = { tool: 'write_file', args: { path: '/etc/passwd' } };
    const result = await execute(plan([hook('redact'), hook('observe'), hook('tag')], 'sequential'), start, run);

    expect(calls.map((c) => c.context)).toEqual([
      start,
      { tool: 'write_file', args: { path: '[redacted]' } },
      { tool: 'write_file', args: { path: '[redacted]' } },
    ]);
    expect(result.context).toEqual({ tool: 'write_file', args: { path: '[redacted]' }, tagged: true });
    expect(result.outcomes.map((o) => o.changed)).toEqual([['args'], undefined, ['tagged']]);
    expect(start).toEqual({ tool: 'write_file', args: { path: '/etc/passwd' } }); // the input is not mutated
  });

  it('merges a returned context: the fields it sets change, the others stay', async () => {
    const { run } = scripted({ narrow: () => answer({ context: { tool: 'read_file' } }) });
    const result = await execute(plan([hook('narrow')]), { tool: 'write_file', args: {} }, run);
    expect(result.context).toEqual({ tool: 'read_file', args: {} });
    expect(result.outcomes[0]!.changed).toEqual(['tool']);
  });

  it('returns the very same context object when no hook changes it', async () => {
    const start = { tool: 'x' };
    const { run } = scripted({ same: (ctx) => answer({ context: { ...ctx } }) });
    const result = await execute(plan([hook('same'), hook('quiet')]), start, run);
    expect(result.context).toBe(start);
    expect(result.outcomes[0]!.changed).toBeUndefined();
  });

  it('gives every hook of a parallel stage the same input, merges their fields, then feeds the next stage', async () => {
    const { run, calls } = scripted({
      p1: (ctx) => answer({ context: { ...ctx, a: 1 } }),
      p2: (ctx) => answer({ context: { ...ctx, b: 2 } }),
      p3: (ctx) => answer({ context: { ...ctx, a: 1 } }), // same value as p1: not a conflict
      last: (ctx) => answer({ context: { ...ctx, c: 3 } }),
    });
    const p = plan([hook('p1', { parallel: true }), hook('p2', { parallel: true }), hook('p3', { parallel: true }), hook('last')]);
    expect(stageIds(p)).toEqual([['p1', 'p2', 'p3'], ['last']]);
    const result = await execute(p, { tool: 't' }, run);

    expect(calls.slice(0, 3).map((c) => c.context)).toEqual([{ tool: 't' }, { tool: 't' }, { tool: 't' }]);
    expect(calls[3]!.context).toEqual({ tool: 't', a: 1, b: 2 });
    expect(result.context).toEqual({ tool: 't', a: 1, b: 2, c: 3 });
    expect(result.allow).toBe(true);
    expect(result.outcomes.map((o) => o.changed)).toEqual([['a'], ['b'], ['a'], ['c']]);
  });

  it('reports two parallel hooks that set one field differently as a conflict, applies neither, and blocks', async () => {
    const { run, calls } = scripted({
      left: (ctx) => answer({ context: { ...ctx, args: { path: 'left' }, note: 'x' }, message: 'left says hi' }),
      right: (ctx) => answer({ context: { ...ctx, args: { path: 'right' } } }),
      bystander: (ctx) => answer({ context: { ...ctx, extra: true } }),
      later: () => answer(),
    });
    const p = plan(['left', 'right', 'bystander'].map((id) => hook(id, { parallel: true })).concat(hook('later')));
    const result = await execute(p, { tool: 'write_file', args: { path: 'orig' } }, run);

    expect(calls.map((c) => c.id)).toEqual(['left', 'right', 'bystander']);
    expect(summary(result)).toEqual(['left:failed:conflict', 'right:failed:conflict', 'bystander:ran', 'later:skipped']);
    expect(result.allow).toBe(false);
    expect(result.blockedBy).toBe('left');
    // Neither change to `args`; the fields nobody disputed are applied.
    expect(result.context).toEqual({ tool: 'write_file', args: { path: 'orig' }, note: 'x', extra: true });

    const sentence =
      'Hooks "left" and "right" ran in parallel and changed the context field "args" to different values; neither change was applied and the event is blocked.';
    expect(result.outcomes[0]).toMatchObject({ allow: false, message: `${sentence} Its own message: left says hi`, changed: ['note'] });
    expect(result.outcomes[1]).toMatchObject({ allow: false, message: sentence });
    expect(result.messages).toEqual(['left says hi', sentence]);
  });

  it('blocks on a conflict even when the hooks say onError: allow', async () => {
    const { run } = scripted({
      drop: () => answer({ context: { args: null } }), // clears `args`
      edit: (ctx) => answer({ context: { ...ctx, args: 2 } }),
      three: (ctx) => answer({ context: { ...ctx, args: 3 } }),
    });
    const hooks = ['drop', 'edit', 'three'].map((id) => hook(id, { parallel: true, onError: 'allow' }));
    const result = await execute(plan(hooks, 'parallel'), { tool: 't', args: 1 }, run);
    expect(result.allow).toBe(false);
    expect(result.context).toEqual({ tool: 't', args: 1 });
    expect(result.messages).toEqual([
      'Hooks "drop", "edit" and "three" ran in parallel and changed the context field "args" to different values; none of their changes was applied and the event is blocked.',
    ]);
  });

  it('keeps a `__proto__` field of a returned context a plain field', async () => {
    const evil = JSON.parse('{"tool":"t","__proto__":{"polluted":true}}') as Context;
    const result = await execute(plan([hook('evil')]), { tool: 't' }, scripted({ evil: answer({ context: evil }) }).run);
    expect(Object.getPrototypeOf(result.context)).toBe(Object.prototype);
    expect(Object.hasOwn(result.context, '__proto__')).toBe(true);
    expect((result.context as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe('execute: determinism', () => {
  /** A `run` whose answers the test releases, in any order. */
  function deferred(answers: Record<string, (ctx: Context) => RunResult>) {
    const waiting = new Map<string, () => void>();
    const started: string[] = [];
    const run: RunHook = (h, context) =>
      new Promise((resolve) => {
        started.push(h.id);
        waiting.set(h.id, () => resolve(answers[h.id]!(context as Context)));
      });
    const release = async (order: string[]) => {
      for (const id of order) {
        while (!waiting.has(id)) await new Promise((r) => setTimeout(r, 0));
        waiting.get(id)!();
        await new Promise((r) => setTimeout(r, 0));
      }
    };
    return { run, release, started };
  }

  const answers = {
    a: (ctx: Context) => answer({ context: { ...ctx, a: 1 }, message: 'from a', systemMessage: 'sys a' }, 30),
    b: (ctx: Context) => answer({ context: { ...ctx, shared: 'b' }, message: 'from b', systemMessage: 'sys b' }, 10),
    c: (ctx: Context) => answer({ context: { ...ctx, shared: 'c' }, allow: false, message: 'from c' }, 20),
    d: () => failure('d'),
  };
  const hooks = ['a', 'b', 'c', 'd'].map((id) => hook(id, { parallel: true, onError: 'allow' }));

  it('gives the same result whatever order parallel hooks finish in', async () => {
    const results: PlanResult[] = [];
    for (const order of [
      ['a', 'b', 'c', 'd'],
      ['d', 'c', 'b', 'a'],
      ['c', 'a', 'd', 'b'],
    ]) {
      const { run, release, started } = deferred(answers);
      const pending = execute(plan(hooks), { tool: 't' }, run);
      await release(order);
      results.push(await pending);
      expect(started).toEqual(['a', 'b', 'c', 'd']); // started in plan order, all at once
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);

    const result = results[0]!;
    expect(summary(result)).toEqual(['a:ran', 'b:failed:conflict', 'c:failed:conflict', 'd:failed:exit_nonzero']);
    expect(result.messages).toEqual(['from a', 'from b', 'from c', 'Hook "d" failed: exit_nonzero', expect.stringContaining('"b" and "c"')]);
    expect(result.systemMessages).toEqual(['sys a', 'sys b']);
    expect(result.outcomes.map((o) => o.durationMs)).toEqual([30, 10, 20, 7]);
    expect(result.blockedBy).toBe('b');
    expect(result.context).toEqual({ tool: 't', a: 1 });
  });
});

describe('execute: the decision', () => {
  it('collects messages and systemMessages in plan order', async () => {
    const { run } = scripted({
      first: answer({ message: 'one', systemMessage: 'S1' }),
      second: answer({ systemMessage: 'S2' }),
      third: answer({ message: 'three' }),
    });
    const result = await execute(plan([hook('first'), hook('second'), hook('third')], 'sequential'), {}, run);
    expect(result).toEqual({
      allow: true,
      messages: ['one', 'three'],
      systemMessages: ['S1', 'S2'],
      context: {},
      outcomes: [
        { hook: { id: 'first', name: 'first', source: 'user' }, status: 'ran', allow: true, message: 'one', systemMessage: 'S1', durationMs: 5 },
        { hook: { id: 'second', name: 'second', source: 'user' }, status: 'ran', allow: true, systemMessage: 'S2', durationMs: 5 },
        { hook: { id: 'third', name: 'third', source: 'user' }, status: 'ran', allow: true, message: 'three', durationMs: 5 },
      ],
    });
  });

  it('names the hook that blocked and runs nothing after it', async () => {
    const { run, ran } = scripted({ guard: answer({ allow: false, message: 'rm -rf is not allowed' }) });
    const result = await execute(plan([hook('audit'), hook('guard'), hook('after')], 'sequential'), { tool: 'shell' }, run);
    expect(ran()).toEqual(['audit', 'guard']);
    expect(result.allow).toBe(false);
    expect(result.blockedBy).toBe('guard');
    expect(result.messages).toEqual(['rm -rf is not allowed']); // the "not run" notes stay in the outcomes
    expect(result.outcomes[2]).toMatchObject({ status: 'skipped', allow: true, message: 'Not run: hook "guard" blocked the event.' });
  });

  it('names the first blocking hook in plan order when several in one stage block', async () => {
    const { run } = scripted({ x: answer({ allow: false, message: 'x no' }), y: answer({ allow: false, message: 'y no' }) });
    const hooks = [hook('ok', { parallel: true }), hook('x', { parallel: true }), hook('y', { parallel: true })];
    const result = await execute(plan(hooks), {}, run);
    expect(result.blockedBy).toBe('x');
    expect(result.messages).toEqual(['x no', 'y no']);
  });

  it('stops after the stage of a hook that answers continue: false, allowing the event', async () => {
    const { run, ran } = scripted({ stopper: answer({ continue: false, message: 'enough' }) });
    const hooks = [hook('stopper', { parallel: true }), hook('sibling', { parallel: true }), hook('later'), hook('last')];
    const result = await execute(plan(hooks), {}, run);
    expect(ran()).toEqual(['stopper', 'sibling']); // its stage finishes
    expect(result.allow).toBe(true);
    expect(result.outcomes[0]!.stop).toBe(true);
    expect(summary(result)).toEqual(['stopper:ran', 'sibling:ran', 'later:skipped', 'last:skipped']);
    expect(result.outcomes[2]!.message).toBe('Not run: hook "stopper" stopped the chain (continue: false).');
    expect(result.messages).toEqual(['enough']);
  });

  it('lets a failed hook block (onError: block, the default) or pass with its message kept as a warning (onError: allow)', async () => {
    const blocking = await execute(plan([hook('strict'), hook('next')], 'sequential'), {}, scripted({ strict: failure('strict', 'timeout') }).run);
    expect(blocking).toMatchObject({ allow: false, blockedBy: 'strict', messages: ['Hook "strict" failed: timeout'], code: 'PLN_E_HOOK_RUN_FAILED' });
    expect(blocking.outcomes[0]).toEqual({
      hook: { id: 'strict', name: 'strict', source: 'user' },
      status: 'failed',
      allow: false,
      failure: 'timeout',
      message: 'Hook "strict" failed: timeout',
      durationMs: 7,
      stderrTail: 'boom',
      code: 'PLN_E_HOOK_RUN_FAILED',
      fix: 'make hook strict answer sooner, or give it a longer "timeout" (ms) in its definition; `plinth hooks trace` shows its recent runs with their stderr',
    });

    const lenient = await execute(
      plan([hook('lenient', { onError: 'allow' }), hook('next')], 'sequential'),
      {},
      scripted({ lenient: failure('lenient') }).run,
    );
    expect(lenient.allow).toBe(true);
    expect(lenient.blockedBy).toBeUndefined();
    expect(lenient.messages).toEqual(['Hook "lenient" failed: exit_nonzero']);
    expect(lenient.outcomes[0]).toMatchObject({ status: 'failed', allow: true, failure: 'exit_nonzero', exitCode: 2 });
    expect(lenient.outcomes[1]).toMatchObject({ status: 'ran' });
  });

  it('treats a skip returned by run (an untrusted hook) as skipped: it allows, its message is kept', async () => {
    const skip: HookSkip = { status: 'skipped', failure: 'untrusted', message: 'approve with: plinth hooks trust workspace:fmt' };
    const result = await execute(plan([hook('workspace:fmt'), hook('user:ok')], 'sequential'), {}, scripted({ 'workspace:fmt': skip }).run);
    expect(result.allow).toBe(true);
    expect(result.messages).toEqual(['approve with: plinth hooks trust workspace:fmt']);
    expect(result.outcomes[0]).toEqual({
      hook: { id: 'workspace:fmt', name: 'workspace:fmt', source: 'user' },
      status: 'skipped',
      allow: true,
      failure: 'untrusted',
      message: 'approve with: plinth hooks trust workspace:fmt',
      durationMs: 0,
    });
  });

  it('keeps a skip\'s system message: the model is told that a hook did not run', async () => {
    const skip: HookSkip = { status: 'skipped', failure: 'untrusted', message: 'not approved', systemMessage: 'The workspace hook "workspace:fmt" was skipped' };
    const result = await execute(plan([hook('workspace:fmt')]), {}, scripted({ 'workspace:fmt': skip }).run);
    expect(result.allow).toBe(true);
    expect(result.systemMessages).toEqual(['The workspace hook "workspace:fmt" was skipped']);
  });

  it('treats a refusal returned by run (a guard that cannot run) as a failure that blocks whatever onError says, with its code and fix', async () => {
    const refusal: HookRefusal = { status: 'blocked', failure: 'script_missing', message: 'Hook "guard" cannot run: its script is gone', code: 'PLN_E_HOOK_UNRUNNABLE', fix: 'restore the script' };
    const result = await execute(plan([hook('guard', { onError: 'allow' }), hook('later')], 'sequential'), {}, scripted({ guard: refusal }).run);
    expect(result.allow).toBe(false);
    expect(result).toMatchObject({ blockedBy: 'guard', code: 'PLN_E_HOOK_UNRUNNABLE', fix: 'restore the script' });
    expect(result.outcomes[0]).toMatchObject({ status: 'failed', allow: false, failure: 'script_missing', code: 'PLN_E_HOOK_UNRUNNABLE', fix: 'restore the script' });
    expect(summary(result)).toEqual(['guard:failed:script_missing', 'later:skipped']);
  });

  it('reports a run function that throws as a failure of that hook', async () => {
    const run: RunHook = async () => {
      throw new Error('runner is gone');
    };
    const result = await execute(plan([hook('h')]), {}, run);
    expect(result.outcomes[0]).toMatchObject({ status: 'failed', failure: 'spawn_failed', allow: false });
    expect(result.messages[0]).toContain('runner is gone');
  });

  it('asks the rate limiter before each run, in plan order; a refusal fails the hook as its onError says', async () => {
    let t = 0;
    const limiter = createRateLimiter({ globalPerMinute: 4, now: () => t });
    const hooks = [
      hook('once', { rateLimit: { perMinute: 1 }, onError: 'allow', parallel: true }),
      hook('cool', { rateLimit: { cooldownMs: 1_000 }, parallel: true }),
      hook('free', { parallel: true }),
    ];
    const first = await execute(plan(hooks), {}, scripted().run, { limiter });
    expect(summary(first)).toEqual(['once:ran', 'cool:ran', 'free:ran']);

    t = 500;
    const { run, ran } = scripted();
    const second = await execute(plan(hooks), {}, run, { limiter });
    expect(ran()).toEqual(['free']);
    expect(summary(second)).toEqual(['once:failed:rate_limited', 'cool:failed:cooldown', 'free:ran']);
    expect(second.outcomes[0]!.allow).toBe(true); // onError: allow
    expect(second).toMatchObject({ allow: false, blockedBy: 'cool' });
    expect(second.messages[0]).toContain('"once"');

    t = 2_000; // four runs in the last minute: the global limit is reached
    const third = await execute(plan([hook('another', { onError: 'allow' })]), {}, scripted().run, { limiter });
    expect(summary(third)).toEqual(['another:failed:rate_limited']);
    expect(third.messages[0]).toContain('global limit of 4');
  });
});

describe('matches', () => {
  const tool = (patterns: string[], fields: Partial<Mutable<HookDefinition>> = {}) =>
    hook('t', { events: ['before_tool', 'after_tool', 'before_tool_selection', 'session_start'], matcher: { tools: patterns }, ...fields });
  const files = (patterns: string[]) =>
    hook('f', { events: ['file_change', 'git_commit', 'before_tool'], matcher: { files: patterns } });

  it('matches tool events by tool-name globs', () => {
    const h = tool(['write_*', 'mcp__github__*']);
    expect(matches(h, 'before_tool', { tool: 'write_file' })).toBe(true);
    expect(matches(h, 'after_tool', { tool: 'mcp__github__create_issue' })).toBe(true);
    expect(matches(h, 'before_tool', { tool: 'read_file' })).toBe(false);
    expect(matches(h, 'before_tool', { tool: 'mcp__gitlab__create_issue' })).toBe(false);
  });

  it('reads the tool name from tool, toolName or name (in that order), or a selection’s candidate tools', () => {
    const h = tool(['shell']);
    expect(matches(h, 'before_tool', { toolName: 'shell' })).toBe(true);
    expect(matches(h, 'before_tool', { name: 'shell' })).toBe(true);
    expect(matches(h, 'before_tool', { tool: { name: 'shell' } })).toBe(true);
    expect(matches(h, 'before_tool', { tool: 'ls', name: 'shell' })).toBe(false);
    expect(matches(h, 'before_tool_selection', { tools: ['ls', { name: 'shell' }] })).toBe(true);
    expect(matches(h, 'before_tool', {})).toBe(false);
  });

  it('excludes with !patterns', () => {
    expect(matches(tool(['!rm']), 'before_tool', { tool: 'ls' })).toBe(true);
    expect(matches(tool(['!rm']), 'before_tool', { tool: 'rm' })).toBe(false);
    expect(matches(tool(['*', '!rm']), 'before_tool', { tool: 'rm' })).toBe(false);
    expect(matches(tool(['*', '!rm']), 'before_tool', { tool: 'cat' })).toBe(true);
  });

  it('matches file events by globs relative to the workspace, dot files included', () => {
    const h = files(['src/**/*.ts']);
    expect(matches(h, 'file_change', { file: { path: 'src/kernel/a.ts' } })).toBe(true);
    expect(matches(h, 'file_change', { file: 'src/a.ts' })).toBe(true); // the protocol's `file` is a string
    expect(matches(h, 'file_change', { path: './src/.hidden/a.ts' })).toBe(true);
    expect(matches(h, 'file_change', { path: 'lib/a.ts' })).toBe(false);
    expect(matches(h, 'file_change', { path: '/work/project/src/a.ts' }, { workspace: '/work/project' })).toBe(true);
    expect(matches(h, 'file_change', { path: '/elsewhere/src/a.ts' }, { workspace: '/work/project' })).toBe(false);
    expect(matches(h, 'file_change', {})).toBe(false);
  });

  it('matches a pattern without a slash against the base name anywhere', () => {
    expect(matches(files(['*.ts']), 'file_change', { path: 'deep/down/x.ts' })).toBe(true);
    expect(matches(files(['.env*']), 'file_change', { path: 'config/.env.local' })).toBe(true);
    expect(matches(files(['*.ts']), 'file_change', { path: 'x.js' })).toBe(false);
  });

  it('matches a commit when any staged file matches', () => {
    const h = files(['**/*.py']);
    expect(matches(h, 'git_commit', { files: ['README.md', 'tools/gen.py'], branch: 'main' })).toBe(true);
    expect(matches(h, 'git_commit', { files: ['README.md'] })).toBe(false);
  });

  it('matches every occurrence without a matcher, and nothing the hook does not subscribe to', () => {
    const h = hook('any', { events: ['session_start', 'before_tool'] });
    expect(matches(h, 'session_start', {})).toBe(true);
    expect(matches(h, 'before_tool', { tool: 'x' })).toBe(true);
    expect(matches(h, 'after_tool', { tool: 'x' })).toBe(false);
    expect(matches(hook('empty', { matcher: { tools: [] } }), 'before_tool', {})).toBe(true);
  });

  it('does not match when the event has no data of the matcher’s kind', () => {
    expect(matches(tool(['*']), 'session_start', { tool: 'x' })).toBe(false);
    expect(matches(files(['**']), 'before_tool', { tool: 'x', path: 'a.ts' })).toBe(false);
  });

  it('is alias-insensitive: a hook subscribed as pre-tool-call holds the canonical before_tool', () => {
    const h = hook('legacy', { events: ['before_tool'], subscribedAs: ['pre-tool-call'], matcher: { tools: ['write_*'] } });
    expect(matches(h, 'before_tool', { tool: 'write_file' })).toBe(true);
  });
});
