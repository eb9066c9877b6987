/**
 * MCP 2026-07-28's multi-round-trip pattern through plinth's client features:
 * a real dual-era v2 server (test/fixtures/mcp/servers/feat-modern.mjs, its
 * tools, prompt and resource answer `inputRequired(...)`) over stdio and
 * streamable HTTP, the client pinned to 2026-07-28, and the same server with a
 * 2025 client (the SDK's legacy shim sends real requests). The embedded
 * requests reach plinth's own handlers (the host's `mcp:elicitation`,
 * `mcp:sampling`, `mcp:roots` services, with the call's origin); before_tool
 * and after_tool run once per logical call; a server that asks for ever more
 * rounds ends with PLN_E_MCP_INPUT_ROUNDS; a caller may take the round trip
 * over (`inputRequired: 'return'`, then `inputResponses` + `requestState`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPlinthError } from '../sdk/index.js';
import type { McpServerDefinition } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { attachFeatures, createToolRegistry, prepareClient, type FeatureDeps, type ToolRegistry } from '../plugins/mcp/features/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/mcp/servers/feat-modern.mjs', import.meta.url));
const ODD_STATE = 'état "1" \\ ✓ +/= \n';

const hooks = { before: new Map<string, number>(), after: new Map<string, number>() };
const seen: { elicit: Array<Record<string, unknown>>; sampling: Array<Record<string, unknown>>; roots: Array<Record<string, unknown>> } = { elicit: [], sampling: [], roots: [] };
const logs: string[] = [];
const log = { debug: (m: string) => void logs.push(`debug ${m}`), info: (m: string) => void logs.push(`info ${m}`), warn: (m: string) => void logs.push(`warn ${m}`), error: (m: string) => void logs.push(`error ${m}`) };
let kernel: TestKernel;
const children: ChildProcess[] = [];
const clients: Client[] = [];

function definition(name: string): McpServerDefinition {
  return { name, transport: 'stdio', command: process.execPath, args: [FIXTURE], env: {}, cwd: ROOT, headers: {}, connectTimeoutMs: 10_000, enabled: true, source: 'builtin', origin: 'test', secrets: [] };
}

const getService: FeatureDeps['getService'] = async (name) => {
  try {
    return await kernel.get(name);
  } catch (error) {
    if (isPlinthError(error) && error.code === 'PLN_E_SERVICE_MISSING') return undefined;
    throw error;
  }
};

type Wire = 'stdio' | 'http';
type Era = 'modern' | 'legacy';

/** Prepares, connects and attaches as the mcp core does; the era pinned (modern) or the 2025 default. */
async function connect(name: string, wire: Wire, era: Era, extra: Partial<FeatureDeps> = {}): Promise<{ client: Client; registry: ToolRegistry; port?: number }> {
  const registry = createToolRegistry({ log });
  const deps: FeatureDeps = { registry, emit: (event, context) => kernel.emit(event, context), getService, log, redact: (t) => t, workspace: ROOT, callTimeoutMs: 15_000, terminal: null, ...extra };
  const client = new Client({ name: 'plinth-test', version: '0.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  const def = definition(name);
  prepareClient(client, def, deps);
  let port: number | undefined;
  if (wire === 'http') {
    const child = spawn(process.execPath, [FIXTURE, 'http'], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
    port = await new Promise<number>((resolve) => child.stdout!.once('data', (d) => resolve(JSON.parse(String(d)).port)));
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  } else {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE, 'stdio'], stderr: 'ignore' }));
  }
  clients.push(client);
  expect(client.getProtocolEra()).toBe(era);
  await attachFeatures(client, { ...def, ...(wire === 'http' && { transport: 'http', url: `http://127.0.0.1:${port}/mcp` }) }, deps);
  return { client, registry, ...(port !== undefined && { port }) };
}

function count(map: Map<string, number>, tool: string): number {
  return map.get(tool) ?? 0;
}

