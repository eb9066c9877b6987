/**
 * Agent events: `kernel.emit(event, context)` runs every handler in order and
 * returns one decision. Handlers here are plugins defined in memory (and the
 * host itself, through `kernel.on`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isPlinthError, type EventHandler, type PlinthError, type TapOptions } from '../sdk/index.js';
import { createTestKernel, type TestKernel, type TestKernelOptions } from '../testing/index.js';
import type { InlinePlugin } from '../kernel/kernel.js';
import { rejection } from './support/errors.js';

const kernels: TestKernel[] = [];

async function boot(options: TestKernelOptions = {}): Promise<TestKernel> {
  const kernel = await createTestKernel(options);
  kernels.push(kernel);
  return kernel;
}

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

/** A plugin that only handles one event. */
function handles(name: string, event: string, handler: EventHandler, options?: TapOptions): InlinePlugin {
  return { manifest: { name }, setup: (kernel) => void kernel.on(event, handler, options) };
}

/** A promise that never settles: a handler that never answers. */
const never = <T = void>(): Promise<T> => new Promise<T>(() => {});

describe('names', () => {
  it('allows an event nobody handles and returns the context unchanged', async () => {
    const kernel = await boot();
    const context = { tool: 'read_file', args: { path: 'README.md' } };

    const decision = await kernel.emit('before_tool', context);

    expect(decision).toEqual({ allow: true, messages: [], systemMessages: [], context });
    expect(decision.context).toBe(context);
    expect(decision.blockedBy).toBeUndefined();
  });

  it('accepts the hook protocol aliases, both when handling and when emitting', async () => {
    const seen: string[] = [];
    const kernel = await boot({
      plugins: [
        handles('canonical', 'before_tool', (_context, event) => void seen.push(`canonical:${event}`)),
        handles('alias', 'pre-tool-call', (_context, event) => void seen.push(`alias:${event}`)),
      ],
    });

    await kernel.emit('pre-tool-call', {});
    await kernel.emit('before_tool', {});

    // Handlers always receive the canonical name.
    expect(seen).toEqual(['alias:before_tool', 'canonical:before_tool', 'alias:before_tool', 'canonical:before_tool']);
  });

  it('rejects an unknown event name with PLN_E_EVENT_UNKNOWN', async () => {
    const kernel = await boot();
    const error = await rejection(kernel.emit('before_lunch', {}));
    expect(error.code).toBe('PLN_E_EVENT_UNKNOWN');
    expect(error.message).toContain('before_lunch');
    expect(() => kernel.on('before_lunch', () => undefined)).toThrow(expect.objectContaining({ code: 'PLN_E_EVENT_UNKNOWN' }));
  });

  it('says which event a misspelt name is near, for canonical names and aliases alike', async () => {
    const kernel = await boot();
    expect((await rejection(kernel.emit('before_tol', {}))).message).toBe('unknown event "before_tol" (did you mean "before_tool"?)');
    expect((await rejection(kernel.emit('pre-tool-cal', {}))).message).toBe('unknown event "pre-tool-cal" (did you mean "pre-tool-call"?)');
    expect((await rejection(kernel.emit('xyz', {}))).message).toBe('unknown event "xyz"');
  });

  it('rejects an unknown event name while a lazy plugin waits for an event too', async () => {
    const kernel = await boot({ plugins: [{ manifest: { name: 'sleeper', activation: 'lazy', events: ['after_tool'] }, setup() {} }] });
    expect((await rejection(kernel.emit('before_lunch', {}))).code).toBe('PLN_E_EVENT_UNKNOWN');
  });
});

