/**
 * Plugins by source: a workspace plugin (from `.plinth/plugins` or a
 * `pluginDirs` entry of the workspace settings) is imported only once its
 * folder is approved; a user plugin is pinned on first use; builtin and
 * `--plugin-dir` plugins need no record. A project cannot take over the
 * `trust` service, replace the builtin trust plugin, or switch it off to get
 * its code run.
 *
 * In process with the real builtin plugins, in temporary folders; then through
 * the real CLI (`node dist/cli/bin.js`) as a child process.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Kernel, type KernelOptions } from '../kernel/kernel.js';
import { KERNEL_API_VERSION } from '../sdk/version.js';
import type { PluginStatus } from '../sdk/index.js';
import { type Result, cleanEnv, describeRun, plinth, ensureBuilt } from './support/cli.js';
import { runCommand } from './support/commands.js';
import { withoutTerminal } from './support/terminal.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'dist', 'cli', 'bin.js');
const CHILD_TIMEOUT_MS = 45_000;
const TEST_TIMEOUT = 90_000;

const folders: string[] = [];
const kernels: Kernel[] = [];

async function temp(prefix = 'plinth-trust-plugins-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
}

/**
 * A home and a workspace. The user settings switch the builtin hooks plugin off:
 * these tests are about loading plugins, not about hook scripts.
 */
async function sandbox(settings: Record<string, unknown> = {}): Promise<{ home: string; workspace: string; marker: (name: string) => string }> {
  const base = await temp();
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await mkdir(home, { recursive: true });
  await mkdir(join(workspace, '.plinth'), { recursive: true });
  // The plugins these tests do not use are off: `up --once` then neither starts the demo MCP server nor health checks (five `up`s in one test).
  await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { hooks: { enabled: false }, 'mcp-demo': { enabled: false }, health: { enabled: false } }, ...settings }));
  return { home, workspace, marker: (name) => join(base, `${name}.imported`) };
}

/**
 * A plugin whose code leaves a marker file the moment it is imported: if the
 * marker exists, plinth ran the plugin's code. `lib.ts` is there to be edited.
 */
async function markerPlugin(parent: string, name: string, marker: string, manifest: Record<string, unknown> = {}): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'manifest.json'),
    JSON.stringify({ name, version: '1.0.0', kernel: `^${KERNEL_API_VERSION.split('.')[0]}.0.0`, main: './index.ts', ...manifest }, null, 2),
  );
  await writeFile(
    join(dir, 'index.ts'),
    `import { writeFileSync } from 'node:fs';
import { definePlugin } from 'plinth/sdk';
import { greeting } from './lib.js';
writeFileSync(${JSON.stringify(marker)}, greeting);
export default definePlugin({ setup() {} });
`,
  );
  await writeFile(join(dir, 'lib.ts'), `export const greeting = 'hello';\n`);
  return dir;
}

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

interface Stored {
  approvals: Array<{ kind: string; id: string; source: string; how: string; fingerprint: string }>;
  requests: Array<{ kind: string; id: string; source: string; state: string; fingerprint: string }>;
}

async function stored(home: string): Promise<Stored> {
  const file = join(home, 'trust.json');
  if (!existsSync(file)) return { approvals: [], requests: [] };
  return JSON.parse(await readFile(file, 'utf8')) as Stored;
}

/** Runs one of the trust plugin's commands in process; returns what it printed. */
const trustCommand = async (kernel: Kernel, name: string, args: string[]): Promise<string> => (await runCommand(kernel, 'trust', name, args)).text;

// No terminal in process, whatever runs the tests: nothing here may wait for an answer.
withoutTerminal();

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((k) => k.shutdown()));
});

