/**
 * `maxSessions` cannot be used up by a client that opens sessions and leaves
 * them: when the limit is reached, the session idle the longest ends to make
 * room (its client gets 404), and a new session is refused (503) only while
 * every open session is busy with a request. The built `plinth serve --http`
 * with `maxSessions: 2`, raw HTTP sessions, the stdio fixture server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Sandbox, ensureBuilt, sandbox } from './support/cli.js';
import { baseSettings, fixtureStdio, httpGateway, stop } from './support/gateway.js';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

let box: Sandbox;
let gw: Awaited<ReturnType<typeof httpGateway>>;

beforeAll(async () => {
  ensureBuilt();
  box = await sandbox('plinth-gateway-limit-');
  await box.settings(baseSettings({ fx: fixtureStdio() }, { plugins: { gateway: { settings: { maxSessions: 2 } } } }));
  gw = await httpGateway(box);
}, 120_000);

afterAll(async () => {
  if (gw) await stop(gw.child);
  await box?.remove();
});

function post(body: unknown, session?: string): Promise<Response> {
  return fetch(gw.url, {
    method: 'POST',
    headers: { ...HEADERS, Authorization: `Bearer ${gw.token}`, ...(session !== undefined && { 'mcp-session-id': session }) },
    body: JSON.stringify(body),
  });
}

/** A new session (initialize and initialized): its id, or the refusal. */
async function open(): Promise<{ id?: string; status: number; text: string }> {
  const response = await post(INIT);
  const text = await response.text();
  const id = response.headers.get('mcp-session-id') ?? undefined;
  if (id !== undefined) await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, id).then((r) => r.body?.cancel());
  return { ...(id !== undefined && { id }), status: response.status, text };
}

/** tools/list in a session: the HTTP status. */
async function list(id: string): Promise<number> {
  const response = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, id);
  await response.text();
  return response.status;
}

describe('maxSessions', () => {
  test('full: the session idle the longest makes room; refused only while every session is busy', async () => {
    const first = await open();
    const second = await open();
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(await list(second.id!)).toBe(200); // the second was active since: the first is idle the longest

    const third = await open();
    expect(third.status).toBe(200);
    expect(await list(first.id!)).toBe(404); // ended for the third
    expect(await list(second.id!)).toBe(200);
    expect(gw.stderr().match(/ended, idle for \d+ ms, to make room/g)).toHaveLength(1);

    // Both sessions busy: a call each, held until a third call of the same tool arrives.
    const held = [second.id!, third.id!].map((id, i) =>
      post({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'fx__ask_together', arguments: { message: 'hold', together: 3 } } }, id),
    );
    const responses = await Promise.all(held);
    const refused = await open();
    expect(refused.status).toBe(503);
    expect(refused.text).toContain('PLN_E_GATEWAY_SESSION_LIMIT');

    // The third call releases them; once their answers are over, a new session gets room again.
    const release = await post({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'fx__ask_together', arguments: { message: 'go', together: 3 } } }, second.id!);
    await Promise.all([...responses, release].map((r) => r.text()));
    const later = await open();
    expect(later.status).toBe(200);
    expect(gw.stderr().match(/ended, idle for \d+ ms, to make room/g)).toHaveLength(2);
  }, 30_000);
});
