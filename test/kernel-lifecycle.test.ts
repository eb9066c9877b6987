/**
 * The kernel's plugin lifecycle: load order, failures and time limits during
 * setup and teardown, the lifecycle hooks plugins tap (load, ready, manifest),
 * lazy activation, plugins on disk, disposers and plugin settings.
 *
 * Each test builds its plugins in memory with `createTestKernel`, except where
 * the point is loading code from disk.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlinthError, isPlinthError, type PluginInfo, type PluginStatus, type ReadyInfo } from '../sdk/index.js';
import { createTestKernel, type TestKernel, type TestKernelOptions } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { tempFolders, writePlugin } from './support/plugin-folder.js';

const kernels: TestKernel[] = [];
const folders = tempFolders('plinth-lifecycle-');
const tempFolder = folders.make;

/** Boots a test kernel that is disposed after the test. */
async function boot(options: TestKernelOptions): Promise<TestKernel> {
  const kernel = await createTestKernel(options);
  kernels.push(kernel);
  return kernel;
}

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await folders.removeAll();
});

/** One plugin's status; fails the test when the kernel does not know it. */
function statusOf(kernel: TestKernel, name: string): PluginStatus {
  const status = kernel.status().find((plugin) => plugin.name === name);
  if (!status) throw new Error(`no status for plugin "${name}"`);
  return status;
}

/** Whether any captured log line mentions every one of `parts`. */
function logged(kernel: TestKernel, ...parts: string[]): boolean {
  return kernel.logs.some((line) => parts.every((part) => line.includes(part)));
}

/** A promise that never settles: the plugin code "hangs". */
const never = <T = void>(): Promise<T> => new Promise<T>(() => {});

describe('load order', () => {
  it('sets plugins up in dependency order and tears them down in reverse', async () => {
    const calls: string[] = [];
    const plugin = (name: string, dependencies: Record<string, string> = {}) => ({
      manifest: { name, dependencies },
      setup() {
        calls.push(`setup ${name}`);
        return () => void calls.push(`teardown ${name}`);
      },
    });
    // Alphabetical order would be app, db, zeta-config: dependencies must win over names.
    const kernel = await boot({
      plugins: [plugin('app', { db: '*' }), plugin('db', { 'zeta-config': '*' }), plugin('zeta-config')],
    });

    expect(calls).toEqual(['setup zeta-config', 'setup db', 'setup app']);
    expect(kernel.status().map((p) => p.state)).toEqual(['active', 'active', 'active']);

    calls.length = 0;
    const report = await kernel.dispose();
    expect(calls).toEqual(['teardown app', 'teardown db', 'teardown zeta-config']);
    expect(report.stopped).toEqual(['app', 'db', 'zeta-config']);
    expect(report.errors).toEqual([]);
  });
});

