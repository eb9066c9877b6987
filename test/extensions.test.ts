/**
 * The extensions plugin in process: a real kernel with the builtin plugins, a
 * plugin folder in a temporary directory declaring a hook (a node script that
 * blocks tools), a stdio MCP server (the SDK fixture server) and settings
 * (one sensitive), driven through the `extensions` service and its commands.
 *
 * 1. list and info: every plugin, in the contract's shape;
 * 2. disable → enable → disable → enable through the service: the host's taps, services, hook
 *    definitions, tools and server processes counted at each step, an unrelated server untouched;
 *    dependents named; persisted, and still so after a restart;
 * 3. a workspace cannot disable a guard or enable what the user disabled;
 * 4. settings: where each value comes from; a sensitive value goes to the secret store, reaches
 *    the plugin (its code, and its hook's environment) after a restart, and is never printed;
 * 5. a linked folder takes precedence over the installed plugin, and unlinking falls back.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import { collectServers } from '../plugins/mcp/definitions.js';
import { serverTrustSubject } from '../plugins/mcp/trust-subject.js';
import { EVENTS, type ExtensionsService, type McpService, type PluginInfo, type ServerState, type ServerStatus, parseManifest } from '../sdk/index.js';
import { extensionDetailsSchema, extensionSchema } from '../sdk/contracts/extensions.js';
import { isAlive } from '../internal/process/tree.js';
import { runCommand } from './support/commands.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const STDIO_SERVER = join(root, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const BLOCK_SCRIPT = join(root, 'test', 'fixtures', 'hooks', 'block.js');
const SECRET = 'tb-secret-7f3a9c1e55d2';

const folders: string[] = [];
const kernels: Kernel[] = [];
const savedCI = process.env.CI;

beforeAll(() => {
  process.env.CI = '1';
});
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
});
afterAll(async () => {
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

// ── helpers ─────────────────────────────────────────────────────────────────

interface Place {
  readonly home: string;
  readonly workspace: string;
  readonly logs: string[];
}

async function place(settings: Record<string, unknown> = {}): Promise<Place> {
  const base = await mkdtemp(join(tmpdir(), 'plinth-ext-'));
  folders.push(base);
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await mkdir(workspace, { recursive: true });
  await mkdir(join(home, 'plugins'), { recursive: true });
  // Quiet: no demo server, no health restarts; secrets in the encrypted file (no keychain probe).
  const quiet = { plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false }, oauth: { settings: { storage: 'file' } } } };
  await writeFile(join(home, 'settings.json'), JSON.stringify(merge(quiet, settings), null, 2));
  return { home, workspace, logs: [] };
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const under = out[key];
    out[key] = typeof under === 'object' && under !== null && typeof value === 'object' && value !== null && !Array.isArray(value) ? merge(under as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}

/** A booted kernel with the builtin plugins in `at`; `serve` as `plinth up` does. */
async function boot(at: Place, options: { serve?: boolean; env?: Record<string, string> } = {}): Promise<{ kernel: Kernel; ext: ExtensionsService; mcp: McpService }> {
  const kernel = new Kernel({ home: at.home, workspace: at.workspace, env: options.env ?? {}, logLevel: 'debug', logSink: (line) => void at.logs.push(line) });
  kernels.push(kernel);
  await kernel.boot();
  if (options.serve) await kernel.serve();
  return { kernel, ext: await kernel.get('extensions'), mcp: await kernel.get('mcp') };
}

/**
 * The plugin `toolbox` as a folder under `parent`: code that answers
 * before_tool with its answer (and a hash of its token), a before_tool hook
 * that blocks `rm`, a stdio server, and settings (one sensitive).
 */
