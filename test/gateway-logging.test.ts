/**
 * Logging through `plinth serve --http` (the built CLI), with real SDK clients
 * downstream and the real HTTP fixture server upstream: the gateway declares
 * `logging`, answers `logging/setLevel`, and forwards an upstream's
 * `notifications/message` to the session whose call it came along with, or,
 * when it belongs to no call, to every session that set a level it reaches.
 * And its HTTP front: each SSE stream opens with a priming event (an id and
 * `retry:`), and a GET with `Last-Event-ID` replays what came after it.
 */
import type { Client, LoggingMessageNotification } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Sandbox, ensureBuilt, sandbox } from './support/cli.js';
import { baseSettings, httpClient, httpFixture, httpGateway, stop, until } from './support/gateway.js';

let upstream: Awaited<ReturnType<typeof httpFixture>>;
let box: Sandbox;
let gw: Awaited<ReturnType<typeof httpGateway>>;
const clients: Client[] = [];

beforeAll(async () => {
  ensureBuilt();
  upstream = await httpFixture();
  box = await sandbox('plinth-gateway-logging-');
  await box.settings(baseSettings({ web: { url: upstream.url } }));
  gw = await httpGateway(box);
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  if (gw) await stop(gw.child);
  await upstream?.close();
  await box?.remove();
});

/** A downstream client and the log messages it receives. */
async function listener(): Promise<{ client: Client; messages: LoggingMessageNotification['params'][] }> {
  const { client } = await httpClient(gw.url, gw.token);
  clients.push(client);
  const messages: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler('notifications/message', (n) => void messages.push(n.params));
  return { client, messages };
}

const data = (messages: ReadonlyArray<{ data: unknown }>) => messages.map((m) => m.data);

describe('logging through the gateway', () => {
  test('declares logging, answers setLevel, and routes each upstream message to the session it belongs to', async () => {
    const a = await listener();
    const b = await listener();
    const quiet = await listener();
    expect(a.client.getServerCapabilities()?.logging).toBeDefined();
    await until('the upstream to connect', async () => (await a.client.listTools()).tools.some((t) => t.name === 'web__log'));
    await a.client.setLoggingLevel('info');
    await b.client.setLoggingLevel('debug');

    // Along A's call: A only, on that call's stream, before its result.
    await a.client.callTool({ name: 'web__log', arguments: { message: 'for a', level: 'info' } });
    expect(a.messages).toContainEqual({ level: 'info', logger: 'web/fixture', data: 'for a' });
    // Below A's level: not even along its own call.
    await a.client.callTool({ name: 'web__log', arguments: { message: 'a debug line', level: 'debug' } });
    expect(data(a.messages)).not.toContain('a debug line');

    // Of no call (the upstream's standalone stream): every session that set a level.
    await b.client.callTool({ name: 'web__broadcast', arguments: { count: 2, prefix: 'to all' } });
    await until('both sessions to get the broadcast', () => data(a.messages).includes('to all 2') && data(b.messages).includes('to all 2'), 10_000);
    expect(data(b.messages)).not.toContain('for a');
    expect(data(quiet.messages)).toEqual([]);
  });
});

describe('the HTTP front', () => {
  test('opens each SSE stream with a priming event (id, retry) and replays what a client missed after Last-Event-ID', async () => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${gw.token}` };
    const init = await fetch(gw.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    const first = await init.text();
    expect(first).toMatch(/^id: \S+\nretry: \d+\ndata: \n\n/);
    const session = init.headers.get('mcp-session-id')!;
    const withSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    await fetch(gw.url, { method: 'POST', headers: withSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) }).then((r) => r.body?.cancel());

    const call = await fetch(gw.url, { method: 'POST', headers: withSession, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }) });
    const stream = await call.text();
    const priming = /^id: (\S+)\nretry: \d+\n/.exec(stream)?.[1];
    expect(priming).toBeDefined();
    expect(stream).toContain('"id":2');

    // The client lost that stream right after the priming event: the answer comes again.
    const replay = await fetch(gw.url, { method: 'GET', headers: { ...withSession, 'last-event-id': priming! } });
    expect(replay.status).toBe(200);
    const reader = replay.body!.getReader();
    let replayed = '';
    while (!replayed.includes('"id":2')) {
      const { value, done } = await reader.read();
      if (done) break;
      replayed += new TextDecoder().decode(value);
    }
    await reader.cancel();
    expect(replayed).toContain('"tools"');
  });
});
