/**
 * The kernel's live lifecycle (`kernel.plugins`): plugins added, removed,
 * replaced, disabled and enabled while the kernel runs, with every
 * registration undone exactly and a failed replacement leaving the old version
 * in charge. Plugins are real folders with TypeScript code, loaded by jiti.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginInfo } from '../sdk/index.js';
import { createTestKernel, type TestKernel, type TestKernelOptions } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { tempFolders, writePlugin } from './support/plugin-folder.js';

const kernels: TestKernel[] = [];
const folders = tempFolders('plinth-live-');
const tempFolder = folders.make;

async function boot(options: TestKernelOptions = {}): Promise<TestKernel> {
  const kernel = await createTestKernel(options);
  kernels.push(kernel);
  return kernel;
}

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await folders.removeAll();
});

/**
 * A plugin that answers `before_tool` with "<name>: <answer>" (the answer from a
 * module its main imports), provides `greeter`, adds a status section, records
 * its ready/serve/teardown calls in `log.txt` and, while running, ticks a timer
 * that its abort signal stops.
 */
function answering(name: string, answer: string, extra: Partial<Record<string, unknown>> = {}) {
  return {
    manifest: { name, main: './index.ts', provides: ['greeter'], events: ['before_tool'], commands: { [`${name} hi`]: { summary: 'says hi' } }, ...extra },
    files: {
      'answer.ts': `export const answer = ${JSON.stringify(answer)};\n`,
      'index.ts': `
        import { appendFileSync } from 'node:fs';
        import { join } from 'node:path';
        import { definePlugin } from 'plinth/sdk';
        import { answer } from './answer.ts';
        export default definePlugin({
          setup(kernel, ctx) {
            const note = (what: string) => appendFileSync(join(ctx.dir, 'log.txt'), what + ' ' + answer + '\\n');
            kernel.on('before_tool', () => ({ message: ${JSON.stringify(name)} + ': ' + answer }));
            kernel.provide('greeter' as never, { greet: () => 'hello from ' + answer } as never);
            kernel.hooks.ready.tap(() => note('ready'));
            kernel.hooks.serve.tap(() => note('serve'));
            kernel.hooks.status.tap((board) => board.add({ key: ${JSON.stringify(name)}, title: ${JSON.stringify(name)}, head: [], rows: [], json: answer }));
            kernel.hooks.commands.tap((registry) => registry.add({ name: ${JSON.stringify(`${name} hi`)}, run: async () => 0 } as never));
            const timer = setInterval(() => undefined, 1000);
            ctx.signal.addEventListener('abort', () => clearInterval(timer));
            return () => note('teardown');
          },
        });
      `,
    },
  };
}

async function writeAnswering(root: string, name: string, answer: string, extra: Partial<Record<string, unknown>> = {}): Promise<string> {
  const plugin = answering(name, answer, extra);
  return writePlugin(root, plugin.manifest, plugin.files);
}

async function messages(kernel: TestKernel): Promise<string[]> {
  return (await kernel.emit('before_tool', { tool: 'x' })).messages;
}

/** What a plugin leaves in the kernel that can be counted. */
async function footprint(kernel: TestKernel) {
  return {
    taps: kernel.eventHooks.before_tool.taps.length,
    ready: kernel.hooks.ready.taps.length,
    status: (await kernel.statusSections()).length,
    commands: (await kernel.commands()).size,
  };
}

const stateOf = (kernel: TestKernel, name: string) => kernel.status().find((p) => p.name === name);
const lines = async (dir: string) => (await readFile(join(dir, 'log.txt'), 'utf8')).trim().split('\n');

