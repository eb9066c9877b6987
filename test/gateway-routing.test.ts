/**
 * Requests an upstream server sends (elicitation, sampling) reach the
 * downstream session whose call they belong to, never another one: the built
 * `plinth serve --http` with real SDK clients, a streamable HTTP upstream (it
 * sends its requests along the call, so their origin is known) and a stdio
 * upstream (it cannot say, so two sessions calling it at once get a refusal,
 * not each other's prompts). Each client answers with its own name.
 */
import type { Client, CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Sandbox, ensureBuilt, sandbox } from './support/cli.js';
import { baseSettings, fixtureStdio, httpClient, httpFixture, httpGateway, stop } from './support/gateway.js';

const TEST_TIMEOUT = 30_000;
const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

let upstream: Awaited<ReturnType<typeof httpFixture>>;
let box: Sandbox;
let gw: Awaited<ReturnType<typeof httpGateway>>;

beforeAll(async () => {
  ensureBuilt();
  upstream = await httpFixture();
  box = await sandbox('plinth-gateway-routing-');
  await box.settings(baseSettings({ fx: fixtureStdio(), web: { url: upstream.url } }));
  gw = await httpGateway(box);
}, 120_000);

afterAll(async () => {
  if (gw) await stop(gw.child);
  await upstream?.close();
  await box?.remove();
});

/** A session that answers every elicitation and sampling request with its own name, and records the messages it was asked. */
async function host(name: string): Promise<{ client: Client; asked: string[] }> {
  const { client } = await httpClient(gw.url, gw.token, { elicitation: {}, sampling: {} });
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { name } };
  });
  client.setRequestHandler('sampling/createMessage', async (request) => {
    asked.push(String((request.params.messages[0]!.content as { text: string }).text));
    return { role: 'assistant', model: name, content: { type: 'text', text: `sampled by ${name}` } };
  });
  return { client, asked };
}

describe('server requests reach the session whose call they belong to', () => {
  test('streamable HTTP upstream: two sessions calling at once each get their own elicitation and give their own answer', async () => {
    const [ada, bob] = await Promise.all([host('ada'), host('bob')]);
    const [forAda, forBob] = await Promise.all([
      ada.client.callTool({ name: 'web__ask_together', arguments: { message: 'question of ada' } }),
      bob.client.callTool({ name: 'web__ask_together', arguments: { message: 'question of bob' } }),
    ]);
    expect(JSON.parse(text(forAda))).toEqual({ action: 'accept', content: { name: 'ada' } });
    expect(JSON.parse(text(forBob))).toEqual({ action: 'accept', content: { name: 'bob' } });
    expect(ada.asked).toEqual(['question of ada']);
    expect(bob.asked).toEqual(['question of bob']);
    await Promise.all([ada.client.close(), bob.client.close()]);
  }, TEST_TIMEOUT);

  test('streamable HTTP upstream: sampling too', async () => {
    const [ada, bob] = await Promise.all([host('ada'), host('bob')]);
    const [forAda, forBob] = await Promise.all([
      ada.client.callTool({ name: 'web__ask_together', arguments: { message: 'sample for ada', sample: true } }),
      bob.client.callTool({ name: 'web__ask_together', arguments: { message: 'sample for bob', sample: true } }),
    ]);
    expect(JSON.parse(text(forAda))).toMatchObject({ model: 'ada', content: { text: 'sampled by ada' } });
    expect(JSON.parse(text(forBob))).toMatchObject({ model: 'bob', content: { text: 'sampled by bob' } });
    expect([ada.asked, bob.asked]).toEqual([['sample for ada'], ['sample for bob']]);
    await Promise.all([ada.client.close(), bob.client.close()]);
  }, TEST_TIMEOUT);

  test('a request the server sends apart from the call (not related) while two sessions call it: refused with a message, asked of neither', async () => {
    const [ada, bob] = await Promise.all([host('ada'), host('bob')]);
    const results = await Promise.all([
      ada.client.callTool({ name: 'web__ask_together', arguments: { message: 'unrelated 1', related: false } }),
      bob.client.callTool({ name: 'web__ask_together', arguments: { message: 'unrelated 2', related: false } }),
    ]);
    for (const result of results) {
      expect((result as CallToolResult).isError).toBe(true);
      expect(text(result)).toContain('PLN_E_GATEWAY_ORIGIN_UNKNOWN');
    }
    expect([ada.asked, bob.asked]).toEqual([[], []]);
    await Promise.all([ada.client.close(), bob.client.close()]);
  }, TEST_TIMEOUT);

  test('stdio upstream (nothing tells the call): two sessions calling at once are refused with a message, one alone is asked', async () => {
    const [ada, bob] = await Promise.all([host('ada'), host('bob')]);
    const results = await Promise.all([
      ada.client.callTool({ name: 'fx__ask_together', arguments: { message: 'stdio question of ada' } }),
      bob.client.callTool({ name: 'fx__ask_together', arguments: { message: 'stdio question of bob' } }),
    ]);
    for (const result of results) {
      expect((result as CallToolResult).isError).toBe(true);
      expect(text(result)).toContain('PLN_E_GATEWAY_ORIGIN_UNKNOWN');
    }
    expect([ada.asked, bob.asked]).toEqual([[], []]);
    expect(gw.stderr()).toContain('PLN_E_GATEWAY_ORIGIN_UNKNOWN');

    // Alone, with the other session still open: its own question, its own answer.
    const alone = await ada.client.callTool({ name: 'fx__ask_together', arguments: { message: 'stdio alone', together: 1 } });
    expect(JSON.parse(text(alone))).toEqual({ action: 'accept', content: { name: 'ada' } });
    expect([ada.asked, bob.asked]).toEqual([['stdio alone'], []]);
    await Promise.all([ada.client.close(), bob.client.close()]);
  }, TEST_TIMEOUT);
});
