/**
 * Scale-out, shown: two `plinth serve --http` processes with the same settings
 * (one home: the same settings.json, the same token) behind a real HAProxy
 * (round-robin, no stickiness; test/support/haproxy.ts), in front of one
 * modern upstream built here on the SDK v2 (`createMcpHandler`, stateless).
 * A modern SDK v2 `Client` pinned to 2026-07-28 talks to HAProxy only. Which
 * process answered each of its requests is read from the `X-Served-By` header
 * HAProxy sets (the gateway knows nothing of it), and cross-checked against
 * HAProxy's own log.
 *
 * Shown: the client lists and calls while its requests alternate between the
 * two processes, including a call whose elicitation round trip
 * (`input_required`, then the retry with `requestState`) is answered by one
 * process and retried through the other; it keeps a `subscriptions/listen`
 * stream; then the process that carries that stream is killed (SIGKILL)
 * mid-run, the stream ends, the client listens again — and a change of the
 * survivor's tools reaches it there — and goes on, lists, calls, elicits,
 * through the survivor,
 * which HAProxy finds by its health checks and its redispatch of a request
 * refused by the dead one.
 */
import { randomBytes } from 'node:crypto';
import { type Server as HttpServer, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { McpSubscription } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, acceptedContent, createMcpHandler, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { type Sandbox, ensureBuilt, sandbox } from './support/cli.js';
import { alive, baseSettings, fixtureStdio, httpGateway, stop, until } from './support/gateway.js';
import { type Haproxy, haproxyBinary, startHaproxy } from './support/haproxy.js';

const MODERN = '2026-07-28';

/** The modern upstream: echo, and a tool that needs a confirmation (an elicitation round trip). */
async function modernUpstream(): Promise<{ url: string; hits: Map<string, number>; close(): Promise<void> }> {
  const hits = new Map<string, number>();
  const count = (key: string) => hits.set(key, (hits.get(key) ?? 0) + 1);
  const build = () => {
    const server = new McpServer({ name: 'upstream', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.registerTool('echo', { description: 'Echoes', inputSchema: z.object({ message: z.string() }) }, ({ message }) => {
      count('echo');
      return { content: [{ type: 'text', text: `echo: ${message}` }] };
    });
    server.registerTool('deploy', { description: 'Deploys after a confirmation', inputSchema: z.object({ target: z.string() }) }, ({ target }, ctx) => {
      const response = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
      if (response.kind === 'elicit' && response.action !== 'accept') return { content: [{ type: 'text', text: `${target}: ${response.action}d` }] };
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', z.object({ ok: z.boolean() }));
      if (!answer) {
        count('deploy:asked');
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ message: `Deploy ${target}?`, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }) },
          requestState: `deploy:${target}`,
        });
      }
      // The state came back byte for byte, through whichever gateway process the retry landed on.
      const state = ctx.mcpReq.requestState<string>();
      count('deploy:answered');
      return { content: [{ type: 'text', text: `${target}: ${answer.ok ? 'deployed' : 'not deployed'} (state ${state})` }] };
    });
    return server;
  };
  const handler = createMcpHandler(build);
  const node = toNodeHandler(handler);
  const http: HttpServer = createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    hits,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

interface Seen {
  readonly method: string | undefined;
  readonly name: string | undefined;
  readonly by: string | null;
  readonly status: number;
}