describe('order and results', () => {
  it('runs handlers by stage and `before`, not by load order', async () => {
    const order: string[] = [];
    const record = (name: string) => () => void order.push(name);
    // Load order is by name: alpha, beta, gamma.
    const kernel = await boot({
      plugins: [
        handles('alpha', 'before_model', record('alpha'), { stage: 10 }),
        handles('beta', 'before_model', record('beta')),
        handles('gamma', 'before_model', record('gamma'), { before: 'beta' }),
      ],
    });

    await kernel.emit('before_model', {});

    expect(order).toEqual(['gamma', 'beta', 'alpha']);
  });

  it('collects messages and system messages in handler order', async () => {
    const kernel = await boot({
      plugins: [
        handles('a-first', 'after_tool', () => ({ message: 'tool finished', systemMessage: 'exit code 0' })),
        handles('b-silent', 'after_tool', () => undefined),
        handles('c-second', 'after_tool', async () => ({ message: 'output was truncated' })),
      ],
    });

    const decision = await kernel.emit('after_tool', { tool: 'shell' });

    expect(decision.allow).toBe(true);
    expect(decision.messages).toEqual(['tool finished', 'output was truncated']);
    expect(decision.systemMessages).toEqual(['exit code 0']);
  });

  it('accepts several messages from one handler, and names what inside the plugin blocked', async () => {
    const kernel = await boot({
      plugins: [
        handles('hook-runner', 'before_tool', () => ({
          allow: false,
          message: ['lint-guard: rm is not allowed', 'audit: noted'],
          systemMessage: ['policy v2 applies'],
          by: 'workspace:lint-guard',
        })),
      ],
    });

    const decision = await kernel.emit('before_tool', { tool: 'rm' });

    expect(decision.messages).toEqual(['lint-guard: rm is not allowed', 'audit: noted']);
    expect(decision.systemMessages).toEqual(['policy v2 applies']);
    expect(decision.blockedBy).toEqual({ plugin: 'hook-runner', by: 'workspace:lint-guard', reason: 'lint-guard: rm is not allowed' });
  });

  it('passes a returned context to the next handler and to the caller', async () => {
    const seenBySecond: unknown[] = [];
    const kernel = await boot({
      plugins: [
        handles('a-rewriter', 'before_tool', (context) => ({ context: { ...context, args: { path: '/safe/tmp' } } })),
        handles('b-reader', 'before_tool', async (context) => {
          seenBySecond.push(context.args);
        }),
      ],
    });

    const decision = await kernel.emit('before_tool', { tool: 'write_file', args: { path: '/etc/passwd' } });

    expect(seenBySecond).toEqual([{ path: '/safe/tmp' }]);
    expect(decision.context).toEqual({ tool: 'write_file', args: { path: '/safe/tmp' } });
  });
});

describe('blocking', () => {
  it('stops at a handler that blocks and names it', async () => {
    const ran: string[] = [];
    const kernel = await boot({
      plugins: [
        handles('a-policy', 'before_tool', (context) => {
          ran.push('a-policy');
          return context.tool === 'rm' ? { allow: false, message: 'rm is not allowed here' } : undefined;
        }),
        handles('b-audit', 'before_tool', () => void ran.push('b-audit')),
      ],
    });

    const blocked = await kernel.emit('before_tool', { tool: 'rm' });
    expect(blocked.allow).toBe(false);
    expect(blocked.blockedBy?.plugin).toBe('a-policy');
    expect(blocked.blockedBy?.reason).toBe('rm is not allowed here');
    expect(blocked.blockedBy?.code).toBeUndefined(); // a decision, not a failure
    expect(blocked.messages).toEqual(['rm is not allowed here']);
    expect(ran).toEqual(['a-policy']);

    ran.length = 0;
    expect((await kernel.emit('before_tool', { tool: 'ls' })).allow).toBe(true);
    expect(ran).toEqual(['a-policy', 'b-audit']);
  });

  it('blocks the event (fail closed) when a handler throws, names it and logs it', async () => {
    const ran: string[] = [];
    const kernel = await boot({
      plugins: [
        handles('a-crashy', 'before_tool', () => {
          throw new TypeError("Cannot read properties of undefined (reading 'path')");
        }),
        handles('b-audit', 'before_tool', () => void ran.push('b-audit')),
      ],
    });

    const decision = await kernel.emit('before_tool', { tool: 'read_file' });

    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.plugin).toBe('a-crashy');
    expect(decision.blockedBy?.code).toBe('PLN_E_EVENT_HANDLER');
    expect(ran).toEqual([]);
    expect(kernel.logs.some((line) => line.includes('PLN_E_EVENT_HANDLER') && line.includes('a-crashy'))).toBe(true);
  });

  it('blocks the event when an async handler rejects', async () => {
    const kernel = await boot({
      plugins: [
        handles('a-remote', 'before_model', async () => {
          await Promise.resolve();
          throw new Error('policy server unreachable');
        }),
        handles('b-after', 'before_model', () => ({ message: 'should not appear' })),
      ],
    });

    const decision = await kernel.emit('before_model', {});

    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.plugin).toBe('a-remote');
    expect(decision.blockedBy?.code).toBe('PLN_E_EVENT_HANDLER');
    expect(decision.messages).not.toContain('should not appear');
    expect(kernel.logs.some((line) => line.includes('PLN_E_EVENT_HANDLER') && line.includes('a-remote'))).toBe(true);
  });

  it('answers blocked, naming the handler, when a handler never settles', async () => {
    const ran: string[] = [];
    const kernel = await boot({
      settings: { timeouts: { event: 300 } },
      plugins: [
        handles('a-quick', 'before_tool', () => void ran.push('a-quick')),
        handles('b-stuck', 'before_tool', () => never()),
        handles('c-never-reached', 'before_tool', () => void ran.push('c-never-reached')),
      ],
    });

    const decision = await kernel.emit('before_tool', { tool: 'ls' });

    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.plugin).toBe('b-stuck');
    expect(decision.blockedBy?.code).toBe('PLN_E_EVENT_TIMEOUT');
    expect(ran).toEqual(['a-quick']);
    expect(kernel.logs.some((line) => line.includes('PLN_E_EVENT_TIMEOUT') && line.includes('b-stuck'))).toBe(true);
  });
});