describe('setup failures', () => {
  it('marks a plugin whose setup throws as failed, skips its dependents, and loads the rest', async () => {
    const setUp: string[] = [];
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'broken' },
          setup() {
            throw new Error('cannot open database');
          },
        },
        { manifest: { name: 'needs-broken', dependencies: { broken: '*' } }, setup: () => void setUp.push('needs-broken') },
        { manifest: { name: 'unrelated' }, setup: () => void setUp.push('unrelated') },
      ],
    });

    const broken = statusOf(kernel, 'broken');
    expect(broken.state).toBe('failed');
    expect(broken.error?.code).toBe('PLN_E_PLUGIN_SETUP');
    expect(broken.error?.message).toContain('broken');
    expect(broken.error?.message).toContain('setup');

    const dependent = statusOf(kernel, 'needs-broken');
    expect(dependent.state).toBe('skipped');
    expect(dependent.error?.code).toBe('PLN_E_DEP_FAILED');
    expect(dependent.error?.message).toContain('needs-broken');
    expect(dependent.error?.message).toContain('"broken"');

    expect(statusOf(kernel, 'unrelated').state).toBe('active');
    expect(setUp).toEqual(['unrelated']);
    // Boot resolved, and its report says the same thing as status().
    expect(kernel.report.plugins.find((p) => p.name === 'broken')?.state).toBe('failed');
  });

  it('treats an async setup that rejects like one that throws', async () => {
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'rejects' },
          async setup() {
            await Promise.resolve();
            throw new Error('late failure');
          },
        },
      ],
    });
    expect(statusOf(kernel, 'rejects').error?.code).toBe('PLN_E_PLUGIN_SETUP');
    // activate() answers with the same error for a plugin that already failed.
    const error = await rejection(kernel.activate('rejects'));
    expect(error.code).toBe('PLN_E_PLUGIN_SETUP');
    expect(error.plugin).toBe('rejects');
  });

  it('times out a setup that never settles, finishes boot, and undoes what the plugin registered', async () => {
    let handlerCalls = 0;
    let signal: AbortSignal | undefined;
    const kernel = await boot({
      settings: { timeouts: { setup: 200 } },
      plugins: [
        {
          manifest: { name: 'hangs', provides: ['cache'] },
          setup(kernel, ctx) {
            signal = ctx.signal;
            kernel.on('before_tool', () => void handlerCalls++);
            kernel.provide('cache', new Map());
            return never();
          },
        },
        { manifest: { name: 'fine' }, setup() {} },
      ],
    });

    const hangs = statusOf(kernel, 'hangs');
    expect(hangs.state).toBe('failed');
    expect(hangs.error?.code).toBe('PLN_E_PLUGIN_TIMEOUT');
    expect(hangs.error?.message).toContain('hangs');
    expect(statusOf(kernel, 'fine').state).toBe('active');
    expect(signal?.aborted).toBe(true);

    // The handler and the service registered before the hang are gone.
    const decision = await kernel.emit('before_tool', { tool: 'ls' });
    expect(decision.allow).toBe(true);
    expect(handlerCalls).toBe(0);
    const error = await rejection(kernel.get('cache'));
    expect(error.code).toBe('PLN_E_SERVICE_UNAVAILABLE');
  });
});

describe("a plugin's lifetime signal (ctx.signal)", () => {
  it('takes a listener per resource the plugin keeps open (twenty servers) without a MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    let fired = 0;
    try {
      const kernel = await boot({
        plugins: [
          {
            manifest: { name: 'pool' },
            setup(_kernel, ctx) {
              for (let i = 0; i < 20; i++) ctx.signal.addEventListener('abort', () => void fired++, { once: true });
            },
          },
        ],
      });
      await kernel.shutdown();
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(fired).toBe(20);
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});

describe('teardown', () => {
  it('moves on from a teardown that hangs and reports it by name; the other teardowns still run', async () => {
    const tornDown: string[] = [];
    const kernel = await boot({
      settings: { timeouts: { teardown: 200 } },
      plugins: [
        { manifest: { name: 'first' }, setup: () => () => void tornDown.push('first') },
        { manifest: { name: 'second' }, setup: () => () => never() },
        { manifest: { name: 'third' }, setup: () => () => void tornDown.push('third') },
      ],
    });

    const report = await kernel.dispose();

    expect(tornDown).toEqual(['third', 'first']);
    expect(report.stopped).toEqual(['third', 'second', 'first']);
    expect(report.errors.map((e) => e.code)).toEqual(['PLN_E_TEARDOWN_TIMEOUT']);
    expect(report.errors[0]?.plugin).toBe('second');
    expect(report.errors[0]?.message).toContain('second');
  });

  it('reports a teardown that throws and still runs the others', async () => {
    const tornDown: string[] = [];
    const kernel = await boot({
      plugins: [
        { manifest: { name: 'first' }, setup: () => () => void tornDown.push('first') },
        {
          manifest: { name: 'second' },
          setup: () => () => {
            throw new Error('socket already closed');
          },
        },
      ],
    });

    const report = await kernel.dispose();

    expect(tornDown).toEqual(['first']);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]?.code).toBe('PLN_E_PLUGIN_TEARDOWN');
    expect(report.errors[0]?.plugin).toBe('second');
    expect(report.errors[0]?.hook).toBe('teardown');
  });
});

