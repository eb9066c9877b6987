/**
 * `plinth serve --http`: the built CLI on 127.0.0.1 with a generated token,
 * SDK clients over streamable HTTP, and clients that misbehave (no token, a
 * wrong one, a foreign Origin or Host, malformed JSON-RPC, a 10 MB body,
 * streams never read, many sessions at once). The gateway stays up, and on
 * SIGTERM leaves no upstream process or session behind.
 */
import { stat, readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Client, CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Sandbox, ensureBuilt, sandbox } from './support/cli.js';
import { alive, baseSettings, everything, fixtureStdio, httpClient, httpFixture, httpGateway, stop, until } from './support/gateway.js';
import { originPolicy, rebindingProblem } from '../plugins/gateway/guard.js';

const TEST_TIMEOUT = 120_000;
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

let upstream: Awaited<ReturnType<typeof httpFixture>>;
let box: Sandbox;
let gw: Awaited<ReturnType<typeof httpGateway>>;
let pidFile: string;
/** The gateway's stdio upstream (a second gateway started later writes the same pid file). */
let upstreamPid: number;

beforeAll(async () => {
  ensureBuilt();
  upstream = await httpFixture();
  box = await sandbox('plinth-gateway-http-');
  pidFile = join(box.base, 'fixture.pid.json');
  await box.settings(
    baseSettings(
      { fx: fixtureStdio('--pid-file', pidFile), web: { url: upstream.url }, everything: everything() },
      // Health checks at their default pace: 50 sessions at once must not look like a sick server.
      { plugins: { gateway: { settings: { maxBufferedBytes: 262_144 } }, health: { settings: {} } } },
    ),
  );
  gw = await httpGateway(box);
  await until('the stdio upstream to write its pid', async () => (await readFile(pidFile, 'utf8').catch(() => '')).includes('pid'));
  upstreamPid = (JSON.parse(await readFile(pidFile, 'utf8')) as { pid: number }).pid;
}, 300_000);

afterAll(async () => {
  if (gw) await stop(gw.child);
  await upstream?.close();
  await box?.remove();
});

/** A raw POST to the gateway. */
function post(body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(gw.url, { method: 'POST', headers: { ...HEADERS, Authorization: `Bearer ${gw.token}`, ...headers }, body });
}

/** A session opened by hand: its id. */
async function rawSession(): Promise<string> {
  const response = await post(JSON.stringify(INIT));
  expect(response.status).toBe(200);
  await response.body?.cancel();
  const id = response.headers.get('mcp-session-id')!;
  await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': id }).then((r) => r.body?.cancel());
  return id;
}

async function status(client: Client): Promise<{ gateway: { sessions: number }; servers: Array<{ name: string; state: string }> }> {
  return JSON.parse(String(((await client.readResource({ uri: 'plinth://gateway/status' })).contents[0] as { text: string }).text));
}

