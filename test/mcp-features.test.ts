/**
 * The mcp plugin's client features against real servers over stdio:
 * server-everything, and an SDK fixture server of ours
 * (test/fixtures/mcp/features/server.mjs) for what server-everything lacks
 * (audio, broken results, errors, a tool added on demand, an exit mid-call,
 * pagination, `$ref` schemas). Each client is the SDK's own `Client` +
 * `StdioClientTransport`, prepared and attached exactly as the mcp core does;
 * before_tool/after_tool go through a real kernel. Every server process
 * started here is checked to be gone at the end.
 */
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventResult } from '../sdk/events.js';
import { isPlinthError } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import {
  askElicitation,
  attachFeatures,
  convertSchema,
  createToolRegistry,
  formatBytes,
  formatContent,
  formatToolResult,
  prepareClient,
  type FeatureDeps,
  type ServerFeatures,
  type ToolRegistry,
} from '../plugins/mcp/features/index.js';
import type { McpServerDefinition, ToolCallResult } from 'plinth/sdk';
import { isAlive } from '../internal/process/tree.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVERYTHING = ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'];
const FIXTURE = ['test/fixtures/mcp/features/server.mjs'];
const SECRET = 'fixture-secret-5f2c9a';

// ── kernel, logger, servers ────────────────────────────────────────────────

/** What the guard plugin does on before_tool/after_tool, per namespaced tool name; set by each test. */
const guard: { before: Map<string, (context: Record<string, unknown>) => EventResult | void>; afterSeen: Record<string, unknown>[]; afterBlock: Set<string> } = {
  before: new Map(),
  afterSeen: [],
  afterBlock: new Set(),
};

let kernel: TestKernel;
const logs: string[] = [];
const log = {
  debug: (m: string) => void logs.push(`debug ${m}`),
  info: (m: string) => void logs.push(`info ${m}`),
  warn: (m: string) => void logs.push(`warn ${m}`),
  error: (m: string) => void logs.push(`error ${m}`),
};
const pids: number[] = [];
const clients: Client[] = [];

function definition(name: string, args: readonly string[], overrides: Partial<McpServerDefinition> = {}): McpServerDefinition {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args,
    env: {},
    cwd: ROOT,
    headers: {},
    connectTimeoutMs: 10_000,
    enabled: true,
    source: 'builtin',
    origin: 'test',
    secrets: [],
    ...overrides,
  };
}

/** `kernel.get`, answering undefined for a service nobody provides: what the core passes as `getService`. */
const kernelService: FeatureDeps['getService'] = async (name) => {
  try {
    return await kernel.get(name);
  } catch (error) {
    if (isPlinthError(error) && error.code === 'PLN_E_SERVICE_MISSING') return undefined;
    throw error;
  }
};

interface Connected {
  readonly client: Client;
  readonly features: ServerFeatures;
  readonly registry: ToolRegistry;
  readonly pid: number;
}

/** Connects a server over stdio with the SDK, as the core does: prepare, connect, attach. */
async function connect(def: McpServerDefinition, deps: Partial<FeatureDeps> = {}): Promise<Connected> {
  const registry = deps.registry ?? createToolRegistry({ log });
  const full: FeatureDeps = {
    registry,
    emit: (event, context) => kernel.emit(event, context),
    getService: kernelService,
    log,
    redact: (text) => kernel.redact(text),
    workspace: ROOT,
    callTimeoutMs: 20_000,
    terminal: null,
    ...deps,
  };
  const client = new Client({ name: 'plinth-test', version: '0.0.0' });
  prepareClient(client, def, full);
  const transport = new StdioClientTransport({ command: def.command!, args: [...def.args], cwd: def.cwd, env: { PATH: process.env.PATH ?? '', ...def.env }, stderr: 'pipe' });
  await client.connect(transport);
  clients.push(client);
  const pid = transport.pid!;
  pids.push(pid);
  const features = await attachFeatures(client, def, full);
  return { client, features, registry, pid };
}


async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 200 && isAlive(pid); i += 1) await new Promise((r) => setTimeout(r, 25));
  return !isAlive(pid);
}

/** Resolves when `registry` lists a tool named `name`. */
function toolAppears(registry: ToolRegistry, name: string): Promise<void> {
  return new Promise((resolve) => {
    if (registry.get(name)) return resolve();
    const off = registry.onChange(() => {
      if (registry.get(name)) {
        off();
        resolve();
      }
    });
  });
}

function expectFailure(result: ToolCallResult, code: string): void {
  expect(result.ok).toBe(false);
  expect(result.isError).toBe(true);
  expect(result.error?.code).toBe(code);
  expect(result.text).toBe(result.error?.message);
}

