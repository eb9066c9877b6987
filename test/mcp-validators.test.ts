/**
 * Argument validators: compiled on a tool's first call (not at connect) and
 * shared between identical schemas, and still exact. Real servers over stdio
 * (test/fixtures/mcp/servers/schema-server.mjs: a tool `set` whose schema is
 * `{ value: number }` or `{ value: string }` as the server's environment says,
 * `reshape` to change it with tools/list_changed, `broken` that ajv cannot
 * compile), each attached with the SDK's `Client` as the mcp core attaches it,
 * all in one registry; before_tool/after_tool through a real kernel.
 */
import { fileURLToPath } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { attachFeatures, compileSchema, createToolRegistry, prepareClient, validatorCacheStats, type FeatureDeps, type ToolRegistry } from '../plugins/mcp/features/index.js';
import { SHARED_VALIDATORS_MAX } from '../plugins/mcp/features/validate.js';
import type { McpServerDefinition, ToolCallResult } from 'plinth/sdk';
import { isAlive } from '../internal/process/tree.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = 'test/fixtures/mcp/servers/schema-server.mjs';

let kernel: TestKernel;
let registry: ToolRegistry;
const logs: string[] = [];
const log = {
  debug: (m: string) => void logs.push(`debug ${m}`),
  info: (m: string) => void logs.push(`info ${m}`),
  warn: (m: string) => void logs.push(`warn ${m}`),
  error: (m: string) => void logs.push(`error ${m}`),
};
const clients: Client[] = [];
const pids: number[] = [];
/** Compilations counted when the servers were attached, before any call. */
let beforeCalls = 0;
let atStart = 0;

function definition(name: string, kind: string): McpServerDefinition {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [SERVER],
    env: { SCHEMA_KIND: kind },
    cwd: ROOT,
    headers: {},
    connectTimeoutMs: 10_000,
    enabled: true,
    source: 'builtin',
    origin: 'test',
    secrets: [],
  };
}

async function connect(def: McpServerDefinition): Promise<void> {
  const deps: FeatureDeps = {
    registry,
    emit: (event, context) => kernel.emit(event, context),
    getService: async () => undefined,
    log,
    redact: (text) => text,
    workspace: ROOT,
    callTimeoutMs: 20_000,
    terminal: null,
  };
  const client = new Client({ name: 'plinth-test', version: '0.0.0' });
  prepareClient(client, def, deps);
  const transport = new StdioClientTransport({ command: def.command!, args: [...def.args], cwd: def.cwd, env: { PATH: process.env.PATH ?? '', ...def.env }, stderr: 'pipe' });
  await client.connect(transport);
  clients.push(client);
  pids.push(transport.pid!);
  await attachFeatures(client, def, deps);
}

/** Resolves once `predicate` holds for the registry (checked now and on each change). */
function until(predicate: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (predicate()) return resolve();
    const off = registry.onChange(() => {
      if (predicate()) {
        off();
        resolve();
      }
    });
  });
}

function refused(result: ToolCallResult, message: string): void {
  expect(result.ok).toBe(false);
  expect(result.error?.code).toBe('PLN_E_MCP_ARGS_INVALID');
  expect(result.text).toBe(message);
}

function ran(result: ToolCallResult, text: string): void {
  expect(result.ok, result.text).toBe(true);
  expect(result.text).toBe(text);
}

beforeAll(async () => {
  kernel = await createTestKernel({});
  registry = createToolRegistry({ log });
  atStart = validatorCacheStats().compilations;
  // a and b: identical servers ({ value: number }); c: the same tool name with { value: string }.
  await Promise.all([connect(definition('a', 'number')), connect(definition('b', 'number')), connect(definition('c', 'string'))]);
  beforeCalls = validatorCacheStats().compilations;
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await kernel?.dispose();
  for (const pid of pids) {
    for (let i = 0; i < 200 && isAlive(pid); i += 1) await new Promise((r) => setTimeout(r, 25));
    expect(isAlive(pid), `server process ${pid} left running`).toBe(false);
  }
});

