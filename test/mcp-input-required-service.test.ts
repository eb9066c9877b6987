/**
 * The `mcp` service's hand-back of a 2026-07-28 `input_required` round (what
 * the gateway uses to pass an upstream's round trip to its own client): a
 * real kernel with the builtin mcp plugin, a dual-era v2 server
 * (test/fixtures/mcp/servers/feat-modern.mjs) configured with
 * `"protocol": "2026-07-28"`, and a plugin counting before_tool/after_tool.
 * The caller gets the server's requests and its requestState untouched, sends
 * the answers back, and the hooks run once for the logical call. The same
 * server with `"protocol": "legacy"` keeps answering the round itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpService } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { FEAT_FIXTURE } from './support/feat-modern.js';

const ODD_STATE = 'état "1" \\ ✓ +/= \n';
const hooks = { before: 0, after: 0, afterResults: [] as unknown[] };
let kernel: TestKernel;
let mcp: McpService;
let web: ChildProcess;

beforeAll(async () => {
  web = spawn(process.execPath, [FEAT_FIXTURE, 'http'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const port = await new Promise<number>((resolve) => web.stdout!.once('data', (d) => resolve(JSON.parse(String(d)).port)));
  kernel = await createTestKernel({
    builtin: true,
    plugins: [
      {
        manifest: { name: 'counter' },
        setup(k) {
          k.on('before_tool', (context) => {
            if (String(context.tool).endsWith('__two_steps')) hooks.before += 1;
          });
          k.on('after_tool', (context) => {
            if (!String(context.tool).endsWith('__two_steps')) return;
            hooks.after += 1;
            hooks.afterResults.push(context.result);
          });
        },
      },
    ],
    settings: {
      mcpServers: {
        modern: { command: process.execPath, args: [FEAT_FIXTURE, 'stdio'], protocol: '2026-07-28' },
        old: { command: process.execPath, args: [FEAT_FIXTURE, 'stdio'], protocol: 'legacy' },
        web: { url: `http://127.0.0.1:${port}/mcp`, protocol: '2026-07-28' },
      },
      plugins: { 'mcp-demo': { enabled: false }, mcp: { settings: { retryBaseMs: 20 } } },
    },
  });
  mcp = await kernel.get('mcp');
  kernel.provide('mcp:elicitation', async (request) => ({ action: 'accept', content: { v: request.message.startsWith('First') ? 'host-1' : 'host-2' } }));
  const started = await Promise.all([mcp.start('modern'), mcp.start('old'), mcp.start('web')]);
  expect(started.map((s) => [s.state, s.era])).toEqual([
    ['connected', 'modern'],
    ['connected', 'legacy'],
    ['connected', 'modern'],
  ]);
}, 30_000);

afterAll(async () => {
  await kernel?.dispose();
  web?.kill();
});

describe('mcp.callTool with inputRequired "return" (2026-07-28 server)', () => {
  it('hands each round back with the server requests and requestState untouched; the answers sent back finish the call; hooks once', async () => {
    const first = await mcp.callTool('modern__two_steps', {}, { inputRequired: 'return' });
    expect(first.ok).toBe(true);
    expect(first.inputRequired?.inputRequests).toEqual({
      first: { method: 'elicitation/create', params: { mode: 'form', message: 'First?', requestedSchema: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] } } },
    });
    const second = await mcp.callTool('modern__two_steps', {}, { inputRequired: 'return', inputResponses: { first: { action: 'accept', content: { v: 'down-1' } } } });
    expect(second.inputRequired?.requestState).toBe(`${ODD_STATE}down-1`);
    expect(Object.keys(second.inputRequired!.inputRequests)).toEqual(['second']);
    const done = await mcp.callTool('modern__two_steps', {}, { inputRequired: 'return', inputResponses: { second: { action: 'accept', content: { v: 'down-2' } } }, requestState: second.inputRequired!.requestState! });
    expect(done).toMatchObject({ ok: true, isError: false, text: 'steps: down-1 then down-2' });
    expect(done.inputRequired).toBeUndefined();
    expect(hooks.before).toBe(1);
    expect(hooks.after).toBe(1);
    expect(hooks.afterResults[0]).toMatchObject({ ok: true, text: 'steps: down-1 then down-2' });
  });

  it('without "return" the service answers the rounds itself through the host', async () => {
    const result = await mcp.callTool('modern__two_steps', {});
    expect(result.text).toBe('steps: host-1 then host-2');
  });

  it('a 2025 connection to the same server: the rounds arrive as requests and are answered by the host, "return" or not', async () => {
    const result = await mcp.callTool('old__two_steps', {}, { inputRequired: 'return' });
    expect(result.inputRequired).toBeUndefined();
    expect(result.text).toBe('steps: host-1 then host-2');
  });
});

describe('a 2026-07-28 server over streamable HTTP, through the service', () => {
  it('hand-back over HTTP; the call carries Mcp-Param-Region; the invalid x-mcp-header tool is not listed; trace context and log level reach the server', async () => {
    const first = await mcp.callTool('web__confirm', { what: 'ship' }, { inputRequired: 'return' });
    expect(Object.keys(first.inputRequired!.inputRequests)).toEqual(['ok']);
    const done = await mcp.callTool('web__confirm', { what: 'ship' }, { inputResponses: { ok: { action: 'decline' } } });
    expect(done.text).toBe('ship: decline');

    expect((await mcp.callTool('web__region', { region: 'ap-south-1', query: 'q' })).text).toBe('q in ap-south-1');
    const seen = JSON.parse((await mcp.callTool('web__seen', {})).text) as { headers: Array<Record<string, string | null>> };
    expect(seen.headers.filter((h) => h.tool === 'region')).toEqual([{ method: 'tools/call', name: 'region', region: 'ap-south-1', tool: 'region' }]);
    const names = mcp.tools().filter((t) => t.server === 'web').map((t) => t.tool);
    expect(names).toContain('region');
    expect(names).not.toContain('bad_header');
    expect(kernel.logs.some((line) => line.includes('PLN_E_MCP_TOOL_HEADER_INVALID') && line.includes('"web"') && line.includes('"bad_header"'))).toBe(true);

    const traceparent = '00-11111111111111111111111111111111-2222222222222222-01';
    const traced = JSON.parse((await mcp.callTool('web__trace', {}, { traceparent, logLevel: 'debug' })).text);
    expect(traced).toEqual({ traceparent, tracestate: null, logLevel: 'debug' });
  });
});