let everything: Connected;
let fixture: Connected;
let host: { sampling?: (r: { server: string; params: Record<string, unknown> }) => Promise<Record<string, unknown>> } = {};

beforeAll(async () => {
  kernel = await createTestKernel({
    plugins: [
      {
        manifest: { name: 'guard' },
        setup(k) {
          k.on('before_tool', (context) => guard.before.get(String(context.tool))?.(context));
          k.on('after_tool', (context) => {
            guard.afterSeen.push(context);
            if (guard.afterBlock.has(String(context.tool))) return { allow: false, message: 'output withheld for review' };
          });
        },
      },
    ],
  });
  everything = await connect(definition('everything', EVERYTHING));
  fixture = await connect(definition('fixture', FIXTURE, { env: { FIXTURE_SECRET: SECRET }, secrets: [SECRET] }));
}, 60_000); // two server processes starting on a busy machine

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await kernel?.dispose();
  for (const pid of pids) expect(await gone(pid), `server process ${pid} left running`).toBe(true);
});

// ── tool registry ──────────────────────────────────────────────────────────

describe('tool registry', () => {
  it('lists server-everything tools under <server>__<tool> with their schemas converted', () => {
    const names = everything.registry.tools().map((t) => t.name);
    expect(names).toContain('everything__echo');
    expect(names).toContain('everything__get-tiny-image');
    expect(names).toContain('everything__trigger-long-running-operation');

    const sum = everything.registry.get('everything__get-sum')!;
    expect(sum).toMatchObject({ server: 'everything', tool: 'get-sum', title: 'Get Sum Tool', description: 'Returns the sum of two numbers' });
    expect(sum.inputSchema).toEqual({
      type: 'object',
      properties: { a: { type: 'number', description: 'First number' }, b: { type: 'number', description: 'Second number' } },
      required: ['a', 'b'],
    });
    const annotated = everything.registry.get('everything__get-annotated-message')!.inputSchema as { properties: Record<string, unknown> };
    expect(annotated.properties.messageType).toMatchObject({ type: 'string', enum: ['error', 'success', 'debug'] });
    expect(annotated.properties.includeImage).toMatchObject({ type: 'boolean', default: false });
  });

  it('follows every page of tools/list', () => {
    // The fixture serves 4 tools a page.
    expect(fixture.features.tools().map((t) => t.tool)).toEqual(expect.arrayContaining(['echo', 'audio', 'shapes', 'touch', 'log', 'progress']));
    expect(fixture.features.tools().length).toBe(15);
  });

  it('applies includeTools and excludeTools (globs on the tool name; exclude wins)', async () => {
    const filtered = await connect(definition('picky', EVERYTHING, { includeTools: ['get-*', 'echo'], excludeTools: ['get-env', '*-image'] }));
    const names = filtered.features.tools().map((t) => t.tool).sort();
    expect(names).toContain('echo');
    expect(names).toContain('get-sum');
    expect(names).not.toContain('get-env');
    expect(names).not.toContain('get-tiny-image');
    expect(names.every((n) => n === 'echo' || n.startsWith('get-'))).toBe(true);
    const hidden = await filtered.registry.callTool('picky__get-env', {});
    expectFailure(hidden, 'PLN_E_MCP_TOOL_UNKNOWN');
    expect(hidden.text).toContain('includeTools/excludeTools');
    await filtered.client.close();
  });

  it('follows notifications/tools/list_changed: a tool added on demand joins the registry and can be called', async () => {
    const added = toolAppears(fixture.registry, 'fixture__added-1');
    const result = await fixture.registry.callTool('fixture__add-tool', { name: 'added-1' });
    expect(result.text).toBe('added added-1');
    await added;
    expect((await fixture.registry.callTool('fixture__added-1', {})).text).toBe('added-1 ran');
  });

  it('converts $ref/$defs, nested objects, arrays, enums and defaults (2020-12 schema)', () => {
    const schema = fixture.registry.get('fixture__shapes')!.inputSchema as Record<string, any>;
    expect(schema.$schema).toBeUndefined();
    expect(schema.properties.mode).toEqual({ type: 'string', enum: ['fast', 'slow'], default: 'fast', description: 'How to run' });
    expect(schema.properties.tags).toEqual({ type: 'array', items: { type: 'string' }, description: 'Labels' });
    // A plain reference is inlined, with the description written next to it.
    expect(schema.properties.owner).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } },
      required: ['name'],
      description: 'Who owns it',
    });
    // A recursive one is inlined once, its self-reference kept, with the definitions it needs.
    expect(schema.properties.tree.properties.children.items).toEqual({ $ref: '#/$defs/node' });
    expect(Object.keys(schema.$defs)).toContain('node');
    expect(schema.required).toEqual(['mode', 'owner']);
    expect(schema.additionalProperties).toBe(false);
  });
});