describe('argument validators', () => {
  it('connecting compiles nothing: schemas wait for their tool’s first call', () => {
    expect(registry.tools().map((t) => t.name).sort()).toEqual(['a__broken', 'a__reshape', 'a__set', 'b__broken', 'b__reshape', 'b__set', 'c__broken', 'c__reshape', 'c__set']);
    expect(beforeCalls - atStart).toBe(0);
  });

  it('identical schemas of two servers share one validator, and an invalid argument is refused with the same error', async () => {
    const start = validatorCacheStats().compilations;
    refused(await registry.callTool('a__set', { value: 'x' }), 'invalid arguments for tool "a__set":\n  - value: must be number (got string)');
    refused(await registry.callTool('b__set', { value: 'x' }), 'invalid arguments for tool "b__set":\n  - value: must be number (got string)');
    refused(await registry.callTool('b__set', { value: 1, other: true }), 'invalid arguments for tool "b__set":\n  - other: is not a known argument');
    refused(await registry.callTool('a__set', {}), 'invalid arguments for tool "a__set":\n  - value: is required');
    ran(await registry.callTool('a__set', { value: 1 }), 'set ran with {"value":1}');
    ran(await registry.callTool('b__set', { value: 2 }), 'set ran with {"value":2}');
    expect(validatorCacheStats().compilations - start).toBe(1);
  });

  it('two servers with different schemas under one tool name do not share a validator', async () => {
    refused(await registry.callTool('c__set', { value: 1 }), 'invalid arguments for tool "c__set":\n  - value: must be string (got integer)');
    ran(await registry.callTool('c__set', { value: 'x' }), 'set ran with {"value":"x"}');
    // And the first server's validator is still its own.
    refused(await registry.callTool('a__set', { value: 'x' }), 'invalid arguments for tool "a__set":\n  - value: must be number (got string)');
  });

  it('tools/list_changed with a changed schema gets a new validator; the other servers keep theirs', async () => {
    const schemaOf = (name: string) => JSON.stringify(registry.get(name)?.inputSchema);
    const before = schemaOf('a__set');
    ran(await registry.callTool('a__reshape', { kind: 'boolean' }), 'reshape ran with {"kind":"boolean"}');
    await until(() => schemaOf('a__set') !== before);
    refused(await registry.callTool('a__set', { value: 1 }), 'invalid arguments for tool "a__set":\n  - value: must be boolean (got integer)');
    ran(await registry.callTool('a__set', { value: true }), 'set ran with {"value":true}');
    refused(await registry.callTool('b__set', { value: true }), 'invalid arguments for tool "b__set":\n  - value: must be number (got boolean)');
    // Back to the schema it had: the shared validator of that text serves it again, still exact.
    ran(await registry.callTool('a__reshape', { kind: 'number' }), 'reshape ran with {"kind":"number"}');
    await until(() => schemaOf('a__set') === before);
    refused(await registry.callTool('a__set', { value: true }), 'invalid arguments for tool "a__set":\n  - value: must be number (got boolean)');
  });

  it('a schema ajv cannot compile is said once, at the first call, and the server judges the arguments', async () => {
    const said = () => logs.filter((line) => line.startsWith('warn server "a": tool "broken" has an input schema plinth cannot check')).length;
    expect(said()).toBe(0);
    ran(await registry.callTool('a__broken', { code: 1 }), 'broken ran with {"code":1}');
    ran(await registry.callTool('a__broken', { code: 'x' }), 'broken ran with {"code":"x"}');
    expect(said()).toBe(1);
  });
});

describe('the shared validator cache', () => {
  it('shares by exact JSON text and dialect: concurrent first uses compile once; another key order or dialect compiles again', async () => {
    const schema = () => ({ type: 'object', properties: { p: { type: 'integer' }, q: { type: 'string' } }, required: ['p', 'q'] });
    const start = validatorCacheStats().compilations;
    const [one, two] = await Promise.all([compileSchema(schema()), compileSchema(schema())]);
    expect(one).toBe(two);
    expect(validatorCacheStats().compilations - start).toBe(1);
    // `$id` and `$schema` are not part of the text (the dialect is given apart).
    expect(await compileSchema({ $id: 'urn:x', ...schema() })).toBe(one);
    expect(await compileSchema(schema(), 'https://json-schema.org/draft/2020-12/schema')).not.toBe(one);
    // The same schema with its properties in the other order: its own validator, its own error order.
    const reordered = { type: 'object', properties: { q: { type: 'string' }, p: { type: 'integer' } }, required: ['p', 'q'] };
    const other = await compileSchema(reordered);
    expect(other).not.toBe(one);
    const bad = { p: 'x', q: 1 };
    expect('check' in one && one.check(bad)).toEqual(['p: must be integer (got string)', 'q: must be string (got integer)']);
    expect('check' in other && other.check(bad)).toEqual(['q: must be string (got integer)', 'p: must be integer (got string)']);
  });

  it('is bounded', async () => {
    for (let i = 0; i < SHARED_VALIDATORS_MAX + 10; i += 1) await compileSchema({ type: 'object', properties: { [`k${i}`]: { type: 'number' } } });
    expect(validatorCacheStats().shared).toBeLessThanOrEqual(SHARED_VALIDATORS_MAX);
    // A schema dropped from the shared cache is compiled again when seen as a new object, and still checks.
    const again = await compileSchema({ type: 'object', properties: { k0: { type: 'number' } } });
    expect('check' in again && again.check({ k0: 'x' })).toEqual(['k0: must be number (got string)']);
  });
});
