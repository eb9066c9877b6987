/**
 * The plugins that own declarative sections follow plugins that come, go and
 * change while the host runs: the hooks plugin (hook definitions, event
 * handlers, persistent processes), the mcp plugin (servers, their processes and
 * tools), the trust plugin (its view of plugins; approvals stay) and health
 * (never restarts a server that went).
 *
 * Everything is real: a booted kernel with the builtin plugins, a plugin folder
 * in a temporary directory declaring a hook (a node script that blocks tools)
 * and a stdio MCP server (the SDK fixture server), and an unrelated server from
 * the user settings. Plugins come and go through `kernel.plugins` (add,
 * replace, disable, enable, remove); the trust test fires the kernel's
 * `manifest` and `unload` hooks itself, with versions from two folders.
 *
 * 1. a plugin that arrives after ready: its hooks block, its server runs, its tools are listed;
 * 2. replaced (changed script, changed server args): swapped in one step, the unrelated server untouched;
 * 3. unloaded: hooks, handler, server process and tools gone; every count back to what it was;
 *    a persistent hook process stops with its plugin, the file_change watcher follows the hooks;
 * 4. the trust plugin follows the plugin's versions and keeps its approvals;
 * 5. health does not restart a server whose plugin left.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trustSubject } from '../plugins/hooks/engine.js';
import { collectServers } from '../plugins/mcp/definitions.js';
import { serverTrustSubject } from '../plugins/mcp/trust-subject.js';
import { EVENTS, type McpService, type PluginInfo, type PluginSource, type ServerState, type ServerStatus, parseManifest } from '../sdk/index.js';
import { isAlive } from '../internal/process/tree.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { runCommand } from './support/commands.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const STDIO_SERVER = join(root, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const BLOCK_SCRIPT = join(root, 'test', 'fixtures', 'hooks', 'block.js');
const PERSISTENT_SCRIPT = join(root, 'test', 'fixtures', 'hooks', 'persistent.mjs');

/** The demo plugin adds a server, health restarts servers on its own: off, unless a test says otherwise. */
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

const folders: string[] = [];
const kernels: TestKernel[] = [];
const savedCI = process.env.CI;

beforeAll(() => {
  // In process, trust asks on a terminal when it has one; these tests show the answer without one.
  process.env.CI = '1';
});

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