describe('the token', () => {
  test('generated, stored 0600 under $PLINTH_HOME/gateway, printed once: a second start does not show it', async () => {
    expect(gw.token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(gw.tokenFrom).toBe(join(box.home, 'gateway', 'token'));
    expect((await stat(gw.tokenFrom)).mode & 0o777).toBe(0o600);
    expect((await readFile(gw.tokenFrom, 'utf8')).trim()).toBe(gw.token);
    expect(gw.stderr()).not.toContain(gw.token);
    const again = await httpGateway(box);
    try {
      expect(again.token).toBe('');
      expect(again.tokenFrom).toBe(gw.tokenFrom);
      const { client } = await httpClient(again.url, gw.token);
      expect(text(await client.callTool({ name: 'web__echo', arguments: { text: 'same token' } }))).toBe('same token');
      await client.close();
    } finally {
      await stop(again.child);
    }
  }, TEST_TIMEOUT);
});

describe('requests refused', () => {
  test('no token, a wrong token: 401 with WWW-Authenticate, and no session is made', async () => {
    const none = await fetch(gw.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await none.json()) as { error: { message: string } }).error.message).toContain('PLN_E_GATEWAY_UNAUTHORIZED');
    const wrong = await post(JSON.stringify(INIT), { Authorization: `Bearer ${'x'.repeat(gw.token.length)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('mcp-session-id')).toBeNull();
    await wrong.body?.cancel();
    const scheme = await post(JSON.stringify(INIT), { Authorization: `Basic ${gw.token}` });
    expect(scheme.status).toBe(401);
    await scheme.body?.cancel();
  }, TEST_TIMEOUT);

  test('a foreign Origin or Host: 403 before authentication (with or without the token)', async () => {
    const foreign = await fetch(gw.url, { method: 'POST', headers: { ...HEADERS, Origin: 'https://evil.example' }, body: JSON.stringify(INIT) });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { message: string } }).error.message).toContain('PLN_E_GATEWAY_FORBIDDEN');
    const withToken = await post(JSON.stringify(INIT), { Origin: 'http://attacker.localhost.example:8080' });
    expect(withToken.status).toBe(403);
    await withToken.body?.cancel();
    // A rebinding page reaches 127.0.0.1 under its own name: the Host header gives it away.
    const host = await rawRequest(`POST /mcp HTTP/1.1\r\nHost: rebind.example:${new URL(gw.url).port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    expect(host).toMatch(/^HTTP\/1\.1 403/);
    // A local page is fine.
    const local = await post(JSON.stringify(INIT), { Origin: 'http://localhost:5173' });
    expect(local.status).toBe(200);
    await local.body?.cancel();
  }, TEST_TIMEOUT);

  test('the Host and Origin rules themselves', () => {
    const policy = originPolicy('127.0.0.1', ['my-box.lan'], ['https://app.example.com']);
    expect(rebindingProblem({ host: '127.0.0.1:7337' }, policy)).toBeUndefined();
    expect(rebindingProblem({ host: 'localhost:7337', origin: 'http://127.0.0.1:3000' }, policy)).toBeUndefined();
    expect(rebindingProblem({ host: '[::1]:7337', origin: 'https://app.example.com/' }, policy)).toBeUndefined();
    expect(rebindingProblem({ host: 'my-box.lan:7337' }, policy)).toBeUndefined();
    expect(rebindingProblem({ host: 'evil.example:7337' }, policy)).toContain('Host');
    expect(rebindingProblem({}, policy)).toContain('Host');
    expect(rebindingProblem({ host: 'localhost', origin: 'null' }, policy)).toContain('Origin');
    expect(rebindingProblem({ host: 'localhost', origin: 'http://localhost.evil.example' }, policy)).toContain('Origin');
  });

  test('malformed JSON-RPC: 400 with a parse error, and the gateway goes on', async () => {
    const id = await rawSession();
    const garbage = await post('{"jsonrpc": "2.0", "method": ', { 'mcp-session-id': id });
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const notRpc = await post(JSON.stringify({ hello: 'world' }), { 'mcp-session-id': id });
    expect(notRpc.status).toBe(400);
    await notRpc.body?.cancel();
    const noSession = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    expect(noSession.status).toBe(400);
    await noSession.body?.cancel();
    const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), { 'mcp-session-id': 'no-such-session' });
    expect(unknown.status).toBe(404);
    await unknown.body?.cancel();
    const list = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), { 'mcp-session-id': id });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('web__echo');
  }, TEST_TIMEOUT);

  test('a 10 MB body: 413, declared or streamed, and the gateway goes on', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'web__echo', arguments: { text: 'x'.repeat(10 * 1024 * 1024) } } });
    // Several times: a gateway that closed with the upload still arriving reset the connection now and
    // then, and the client saw EPIPE instead of the 413.
    let declared!: Response;
    for (let i = 0; i < 8; i++) {
      declared = await post(big);
      expect(declared.status).toBe(413);
      expect(((await declared.json()) as { error: { message: string } }).error.message).toContain('PLN_E_GATEWAY_BODY_TOO_LARGE');
    }
    const id = await rawSession();
    const chunks = new Blob([big]).stream();
    const streamed = await fetch(gw.url, { method: 'POST', headers: { ...HEADERS, Authorization: `Bearer ${gw.token}`, 'mcp-session-id': id }, body: chunks, duplex: 'half' } as RequestInit);
    expect(streamed.status).toBe(413);
    // The gateway reads a refused body to its end and drops it, so the client reads the 413 instead of a
    // reset, and the connection stays fit for the client's next request.
    expect(declared.headers.get('connection')).not.toBe('close');
    expect(streamed.headers.get('connection')).not.toBe('close');
    await streamed.body?.cancel();
    const { client } = await httpClient(gw.url, gw.token);
    expect(text(await client.callTool({ name: 'web__echo', arguments: { text: 'fine' } }))).toBe('fine');
    await client.close();
  }, TEST_TIMEOUT);

  test('a body declared far past the limit is refused at once, and that connection closes', async () => {
    const url = new URL(gw.url);
    const head = `POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${gw.token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${2 ** 30}\r\n\r\n{"jsonrpc":`;
    const answer = await rawRequest(head);
    expect(answer).toMatch(/^HTTP\/1.1 413/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toContain(`PLN_E_GATEWAY_BODY_TOO_LARGE: the body is ${2 ** 30} bytes`);
  }, TEST_TIMEOUT);
});