async function writeToolbox(parent: string, version = '1.0.0', answer = 'v1', options: { seenHook?: boolean } = {}): Promise<string> {
  const dir = join(parent, 'toolbox');
  await mkdir(join(dir, 'hooks'), { recursive: true });
  await writeFile(join(dir, 'hooks', 'guard.js'), await readFile(BLOCK_SCRIPT, 'utf8'));
  await writeFile(join(dir, 'server.mjs'), `import ${JSON.stringify(STDIO_SERVER)};\n`);
  // A hook that records a digest of the token it was started with (never the token).
  await writeFile(
    join(dir, 'hooks', 'seen.js'),
    "const { createHash } = require('node:crypto'); const { writeFileSync } = require('node:fs'); const { join } = require('node:path');\n" +
      "writeFileSync(join(process.env.PLINTH_WORKSPACE, 'toolbox-seen.txt'), createHash('sha256').update(process.env.TOOLBOX_TOKEN ?? 'none').digest('hex'));\n" +
      "process.stdin.resume(); process.stdin.on('end', () => process.stdout.write(JSON.stringify({ allow: true })));\n",
  );
  await writeFile(join(dir, 'answer.ts'), `export const answer = ${JSON.stringify(answer)};\n`);
  await writeFile(
    join(dir, 'index.ts'),
    `import { createHash } from 'node:crypto';
     import { definePlugin } from 'plinth/sdk';
     import { answer } from './answer.ts';
     export default definePlugin({
       setup(kernel, ctx) {
         const token = typeof ctx.settings.token === 'string' ? createHash('sha256').update(ctx.settings.token).digest('hex') : 'none';
         kernel.on('before_tool', () => ({ message: 'toolbox ' + answer + ' token ' + token }));
         kernel.provide('toolbox' as never, { answer: () => answer } as never);
       },
     });
    `,
  );
  const manifest = {
    name: 'toolbox',
    version,
    description: 'A hook, a server and settings',
    kernel: '^1.0.0',
    main: './index.ts',
    provides: ['toolbox'],
    hooks: { before_tool: [{ name: 'guard', command: 'node', args: ['hooks/guard.js', 'rm'] }, ...(options.seenHook ? [{ name: 'seen', command: 'node', args: ['hooks/seen.js'] }] : [])] },
    mcpServers: { tb: { command: process.execPath, args: ['server.mjs', '--name', `toolbox-${version}`] } },
    settings: [
      { name: 'token', type: 'string', sensitive: true, envVar: 'TOOLBOX_TOKEN', description: 'An API token' },
      { name: 'greeting', type: 'string', default: 'hello', description: 'What it says' },
      { name: 'retries', type: 'number', scope: 'user', description: 'How often it tries' },
    ],
  };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

/** A plugin that needs toolbox. */
async function writeDependent(parent: string): Promise<string> {
  const dir = join(parent, 'toolbox-fan');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: 'toolbox-fan', version: '1.0.0', kernel: '^1.0.0', dependencies: { toolbox: '^1.0.0' } }));
  return dir;
}

