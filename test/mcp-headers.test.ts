/**
 * MCP 2026-07-28 over streamable HTTP: a tool call carries `Mcp-Method`,
 * `Mcp-Name` and the `Mcp-Param-*` header of each `x-mcp-header` parameter
 * (the server checks them and refuses a call without: -32020), and a tool
 * whose annotation breaks the rules is left out with a coded warning naming
 * the server and the tool. A real dual-era v2 server
 * (test/fixtures/mcp/servers/feat-modern.mjs) that records the headers of
 * every tools/call it gets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { connectFeat, type FeatConnection } from './support/feat-modern.js';

const logs: string[] = [];
const log = { debug: (m: string) => void logs.push(`debug ${m}`), info: (m: string) => void logs.push(`info ${m}`), warn: (m: string) => void logs.push(`warn ${m}`), error: (m: string) => void logs.push(`error ${m}`) };
let kernel: TestKernel;
const open: FeatConnection[] = [];

async function connect(name: string, wire: 'stdio' | 'http'): Promise<FeatConnection> {
  const connection = await connectFeat(name, wire, 'modern', { emit: (event, context) => kernel.emit(event, context), getService: async () => undefined, log });
  open.push(connection);
  return connection;
}

beforeAll(async () => {
  kernel = await createTestKernel({ plugins: [] });
}, 30_000);

afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
  await kernel?.dispose();
});

describe('x-mcp-header over streamable HTTP (2026-07-28)', () => {
  let http: FeatConnection;
  beforeAll(async () => {
    http = await connect('web', 'http');
  }, 20_000);

  it('the server refuses a call whose x-mcp-header parameter comes without its header (the check the client must meet is real)', async () => {
    const response = await fetch(`http://127.0.0.1:${http.port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'region' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'region', arguments: { region: 'eu', query: 'q' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
      }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('-32020');
  });

  it('a call sends Mcp-Method, Mcp-Name and Mcp-Param-Region (once per call), and the server accepts it', async () => {
    const result = await http.registry.callTool('web__region', { region: 'eu-west-1', query: 'select 1' });
    expect(result).toMatchObject({ ok: true, isError: false, text: 'select 1 in eu-west-1' });
    const seen = JSON.parse((await http.registry.callTool('web__seen', {})).text) as { headers: Array<Record<string, string | null>> };
    // The raw request of the test above had no Mcp-Param-Region; plinth's call had it, once.
    expect(seen.headers.filter((h) => h.tool === 'region' && h.region !== null)).toEqual([{ method: 'tools/call', name: 'region', region: 'eu-west-1', tool: 'region' }]);
    // Every call names its method and tool, with or without parameters in headers.
    expect(seen.headers.every((h) => h.method === 'tools/call' && h.name === h.tool)).toBe(true);
  });

  it('a server that refuses the headers (-32020: its tool gained an x-mcp-header since it was listed): listed again, the call retried once with Mcp-Param-Slot, hooks once', async () => {
    let before = 0;
    const off = kernel.on('before_tool', (context) => void (context.tool === 'web__late_header' && (before += 1)));
    try {
      expect(http.registry.listed('web__late_header')).toMatchObject({ inputSchema: { properties: { slot: { type: 'string' } } } });
      const result = await http.registry.callTool('web__late_header', { slot: 'b7' });
      expect(result).toMatchObject({ ok: true, text: 'slot b7' });
      expect(before).toBe(1);
      const seen = JSON.parse((await http.registry.callTool('web__seen', {})).text) as { headers: Array<Record<string, string | null>> };
      expect(seen.headers.filter((h) => h.tool === 'late_header').map((h) => h.slot)).toEqual([null, 'b7']);
      expect(http.registry.listed('web__late_header')).toMatchObject({ inputSchema: { properties: { slot: { 'x-mcp-header': 'Slot' } } } });
    } finally {
      off();
    }
  });

  it('a tool with an invalid x-mcp-header (on a number parameter) is left out with PLN_E_MCP_TOOL_HEADER_INVALID naming server and tool; the others stay', () => {
    const names = http.registry.tools().map((t) => t.tool);
    expect(names).not.toContain('bad_header');
    expect(names).toEqual(expect.arrayContaining(['region', 'confirm', 'trace']));
    const warnings = logs.filter((line) => line.includes('PLN_E_MCP_TOOL_HEADER_INVALID'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('MCP server "web" lists tool "bad_header"');
    expect(warnings[0]).toContain('"size" of type "number"');
  });
});

describe('over stdio (no HTTP headers: the annotations may be ignored)', () => {
  it('the tool with the invalid annotation stays callable, and the annotated one works', async () => {
    const stdio = await connect('local', 'stdio');
    expect(stdio.registry.tools().map((t) => t.tool)).toContain('bad_header');
    expect((await stdio.registry.callTool('local__bad_header', { size: 3 })).text).toBe('size 3');
    expect((await stdio.registry.callTool('local__region', { region: 'us', query: 'q' })).text).toBe('q in us');
    expect(logs.filter((line) => line.includes('PLN_E_MCP_TOOL_HEADER_INVALID') && line.includes('"local"'))).toEqual([]);
  });
});
