/**
 * Peer folders as plinth plugins, in a real kernel with the builtin plugins: a
 * Claude Code plugin (`.claude-plugin/plugin.json`, `.mcp.json`,
 * `hooks/hooks.json`) and a Gemini CLI extension (`gemini-extension.json` with
 * `mcpServers`, `settings`, `excludeTools`, and `hooks/hooks.json`), built
 * in the user's plugins folder as their authors would write them. Each runs the
 * real server-everything (started through a script in the peer's folder, named
 * with the peer's own variable), whose tools are listed through the mcp
 * service once the servers are approved; each is disabled and enabled again
 * while the kernel runs, its tools leaving and coming back.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import { serverTrustSubject } from '../plugins/mcp/trust-subject.js';
import { claudePlugin, geminiExtension, write } from './support/peer-folders.js';

let base: string;
let home: string;
let workspace: string;
let kernel: Kernel;
const savedCI = process.env.CI;
const logs: string[] = [];

const toolsOf = async (server: string) => (await kernel.get('mcp')).tools().filter((t) => t.server === server).map((t) => t.name);

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-peers-'));
  home = join(base, 'home');
  workspace = join(base, 'project');
  await mkdir(workspace, { recursive: true });
  await claudePlugin(join(home, 'plugins', 'claude-demo'));
  await geminiExtension(join(home, 'plugins', 'gemini-demo'));
  // One that came with the project: a workspace plugin, which loads only once its folder is approved.
  await write(join(workspace, '.plinth', 'plugins', 'project-ext', 'gemini-extension.json'), { name: 'project-ext', version: '1.0.0', mcpServers: { 'project-server': { command: 'node', args: ['${extensionPath}/server.js'] } } });
  await write(join(home, 'settings.json'), { plugins: { 'gemini-demo': { settings: { GEMINI_DEMO_GREETING: 'hello-from-settings' } } } });
  process.env.CI = '1'; // trust would ask on a terminal; approvals are given below
  kernel = new Kernel({ home, workspace, builtin: true, env: { ...process.env }, logLevel: 'debug', logSink: (line) => logs.push(line) });
  await kernel.boot();
}, 60_000);

afterAll(async () => {
  await kernel?.shutdown();
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await rm(base, { recursive: true, force: true });
});

describe('discovery', () => {
  it('finds both peer folders in the user plugins folder as declaration-only plugins', () => {
    const claude = kernel.status().find((p) => p.name === 'claude-demo');
    const gemini = kernel.status().find((p) => p.name === 'gemini-demo');
    expect(claude).toMatchObject({ version: '0.0.0', source: 'user', state: 'active' });
    expect(gemini).toMatchObject({ version: '1.2.0', source: 'user', state: 'active' });
  });

  it('loads a peer folder that came with the project only once it is approved, as any workspace plugin', async () => {
    const status = kernel.status().find((p) => p.name === 'project-ext');
    expect(status).toMatchObject({ source: 'workspace', state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(status?.error?.message).toContain('plinth trust approve plugin project-ext');
    expect((await kernel.get('mcp')).definition('project-server')).toBeUndefined();
  });

  it('makes their servers plinth servers, with the peers\' variables expanded', async () => {
    const mcp = await kernel.get('mcp');
    const claudeDir = join(home, 'plugins', 'claude-demo');
    const geminiDir = join(home, 'plugins', 'gemini-demo');
    expect(mcp.definition('claude-everything')).toMatchObject({ plugin: 'claude-demo', source: 'extension', command: process.execPath, args: [join(claudeDir, 'servers', 'start.mjs')], env: { REGION: 'eu-1' } });
    expect(mcp.definition('gemini-everything')).toMatchObject({
      plugin: 'gemini-demo',
      source: 'extension',
      args: [join(geminiDir, 'servers', 'start.mjs')],
      cwd: geminiDir,
      env: { PROJECT: workspace },
      excludeTools: ['get-tiny-image'],
    });
  });

  it('declares the peers\' settings: Gemini\'s by their envVar, Claude\'s userConfig as CLAUDE_PLUGIN_OPTION_<key>', async () => {
    const extensions = await kernel.get('extensions');
    const gemini = await extensions.info('gemini-demo');
    expect(gemini.settings).toEqual([expect.objectContaining({ name: 'GEMINI_DEMO_GREETING', envVar: 'GEMINI_DEMO_GREETING', from: 'user', value: 'hello-from-settings', sensitive: false })]);
    const claude = await extensions.info('claude-demo');
    expect(claude.settings).toEqual([expect.objectContaining({ name: 'region', envVar: 'CLAUDE_PLUGIN_OPTION_region', from: 'default', value: 'eu-1' })]);
  });
});

describe('their hooks', () => {
  it('are hook definitions in the peer\'s dialect, read from its hooks/hooks.json, with its variables expanded', async () => {
    const { hooks } = await (await kernel.get('hooks')).definitions();
    const claudeDir = join(home, 'plugins', 'claude-demo');
    const geminiDir = join(home, 'plugins', 'gemini-demo');
    const claude = hooks.filter((h) => h.plugin === 'claude-demo');
    const gemini = hooks.filter((h) => h.plugin === 'gemini-demo');
    expect(claude).toEqual([
      expect.objectContaining({
        protocol: 'claude',
        events: ['before_tool'],
        matcher: { peer: 'mcp__claude-everything__.*' },
        timeoutMs: 10_000, // Claude's seconds
        source: 'extension',
        pluginRoot: claudeDir,
        action: expect.objectContaining({ args: [join(claudeDir, 'hooks', 'guard.sh')] }),
        origin: expect.stringContaining(join('.claude-plugin', 'plugin.json')),
      }),
    ]);
    expect(gemini).toEqual([
      expect.objectContaining({ protocol: 'gemini', events: ['before_tool'], source: 'extension', action: expect.objectContaining({ command: 'node', args: [join(geminiDir, 'hooks', 'guard.js')] }) }),
    ]);
  });
});

describe('their MCP servers', () => {
  it('need approval like any extension server before they start', async () => {
    const mcp = await kernel.get('mcp');
    const status = await mcp.start('claude-everything', { retries: 0 });
    expect(status.state).not.toBe('connected');
    expect(await toolsOf('claude-everything')).toEqual([]);
  });

  it('once approved, serve server-everything\'s tools through plinth; the extension\'s excludeTools hides its tool', async () => {
    const mcp = await kernel.get('mcp');
    const trust = await kernel.get('trust');
    // The env as written in the manifest made of each peer's: Claude's `${user_config.region}` is a setting reference.
    const written: Record<string, Record<string, string>> = { 'claude-everything': { REGION: '${setting:claude-demo.region}' }, 'gemini-everything': { PROJECT: workspace } };
    for (const name of ['claude-everything', 'gemini-everything']) {
      await trust.approve(serverTrustSubject({ definition: mcp.definition(name)!, trustId: name, written: { env: written[name]!, headers: {}, cwdIsDefault: false } }, (t) => t));
      const started = await mcp.start(name, { retries: 0 });
      expect(started.state, JSON.stringify(started)).toBe('connected');
    }
    const claude = await toolsOf('claude-everything');
    expect(claude).toContain('claude-everything__echo');
    expect(claude).toContain('claude-everything__get-tiny-image');
    const gemini = await toolsOf('gemini-everything');
    expect(gemini).toContain('gemini-everything__echo');
    expect(gemini).not.toContain('gemini-everything__get-tiny-image');

    const echo = await mcp.callTool('claude-everything__echo', { message: 'peer' });
    expect(echo.ok).toBe(true);
    expect(echo.text).toContain('peer');
    // The Gemini setting reaches the extension's server as its variable, as Gemini passes it.
    const env = await mcp.callTool('gemini-everything__get-env', {});
    expect(env.text).toContain('hello-from-settings');
  });
});

describe('their hooks, fired', () => {
  it('guard their own server\'s tool once approved: the Claude hook blocks by exit 2, the Gemini hook by its JSON decision', async () => {
    const mcp = await kernel.get('mcp');
    const hooks = await kernel.get('hooks');
    // Not approved yet: an extension's hook does not run (skipped as untrusted, as any plinth plugin's hook).
    const unapproved = await mcp.callTool('claude-everything__echo', { message: 'forbidden word' });
    expect(hooks.lastRun('before_tool')?.outcomes.find((o) => o.hook.id === 'claude-demo/PreToolUse.0.0')).toMatchObject({ status: 'skipped', failure: 'untrusted' });
    expect(unapproved.text).not.toContain('blocked by claude-demo');

    const trust = await kernel.get('trust');
    const { hooks: all } = await hooks.definitions();
    for (const hook of all.filter((h) => h.plugin === 'claude-demo' || h.plugin === 'gemini-demo')) await trust.approve(trustSubject(hook));

    const blocked = await mcp.callTool('claude-everything__echo', { message: 'forbidden word' });
    expect(blocked.ok).toBe(false);
    expect(blocked.text).toContain('blocked by claude-demo: mcp__claude-everything__echo');
    expect((await mcp.callTool('claude-everything__echo', { message: 'fine' })).text).toContain('fine');

    const denied = await mcp.callTool('gemini-everything__echo', { message: 'forbidden word' });
    expect(denied.ok).toBe(false);
    expect(denied.text).toContain('gemini-demo refuses mcp_gemini-everything_echo in BeforeTool');
    expect((await mcp.callTool('gemini-everything__echo', { message: 'fine' })).text).toContain('fine');
  }, 60_000);
});

describe('live', () => {
  it('disables a peer plugin while running (its server and tools go) and enables it again (they come back)', async () => {
    const extensions = await kernel.get('extensions');
    const mcp = await kernel.get('mcp');
    const off = await extensions.disable('gemini-demo');
    // (The unapproved project plugin is tried again at each live change, and refused again.)
    const ours = (failed: ReadonlyArray<{ plugin?: string }> = []) => failed.filter((f) => f.plugin === 'gemini-demo');
    expect(ours(off.live?.failed)).toEqual([]);
    expect(off.live?.removed).toContain('gemini-demo');
    expect(mcp.definition('gemini-everything')).toBeUndefined();
    expect(await toolsOf('gemini-everything')).toEqual([]);

    const on = await extensions.enable('gemini-demo');
    expect(ours(on.live?.failed)).toEqual([]);
    expect(on.live?.added).toContain('gemini-demo');
    expect(mcp.definition('gemini-everything')).toBeDefined();
    // Approved before, as it is: it starts again without asking.
    expect((await mcp.start('gemini-everything', { retries: 0 })).state).toBe('connected');
    expect(await toolsOf('gemini-everything')).toContain('gemini-everything__echo');
  }, 60_000);
});

describe('plinth ext info', () => {
  it('lists what plinth ignores of each peer folder, with the reason, and what it reads differently', async () => {
    const extensions = await kernel.get('extensions');
    const claude = (await extensions.info('claude-demo')).peer!;
    expect(claude.format).toBe('claude');
    expect(claude.file).toBe(join(home, 'plugins', 'claude-demo', '.claude-plugin', 'plugin.json'));
    expect(claude.ignored.map((f) => f.field)).toEqual(expect.arrayContaining(['author', 'commands/', 'agents/', 'skills/']));
    expect(claude.notes.map((f) => f.field)).toEqual(expect.arrayContaining(['version', 'userConfig']));

    const gemini = (await extensions.info('gemini-demo')).peer!;
    expect(gemini.format).toBe('gemini');
    expect(gemini.ignored.map((f) => f.field)).toEqual(expect.arrayContaining(['contextFileName', 'themes', 'commands/', 'excludeTools[1]']));
    expect(gemini.ignored.find((f) => f.field === 'contextFileName')?.reason).toContain('GEMINI.md');
    expect(gemini.notes.map((f) => f.field)).toEqual(expect.arrayContaining(['excludeTools', 'settings']));
  });
});
