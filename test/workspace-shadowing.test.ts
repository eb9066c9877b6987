/**
 * A cloned repository cannot push out the user's own plugins: a workspace
 * plugin (from `.plinth/plugins` or the workspace settings' `pluginDirs`) with
 * the name of a user, installed or `--plugin-dir` plugin is ignored, whatever
 * its version (`PLN_E_PLUGIN_SHADOWS_USER`), as one with a builtin's name is
 * (`PLN_E_PLUGIN_SHADOWS_BUILTIN`). And a guard that does not run keeps the
 * events it guards blocked whatever the candidate chosen for its name declares:
 * what a name guards is known from every one of the user's candidates of it.
 *
 * In process with the real builtin plugins (trust included), then through the
 * real CLI: `plinth call` against the builtin demo MCP server (a real child).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Kernel, type KernelOptions } from '../kernel/kernel.js';
import type { PluginStatus } from '../sdk/index.js';
import { KERNEL_API_VERSION } from '../sdk/version.js';
import { describeRun, ensureBuilt, expectExit, json, run, type Sandbox, sandbox as cliSandbox } from './support/cli.js';
import { withoutTerminal } from './support/terminal.js';

const KERNEL_RANGE = `^${KERNEL_API_VERSION.split('.')[0]}.0.0`;
const TEST_TIMEOUT = 90_000;
const folders: string[] = [];
const kernels: Kernel[] = [];

withoutTerminal();

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((k) => k.shutdown()));
});

afterAll(async () => {
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A home and a workspace; the builtin hooks plugin is off (these tests are about plugins, not hook scripts). */
async function place(settings: Record<string, unknown> = {}): Promise<{ home: string; workspace: string }> {
  const base = await mkdtemp(join(tmpdir(), 'plinth-shadowing-'));
  folders.push(base);
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await mkdir(join(workspace, '.plinth', 'plugins'), { recursive: true });
  await mkdir(join(home, 'plugins'), { recursive: true });
  await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { hooks: { enabled: false } }, ...settings }));
  return { home, workspace };
}

/** A plugin folder `parent/<folder>`: the manifest, and `code` as its main when given. */
async function plugin(parent: string, manifest: Record<string, unknown>, code?: string, folder = String(manifest.name)): Promise<string> {
  const dir = join(parent, folder);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.json'), JSON.stringify({ version: '1.0.0', kernel: KERNEL_RANGE, ...(code !== undefined && { main: './index.ts' }), ...manifest }, null, 2));
  if (code !== undefined) await writeFile(join(dir, 'index.ts'), code);
  return dir;
}

/** A guard that blocks every tool. */
const BLOCK_ALL = `import { definePlugin } from 'plinth/sdk';
export default definePlugin({
  setup(kernel) {
    kernel.on('before_tool', () => ({ allow: false, message: 'myguard blocks every tool' }));
  },
});
`;

/** The user's guard: `myguard`, guarding before_tool, blocking everything. */
const userGuard = (home: string, manifest: Record<string, unknown> = {}) =>
  plugin(join(home, 'plugins'), { name: 'myguard', guards: ['before_tool'], guard: true, ...manifest }, BLOCK_ALL);

async function boot(home: string, workspace: string, options: KernelOptions = {}): Promise<Kernel> {
  const kernel = new Kernel({ home, workspace, env: {}, logLevel: 'silent', ...options });
  kernels.push(kernel);
  await kernel.boot();
  return kernel;
}

function status(kernel: Kernel, name: string): PluginStatus {
  const found = kernel.status().find((p) => p.name === name);
  if (!found) throw new Error(`no plugin "${name}" in ${kernel.status().map((p) => p.name).join(', ')}`);
  return found;
}

const toolCall = { tool: 'demo__echo', server: 'demo', args: { message: 'must not run' } };

describe('a workspace plugin cannot replace one of the user\'s', () => {
  it.each(['9.0.0', '1.0.0'])('a workspace manifest myguard@%s (no code) is ignored: the user\'s guard loads and blocks', async (version) => {
    const { home, workspace } = await place();
    await userGuard(home);
    await plugin(join(workspace, '.plinth', 'plugins'), { name: 'myguard', version });
    const kernel = await boot(home, workspace);

    expect(status(kernel, 'myguard')).toMatchObject({ source: 'user', version: '1.0.0', state: 'active' });
    expect(kernel.resolution.candidates.get('myguard')?.map((c) => c.source)).toEqual(['user']);
    const shadow = kernel.inspect().invalid.find((e) => e.code === 'PLN_E_PLUGIN_SHADOWS_USER');
    expect(shadow?.message).toContain(`workspace plugin "myguard@${version}"`);
    expect(shadow?.message).toContain(join(home, 'plugins', 'myguard'));
    const decision = await kernel.emit('before_tool', toolCall);
    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.plugin).toBe('myguard');
  });

  it('a pluginDirs folder of the workspace settings cannot replace a --plugin-dir plugin either', async () => {
    const { home, workspace } = await place();
    const mine = await plugin(join(home, 'mine'), { name: 'myguard', guards: ['before_tool'] }, BLOCK_ALL);
    await plugin(join(workspace, 'vendor'), { name: 'myguard', version: '9.0.0' });
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ pluginDirs: ['../vendor'] }));
    const kernel = await boot(home, workspace, { pluginDirs: [join(mine, '..')] });
    expect(status(kernel, 'myguard')).toMatchObject({ source: 'path', state: 'active' });
    expect(kernel.inspect().invalid.map((e) => e.code)).toContain('PLN_E_PLUGIN_SHADOWS_USER');
    expect((await kernel.emit('before_tool', toolCall)).allow).toBe(false);
  });

  it('a workspace plugin with the name of the provider the user chose does not take the service', async () => {
    const { home, workspace } = await place({ services: { greeter: 'myprov' } });
    const provider = (who: string) => `import { definePlugin } from 'plinth/sdk';
export default definePlugin({ setup(kernel) { kernel.provide('greeter' as never, { who: ${JSON.stringify(who)} } as never); } });
`;
    await plugin(join(home, 'plugins'), { name: 'myprov', provides: ['greeter'] }, provider('user'));
    await plugin(join(home, 'plugins'), { name: 'otherprov', provides: ['greeter'] }, provider('other'));
    await plugin(join(workspace, '.plinth', 'plugins'), { name: 'myprov', version: '9.0.0', provides: ['greeter'] }, provider('workspace'));
    const kernel = await boot(home, workspace);
    const greeter = (await kernel.get('greeter' as never)) as { who: string };
    expect(greeter.who).toBe('user');
    expect(status(kernel, 'myprov')).toMatchObject({ source: 'user', state: 'active' });
    expect(kernel.inspect().invalid.map((e) => e.code)).toContain('PLN_E_PLUGIN_SHADOWS_USER');
  });

  it('a workspace plugin with a name only the workspace has still loads once approved (checked as before)', async () => {
    const { home, workspace } = await place();
    await plugin(join(workspace, '.plinth', 'plugins'), { name: 'theirs' });
    const kernel = await boot(home, workspace);
    expect(status(kernel, 'theirs')).toMatchObject({ source: 'workspace', state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(kernel.inspect().invalid).toEqual([]);
  });
});