// ── calls and content ──────────────────────────────────────────────────────

describe('tool calls and content', () => {
  it('text', async () => {
    const result = await everything.registry.callTool('everything__echo', { message: 'hello there' });
    expect(result).toMatchObject({ ok: true, isError: false });
    expect(result.content[0]).toEqual({ type: 'text', text: 'Echo: hello there' });
    expect(result.text).toBe('Echo: hello there');
    expect(result.error).toBeUndefined();
  });

  it('image: a line with MIME type and size', async () => {
    const result = await everything.registry.callTool('everything__get-tiny-image', {});
    expect(result.ok).toBe(true);
    expect(result.content.map((c) => c.type)).toContain('image');
    expect(result.text).toMatch(/\[image image\/png, \d+(\.\d)? (B|KiB)\]/);
  });

  it('embedded resource: a line with URI and MIME type, then its text', async () => {
    const result = await everything.registry.callTool('everything__get-resource-reference', { resourceType: 'Text', resourceId: 2 });
    expect(result.ok).toBe(true);
    expect(result.content.map((c) => c.type)).toContain('resource');
    expect(result.text).toContain('[resource demo://resource/dynamic/text/2, text/plain]\n');
  });

  it('audio, blob resource and resource_link (fixture)', async () => {
    const audio = await fixture.registry.callTool('fixture__audio', {});
    expect(audio.text).toBe('a clip:\n[audio audio/wav, 16 B]');
    const kinds = await fixture.registry.callTool('fixture__kinds', {});
    expect(kinds.text.split('\n')).toEqual([
      'every kind:',
      '[image image/png, 2.0 KiB]',
      '[audio audio/wav, 16 B]',
      '[resource fixture://doc/1, text/plain]',
      'the first document',
      '[resource fixture://blob, application/octet-stream, 2.0 KiB]',
      '[resource link fixture://doc/2, text/plain] doc 2: the second',
    ]);
  });

  it('structuredContent: kept, and shown as JSON when there is no text', async () => {
    const result = await fixture.registry.callTool('fixture__structured', {});
    expect(result).toMatchObject({ ok: true, isError: false, structuredContent: { temperature: 21.5 } });
    expect(JSON.parse(result.text)).toEqual({ temperature: 21.5 });
    const weather = await everything.registry.callTool('everything__get-structured-content', { location: 'Chicago' });
    expect(weather.ok).toBe(true);
    expect(weather.structuredContent).toHaveProperty('temperature');
  });

  it('passes progress notifications to onProgress and to the log', async () => {
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await fixture.registry.callTool('fixture__progress', { steps: 3 }, { onProgress: (p) => seen.push(p) });
    expect(result.text).toBe('3 steps done');
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
    expect(logs.some((l) => l.startsWith('info ') && l.includes('fixture__progress') && l.includes('3/3 step 3'))).toBe(true);
  });

  it('shows server log messages in the plugin log, secrets redacted', async () => {
    await fixture.registry.callTool('fixture__log', {});
    const line = logs.find((l) => l.includes('(fixture) warning: token is'));
    expect(line).toBeDefined();
    expect(line).toMatch(/^warn /);
    expect(line).toContain('[redacted]');
    expect(logs.join('\n')).not.toContain(SECRET);
  });
});

// ── failures are results ───────────────────────────────────────────────────

