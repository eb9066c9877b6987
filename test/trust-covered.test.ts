/**
 * What `plinth ext install` approves covers what the plugin declares: the
 * install shows every hook and MCP server of the plugin, so they run without
 * a second approval each (through an update too) while the installed folder is
 * as approved. A folder changed on disk covers nothing, and a guard hook then
 * blocks, naming the fix; a plugin folder dropped into plugins/ by hand gets
 * no such cover (a first-use pin shows nothing).
 */
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { McpService } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { type FixturePlugin, servedRegistry, writePlugin } from './support/market.js';
import { bwrapHere } from './support/sandbox.js';

// A downloaded plugin's hook always runs confined: without bubblewrap it cannot run at all (the sandbox tests say so).
const here = bwrapHere();
if (!here.ok) console.warn(`installed hooks running on the install's approval: SKIPPED: ${here.why}`);

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-covered-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A guard that blocks every tool: a real child process speaking the hook protocol. */
const AUDIT = `let input = ''; process.stdin.on('data', (d) => (input += d)); process.stdin.on('end', () => process.stdout.write(JSON.stringify({ allow: false, message: 'audit says no' })));\n`;
const guarded = (version: string): FixturePlugin => ({
  name: 'guarded',
  version,
  hooks: { before_tool: [{ name: 'audit', command: 'node', args: ['audit.js'] }] },
  mcpServers: { files: { command: 'node', args: ['./server.js'] } },
  files: { 'audit.js': AUDIT, 'server.js': '// an MCP server would be here\n' },
});

async function host(url?: string): Promise<TestKernel> {
  const kernel = await createTestKernel({ builtin: true, settings: { ...(url && { registries: [{ name: 'local', url }] }), plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } } });
  closers.push(() => kernel.dispose());
  return kernel;
}

async function beforeTool(kernel: TestKernel) {
  const result = (await kernel.emit('before_tool', { tool: 'write_file', args: { path: 'x' } } as never)) as unknown as { allow: boolean; blockedBy?: { reason: string }; messages?: string[] };
  return { allow: result.allow, reason: result.blockedBy?.reason ?? result.messages?.join('\n'), messages: result.messages };
}

async function trustFile(kernel: TestKernel): Promise<{ approvals: Array<{ kind: string; id: string; how: string }> }> {
  return JSON.parse(await readFile(join(kernel.home, 'trust.json'), 'utf8'));
}

describe('hooks and servers of an installed plugin', () => {
  it.runIf(here.ok)('run on the approval of the install (confined, from their version folder), and still do after an update', async () => {
    const { server, publish } = await servedRegistry(base, [guarded('1.0.0')]);
    closers.push(() => server.close());
    const kernel = await host(server.url);
    const market = await kernel.get('marketplace');
    const mcp = (await kernel.get('mcp')) as McpService;
    await market.install('guarded', { yes: true });

    // The hook ran (a real process) and blocked: it was not skipped as unapproved.
    expect(await beforeTool(kernel)).toMatchObject({ allow: false, reason: expect.stringContaining('audit says no') });
    await expect(mcp.ensureTrusted('files')).resolves.toBeUndefined();
    // Covered, not recorded: only the plugin's own approval is in the store.
    expect((await trustFile(kernel)).approvals.map((a) => `${a.kind} ${a.id} ${a.how}`)).toEqual(['plugin guarded approved']);

    await publish(guarded('1.1.0'));
    await market.update(['guarded']);
    expect(kernel.status().find((p) => p.name === 'guarded')).toMatchObject({ version: '1.1.0', state: 'active' });
    expect(await beforeTool(kernel)).toMatchObject({ allow: false, reason: expect.stringContaining('audit says no') });
    await expect(mcp.ensureTrusted('files')).resolves.toBeUndefined();
  });

  it.runIf(here.ok)('a declared stdio server (a real SDK server) starts confined on the approval of the install and answers', async () => {
    // The plugin's server is the repository's SDK fixture server, which the plugin declares it reads.
    const root = fileURLToPath(new URL('..', import.meta.url));
    const fixture = join(root, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
    const serving: FixturePlugin = { ...guarded('1.0.0'), files: { 'audit.js': AUDIT, 'server.js': `await import(${JSON.stringify(fixture)});\n` } };
    const { server } = await servedRegistry(base, [{ ...serving, permissions: { filesystem: { read: [root] } } } ]);
    closers.push(() => server.close());
    const kernel = await host(server.url);
    const market = await kernel.get('marketplace');
    await market.install('guarded', { yes: true });
    // Its declared permissions granted as `plinth perms grant guarded` would.
    await mkdir(join(kernel.home, 'sandbox'), { recursive: true });
    await writeFile(join(kernel.home, 'sandbox', 'grants.json'), JSON.stringify({ grantsVersion: 1, plugins: { guarded: { version: '1.0.0', permissions: { filesystem: { read: [root] } }, source: 'downloaded', grantedAt: new Date().toISOString() } } }));

    const mcp = (await kernel.get('mcp')) as McpService;
    const status = await mcp.start('files');
    expect(status, JSON.stringify(status)).toMatchObject({ state: 'connected' });
    const client = mcp.client('files')!;
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('a hook script changed on disk after the install is not covered: the guard blocks and says how to restore it', async () => {
    const { server } = await servedRegistry(base, [guarded('1.0.0')]);
    closers.push(() => server.close());
    const kernel = await host(server.url);
    const market = await kernel.get('marketplace');
    const mcp = (await kernel.get('mcp')) as McpService;
    await market.install('guarded', { yes: true });
    await appendFile(join(kernel.home, 'plugins', '.versions', 'guarded@1.0.0', 'audit.js'), '// changed\n');

    const result = await beforeTool(kernel);
    expect(result.allow).toBe(false);
    expect(result.reason).not.toContain('audit says no'); // it did not run
    expect(result.reason).toContain('installed plugin "guarded", whose folder changed since it was approved');
    expect(result.reason).toContain('plinth ext install --force guarded@1.0.0');
    const refused = await rejection(mcp.ensureTrusted('files'));
    expect(refused.code).toBe('PLN_E_MCP_UNTRUSTED');
    expect(refused.message).toContain('plinth ext verify guarded');
  });

  it('a plugin folder put into plugins/ by hand is pinned, not approved: its hooks still need their own approval', async () => {
    const kernel = await host();
    await writePlugin(join(kernel.home, 'plugins'), guarded('1.0.0'));
    await kernel.plugins.rescan();
    expect(kernel.status().find((p) => p.name === 'guarded')).toMatchObject({ source: 'user', state: 'active' });

    const result = await beforeTool(kernel);
    expect(result.allow).toBe(true);
    expect(result.messages?.join('\n')).toContain('Hook "guarded/audit" did not run: extension hook "guarded/audit" has not been approved');
    expect((await rejection(((await kernel.get('mcp')) as McpService).ensureTrusted('files'))).code).toBe('PLN_E_MCP_UNTRUSTED');
  });
});