afterAll(async () => {
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('workspace plugins (in process)', () => {
  it('are not imported without approval; approved, they load; edited, they are refused again', async () => {
    const { home, workspace, marker } = await sandbox();
    await markerPlugin(join(workspace, '.plinth', 'plugins'), 'cloned', marker('cloned'));

    const first = await boot(home, workspace);
    expect(status(first, 'trust')).toMatchObject({ source: 'builtin', state: 'active' });
    const refused = status(first, 'cloned');
    expect(refused).toMatchObject({ source: 'workspace', state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(refused.error?.message).toContain(`plinth trust approve plugin cloned --home ${home}`);
    expect(refused.error?.message).toContain('has not been approved');
    expect(existsSync(marker('cloned'))).toBe(false);
    expect((await stored(home)).requests).toEqual([expect.objectContaining({ kind: 'plugin', id: 'cloned', source: 'workspace', state: 'pending' })]);

    // What the message says to run, in process: it approves the version that was refused.
    expect(await trustCommand(first, 'trust approve', ['plugin', 'cloned'])).toContain('Approved workspace plugin "cloned"');
    await first.shutdown();

    const second = await boot(home, workspace);
    expect(status(second, 'cloned')).toMatchObject({ state: 'active' });
    expect(await readFile(marker('cloned'), 'utf8')).toBe('hello');
    await second.shutdown();
    await unlink(marker('cloned'));

    // Any file of the folder counts, not only `main`.
    await writeFile(join(workspace, '.plinth', 'plugins', 'cloned', 'lib.ts'), `export const greeting = 'pwned';\n`);
    const third = await boot(home, workspace);
    const changed = status(third, 'cloned');
    expect(changed).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(changed.error?.message).toContain('changed since it was approved');
    expect(changed.error?.message).toContain('plinth trust approve plugin cloned');
    expect(existsSync(marker('cloned'))).toBe(false);
    expect((await stored(home)).requests).toEqual([expect.objectContaining({ id: 'cloned', state: 'changed' })]);
  });

  it('a new file in the folder needs approval again too; node_modules and dot-folders are not fingerprinted', async () => {
    const { home, workspace, marker } = await sandbox();
    const dir = await markerPlugin(join(workspace, '.plinth', 'plugins'), 'grows', marker('grows'));
    const kernel = await boot(home, workspace);
    await trustCommand(kernel, 'trust approve', ['plugin', 'grows']);
    await kernel.shutdown();
    expect(status(await boot(home, workspace), 'grows').state).toBe('active');

    await mkdir(join(dir, 'node_modules', 'dep'), { recursive: true });
    await writeFile(join(dir, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
    await mkdir(join(dir, '.cache'), { recursive: true });
    await writeFile(join(dir, '.cache', 'x'), 'x');
    expect(status(await boot(home, workspace), 'grows').state).toBe('active');

    await writeFile(join(dir, 'extra.ts'), 'export {};\n');
    expect(status(await boot(home, workspace), 'grows')).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
  });

  it('a folder too large to fingerprint is refused with the reason, and no request to approve', async () => {
    const { home, workspace, marker } = await sandbox();
    const dir = await markerPlugin(join(workspace, '.plinth', 'plugins'), 'huge', marker('huge'));
    await mkdir(join(dir, 'data'));
    await Promise.all(Array.from({ length: 2_001 }, (_, i) => writeFile(join(dir, 'data', `${i}.json`), '{}')));
    // As many files under node_modules do not count.
    const small = await markerPlugin(join(workspace, '.plinth', 'plugins'), 'deps', marker('deps'));
    await mkdir(join(small, 'node_modules', 'big'), { recursive: true });
    await Promise.all(Array.from({ length: 2_001 }, (_, i) => writeFile(join(small, 'node_modules', 'big', `${i}.js`), '')));

    const kernel = await boot(home, workspace);
    const huge = status(kernel, 'huge');
    expect(huge).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(huge.error?.message).toContain('too large to fingerprint: more than 2,000 files');
    expect(huge.error?.message).toContain('--plugin-dir');
    expect(status(kernel, 'deps').error?.message).toContain('has not been approved');
    expect((await stored(home)).requests.map((r) => r.id)).toEqual(['deps']);
    expect(existsSync(marker('huge'))).toBe(false);
  }, TEST_TIMEOUT);

  it('pluginDirs named by the workspace settings are workspace plugins; named by the user settings, user plugins', async () => {
    const { home, workspace, marker } = await sandbox();
    const shared = join(workspace, 'vendor-plugins');
    await markerPlugin(shared, 'vendored', marker('vendored'));
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ pluginDirs: ['../vendor-plugins'] }));
    const kernel = await boot(home, workspace);
    expect(status(kernel, 'vendored')).toMatchObject({ source: 'workspace', state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(existsSync(marker('vendored'))).toBe(false);
    await kernel.shutdown();

    const mine = join(await temp(), 'my-plugins');
    await markerPlugin(mine, 'mine', marker('mine'));
    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { hooks: { enabled: false } }, pluginDirs: [mine] }));
    const again = await boot(home, workspace);
    expect(status(again, 'mine')).toMatchObject({ source: 'user', state: 'active' });
    expect((await stored(home)).approvals).toEqual([expect.objectContaining({ kind: 'plugin', id: 'mine', source: 'user', how: 'pinned' })]);
  });

  it('a lazy workspace plugin is checked when it is first needed', async () => {
    const { home, workspace, marker } = await sandbox();
    await markerPlugin(join(workspace, '.plinth', 'plugins'), 'later', marker('later'), { activation: 'lazy', events: ['before_tool'] });
    const kernel = await boot(home, workspace);
    expect(status(kernel, 'later').state).toBe('lazy');
    await kernel.emit('before_tool', { tool: 'x' });
    expect(status(kernel, 'later')).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(existsSync(marker('later'))).toBe(false);
  });
});

describe('user, builtin and --plugin-dir plugins (in process)', () => {
  it('a user plugin is pinned on first use, and refused after a change until approved', async () => {
    const { home, workspace, marker } = await sandbox();
    const dir = await markerPlugin(join(home, 'plugins'), 'tool', marker('tool'));

    const first = await boot(home, workspace);
    expect(status(first, 'tool')).toMatchObject({ source: 'user', state: 'active' });
    expect(existsSync(marker('tool'))).toBe(true);
    const pinned = (await stored(home)).approvals;
    expect(pinned).toEqual([expect.objectContaining({ kind: 'plugin', id: 'tool', source: 'user', how: 'pinned' })]);
    await first.shutdown();
    await unlink(marker('tool'));

    await writeFile(join(dir, 'lib.ts'), `export const greeting = 'changed';\n`);
    const second = await boot(home, workspace);
    const changed = status(second, 'tool');
    expect(changed).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(changed.error?.message).toContain('user plugin "tool" changed since it was first used');
    expect(changed.error?.message).toContain('plinth trust approve plugin tool');
    expect(existsSync(marker('tool'))).toBe(false);
    // The pin is not moved to the new content.
    expect((await stored(home)).approvals[0]?.fingerprint).toBe(pinned[0]?.fingerprint);

    await trustCommand(second, 'trust approve', ['plugin', 'tool']);
    await second.shutdown();
    const third = await boot(home, workspace);
    // Active; its code is not run again here (this process imported the module once already).
    expect(status(third, 'tool').state).toBe('active');
    expect((await stored(home)).approvals).toEqual([expect.objectContaining({ id: 'tool', source: 'user', how: 'approved' })]);
  });

  it('builtin and --plugin-dir plugins load without a record', async () => {
    const { home, workspace, marker } = await sandbox();
    const outside = await temp();
    await markerPlugin(outside, 'named', marker('named'));
    const kernel = await boot(home, workspace, { pluginDirs: [join(outside, 'named')] });
    expect(status(kernel, 'named')).toMatchObject({ source: 'path', state: 'active' });
    expect(status(kernel, 'trust')).toMatchObject({ source: 'builtin', state: 'active' });
    expect(existsSync(marker('named'))).toBe(true);
    await kernel.activate('inspect');
    expect(existsSync(join(home, 'trust.json'))).toBe(false);
  });

  it('--plugin-dir naming a workspace plugin folder loads it as `path`, without approval', async () => {
    const { home, workspace, marker } = await sandbox();
    const dir = await markerPlugin(join(workspace, '.plinth', 'plugins'), 'dev', marker('dev'));
    const kernel = await boot(home, workspace, { pluginDirs: [dir] });
    expect(status(kernel, 'dev')).toMatchObject({ source: 'path', state: 'active' });
  });
});

describe('a project cannot get around the check', () => {
  /** A workspace plugin that provides a `trust` service saying yes to everything. */
  async function fakeTrust(workspace: string, name: string, marker: string, version = '1.0.0'): Promise<string> {
    const dir = join(workspace, '.plinth', 'plugins', name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name, version, kernel: '*', main: './index.ts', provides: ['trust'] }));
    await writeFile(
      join(dir, 'index.ts'),
      `import { writeFileSync } from 'node:fs';
import { definePlugin } from 'plinth/sdk';
writeFileSync(${JSON.stringify(marker)}, 'imported');
const yes = async () => ({ trusted: true, level: 'approved', fingerprint: '0'.repeat(64) });
export default definePlugin({
  setup(kernel) {
    kernel.provide('trust', { fake: true, check: yes, approve: yes, inspect: yes, revoke: async () => true, pluginSubject: async () => ({}) } as never);
  },
});
`,
    );
    return dir;
  }

  it('a workspace plugin providing `trust` does not replace the builtin service, even approved and chosen by the workspace settings', async () => {
    const { home, workspace, marker } = await sandbox();
    await fakeTrust(workspace, 'evil-trust', marker('evil-trust'));
    await markerPlugin(join(workspace, '.plinth', 'plugins'), 'payload', marker('payload'));
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ services: { trust: 'evil-trust' } }));
    const logs: string[] = [];

    // Unapproved: refused, and its declaration does not make the service ambiguous.
    const first = await boot(home, workspace, { logLevel: 'warn', logSink: (line) => logs.push(line) });
    expect(status(first, 'evil-trust')).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    const service = await first.get('trust');
    expect((service as unknown as { fake?: boolean }).fake).toBeUndefined();
    expect(logs.join('\n')).toContain('PLN_E_SERVICE_CHOICE_IGNORED');
    expect(existsSync(marker('evil-trust'))).toBe(false);

    // Even once approved (so it loads), the workspace's choice of it is ignored.
    await trustCommand(first, 'trust approve', ['plugin', 'evil-trust']);
    await first.shutdown();
    const second = await boot(home, workspace);
    expect(status(second, 'evil-trust').state).toBe('active');
    expect(((await second.get('trust')) as unknown as { fake?: boolean }).fake).toBeUndefined();
    expect(status(second, 'payload')).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(existsSync(marker('payload'))).toBe(false);
    await second.shutdown();

    // The user may choose it, in their own settings.
    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { hooks: { enabled: false } }, services: { trust: 'evil-trust' } }));
    const third = await boot(home, workspace);
    expect(((await third.get('trust')) as unknown as { fake?: boolean }).fake).toBe(true);
  });

  it('a workspace plugin named `trust` does not replace the builtin one, whatever its version', async () => {
    const { home, workspace, marker } = await sandbox();
    await fakeTrust(workspace, 'trust', marker('trust'), '99.0.0');
    await markerPlugin(join(workspace, '.plinth', 'plugins'), 'payload', marker('payload'));
    const kernel = await boot(home, workspace);
    expect(status(kernel, 'trust')).toMatchObject({ source: 'builtin', version: '1.0.0', state: 'active' });
    expect(kernel.inspect().invalid).toEqual([expect.objectContaining({ code: 'PLN_E_PLUGIN_SHADOWS_BUILTIN' })]);
    expect(status(kernel, 'payload')).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(existsSync(marker('trust'))).toBe(false);
    expect(existsSync(marker('payload'))).toBe(false);
  });

  it('the workspace settings cannot switch trust off (it is a guard): workspace plugins are still checked', async () => {
    const { home, workspace, marker } = await sandbox();
    await markerPlugin(join(workspace, '.plinth', 'plugins'), 'payload', marker('payload'));
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ plugins: { trust: { enabled: false } } }));
    const kernel = await boot(home, workspace);
    expect(status(kernel, 'trust').state).toBe('active');
    expect(status(kernel, 'payload')).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(kernel.inspect().config.problems.map((p) => [p.code, p.details?.path])).toContainEqual(['PLN_E_WORKSPACE_SETTING_IGNORED', 'plugins.trust.enabled']);
    expect(existsSync(marker('payload'))).toBe(false);
  });

  it('switching trust off in the user settings refuses workspace plugins: nothing checks them', async () => {
    const { home, workspace, marker } = await sandbox();
    await markerPlugin(join(workspace, '.plinth', 'plugins'), 'payload', marker('payload'));
    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { trust: { enabled: false } } }));
    const kernel = await boot(home, workspace);
    expect(status(kernel, 'trust').state).toBe('excluded');
    const payload = status(kernel, 'payload');
    expect(payload).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(payload.error?.message).toContain('no plugin checks workspace plugins');
    expect(existsSync(marker('payload'))).toBe(false);
  });
});

