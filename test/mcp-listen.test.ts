/**
 * subscriptions/listen on a modern (2026-07-28) connection: real v2 servers
 * (test/fixtures/mcp/servers/listen-server.mjs) over stdio and streamable
 * HTTP, each connected by an SDK `Client` pinned to 2026-07-28, prepared and
 * attached exactly as the mcp core does. A tools list_changed reaches the
 * registry's onListChanged and the list; a resource update reaches its
 * subscriber, carried by the stream's filter; an HTTP server restarted behind
 * the same URL gets the stream re-opened. The server counts what reaches it
 * (its `hits` tool), which tells a re-listen from none.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { attachFeatures, createToolRegistry, prepareClient, type FeatureDeps, type ServerFeatures, type ToolRegistry } from '../plugins/mcp/features/index.js';
import type { McpServerDefinition } from 'plinth/sdk';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = fileURLToPath(new URL('./fixtures/mcp/servers/listen-server.mjs', import.meta.url));

const logs: string[] = [];
const log = {
  debug: (m: string) => void logs.push(`debug ${m}`),
  info: (m: string) => void logs.push(`info ${m}`),
  warn: (m: string) => void logs.push(`warn ${m}`),
  error: (m: string) => void logs.push(`error ${m}`),
};
const clients: Client[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  logs.length = 0;
});

function definition(name: string, overrides: Partial<McpServerDefinition> = {}): McpServerDefinition {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [SERVER],
    env: {},
    cwd: ROOT,
    headers: {},
    connectTimeoutMs: 10_000,
    enabled: true,
    source: 'builtin',
    origin: 'test',
    secrets: [],
    ...overrides,
  };
}

interface Attached {
  readonly client: Client;
  readonly features: ServerFeatures;
  readonly registry: ToolRegistry;
}

/** Prepare, connect pinned to 2026-07-28, attach: what the core does with a `protocol: "2026-07-28"` server. */
async function attach(def: McpServerDefinition, transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Attached> {
  const registry = createToolRegistry({ log });
  const deps: FeatureDeps = {
    registry,
    emit: async (_event, context) => ({ allow: true, messages: [], systemMessages: [], context }),
    getService: async () => undefined,
    log,
    workspace: ROOT,
    callTimeoutMs: 10_000,
    terminal: null,
  };
  const client = new Client({ name: 'plinth-test', version: '0.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  clients.push(client);
  prepareClient(client, def, deps);
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe('modern');
  const features = await attachFeatures(client, def, deps);
  return { client, features, registry };
}

function stdio(args: readonly string[] = []): { def: McpServerDefinition; transport: StdioClientTransport } {
  const def = definition('listen', { args: [SERVER, ...args] });
  return { def, transport: new StdioClientTransport({ command: process.execPath, args: [...def.args], cwd: ROOT, stderr: 'pipe' }) };
}

/** The fixture over HTTP on 127.0.0.1; `port` to come back on the same one. */
async function httpServer(args: readonly string[] = [], port = 0): Promise<{ url: string; port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [SERVER, '--http', '--port', String(port), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the listen fixture exited with ${code}`)));
  });
  const { url, port: bound } = JSON.parse(line) as { url: string; port: number };
  return { url, port: bound, child };
}

async function hits(client: Client): Promise<Record<string, number>> {
  const result = await client.callTool({ name: 'hits', arguments: {} });
  return JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as Record<string, number>;
}

/** Resolves with the first change of `list` for `server` from now on. */
function listChange(registry: ToolRegistry, server: string, list: 'tools' | 'resources' | 'prompts'): Promise<void> {
  return new Promise((resolve) => {
    const off = registry.onListChanged((change) => {
      if (change.server === server && change.list === list) {
        off();
        resolve();
      }
    });
  });
}

/** Resolves once `check` holds (polled; the test's own timeout bounds it). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
}

describe.each([
  ['stdio', async () => stdio()],
  ['streamable HTTP', async () => {
    const server = await httpServer();
    return { def: definition('listen', { transport: 'http', url: server.url, command: undefined, args: [] }), transport: new StreamableHTTPClientTransport(new URL(server.url)) };
  }],
] as const)('subscriptions/listen over %s', (_wire, make) => {
  it('a tools list_changed on the stream reaches onListChanged, and the tool list follows', async () => {
    const { def, transport } = await make();
    const { client, features, registry } = await attach(def, transport);
    expect((await hits(client))['subscriptions/listen']).toBe(1);
    expect(registry.get('listen__fresh')).toBeUndefined();
    const changed = listChange(registry, 'listen', 'tools');
    await features.callTool('add_tool', { name: 'fresh' });
    await changed;
    expect(registry.get('listen__fresh')).toMatchObject({ server: 'listen', tool: 'fresh' });
    expect((await registry.callTool('listen__fresh', {})).text).toBe('fresh ran');
  });

  it('a resource subscription joins the stream\'s filter, its update reaches the subscriber, and the last disposer takes it out', async () => {
    const { def, transport } = await make();
    const { client, registry } = await attach(def, transport);
    const updates: string[] = [];
    const off = await registry.subscribe('listen', 'listen://config', () => void updates.push('config'));
    // A second stream with the URI in its filter replaced the first; resources/subscribe does not exist on this wire.
    expect(await hits(client)).toMatchObject({ 'subscriptions/listen': 2 });
    expect((await hits(client))['resources/subscribe']).toBeUndefined();
    await client.callTool({ name: 'touch', arguments: { uri: 'listen://config' } });
    await until(() => updates.length === 1);
    expect((await registry.readResource('listen', 'listen://config')).text).toContain('config v2');
    off();
    await until(async () => (await hits(client))['subscriptions/listen'] === 3);
  });
});

describe('the change stream across a restart', () => {
  it('an HTTP server restarted behind the same URL: the dropped stream is re-opened, a later change still arrives', async () => {
    const first = await httpServer(['--read-ttl', '60000']);
    const def = definition('listen', { transport: 'http', url: first.url, command: undefined, args: [] });
    const { client, features, registry } = await attach(def, new StreamableHTTPClientTransport(new URL(first.url)));
    const updates: string[] = [];
    await registry.subscribe('listen', 'listen://config', () => void updates.push('config'));
    // Cached for a minute: after the gap it must be fetched again, not served from the cache.
    expect((await registry.readResource('listen', 'listen://config')).text).toContain('config v1');
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    await httpServer(['--read-ttl', '60000', '--config-version', '5'], first.port);
    // The new process has seen nothing yet; the client re-listens on its own, with the URI still in the filter.
    await until(async () => ((await hits(client).catch(() => ({}) as Record<string, number>))['subscriptions/listen'] ?? 0) >= 1);
    // After the gap, subscribers are told (something may have changed while nobody listened).
    await until(() => updates.length >= 1);
    expect((await registry.readResource('listen', 'listen://config')).text).toContain('config v5');
    const seen = updates.length;
    const changed = listChange(registry, 'listen', 'tools');
    await features.callTool('add_tool', { name: 'after_restart' });
    await changed;
    await until(() => registry.get('listen__after_restart') !== undefined);
    await client.callTool({ name: 'touch', arguments: { uri: 'listen://config' } });
    await until(() => updates.length === seen + 1);
  });
});