afterAll(async () => {
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

// ── helpers ─────────────────────────────────────────────────────────────────

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-live-owners-'));
  folders.push(dir);
  return dir;
}

interface Version {
  /** The tools the hook blocks. */
  readonly blocks: readonly string[];
  /** The server's `serverInfo.name`. */
  readonly serverName: string;
  /** A line appended to the hook script: a changed script with the same definition. */
  readonly scriptNote?: string;
}

/** Writes (or rewrites) the plugin folder `live-tools`: a before_tool hook and a stdio server, both relative to the folder. */
async function writePlugin(dir: string, version: Version): Promise<void> {
  await mkdir(join(dir, 'hooks'), { recursive: true });
  await writeFile(join(dir, 'hooks', 'guard.js'), `${await readFile(BLOCK_SCRIPT, 'utf8')}${version.scriptNote ? `// ${version.scriptNote}\n` : ''}`);
  await writeFile(join(dir, 'server.mjs'), `import ${JSON.stringify(STDIO_SERVER)};\n`);
  const manifest = {
    name: 'live-tools',
    version: '1.0.0',
    description: 'A plugin that comes and goes: a hook and a server',
    kernel: '^1.0.0',
    hooks: { before_tool: [{ name: 'guard', command: 'node', args: ['hooks/guard.js', ...version.blocks] }] },
    mcpServers: { live: { command: process.execPath, args: ['server.mjs', '--name', version.serverName] } },
  };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

/** The plugin in `dir` as the kernel announces it. */
async function pluginInfo(dir: string, source: PluginSource = 'user'): Promise<PluginInfo> {
  const parsed = parseManifest(JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')));
  if (!parsed.ok) throw new Error(`invalid manifest in ${dir}: ${JSON.stringify(parsed.issues)}`);
  return { name: parsed.manifest.name, version: parsed.manifest.version, source, dir, manifest: parsed.manifest };
}

/** A kernel with the builtin plugins and an unrelated user server `other`, serving. */
async function serving(plugins: Record<string, unknown> = QUIET): Promise<{ kernel: TestKernel; mcp: McpService }> {
  const kernel = await createTestKernel({
    builtin: true,
    settings: { plugins, mcpServers: { other: { command: process.execPath, args: [STDIO_SERVER, '--name', 'other'] } } },
  });
  kernels.push(kernel);
  await kernel.serve();
  return { kernel, mcp: await kernel.get('mcp') };
}

/** Approves the plugin's servers as they are now (an extension server needs it), as `plinth trust approve` would. */
async function approveServers(kernel: TestKernel, info: PluginInfo): Promise<void> {
  const { servers } = collectServers({ layers: [], plugins: [info], manifests: [info], config: {}, env: {}, home: kernel.home, workspace: kernel.workspace, connectTimeoutMs: 10_000 });
  const trust = await kernel.get('trust');
  for (const record of servers) await trust.approve(serverTrustSubject(record, (text) => text));
}

/** Approves a hook as it is now, the way `plinth hooks trust <id>` does. */
async function approveHook(kernel: TestKernel, id: string): Promise<void> {
  const { hooks } = await (await kernel.get('hooks')).definitions();
  const hook = hooks.find((h) => h.id === id);
  if (!hook) throw new Error(`no hook ${id} among ${hooks.map((h) => h.id).join(', ')}`);
  await (await kernel.get('trust')).approve(trustSubject(hook));
}

/** Resolves once `server` is in `state` and `when` holds (already there counts). */
function reached(mcp: McpService, server: string, state: ServerState, when: (status: ServerStatus) => boolean = () => true): Promise<ServerStatus> {
  return new Promise((resolve) => {
    const ok = (status: ServerStatus | undefined) => status?.name === server && status.state === state && when(status);
    const now = mcp.servers().find((s) => s.name === server);
    if (ok(now)) return resolve(now!);
    const off = mcp.onStateChange((status) => {
      if (ok(status)) {
        off();
        resolve(status);
      }
    });
  });
}

/** What the host holds: handlers on the event bus, lifecycle taps, hook definitions, tools, servers and their processes. */
async function counts(kernel: TestKernel, mcp: McpService) {
  const hooks = kernel.hooks as unknown as Record<string, { taps: unknown[] }>;
  return {
    eventTaps: EVENTS.reduce((sum, event) => sum + kernel.eventHooks[event].taps.length, 0),
    lifecycleTaps: Object.values(hooks).reduce((sum, hook) => sum + hook.taps.length, 0),
    hooks: (await (await kernel.get('hooks')).definitions()).hooks.length,
    tools: mcp.tools().length,
    servers: mcp.servers().map((s) => s.name).sort(),
    processes: mcp.servers().filter((s) => s.pid !== undefined).length,
  };
}

const tryTool = (kernel: TestKernel, tool: string) => kernel.emit('before_tool', { tool });

// ── 1-3. hooks and servers follow the plugin ───────────────────────────────

describe('a plugin that arrives, is replaced and leaves while the host serves', () => {
  it('brings its hook and server, swaps them in one step, and takes them away, leaving every count as it was', async () => {
    const dir = join(await temp(), 'live-tools');
    await writePlugin(dir, { blocks: ['rm'], serverName: 'live-v1' });
    const { kernel, mcp } = await serving();
    const other = await reached(mcp, 'other', 'connected');
    const before = await counts(kernel, mcp);
    expect(before.servers).toEqual(['other']);

    // 1. It arrives.
    await approveServers(kernel, await pluginInfo(dir));
    expect(await kernel.plugins.add(dir)).toMatchObject({ added: ['live-tools'], failed: [] });
    const { hooks } = await (await kernel.get('hooks')).definitions();
    expect(hooks.find((h) => h.id === 'live-tools/guard')).toMatchObject({ source: 'extension', plugin: 'live-tools', cwd: dir });
    // Not approved yet: the hook waits (and says how to approve it), the event goes on.
    expect((await tryTool(kernel, 'rm')).allow).toBe(true);
    await approveHook(kernel, 'live-tools/guard');
    expect(await tryTool(kernel, 'rm')).toMatchObject({ allow: false, messages: ['rm is not allowed here'] });
    expect((await tryTool(kernel, 'ls')).allow).toBe(true);

    const first = await reached(mcp, 'live', 'connected');
    expect(first).toMatchObject({ source: 'extension', serverInfo: { name: 'live-v1' } });
    expect(mcp.tools().map((t) => t.name)).toContain('live__echo');
    const arrived = await counts(kernel, mcp);
    // before_tool had no handler of the hooks plugin: it has one now, and only one.
    expect(arrived.eventTaps).toBe(before.eventTaps + 1);
    expect(arrived.lifecycleTaps).toBe(before.lifecycleTaps);
    expect(arrived.hooks).toBe(before.hooks + 1);
    expect(arrived.servers).toEqual(['live', 'other']);
    expect(arrived.processes).toBe(2);

    // 2. Replaced: the script changed (so did what it blocks) and the server's args.
    await writePlugin(dir, { blocks: ['rm', 'mv'], serverName: 'live-v2', scriptNote: 'v2' });
    await approveServers(kernel, await pluginInfo(dir));
    const swapping = kernel.plugins.replace('live-tools');
    // While it is being swapped, rm is never let through: the old guard, or the new one that its approval does not cover.
    const during = await Promise.all([tryTool(kernel, 'rm'), tryTool(kernel, 'rm'), tryTool(kernel, 'rm')]);
    expect(await swapping).toMatchObject({ replaced: ['live-tools'], failed: [] });
    expect(during.map((d) => d.allow)).toEqual([false, false, false]);
    expect(isAlive(first.pid!)).toBe(false);

    // The approval covered the old script: the guard on a gate event blocks, naming the fix, until approved again.
    const unapproved = await tryTool(kernel, 'rm');
    expect(unapproved.allow).toBe(false);
    expect(unapproved.messages.join('\n')).toMatch(/did not run/);
    await approveHook(kernel, 'live-tools/guard');
    expect(await tryTool(kernel, 'mv')).toMatchObject({ allow: false, messages: ['mv is not allowed here'] });
    expect((await tryTool(kernel, 'ls')).allow).toBe(true);

    const second = await reached(mcp, 'live', 'connected');
    expect(second.serverInfo?.name).toBe('live-v2');
    expect(second.pid).not.toBe(first.pid);
    // The unrelated server was never restarted.
    expect(mcp.servers().find((s) => s.name === 'other')).toMatchObject({ state: 'connected', pid: other.pid });
    expect(await counts(kernel, mcp)).toEqual(arrived);

    // 3. It leaves (disabled).
    expect(await kernel.plugins.disable('live-tools')).toMatchObject({ removed: ['live-tools'] });
    expect(isAlive(second.pid!)).toBe(false);
    expect(mcp.servers().map((s) => s.name)).toEqual(['other']);
    expect(mcp.tools().filter((t) => t.server === 'live')).toEqual([]);
    expect((await mcp.callTool('live__echo', { text: 'hi' })).error?.code).toBe('PLN_E_MCP_TOOL_UNKNOWN');
    expect((await tryTool(kernel, 'rm')).allow).toBe(true);
    expect(await counts(kernel, mcp)).toEqual(before);
    expect(mcp.servers().find((s) => s.name === 'other')).toMatchObject({ state: 'connected', pid: other.pid });

    // And comes back (enabled): the same as when it first arrived, nothing twice.
    expect(await kernel.plugins.enable('live-tools')).toMatchObject({ added: ['live-tools'] });
    const third = await reached(mcp, 'live', 'connected');
    expect(third.pid).not.toBe(second.pid);
    expect(await tryTool(kernel, 'mv')).toMatchObject({ allow: false, messages: ['mv is not allowed here'] });
    expect(await counts(kernel, mcp)).toEqual(arrived);
    expect(await kernel.plugins.remove('live-tools')).toMatchObject({ removed: ['live-tools'] });
    expect(await counts(kernel, mcp)).toEqual(before);
    expect(isAlive(third.pid!)).toBe(false);
    expect(mcp.servers().find((s) => s.name === 'other')).toMatchObject({ state: 'connected', pid: other.pid });
  });

  it('without serving, a new plugin server starts on demand as from settings, and goes with its plugin', async () => {
    const dir = join(await temp(), 'live-tools');
    await writePlugin(dir, { blocks: ['rm'], serverName: 'live-v1' });
    const kernel = await createTestKernel({ builtin: true, settings: { plugins: QUIET } });
    kernels.push(kernel);
    const mcp = await kernel.get('mcp');
    expect(mcp.servers()).toEqual([]);

    await approveServers(kernel, await pluginInfo(dir));
    await kernel.plugins.add(dir);
    expect(mcp.servers()).toMatchObject([{ name: 'live', state: 'stopped' }]);
    const started = await mcp.start('live');
    expect(started.state).toBe('connected');

    await kernel.plugins.remove('live-tools');
    expect(isAlive(started.pid!)).toBe(false);
    expect(mcp.servers()).toEqual([]);
    await expect(mcp.start('live')).rejects.toMatchObject({ code: 'PLN_E_MCP_SERVER_UNKNOWN' });
  });
});

describe('a plugin with a persistent hook and a file_change hook', () => {
  it('starts the watcher when it brings the first file_change hook; its persistent process stops when it leaves', async () => {
    const dir = join(await temp(), 'live-watch');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'persistent.mjs'), await readFile(PERSISTENT_SCRIPT, 'utf8'));
    await writeFile(join(dir, 'ran.mjs'), 'process.stdin.resume(); process.stdin.on("end", () => process.stdout.write("{\\"allow\\":true}"));\n');
    const manifest = {
      name: 'live-watch',
      version: '1.0.0',
      description: 'A persistent guard and a file_change hook',
      kernel: '^1.0.0',
      hooks: {
        before_tool: [{ name: 'keeper', command: 'node', args: ['persistent.mjs'], persistent: true }],
        file_change: [{ name: 'notes', command: 'node', args: ['ran.mjs'], files: ['*.txt'] }],
      },
    };
    await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const { kernel } = await serving();

    await kernel.plugins.add(dir);
    await approveHook(kernel, 'live-watch/keeper');
    const decision = await tryTool(kernel, 'rm');
    expect(decision.allow).toBe(false);
    const pid = Number(/of process (\d+)/.exec(decision.messages.join('\n'))?.[1]);
    expect(isAlive(pid)).toBe(true);
    // One process answers every request while its plugin stays.
    expect((await tryTool(kernel, 'ls')).messages.join('\n')).toContain(`of process ${pid}`);

    // The manifest brought the first file_change hook: the workspace is watched for *.txt now.
    const seen = new Promise<unknown>((resolve) => {
      kernel.on('file_change', (context) => void resolve(context.file));
    });
    await writeFile(join(kernel.workspace, 'note.txt'), 'hello\n');
    expect(await seen).toBe('note.txt');

    await kernel.plugins.remove('live-watch');
    expect(isAlive(pid)).toBe(false);
    expect((await (await kernel.get('hooks')).definitions()).hooks.filter((h) => h.plugin === 'live-watch')).toEqual([]);
    expect((await tryTool(kernel, 'rm')).allow).toBe(true);
  });
});

// ── 4. trust ────────────────────────────────────────────────────────────────

describe('the trust plugin', () => {
  it('approves a plugin as its current version, forgets a plugin that left, and keeps the approval', async () => {
    const base = await temp();
    const first = join(base, 'v1', 'live-tools');
    const second = join(base, 'v2', 'live-tools');
    await writePlugin(first, { blocks: ['rm'], serverName: 'a' });
    await writePlugin(second, { blocks: ['rm'], serverName: 'b', scriptNote: 'v2' });
    const kernel = await createTestKernel({ builtin: true, settings: { plugins: QUIET } });
    kernels.push(kernel);
    const trust = await kernel.get('trust');
    const v1 = await pluginInfo(first, 'workspace');
    const v2 = await pluginInfo(second, 'workspace');

    await kernel.hooks.manifest.promise(v1);
    await kernel.hooks.manifest.promise(v2); // replaced: same name, another folder
    const approved = await runCommand(kernel, 'trust', 'trust approve', ['plugin', 'live-tools']);
    expect(approved.code ?? 0).toBe(0);
    // What was approved is the folder of the version now in place.
    expect(await trust.inspect(await trust.pluginSubject(v2, 'workspace'))).toMatchObject({ trusted: true, level: 'approved' });
    expect((await trust.inspect(await trust.pluginSubject(v1, 'workspace'))).trusted).toBe(false);

    await kernel.hooks.unload.promise(v2);
    // Gone from the plugins it knows: nothing is approved from a folder any more...
    const after = await runCommand(kernel, 'trust', 'trust approve', ['plugin', 'live-tools']);
    expect(after.code).not.toBe(0);
    // ...but the approval stays: the same folder coming back needs none.
    expect(await trust.inspect(await trust.pluginSubject(v2, 'workspace'))).toMatchObject({ trusted: true, level: 'approved' });
  });
});

// ── 5. health ───────────────────────────────────────────────────────────────

describe('the health plugin', () => {
  it('stops monitoring a server whose plugin left, and does not start it again', async () => {
    const dir = join(await temp(), 'live-tools');
    await writePlugin(dir, { blocks: ['rm'], serverName: 'live-v1' });
    const { kernel, mcp } = await serving({ 'mcp-demo': { enabled: false } });
    const health = await kernel.get('health');
    await reached(mcp, 'other', 'connected');

    await approveServers(kernel, await pluginInfo(dir));
    await kernel.plugins.add(dir);
    const live = await reached(mcp, 'live', 'connected');
    expect(health.status().map((s) => s.name).sort()).toEqual(['live', 'other']);

    await kernel.plugins.remove('live-tools');
    expect(isAlive(live.pid!)).toBe(false);
    expect(health.status().map((s) => s.name)).toEqual(['other']);
    // Asked by hand, health refuses with the service's own word: there is no such server.
    await expect(health.restart('live')).rejects.toMatchObject({ code: 'PLN_E_HEALTH_SERVER_UNKNOWN' });
    expect(mcp.servers().map((s) => s.name)).toEqual(['other']);
  });
});
