/**
 * A scoped boot, `kernel.boot({ only })`: what a command declared with
 * `"boot": "own"` runs after. Only the named plugins, their dependencies and
 * the guards are set up; every other eager plugin waits as a lazy one does and
 * starts when it is used: its service asked for, an event it declares fired, a
 * live change that replaces it. The kernel is booted, so `kernel.plugins` works.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Kernel, type InlinePlugin } from '../kernel/index.js';
import type { PluginKernel } from '../sdk/index.js';
import { tempFolders, writePlugin } from './support/plugin-folder.js';

const folders = tempFolders('plinth-scoped-');
const kernels: Kernel[] = [];
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.shutdown();
  await folders.removeAll();
});

/** A kernel without builtin plugins, over `plugins` (inline) and `pluginDirs`; `setUp` lists each setup as it runs. */
async function kernelWith(plugins: InlinePlugin[], pluginDirs: string[] = []): Promise<Kernel> {
  const home = await folders.make();
  const kernel = new Kernel({ home, workspace: home, builtin: false, plugins, pluginDirs, env: {}, logSink: () => undefined });
  kernels.push(kernel);
  return kernel;
}

function recorder() {
  const setUp: string[] = [];
  const plugin = (manifest: InlinePlugin['manifest'], setup?: (kernel: PluginKernel) => void): InlinePlugin => ({
    manifest,
    setup(kernel) {
      setUp.push(String(manifest.name));
      setup?.(kernel);
    },
  });
  return { setUp, plugin };
}

const stateOf = (kernel: Kernel, name: string) => kernel.status().find((p) => p.name === name)?.state;

describe('boot({ only })', () => {
  it('sets up the named plugin, its dependencies and every guard; the other eager plugins wait', async () => {
    const { setUp, plugin } = recorder();
    const kernel = await kernelWith([
      plugin({ name: 'base' }),
      plugin({ name: 'tool', dependencies: { base: '*' } }),
      plugin({ name: 'checker', guard: true }),
      plugin({ name: 'bystander' }),
      plugin({ name: 'listener', events: ['session_start'] }),
      plugin({ name: 'sleeper', activation: 'lazy' }),
    ]);
    const report = await kernel.boot({ only: ['tool'] });
    expect(setUp.sort()).toEqual(['base', 'checker', 'tool']);
    expect(Object.fromEntries(report.plugins.map((p) => [p.name, p.state]))).toEqual({ base: 'active', tool: 'active', checker: 'active', bystander: 'lazy', listener: 'lazy', sleeper: 'lazy' });
  });

  it('a full boot still sets up every eager plugin', async () => {
    const { setUp, plugin } = recorder();
    const kernel = await kernelWith([plugin({ name: 'tool' }), plugin({ name: 'bystander' }), plugin({ name: 'sleeper', activation: 'lazy' })]);
    await kernel.boot();
    expect(setUp.sort()).toEqual(['bystander', 'tool']);
  });

  it('a waiting plugin starts when its service is asked for, or when an event it declares fires', async () => {
    const { setUp, plugin } = recorder();
    const kernel = await kernelWith([
      plugin({ name: 'tool' }),
      plugin({ name: 'greeter', provides: ['greeting:hello'] }, (k) => void k.provide('greeting:hello' as never, (() => 'hello') as never)),
      plugin({ name: 'listener', events: ['session_start'] }, (k) => void k.on('session_start', () => ({ message: 'heard' }))),
    ]);
    await kernel.boot({ only: ['tool'] });
    expect(setUp).toEqual(['tool']);
    const greet = (await kernel.get('greeting:hello' as never)) as () => string;
    expect(greet()).toBe('hello');
    expect(stateOf(kernel, 'greeter')).toBe('active');
    const decision = await kernel.emit('session_start', {});
    expect(decision.messages).toEqual(['heard']);
    expect(setUp).toEqual(['tool', 'greeter', 'listener']);
  });

  it('a waiting plugin that guards events is set up before those events pass, and one that cannot start blocks them', async () => {
    const { plugin } = recorder();
    const kernel = await kernelWith([
      plugin({ name: 'tool' }),
      plugin({ name: 'gatekeeper', guards: ['before_tool'] }, (k) => void k.on('before_tool', () => ({ allow: false, message: 'not today' }))),
      {
        manifest: { name: 'broken-gate', guards: ['before_model'] },
        setup() {
          throw new Error('cannot start');
        },
      },
    ]);
    await kernel.boot({ only: ['tool'] });
    expect(stateOf(kernel, 'gatekeeper')).toBe('lazy');
    expect(await kernel.emit('before_tool', { tool: 'rm' })).toMatchObject({ allow: false, blockedBy: { plugin: 'gatekeeper' } });
    expect(await kernel.emit('before_model', {})).toMatchObject({ allow: false, blockedBy: { plugin: 'broken-gate', code: 'PLN_E_GUARD_UNAVAILABLE' } });
    expect(stateOf(kernel, 'broken-gate')).toBe('failed');
  });

  it('is booted: a live add sets up a new eager plugin at once and leaves the waiting ones waiting', async () => {
    const { setUp, plugin } = recorder();
    const kernel = await kernelWith([plugin({ name: 'tool' }), plugin({ name: 'bystander' })]);
    await kernel.boot({ only: ['tool'] });
    const root = await folders.make();
    const dir = await writePlugin(root, { name: 'newcomer', main: './index.ts' }, { 'index.ts': 'export default { setup() {} };\n' });
    const report = await kernel.plugins.add(dir);
    expect(report).toMatchObject({ added: ['newcomer'], failed: [] });
    expect(stateOf(kernel, 'newcomer')).toBe('active');
    expect(stateOf(kernel, 'bystander')).toBe('lazy');
    expect(setUp).toEqual(['tool']);
  });

  it('replacing a waiting plugin sets up the new version (proving it loads); a version that fails leaves it waiting', async () => {
    const root = await folders.make();
    const dir = await writePlugin(root, { name: 'updated', main: './index.ts' }, { 'index.ts': 'export default { setup() {} };\n' });
    const kernel = await kernelWith([{ manifest: { name: 'tool' }, setup() {} }], [root]);
    await kernel.boot({ only: ['tool'] });
    expect(stateOf(kernel, 'updated')).toBe('lazy');

    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: 'updated', version: '1.1.0', kernel: '^1.0.0', main: './index.ts' }));
    await writeFile(join(dir, 'index.ts'), 'export default { setup() { throw new Error("1.1.0 is broken"); } };\n');
    const failed = await kernel.plugins.replace('updated');
    expect(failed.failed.map((e) => e.code)).toEqual(['PLN_E_PLUGIN_SETUP']);
    expect(kernel.status().find((p) => p.name === 'updated')).toMatchObject({ version: '1.0.0', state: 'lazy' });

    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: 'updated', version: '1.2.0', kernel: '^1.0.0', main: './index.ts' }));
    await writeFile(join(dir, 'index.ts'), 'export default { setup() {} };\n');
    const replaced = await kernel.plugins.replace('updated');
    expect(replaced).toMatchObject({ replaced: ['updated'], failed: [] });
    expect(kernel.status().find((p) => p.name === 'updated')).toMatchObject({ version: '1.2.0', state: 'active' });
  });

  it('the first call decides: a later boot() with other options returns the same report', async () => {
    const { setUp, plugin } = recorder();
    const kernel = await kernelWith([plugin({ name: 'tool' }), plugin({ name: 'bystander' })]);
    const first = await kernel.boot({ only: ['tool'] });
    expect(await kernel.boot()).toBe(first);
    expect(setUp).toEqual(['tool']);
  });
});
