/**
 * Cache hints (ttlMs, cacheScope) on a modern server, through plinth's
 * client: a v2 server (test/fixtures/mcp/servers/listen-server.mjs) over
 * streamable HTTP that counts every request reaching it (its `hits` tool).
 * Through the mcp service: a list and a read inside their ttlMs are answered
 * without a request, a short-lived one is fetched again after it, a
 * tools/list_changed invalidates the cached list, and the store outlives a
 * reconnection. With plinth's cache options: two authorization contexts
 * never see each other's private answers, and share the public ones.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerDefinition, McpService } from 'plinth/sdk';
import { createResponseCaches } from '../plugins/mcp/features/cache.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { ensureBuilt } from './support/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'listen-server.mjs');
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false } };
const HINTS = ['--tools-ttl', '60000', '--lists-ttl', '60000', '--read-ttl', '60000', '--public-ttl', '60000', '--short-ttl', '200'];

const kernels: TestKernel[] = [];
const children: ChildProcess[] = [];
const clients: Client[] = [];
const folders: string[] = [];
const savedCI = process.env.CI;

beforeAll(() => {
  ensureBuilt();
  process.env.CI = '1';
}, 300_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function httpServer(args: readonly string[]): Promise<{ url: string }> {
  const child = spawn(process.execPath, [SERVER, '--http', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the listen fixture exited with ${code}`)));
  });
  return JSON.parse(line) as { url: string };
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
}

describe('cache hints through the mcp service', () => {
  async function boot(): Promise<McpService> {
    const { url } = await httpServer(HINTS);
    const workspace = await mkdtemp(join(tmpdir(), 'plinth-mcp-cache-'));
    folders.push(workspace);
    const kernel = await createTestKernel({
      builtin: true,
      workspace,
      settings: { mcpServers: { listen: { url, transport: 'http', protocol: '2026-07-28', headers: { Authorization: 'Bearer alice' } } }, plugins: QUIET },
    });
    kernels.push(kernel);
    const mcp: McpService = await kernel.get('mcp');
    expect(await mcp.start('listen')).toMatchObject({ state: 'connected', era: 'modern' });
    return mcp;
  }
  const hits = async (mcp: McpService): Promise<Record<string, number>> => {
    const result = await mcp.callTool('listen__hits', {});
    return JSON.parse(result.text) as Record<string, number>;
  };

  it('a list and a read inside their ttlMs are answered without a request; a short-lived read is fetched again after its ttlMs', async () => {
    const mcp = await boot();
    const first = await mcp.resources('listen');
    expect(first.map((r) => r.uri)).toContain('listen://config');
    expect(await mcp.resources('listen')).toEqual(first);
    expect((await mcp.readResource('listen', 'listen://public')).text).toContain('the same for everyone');
    expect((await mcp.readResource('listen', 'listen://public')).text).toContain('the same for everyone');
    expect(await hits(mcp)).toMatchObject({ 'resources/list': 1, 'resources/read': 1 });

    await mcp.readResource('listen', 'listen://short');
    const before = (await hits(mcp))['resources/read']!;
    await new Promise((resolve) => setTimeout(resolve, 300)); // past its 200 ms
    await mcp.readResource('listen', 'listen://short');
    expect((await hits(mcp))['resources/read']).toBe(before + 1);
  });

  it('a tools/list_changed invalidates the cached tool list: the new list is fetched and the registry follows', async () => {
    const mcp = await boot();
    expect((await hits(mcp))['tools/list']).toBe(1);
    await mcp.callTool('listen__add_tool', { name: 'late' });
    await until(() => mcp.tools().some((t) => t.name === 'listen__late'));
    expect((await hits(mcp))['tools/list']).toBe(2);
  });

  it('the cache outlives a reconnection: fresh answers stand, the server is not asked again', async () => {
    const mcp = await boot();
    await mcp.readResource('listen', 'listen://public');
    await mcp.readResource('listen', 'listen://whoami');
    const before = await hits(mcp);
    expect(before).toMatchObject({ 'tools/list': 1, 'resources/read': 2 });
    expect(await mcp.restart('listen')).toMatchObject({ state: 'connected', era: 'modern' });
    expect(mcp.tools().map((t) => t.name)).toContain('listen__echo');
    expect((await mcp.readResource('listen', 'listen://public')).text).toContain('the same for everyone');
    // Private, but the same credentials: the same authorization context.
    expect((await mcp.readResource('listen', 'listen://whoami')).text).toContain('caller alice');
    // The tool list is read again, as sent (a 2026-07-28 list is read uncached so that tools with invalid x-mcp-header annotations are named).
    expect(await hits(mcp)).toMatchObject({ 'tools/list': 2, 'resources/read': 2 });
  });
});

describe('private answers per authorization context', () => {
  it('two credentials for one server share its public answers and never each other\'s private ones', async () => {
    const { url } = await httpServer(HINTS);
    const caches = createResponseCaches();
    const definitionFor = (token: string): McpServerDefinition => ({
      name: 'listen',
      transport: 'http',
      url,
      args: [],
      env: {},
      cwd: ROOT,
      headers: { Authorization: `Bearer ${token}` },
      connectTimeoutMs: 10_000,
      enabled: true,
      source: 'user',
      origin: 'test',
      secrets: [],
    });
    const connect = async (token: string): Promise<Client> => {
      const definition = definitionFor(token);
      const options = await caches.options(definition);
      expect(options.cachePartition).not.toContain(token);
      const client = new Client({ name: 'plinth-test', version: '0.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, ...options });
      clients.push(client);
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { ...definition.headers } } }));
      return client;
    };
    const read = async (client: Client, uri: string) => ((await client.readResource({ uri })).contents[0] as { text: string }).text;
    const hits = async (client: Client) => JSON.parse(((await client.callTool({ name: 'hits', arguments: {} })).content as Array<{ text: string }>)[0]!.text) as Record<string, number>;

    const alice = await connect('alice');
    const bob = await connect('bob');
    expect(await read(alice, 'listen://whoami')).toBe('caller alice');
    expect(await read(alice, 'listen://whoami')).toBe('caller alice');
    expect(await read(bob, 'listen://whoami')).toBe('caller bob');
    expect((await hits(alice))['resources/read']).toBe(2);

    expect(await read(alice, 'listen://public')).toBe('the same for everyone');
    expect(await read(bob, 'listen://public')).toBe('the same for everyone');
    expect((await hits(bob))['resources/read']).toBe(3);

    // A later connection with alice's credentials finds her private answer; one with new credentials does not.
    const aliceAgain = await connect('alice');
    expect(await read(aliceAgain, 'listen://whoami')).toBe('caller alice');
    const carol = await connect('carol');
    expect(await read(carol, 'listen://whoami')).toBe('caller carol');
    expect((await hits(carol))['resources/read']).toBe(4);
  });
});