describe('lifecycle hooks', () => {
  it('lets a load tap refuse a plugin before its code runs', async () => {
    const setUp: string[] = [];
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'gate' },
          setup(kernel) {
            kernel.hooks.load.tap((info) => (info.name === 'untrusted' ? 'not on the allow list' : undefined));
          },
        },
        { manifest: { name: 'trusted' }, setup: () => void setUp.push('trusted') },
        { manifest: { name: 'untrusted' }, setup: () => void setUp.push('untrusted') },
      ],
    });

    expect(setUp).toEqual(['trusted']);
    const refused = statusOf(kernel, 'untrusted');
    expect(refused.state).toBe('failed');
    expect(refused.error?.code).toBe('PLN_E_PLUGIN_REFUSED');
    expect(refused.error?.message).toContain('untrusted');
  });

  it('refuses the plugin being loaded when a load tap throws (fail closed)', async () => {
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'gate' },
          setup(kernel) {
            kernel.hooks.load.tap(() => {
              throw new Error('trust store unreadable');
            });
          },
        },
        { manifest: { name: 'later' }, setup() {} },
      ],
    });
    expect(statusOf(kernel, 'later').error?.code).toBe('PLN_E_PLUGIN_REFUSED');
  });

  it('gives ready taps every plugin status; a ready tap that throws is logged and the others still run', async () => {
    const seen: ReadyInfo[] = [];
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'a-noisy' },
          setup(kernel) {
            kernel.hooks.ready.tap(() => {
              throw new Error('status bar not available');
            });
          },
        },
        {
          manifest: { name: 'b-observer' },
          setup(kernel) {
            kernel.hooks.ready.tap((info) => void seen.push(info));
          },
        },
        {
          manifest: { name: 'c-broken' },
          setup() {
            throw new Error('nope');
          },
        },
        { manifest: { name: 'd-sleeper', activation: 'lazy' }, setup() {} },
      ],
    });

    expect(seen).toHaveLength(1);
    const states = Object.fromEntries(seen[0]!.plugins.map((p) => [p.name, p.state]));
    expect(states).toEqual({ 'a-noisy': 'active', 'b-observer': 'active', 'c-broken': 'failed', 'd-sleeper': 'lazy' });
    expect(logged(kernel, 'PLN_E_HOOK_FAILED', 'a-noisy', 'ready')).toBe(true);
    expect(statusOf(kernel, 'a-noisy').state).toBe('active');
  });

  it('shows a manifest tap every resolved manifest, including later and lazy plugins', async () => {
    const sections = new Map<string, unknown>();
    await boot({
      plugins: [
        {
          // Loads first (no dependencies, first by name), like a hooks plugin reading everyone's `hooks`.
          manifest: { name: 'hook-reader' },
          setup(kernel) {
            kernel.hooks.manifest.tap((info: PluginInfo) => void sections.set(info.name, info.manifest.hooks));
          },
        },
        {
          manifest: { name: 'later', hooks: { before_tool: [{ command: './check.sh' }] } },
          setup() {},
        },
        {
          manifest: { name: 'lazy-linter', activation: 'lazy', hooks: { after_tool: [{ command: 'lint' }] } },
          setup() {},
        },
      ],
    });

    expect([...sections.keys()].sort()).toEqual(['hook-reader', 'later', 'lazy-linter']);
    expect(sections.get('later')).toEqual({ before_tool: [{ command: './check.sh' }] });
    expect(sections.get('lazy-linter')).toEqual({ after_tool: [{ command: 'lint' }] });
    expect(sections.get('hook-reader')).toEqual({});
  });
});