describe('interceptors', () => {
  it('see every handler call, and the decision is the same as without them', async () => {
    const kernel = await boot({
      plugins: [
        handles('a-rewriter', 'before_tool', (context) => ({ context: { ...context, checked: true }, message: 'rewritten' })),
        handles('b-crashy', 'before_tool', () => {
          throw new Error('boom');
        }),
        handles('c-never-reached', 'before_tool', () => ({ message: 'should not appear' })),
      ],
    });
    const traced: string[] = [];
    kernel.eventHooks.before_tool.intercept({ tap: (tap) => void traced.push(tap.name) });

    const decision = await kernel.emit('before_tool', { tool: 'ls' });

    expect(traced).toEqual(['a-rewriter', 'b-crashy', 'c-never-reached']);
    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.plugin).toBe('b-crashy');
    expect(decision.blockedBy?.code).toBe('PLN_E_EVENT_HANDLER');
    expect(decision.context).toEqual({ tool: 'ls', checked: true });
    expect(decision.messages[0]).toBe('rewritten');
    expect(decision.messages).not.toContain('should not appear');
  });
});

describe('the host', () => {
  it('handles events with kernel.on, under the provider name "host"', async () => {
    const kernel = await boot({ plugins: [handles('logger', 'before_tool', () => ({ systemMessage: 'logged' }))] });
    const off = kernel.on('before_tool', (context) => (context.tool === 'shell' ? { allow: false, message: 'no shell in CI' } : undefined));

    const decision = await kernel.emit('pre-tool-call', { tool: 'shell' });

    expect(decision.allow).toBe(false);
    expect(decision.blockedBy).toEqual({ plugin: 'host', reason: 'no shell in CI' });
    expect(decision.systemMessages).toEqual(['logged']);

    off();
    expect((await kernel.emit('before_tool', { tool: 'shell' })).allow).toBe(true);
  });

  it('can order its handler before a plugin\'s', async () => {
    const order: string[] = [];
    const kernel = await boot({ plugins: [handles('plugin-handler', 'session_start', () => void order.push('plugin'))] });
    kernel.on('session_start', () => void order.push('host'), { before: 'plugin-handler' });

    await kernel.emit('on-session-start', {});

    expect(order).toEqual(['host', 'plugin']);
  });
});