describe('kernel.plugins.add and remove', () => {
  it('adds a plugin folder while running: it answers events, gets its ready tap, and owners hear of it', async () => {
    const seen: string[] = [];
    const kernel = await boot({ plugins: [{ manifest: { name: 'owner' }, setup: (k) => void k.hooks.manifest.tap((info: PluginInfo) => void seen.push(info.name)) }] });
    const root = await tempFolder();
    const dir = await writeAnswering(root, 'alpha', 'one');

    const report = await kernel.plugins.add(dir);

    expect(report).toEqual({ added: ['alpha'], removed: [], replaced: [], failed: [] });
    expect(await messages(kernel)).toEqual(['alpha: one']);
    expect(await lines(dir)).toEqual(['ready one']);
    expect(seen).toContain('alpha');
    expect(stateOf(kernel, 'alpha')).toMatchObject({ state: 'active', source: 'path', dir });
  });

  it('removing a plugin removes its dependents first and names them; adding it back restores them', async () => {
    const kernel = await boot();
    const root = await tempFolder();
    const baseDir = await writeAnswering(root, 'base', 'base');
    await writePlugin(root, { name: 'user-of-base', main: './index.ts', dependencies: { base: '^1.0.0' } }, {
      'index.ts': `import { definePlugin } from 'plinth/sdk';
        export default definePlugin({ setup(kernel) { kernel.on('before_tool', () => ({ message: 'dependent' })); } });`,
    });
    const before = await footprint(kernel);
    await kernel.plugins.add(root);
    expect((await messages(kernel)).sort()).toEqual(['base: base', 'dependent']);
    const greeter = (await kernel.get('greeter' as never)) as { greet(): string };
    expect(greeter.greet()).toBe('hello from base');

    const removed = await kernel.plugins.remove('base');

    expect(removed.removed).toEqual(['user-of-base', 'base']);
    expect(await messages(kernel)).toEqual([]);
    expect(await footprint(kernel)).toEqual(before);
    expect(stateOf(kernel, 'base')).toBeUndefined();
    expect(stateOf(kernel, 'user-of-base')).toMatchObject({ state: 'excluded', error: { code: 'PLN_E_DEP_MISSING' } });
    // A caller that kept the service gets a coded error, not the torn-down object.
    const gone = (() => {
      try {
        greeter.greet();
      } catch (error) {
        return error as { code?: string };
      }
    })();
    expect(gone?.code).toBe('PLN_E_SERVICE_GONE');
    expect(await lines(baseDir)).toEqual(['ready base', 'teardown base']);

    const back = await kernel.plugins.add(baseDir);
    expect([...back.added].sort()).toEqual(['base', 'user-of-base']);
    expect((await messages(kernel)).sort()).toEqual(['base: base', 'dependent']);
    expect(greeter.greet()).toBe('hello from base');
  });

  it('finds new, changed and gone plugins in the plugin folders with rescan', async () => {
    const kernel = await boot();
    const plugins = join(kernel.home, 'plugins');
    const dir = await writeAnswering(plugins, 'gamma', 'v1');
    expect((await kernel.plugins.rescan()).added).toEqual(['gamma']);
    expect((await kernel.plugins.rescan()).added).toEqual([]); // nothing changed
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...answering('gamma', '').manifest, version: '1.1.0', kernel: '^1.0.0' }));
    await writeFile(join(dir, 'answer.ts'), 'export const answer = "v2";\n');
    expect((await kernel.plugins.rescan()).replaced).toEqual(['gamma']);
    expect(await messages(kernel)).toEqual(['gamma: v2']);
    expect(stateOf(kernel, 'gamma')?.version).toBe('1.1.0');
    await rm(dir, { recursive: true });
    expect((await kernel.plugins.rescan()).removed).toEqual(['gamma']);
    expect(await messages(kernel)).toEqual([]);
  });
});