describe('lazy plugins', () => {
  /** A lazy plugin that records its setup in `log`. */
  function lazyPlugin(name: string, manifest: { dependencies?: Record<string, string> }, log: string[]) {
    return {
      manifest: { name, activation: 'lazy' as const, ...manifest },
      setup: () => void log.push(name),
    };
  }

  it('does not set a lazy plugin up at boot', async () => {
    const log: string[] = [];
    const kernel = await boot({ plugins: [lazyPlugin('sleeper', {}, log)] });
    expect(statusOf(kernel, 'sleeper').state).toBe('lazy');
    expect(log).toEqual([]);
  });

  it('activates a lazy plugin when a service it provides is requested', async () => {
    const log: string[] = [];
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'clock', activation: 'lazy', provides: ['clock'] },
          setup(kernel) {
            log.push('clock');
            kernel.provide('clock', { now: () => 42 });
          },
        },
      ],
    });
    expect(log).toEqual([]);

    const clock = (await kernel.get('clock')) as { now(): number };

    expect(clock.now()).toBe(42);
    expect(log).toEqual(['clock']);
    expect(statusOf(kernel, 'clock').state).toBe('active');
  });

  it('activates a lazy plugin when an event in its manifest fires, before the handlers run', async () => {
    const log: string[] = [];
    const kernel = await boot({
      plugins: [
        {
          // Declared with the hook protocol's spelling; the canonical name fires it.
          manifest: { name: 'guard', activation: 'lazy', events: ['pre-tool-call'] },
          setup(kernel) {
            log.push('guard');
            kernel.on('before_tool', (context) => (context.tool === 'rm' ? { allow: false, message: 'no rm' } : undefined));
          },
        },
      ],
    });

    await kernel.emit('after_tool', {});
    expect(log).toEqual([]);

    const decision = await kernel.emit('before_tool', { tool: 'rm' });
    expect(log).toEqual(['guard']);
    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.plugin).toBe('guard');

    await kernel.emit('before_tool', { tool: 'ls' });
    expect(log).toEqual(['guard']);
  });

  it('makes every event that fires while a lazy plugin sets up wait for it', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'slow-guard', activation: 'lazy', events: ['before_tool'] },
          async setup(kernel) {
            await released; // e.g. loading a policy file
            kernel.on('before_tool', () => ({ allow: false, message: 'blocked by policy' }));
          },
        },
      ],
    });

    const first = kernel.emit('before_tool', { tool: 'rm' });
    const second = kernel.emit('before_tool', { tool: 'rm' });
    release();

    expect((await first).blockedBy?.plugin).toBe('slow-guard');
    expect((await second).blockedBy?.plugin).toBe('slow-guard');
  });

  it('activates a lazy plugin on activate(), its lazy dependencies first', async () => {
    const log: string[] = [];
    const kernel = await boot({
      plugins: [lazyPlugin('top', { dependencies: { middle: '*' } }, log), lazyPlugin('middle', { dependencies: { base: '*' } }, log), lazyPlugin('base', {}, log)],
    });
    expect(log).toEqual([]);

    await kernel.activate('top');

    expect(log).toEqual(['base', 'middle', 'top']);
    expect(kernel.status().map((p) => p.state)).toEqual(['active', 'active', 'active']);
    // Activating again does not set up again.
    await kernel.activate('top');
    expect(log).toEqual(['base', 'middle', 'top']);
  });

  it('rejects activate() of a plugin nobody installed', async () => {
    const kernel = await boot({});
    expect((await rejection(kernel.activate('ghost'))).code).toBe('PLN_E_PLUGIN_UNKNOWN');
  });
});