async function pluginInfo(dir: string): Promise<PluginInfo> {
  const parsed = parseManifest(JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')));
  if (!parsed.ok) throw new Error(`invalid manifest in ${dir}`);
  return { name: parsed.manifest.name, version: parsed.manifest.version, source: 'user', dir, manifest: parsed.manifest };
}

/** Approves the plugin, its servers and its hook as they are, as `plinth trust approve` and `plinth hooks trust` would. */
async function approve(kernel: Kernel, dir: string): Promise<void> {
  const info = await pluginInfo(dir);
  const trust = await kernel.get('trust');
  const { servers } = collectServers({ layers: [], plugins: [info], manifests: [info], config: {}, env: {}, home: kernel.home, workspace: kernel.workspace, connectTimeoutMs: 10_000 });
  for (const record of servers) await trust.approve(serverTrustSubject(record, (text) => text));
  const { hooks } = await (await kernel.get('hooks')).definitions();
  for (const hook of hooks.filter((h) => h.plugin === info.name)) await trust.approve(trustSubject(hook));
}

function reached(mcp: McpService, server: string, state: ServerState): Promise<ServerStatus> {
  return new Promise((resolve) => {
    const now = mcp.servers().find((s) => s.name === server);
    if (now?.state === state) return resolve(now);
    const off = mcp.onStateChange((status) => {
      if (status.name === server && status.state === state) {
        off();
        resolve(status);
      }
    });
  });
}

/** What the host holds: event handlers, lifecycle taps, the toolbox service, hook definitions, tools, servers and their live processes. */
async function counts(kernel: Kernel, mcp: McpService) {
  const hooks = kernel.hooks as unknown as Record<string, { taps: unknown[] }>;
  const service = await kernel.get('toolbox' as never).then(() => 1, () => 0);
  return {
    eventTaps: EVENTS.reduce((sum, event) => sum + kernel.eventHooks[event].taps.length, 0),
    lifecycleTaps: Object.values(hooks).reduce((sum, hook) => sum + hook.taps.length, 0),
    services: service,
    hooks: (await (await kernel.get('hooks')).definitions()).hooks.length,
    tools: mcp.tools().length,
    servers: mcp.servers().map((s) => s.name).sort(),
    processes: mcp.servers().filter((s) => s.pid !== undefined && isAlive(s.pid)).length,
  };
}

const messages = async (kernel: Kernel, tool = 'ls') => (await kernel.emit('before_tool', { tool })).messages;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const userSettings = async (at: Place) => JSON.parse(await readFile(join(at.home, 'settings.json'), 'utf8')) as Record<string, any>;

// ── 1. list and info ────────────────────────────────────────────────────────

describe('ext list and ext info', () => {
  it('lists every plugin, builtin and user, in the contract shape; info adds settings, dependents and candidates', async () => {
    const at = await place();
    await writeToolbox(join(at.home, 'plugins'));
    await writeDependent(join(at.home, 'plugins'));
    const { kernel, ext } = await boot(at);

    const list = await ext.list();
    for (const row of list) expect(() => extensionSchema.parse(row)).not.toThrow();
    const byName = new Map(list.map((e) => [e.name, e]));
    expect(byName.get('toolbox')).toMatchObject({ version: '1.0.0', source: 'user', enabled: true, linked: false, state: 'active', description: 'A hook, a server and settings' });
    expect(byName.get('mcp-demo')).toMatchObject({ source: 'builtin', enabled: false, enabledFrom: 'user settings', state: 'excluded', error: { code: 'PLN_E_PLUGIN_DISABLED' } });
    expect(byName.get('extensions')).toMatchObject({ source: 'builtin', state: 'active' });

    const info = extensionDetailsSchema.parse(await ext.info('toolbox'));
    expect(info).toMatchObject({ provides: ['toolbox'], dependents: ['toolbox-fan'], hooks: ['before_tool'], mcpServers: ['tb'] });
    expect(info.settings.map((s) => [s.name, s.from])).toEqual([['token', 'unset'], ['greeting', 'default'], ['retries', 'unset']]);
    expect(info.candidates).toEqual([{ version: '1.0.0', source: 'user', dir: join(at.home, 'plugins', 'toolbox'), linked: false }]);

    const table = await runCommand(kernel, 'extensions', 'ext list');
    expect(table.text.split('\n')[0]).toMatch(/^NAME\s+VERSION\s+SOURCE\s+ENABLED\s+STATE\s+LINKED\s+DESCRIPTION$/);
    expect(table.text).toMatch(/toolbox\s+1\.0\.0\s+user\s+yes\s+active/);
    expect((await runCommand(kernel, 'extensions', 'ext info', ['toolbox'])).text).toContain('needed by:   toolbox-fan');
    await expect(ext.info('toolbx')).rejects.toMatchObject({ code: 'PLN_E_PLUGIN_UNKNOWN', hint: expect.stringContaining('"toolbox"') });
  });
});

// ── 2. enable and disable ───────────────────────────────────────────────────

describe('ext disable and ext enable', () => {
  it('stop and start the plugin with its hook, server and tools; every count is back each time; persisted across a restart', async () => {
    const at = await place({ mcpServers: { other: { command: process.execPath, args: [STDIO_SERVER, '--name', 'other'] } } });
    const dir = await writeToolbox(join(at.home, 'plugins'));
    await writeDependent(join(at.home, 'plugins'));
    // Approved before it starts, as a user would after the first refusal.
    {
      const { kernel } = await boot(at);
      await approve(kernel, dir);
      await kernel.shutdown();
    }
    const { kernel, ext, mcp } = await boot(at, { serve: true });
    const other = await reached(mcp, 'other', 'connected');
    const first = await reached(mcp, 'tb', 'connected');
    expect(await messages(kernel, 'rm')).toContain('rm is not allowed here');
    const enabled = await counts(kernel, mcp);
    expect(enabled).toMatchObject({ services: 1, servers: ['other', 'tb'], processes: 2 });
    expect(enabled.tools).toBeGreaterThan(0);

    const off = await ext.disable('toolbox');
    expect(off).toMatchObject({ name: 'toolbox', enabled: false, scope: 'user', changed: true, dependents: ['toolbox-fan'], live: { removed: ['toolbox-fan', 'toolbox'], failed: [] } });
    expect((await userSettings(at)).plugins.toolbox).toEqual({ enabled: false });
    const disabled = await counts(kernel, mcp);
    expect(disabled).toMatchObject({ services: 0, hooks: enabled.hooks - 1, servers: ['other'], processes: 1 });
    expect(disabled.tools).toBeLessThan(enabled.tools);
    expect(isAlive(first.pid!)).toBe(false);
    expect(await messages(kernel, 'rm')).toEqual([]);

    const on = await ext.enable('toolbox');
    expect(on).toMatchObject({ enabled: true, changed: true, live: { added: expect.arrayContaining(['toolbox', 'toolbox-fan']), failed: [] } });
    const second = await reached(mcp, 'tb', 'connected');
    expect(second.pid).not.toBe(first.pid);
    expect(await counts(kernel, mcp)).toEqual(enabled);
    expect(await messages(kernel, 'rm')).toContain('rm is not allowed here');

    // Once more: nothing twice, nothing left.
    await ext.disable('toolbox');
    expect(await counts(kernel, mcp)).toEqual(disabled);
    await ext.enable('toolbox');
    await reached(mcp, 'tb', 'connected');
    expect(await counts(kernel, mcp)).toEqual(enabled);
    // The unrelated server was never restarted.
    expect(mcp.servers().find((s) => s.name === 'other')).toMatchObject({ state: 'connected', pid: other.pid });

    // Disabled again, then a new kernel on the same files: still disabled, and so are its dependents.
    await ext.disable('toolbox');
    await kernel.shutdown();
    const restarted = await boot(at);
    const list = new Map((await restarted.ext.list()).map((e) => [e.name, e]));
    expect(list.get('toolbox')).toMatchObject({ enabled: false, enabledFrom: 'user settings', state: 'excluded', error: { code: 'PLN_E_PLUGIN_DISABLED' } });
    expect(list.get('toolbox-fan')).toMatchObject({ enabled: true, state: 'excluded', error: { code: 'PLN_E_DEP_DISABLED' } });
    expect(await restarted.kernel.get('toolbox' as never).then(() => 'provided', () => 'absent')).toBe('absent');
  }, 60_000);

  it('a workspace cannot disable a guard plugin or enable one the user disabled: refused, nothing written', async () => {
    const at = await place({ plugins: { toolbox: { enabled: false } } });
    await writeToolbox(join(at.home, 'plugins'));
    const { ext } = await boot(at);
    const workspaceFile = join(at.workspace, '.plinth', 'settings.json');

    await expect(ext.disable('trust', { scope: 'workspace' })).rejects.toMatchObject({ code: 'PLN_E_EXT_GUARD', details: { file: workspaceFile } });
    await expect(ext.disable('hooks', { scope: 'workspace' })).rejects.toMatchObject({ code: 'PLN_E_EXT_GUARD' });
    await expect(ext.enable('toolbox', { scope: 'workspace' })).rejects.toMatchObject({ code: 'PLN_E_EXT_USER_DISABLED' });
    await expect(readFile(workspaceFile, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });

    // What a workspace may do: tighten.
    expect(await ext.disable('inspect', { scope: 'workspace' })).toMatchObject({ enabled: false, scope: 'workspace', file: workspaceFile });
    expect(JSON.parse(await readFile(workspaceFile, 'utf8'))).toEqual({ plugins: { inspect: { enabled: false } } });
    // Enabling it in the user's file does not undo the workspace's `false`: the result says so, and where.
    const user = await ext.enable('inspect');
    expect(user).toMatchObject({ enabled: false, scope: 'user' });
    expect(user.notes.join('\n')).toContain('still disabled by workspace settings: change it there too (`plinth ext enable inspect --scope workspace`)');
    // Enabling there removes its own `false` (a workspace `true` would be ignored).
    expect(await ext.enable('inspect', { scope: 'workspace' })).toMatchObject({ enabled: true, changed: true });
    expect(JSON.parse(await readFile(workspaceFile, 'utf8'))).toEqual({});
    // Disabling a guard is the user's own choice, with a note.
    const trust = await ext.disable('trust');
    expect(trust.notes.join('\n')).toMatch(/guard plugin/);
  }, 60_000);
});

// ── 4. settings ─────────────────────────────────────────────────────────────

describe('ext config', () => {
  it('shows where each value comes from and checks values against their declaration', async () => {
    const at = await place({ plugins: { toolbox: { settings: { retries: 3 } } } });
    await mkdir(join(at.workspace, '.plinth'), { recursive: true });
    await writeFile(join(at.workspace, '.plinth', 'settings.json'), JSON.stringify({ plugins: { toolbox: { settings: { greeting: 'hi from the project', retries: 99 } } } }));
    await writeToolbox(join(at.home, 'plugins'));
    const { ext } = await boot(at);

    const views = new Map((await ext.settings('toolbox')).map((s) => [s.name, s]));
    expect(views.get('greeting')).toMatchObject({ from: 'workspace', value: 'hi from the project', file: join(at.workspace, '.plinth', 'settings.json') });
    // A user-only setting: the workspace's 99 is ignored, as the kernel ignores it.
    expect(views.get('retries')).toMatchObject({ from: 'user', value: 3 });
    expect(views.get('token')).toMatchObject({ from: 'unset', sensitive: true });

    await expect(ext.configure('toolbox', 'retries', 'many')).rejects.toMatchObject({ code: 'PLN_E_SETTING_INVALID' });
    await expect(ext.configure('toolbox', 'retries', 5, { scope: 'workspace' })).rejects.toMatchObject({ code: 'PLN_E_EXT_SETTING_SCOPE' });
    await expect(ext.configure('toolbox', 'greting', 'x')).rejects.toMatchObject({ code: 'PLN_E_EXT_SETTING_UNKNOWN', hint: expect.stringContaining('"greeting"') });
    expect(await ext.configure('toolbox', 'retries', 5)).toMatchObject({ stored: 'settings', setting: { from: 'user', value: 5 } });
    expect((await userSettings(at)).plugins.toolbox.settings).toEqual({ retries: 5 });
    expect(await ext.unset('toolbox', 'greeting', { scope: 'workspace' })).toMatchObject({ unset: true, setting: { from: 'default', value: 'hello' } });
    expect(await ext.unset('toolbox', 'retries')).toMatchObject({ setting: { from: 'unset' } });
    expect((await userSettings(at)).plugins.toolbox).toBeUndefined();
  }, 60_000);

  it('a missing required setting stops only its plugin, naming the setting and the command that sets it', async () => {
    const at = await place();
    const dir = join(at.home, 'plugins', 'needy');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: 'needy', version: '1.0.0', kernel: '^1.0.0', settings: [{ name: 'endpoint', required: true, description: 'Where to send' }] }));
    const first = await boot(at);
    const list = await first.ext.list();
    expect(list.filter((e) => e.state === 'failed').map((e) => e.name)).toEqual(['needy']);
    expect(list.find((e) => e.name === 'needy')?.error).toMatchObject({ code: 'PLN_E_SETTING_REQUIRED', hint: expect.stringContaining('plinth ext config needy endpoint <value>') });
    expect(list.find((e) => e.name === 'hooks')).toMatchObject({ state: 'active' });

    await first.ext.configure('needy', 'endpoint', 'https://example.invalid/notes');
    await first.kernel.shutdown();
    const second = await boot(at);
    expect((await second.ext.list()).find((e) => e.name === 'needy')).toMatchObject({ state: 'active' });
  }, 60_000);

  it("keeps a sensitive value in the secret store: the plugin's code and its hook process get it after a restart, and no output, log or file shows it", async () => {
    const at = await place();
    const dir = await writeToolbox(join(at.home, 'plugins'), '1.0.0', 'v1', { seenHook: true });
    const first = await boot(at);
    await approve(first.kernel, dir);

    const printed: string[] = [];
    const set = await runCommand(first.kernel, 'extensions', 'ext config', ['toolbox', 'token', SECRET]);
    printed.push(set.text);
    expect(set.text).toMatch(/Stored toolbox\.token in the secret store/);
    const settings = await userSettings(at);
    expect(settings.plugins.toolbox.settings.token).toEqual({ $secret: 'plugin-setting:toolbox/token' });
    expect((await first.ext.settings('toolbox')).find((s) => s.name === 'token')).toMatchObject({ from: 'secrets', value: '[redacted]' });
    printed.push((await runCommand(first.kernel, 'extensions', 'ext config', ['toolbox'])).text);
    printed.push(JSON.stringify((await runCommand(first.kernel, 'extensions', 'ext info', ['toolbox'], true)).json));
    await first.kernel.shutdown();

    // A new kernel: the value reaches the plugin's code and its server's environment, and nothing else.
    const second = await boot(at, { serve: true });
    expect(await messages(second.kernel)).toContain(`toolbox v1 token ${sha(SECRET)}`);
    expect(second.kernel.settingsEnv('toolbox')).toEqual({ TOOLBOX_TOKEN: SECRET });
    // Its hook process was started with it.
    expect(await readFile(join(at.workspace, 'toolbox-seen.txt'), 'utf8')).toBe(sha(SECRET));
    await reached(second.mcp, 'tb', 'connected');
    printed.push(JSON.stringify(second.kernel.inspect()), JSON.stringify(await second.ext.list()), JSON.stringify(await second.ext.info('toolbox')), JSON.stringify(second.mcp.servers()));
    printed.push((await runCommand(second.kernel, 'inspect', 'config show', [], true)).text, JSON.stringify((await runCommand(second.kernel, 'inspect', 'config show', [], true)).json));
    printed.push(second.kernel.redact(`the token is ${SECRET}`));

    // --unset removes it from the file and the store.
    const unset = await second.ext.unset('toolbox', 'token');
    expect(unset).toMatchObject({ stored: 'secrets', setting: { from: 'unset' } });
    expect((await userSettings(at)).plugins?.toolbox).toBeUndefined();
    expect(await (await second.kernel.get('secrets')).get('plugin-setting:toolbox/token')).toBeUndefined();
    await second.kernel.shutdown();

    for (const text of [...printed, ...at.logs]) expect(text).not.toContain(SECRET);
    for (const file of await readdir(at.home, { recursive: true })) {
      const content = await readFile(join(at.home, file)).catch(() => Buffer.alloc(0));
      expect(content.includes(SECRET), file).toBe(false);
    }
  }, 60_000);
});