describe('sessions', () => {
  test('50 sessions at once, each calling tools of three servers: every answer is its own', async () => {
    const { client: observer } = await httpClient(gw.url, gw.token);
    const before = (await status(observer)).gateway.sessions;
    const clients = await Promise.all(Array.from({ length: 50 }, () => httpClient(gw.url, gw.token)));
    const answers = await Promise.all(
      clients.map(async ({ client }, i) => {
        const [fx, web, ev] = await Promise.all([
          client.callTool({ name: 'fx__echo', arguments: { text: `fx ${i}` } }),
          client.callTool({ name: 'web__add', arguments: { a: i, b: 1 } }),
          client.callTool({ name: 'everything__echo', arguments: { message: `ev ${i}` } }),
        ]);
        return [text(fx), ((web as CallToolResult).structuredContent as { sum?: number } | undefined)?.sum, text(ev)];
      }),
    );
    answers.forEach((answer, i) => expect(answer).toEqual([`fx ${i}`, i + 1, `Echo: ev ${i}`]));
    expect((await status(observer)).gateway.sessions).toBe(before + 50);
    // DELETE ends each session.
    await Promise.all(clients.map(async ({ client, transport }) => {
      await transport.terminateSession();
      await client.close();
    }));
    await until('the sessions to be gone', async () => (await status(observer)).gateway.sessions === before);
    // The gateway holds one upstream session, however many downstream sessions came and went.
    expect((await upstream.stats()).sessions.length).toBe(1);
    await observer.close();
  }, TEST_TIMEOUT);

  test("an upstream elicitation travels to the session whose call caused it, not to another", async () => {
    const asker = await httpClient(gw.url, gw.token, { elicitation: {} });
    const bystander = await httpClient(gw.url, gw.token, { elicitation: {} });
    const seen: string[] = [];
    asker.client.setRequestHandler('elicitation/create', async () => {
      seen.push('asker');
      return { action: 'accept', content: { name: 'Ada', age: 36, colour: 'red', subscribe: false } };
    });
    bystander.client.setRequestHandler('elicitation/create', async () => {
      seen.push('bystander');
      return { action: 'decline' };
    });
    const answer = JSON.parse(text(await asker.client.callTool({ name: 'fx__ask', arguments: { message: 'name?' } })));
    expect(answer).toMatchObject({ action: 'accept', content: { name: 'Ada' } });
    expect(seen).toEqual(['asker']);
    await asker.client.close();
    await bystander.client.close();
  }, TEST_TIMEOUT);

  test('subscriptions are per session: an update reaches the session that subscribed, and stops when it unsubscribes', async () => {
    const reader = await httpClient(gw.url, gw.token);
    const other = await httpClient(gw.url, gw.token);
    const updates = { reader: 0, other: 0 };
    reader.client.setNotificationHandler('notifications/resources/updated', () => void updates.reader++);
    other.client.setNotificationHandler('notifications/resources/updated', () => void updates.other++);
    await reader.client.subscribeResource({ uri: 'fixture://docs/readme' });
    const touched = JSON.parse(text(await other.client.callTool({ name: 'fx__touch', arguments: { uri: 'fixture://docs/readme' } })));
    expect(touched).toEqual({ subscribed: true });
    await until('the update to reach the subscriber', () => updates.reader === 1);
    await reader.client.unsubscribeResource({ uri: 'fixture://docs/readme' });
    // The gateway's own upstream subscription went with the last downstream one.
    expect(JSON.parse(text(await other.client.callTool({ name: 'fx__touch', arguments: { uri: 'fixture://docs/readme' } })))).toEqual({ subscribed: false });
    expect(updates).toEqual({ reader: 1, other: 0 });
    await reader.client.close();
    await other.client.close();
  }, TEST_TIMEOUT);

  test('two thousand connections at once: the ones over the cap are dropped, the gateway stays up and serves again once they go', async () => {
    const port = Number(new URL(gw.url).port);
    const flood: Socket[] = [];
    for (let i = 0; i < 2000; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      flood.push(socket);
    }
    await until('every flood connection to be settled', () => flood.every((s) => !s.connecting), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const dropped = flood.filter((s) => s.destroyed || s.readableEnded).length;
    for (const socket of flood) socket.destroy();
    expect(dropped).toBeGreaterThan(0);
    expect(gw.child.exitCode).toBeNull();
    await until('the gateway to serve again', async () => {
      try {
        const { client } = await httpClient(gw.url, gw.token);
        const ok = text(await client.callTool({ name: 'fx__echo', arguments: { text: 'after the flood' } })) === 'after the flood';
        await client.close();
        return ok;
      } catch {
        return false;
      }
    });
  }, TEST_TIMEOUT);

  test('a session after DELETE is gone: 404', async () => {
    const id = await rawSession();
    const deleted = await fetch(gw.url, { method: 'DELETE', headers: { Authorization: `Bearer ${gw.token}`, 'mcp-session-id': id } });
    expect(deleted.status).toBe(200);
    const after = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }), { 'mcp-session-id': id });
    expect(after.status).toBe(404);
    await after.body?.cancel();
  }, TEST_TIMEOUT);

  test('clients that open streams and never read, and hundreds of idle connections: the others are served, the gateway stays up', async () => {
    const port = Number(new URL(gw.url).port);
    const idle: Socket[] = [];
    for (let i = 0; i < 300; i++) idle.push(connect(port, '127.0.0.1'));
    // A session whose client asks for big answers and reads none of them.
    const id = await rawSession();
    const greedy = connect(port, '127.0.0.1');
    greedy.pause();
    let greedyClosed = false;
    greedy.on('error', () => undefined);
    greedy.on('close', () => (greedyClosed = true));
    await new Promise<void>((resolve) => greedy.once('connect', () => resolve()));
    const payload = 'y'.repeat(900_000);
    const REQUESTS = 12;
    for (let i = 0; i < REQUESTS; i++) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'web__echo', arguments: { text: payload } } });
      greedy.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${gw.token}\r\nmcp-session-id: ${id}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    // A GET stream never read, on a session of its own.
    const listener = connect(port, '127.0.0.1');
    listener.pause();
    listener.on('error', () => undefined);
    listener.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${gw.token}\r\nmcp-session-id: ${await rawSession()}\r\nAccept: text/event-stream\r\n\r\n`);

    const { client } = await httpClient(gw.url, gw.token);
    expect(text(await client.callTool({ name: 'fx__echo', arguments: { text: 'still served' } }))).toBe('still served');
    expect(text(await client.callTool({ name: 'web__echo', arguments: { text: 'and again' } }))).toBe('and again');
    // What the gateway could not hand over it did not keep: the connection was closed before every answer came.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    let received = 0;
    greedy.on('data', (chunk: Buffer) => (received += chunk.length));
    greedy.resume();
    await until('the connection that read nothing to be closed by the gateway', () => greedyClosed, 60_000);
    expect(received).toBeLessThan(REQUESTS * payload.length);
    for (const socket of [...idle, listener]) socket.destroy();
    await client.close();
    expect(gw.child.exitCode).toBeNull();
  }, TEST_TIMEOUT);
});

describe('idle sessions', () => {
  test('a session without a request for sessionIdleMs is ended', async () => {
    const idleBox = await sandbox('plinth-gateway-idle-');
    try {
      await idleBox.settings(baseSettings({ web: { url: upstream.url } }, { plugins: { gateway: { settings: { sessionIdleMs: 1000 } } } }));
      const idleGw = await httpGateway(idleBox);
      try {
        const response = await fetch(idleGw.url, { method: 'POST', headers: { ...HEADERS, Authorization: `Bearer ${idleGw.token}` }, body: JSON.stringify(INIT) });
        const id = response.headers.get('mcp-session-id')!;
        await response.body?.cancel();
        // Each probe is a request, which keeps a session alive: wait longer than the idle time, then probe once.
        await new Promise((resolve) => setTimeout(resolve, 3500));
        const probe = await fetch(idleGw.url, { method: 'POST', headers: { ...HEADERS, Authorization: `Bearer ${idleGw.token}`, 'mcp-session-id': id }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
        await probe.body?.cancel();
        expect(probe.status).toBe(404);
      } finally {
        await stop(idleGw.child);
      }
    } finally {
      await idleBox.remove();
    }
  }, TEST_TIMEOUT);
});

describe('shutdown', () => {
  test('SIGTERM: exit 0, no upstream process left, the upstream HTTP session ended', async () => {
    const pid = upstreamPid;
    expect(alive(pid)).toBe(true);
    const exited = new Promise<number | null>((resolve) => gw.child.once('exit', (code) => resolve(code)));
    gw.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await until('the stdio upstream to be gone', () => !alive(pid), 10_000);
    await until('the upstream HTTP session to end', async () => (await upstream.stats()).sessions.length === 0, 10_000);
  }, TEST_TIMEOUT);
});

/** One raw HTTP exchange; resolves with what the server sent before closing. */
function rawRequest(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}