beforeAll(async () => {
  kernel = await createTestKernel({
    plugins: [
      {
        manifest: { name: 'counter' },
        setup(k) {
          k.on('before_tool', (context) => void hooks.before.set(String(context.tool), count(hooks.before, String(context.tool)) + 1));
          k.on('after_tool', (context) => void hooks.after.set(String(context.tool), count(hooks.after, String(context.tool)) + 1));
        },
      },
    ],
  });
  kernel.provide('mcp:elicitation', async (request): Promise<{ action: 'accept'; content?: Record<string, string | boolean> }> => {
    seen.elicit.push(request as Record<string, unknown>);
    if (request.mode === 'url') return { action: 'accept' };
    const message = request.message;
    if (message.startsWith('First')) return { action: 'accept', content: { v: 'A' } };
    if (message.startsWith('Second')) return { action: 'accept', content: { v: 'B' } };
    if (message.startsWith('Round')) return { action: 'accept', content: { v: 'again' } };
    if (message.startsWith('Goal')) return { action: 'accept', content: { goal: 'ship' } };
    if (message.startsWith('PIN')) return { action: 'accept', content: { pin: '4711' } };
    return { action: 'accept', content: { ok: true } };
  });
  kernel.provide('mcp:sampling', async (request) => {
    seen.sampling.push(request as Record<string, unknown>);
    return { model: 'host-model', role: 'assistant', content: { type: 'text', text: 'short' } };
  });
  kernel.provide('mcp:roots', async (request) => {
    seen.roots.push(request as Record<string, unknown>);
    return [{ uri: 'file:///work/here', name: 'here' }];
  });
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  for (const child of children) child.kill();
  await kernel?.dispose();
});

describe.each([
  ['stdio', 'modern'],
  ['http', 'modern'],
  ['stdio', 'legacy'],
] as const)('over %s, %s era', (wire, era) => {
  const name = `${wire}-${era}`;
  let registry: ToolRegistry;
  beforeAll(async () => {
    ({ registry } = await connect(name, wire, era));
  }, 20_000);

  it('a form elicitation reaches the host with the call origin; defaults are applied; hooks run once', async () => {
    const tool = `${name}__confirm`;
    const before = seen.elicit.length;
    const result = await registry.callTool(tool, { what: 'deploy' }, { origin: { call: tool } });
    expect(result).toMatchObject({ ok: true, isError: false });
    // The schema's default (note: "none") filled in by applyDefaults, as for a 2025 request.
    expect(result.text).toBe('deploy: accept {"ok":true,"note":"none"}');
    const asked = seen.elicit.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ server: name, message: 'Go ahead with deploy?' });
    // The origin of the call reaches the host where the wire says which call a request is for: every
    // 2026 round (plinth answers inside the call) and 2025 over streamable HTTP; not 2025 over stdio.
    if (era === 'modern') expect(asked[0]!.origin).toEqual({ call: tool });
    expect(count(hooks.before, tool)).toBe(1);
    expect(count(hooks.after, tool)).toBe(1);
  });

  it('a URL elicitation reaches the host as mode "url" with its address', async () => {
    const before = seen.elicit.length;
    const result = await registry.callTool(`${name}__signin`, {});
    expect(result.text).toBe('signin: accept');
    expect(seen.elicit.slice(before)).toEqual([expect.objectContaining({ mode: 'url', url: 'https://example.invalid/signin', message: 'Sign in to continue' })]);
  });

  it('sampling and roots go through the host services', async () => {
    const sampled = await registry.callTool(`${name}__summarize`, { topic: 'the diff' });
    expect(sampled.text).toBe('sampled by host-model: short');
    expect(seen.sampling.at(-1)).toMatchObject({ server: name, params: { messages: [{ role: 'user', content: { type: 'text', text: 'Summarize the diff' } }] } });
    const where = await registry.callTool(`${name}__where`, {});
    expect(where.text).toBe('["file:///work/here"]');
    expect(seen.roots.at(-1)).toMatchObject({ server: name });
  });

  it('two rounds: the second carries the server state back byte for byte; hooks still once', async () => {
    const tool = `${name}__two_steps`;
    const result = await registry.callTool(tool, {});
    expect(result.text).toBe('steps: A then B');
    expect(count(hooks.before, tool)).toBe(1);
    expect(count(hooks.after, tool)).toBe(1);
  });

  it('prompts/get and resources/read are fulfilled the same way', async () => {
    const prompt = await registry.getPrompt(name, 'plan');
    expect(prompt.text).toContain('Plan for ship');
    const read = await registry.readResource(name, 'feat://secret');
    expect(read.text).toContain('unlocked with 4711');
  });
});