describe('every failure is a result with a code', () => {
  it('unknown tool', async () => {
    expectFailure(await everything.registry.callTool('everything__nope', {}), 'PLN_E_MCP_TOOL_UNKNOWN');
    expectFailure(await everything.registry.callTool('echo', {}), 'PLN_E_MCP_TOOL_UNKNOWN');
    const noServer = await everything.registry.callTool('nosuch__echo', {});
    expectFailure(noServer, 'PLN_E_MCP_TOOL_UNKNOWN');
    expect(noServer.text).toContain('connected: everything');
  });

  it('invalid arguments: each problem listed, nothing sent', async () => {
    const result = await everything.registry.callTool('everything__get-sum', { a: '1', c: true });
    expectFailure(result, 'PLN_E_MCP_ARGS_INVALID');
    expect(result.text).toContain('a: must be number (got string)');
    expect(result.text).toContain('b: is required');
    const shapes = await fixture.registry.callTool('fixture__shapes', { mode: 'medium', owner: { email: 'not-an-email' }, extra: 1 });
    expectFailure(shapes, 'PLN_E_MCP_ARGS_INVALID');
    expect(shapes.text).toContain('mode: must be one of "fast", "slow"');
    expect(shapes.text).toContain('owner.name: is required');
    expect(shapes.text).toContain('owner.email: must match format "email"');
    expect(shapes.text).toContain('extra: is not a known argument');
    expectFailure(await everything.registry.callTool('everything__echo', [] as never), 'PLN_E_MCP_ARGS_INVALID');
    const valid = await fixture.registry.callTool('fixture__shapes', { mode: 'slow', owner: { name: 'Ada' }, tree: { value: 1, children: [{ value: 2 }] } });
    expect(valid.text).toBe('shapes ran');
  });

  it('server error (JSON-RPC error)', async () => {
    const result = await fixture.registry.callTool('fixture__fail', {});
    expectFailure(result, 'PLN_E_MCP_SERVER_ERROR');
    expect(result.text).toContain('the fixture failed on purpose');
    expect(result.text).toContain('-32603');
  });

  it('a tool that runs only as an MCP task is refused with a message, not sent', async () => {
    const result = await everything.registry.callTool('everything__simulate-research-query', { topic: 'x' });
    expectFailure(result, 'PLN_E_MCP_SERVER_ERROR');
    expect(result.text).toContain('MCP task');
  });

  it('isError results stay results: ok, flagged, shown', async () => {
    const result = await fixture.registry.callTool('fixture__is-error', {});
    expect(result).toMatchObject({ ok: true, isError: true, text: 'it went wrong' });
    expect(result.error).toBeUndefined();
  });

  it('invalid results: a malformed result, structured content against the output schema', async () => {
    expectFailure(await fixture.registry.callTool('fixture__bad-shape', {}), 'PLN_E_MCP_RESULT_INVALID');
    const bad = await fixture.registry.callTool('fixture__bad-structured', {});
    expectFailure(bad, 'PLN_E_MCP_RESULT_INVALID');
    expect(bad.text).toContain('temperature: must be number (got string)');
  });

  it('timeout: the per-call timeout against server-everything’s long-running tool', async () => {
    const result = await everything.registry.callTool('everything__trigger-long-running-operation', { duration: 60, steps: 2 }, { timeoutMs: 300 });
    expectFailure(result, 'PLN_E_MCP_CALL_TIMEOUT');
    expect(result.text).toContain('300 ms');
    // The connection is still good afterwards.
    expect((await everything.registry.callTool('everything__echo', { message: 'still here' })).ok).toBe(true);
  });

  it('cancelled by the caller’s signal', async () => {
    const controller = new AbortController();
    const pending = fixture.registry.callTool('fixture__slow', { ms: 30_000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expectFailure(await pending, 'PLN_E_MCP_CALL_CANCELLED');
    expectFailure(await fixture.registry.callTool('fixture__slow', { ms: 1 }, { signal: AbortSignal.abort() }), 'PLN_E_MCP_CALL_CANCELLED');
  });

  it('disconnect mid-call; then the server’s tools are gone and calls say why', async () => {
    const doomed = await connect(definition('doomed', FIXTURE));
    const result = await doomed.registry.callTool('doomed__exit', {});
    expectFailure(result, 'PLN_E_MCP_DISCONNECTED');
    expect(await gone(doomed.pid)).toBe(true);
    expect(doomed.features.detached).toBe(true);
    expect(doomed.registry.tools()).toEqual([]);
    const after = await doomed.registry.callTool('doomed__echo', { text: 'x' });
    expectFailure(after, 'PLN_E_MCP_DISCONNECTED');
    expect(after.text).toContain('not connected');
  });

  it('detach removes a server’s tools from a shared registry, not the others’', async () => {
    const shared = createToolRegistry();
    const a = await connect(definition('a', FIXTURE), { registry: shared });
    const b = await connect(definition('b', FIXTURE), { registry: shared });
    expect(shared.tools().filter((t) => t.server === 'a').length).toBe(15);
    a.features.detach('stopped by the test');
    expect(shared.tools().every((t) => t.server === 'b')).toBe(true);
    expectFailure(await shared.callTool('a__echo', { text: 'x' }), 'PLN_E_MCP_DISCONNECTED');
    expect((await shared.callTool('b__echo', { text: 'y' })).text).toBe('y');
    await Promise.all([a.client.close(), b.client.close()]);
  });
});

// ── before_tool / after_tool ───────────────────────────────────────────────

describe('before_tool and after_tool', () => {
  it('a before_tool block is a result naming who blocked', async () => {
    guard.before.set('everything__echo', () => ({ allow: false, message: 'echo is not allowed today', by: 'policy:no-echo' }));
    try {
      const result = await everything.registry.callTool('everything__echo', { message: 'hi' });
      expectFailure(result, 'PLN_E_MCP_BLOCKED');
      expect(result.text).toContain('guard');
      expect(result.text).toContain('policy:no-echo');
      expect(result.text).toContain('echo is not allowed today');
    } finally {
      guard.before.delete('everything__echo');
    }
  });

  it('sees { tool, server, args } and may rewrite args, which are checked again', async () => {
    const seen: Record<string, unknown>[] = [];
    guard.before.set('fixture__echo', (context) => {
      seen.push(context);
      return { context: { ...context, args: { text: `${(context.args as { text: string }).text} (rewritten)` } } };
    });
    try {
      const result = await fixture.registry.callTool('fixture__echo', { text: 'original' });
      expect(result.text).toBe('original (rewritten)');
      expect(seen[0]).toEqual({ tool: 'fixture__echo', server: 'fixture', args: { text: 'original' } });

      guard.before.set('fixture__echo', (context) => ({ context: { ...context, args: { text: 42 } } }));
      const invalid = await fixture.registry.callTool('fixture__echo', { text: 'original' });
      expectFailure(invalid, 'PLN_E_MCP_ARGS_INVALID');
      expect(invalid.text).toContain('before_tool');
      expect(invalid.text).toContain('text: must be string (got integer)');
    } finally {
      guard.before.delete('fixture__echo');
    }
  });

  it('after_tool sees the result; a block withholds it', async () => {
    guard.afterSeen.length = 0;
    await everything.registry.callTool('everything__get-sum', { a: 2, b: 3 });
    const context = guard.afterSeen.find((c) => c.tool === 'everything__get-sum')!;
    expect(context).toMatchObject({ server: 'everything', args: { a: 2, b: 3 }, result: { ok: true, isError: false } });
    expect((context.result as { text: string }).text).toContain('5');

    guard.afterBlock.add('fixture__echo');
    try {
      const withheld = await fixture.registry.callTool('fixture__echo', { text: 'secret output' });
      expectFailure(withheld, 'PLN_E_MCP_BLOCKED');
      expect(withheld.text).toContain('output withheld for review');
      expect(withheld.text).not.toContain('secret output');
    } finally {
      guard.afterBlock.delete('fixture__echo');
    }
  });
});

// ── resources, prompts, completion ─────────────────────────────────────────

describe('resources, prompts, completion', () => {
  it('lists resources (every page) and templates, and reads one', async () => {
    const fixtureResources = await fixture.registry.resources('fixture');
    expect(fixtureResources.map((r) => r.uri)).toEqual(['fixture://doc/1', 'fixture://doc/2', 'fixture://doc/3', 'fixture://doc/4', 'fixture://doc/5']);
    expect((await fixture.registry.readResource('fixture', 'fixture://doc/3')).text).toBe('contents of doc 3');

    const listed = await everything.registry.resources('everything');
    expect(listed.length).toBeGreaterThan(0);
    expect(listed[0]).toMatchObject({ server: 'everything' });
    const templates = await everything.registry.resourceTemplates('everything');
    expect(templates.map((t) => t.uriTemplate)).toContain('demo://resource/dynamic/text/{resourceId}');
    const read = await everything.registry.readResource('everything', 'demo://resource/dynamic/text/1');
    expect(read.contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/text/1' });
    expect(read.text.length).toBeGreaterThan(0);
  });

  it('reading a resource that does not exist throws PLN_E_MCP_SERVER_ERROR; an unknown server PLN_E_MCP_DISCONNECTED', async () => {
    await expect(fixture.registry.readResource('fixture', 'fixture://nope')).rejects.toMatchObject({ code: 'PLN_E_MCP_SERVER_ERROR' });
    await expect(fixture.registry.readResource('nosuch', 'fixture://doc/1')).rejects.toMatchObject({ code: 'PLN_E_MCP_DISCONNECTED' });
  });

  it('subscriptions: resources/updated reaches the listener until it is disposed', async () => {
    let updates = 0;
    let notified!: () => void;
    const first = new Promise<void>((resolve) => (notified = resolve));
    const off = await fixture.registry.subscribe('fixture', 'fixture://doc/2', () => {
      updates += 1;
      notified();
    });
    await fixture.registry.callTool('fixture__touch', { uri: 'fixture://doc/2' });
    await first;
    expect(updates).toBe(1);
    off();
    await fixture.registry.callTool('fixture__touch', { uri: 'fixture://doc/2' });
    await fixture.registry.callTool('fixture__echo', { text: 'sync' }); // the notification, if any, came before this answer
    expect(updates).toBe(1);
  });

  it('lists prompts and renders one with its arguments', async () => {
    const prompts = await everything.registry.prompts('everything');
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt', 'completable-prompt']));
    expect(prompts.find((p) => p.name === 'args-prompt')?.arguments).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'city', required: true })]));
    const rendered = await everything.registry.getPrompt('everything', 'args-prompt', { city: 'Lisbon' });
    expect(rendered.messages.length).toBeGreaterThan(0);
    expect(rendered.text).toMatch(/^user: /);
    expect(rendered.text).toContain('Lisbon');
    const embedded = await everything.registry.getPrompt('everything', 'resource-prompt', { resourceType: 'Text', resourceId: '1' });
    expect(embedded.text).toContain('[resource demo://resource/dynamic/text/1');
  });

  it('completes prompt arguments, with already chosen arguments as context', async () => {
    const departments = await everything.registry.complete('everything', { type: 'prompt', name: 'completable-prompt' }, { name: 'department', value: 'E' });
    expect(departments).toContain('Engineering');
    const names = await everything.registry.complete('everything', { type: 'prompt', name: 'completable-prompt' }, { name: 'name', value: '' }, { department: 'Engineering' });
    expect(names.length).toBeGreaterThan(0);
  });

  it('lists across every attached server when no server is named', async () => {
    const shared = createToolRegistry();
    const a = await connect(definition('ra', FIXTURE), { registry: shared });
    const b = await connect(definition('rb', FIXTURE), { registry: shared });
    const all = await shared.resources();
    expect(all.filter((r) => r.server === 'ra').length).toBe(5);
    expect(all.filter((r) => r.server === 'rb').length).toBe(5);
    await Promise.all([a.client.close(), b.client.close()]);
  });
});

