/**
 * The conformance harness's own server (test/conformance/everything-server.mjs), the
 * baseline and the gateway's upstream in `npm run conformance`, kept honest without the
 * suite (which needs a download): the SDK v2 `Client` in legacy and pinned-2026 modes
 * reaches it over HTTP, lists the fixtures the scenarios call, and gets each era's way of
 * asking the client for input — a server→client elicitation on the 2025 session, an
 * `input_required` round trip (sealed requestState, refused when tampered with) on 2026, where
 * the 2025 scenarios' tools ask through `input_required` too.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, ClientOptions } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT } from './support/cli.js';
import { listening, stop } from './support/gateway.js';

const SERVER = join(ROOT, 'test', 'conformance', 'everything-server.mjs');
const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

let server: Awaited<ReturnType<typeof listening>>;
beforeAll(async () => {
  server = await listening([SERVER, '--port', '0']);
});
afterAll(async () => {
  if (server) await stop(server.child);
});

async function connect(versionNegotiation: ClientOptions['versionNegotiation']): Promise<Client> {
  const client = new Client({ name: 'fixture-check', version: '1.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation });
  client.setRequestHandler('elicitation/create', async (request) => ({
    action: 'accept',
    content: (request.params.message === 'What is your name?' ? { name: 'Ada' } : { response: 'yes' }) as Record<string, string>,
  }));
  await client.connect(new StreamableHTTPClientTransport(new URL(String(server.info.url))));
  return client;
}

describe('the conformance everything server', () => {
  test('2025-11-25: a session with the fixtures, and an elicitation sent to the client along a call', async () => {
    const client = await connect({ mode: 'legacy' });
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['test_simple_text', 'test_image_content', 'test_elicitation', 'test_reconnection', 'json_schema_2020_12_tool']));
      expect((await client.readResource({ uri: 'test://template/7/data' })).contents[0]).toMatchObject({ text: expect.stringContaining('"id":"7"') });
      expect(text(await client.callTool({ name: 'test_elicitation', arguments: { message: 'ok?' } }))).toBe('User response: action=accept, content={"response":"yes"}');
    } finally {
      await client.close();
    }
  });

  test('2026-07-28: stateless, an input_required round trip, and sealed requestState', async () => {
    const client = await connect({ mode: { pin: '2026-07-28' } });
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(text(await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }))).toBe('Hello, Ada!');
      // The 2025 scenarios' tools ask through input_required on a 2026 request (what a gateway with a modern upstream sees).
      expect(text(await client.callTool({ name: 'test_elicitation', arguments: { message: 'ok?' } }))).toBe('User response: action=accept, content={"response":"yes"}');
      // A retry whose requestState was not minted by the server is refused before the tool runs.
      const forged = await fetch(String(server.info.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'test_input_required_result_tampered_state' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'test_input_required_result_tampered_state',
            arguments: {},
            requestState: 'forged',
            inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} }, 'io.modelcontextprotocol/clientInfo': { name: 'forger', version: '1.0.0' } },
          },
        }),
      });
      expect(JSON.stringify(await forged.json())).toContain('-32602');
    } finally {
      await client.close();
    }
  });
});
