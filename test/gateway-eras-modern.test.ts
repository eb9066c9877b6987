/**
 * What a modern (2026-07-28) client gets from `plinth serve` besides the operations
 * (gateway-eras.test.ts): an upstream legacy server's elicitation during its call comes back as
 * `input_required` and the retry answers it (hooks run once), a lost round trip is refused with a
 * code, header mismatches are refused with -32020, `server/discover` carries the gateway's cache
 * hints, `subscriptions/listen` carries list changes and resource updates, and requests that
 * alternate between two gateway processes with the same settings are all served (stateless).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, type Sandbox, cleanEnv, ensureBuilt, sandbox } from './support/cli.js';
import { SERVERS, baseSettings, fixtureStdio, httpGateway, stop, until } from './support/gateway.js';

const TEST_TIMEOUT = 60_000;
const PINNED = { mode: { pin: '2026-07-28' } } as const;
const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

let box: Sandbox;
let calls: string;
let one: Awaited<ReturnType<typeof httpGateway>>;
let two: Awaited<ReturnType<typeof httpGateway>>;
const clients: Client[] = [];
beforeAll(async () => {
  ensureBuilt();
  box = await sandbox('plinth-gateway-modern-');
  // after_tool appends each call it sees: one line per logical call, however many rounds.
  calls = join(box.base, 'calls.jsonl');
  const after = join(box.base, 'after.mjs');
  await writeFile(
    after,
    `import { appendFileSync, readFileSync } from 'node:fs';
const { context } = JSON.parse(readFileSync(0, 'utf8'));
appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ tool: context.tool, ok: context.result.ok }) + '\\n');
process.stdout.write(JSON.stringify({ allow: true }));
`,
  );
  // fx: a legacy server that elicits with a request; feat: a modern one (pinned) that answers input_required.
  const feat = { command: process.execPath, args: [join(SERVERS, 'feat-modern.mjs'), 'stdio'], protocol: '2026-07-28' };
  // Health off: on this branch it checks a modern server with ping, which 2026-07-28 has not (wave3/listen checks it with server/discover).
  await box.settings(baseSettings({ fx: fixtureStdio(), feat }, { hooks: { after_tool: [{ name: 'audit', command: 'node', args: [after] }] }, plugins: { health: { enabled: false } } }));
  // Two processes with the same settings (and the same stored token).
  one = await httpGateway(box);
  two = await httpGateway(box);
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all([one, two].filter(Boolean).map((g) => stop(g.child)));
  await box?.remove();
});

async function modern(wire: 'http' | 'stdio', capabilities: ClientCapabilities = {}, fetcher?: typeof fetch): Promise<Client> {
  const client = new Client({ name: 'modern-host', version: '1.0.0' }, { versionNegotiation: PINNED, capabilities });
  const transport =
    wire === 'http'
      ? new StreamableHTTPClientTransport(new URL(one.url), { requestInit: { headers: { Authorization: `Bearer ${one.token}` } }, ...(fetcher && { fetch: fetcher }) })
      : new StdioClientTransport({ command: process.execPath, args: [BIN, ...box.dirs, 'serve', '--stdio'], cwd: box.workspace, env: cleanEnv({}, { ci: true }) as Record<string, string>, stderr: 'pipe' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A hand-built modern POST to the first gateway: the envelope in `_meta`, the standard headers (overridable). */
async function post(method: string, params: Record<string, unknown>, headers: Record<string, string> = {}, url = one.url): Promise<{ status: number; body: { result?: Record<string, unknown>; error?: { code: number; message: string } } }> {
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} }, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' } };
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${one.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      // Mcp-Name mirrors params.name (tools, prompts) or params.uri (resources).
      ...(typeof (params.name ?? params.uri) === 'string' && { 'Mcp-Name': String(params.name ?? params.uri) }),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } }),
  });
  const raw = await response.text();
  const json = raw.startsWith('{') ? raw : (raw.split('\n').find((l) => l.startsWith('data: {')) ?? 'data: {}').slice(6);
  return { status: response.status, body: JSON.parse(json) };
}