describe('plinth serve --http: two processes behind HAProxy, a modern client', () => {
  let box: Sandbox;
  let upstream: Awaited<ReturnType<typeof modernUpstream>>;
  let gateways: Awaited<ReturnType<typeof httpGateway>>[] = [];
  let proxy: Haproxy;
  let token: string;

  beforeAll(async () => {
    ensureBuilt();
    haproxyBinary(); // fails (never skips) without HAProxy: .ci/run installs it
    upstream = await modernUpstream();
    box = await sandbox('plinth-scale-out-');
    token = randomBytes(24).toString('base64url');
    // `up` is shared by both processes; `fx` (the fixture server over stdio) is a child of each, its tool list changed by a call to it.
    // Health checks are not this test's subject: one a minute, so that none restarts a connection mid-test.
    await box.settings(baseSettings({ up: { url: upstream.url, transport: 'http', protocol: MODERN }, fx: fixtureStdio() }, { plugins: { gateway: { settings: { token } }, health: { settings: { interval: 60_000 } } } }));
    // The same home, so the same settings and token: two processes as a deployment would run them.
    gateways = [await httpGateway(box), await httpGateway(box)];
    proxy = await startHaproxy(
      gateways.map((g, i) => ({ name: `gw${i + 1}`, port: Number(new URL(g.url).port) })),
      { checkPath: '/mcp' },
    );
  }, 60_000);

  afterAll(async () => {
    await proxy?.stop();
    await Promise.all(gateways.map((g) => stop(g.child)));
    await upstream?.close();
    await box?.remove();
  });

  it('lists, calls, elicits and listens through either process, and goes on through one when the other is killed', async () => {
    const seen: Seen[] = [];
    // The client's own fetch, recording which process HAProxy sent each request to.
    const recording = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const response = await fetch(input, init);
      let body: { method?: string; params?: { name?: string } } | undefined;
      try {
        body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      } catch {
        body = undefined;
      }
      seen.push({ method: body?.method, name: body?.params?.name, by: response.headers.get('x-served-by'), status: response.status });
      return response;
    };
    const elicited: string[] = [];
    const client = new Client({ name: 'scale-out', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', (request) => {
      elicited.push(request.params.message);
      return { action: 'accept', content: { ok: true } };
    });
    const changed: number[] = [];
    client.setNotificationHandler('notifications/tools/list_changed', () => void changed.push(Date.now()));
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url('/mcp')), { fetch: recording, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await client.connect(transport);
    try {
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);

      // A listen stream, held open on one process while the other requests alternate between both.
      const subscription: McpSubscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
      const carrier = seen.find((s) => s.method === 'subscriptions/listen')!.by!;
      expect(['gw1', 'gw2']).toContain(carrier);

      // Both processes serve: lists and calls, alternating.
      const upTools = async () => (await client.listTools()).tools.map((t) => t.name).filter((name) => name.startsWith('up__')).sort();
      for (let i = 0; i < 2; i++) expect(await upTools()).toEqual(['up__deploy', 'up__echo']);
      for (let i = 0; i < 4; i++) expect(await client.callTool({ name: 'up__echo', arguments: { message: `m${i}` } })).toMatchObject({ content: [{ type: 'text', text: `echo: m${i}` }] });

      // The elicitation round trip: input_required from one process, the retry (with requestState) through the other.
      for (let i = 0; i < 3; i++) {
        const result = await client.callTool({ name: 'up__deploy', arguments: { target: `t${i}` } });
        expect(result).toMatchObject({ content: [{ type: 'text', text: `t${i}: deployed (state deploy:t${i})` }] });
      }
      expect(elicited).toEqual(['Deploy t0?', 'Deploy t1?', 'Deploy t2?']);
      const deployRounds = seen.filter((s) => s.method === 'tools/call' && s.name === 'up__deploy');
      expect(deployRounds).toHaveLength(6);
      const crossed = [0, 2, 4].filter((i) => deployRounds[i]!.by !== deployRounds[i + 1]!.by);
      expect(crossed.length, `rounds served by ${deployRounds.map((s) => s.by).join(', ')}`).toBeGreaterThan(0);

      const before = seen.filter((s) => s.method !== undefined);
      expect(before.every((s) => s.status === 200 || s.status === 202), JSON.stringify(before)).toBe(true);
      expect(new Set(before.map((s) => s.by))).toEqual(new Set(['gw1', 'gw2']));

      expect(await Promise.race([subscription.closed, Promise.resolve('still open')])).toBe('still open');

      // Kill the process that carries the listen stream, mid-run.
      const victim = gateways[carrier === 'gw1' ? 0 : 1]!;
      const survivor = carrier === 'gw1' ? 'gw2' : 'gw1';
      victim.child.kill('SIGKILL');
      await until('the killed gateway to exit', () => !alive(victim.child.pid!), 5000);
      expect(await subscription.closed).toBe('remote');
      const killedAt = seen.length;

      // The client goes on through the other process: listen again, list, call, elicit.
      const again = await client.listen({ toolsListChanged: true });
      const changesBefore = changed.length;
      // A change in the survivor's upstream reaches the client on the new stream.
      expect(await client.callTool({ name: 'fx__add_tool', arguments: { name: 'late' } })).not.toMatchObject({ isError: true });
      await until('tools/list_changed on the new listen stream', () => changed.length > changesBefore, 8000);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('fx__late');
      expect(await upTools()).toEqual(['up__deploy', 'up__echo']);
      for (let i = 0; i < 4; i++) expect(await client.callTool({ name: 'up__echo', arguments: { message: `after ${i}` } })).toMatchObject({ content: [{ text: `echo: after ${i}` }] });
      expect(await client.callTool({ name: 'up__deploy', arguments: { target: 'late' } })).toMatchObject({ content: [{ text: 'late: deployed (state deploy:late)' }] });
      expect(elicited).toHaveLength(4);

      const after = seen.slice(killedAt).filter((s) => s.method !== undefined);
      expect(after.length).toBeGreaterThanOrEqual(9);
      expect(after.every((s) => s.by === survivor && s.status === 200), JSON.stringify(after)).toBe(true);
      await again.close();

      // HAProxy's own log agrees: both served.
      const served = proxy.served();
      expect(served.get('gw1')).toBeGreaterThan(0);
      expect(served.get('gw2')).toBeGreaterThan(0);
      // Each logical call reached the upstream once per round, whichever process carried it.
      expect(upstream.hits.get('deploy:asked')).toBe(4);
      expect(upstream.hits.get('deploy:answered')).toBe(4);
    } finally {
      await client.close();
    }
  }, 30_000);
});