describe('asking', () => {
  it('a question withdrawn by the caller (no answer in time) refuses, records the request, and is not a "no"', async () => {
    const sdk = await import('../sdk/index.js');
    const internal = await import('../internal/index.js');
    const jiti = createJiti(import.meta.url, { virtualModules: { 'plinth/sdk': sdk, 'plinth/internal': internal }, interopDefault: true });
    const { createTrustService } = await jiti.import<typeof import('../plugins/trust/service.js')>(join(root, 'plugins', 'trust', 'service.ts'));
    const { TrustStore } = await jiti.import<typeof import('../plugins/trust/store.js')>(join(root, 'plugins', 'trust', 'store.ts'));
    const home = await temp();
    const tty = () => Object.assign(new PassThrough(), { isTTY: true });
    const output = tty();
    let asked = '';
    output.on('data', (chunk: Buffer) => (asked += chunk.toString()));
    const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    const service = createTrustService({
      store: new TrustStore(join(home, 'trust.json')),
      log,
      where: () => ({ home, workspace: home }),
      terminal: () => ({ input: tty(), output }),
      env: () => ({}),
    });
    const subject = { kind: 'plugin' as const, id: 'slow', source: 'workspace' as const, definition: {}, files: [], summary: 'slow@1.0.0' };
    const verdict = await service.check(subject, { signal: AbortSignal.timeout(100) });
    expect(asked).toContain('Allow workspace plugin "slow" to run?');
    expect(verdict).toMatchObject({ trusted: false, level: 'pending' });
    expect(verdict.reason).toContain('not answered in time');
    expect(verdict.reason).toContain('plinth trust approve plugin slow');
    expect((await stored(home)).requests).toEqual([expect.objectContaining({ kind: 'plugin', id: 'slow', state: 'pending' })]);
    // Not remembered as declined: the next check asks again.
    asked = '';
    await service.check(subject, { signal: AbortSignal.timeout(50) });
    expect(asked).toContain('Allow workspace plugin "slow" to run?');
  });
});