// ── 5. link ─────────────────────────────────────────────────────────────────

describe('ext link and ext unlink', () => {
  it('a linked folder takes precedence over the installed plugin of that name, live; unlinking brings the installed one back', async () => {
    const at = await place();
    await writeToolbox(join(at.home, 'plugins'), '1.0.0', 'installed');
    const work = await mkdtemp(join(tmpdir(), 'plinth-ext-dev-'));
    folders.push(work);
    const dev = await writeToolbox(work, '1.1.0-dev', 'dev');
    const { kernel, ext } = await boot(at);
    expect(await messages(kernel)).toContain('toolbox installed token none');

    const linked = await ext.link(dev);
    expect(linked).toMatchObject({ name: 'toolbox', version: '1.1.0-dev', dir: dev, shadows: { name: 'toolbox', version: '1.0.0', source: 'user', dir: join(at.home, 'plugins', 'toolbox') }, live: { failed: [] } });
    expect((await userSettings(at)).links).toEqual([dev]);
    expect(await ext.links()).toEqual([dev]);
    expect(await messages(kernel)).toContain('toolbox dev token none');
    expect((await ext.list()).find((e) => e.name === 'toolbox')).toMatchObject({ version: '1.1.0-dev', linked: true, dir: dev });

    // After a restart the link is read from the settings.
    await kernel.shutdown();
    const again = await boot(at);
    expect((await again.ext.list()).find((e) => e.name === 'toolbox')).toMatchObject({ version: '1.1.0-dev', linked: true });

    const unlinked = await again.ext.unlink('toolbox');
    expect(unlinked).toMatchObject({ name: 'toolbox', dir: dev, fallback: { version: '1.0.0', source: 'user' }, live: { failed: [] } });
    expect((await userSettings(at)).links).toBeUndefined();
    expect(await messages(again.kernel)).toContain('toolbox installed token none');
    expect((await again.ext.list()).find((e) => e.name === 'toolbox')).toMatchObject({ version: '1.0.0', linked: false });
    await expect(again.ext.unlink('toolbox')).rejects.toMatchObject({ code: 'PLN_E_EXT_NOT_LINKED' });
  }, 60_000);
});