// ── requests servers send ──────────────────────────────────────────────────

describe('requests from servers', () => {
  it('roots/list: the workspace as a file:// root', async () => {
    const result = await everything.registry.callTool('everything__get-roots-list', {});
    expect(result.ok).toBe(true);
    expect(result.text).toContain(pathToFileURL(ROOT).href);
  });

  it('roots/list: the host’s mcp:roots when provided', async () => {
    const off = kernel.provide('mcp:roots', async () => [{ uri: 'file:///srv/project', name: 'project' }]);
    try {
      const rooted = await connect(definition('rooted', EVERYTHING));
      const result = await rooted.registry.callTool('rooted__get-roots-list', {});
      expect(result.text).toContain('file:///srv/project');
      expect(result.text).not.toContain(pathToFileURL(ROOT).href);
      await rooted.client.close();
    } finally {
      off();
    }
  });

  it('elicitation without a terminal or host: declined, with a message in the log', async () => {
    const result = await everything.registry.callTool('everything__trigger-elicitation-request', {});
    expect(result.ok).toBe(true);
    expect(result.text.toLowerCase()).toContain('declined');
    expect(logs.some((l) => l.startsWith('warn ') && l.includes('everything') && l.includes('no terminal'))).toBe(true);
  });

  it('elicitation through the host’s mcp:elicitation', async () => {
    const asked: Array<{ server: string; message: string }> = [];
    const off = kernel.provide('mcp:elicitation', async (request) => {
      asked.push(request);
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' } };
    });
    try {
      const result = await everything.registry.callTool('everything__trigger-elicitation-request', {});
      expect(asked[0]).toMatchObject({ server: 'everything', message: expect.stringContaining('Please provide inputs') });
      expect(result.text).toContain('Ada Lovelace');
    } finally {
      off();
    }
  });

  it('elicitation on a terminal: each field asked, defaults kept on Enter, answers type-checked', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    // name, check (a wrong answer first), firstLine (default), age (out of range first), color (by number), tags (default)
    input.end(['Ada', 'maybe', 'y', '', '400', '36', '2', ''].join('\n') + '\n');
    const answer = await askElicitation(
      {
        server: 'demo',
        message: 'Tell me about you',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', title: 'Name' },
            check: { type: 'boolean', description: 'Agree?' },
            firstLine: { type: 'string', default: 'It was a dark and stormy night.' },
            age: { type: 'integer', minimum: 0, maximum: 150 },
            color: { type: 'string', enum: ['red', 'green', 'blue'] },
            tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, default: ['a'] },
          },
          required: ['name', 'check'],
        },
      },
      { input, output },
    );
    expect(answer).toEqual({ action: 'accept', content: { name: 'Ada', check: true, firstLine: 'It was a dark and stormy night.', age: 36, color: 'green', tags: ['a'] } });
    expect(shown).toContain('server "demo" asks: Tell me about you');
    expect(shown).toContain('[It was a dark and stormy night.]');
    expect(shown).toContain('answer y or n');
    expect(shown).toContain('at most 150');
    expect(shown).toContain('2) green');
  });

  it('elicitation on a terminal: escape sequences in what the server sent are shown as text, never sent to the terminal', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    input.end('\n\n');
    const answer = await askElicitation(
      {
        server: 'evil',
        message: 'hello\u001b[2J\u001b]0;owned\u0007',
        requestedSchema: {
          type: 'object',
          properties: { pick: { type: 'string', title: 'T\u001b[31m', description: 'd\u009b31m', enum: ['a\u001b[1m', 'b'], default: 'a\u001b[1m' } },
        },
      },
      { input, output },
    );
    expect(answer).toEqual({ action: 'accept', content: { pick: 'a\u001b[1m' } });
    expect(shown).not.toMatch(/[\u001b\u0007\u009b]/);
    expect(shown).toContain('hello\\x1b[2J');
  });

  it('elicitation on a terminal: !decline declines, end of input cancels', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } } };
    const declined = new PassThrough();
    declined.end('!decline\n');
    expect(await askElicitation({ server: 's', message: 'm', requestedSchema: schema }, { input: declined, output: new PassThrough() })).toEqual({ action: 'decline' });
    const ended = new PassThrough();
    ended.end();
    expect(await askElicitation({ server: 's', message: 'm', requestedSchema: schema }, { input: ended, output: new PassThrough() })).toEqual({ action: 'cancel' });
  });

  describe('elicitation defaults (SEP-1034, conformance elicitation-sep1034-client-defaults)', () => {
    const SERVERS_FIXTURE = ['test/fixtures/mcp/servers/stdio-server.mjs'];
    const ALL_DEFAULTS = { city: 'Lisbon', nights: 3, budget: 420.5, room: 'double', breakfast: true };
    /** What the server got back from `elicitation/create`, as its tool reports it. */
    const elicited = (result: ToolCallResult) => JSON.parse(result.text) as { action: string; content?: Record<string, unknown> };

    it('the client declares elicitation.form.applyDefaults, as the server sees it', async () => {
      const server = await connect(definition('capable', SERVERS_FIXTURE));
      try {
        const seen = JSON.parse((await server.registry.callTool('capable__client_capabilities', {})).text) as Record<string, unknown>;
        expect(seen.elicitation).toEqual({ form: { applyDefaults: true }, url: {} }); // URL mode too (2026-07-28's input_required carries it)
      } finally {
        await server.client.close();
      }
    });

    it('a host answering with part of the fields, or with none: the server gets the schema defaults for the rest', async () => {
      const answers: Array<{ action: 'accept'; content?: Record<string, string | number | boolean | string[]> }> = [
        { action: 'accept', content: { nights: 5, room: 'suite' } },
        { action: 'accept' },
        { action: 'accept', content: { name: 'Grace' } },
      ];
      const off = kernel.provide('mcp:elicitation', async () => answers.shift()!);
      const server = await connect(definition('hosted', SERVERS_FIXTURE));
      try {
        expect(elicited(await server.registry.callTool('hosted__ask_defaults', {}))).toEqual({ action: 'accept', content: { ...ALL_DEFAULTS, nights: 5, room: 'suite' } });
        expect(elicited(await server.registry.callTool('hosted__ask_defaults', {}))).toEqual({ action: 'accept', content: ALL_DEFAULTS });
        // A schema with a required field and fields without a default: only the defaults are added.
        expect(elicited(await server.registry.callTool('hosted__ask', {}))).toEqual({ action: 'accept', content: { name: 'Grace', colour: 'green', subscribe: false } });
      } finally {
        off();
        await server.client.close();
      }
    });

    it('the form on a terminal that is not interactive: fields left at their default reach the server with it', async () => {
      const input = new PassThrough();
      // city, nights (changed), budget, room, breakfast: Enter keeps a default
      input.end(['', '4', '', '', ''].join('\n') + '\n');
      const server = await connect(definition('formed', SERVERS_FIXTURE), { terminal: { input, output: new PassThrough() } });
      try {
        expect(elicited(await server.registry.callTool('formed__ask_defaults', {}))).toEqual({ action: 'accept', content: { ...ALL_DEFAULTS, nights: 4 } });
      } finally {
        await server.client.close();
      }
    });
  });

  it('sampling without a host: declined with a clear error', async () => {
    const result = await everything.registry.callTool('everything__trigger-sampling-request', { prompt: 'hello' });
    expect(result.isError).toBe(true);
    expect(result.text).toContain('sampling declined');
    expect(logs.some((l) => l.startsWith('warn ') && l.includes('sampling'))).toBe(true);
  });

  it('sampling through the host’s mcp:sampling', async () => {
    const requests: Array<{ server: string; params: Record<string, unknown> }> = [];
    const off = kernel.provide('mcp:sampling', async (request) => {
      requests.push(request);
      return { role: 'assistant', content: { type: 'text', text: 'sampled by the host' }, model: 'test-model' };
    });
    try {
      const result = await everything.registry.callTool('everything__trigger-sampling-request', { prompt: 'hello', maxTokens: 5 });
      expect(result).toMatchObject({ ok: true, isError: false });
      expect(result.text).toContain('sampled by the host');
      expect(requests[0]).toMatchObject({ server: 'everything', params: { maxTokens: 5 } });
    } finally {
      off();
    }
  });
});

