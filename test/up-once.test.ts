/**
 * `plinth up --once` as a command, with real stdio servers
 * (test/fixtures/mcp/servers/stdio-server.mjs): the status waits for each
 * server's first connection attempt and no longer (a server that failed once
 * is shown `starting` with its error, not waited for through its retries and
 * their backoff), and says where the time went: the whole time since plinth
 * started and the MCP section's share (`timings` with --json, a `Status in`
 * line on a terminal). No timing is asserted: only that the figures are there
 * and add up.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt, expectExit, json, run, sandbox, type Sandbox } from './support/cli.js';

const SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const TIMEOUT = 120_000;

const boxes: Sandbox[] = [];
beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function home(): Promise<Sandbox> {
  const box = await sandbox('plinth-up-once-');
  boxes.push(box);
  await box.settings({
    mcpServers: {
      good: { command: process.execPath, args: [SERVER] },
      // Exits at start: a connection failure, retried (3 retries, 1 s, 2 s, 4 s of backoff by default).
      flaky: { command: process.execPath, args: [SERVER, '--exit-at-start', '1'] },
    },
    plugins: { 'mcp-demo': { enabled: false } },
  });
  return box;
}

interface Timings {
  wallMs: number;
  startMs: number;
  bootMs: number;
  serveMs: number;
  statusMs: number;
  sections: Record<string, number>;
}

describe('plinth up --once', () => {
  it('shows each server after its first attempt: the good one connected, the failing one starting with its error, not retried first', async () => {
    const box = await home();
    const result = await run(box, ['up', '--once', '--json']);
    expectExit(result, 0);
    const body = json<{ durationMs: number; timings: Timings; mcpServers: Array<{ name: string; state: string; attempts: number; error?: { code: string } }> }>(result);
    const byName = new Map(body.mcpServers.map((s) => [s.name, s]));
    expect(byName.get('good')).toMatchObject({ state: 'connected' });
    // One attempt made; the status did not wait for the next three.
    expect(byName.get('flaky')).toMatchObject({ state: 'starting', attempts: 1, error: { code: 'PLN_E_MCP_CONNECT_FAILED' } });

    const t = body.timings;
    expect(t.bootMs).toBe(body.durationMs);
    expect(Object.keys(t.sections)).toContain('mcpServers');
    for (const value of [t.wallMs, t.startMs, t.bootMs, t.serveMs, t.statusMs, ...Object.values(t.sections)]) expect(value).toBeGreaterThanOrEqual(0);
    // The whole time covers its parts (rounded to 0.1 ms each).
    expect(t.wallMs + 0.5).toBeGreaterThanOrEqual(t.startMs + t.bootMs + t.serveMs + t.statusMs);
    const sectionsTotal = Object.values(t.sections).reduce((sum, ms) => sum + ms, 0);
    expect(sectionsTotal).toBeLessThanOrEqual(t.statusMs + 0.5);
  }, TIMEOUT);

  it('on a terminal: the table says why the failing server is still starting, and one line says where the time went', async () => {
    const box = await home();
    const result = await run(box, ['up', '--once']);
    expectExit(result, 0);
    expect(result.stdout).toMatch(/^good\s+stdio\s.*\sconnected\s/m);
    expect(result.stdout).toMatch(/^flaky\s+stdio\s.*\sstarting\s.*PLN_E_MCP_CONNECT_FAILED/m);
    expect(result.stdout).toMatch(/^Status in [\d.]+ ms since plinth started: start [\d.]+ ms, boot [\d.]+ ms, .*waiting for MCP servers [\d.]+ ms \(\d+%\)/m);
  }, TIMEOUT);
});
