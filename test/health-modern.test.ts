/**
 * The health plugin against a modern (2026-07-28) server, which has no
 * `ping`: a real v2 server (test/fixtures/mcp/servers/listen-server.mjs)
 * configured with `"protocol": "2026-07-28"` through the real mcp and health
 * plugins. It is checked with `server/discover`, found healthy; killed, it is
 * found down, even though the client still holds fresh cached answers of it
 * (a check never counts a cached answer as a sign of life).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HealthService, McpService } from 'plinth/sdk';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { ensureBuilt } from './support/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'listen-server.mjs');
/** Checks only when a test asks; no restart on its own. */
const HEALTH = { interval: 3_600_000, timeout: 3000, degradedMs: 3000, maxRestarts: 0 };

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

async function boot(server: Record<string, unknown>): Promise<{ mcp: McpService; health: HealthService }> {
  const workspace = await mkdtemp(join(tmpdir(), 'plinth-health-modern-'));
  folders.push(workspace);
  const kernel = await createTestKernel({
    builtin: true,
    workspace,
    settings: { mcpServers: { listen: { ...server, protocol: '2026-07-28' } }, plugins: { 'mcp-demo': { enabled: false }, health: { settings: HEALTH } } },
  });
  kernels.push(kernel);
  return { mcp: await kernel.get('mcp'), health: await kernel.get('health') };
}

describe('health of a modern server', () => {
  it('streamable HTTP: healthy by server/discover; killed, found down although its lists are still cached', async () => {
    const child = spawn(process.execPath, [SERVER, '--http', '--lists-ttl', '60000', '--tools-ttl', '60000'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const { url } = JSON.parse(await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve))) as { url: string };
    const { mcp, health } = await boot({ url, transport: 'http' });
    expect(await mcp.start('listen')).toMatchObject({ state: 'connected', era: 'modern' });
    await mcp.resources('listen');

    expect(await health.check('listen')).toMatchObject({ state: 'healthy', probe: 'server/discover', failures: 0 });

    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // The client would still answer these lists from its cache: the server's ttlMs has not passed.
    expect((await mcp.resources('listen')).map((r) => r.uri)).toContain('listen://config');
    const checked = await health.check('listen');
    expect(checked?.state).not.toBe('healthy');
    expect(checked?.state).not.toBe('degraded');
    expect(checked?.reason).toMatch(/server\/discover|connection/);
  });

  it('stdio: healthy by server/discover; its process killed, it is found down', async () => {
    const { mcp, health } = await boot({ command: process.execPath, args: [SERVER] });
    const status = await mcp.start('listen');
    expect(status).toMatchObject({ state: 'connected', era: 'modern' });
    expect(await health.check('listen')).toMatchObject({ state: 'healthy', probe: 'server/discover' });
    process.kill(status.pid!, 'SIGKILL');
    const deadline = Date.now() + 15_000;
    let state = health.status().find((s) => s.name === 'listen')?.state;
    while ((state === 'healthy' || state === 'degraded') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      state = (await health.check('listen'))?.state ?? health.status().find((s) => s.name === 'listen')?.state;
    }
    expect(state === 'healthy' || state === 'degraded').toBe(false);
  });
});