// ── pure parts ─────────────────────────────────────────────────────────────

describe('schema conversion', () => {
  it('keeps types, descriptions, required, enums, nested objects, arrays and defaults as they are', () => {
    const input = {
      type: 'object',
      description: 'Search',
      properties: {
        query: { type: 'string', description: 'What to find', minLength: 1 },
        limit: { type: 'integer', default: 10, minimum: 1 },
        sort: { type: 'string', enum: ['asc', 'desc'] },
        filter: { type: 'object', properties: { since: { type: 'string', format: 'date' }, tags: { type: 'array', items: { type: 'string' }, maxItems: 5 } }, required: ['since'] },
        nullable: { type: ['string', 'null'] },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
      },
      required: ['query'],
      additionalProperties: false,
    };
    expect(convertSchema(input)).toEqual(input);
    expect(convertSchema(input)).not.toBe(input);
  });

  it('makes the object implicit in a bare schema explicit, and drops $schema', () => {
    expect(convertSchema(undefined)).toEqual({ type: 'object', properties: {} });
    expect(convertSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toEqual({ type: 'object', properties: {} });
    expect(convertSchema({ properties: { a: { type: 'string' } } })).toEqual({ properties: { a: { type: 'string' } }, type: 'object' });
  });

  it('inlines $ref (definitions and $defs), merges annotations, wraps other siblings in allOf', () => {
    const converted = convertSchema({
      type: 'object',
      properties: {
        a: { $ref: '#/definitions/id', description: 'The id' },
        b: { $ref: '#/$defs/range', maximum: 5 },
        c: { $ref: '#/properties/a' },
      },
      definitions: { id: { type: 'string', pattern: '^[a-z]+$' } },
      $defs: { range: { type: 'integer', minimum: 0 } },
    });
    expect(converted).toEqual({
      type: 'object',
      properties: {
        a: { type: 'string', pattern: '^[a-z]+$', description: 'The id' },
        b: { allOf: [{ type: 'integer', minimum: 0 }], maximum: 5 },
        c: { type: 'string', pattern: '^[a-z]+$', description: 'The id' },
      },
    });
  });

  it('keeps recursive and remote references, with the definitions they need', () => {
    const converted = convertSchema({
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' }, remote: { $ref: 'https://example.com/schema.json' } },
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
    });
    expect(converted.properties).toEqual({
      root: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } },
      remote: { $ref: 'https://example.com/schema.json' },
    });
    expect(converted.$defs).toEqual({ node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } });
  });

  it('does not touch $ref inside data (enum, const, default) and keeps references when inlining would explode', () => {
    expect(convertSchema({ type: 'object', properties: { x: { default: { $ref: '#/nowhere' } } } }).properties).toEqual({ x: { default: { $ref: '#/nowhere' } } });
    // Each level references the next twice: inlined, 2^20 nodes.
    const $defs: Record<string, unknown> = {};
    for (let i = 0; i < 20; i += 1) $defs[`l${i}`] = { type: 'object', properties: { a: { $ref: `#/$defs/l${i + 1}` }, b: { $ref: `#/$defs/l${i + 1}` } } };
    $defs.l20 = { type: 'string' };
    const converted = convertSchema({ type: 'object', properties: { top: { $ref: '#/$defs/l0' } }, $defs });
    expect(converted.properties).toEqual({ top: { $ref: '#/$defs/l0' } });
    expect(Object.keys(converted.$defs as object).length).toBe(21);
  });
});

describe('content formatting', () => {
  it('formats sizes and each content kind', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(12_595)).toBe('12.3 KiB');
    expect(formatBytes(3 * 1024 * 1024)).toBe('3.0 MiB');
    const png = Buffer.alloc(12_595).toString('base64');
    expect(formatContent({ type: 'image', data: png, mimeType: 'image/png' })).toBe('[image image/png, 12.3 KiB]');
    expect(formatContent({ type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'hello' } })).toBe('[resource file:///a.txt, text/plain]\nhello');
    expect(formatContent({ type: 'resource_link', uri: 'file:///b\u001b[31m', name: 'b' })).toBe('[resource link file:///b[31m] b');
    expect(formatToolResult({ content: [], structuredContent: { a: 1 } })).toBe('{\n  "a": 1\n}');
    expect(formatToolResult({ content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 } })).toBe('x');
  });
});
