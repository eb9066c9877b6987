/**
 * The gateway in a kernel that changes while it serves: a plugin that brings
 * an MCP server is disabled, enabled and removed through the kernel's live
 * lifecycle, and a connected downstream client (the SDK's, over streamable
 * HTTP) hears `list_changed` each time and sees the tools come and go.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { collectServers } from '../plugins/mcp/definitions.js';
import { serverTrustSubject } from '../plugins/mcp/trust-subject.js';
import { type Gateway, type GatewayHttpEndpoint, type PluginInfo, parseManifest } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { SERVERS, httpClient, until } from './support/gateway.js';
import { writePlugin } from './support/plugin-folder.js';

let kernel: TestKernel;
let gateway: Gateway;
let endpoint: GatewayHttpEndpoint;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'plinth-gateway-live-'));
  const dir = await writePlugin(folder, {
    name: 'live-tools',
    mcpServers: { live: { command: process.execPath, args: [join(SERVERS, 'stdio-server.mjs'), '--name', 'live'] } },
  });
  kernel = await createTestKernel({
    builtin: true,
    settings: {
      plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } },
      mcpServers: { base: { command: process.execPath, args: [join(SERVERS, 'stdio-server.mjs'), '--name', 'base'] } },
    },
  });
  // An extension's server needs approval: given as `plinth trust approve` would.
  const parsed = parseManifest(JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')));
  if (!parsed.ok) throw new Error('invalid manifest');
  const info: PluginInfo = { name: 'live-tools', version: '1.0.0', source: 'user', dir, manifest: parsed.manifest };
  const { servers } = collectServers({ layers: [], plugins: [info], manifests: [info], config: {}, env: {}, home: kernel.home, workspace: kernel.workspace, connectTimeoutMs: 10_000 });
  const trust = await kernel.get('trust');
  for (const record of servers) await trust.approve(serverTrustSubject(record, (text) => text));
  await kernel.plugins.add(dir);

  gateway = await (await kernel.get('gateway')).create();
  await kernel.serve();
  await gateway.ready();
  endpoint = await gateway.serveHttp({ host: '127.0.0.1', port: 0 });
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await kernel?.dispose();
  await rm(folder, { recursive: true, force: true });
});

test('a plugin disabled, enabled and removed while serving: list_changed each time, its tools go and come back', async () => {
  const { client } = await httpClient(endpoint.url, (await readFile(endpoint.token.from, 'utf8')).trim());
  let toolChanges = 0;
  let promptChanges = 0;
  client.setNotificationHandler('notifications/tools/list_changed', () => void toolChanges++);
  client.setNotificationHandler('notifications/prompts/list_changed', () => void promptChanges++);
  const names = async () => (await client.listTools()).tools.map((t) => t.name);
  await until('both servers to be served', async () => (await names()).includes('live__echo') && (await names()).includes('base__echo'));

  expect(await kernel.plugins.disable('live-tools')).toMatchObject({ removed: ['live-tools'] });
  await until('tools/list_changed after the disable', () => toolChanges >= 1);
  await until('live__echo to go', async () => !(await names()).includes('live__echo'));
  expect(await names()).toContain('base__echo');
  expect(promptChanges).toBeGreaterThanOrEqual(1);
  const gone = await client.callTool({ name: 'live__echo', arguments: { text: 'x' } });
  expect(gone.isError).toBe(true);

  const seen = toolChanges;
  expect(await kernel.plugins.enable('live-tools')).toMatchObject({ added: ['live-tools'] });
  await until('tools/list_changed after the enable', () => toolChanges > seen);
  await until('live__echo back', async () => (await names()).includes('live__echo'), 30_000);
  const back = await client.callTool({ name: 'live__echo', arguments: { text: 'back' } });
  expect(back.content).toEqual([{ type: 'text', text: 'back' }]);

  const before = toolChanges;
  await kernel.plugins.remove('live-tools');
  await until('tools/list_changed after the removal', () => toolChanges > before);
  expect(await names()).not.toContain('live__echo');
  await client.close();
}, 120_000);

test('an upstream tools/list_changed reaches the downstream client', async () => {
  const { client } = await httpClient(endpoint.url, (await readFile(endpoint.token.from, 'utf8')).trim());
  let changes = 0;
  client.setNotificationHandler('notifications/tools/list_changed', () => void changes++);
  await client.callTool({ name: 'base__add_tool', arguments: { name: 'fresh' } });
  await until('list_changed for the new tool', () => changes >= 1);
  await until('base__fresh to be listed', async () => (await client.listTools()).tools.some((t) => t.name === 'base__fresh'));
  const called = await client.callTool({ name: 'base__fresh', arguments: { text: 'hi' } });
  expect(JSON.stringify(called.content)).toContain('fresh');
  await client.close();
}, 60_000);
