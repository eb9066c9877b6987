/**
 * The `auto` transport (a `url` without `transport`) against real HTTP
 * servers on 127.0.0.1: a server that refuses the streamable HTTP
 * `initialize` with a JSON-RPC error (-32022 unsupported protocol version,
 * -32020 header mismatch, -32601 no `initialize`, as servers of the stateless
 * 2026-07-28 revision answer) is reported with that error, coded, and SSE is
 * never tried; a bare 404/405 (a 2024-11-05 HTTP+SSE server) is still the
 * one answer that leads to SSE, and when SSE fails too both are named.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { McpService } from 'plinth/sdk';
import { createTestKernel, type TestKernel } from '../testing/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const HTTP_SERVER = join(root, 'test', 'fixtures', 'mcp', 'servers', 'http-server.mjs');
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

const kernels: TestKernel[] = [];
const folders: string[] = [];
let modern: { server: Server; base: string; requests: string[] } | undefined;
let fixture: { child: ChildProcess; base: string } | undefined;

/** What each path of the "modern" server answers a POST with: HTTP status and JSON-RPC error. */
const REFUSALS: Record<string, { status: number; code: number; message: string; data?: unknown }> = {
  '/v2026': { status: 400, code: -32022, message: 'Unsupported protocol version: 2025-11-25', data: { supported: ['2026-07-28'], requested: '2025-11-25' } },
  '/headers': { status: 400, code: -32020, message: 'Header mismatch: Mcp-Method does not match the body' },
  '/stateless': { status: 404, code: -32601, message: 'Method not found: initialize' },
  '/plain200': { status: 200, code: -32601, message: 'Method not found' },
};

function answer(req: IncomingMessage, res: ServerResponse, requests: string[]): void {
  requests.push(`${req.method} ${req.url}`);
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const refusal = REFUSALS[req.url ?? ''];
    if (req.method === 'POST' && refusal) {
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { id?: unknown }).id ?? null;
      const { status, code, message, data } = refusal;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined && { data }) } }));
      return;
    }
    // Neither protocol: a POST is not allowed, and there is no SSE stream either.
    if (req.url === '/neither') res.writeHead(req.method === 'POST' ? 405 : 404).end();
    else res.writeHead(405, { allow: 'POST' }).end();
  });
}

beforeAll(async () => {
  const requests: string[] = [];
  const server = createServer((req, res) => answer(req, res, requests));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  modern = { server, base: `http://127.0.0.1:${port}`, requests };

  const child = spawn(process.execPath, [HTTP_SERVER, '--port', '0', '--name', 'old-sse'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited with ${code}`)));
  });
  fixture = { child, base: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}` };
});

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

afterAll(async () => {
  await new Promise((resolve) => modern?.server.close(resolve));
  fixture?.child.kill('SIGTERM');
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function boot(mcpServers: Record<string, unknown>): Promise<McpService> {
  const workspace = await mkdtemp(join(tmpdir(), 'plinth-auto-'));
  folders.push(workspace);
  const kernel = await createTestKernel({ builtin: true, workspace, settings: { mcpServers, plugins: QUIET } });
  kernels.push(kernel);
  return kernel.get('mcp');
}

describe('auto: the HTTP attempt is reported', () => {
  it('-32022 (a server of a newer revision only): PLN_E_MCP_PROTOCOL_UNSUPPORTED with its message and the revisions it serves; SSE never tried', async () => {
    const mcp = await boot({ newer: { url: `${modern!.base}/v2026` } });
    const before = modern!.requests.length;
    const status = await mcp.start('newer', { retries: 0 });
    expect(status.state).toBe('error');
    expect(status.error?.code).toBe('PLN_E_MCP_PROTOCOL_UNSUPPORTED');
    expect(status.error?.message).toContain('-32022');
    expect(status.error?.message).toContain('Unsupported protocol version: 2025-11-25');
    expect(status.error?.message).toContain('2026-07-28');
    expect(status.error?.message).not.toMatch(/Non-200|SSE error/);
    // POSTs only (with protocol `auto`: the server/discover probe, then `initialize`): SSE's GET never came.
    expect(new Set(modern!.requests.slice(before))).toEqual(new Set(['POST /v2026']));
  });

  it('-32020 (header mismatch): PLN_E_MCP_CONNECT_FAILED saying so, not SSE\'s 405', async () => {
    const mcp = await boot({ headers: { url: `${modern!.base}/headers` } });
    const before = modern!.requests.length;
    const status = await mcp.start('headers', { retries: 0 });
    expect(status.error?.code).toBe('PLN_E_MCP_CONNECT_FAILED');
    expect(status.error?.message).toContain('-32020');
    expect(status.error?.message).toContain('Header mismatch');
    expect(status.error?.message).not.toMatch(/Non-200|SSE error/);
    // POSTs only (with protocol `auto`: the server/discover probe, then `initialize`): SSE's GET never came.
    expect(new Set(modern!.requests.slice(before))).toEqual(new Set(['POST /headers']));
  });

  it('-32601 for initialize, with a 404 or a 200: the server has no initialize, PLN_E_MCP_PROTOCOL_UNSUPPORTED', async () => {
    const mcp = await boot({ stateless: { url: `${modern!.base}/stateless` }, plain: { url: `${modern!.base}/plain200` } });
    const before = modern!.requests.length;
    for (const name of ['stateless', 'plain']) {
      const status = await mcp.start(name, { retries: 0 });
      expect(status.error?.code).toBe('PLN_E_MCP_PROTOCOL_UNSUPPORTED');
      expect(status.error?.message).toContain('-32601');
    }
    expect(modern!.requests.slice(before).filter((r) => r.startsWith('GET'))).toEqual([]);
  });

  it('a bare 405 from a 2024-11-05 server still leads to SSE, which connects', async () => {
    const mcp = await boot({ old: { url: `${fixture!.base}/sse` } });
    expect(await mcp.start('old', { retries: 0 })).toMatchObject({ state: 'connected', transport: 'sse', serverInfo: { name: 'old-sse' } });
  });

  it('a bare 405 and no SSE either: both answers are named, the HTTP one first', async () => {
    const mcp = await boot({ neither: { url: `${modern!.base}/neither` } });
    const status = await mcp.start('neither', { retries: 0 });
    expect(status.error?.code).toBe('PLN_E_MCP_CONNECT_FAILED');
    expect(status.error?.message).toMatch(/streamable HTTP answered HTTP 405.*HTTP\+SSE transport failed too.*404/);
  });
});