describe('the walk, handlers answering at once and later', () => {
  // emit walks synchronously while handlers answer at once, and goes on through promises once one answers later:
  // every mix must come to the same decision.
  const rewrite = (key: string) => (context: Record<string, unknown>) => ({ context: { ...context, [key]: true }, message: key });
  const later = (fn: EventHandler): EventHandler => async (context, event) => fn(context, event);
  const atOnce = (fn: EventHandler): EventHandler => fn;

  for (const [label, first, second] of [
    ['at once, then later', atOnce, later],
    ['later, then at once', later, atOnce],
    ['later, then later', later, later],
  ] as const) {
    it(`rewrites the context and blocks alike: ${label}`, async () => {
      const seen: unknown[] = [];
      const kernel = await boot({
        plugins: [
          handles('a-rewriter', 'before_tool', first(rewrite('a') as EventHandler)),
          handles('b-blocker', 'before_tool', second(((context) => (seen.push(context), { allow: false, message: 'no', code: 'B_NO' })) as EventHandler)),
          handles('c-never-reached', 'before_tool', () => void seen.push('c')),
        ],
      });

      const decision = await kernel.emit('before_tool', { tool: 'ls' });

      expect(seen).toEqual([{ tool: 'ls', a: true }]);
      expect(decision).toEqual({ allow: false, messages: ['a', 'no'], systemMessages: [], context: { tool: 'ls', a: true }, blockedBy: { plugin: 'b-blocker', reason: 'no', code: 'B_NO' } });
    });
  }

  it('blocks (fail closed) on an answer it cannot read, at once or later, naming the handler', async () => {
    for (const answer of [() => ({ message: 5 }), async () => ({ message: 5 })]) {
      const kernel = await boot({ plugins: [handles('garbled', 'after_tool', answer as unknown as EventHandler)] });

      const decision = await kernel.emit('after_tool', {});

      expect(decision.allow).toBe(false);
      expect(decision.blockedBy).toMatchObject({ plugin: 'garbled', code: 'PLN_E_EVENT_HANDLER' });
    }
  });

  it('blocks on a thenable whose then throws, naming the handler', async () => {
    const thenable = { then: () => { throw new Error('no then'); } };
    const kernel = await boot({ plugins: [handles('odd', 'after_tool', (() => thenable) as unknown as EventHandler)] });

    const decision = await kernel.emit('after_tool', {});

    expect(decision.allow).toBe(false);
    expect(decision.blockedBy).toMatchObject({ plugin: 'odd', code: 'PLN_E_EVENT_HANDLER' });
  });

  it('gives each emit its own decision, with arrays of its own, while others are in flight', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const kernel = await boot({
      plugins: [handles('slow', 'after_tool', async (context) => (context.wait ? (await gate, { message: 'slow' }) : { message: 'quick' }))],
    });

    const slow = kernel.emit('after_tool', { wait: true });
    const quick = await kernel.emit('after_tool', {});
    release();
    const late = await slow;

    expect(quick.messages).toEqual(['quick']);
    expect(late.messages).toEqual(['slow']);
    expect(late.messages).not.toBe(quick.messages);
  });

  it('answers an emit in flight as blocked when the kernel shuts down, and one that answered at once as it was', async () => {
    const kernel = await createTestKernel({
      plugins: [handles('stuck', 'before_tool', () => never()), handles('quick', 'after_tool', () => ({ message: 'done' }))],
    });

    const quick = kernel.emit('after_tool', {});
    const pending = kernel.emit('before_tool', {});
    await kernel.dispose();

    expect((await quick).messages).toEqual(['done']);
    expect((await pending).blockedBy).toMatchObject({ plugin: 'kernel', code: 'PLN_E_KERNEL_CLOSED' });
  });
});

describe('the watchdog', () => {
  const refTimers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;

  it('keeps no idle process alive: after emits in flight are answered, no timer of the kernel holds the loop', async () => {
    const kernel = await boot({ plugins: [handles('later', 'after_tool', async () => ({ message: 'ok' }))] });
    const before = refTimers();

    const decisions = await Promise.all(Array.from({ length: 50 }, () => kernel.emit('after_tool', {})));

    expect(decisions.every((d) => d.messages[0] === 'ok')).toBe(true);
    expect(refTimers()).toBe(before);
  });
});

describe("what handlers ask the host (Decision.host)", () => {
  it('is absent when no handler asks anything; merged in handler order: the first stop and defer, the last of the others, every watched path', async () => {
    const kernel = await boot({
      plugins: [
        handles('first', 'after_tool', () => ({ host: { stop: { reason: 'build failed' }, sessionTitle: 'one', watchPaths: ['/a'] } })),
        handles('second', 'after_tool', () => ({ host: { stop: { reason: 'later' }, sessionTitle: 'two', watchPaths: ['/a', '/b'], retry: true } })),
        handles('silent', 'after_tool', () => ({ systemMessage: 'noted' })),
      ],
    });
    const decision = await kernel.emit('after_tool', { tool: 'Bash', result: {} });
    expect(decision.host).toEqual({ stop: { reason: 'build failed' }, sessionTitle: 'two', watchPaths: ['/a', '/b'], retry: true });
    expect(decision.allow).toBe(true);
    expect((await kernel.emit('before_tool', { tool: 'Bash' })).host).toBeUndefined();
    expect(Object.keys(await kernel.emit('before_tool', { tool: 'Bash' }))).not.toContain('host');
  });
});