describe('plugins on disk', () => {
  it('loads a TypeScript plugin with jiti; plinth/sdk inside it is the host sdk', async () => {
    const root = await tempFolder();
    await writePlugin(
      root,
      { name: 'ts-greeter', main: './index.ts', provides: ['greeter'] },
      {
        'index.ts': `
import { definePlugin, PlinthError } from 'plinth/sdk';

interface Greeter {
  greet(name: string): string;
  refuse(): PlinthError;
  errorClass: typeof PlinthError;
}

export default definePlugin({
  setup(kernel, ctx) {
    const greeter: Greeter = {
      greet: (name: string): string => \`hello, \${name}\`,
      refuse: () => new PlinthError('PLN_E_GREETER_REFUSED', 'not today', { plugin: ctx.name }),
      errorClass: PlinthError,
    };
    kernel.provide('greeter', greeter);
  },
});
`,
      },
    );
    const kernel = await boot({ pluginDirs: [root] });

    expect(statusOf(kernel, 'ts-greeter').state).toBe('active');
    const greeter = (await kernel.get('greeter')) as { greet(name: string): string; refuse(): unknown; errorClass: unknown };
    expect(greeter.greet('plinth')).toBe('hello, plinth');
    expect(greeter.errorClass).toBe(PlinthError);
    const refusal = greeter.refuse();
    expect(refusal).toBeInstanceOf(PlinthError);
    expect((refusal as PlinthError).code).toBe('PLN_E_GREETER_REFUSED');
  });

  it('reports a missing main as PLN_E_PLUGIN_IMPORT and a module without a plugin as PLN_E_PLUGIN_EXPORT', async () => {
    const root = await tempFolder();
    await writePlugin(root, { name: 'no-main-file', main: './missing.ts' });
    await writePlugin(root, { name: 'no-default', main: './index.ts' }, { 'index.ts': 'export const helper = (n: number): number => n + 1;\n' });
    await writePlugin(root, { name: 'wrong-default', main: './index.ts' }, { 'index.ts': 'export default { name: "not a plugin" };\n' });
    const kernel = await boot({ pluginDirs: [root] });

    expect(statusOf(kernel, 'no-main-file').error?.code).toBe('PLN_E_PLUGIN_IMPORT');
    expect(statusOf(kernel, 'no-default').error?.code).toBe('PLN_E_PLUGIN_EXPORT');
    expect(statusOf(kernel, 'wrong-default').error?.code).toBe('PLN_E_PLUGIN_EXPORT');
    for (const name of ['no-main-file', 'no-default', 'wrong-default']) {
      expect(statusOf(kernel, name).state).toBe('failed');
      expect(statusOf(kernel, name).error?.message).toContain(name);
    }
  });
});

describe('disposers', () => {
  it('stops a host handler once its disposer is called', async () => {
    const kernel = await boot({});
    const calls: string[] = [];
    const off = kernel.on('notification', () => void calls.push('host'));

    await kernel.emit('notification', {});
    off();
    off(); // harmless twice
    await kernel.emit('notification', {});

    expect(calls).toEqual(['host']);
  });

  it('removes a plugin handler when the plugin disposes it', async () => {
    const calls: string[] = [];
    let off: (() => void) | undefined;
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'once' },
          setup(kernel) {
            off = kernel.on('notification', () => {
              calls.push('once');
              off?.();
            });
          },
        },
      ],
    });

    await kernel.emit('notification', {});
    await kernel.emit('notification', {});

    expect(calls).toEqual(['once']);
  });

  it('removes every plugin handler at shutdown, and refuses events after it', async () => {
    const calls: string[] = [];
    const kernel = await boot({
      plugins: [{ manifest: { name: 'listener' }, setup: (kernel) => void kernel.on('notification', () => void calls.push('listener')) }],
    });
    await kernel.emit('notification', {});

    await kernel.shutdown();

    expect(calls).toEqual(['listener']);
    expect(kernel.eventHooks.notification.taps).toHaveLength(0);
    await expect(kernel.emit('notification', {})).rejects.toMatchObject({ code: 'PLN_E_KERNEL_CLOSED' });
  });
});

describe('serve', () => {
  it('tells plugins the host stays up only when serve() is called, once', async () => {
    const served: string[] = [];
    const kernel = await boot({
      plugins: [{ manifest: { name: 'watcher' }, setup: (k) => void k.hooks.serve.tap(() => void served.push('watcher')) }],
    });
    expect(served).toEqual([]); // boot alone (a one-shot command) does not start background work

    await kernel.serve();
    await kernel.serve();

    expect(served).toEqual(['watcher']);
  });
});