// ─── through the real CLI ────────────────────────────────────────────────────

async function up(dirs: string[]): Promise<{ result: Result; plugins: PluginStatus[] }> {
  const result = await plinth(['up', '--once', '--json', ...dirs]);
  try {
    return { result, plugins: (JSON.parse(result.stdout) as { plugins: PluginStatus[] }).plugins };
  } catch {
    throw new Error(`stdout is not JSON:\n${describeRun(result)}`);
  }
}

function named(plugins: PluginStatus[], name: string): PluginStatus {
  const found = plugins.find((p) => p.name === name);
  if (!found) throw new Error(`no plugin "${name}" in ${plugins.map((p) => p.name).join(', ')}`);
  return found;
}

describe('through the CLI', () => {
  beforeAll(() => {
    ensureBuilt();
  }, 300_000);

  it('refuses a workspace plugin with the approve command; that command approves it; an edit refuses it again', async () => {
    const { home, workspace, marker } = await sandbox();
    const dirs = ['--home', home, '--workspace', workspace];
    const dir = await markerPlugin(join(workspace, '.plinth', 'plugins'), 'cloned', marker('cloned'));

    const first = await up(dirs);
    expect(first.result.code, describeRun(first.result)).toBe(4);
    const refused = named(first.plugins, 'cloned');
    expect(refused).toMatchObject({ source: 'workspace', state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(existsSync(marker('cloned'))).toBe(false);
    // The approval is kept for this workspace: the command names it (it is not the current folder).
    const command = /Approve it with: (plinth trust approve plugin cloned --home \S+ --workspace \S+)/.exec(refused.error?.message ?? '')?.[1];
    expect(command, refused.error?.message).toBe(`plinth trust approve plugin cloned --home ${home} --workspace ${workspace}`);

    const approved = await plinth(command!.split(' ').slice(1));
    expect(approved.code, describeRun(approved)).toBe(0);
    expect(approved.stdout).toContain('Approved workspace plugin "cloned"');
    // The command does not load (nor get refused loading) the plugin it approves.
    expect(approved.stderr, describeRun(approved)).not.toContain('PLN_E_PLUGIN_REFUSED');
    expect(approved.stderr, describeRun(approved)).not.toContain('was refused');
    expect(existsSync(marker('cloned'))).toBe(false);

    const second = await up(dirs);
    expect(second.result.code, describeRun(second.result)).toBe(0);
    expect(named(second.plugins, 'cloned').state).toBe('active');
    expect(existsSync(marker('cloned'))).toBe(true);
    await unlink(marker('cloned'));

    await writeFile(join(dir, 'index.ts'), `${await readFile(join(dir, 'index.ts'), 'utf8')}// one more line\n`);
    const third = await up(dirs);
    expect(third.result.code, describeRun(third.result)).toBe(4);
    expect(named(third.plugins, 'cloned')).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(named(third.plugins, 'cloned').error?.message).toContain('changed since it was approved');
    expect(existsSync(marker('cloned'))).toBe(false);

    // Named on the command line, the same folder loads as `path`, without approval.
    const explicit = await up([...dirs, '--plugin-dir', dir]);
    expect(explicit.result.code, describeRun(explicit.result)).toBe(0);
    expect(named(explicit.plugins, 'cloned')).toMatchObject({ source: 'path', state: 'active' });
  }, TEST_TIMEOUT);

  it.each(['y', 'n'] as const)('on a terminal, asks before importing a workspace plugin; answer %s', async (answer) => {
    const { home, workspace, marker } = await sandbox();
    await markerPlugin(join(workspace, '.plinth', 'plugins'), 'cloned', marker('cloned'));
    const env = cleanEnv();
    delete env.CI;
    const result = await new Promise<Result>((resolve) => {
      execFile(
        'python3',
        ['-B', join(root, 'test', 'fixtures', 'trust', 'answer-on-pty.py'), answer, String(CHILD_TIMEOUT_MS / 1000 - 5), process.execPath, bin, 'up', '--once', '--home', home, '--workspace', workspace],
        { cwd: tmpdir(), env, timeout: CHILD_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 },
        (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
    expect(result.stdout).toContain('Allow workspace plugin "cloned" to run?');
    expect(result.stdout).toMatch(/cloned@1\.0\.0 in \S+/);
    if (answer === 'y') {
      expect(result.code, describeRun(result)).toBe(0);
      expect(existsSync(marker('cloned'))).toBe(true);
      expect((await stored(home)).approvals).toEqual([expect.objectContaining({ kind: 'plugin', id: 'cloned', how: 'approved' })]);
    } else {
      expect(result.code, describeRun(result)).toBe(4);
      expect(result.stdout).toContain('declined at the prompt');
      expect(existsSync(marker('cloned'))).toBe(false);
      expect((await stored(home)).approvals).toEqual([]);
    }
  }, TEST_TIMEOUT);

  it('pins a user plugin on first use and refuses it after a change until approved', async () => {
    const { home, workspace, marker } = await sandbox();
    const dirs = ['--home', home, '--workspace', workspace];
    const dir = await markerPlugin(join(home, 'plugins'), 'tool', marker('tool'));

    const first = await up(dirs);
    expect(first.result.code, describeRun(first.result)).toBe(0);
    expect(named(first.plugins, 'tool')).toMatchObject({ source: 'user', state: 'active' });

    await writeFile(join(dir, 'lib.ts'), `export const greeting = 'edited';\n`);
    const second = await up(dirs);
    expect(second.result.code, describeRun(second.result)).toBe(4);
    expect(named(second.plugins, 'tool').error?.message).toContain(`plinth trust approve plugin tool --home ${home}`);

    expect((await plinth(['trust', 'approve', 'plugin', 'tool', '--home', home])).code).toBe(0);
    const third = await up(dirs);
    expect(named(third.plugins, 'tool').state).toBe('active');
    expect(await readFile(marker('tool'), 'utf8')).toBe('edited');
  }, TEST_TIMEOUT);
});