const auditOf = async () => (await readFile(calls, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { tool: string; ok: boolean });

for (const wire of ['http', 'stdio'] as const) {
  describe(`a modern client of plinth serve --${wire}`, () => {
    test("a legacy upstream's elicitation during the call comes back as input_required; the retry answers it, and the call's hooks run once", async () => {
      const client = await modern(wire, { elicitation: {} });
      const asked: string[] = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push((request.params as { message: string }).message);
        return { action: 'accept', content: { name: 'Grace', age: 36, colour: 'blue', subscribe: true } };
      });
      const before = (await auditOf()).filter((a) => a.tool === 'fx__ask').length;
      const answer = JSON.parse(text(await client.callTool({ name: 'fx__ask', arguments: { message: `Who are you, over ${wire}?` } })));
      expect(asked).toEqual([`Who are you, over ${wire}?`]);
      expect(answer).toMatchObject({ action: 'accept', content: { name: 'Grace', age: 36, colour: 'blue', subscribe: true } });
      await until('after_tool of the call', async () => (await auditOf()).filter((a) => a.tool === 'fx__ask').length > before);
      expect((await auditOf()).filter((a) => a.tool === 'fx__ask')).toHaveLength(before + 1);
    }, TEST_TIMEOUT);

    test("a modern upstream's input_required is passed through with its requestState untouched (two rounds, byte for byte); after_tool once", async () => {
      const client = await modern(wire, { elicitation: {} });
      const asked: string[] = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        const message = (request.params as { message: string }).message;
        asked.push(message);
        return { action: 'accept', content: { v: message === 'First?' ? `a-${wire}` : 'b' } };
      });
      const before = (await auditOf()).filter((a) => a.tool === 'feat__two_steps').length;
      const result = (await client.callTool({ name: 'feat__two_steps', arguments: {} })) as CallToolResult;
      expect(text(result)).toBe(`steps: a-${wire} then b`);
      expect(asked).toEqual(['First?', 'Second?']);
      await until('after_tool of the call', async () => (await auditOf()).filter((a) => a.tool === 'feat__two_steps').length > before);
      expect((await auditOf()).filter((a) => a.tool === 'feat__two_steps')).toHaveLength(before + 1);
    }, TEST_TIMEOUT);

    test('without elicitation declared, plinth answers as it does alone: declined', async () => {
      const client = await modern(wire);
      const answer = JSON.parse(text(await client.callTool({ name: 'fx__ask', arguments: {} })));
      expect(answer.action).toBe('decline');
    }, TEST_TIMEOUT);

    test('subscriptions/listen carries an upstream list change and a resource update', async () => {
      const client = await modern(wire);
      let toolsChanged = 0;
      const updated: string[] = [];
      client.setNotificationHandler('notifications/tools/list_changed', async () => void toolsChanged++);
      client.setNotificationHandler('notifications/resources/updated', async (n) => void updated.push(n.params.uri));
      const subscription = await client.listen({ toolsListChanged: true, resourceSubscriptions: ['fixture://docs/readme'] });
      expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true, resourceSubscriptions: ['fixture://docs/readme'] });
      // The gateway subscribed upstream for the listener: the fixture says so, and its update arrives.
      await until('the upstream subscription', async () => JSON.parse(text(await client.callTool({ name: 'fx__touch', arguments: { uri: 'fixture://docs/readme' } }))).subscribed === true);
      await until('resources/updated on the listen stream', () => updated.includes('fixture://docs/readme'));
      await client.callTool({ name: 'fx__add_tool', arguments: { name: `added_${wire}` } });
      await until('tools/list_changed on the listen stream', () => toolsChanged > 0);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain(`fx__added_${wire}`);
      await subscription.close();
    }, TEST_TIMEOUT);
  });
}

describe('a modern client of plinth serve --http: other requests of a legacy upstream', () => {
  test('sampling and roots during its call come back as input_required too', async () => {
    const client = await modern('http', { sampling: {}, roots: {} });
    client.setRequestHandler('sampling/createMessage', async () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: 'a summary' } }));
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///downstream/root', name: 'mine' }] }));
    const sampled = JSON.parse(text(await client.callTool({ name: 'fx__sample', arguments: { prompt: 'Summarize' } })));
    expect(sampled).toMatchObject({ model: 'test-model', content: { text: 'a summary' } });
    expect(text(await client.callTool({ name: 'fx__roots', arguments: {} }))).toContain('file:///downstream/root');
  }, TEST_TIMEOUT);
});