describe('settings as plugins see them', () => {
  it('lists each file as a layer with its scope, and redacts other plugins\' secrets', async () => {
    let layers: readonly { scope: string; file: string; settings: Readonly<Record<string, unknown>> }[] = [];
    const kernel = await boot({
      settings: { hooks: { before_tool: [] }, plugins: { vault: { settings: { key: 'very-secret-key' } } } },
      plugins: [
        { manifest: { name: 'vault', settings: [{ name: 'key', type: 'string', sensitive: true }] }, setup: () => undefined },
        { manifest: { name: 'reader' }, setup: (k) => void (layers = k.configLayers) },
      ],
    });

    const user = layers.find((layer) => layer.scope === 'user');
    expect(user?.file).toBe(join(kernel.home, 'settings.json'));
    expect(user?.settings.hooks).toEqual({ before_tool: [] });
    expect(JSON.stringify(layers)).not.toContain('very-secret-key');
    expect(layers.map((layer) => layer.scope)).toEqual(['user', 'workspace']);
  });
});

describe('plugin settings', () => {
  const settingsManifest = {
    name: 'greeter',
    settings: [
      { name: 'greeting', type: 'string' as const, default: 'hello' },
      { name: 'retries', type: 'number' as const, default: 1 },
      { name: 'endpoint', type: 'string' as const, envVar: 'GREETER_ENDPOINT' },
      { name: 'verbose', type: 'boolean' as const, envVar: 'GREETER_VERBOSE' },
    ],
  };

  it('fills settings from settings.json, then the declared environment variable, then the default', async () => {
    let seen: Readonly<Record<string, unknown>> | undefined;
    await boot({
      settings: { plugins: { greeter: { settings: { retries: 3, verbose: false } } } },
      env: { GREETER_ENDPOINT: 'https://api.example.test', GREETER_VERBOSE: 'true' },
      plugins: [{ manifest: settingsManifest, setup: (_kernel, ctx) => void (seen = ctx.settings) }],
    });

    expect(seen).toEqual({
      greeting: 'hello', // the default
      retries: 3, // settings.json
      endpoint: 'https://api.example.test', // the environment
      verbose: false, // settings.json wins over the environment
    });
  });

  it('fails a plugin whose setting has the wrong type, without running its code', async () => {
    let ran = false;
    const kernel = await boot({
      settings: { plugins: { greeter: { settings: { retries: 'three' } } } },
      plugins: [
        { manifest: settingsManifest, setup: () => void (ran = true) },
        { manifest: { name: 'uses-greeter', dependencies: { greeter: '*' } }, setup() {} },
      ],
    });

    const greeter = statusOf(kernel, 'greeter');
    expect(greeter.state).toBe('failed');
    expect(greeter.error?.code).toBe('PLN_E_SETTING_INVALID');
    expect(greeter.error?.message).toContain('retries');
    expect(ran).toBe(false);
    expect(statusOf(kernel, 'uses-greeter').error?.code).toBe('PLN_E_DEP_FAILED');
  });

  it('fails a plugin whose environment variable cannot be read as the declared type', async () => {
    const kernel = await boot({
      env: { GREETER_VERBOSE: 'sometimes' },
      plugins: [{ manifest: settingsManifest, setup() {} }],
    });
    expect(statusOf(kernel, 'greeter').error?.code).toBe('PLN_E_SETTING_INVALID');
    expect(statusOf(kernel, 'greeter').error?.message).toContain('GREETER_VERBOSE');
  });
});