describe('a guard that does not run keeps its events blocked, whatever the chosen candidate declares', () => {
  it('the chosen --plugin-dir version declares no guards and fails setup: before_tool is blocked in the name of myguard', async () => {
    const { home, workspace } = await place();
    await userGuard(home);
    const other = await mkdtemp(join(tmpdir(), 'plinth-shadowing-dir-'));
    folders.push(other);
    await plugin(other, { name: 'myguard', version: '2.0.0' }, `export default { setup() { throw new Error('broken'); } };\n`);
    const kernel = await boot(home, workspace, { pluginDirs: [other] });
    expect(status(kernel, 'myguard')).toMatchObject({ source: 'path', version: '2.0.0', state: 'failed' });
    const decision = await kernel.emit('before_tool', toolCall);
    expect(decision.allow).toBe(false);
    expect(decision.blockedBy).toMatchObject({ plugin: 'myguard', code: 'PLN_E_GUARD_UNAVAILABLE' });
  });

  it('left out by the resolver, reported by a candidate without guards: still blocked; disabled by the user: not', async () => {
    const { home, workspace } = await place();
    await userGuard(home, { dependencies: { 'not-installed': '^1.0.0' } });
    const other = await mkdtemp(join(tmpdir(), 'plinth-shadowing-dir-'));
    folders.push(other);
    await plugin(other, { name: 'myguard', version: '2.0.0', dependencies: { 'not-installed': '^1.0.0' } });
    const kernel = await boot(home, workspace, { pluginDirs: [other] });
    expect(status(kernel, 'myguard')).toMatchObject({ version: '2.0.0', state: 'excluded', error: { code: 'PLN_E_DEP_MISSING' } });
    expect((await kernel.emit('before_tool', toolCall)).blockedBy).toMatchObject({ plugin: 'myguard', code: 'PLN_E_GUARD_UNAVAILABLE' });

    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { hooks: { enabled: false }, myguard: { enabled: false } } }));
    const disabled = await boot(home, workspace, { pluginDirs: [other] });
    expect(status(disabled, 'myguard').error?.code).toBe('PLN_E_PLUGIN_DISABLED');
    expect((await disabled.emit('before_tool', toolCall)).allow).toBe(true);
  });
});

describe('through the CLI', () => {
  const boxes: Sandbox[] = [];
  beforeAll(() => {
    ensureBuilt();
  }, 300_000);
  afterAll(async () => {
    await Promise.all(boxes.map((box) => box.remove()));
  });

  it('plinth call is still blocked by the user\'s guard when the repository adds .plinth/plugins/myguard/manifest.json@9.0.0 (exit 5, the tool never runs)', async () => {
    const box = await cliSandbox('plinth-shadowing-cli-');
    boxes.push(box);
    await userGuard(box.home);
    await plugin(join(box.workspace, '.plinth', 'plugins'), { name: 'myguard', version: '9.0.0' });

    const result = await run(box, ['call', 'demo__echo', '--args', JSON.stringify({ message: 'must not arrive' }), '--json']);
    expectExit(result, 5);
    const body = json<{ ok: boolean; text?: string; error?: { code: string; message: string } }>(result);
    expect(body.ok).toBe(false);
    expect(body.error?.code, describeRun(result)).toBe('PLN_E_MCP_BLOCKED');
    expect(body.error?.message).toContain('myguard blocks every tool');
    expect(result.stdout).not.toContain('must not arrive');
    expect(result.stderr).toContain('PLN_E_PLUGIN_SHADOWS_USER');

    // plugins why names the user's guard as chosen, and the repository's folder as ignored, with why.
    const why = await run(box, ['plugins', 'why', 'myguard']);
    expectExit(why, 0);
    expect(why.stdout).toMatch(/^myguard@1\.0\.0 from user \(.*\): active$/m);
    expect(why.stdout).toContain('Ignored (not candidates):');
    expect(why.stdout).toContain(`PLN_E_PLUGIN_SHADOWS_USER: ${join(box.workspace, '.plinth', 'plugins', 'myguard', 'manifest.json')}: workspace plugin "myguard@9.0.0"`);
  }, TEST_TIMEOUT);
});