describe('kernel.plugins.replace', () => {
  it('re-imports the plugin and the modules it imports fresh; holders of its service reach the new version; dependents stay', async () => {
    const kernel = await boot();
    const root = await tempFolder();
    const dir = await writeAnswering(root, 'delta', 'old');
    await writePlugin(root, { name: 'needs-delta', main: './index.ts', dependencies: { delta: '*' } }, {
      'index.ts': `import { definePlugin } from 'plinth/sdk';
        let setups = 0;
        export default definePlugin({ setup(kernel) { setups++; kernel.on('before_tool', () => ({ message: 'needs-delta set up ' + setups })); } });`,
    });
    await kernel.plugins.add(root);
    const greeter = (await kernel.get('greeter' as never)) as { greet(): string };
    const before = await footprint(kernel);

    await writeFile(join(dir, 'answer.ts'), 'export const answer = "new";\n');
    const report = await kernel.plugins.replace('delta');

    expect(report).toEqual({ added: [], removed: [], replaced: ['delta'], failed: [] });
    expect((await messages(kernel)).sort()).toEqual(['delta: new', 'needs-delta set up 1']);
    expect(greeter.greet()).toBe('hello from new');
    expect(await footprint(kernel)).toEqual(before);
    // The old version's teardown ran after the new one's setup; the new one got its ready tap.
    expect(await lines(dir)).toEqual(['ready old', 'teardown old', 'ready new']);
  });

  it('keeps the old version running when the new one fails to import or set up, and loads the fixed one', async () => {
    const kernel = await boot();
    const root = await tempFolder();
    const dir = await writeAnswering(root, 'epsilon', 'good');
    await kernel.plugins.add(dir);
    const before = await footprint(kernel);

    await writeFile(join(dir, 'answer.ts'), 'export const answer = ;\n');
    const broken = await kernel.plugins.replace('epsilon');
    expect(broken.replaced).toEqual([]);
    expect(broken.failed.map((e) => e.code)).toEqual(['PLN_E_PLUGIN_IMPORT']);
    expect(await messages(kernel)).toEqual(['epsilon: good']);

    await writeFile(join(dir, 'answer.ts'), 'export const answer = "set up fails";\nthrow new Error("no setup for you");\n');
    const failing = await kernel.plugins.replace('epsilon');
    expect(failing.failed[0]?.code).toMatch(/^PLN_E_PLUGIN_(IMPORT|SETUP)$/);
    expect(await messages(kernel)).toEqual(['epsilon: good']);
    expect(await footprint(kernel)).toEqual(before);
    expect(stateOf(kernel, 'epsilon')?.state).toBe('active');

    await writeFile(join(dir, 'answer.ts'), 'export const answer = "fixed";\n');
    expect((await kernel.plugins.replace('epsilon')).replaced).toEqual(['epsilon']);
    expect(await messages(kernel)).toEqual(['epsilon: fixed']);
    expect(await lines(dir)).toEqual(['ready good', 'teardown good', 'ready fixed']);
  });

  it('a replacement whose setup throws registers nothing and the old one keeps serving', async () => {
    const kernel = await boot();
    const root = await tempFolder();
    const dir = await writeAnswering(root, 'zeta', 'one');
    await kernel.plugins.add(dir);
    const before = await footprint(kernel);
    await writeFile(
      join(dir, 'index.ts'),
      `import { definePlugin } from 'plinth/sdk';
       export default definePlugin({ setup(kernel) { kernel.on('before_tool', () => ({ message: 'half set up' })); throw new Error('boom'); } });`,
    );
    const report = await kernel.plugins.replace('zeta');
    expect(report.failed[0]).toMatchObject({ code: 'PLN_E_PLUGIN_SETUP', plugin: 'zeta' });
    expect(await messages(kernel)).toEqual(['zeta: one']);
    expect(await footprint(kernel)).toEqual(before);
  });
});

describe('kernel.plugins.disable and enable', () => {
  it('disable then enable leaves the same taps, services, sections and commands, nothing twice', async () => {
    const kernel = await boot();
    const root = await tempFolder();
    const dir = await writeAnswering(root, 'eta', 'e');
    const empty = await footprint(kernel);
    await kernel.plugins.add(dir);
    const running = await footprint(kernel);

    const off = await kernel.plugins.disable('eta');
    expect(off.removed).toEqual(['eta']);
    expect(await footprint(kernel)).toEqual(empty);
    expect(stateOf(kernel, 'eta')).toMatchObject({ state: 'excluded', error: { code: 'PLN_E_PLUGIN_DISABLED' } });
    expect((await rejection(kernel.get('greeter' as never))).code).toBe('PLN_E_SERVICE_MISSING');

    const on = await kernel.plugins.enable('eta');
    expect(on.added).toEqual(['eta']);
    expect(await footprint(kernel)).toEqual(running);
    expect(await messages(kernel)).toEqual(['eta: e']);
    expect(await lines(dir)).toEqual(['ready e', 'teardown e', 'ready e']);
  });

  it('a plugin added after serve gets its serve tap', async () => {
    const kernel = await boot();
    await kernel.serve();
    const dir = await writeAnswering(await tempFolder(), 'theta', 't');
    await kernel.plugins.add(dir);
    expect(await lines(dir)).toEqual(['ready t', 'serve t']);
  });
});