describe('bounds and hand-back (modern, streamable HTTP)', () => {
  let registry: ToolRegistry;
  beforeAll(async () => {
    ({ registry } = await connect('bounded', 'http', 'modern', { inputRounds: 3 }));
  }, 20_000);

  it('a server that asks for more rounds than inputRounds ends with PLN_E_MCP_INPUT_ROUNDS after exactly that many retries', async () => {
    const tool = 'bounded__greedy';
    const result = await registry.callTool(tool, {});
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('PLN_E_MCP_INPUT_ROUNDS');
    expect(result.text).toContain('after 3 rounds');
    const { calls } = JSON.parse((await registry.callTool('bounded__seen', {})).text) as { calls: Array<{ tool: string; requestState: string | null }> };
    // The first request and 3 retries, each with the state of the round before.
    expect(calls.filter((c) => c.tool === 'greedy').map((c) => c.requestState)).toEqual([null, '1', '2', '3']);
    expect(count(hooks.before, tool)).toBe(1);
    expect(count(hooks.after, tool)).toBe(1);
  });

  it('inputRequired "return" hands the round back; the continuation is sent with the answers and the state as given, hooks once', async () => {
    const tool = 'bounded__two_steps';
    const asked = seen.elicit.length;
    const first = await registry.callTool(tool, {}, { inputRequired: 'return' });
    expect(first).toMatchObject({ ok: true, isError: false, content: [] });
    expect(Object.keys(first.inputRequired!.inputRequests)).toEqual(['first']);
    expect(first.inputRequired!.inputRequests.first).toMatchObject({ method: 'elicitation/create', params: { message: 'First?' } });
    expect(first.inputRequired!.requestState).toBeUndefined();
    expect(count(hooks.after, tool)).toBe(0);

    const second = await registry.callTool(tool, {}, { inputRequired: 'return', inputResponses: { first: { action: 'accept', content: { v: 'X' } } } });
    expect(second.inputRequired!.requestState).toBe(`${ODD_STATE}X`);
    const last = await registry.callTool(tool, {}, { inputRequired: 'return', inputResponses: { second: { action: 'accept', content: { v: 'Y' } } }, requestState: second.inputRequired!.requestState! });
    expect(last.text).toBe('steps: X then Y');
    expect(last.inputRequired).toBeUndefined();
    // Nobody in plinth was asked: the caller answered.
    expect(seen.elicit.length).toBe(asked);
    expect(count(hooks.before, tool)).toBe(1);
    expect(count(hooks.after, tool)).toBe(1);
    const { calls } = JSON.parse((await registry.callTool('bounded__seen', {})).text) as { calls: Array<{ tool: string; id: number; inputResponses: boolean; requestState: string | null }> };
    const legs = calls.filter((c) => c.tool === 'two_steps');
    expect(legs.map((c) => [c.inputResponses, c.requestState])).toEqual([
      [false, null],
      [true, null],
      [true, `${ODD_STATE}X`],
    ]);
    expect(new Set(legs.map((c) => c.id)).size).toBe(3);
  });

  it('a continuation this process did not hand back runs before_tool, as a new call', async () => {
    const tool = 'bounded__two_steps';
    const runs = count(hooks.before, tool);
    const result = await registry.callTool(tool, {}, { inputRequired: 'return', inputResponses: { first: { action: 'accept', content: { v: 'Z' } } } });
    expect(result.inputRequired!.requestState).toBe(`${ODD_STATE}Z`);
    expect(count(hooks.before, tool)).toBe(runs + 1);
  });

});

describe('the declines, with no host service and no terminal (modern, stdio)', () => {
  let registry: ToolRegistry;
  beforeAll(async () => {
    ({ registry } = await connect('bare', 'stdio', 'modern', { getService: async () => undefined }));
  }, 20_000);

  it('an elicitation is declined, and the server sees the decline', async () => {
    expect((await registry.callTool('bare__confirm', { what: 'x' })).text).toBe('x: decline');
    expect(logs.some((line) => line.startsWith('warn') && line.includes('server "bare" asked for input ("Go ahead with x?"), but there is no terminal to ask on: declined'))).toBe(true);
  });

  it('sampling has no answer at 2026-07-28 when declined: the call ends with PLN_E_MCP_INPUT_UNANSWERED, saying why', async () => {
    const result = await registry.callTool('bare__summarize', { topic: 't' });
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('PLN_E_MCP_INPUT_UNANSWERED');
    expect(result.text).toContain('sampling declined');
  });

  it('roots: the workspace, as for a 2025 request', async () => {
    expect(JSON.parse((await registry.callTool('bare__where', {})).text)).toEqual([pathToFileURL(ROOT).href]);
  });
});
