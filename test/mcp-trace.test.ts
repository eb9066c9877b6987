/**
 * What plinth puts in a 2026-07-28 request's `_meta` besides the SDK's
 * envelope: W3C trace context (the caller's, else one a before_tool handler
 * put in the event context, else a new trace) and the log level, which at
 * 2026-07-28 replaces `logging/setLevel` (no level: the server sends the
 * request no log messages). A 2025 request is left as it was. A real
 * dual-era v2 server (test/fixtures/mcp/servers/feat-modern.mjs) whose
 * `trace` tool echoes what it received and logs one line at info.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerLogMessage } from '../sdk/index.js';
import type { EventResult } from '../sdk/events.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { connectFeat, type Era, type FeatConnection, type Wire } from './support/feat-modern.js';

const TRACEPARENT = /^00-[\da-f]{32}-[\da-f]{16}-01$/;
const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
let kernel: TestKernel;
let beforeTool: ((context: Record<string, unknown>) => EventResult | void) | undefined;
const open: FeatConnection[] = [];

async function connect(name: string, wire: Wire, era: Era, serverLogLevel?: string): Promise<FeatConnection & { messages: ServerLogMessage[] }> {
  const connection = await connectFeat(name, wire, era, { emit: (event, context) => kernel.emit(event, context), getService: async () => undefined, log, ...(serverLogLevel && { serverLogLevel }) });
  open.push(connection);
  const messages: ServerLogMessage[] = [];
  connection.registry.onLogMessage((message) => void messages.push(message));
  return { ...connection, messages };
}

async function trace(connection: FeatConnection, server: string, options = {}): Promise<{ traceparent: string | null; tracestate: string | null; logLevel: string | null }> {
  const result = await connection.registry.callTool(`${server}__trace`, {}, options);
  expect(result.ok).toBe(true);
  return JSON.parse(result.text);
}

beforeAll(async () => {
  kernel = await createTestKernel({ plugins: [{ manifest: { name: 'tracer' }, setup: (k) => void k.on('before_tool', (context) => beforeTool?.(context)) }] });
}, 30_000);

afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
  await kernel?.dispose();
});

describe.each(['http', 'stdio'] as const)('2026-07-28 over %s', (wire) => {
  let server: FeatConnection & { messages: ServerLogMessage[] };
  const name = `t${wire}`;
  beforeAll(async () => {
    server = await connect(name, wire, 'modern');
  }, 20_000);

  it('without anything asked: a new traceparent on each call, no log level, and so no server log messages', async () => {
    const first = await trace(server, name);
    const second = await trace(server, name);
    expect(first.traceparent).toMatch(TRACEPARENT);
    expect(second.traceparent).toMatch(TRACEPARENT);
    expect(second.traceparent).not.toBe(first.traceparent);
    expect(first).toMatchObject({ tracestate: null, logLevel: null });
    expect(server.messages).toEqual([]);
  });

  it("the caller's trace context and log level reach the server, and the call's log message comes back", async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const seen = await trace(server, name, { traceparent, tracestate: 'plinth=1,other=x', logLevel: 'info' });
    expect(seen).toEqual({ traceparent, tracestate: 'plinth=1,other=x', logLevel: 'info' });
    expect(server.messages).toEqual([expect.objectContaining({ server: name, level: 'info', logger: 'feat', data: 'trace tool ran' })]);
    server.messages.length = 0;
    // A level above the message's: asked, and nothing sent.
    expect((await trace(server, name, { logLevel: 'error' })).logLevel).toBe('error');
    expect(server.messages).toEqual([]);
  });

  it('a traceparent a before_tool handler put in the event context is used; an invalid one is replaced by a new trace', async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    beforeTool = (context) => ({ context: { ...context, traceparent } });
    try {
      expect((await trace(server, name)).traceparent).toBe(traceparent);
      beforeTool = (context) => ({ context: { ...context, traceparent: 'not-a-traceparent' } });
      const replaced = await trace(server, name);
      expect(replaced.traceparent).toMatch(TRACEPARENT);
      expect(replaced.traceparent).not.toBe('not-a-traceparent');
    } finally {
      beforeTool = undefined;
    }
  });
});

describe('the serverLogLevel setting', () => {
  it('is asked in every call when the caller gives none; the caller’s own level wins', async () => {
    const server = await connect('logged', 'http', 'modern', 'debug');
    expect((await trace(server, 'logged')).logLevel).toBe('debug');
    expect(server.messages.map((m) => m.data)).toEqual(['trace tool ran']);
    expect((await trace(server, 'logged', { logLevel: 'warning' })).logLevel).toBe('warning');
  });
});

describe('a 2025 connection', () => {
  it('gets no trace context or level added: its requests stay as they were', async () => {
    const server = await connect('old', 'stdio', 'legacy');
    expect(await trace(server, 'old', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', logLevel: 'info' })).toEqual({ traceparent: null, tracestate: null, logLevel: null });
  });
});
