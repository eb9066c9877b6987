/**
 * The gateway's search mode (`toolMode: "search"`) as a host sees it: the SDK's
 * `Client` spawns `plinth serve --stdio` in front of the fixture server and
 * server-everything. `tools/list` holds the pinned tools and the gateway's
 * `search_tools` and `call_tool`; a search answers with full definitions; a
 * call through `call_tool` is the direct call — the upstream runs it, and a
 * `before_tool` hook blocks or rewrites it the same way — and a pinned tool
 * that appears upstream is announced with `list_changed`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, type Sandbox, cleanEnv, ensureBuilt, sandbox } from './support/cli.js';
import { baseSettings, everything, fixtureStdio, stdioGateway, until } from './support/gateway.js';

const TEST_TIMEOUT = 120_000;
const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

let box: Sandbox;
let client: Client;
let direct: Client;
let directBox: Sandbox;
let toolChanges = 0;

beforeAll(async () => {
  ensureBuilt();
  box = await sandbox('plinth-gateway-search-');
  const hook = join(box.base, 'gatekeeper.mjs');
  // The same hook as a direct call would meet: it sees the tool's own name and arguments.
  await writeFile(
    hook,
    `import { readFileSync } from 'node:fs';
const { context } = JSON.parse(readFileSync(0, 'utf8'));
if (context.tool === 'fx__echo') process.stdout.write(JSON.stringify({ allow: true, context: { args: { text: 'rewritten: ' + context.args.text } } }));
else if (context.tool === 'fx__fail') process.stdout.write(JSON.stringify({ allow: false, message: 'fail is not allowed through the gateway' }));
else process.stdout.write(JSON.stringify({ allow: true }));
`,
  );
  const servers = { fx: fixtureStdio(), everything: everything() };
  const hooks = { hooks: { before_tool: [{ name: 'gatekeeper', command: 'node', args: [hook] }] } };
  await box.settings(baseSettings(servers, { ...hooks, plugins: { gateway: { settings: { toolMode: 'search', pinnedTools: ['fx__echo', 'fx__pin_*'] } } } }));
  ({ client } = await stdioGateway(box));
  client.setNotificationHandler('notifications/tools/list_changed', () => void toolChanges++);
  // The same servers in `all` mode (the default): what a direct listing shows.
  directBox = await sandbox('plinth-gateway-search-all-');
  await directBox.settings(baseSettings(servers, hooks));
  ({ client: direct } = await stdioGateway(directBox));
}, TEST_TIMEOUT);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await direct?.close().catch(() => undefined);
  await box?.remove();
  await directBox?.remove();
});

describe('plinth serve --stdio with toolMode "search"', () => {
  test('tools/list: the pinned tools with their upstream definitions, then search_tools and call_tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['fx__echo', 'search_tools', 'call_tool']);
    const all = (await direct.listTools()).tools;
    expect(all.length).toBeGreaterThan(20);
    expect(tools[0]).toEqual(all.find((t) => t.name === 'fx__echo'));
    expect(tools[1]!.inputSchema).toMatchObject({ required: ['query'] });
    expect(tools[2]!.inputSchema).toMatchObject({ required: ['name'] });
  }, TEST_TIMEOUT);

  test('a host that defers tool definitions itself still lists everything: asked in _meta, the unpinned ones marked deferred', async () => {
    const { tools } = await client.listTools({ _meta: { 'io.plinth/tools': 'all' } });
    const all = (await direct.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual([...all.map((t) => t.name), 'search_tools', 'call_tool']);
    const echo = tools.find((t) => t.name === 'fx__echo')!;
    expect(echo).toEqual(all.find((t) => t.name === 'fx__echo'));
    const others = tools.filter((t) => t.name !== 'fx__echo' && t.name !== 'search_tools' && t.name !== 'call_tool');
    expect(others.length).toBeGreaterThan(20);
    for (const tool of others) {
      expect(tool._meta?.['io.plinth/deferred']).toBe(true);
      const { _meta, ...rest } = tool;
      const { _meta: upstreamMeta, ...upstream } = all.find((t) => t.name === tool.name)!;
      expect(rest).toEqual(upstream);
      expect({ ..._meta, 'io.plinth/deferred': undefined }).toEqual({ ...upstreamMeta, 'io.plinth/deferred': undefined });
    }
  }, TEST_TIMEOUT);

  test('search_tools answers with the full definitions of the matching tools, as all mode lists them', async () => {
    const all = new Map((await direct.listTools()).tools.map((t) => [t.name, t]));
    const result = (await client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers sum', limit: 3 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const found = (result.structuredContent as { tools: Array<{ name: string }> }).tools;
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(3);
    expect(found.map((t) => t.name)).toContain('fx__add');
    // Full definitions: exactly what `all` mode lists (input and output schemas, annotations).
    for (const tool of found) expect(tool).toEqual(all.get(tool.name));
    expect(JSON.parse(text(result))).toEqual(result.structuredContent);

    const only = (await client.callTool({ name: 'search_tools', arguments: { query: 'echo', servers: ['everything'] } })) as CallToolResult;
    const names = (only.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(names).toContain('everything__echo');
    expect(names.every((n) => n.startsWith('everything__'))).toBe(true);
  }, TEST_TIMEOUT);

  test('call_tool reaches the upstream tool; its arguments are checked against the upstream schema', async () => {
    const sum = (await client.callTool({ name: 'call_tool', arguments: { name: 'fx__add', arguments: { a: 2, b: 3 } } })) as CallToolResult;
    expect(sum.isError).toBeFalsy();
    expect(text(sum)).toBe('5');
    expect(sum.structuredContent).toEqual({ sum: 5 });
    expect(text(await client.callTool({ name: 'call_tool', arguments: { name: 'everything__get-sum', arguments: { a: 40, b: 2 } } }))).toContain('42');

    const invalid = (await client.callTool({ name: 'call_tool', arguments: { name: 'fx__add', arguments: { a: 'two', b: 3 } } })) as CallToolResult;
    const directInvalid = (await direct.callTool({ name: 'fx__add', arguments: { a: 'two', b: 3 } })) as CallToolResult;
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toBe(text(directInvalid));

    const unknown = (await client.callTool({ name: 'call_tool', arguments: { name: 'fx__nope', arguments: {} } })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain('PLN_E_GATEWAY_UNKNOWN');
  }, TEST_TIMEOUT);

  test('a before_tool hook blocks and rewrites a call through call_tool exactly as it does a direct call', async () => {
    const blocked = (await client.callTool({ name: 'call_tool', arguments: { name: 'fx__fail', arguments: { message: 'x' } } })) as CallToolResult;
    const blockedDirect = (await direct.callTool({ name: 'fx__fail', arguments: { message: 'x' } })) as CallToolResult;
    expect(blocked.isError).toBe(true);
    expect(text(blocked)).toContain('PLN_E_MCP_BLOCKED');
    expect(text(blocked)).toContain('user:gatekeeper');
    expect(text(blocked)).toContain('fail is not allowed through the gateway');
    expect(text(blocked)).toBe(text(blockedDirect));

    const rewritten = await client.callTool({ name: 'call_tool', arguments: { name: 'fx__echo', arguments: { text: 'original' } } });
    expect(text(rewritten)).toBe('rewritten: original');
    expect(text(await direct.callTool({ name: 'fx__echo', arguments: { text: 'original' } }))).toBe('rewritten: original');
  }, TEST_TIMEOUT);

  test('a pinned tool that appears or goes upstream is announced with list_changed', async () => {
    // A tool nobody pinned comes and is not listed; then one matching "fx__pin_*" does.
    await client.callTool({ name: 'call_tool', arguments: { name: 'fx__add_tool', arguments: { name: 'other' } } });
    const before = toolChanges;
    await client.callTool({ name: 'call_tool', arguments: { name: 'fx__add_tool', arguments: { name: 'pin_me' } } });
    await until('list_changed for the pinned tool', () => toolChanges > before);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['fx__echo', 'fx__pin_me', 'search_tools', 'call_tool']);
    // The unpinned one is found by search and callable through call_tool.
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'Added at run time other' } })) as CallToolResult;
    expect((found.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain('fx__other');
    expect(text(await client.callTool({ name: 'call_tool', arguments: { name: 'fx__other', arguments: { text: 'hi' } } }))).toBe('other: hi');

    // And when it goes.
    const listed = toolChanges;
    await client.callTool({ name: 'call_tool', arguments: { name: 'fx__remove_tool', arguments: { name: 'pin_me' } } });
    await until('list_changed for the pinned tool gone', () => toolChanges > listed);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['fx__echo', 'search_tools', 'call_tool']);
  }, TEST_TIMEOUT);
});

describe('a modern (2026-07-28) client in search mode', () => {
  test('the same list; call_tool goes through the hooks, and an upstream elicitation during it comes back as input_required and is answered', async () => {
    const modern = new Client({ name: 'modern-host', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: {} } });
    await modern.connect(
      new StdioClientTransport({ command: process.execPath, args: [BIN, ...box.dirs, 'serve', '--stdio'], cwd: box.workspace, env: cleanEnv({}, { ci: true }) as Record<string, string>, stderr: 'pipe' }),
    );
    try {
      expect((await modern.listTools()).tools.map((t) => t.name)).toEqual(['fx__echo', 'search_tools', 'call_tool']);
      const blocked = (await modern.callTool({ name: 'call_tool', arguments: { name: 'fx__fail', arguments: {} } })) as CallToolResult;
      expect(text(blocked)).toContain('PLN_E_MCP_BLOCKED');
      modern.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada', age: 36, colour: 'green', subscribe: false } }));
      const answer = JSON.parse(text(await modern.callTool({ name: 'call_tool', arguments: { name: 'fx__ask', arguments: { message: 'Who?' } } })));
      expect(answer).toMatchObject({ action: 'accept', content: { name: 'Ada' } });
    } finally {
      await modern.close().catch(() => undefined);
    }
  }, TEST_TIMEOUT);
});
