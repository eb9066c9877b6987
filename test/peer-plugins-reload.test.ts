/**
 * Hot reload of peer folders through the real watcher, in a kernel serving as
 * `plinth up` does: a linked Gemini CLI extension whose `gemini-extension.json`
 * is edited (a server added) and then removed (the plugin goes), and a Claude
 * Code plugin in the user's plugins folder whose `.mcp.json` is edited (the
 * server's declaration changes live: a dot-file of a peer is part of it).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { planReload } from '../plugins/extensions/reload.js';
import { type FileChange, type PluginStatus, parseManifest } from '../sdk/index.js';
import { readPeerFolder } from '../internal/peer/manifest.js';
import { claudePlugin, geminiExtension, write } from './support/peer-folders.js';

const WAIT_MS = 20_000;
let base: string;
let kernel: Kernel;
let geminiDir: string;
let claudeDir: string;
const logs: string[] = [];
const savedCI = process.env.CI;

async function until<T>(what: string, read: () => Promise<T> | T, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const last = await read();
    if (check(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  process.env.CI = '1';
  base = await mkdtemp(join(tmpdir(), 'plinth-peers-reload-'));
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  geminiDir = join(base, 'dev', 'gemini-demo');
  claudeDir = join(home, 'plugins', 'claude-demo');
  await mkdir(workspace, { recursive: true });
  await geminiExtension(geminiDir);
  await claudePlugin(claudeDir);
  await write(join(home, 'settings.json'), {
    links: [geminiDir],
    plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false }, extensions: { settings: { reloadDebounceMs: 100 } } },
  });
  kernel = new Kernel({ home, workspace, env: {}, logLevel: 'debug', logSink: (line) => void logs.push(line) });
  await kernel.boot();
  await kernel.serve();
}, 60_000);

afterAll(async () => {
  await kernel?.shutdown();
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await rm(base, { recursive: true, force: true });
});

describe('which plugins a change to a peer folder reloads', () => {
  const status = (name: string, dir: string): PluginStatus => ({ name, version: '1.0.0', source: 'user', state: 'active', provides: [], dir });
  const change = (absolutePath: string, kind: FileChange['kind'] = 'changed'): FileChange => ({ path: absolutePath.slice('/p/'.length), absolutePath, kind });
  it('replaces the plugin for an edit of its peer manifest or dot-files, and rescans when a peer manifest is removed', () => {
    const plugins = [status('c', '/p/c'), status('g', '/p/g')];
    expect(planReload('/p', [change('/p/c/.mcp.json'), change('/p/g/gemini-extension.json')], plugins)).toEqual({ replace: ['c', 'g'], rescan: false });
    expect(planReload('/p', [change('/p/c/.claude-plugin/plugin.json', 'deleted')], plugins)).toEqual({ replace: [], rescan: true });
    expect(planReload('/p', [change('/p/g/gemini-extension.json', 'deleted')], plugins)).toEqual({ replace: [], rescan: true });
  });
});

describe('hot reload of peer folders', () => {
  it('reloads a linked Gemini extension whose gemini-extension.json gains a server, and drops it when the file goes', async () => {
    const mcp = await kernel.get('mcp');
    expect(mcp.definition('gemini-everything')).toBeDefined();
    await write(join(geminiDir, 'gemini-extension.json'), {
      name: 'gemini-demo',
      version: '1.3.0',
      mcpServers: {
        'gemini-everything': { command: process.execPath, args: ['${extensionPath}/servers/start.mjs'] },
        'gemini-second': { httpUrl: 'http://127.0.0.1:9/mcp' },
      },
    });
    await until('gemini-second declared', () => mcp.definition('gemini-second'), (d) => d !== undefined);
    expect(mcp.definition('gemini-second')).toMatchObject({ transport: 'http', url: 'http://127.0.0.1:9/mcp', plugin: 'gemini-demo' });
    expect(kernel.status().find((p) => p.name === 'gemini-demo')?.version).toBe('1.3.0');
    await until('the reload line', () => logs.some((l) => l.includes('reloaded gemini-demo@1.3.0')), Boolean);

    await rm(join(geminiDir, 'gemini-extension.json'));
    await until('gemini-demo gone', () => kernel.status().find((p) => p.name === 'gemini-demo')?.state, (s) => s === undefined || s === 'stopped');
    expect(mcp.definition('gemini-second')).toBeUndefined();
  }, 60_000);

  it('re-reads a Claude Code plugin whose .mcp.json changes: a user plugin, it is kept as it was until the new folder is approved', async () => {
    const mcp = await kernel.get('mcp');
    expect(mcp.definition('claude-everything')?.env).toEqual({ REGION: 'eu-1' });
    await writeFile(join(claudeDir, '.mcp.json'), JSON.stringify({ mcpServers: { 'claude-everything': { command: process.execPath, args: ['${CLAUDE_PLUGIN_ROOT}/servers/start.mjs'], env: { REGION: 'us-2' } } } }));
    await until('the refusal', () => logs.filter((l) => l.includes('kept claude-demo@0.0.0')), (lines) => lines.length > 0);
    expect(logs.find((l) => l.includes('kept claude-demo@0.0.0'))).toContain('PLN_E_PLUGIN_REFUSED');
    expect(mcp.definition('claude-everything')?.env).toEqual({ REGION: 'eu-1' });

    // Approved as it now is (what `plinth trust approve plugin claude-demo` does), it loads with the new server.
    const peer = await readPeerFolder(claudeDir, { workspace: join(base, 'project') });
    const parsed = parseManifest(peer!.data);
    if (!parsed.ok) throw new Error('the made manifest is invalid');
    const trust = await kernel.get('trust');
    await trust.approve(await trust.pluginSubject({ name: 'claude-demo', version: '0.0.0', dir: claudeDir, manifest: parsed.manifest }, 'user'));
    const report = await kernel.plugins.replace('claude-demo');
    expect(report.failed).toEqual([]);
    expect(mcp.definition('claude-everything')?.env).toEqual({ REGION: 'us-2' });
  }, 60_000);
});
