/**
 * `plinth serve --stdio` as a host sees it: the SDK's `Client` spawns the
 * built CLI, which serves real upstream servers — server-everything over
 * stdio, the fixture server over stdio, streamable HTTP and SSE — with every
 * tool call through plinth's hooks, and upstream trouble reported, not hung on.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, run, sandbox } from './support/cli.js';
import { alive, baseSettings, everything, fixtureStdio, httpFixture, stdioGateway, until } from './support/gateway.js';
import { startOAuthFixture, type OAuthFixture } from './support/oauth-server.js';

const TEST_TIMEOUT = 120_000;
const clients: Client[] = [];
const boxes: Sandbox[] = [];

let upstream: Awaited<ReturnType<typeof httpFixture>>;
beforeAll(async () => {
  ensureBuilt();
  upstream = await httpFixture();
}, 300_000);
afterAll(() => upstream?.close());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(boxes.splice(0).map((b) => b.remove()));
});

async function gateway(settings: Record<string, unknown>, capabilities = {}) {
  const box = await sandbox('plinth-gateway-');
  boxes.push(box);
  await box.settings(settings);
  const served = await stdioGateway(box, capabilities);
  clients.push(served.client);
  return { ...served, box };
}

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;
const contentText = (read: { contents: ReadonlyArray<Record<string, unknown>> }) => String(read.contents[0]!.text);

describe('plinth serve --stdio: the union of the servers', () => {
  let host: Awaited<ReturnType<typeof gateway>>;
  beforeAll(async () => {
    host = await gateway(baseSettings({ everything: everything(), web: { url: upstream.url }, legacy: { url: upstream.sse, transport: 'sse' } }));
    clients.splice(clients.indexOf(host.client), 1); // shared by the tests below
  }, TEST_TIMEOUT);
  afterAll(() => host?.client.close());

  test('tools of every server, namespaced, with the upstream schemas, annotations and output schemas unchanged', async () => {
    const { tools } = await host.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'web__echo', 'web__add', 'legacy__echo']));
    // What the fixture itself lists, seen by a client of its own, is what the gateway lists under the new name.
    const direct = new Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    const listed = (await direct.listTools()).tools;
    await direct.close();
    for (const name of ['add', 'echo', 'complex_args']) {
      expect(tools.find((t) => t.name === `web__${name}`)).toEqual({ ...listed.find((t) => t.name === name), name: `web__${name}` });
    }
    const add = tools.find((t) => t.name === 'web__add')!;
    expect(add.outputSchema).toMatchObject({ type: 'object', properties: { sum: { type: 'number' } } });
    const echo = tools.find((t) => t.name === 'web__echo')!;
    expect(echo.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
  }, TEST_TIMEOUT);

  test('calls reach each server over its own transport, structured content included', async () => {
    expect(text(await host.client.callTool({ name: 'everything__echo', arguments: { message: 'hello' } }))).toBe('Echo: hello');
    const sum = (await host.client.callTool({ name: 'web__add', arguments: { a: 2, b: 3 } })) as CallToolResult;
    expect(sum.structuredContent).toEqual({ sum: 5 });
    expect(text(await host.client.callTool({ name: 'legacy__echo', arguments: { text: 'over sse' } }))).toBe('over sse');
    // An upstream's own isError stays an error result.
    const failed = (await host.client.callTool({ name: 'web__fail', arguments: { message: 'nope' } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    // plinth's argument check answers before the server is asked.
    const invalid = (await host.client.callTool({ name: 'web__add', arguments: { a: 'two' } })) as CallToolResult;
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toContain('PLN_E_MCP_ARGS_INVALID');
  }, TEST_TIMEOUT);

  test('resources with URIs kept; a URI two servers list is served once plainly and once shadowed; templates read', async () => {
    const { resources } = await host.client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris[0]).toBe('plinth://gateway/status');
    expect(uris).toContain('fixture://docs/readme');
    expect(uris.some((u) => u.startsWith('demo://resource/'))).toBe(true);
    // web and legacy are the same fixture: the first (definition order) keeps the URI.
    const shadowed = uris.find((u) => u.startsWith('plinth://server/legacy?uri='))!;
    expect(decodeURIComponent(shadowed.split('uri=')[1]!)).toBe('fixture://docs/readme');
    const plain = await host.client.readResource({ uri: 'fixture://docs/readme' });
    expect(contentText(plain)).toContain('plinth MCP fixture server');
    const viaShadow = await host.client.readResource({ uri: shadowed });
    expect(viaShadow.contents[0]!.uri).toBe(shadowed);
    expect(contentText(viaShadow)).toBe(contentText(plain));

    const { resourceTemplates } = await host.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('fixture://notes/{topic}');
    const note = await host.client.readResource({ uri: 'fixture://notes/alpha' });
    expect(contentText(note)).toBe('Note about alpha.');
    await expect(host.client.readResource({ uri: 'nowhere://x' })).rejects.toThrow(/PLN_E_GATEWAY_UNKNOWN/);
  }, TEST_TIMEOUT);

  test('prompts namespaced and got; completions of prompt arguments and template variables', async () => {
    const { prompts } = await host.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['everything__simple-prompt', 'web__greet', 'legacy__greet']));
    const greet = await host.client.getPrompt({ name: 'web__greet', arguments: { name: 'Grace', style: 'formal' } });
    expect(JSON.stringify(greet.messages)).toContain('Good day, Grace.');
    const names = await host.client.complete({ ref: { type: 'ref/prompt', name: 'web__greet' }, argument: { name: 'name', value: 'a' } });
    expect(names.completion.values).toEqual(['Ada', 'Alan']);
    const topics = await host.client.complete({ ref: { type: 'ref/resource', uri: 'fixture://notes/{topic}' }, argument: { name: 'topic', value: 'd' } });
    expect(topics.completion.values).toEqual(['delta']);
  }, TEST_TIMEOUT);

  test('the status resource shows every server connected', async () => {
    const status = JSON.parse(contentText(await host.client.readResource({ uri: 'plinth://gateway/status' })));
    expect(status.servers.map((s: { name: string; state: string }) => [s.name, s.state])).toEqual([
      ['everything', 'connected'],
      ['web', 'connected'],
      ['legacy', 'connected'],
    ]);
  }, TEST_TIMEOUT);

  test('progress is forwarded; a cancelled call is cancelled upstream (after_tool sees PLN_E_MCP_CALL_CANCELLED)', async () => {
    const steps: number[] = [];
    const result = await host.client.callTool({ name: 'web__progress', arguments: { steps: 3, delayMs: 30 } }, { onprogress: (p) => steps.push(p.progress) });
    expect(steps).toEqual([1, 2, 3]);
    expect((result as CallToolResult).isError).toBeFalsy();

    const controller = new AbortController();
    const started = host.client.callTool({ name: 'web__slow', arguments: { ms: 60_000 } }, { signal: controller.signal });
    setTimeout(() => controller.abort('the user pressed stop'), 300);
    await expect(started).rejects.toThrow();
    // The gateway is still fine, and answers the next call at once.
    expect(text(await host.client.callTool({ name: 'web__echo', arguments: { text: 'after' } }))).toBe('after');
  }, TEST_TIMEOUT);
});

describe('plinth serve --stdio: hooks on every call', () => {
  test('a before_tool hook blocks one tool (an error result naming the hook and reason), another rewrites arguments, after_tool sees results', async () => {
    const box = await sandbox('plinth-gateway-hooks-');
    boxes.push(box);
    const rewrite = join(box.base, 'rewrite.mjs');
    const seen = join(box.base, 'after.jsonl');
    await writeFile(
      rewrite,
      `import { readFileSync } from 'node:fs';
const input = JSON.parse(readFileSync(0, 'utf8'));
const { context } = input;
if (context.tool === 'fx__echo') process.stdout.write(JSON.stringify({ allow: true, context: { args: { text: 'rewritten: ' + context.args.text } } }));
else if (context.tool === 'fx__fail') process.stdout.write(JSON.stringify({ allow: false, message: 'fail is not allowed through the gateway' }));
else process.stdout.write(JSON.stringify({ allow: true }));
`,
    );
    const after = join(box.base, 'after.mjs');
    await writeFile(
      after,
      `import { appendFileSync, readFileSync } from 'node:fs';
const { context } = JSON.parse(readFileSync(0, 'utf8'));
appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ tool: context.tool, ok: context.result.ok, code: context.result.error?.code ?? null }) + '\\n');
process.stdout.write(JSON.stringify({ allow: true }));
`,
    );
    await box.settings(
      baseSettings(
        { fx: fixtureStdio() },
        { hooks: { before_tool: [{ name: 'gatekeeper', command: 'node', args: [rewrite] }], after_tool: [{ name: 'audit', command: 'node', args: [after] }] } },
      ),
    );
    const { client } = await stdioGateway(box);
    clients.push(client);

    const blocked = (await client.callTool({ name: 'fx__fail', arguments: { message: 'x' } })) as CallToolResult;
    expect(blocked.isError).toBe(true);
    expect(text(blocked)).toContain('PLN_E_MCP_BLOCKED');
    expect(text(blocked)).toContain('user:gatekeeper');
    expect(text(blocked)).toContain('fail is not allowed through the gateway');

    expect(text(await client.callTool({ name: 'fx__echo', arguments: { text: 'original' } }))).toBe('rewritten: original');

    const controller = new AbortController();
    const slow = client.callTool({ name: 'fx__slow', arguments: { ms: 60_000 } }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(slow).rejects.toThrow();
    await until('after_tool of the cancelled call', async () => (await readFile(seen, 'utf8').catch(() => '')).includes('fx__slow'));
    const audit = (await readFile(seen, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
    expect(audit).toEqual(
      expect.arrayContaining([
        { tool: 'fx__echo', ok: true, code: null },
        { tool: 'fx__slow', ok: false, code: 'PLN_E_MCP_CALL_CANCELLED' },
      ]),
    );
    // The blocked call never ran, so after_tool never saw it.
    expect(audit.some((a) => a.tool === 'fx__fail')).toBe(false);
  }, TEST_TIMEOUT);
});

describe('plinth serve --stdio: requests from upstream servers', () => {
  test("an upstream elicitation is answered by the downstream client that declared elicitation", async () => {
    const { client } = await gateway(baseSettings({ fx: fixtureStdio() }), { elicitation: {} });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Grace', age: 36, colour: 'blue', subscribe: true } };
    });
    const answer = JSON.parse(text(await client.callTool({ name: 'fx__ask', arguments: { message: 'Who are you?' } })));
    expect(asked).toEqual(['Who are you?']);
    expect(answer).toMatchObject({ action: 'accept', content: { name: 'Grace', age: 36, colour: 'blue' } });
  }, TEST_TIMEOUT);

  test('without the capability downstream, plinth answers as it does alone: elicitation declined, roots = the workspace', async () => {
    const { client, box } = await gateway(baseSettings({ fx: fixtureStdio() }));
    const answer = JSON.parse(text(await client.callTool({ name: 'fx__ask', arguments: {} })));
    expect(answer.action).toBe('decline');
    const roots = JSON.parse(text(await client.callTool({ name: 'fx__roots', arguments: {} })));
    expect(JSON.stringify(roots)).toContain(box.workspace.split('/').pop());
  }, TEST_TIMEOUT);

  test('an upstream sampling request is answered by the downstream client that declared sampling', async () => {
    const { client } = await gateway(baseSettings({ fx: fixtureStdio() }), { sampling: {} });
    client.setRequestHandler('sampling/createMessage', async (request) => ({
      role: 'assistant',
      model: 'host-model',
      content: { type: 'text', text: `sampled: ${(request.params.messages[0]!.content as { text: string }).text}` },
    }));
    const answer = JSON.parse(text(await client.callTool({ name: 'fx__sample', arguments: { prompt: 'a haiku' } })));
    expect(answer).toMatchObject({ model: 'host-model', content: { text: 'sampled: a haiku' } });
  }, TEST_TIMEOUT);

  test('roots come from the downstream client when it declares roots', async () => {
    const { client } = await gateway(baseSettings({ fx: fixtureStdio() }), { roots: { listChanged: true } });
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///srv/host-project', name: 'host-project' }] }));
    const roots = JSON.parse(text(await client.callTool({ name: 'fx__roots', arguments: {} })));
    expect(JSON.stringify(roots)).toContain('file:///srv/host-project');
  }, TEST_TIMEOUT);
});

describe('plinth serve --stdio: upstream trouble', () => {
  test('an upstream crash: the call fails, tools/list_changed, health restarts it, list_changed again, tools back', async () => {
    const { box } = { box: await sandbox('plinth-gateway-crash-') };
    boxes.push(box);
    const pidFile = join(box.base, 'pid.json');
    await box.settings(baseSettings({ fx: fixtureStdio('--pid-file', pidFile) }));
    const { client } = await stdioGateway(box);
    clients.push(client);
    let changes = 0;
    let statusUpdates = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => void changes++);
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      if (n.params.uri === 'plinth://gateway/status') statusUpdates++;
    });
    await client.subscribeResource({ uri: 'plinth://gateway/status' });
    await until('the pid file', async () => (await readFile(pidFile, 'utf8').catch(() => '')).includes('pid'));
    const first = JSON.parse(await readFile(pidFile, 'utf8')).pid as number;

    await client.callTool({ name: 'fx__exit', arguments: { code: 1, delayMs: 20 } });
    await until('the old server to exit', () => !alive(first));
    await until('list_changed after the crash', () => changes >= 1);
    await until('the tools back after the restart', async () => (await client.listTools()).tools.some((t) => t.name === 'fx__echo'), 60_000);
    expect(changes).toBeGreaterThanOrEqual(2);
    const second = JSON.parse(await readFile(pidFile, 'utf8')).pid as number;
    expect(second).not.toBe(first);
    expect(text(await client.callTool({ name: 'fx__echo', arguments: { text: 'back' } }))).toBe('back');
    const status = JSON.parse(contentText(await client.readResource({ uri: 'plinth://gateway/status' })));
    expect(status.servers[0]).toMatchObject({ name: 'fx', state: 'connected' });
    expect(statusUpdates).toBeGreaterThanOrEqual(2);
    // The host goes: plinth stops, and takes its server along.
    await client.close();
    await until('the upstream to stop with the gateway', () => !alive(second), 20_000);
  }, TEST_TIMEOUT);

  test('a crashed server nothing restarts any more: the fix names what acts on this gateway (restart plinth serve), not `plinth mcp restart`, which runs in a process of its own', async () => {
    for (const health of [{ settings: { maxRestarts: 0 } }, { enabled: false }]) {
      const { box } = { box: await sandbox('plinth-gateway-gone-') };
      boxes.push(box);
      await box.settings(baseSettings({ fx: fixtureStdio() }, { plugins: { health } }));
      const { client } = await stdioGateway(box);
      clients.push(client);
      await client.callTool({ name: 'fx__exit', arguments: { code: 1, delayMs: 20 } });
      const fx = async () => JSON.parse(contentText(await client.readResource({ uri: 'plinth://gateway/status' }))).servers[0];
      await until('the server to be reported gone', async () => (await fx()).state !== 'connected' && (health.enabled === false || (await fx()).health === 'failed'));
      const reported = await fx();
      const call = (await client.callTool({ name: 'fx__echo', arguments: { text: 'x' } })) as CallToolResult;
      expect(call.isError).toBe(true);
      for (const fix of [reported.fix as string, text(call)]) {
        expect(fix).not.toContain('plinth mcp restart');
        expect(fix).toContain('restart `plinth serve`');
        expect(fix).toContain('`plinth mcp status fx` in a terminal starts it apart from this gateway');
      }
      expect(reported.fix).toContain(health.enabled === false ? 'nothing restarts it while the health plugin is off' : 'health gave up restarting it');
      await client.close();
    }
  }, TEST_TIMEOUT);

  describe('a server that needs a sign-in', () => {
    let oauth: OAuthFixture;
    beforeAll(async () => {
      oauth = await startOAuthFixture({ separateAuthServer: true });
    });
    afterAll(() => oauth?.close());

    test('is in the status resource and in tool error results with the fix, and the other servers serve', async () => {
      const { client } = await gateway(
        baseSettings({ fx: fixtureStdio(), secure: { url: oauth.mcpUrl } }, { plugins: { oauth: { settings: { openBrowser: false } } } }),
      );
      const status = JSON.parse(contentText(await client.readResource({ uri: 'plinth://gateway/status' })));
      const secure = status.servers.find((s: { name: string }) => s.name === 'secure');
      expect(secure.state).toBe('error');
      expect(secure.error.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
      expect(secure.fix).toContain('plinth auth login secure');

      const call = (await client.callTool({ name: 'secure__whoami', arguments: {} })) as CallToolResult;
      expect(call.isError).toBe(true);
      expect(text(call)).toContain('PLN_E_GATEWAY_SERVER_UNAVAILABLE');
      expect(text(call)).toContain('PLN_E_OAUTH_SIGNIN_REQUIRED');
      expect(text(call)).toContain('plinth auth login secure');
      expect(text(await client.callTool({ name: 'fx__echo', arguments: { text: 'still here' } }))).toBe('still here');
    }, TEST_TIMEOUT);
  });
});

describe('plinth serve --stdio: a workspace server not yet approved', () => {
  test('is reported, not started and not waited for: the status names the approval to give', async () => {
    const box = await sandbox('plinth-gateway-untrusted-');
    boxes.push(box);
    await box.settings(baseSettings({ fx: fixtureStdio() }));
    await mkdir(join(box.workspace, '.plinth'), { recursive: true });
    await writeFile(join(box.workspace, '.plinth', 'settings.json'), JSON.stringify({ mcpServers: { repo: fixtureStdio('--name', 'repo') } }));
    const { client } = await stdioGateway(box);
    clients.push(client);
    const status = JSON.parse(contentText(await client.readResource({ uri: 'plinth://gateway/status' })));
    const repo = status.servers.find((s: { name: string }) => s.name === 'repo');
    expect(repo.error.code).toBe('PLN_E_MCP_UNTRUSTED');
    expect(repo.fix).toMatch(/plinth trust approve mcp-server repo/);
    const call = (await client.callTool({ name: 'repo__echo', arguments: { text: 'x' } })) as CallToolResult;
    expect(call.isError).toBe(true);
    expect(text(call)).toContain('PLN_E_MCP_UNTRUSTED');
    expect((await client.listTools()).tools.some((t) => t.name.startsWith('repo__'))).toBe(false);
  }, TEST_TIMEOUT);
});

describe('plinth serve: names without the prefix', () => {
  test('prefix: false serves a server\'s tools and prompts under their own names', async () => {
    const { client } = await gateway(baseSettings({ fx: { ...fixtureStdio(), prefix: false }, everything: everything() }));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('add');
    expect(names).toContain('everything__echo');
    expect(names).not.toContain('fx__add');
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'plain' } }))).toBe('plain');
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('greet');
  }, TEST_TIMEOUT);

  test('two servers without the prefix that share a tool name: refused at start, naming both', async () => {
    const box = await sandbox('plinth-gateway-collide-');
    boxes.push(box);
    await box.settings(baseSettings({ one: { ...fixtureStdio(), prefix: false }, two: { ...fixtureStdio(), prefix: false } }));
    const result = await run(box, ['serve', '--stdio']);
    expectExit(result, 1);
    expect(result.stderr).toContain('PLN_E_GATEWAY_NAME_COLLISION');
    expect(result.stderr).toMatch(/tools \("echo", .*\) .*are served by both "one" and "two"/);
    expect(result.stdout).toBe('');
  }, TEST_TIMEOUT);

  test('serve needs exactly one of --stdio and --http', async () => {
    const box = await sandbox('plinth-gateway-usage-');
    boxes.push(box);
    const result = await run(box, ['serve']);
    expectExit(result, 2);
    expect(result.stderr).toContain('PLN_E_CLI_USAGE');
  }, TEST_TIMEOUT);
});
