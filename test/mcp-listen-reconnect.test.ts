/**
 * subscriptions/listen through the real mcp plugin: a v2 server
 * (test/fixtures/mcp/servers/listen-server.mjs) configured with
 * `"protocol": "2026-07-28"`, over stdio and streamable HTTP. The mcp
 * service's onListChanged and resource subscriptions keep their contract on
 * the modern wire, and after the server restarts (a new process, a new
 * connection) the stream is opened again and a new change still arrives.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { McpService } from 'plinth/sdk';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { ensureBuilt } from './support/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'listen-server.mjs');
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

const kernels: TestKernel[] = [];
const children: ChildProcess[] = [];
const folders: string[] = [];
const savedCI = process.env.CI;

beforeAll(() => {
  ensureBuilt();
  process.env.CI = '1';
}, 300_000);

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function boot(server: Record<string, unknown>): Promise<McpService> {
  const workspace = await mkdtemp(join(tmpdir(), 'plinth-mcp-listen-'));
  folders.push(workspace);
  const kernel = await createTestKernel({ builtin: true, workspace, settings: { mcpServers: { listen: { ...server, protocol: '2026-07-28' } }, plugins: QUIET } });
  kernels.push(kernel);
  return kernel.get('mcp');
}

async function httpServer(port = 0): Promise<{ url: string; port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [SERVER, '--http', '--port', String(port)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the listen fixture exited with ${code}`)));
  });
  return { ...(JSON.parse(line) as { url: string; port: number }), child };
}

function listChange(mcp: McpService, list: 'tools' | 'resources' | 'prompts'): Promise<void> {
  return new Promise((resolve) => {
    const off = mcp.onListChanged!((change) => {
      if (change.server === 'listen' && change.list === list) {
        off();
        resolve();
      }
    });
  });
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
}

async function call(mcp: McpService, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await mcp.callTool(`listen__${tool}`, args);
  expect(result.ok, result.text).toBe(true);
  return result.text;
}

/** Adds a tool on the server; resolves once the mcp service announced it and lists it. */
async function addTool(mcp: McpService, name: string): Promise<void> {
  const changed = listChange(mcp, 'tools');
  await call(mcp, 'add_tool', { name });
  await changed;
  await until(() => mcp.tools().some((t) => t.name === `listen__${name}`));
}

describe.each([
  ['stdio', async () => ({ server: { command: process.execPath, args: [SERVER] }, restart: async (mcp: McpService) => mcp.restart('listen') })],
  [
    'streamable HTTP',
    async () => {
      let current = await httpServer();
      return {
        server: { url: current.url, transport: 'http' },
        // The process dies and comes back on the same port; the mcp service reconnects.
        restart: async (mcp: McpService) => {
          current.child.kill('SIGKILL');
          await new Promise((resolve) => current.child.once('exit', resolve));
          current = await httpServer(current.port);
          return mcp.restart('listen');
        },
      };
    },
  ],
] as const)('the mcp service on a modern server over %s', (_wire, make) => {
  it('onListChanged, the tool list and a resource subscription work through subscriptions/listen, and again after a restart', async () => {
    const { server, restart } = await make();
    const mcp = await boot(server);
    const status = await mcp.start('listen');
    expect(status).toMatchObject({ state: 'connected', era: 'modern', protocolVersion: '2026-07-28' });

    await addTool(mcp, 'first');
    expect(await call(mcp, 'first')).toBe('first ran');
    const updates: number[] = [];
    await mcp.subscribe('listen', 'listen://config', () => void updates.push(Date.now()));
    await call(mcp, 'touch', { uri: 'listen://config' });
    await until(() => updates.length === 1);
    const before = JSON.parse(await call(mcp, 'hits')) as Record<string, number>;
    expect(before['resources/subscribe']).toBeUndefined();
    expect(before['subscriptions/listen']).toBeGreaterThanOrEqual(2);

    expect(await restart(mcp)).toMatchObject({ state: 'connected', era: 'modern' });
    // A new connection opened its own stream: a change made now is delivered.
    await addTool(mcp, 'second');
    expect(await call(mcp, 'second')).toBe('second ran');
    const after = JSON.parse(await call(mcp, 'hits')) as Record<string, number>;
    expect(after['subscriptions/listen']).toBeGreaterThanOrEqual(1);
  });
});