describe('plugins that guard events (manifest `guards`)', () => {
  const GATES = ['before_tool', 'before_model', 'before_agent', 'before_tool_selection', 'approval_request'];
  /** A guard plugin: it guards the gate events and, when running, blocks `rm`. */
  const guard = (setup: NonNullable<TestKernelOptions['plugins']>[number]['setup'], extra: Record<string, unknown> = {}) => ({
    manifest: { name: 'guard', guards: GATES, ...extra },
    setup,
  });

  it('blocks every guarded event, naming the plugin, its error and the fix, when its setup throws; other events are unaffected', async () => {
    const kernel = await boot({
      plugins: [
        guard(() => {
          throw new Error('policy file unreadable');
        }),
      ],
    });
    expect(statusOf(kernel, 'guard').state).toBe('failed');
    for (const event of GATES) {
      const decision = await kernel.emit(event, { tool: 'ls' });
      expect(decision.allow, event).toBe(false);
      expect(decision.blockedBy).toMatchObject({ plugin: 'guard', code: 'PLN_E_GUARD_UNAVAILABLE' });
      expect(decision.blockedBy?.reason).toContain('PLN_E_PLUGIN_SETUP');
      expect(decision.blockedBy?.reason).toContain('policy file unreadable');
      expect(decision.blockedBy?.fix).toContain('plugins.guard.enabled: false');
    }
    // Aliases name the same events; events the plugin does not guard go on.
    expect((await kernel.emit('pre-tool-call', { tool: 'ls' })).allow).toBe(false);
    for (const event of ['after_tool', 'notification', 'session_start']) expect((await kernel.emit(event, {})).allow, event).toBe(true);
  });

  it('blocks when its settings are invalid, with the setting named and the fix from the error', async () => {
    const kernel = await boot({
      settings: { plugins: { guard: { settings: { timeout: '5s' } } } },
      plugins: [guard(() => {}, { settings: [{ name: 'timeout', type: 'number', default: 5000 }] })],
    });
    const decision = await kernel.emit('before_tool', { tool: 'ls' });
    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.reason).toContain('PLN_E_SETTING_INVALID');
    expect(decision.blockedBy?.reason).toContain('plugins.guard.settings.timeout');
    expect(decision.blockedBy?.fix).toContain('plugins.guard.settings.timeout');
  });

  it('blocks when its setup times out, and when it is skipped because a dependency failed', async () => {
    const timedOut = await boot({ settings: { timeouts: { setup: 200 } }, plugins: [guard(() => never())] });
    expect((await timedOut.emit('before_tool', {})).blockedBy?.reason).toContain('PLN_E_PLUGIN_TIMEOUT');

    const skipped = await boot({
      plugins: [
        {
          manifest: { name: 'store' },
          setup() {
            throw new Error('no disk');
          },
        },
        guard(() => {}, { dependencies: { store: '*' } }),
      ],
    });
    expect(statusOf(skipped, 'guard').state).toBe('skipped');
    const decision = await skipped.emit('before_model', {});
    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.reason).toContain('PLN_E_DEP_FAILED');
  });

  it('blocks when the resolver leaves it out (a missing dependency), but not when the user disabled it', async () => {
    const missing = await boot({ plugins: [guard(() => {}, { dependencies: { absent: '^1.0.0' } })] });
    expect(statusOf(missing, 'guard').state).toBe('excluded');
    expect((await missing.emit('before_tool', {})).blockedBy).toMatchObject({ plugin: 'guard', code: 'PLN_E_GUARD_UNAVAILABLE' });

    const disabled = await boot({ settings: { plugins: { guard: { enabled: false } } }, plugins: [guard(() => {})] });
    expect(statusOf(disabled, 'guard').state).toBe('excluded');
    expect((await disabled.emit('before_tool', {})).allow).toBe(true);
  });

  it('lets the events through while the guard runs, and activates a lazy guard on the events it guards', async () => {
    let activated = 0;
    const kernel = await boot({
      plugins: [
        guard(
          (k) => {
            activated++;
            k.on('before_tool', (context) => (context.tool === 'rm' ? { allow: false, message: 'no rm' } : undefined));
          },
          { activation: 'lazy' },
        ),
      ],
    });
    expect(activated).toBe(0);
    expect((await kernel.emit('before_tool', { tool: 'ls' })).allow).toBe(true);
    expect(activated).toBe(1);
    expect((await kernel.emit('before_tool', { tool: 'rm' })).blockedBy).toMatchObject({ plugin: 'guard', reason: 'no rm' });
  });

  it('does not block for a failed plugin that guards nothing', async () => {
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'plain' },
          setup() {
            throw new Error('broken');
          },
        },
      ],
    });
    expect((await kernel.emit('before_tool', {})).allow).toBe(true);
  });
});
