/**
 * The `protocol` setting (per server, and the mcp plugin's default) against
 * real servers built with the SDK (test/fixtures/mcp/servers/era-server.mjs):
 * a modern-only v2 server (`legacy: 'reject'`), over stdio and streamable HTTP,
 * reached with a pinned "2026-07-28" lists and calls its tools and says so in
 * its status; with "legacy" it fails with a coded error that names the setting
 * to change; a pin a legacy server cannot honour fails coded; a value plinth
 * does not know is refused where it is written.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { McpService } from 'plinth/sdk';
import { createTestKernel, type TestKernel } from '../testing/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const ERA_SERVER = join(root, 'test', 'fixtures', 'mcp', 'servers', 'era-server.mjs');
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

const kernels: TestKernel[] = [];
const folders: string[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function boot(mcpServers: Record<string, unknown>, mcp: Record<string, unknown> = {}): Promise<{ mcp: McpService; kernel: TestKernel }> {
  const workspace = await mkdtemp(join(tmpdir(), 'plinth-eras-'));
  folders.push(workspace);
  const kernel = await createTestKernel({ builtin: true, workspace, settings: { mcpServers, plugins: { ...QUIET, mcp: { settings: mcp } } } });
  kernels.push(kernel);
  return { mcp: await kernel.get('mcp'), kernel };
}

const stdio = (era: string, extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [ERA_SERVER, '--era', era], ...extra });

/** An era server over streamable HTTP, in its own process; its URL. */
async function httpServer(era: string): Promise<string> {
  const child = spawn(process.execPath, [ERA_SERVER, '--era', era, '--http'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the era server exited with ${code}`)));
  });
  return (JSON.parse(line) as { url: string }).url;
}

describe('protocol: pinned, legacy, and what a mismatch says', () => {
  it('a modern-only stdio server, pinned to 2026-07-28: tools listed and called, era and revision in the status', async () => {
    const { mcp } = await boot({ modern: stdio('modern', { protocol: '2026-07-28' }) });
    const status = await mcp.start('modern', { retries: 0 });
    expect(status).toMatchObject({ state: 'connected', era: 'modern', protocolVersion: '2026-07-28' });
    expect(mcp.tools().map((tool) => tool.name)).toEqual(['modern__echo']);
    const result = await mcp.callTool('modern__echo', { text: 'hi' });
    expect(result).toMatchObject({ ok: true, text: 'modern: hi' });
  });

  it('the same server with "legacy" (the plugin default): PLN_E_MCP_PROTOCOL_UNSUPPORTED naming the setting to change', async () => {
    const { mcp } = await boot({ modern: stdio('modern') }, { protocol: 'legacy' });
    const status = await mcp.start('modern', { retries: 0 });
    expect(status.state).toBe('error');
    expect(status.error?.code).toBe('PLN_E_MCP_PROTOCOL_UNSUPPORTED');
    expect(status.error?.message).toContain('-32022');
    expect(status.error?.message).toContain('plugins.mcp.settings.protocol');
    expect(status.error?.message).toContain('"protocol": "auto"');
  });

  it('over streamable HTTP: pinned connects, legacy is refused with the code and the entry named', async () => {
    const url = await httpServer('modern');
    const { mcp } = await boot({ pinned: { url, protocol: '2026-07-28' }, old: { url, protocol: 'legacy' } }, { protocol: 'auto' });
    expect(await mcp.start('pinned', { retries: 0 })).toMatchObject({ state: 'connected', era: 'modern', protocolVersion: '2026-07-28', transport: 'http' });
    expect(await mcp.callTool('pinned__echo', { text: 'x' })).toMatchObject({ ok: true, text: 'modern: x' });
    const old = await mcp.start('old', { retries: 0 });
    expect(old.error?.code).toBe('PLN_E_MCP_PROTOCOL_UNSUPPORTED');
    expect(old.error?.message).toContain('"protocol" in its mcpServers entry');
  });

  it('a legacy (v1) server pinned to 2026-07-28: PLN_E_MCP_PROTOCOL_MISMATCH, the pin and where it is written named', async () => {
    const { mcp } = await boot({ old: stdio('legacy', { protocol: '2026-07-28' }) });
    const status = await mcp.start('old', { retries: 0 });
    expect(status.error?.code).toBe('PLN_E_MCP_PROTOCOL_MISMATCH');
    expect(status.error?.message).toContain('does not offer MCP 2026-07-28');
    expect(status.error?.message).toContain('mcpServers entry');
    expect(status.error?.hint).toContain('"protocol": "auto"');
  });

  it('a legacy server in legacy mode: era legacy, 2025-11-25', async () => {
    const { mcp } = await boot({ old: stdio('legacy', { protocol: 'legacy' }) });
    expect(await mcp.start('old', { retries: 0 })).toMatchObject({ state: 'connected', era: 'legacy', protocolVersion: '2025-11-25' });
  });

  it('a value plinth does not know: the entry is refused where it is written (PLN_E_MCP_SERVER_INVALID), the plugin setting with PLN_E_SETTING_INVALID', async () => {
    const { mcp } = await boot({ bad: stdio('modern', { protocol: '2025-06-18' }), worse: stdio('modern', { protocol: 'newest' }) });
    const problems = mcp.problems?.() ?? [];
    expect(problems.map((p) => p.code)).toEqual(['PLN_E_MCP_SERVER_INVALID', 'PLN_E_MCP_SERVER_INVALID']);
    expect(problems[0]!.message).toContain('2025-06-18 is not a modern revision');
    expect(problems[1]!.message).toContain('expected "auto", "legacy" or a modern revision to pin ("2026-07-28")');
    await expect(boot({}, { protocol: '2024-01-01' })).rejects.toMatchObject({ cause: { code: 'PLN_E_SETTING_INVALID' } });
  });
});

/** Everything the era server serves, through the mcp service; the era it answered from. */
async function exercise(mcp: McpService, name: string, era: string): Promise<void> {
  expect(await mcp.callTool(`${name}__echo`, { text: 'hi' })).toMatchObject({ ok: true, text: `${era}: hi` });
  expect((await mcp.resources(name)).map((r) => r.uri)).toEqual(['era://info']);
  expect((await mcp.readResource(name, 'era://info')).text).toContain(era);
  expect((await mcp.resourceTemplates(name)).map((t) => t.uriTemplate)).toEqual(['era://items/{id}']);
  expect((await mcp.readResource(name, 'era://items/banana')).text).toContain('item banana');
  expect((await mcp.getPrompt(name, 'greet', { name: 'Grace' })).text).toContain(`Hello Grace (${era})`);
  expect(await mcp.complete(name, { type: 'prompt', name: 'greet' }, { name: 'name', value: 'G' })).toEqual(['Grace']);
  expect(await mcp.complete(name, { type: 'resource', uri: 'era://items/{id}' }, { name: 'id', value: 'b' })).toEqual(['banana']);
}

/** What each server era gives in each mode: the era reached, or the code of the refusal. */
const MATRIX: Array<[string, string, string]> = [
  ['modern', 'auto', 'modern'],
  ['modern', 'legacy', 'PLN_E_MCP_PROTOCOL_UNSUPPORTED'],
  ['modern', '2026-07-28', 'modern'],
  ['dual', 'auto', 'modern'],
  ['dual', 'legacy', 'legacy'],
  ['dual', '2026-07-28', 'modern'],
  ['legacy', 'auto', 'legacy'],
  ['legacy', 'legacy', 'legacy'],
  ['legacy', '2026-07-28', 'PLN_E_MCP_PROTOCOL_MISMATCH'],
];

describe.each(['stdio', 'http'])('every era in every mode, over %s', (wire) => {
  const urls = new Map<string, string>();
  const where = async (era: string) => {
    if (wire === 'stdio') return stdio(era);
    if (!urls.has(era)) urls.set(era, await httpServer(era));
    return { url: urls.get(era)! };
  };
  it.each(MATRIX)('a %s server in %s mode: %s', async (era, protocol, expected) => {
    const { mcp } = await boot({ s: { ...(await where(era)), protocol } });
    const status = await mcp.start('s', { retries: 0 });
    if (expected.startsWith('PLN_E_')) {
      expect(status.state).toBe('error');
      expect(status.error?.code).toBe(expected);
      expect(status.error?.message).toContain('"protocol"');
      return;
    }
    expect(status).toMatchObject({ state: 'connected', era: expected, protocolVersion: expected === 'modern' ? '2026-07-28' : '2025-11-25' });
    await exercise(mcp, 's', era);
  });
});

describe('a header mismatch (-32020)', () => {
  it('plinth cannot send one (the SDK derives Mcp-Method from the body); the server\'s -32020 to a request altered on the way is reported with its code', async () => {
    const upstream = new URL(await httpServer('modern'));
    // A proxy that says `Mcp-Method: tools/list` for every `tools/call`, as a broken intermediary would.
    const proxy = createServer((req, res) => {
      const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: upstream.host };
      if (headers['mcp-method'] === 'tools/call') headers['mcp-method'] = 'tools/list';
      const out = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(out);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = proxy.address() as { port: number };
      const { mcp } = await boot({ s: { url: `http://127.0.0.1:${port}/mcp`, protocol: '2026-07-28' } });
      expect(await mcp.start('s', { retries: 0 })).toMatchObject({ state: 'connected', era: 'modern' });
      const result = await mcp.callTool('s__echo', { text: 'x' });
      expect(result.ok).toBe(false);
      expect(result.error?.code).toMatch(/^PLN_E_MCP_/);
      expect(result.error?.message).toContain('-32020');
    } finally {
      // The server's subscriptions/listen stream is a long-lived request through the proxy: end it, or close waits for it.
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