describe('linked folders', () => {
  it('a linked folder takes precedence over an installed plugin of the same name; removing the link falls back', async () => {
    const kernel = await boot();
    await writeAnswering(join(kernel.home, 'plugins'), 'iota', 'installed', { version: '2.0.0' });
    await kernel.plugins.rescan();
    const dev = await writeAnswering(await tempFolder(), 'iota', 'dev', { version: '1.0.0' });

    expect((await kernel.plugins.add(dev, { linked: true })).replaced).toEqual(['iota']);
    expect(stateOf(kernel, 'iota')).toMatchObject({ version: '1.0.0', dir: dev, linked: true });
    expect(await messages(kernel)).toEqual(['iota: dev']);

    expect((await kernel.plugins.remove('iota')).replaced).toEqual(['iota']);
    expect(stateOf(kernel, 'iota')).toMatchObject({ version: '2.0.0', source: 'user' });
    expect(await messages(kernel)).toEqual(['iota: installed']);
  });
});

describe('the settings files, read again at each change', () => {
  it('applies a plugin\'s new settings, enabled: false and links; an invalid file keeps what is in force', async () => {
    const kernel = await boot();
    const settingsFile = join(kernel.home, 'settings.json');
    const plugins = join(kernel.home, 'plugins');
    await writePlugin(plugins, { name: 'kappa', main: './index.ts', settings: [{ name: 'greeting', default: 'hi' }], events: ['before_tool'] }, {
      'index.ts': `import { definePlugin } from 'plinth/sdk';
        export default definePlugin({ setup(kernel, ctx) { kernel.on('before_tool', () => ({ message: 'kappa says ' + ctx.settings.greeting })); } });`,
    });
    await kernel.plugins.rescan();
    expect(await messages(kernel)).toEqual(['kappa says hi']);

    await writeFile(settingsFile, JSON.stringify({ plugins: { kappa: { settings: { greeting: 'hello' } } } }));
    expect((await kernel.plugins.rescan()).replaced).toEqual(['kappa']);
    expect(await messages(kernel)).toEqual(['kappa says hello']);

    await writeFile(settingsFile, '{ "plugins": ');
    const broken = await kernel.plugins.rescan();
    expect(broken.failed.map((e) => e.code)).toEqual(['PLN_E_CONFIG_PARSE']);
    expect(await messages(kernel)).toEqual(['kappa says hello']);

    await writeFile(settingsFile, JSON.stringify({ plugins: { kappa: { enabled: false, settings: { greeting: 'hello' } } } }));
    expect((await kernel.plugins.rescan()).removed).toEqual(['kappa']);
    expect(await messages(kernel)).toEqual([]);

    const dev = await writeAnswering(await tempFolder(), 'lambda', 'linked');
    await writeFile(settingsFile, JSON.stringify({ links: [dev] }));
    const linked = await kernel.plugins.rescan();
    expect([...linked.added].sort()).toEqual(['kappa', 'lambda']);
    expect(stateOf(kernel, 'lambda')).toMatchObject({ linked: true, dir: dev });
    await writeFile(settingsFile, JSON.stringify({}));
    expect((await kernel.plugins.rescan()).removed).toEqual(['lambda']);
  });
});

describe('errors', () => {
  it('refuses changes before boot and after shutdown, and names an unknown plugin', async () => {
    const kernel = await boot();
    expect((await rejection(kernel.plugins.replace('nope'))).code).toBe('PLN_E_PLUGIN_UNKNOWN');
    await kernel.shutdown();
    expect((await rejection(kernel.plugins.rescan())).code).toBe('PLN_E_KERNEL_CLOSED');
  });
});