describe('a legacy client of plinth serve --http', () => {
  test("a modern upstream's input_required reaches it as an ordinary elicitation request", async () => {
    const client = new Client({ name: 'legacy-host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    await client.connect(new StreamableHTTPClientTransport(new URL(one.url), { requestInit: { headers: { Authorization: `Bearer ${one.token}` } } }));
    clients.push(client);
    expect(client.getProtocolEra()).toBe('legacy');
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push((request.params as { message: string }).message);
      return { action: 'accept', content: { ok: true } };
    });
    // The SDK client fills the form's defaults (note: "none").
    expect(text(await client.callTool({ name: 'feat__confirm', arguments: { what: 'deploy' } }))).toMatch(/^deploy: accept \{"ok":true/);
    expect(asked).toEqual(['Go ahead with deploy?']);
  }, TEST_TIMEOUT);
});

describe('a modern client of plinth serve --http', () => {
  test('server/discover and the lists carry the gateway cache hints: discover public, lists private', async () => {
    const discover = await post('server/discover', {});
    expect(discover.body.result).toMatchObject({ ttlMs: 60_000, cacheScope: 'public', supportedVersions: expect.arrayContaining(['2026-07-28']) });
    const tools = await post('tools/list', {});
    expect(tools.body.result).toMatchObject({ ttlMs: 5_000, cacheScope: 'private' });
    const read = await post('resources/read', { uri: 'fixture://docs/readme' });
    expect(read.body.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
  }, TEST_TIMEOUT);

  test('a header that disagrees with the body is refused with -32020; a lost round trip with PLN_E_GATEWAY_ROUND_TRIP_LOST', async () => {
    const mismatch = await post('tools/call', { name: 'fx__add', arguments: { a: 1, b: 2 } }, { 'Mcp-Name': 'fx__echo' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error?.code).toBe(-32020);
    const method = await post('tools/list', {}, { 'Mcp-Method': 'prompts/list' });
    expect(method.body.error?.code).toBe(-32020);
    // The same request with matching headers is served.
    expect(text((await post('tools/call', { name: 'fx__add', arguments: { a: 1, b: 2 } })).body.result)).toBe('3');

    const lost = await post('tools/call', { name: 'fx__ask', arguments: {}, requestState: 'plinth-gw.elsewhere.0f0f', inputResponses: {} });
    expect(lost.body.error?.code).toBe(-32602);
    expect(lost.body.error?.message).toContain('PLN_E_GATEWAY_ROUND_TRIP_LOST');
  }, TEST_TIMEOUT);

  test("a modern upstream's input_required as sent (its keys, its requestState byte for byte), each round on another gateway process: no affinity", async () => {
    const first = await post('tools/call', { name: 'feat__two_steps', arguments: {} });
    expect(first.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { first: { method: 'elicitation/create' } } });
    expect(first.body.result!.requestState).toBeUndefined();
    const second = await post('tools/call', { name: 'feat__two_steps', arguments: {}, inputResponses: { first: { action: 'accept', content: { v: 'x' } } } }, {}, two.url);
    expect(second.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { second: { method: 'elicitation/create' } } });
    const state = second.body.result!.requestState as string;
    expect(state).toBe('état "1" \\ ✓ +/= \nx');
    const done = await post('tools/call', { name: 'feat__two_steps', arguments: {}, inputResponses: { second: { action: 'accept', content: { v: 'y' } } }, requestState: state });
    expect(text(done.body.result)).toBe('steps: x then y');
  }, TEST_TIMEOUT);

  test('stateless: a client whose requests alternate between two gateway processes lists and calls through both', async () => {
    const urls = [one.url, two.url];
    const served: string[] = [];
    let next = 0;
    const alternate: typeof fetch = (input, init) => {
      const url = urls[next++ % 2]!;
      served.push(url);
      return fetch(url, init);
    };
    const client = await modern('http', {}, alternate);
    for (let i = 0; i < 3; i++) {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('fx__add');
      expect(text(await client.callTool({ name: 'fx__add', arguments: { a: i, b: 1 } }))).toBe(String(i + 1));
    }
    expect(new Set(served)).toEqual(new Set(urls));
  }, TEST_TIMEOUT);
});
