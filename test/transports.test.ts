/**
 * The transport plugins with the SDK's own `Client`, against real servers on
 * 127.0.0.1: the fixture servers in test/fixtures/mcp/servers/ (stdio, and
 * one HTTP process serving streamable HTTP and legacy SSE) and
 * server-everything (stdio and streamable HTTP). Each stdio test checks by pid
 * that nothing is left running; the third-party transport is loaded through a
 * real kernel.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import type { OAuthClientProvider, CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import type { McpServerDefinition, TransportConnection, TransportContext, TransportFactory } from 'plinth/sdk';
import { createHttpTransportFactory, HTTP_DEFAULTS } from '../plugins/transport-http/index.js';
import { createSseTransportFactory } from '../plugins/transport-sse/index.js';
import { createLauncher } from '../plugins/launcher/index.js';
import { createStdioTransportFactory, STDIO_DEFAULTS } from '../plugins/transport-stdio/index.js';
import { createTestKernel } from '../testing/index.js';
import { isAlive } from '../internal/process/tree.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVERS = join(ROOT, 'test/fixtures/mcp/servers');
const STDIO_SERVER = join(SERVERS, 'stdio-server.mjs');
const HTTP_SERVER = join(SERVERS, 'http-server.mjs');
const LOOPBACK_LISTEN = join(SERVERS, 'loopback-listen.mjs');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const LOOPBACK_PLUGIN = join(ROOT, 'test/fixtures/plugins/transport-loopback');
const SECRET = 's3cret-value-42';
/** stdio servers start through a launcher, as in plinth. */
const launcher = createLauncher();

// ── helpers ────────────────────────────────────────────────────────────────

/** A server definition with every field the contract asks for. */
function definition(overrides: Partial<McpServerDefinition> & { name?: string } = {}): McpServerDefinition {
  return {
    name: 'fixture',
    transport: 'stdio',
    args: [],
    env: {},
    cwd: ROOT,
    headers: {},
    connectTimeoutMs: 10_000,
    enabled: true,
    source: 'user',
    origin: 'test',
    secrets: [],
    ...overrides,
  };
}

function stdioDefinition(args: string[] = [], overrides: Partial<McpServerDefinition> = {}): McpServerDefinition {
  return definition({ command: process.execPath, args: [STDIO_SERVER, ...args], ...overrides });
}

/** A transport context whose log lines are kept and whose redactor knows SECRET. */
function context(extra: Partial<TransportContext> = {}): TransportContext & { lines: string[] } {
  const lines: string[] = [];
  const keep = (message: string) => void lines.push(message);
  return {
    lines,
    log: { debug: keep, info: keep, warn: keep, error: keep },
    redact: (text) => text.replaceAll(SECRET, '[redacted]'),
    ...extra,
  };
}


/** Waits for an assertion to hold (bounded generously: shared machines can be slow). */
const eventually = <T>(check: () => T | Promise<T>): Promise<T> => vi.waitFor(check, { timeout: 10_000, interval: 20 });

/** Every pid a test saw, checked (and killed, so one failure does not leak) at the end. */
const seenPids = new Set<number>();
const clients = new Set<Client>();

interface Connected {
  readonly client: Client;
  readonly connection: TransportConnection;
}

async function connect(factory: TransportFactory, server: McpServerDefinition, ctx: TransportContext = context()): Promise<Connected> {
  const connection = await factory.create(server, ctx);
  const client = new Client({ name: 'plinth-transports-test', version: '1.0.0' }, { capabilities: {} });
  clients.add(client);
  await client.connect(connection.transport);
  const pid = connection.pid?.();
  if (pid !== undefined) seenPids.add(pid);
  return { client, connection };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

/**
 * Progress notifications arrive in order, and all but possibly the last: the
 * SDK client drops one that it reads in the same chunk as the result (its
 * progress handler is removed before the notification is dispatched).
 */
function expectProgress(progress: readonly number[], steps: number): void {
  expect(progress.length).toBeGreaterThanOrEqual(steps - 1);
  expect(progress).toEqual(Array.from({ length: progress.length }, (_, i) => i + 1));
}

/** Starts a server process that prints a JSON line with its port on stdout; resolves with that line. */
async function startListening(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; info: Record<string, unknown> }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.resume();
  const lines = createInterface({ input: child.stdout! });
  const info = await new Promise<Record<string, unknown>>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with code ${code} before listening`)));
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (typeof parsed.port === 'number') resolve(parsed);
    });
  });
  return { child, info };
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

afterEach(async () => {
  await Promise.all([...clients].map((client) => client.close().catch(() => {})));
  clients.clear();
});

afterAll(() => {
  const leaked = [...seenPids].filter(isAlive);
  for (const pid of leaked) process.kill(pid, 'SIGKILL');
  expect(leaked).toEqual([]);
});

// ── stdio ──────────────────────────────────────────────────────────────────

describe('transport-stdio', () => {
  const stdio = createStdioTransportFactory(STDIO_DEFAULTS, { launcher: () => launcher });

  test('connects to the fixture server: tools, every content type, logging, progress, list_changed', async () => {
    const { client } = await connect(stdio, stdioDefinition());
    expect(client.getServerVersion()?.name).toBe('plinth-fixture');

    const names = (await client.listTools()).tools.map((tool) => tool.name);
    for (const name of ['echo', 'add', 'image', 'audio', 'embedded_resource', 'log', 'progress', 'add_tool']) expect(names).toContain(name);

    expect(textOf(await call(client, 'echo', { text: 'hi there' }))).toBe('hi there');
    expect((await call(client, 'image')).content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect((await call(client, 'audio')).content[0]).toMatchObject({ type: 'audio', mimeType: 'audio/wav' });
    expect((await call(client, 'embedded_resource')).content[0]).toMatchObject({ type: 'resource', resource: { uri: 'fixture://docs/readme' } });
    expect((await client.readResource({ uri: 'fixture://docs/readme' })).contents[0]).toMatchObject({ text: expect.stringContaining('fixture server') });
    expect((await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } })).messages[0]?.content).toMatchObject({ text: 'Hi Ada!' });

    const logged: unknown[] = [];
    client.setNotificationHandler('notifications/message', (notification) => void logged.push(notification.params.data));
    await call(client, 'log', { message: 'note', count: 2 });
    expect(logged).toEqual(['note 1', 'note 2']);

    const progress: number[] = [];
    await client.callTool({ name: 'progress', arguments: { steps: 3 } }, { onprogress: (p) => void progress.push(p.progress) });
    expectProgress(progress, 3);

    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
    await call(client, 'add_tool', { name: 'late_tool' });
    await eventually(() => expect(changed).toBeGreaterThan(0));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('late_tool');
    expect(textOf(await call(client, 'late_tool', { text: 'x' }))).toBe('late_tool: x');
  });

  test('passes the resolved env over a safe base env, and the cwd; nothing else of plinth\'s environment', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'plinth-stdio-cwd-'));
    process.env.PLINTH_TEST_NOT_INHERITED = 'parent-only';
    try {
      const { client } = await connect(stdio, stdioDefinition([], { cwd, env: { FIXTURE_TOKEN: SECRET } }));
      expect(JSON.parse(textOf(await call(client, 'get_env', { name: 'FIXTURE_TOKEN' })))).toBe(SECRET);
      expect(JSON.parse(textOf(await call(client, 'get_env', { name: 'PATH' })))).toBe(process.env.PATH);
      expect(JSON.parse(textOf(await call(client, 'get_env', { name: 'PLINTH_TEST_NOT_INHERITED' })))).toBeNull();
      expect(textOf(await call(client, 'cwd'))).toBe(cwd);
    } finally {
      delete process.env.PLINTH_TEST_NOT_INHERITED;
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  test('captures stderr, redacted, from the first line on', async () => {
    const { client, connection } = await connect(stdio, stdioDefinition(['--stderr', `starting with token ${SECRET}`]));
    await call(client, 'write_stderr', { text: 'a later line' });
    await eventually(() => expect(connection.stderrTail!()).toContain('a later line'));
    const tail = connection.stderrTail!();
    expect(tail).toContain('starting with token [redacted]');
    expect(tail).not.toContain(SECRET);
  });

  test('keeps only the last bytes of stderr', async () => {
    const bounded = createStdioTransportFactory({ ...STDIO_DEFAULTS, stderrTailBytes: 4096 }, { launcher: () => launcher });
    const { client, connection } = await connect(bounded, stdioDefinition());
    await call(client, 'write_stderr', { text: 'x'.repeat(99), repeat: 2000 });
    await call(client, 'write_stderr', { text: 'the very last line' });
    await eventually(() => expect(connection.stderrTail!()).toContain('the very last line'));
    const tail = connection.stderrTail!();
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(4096 + Buffer.byteLength('…'));
    expect(tail.startsWith('…')).toBe(true);
    expect(tail.split('\n')[1]).toBe('x'.repeat(99)); // dropped a whole line at a time
  });

  test('pid() is the server process itself', async () => {
    const { client, connection } = await connect(stdio, stdioDefinition());
    const reported = JSON.parse(textOf(await call(client, 'pids'))) as { pid: number };
    expect(connection.pid!()).toBe(reported.pid);
  });

  test('close stops the whole tree: children in its group and a child in a session of its own', async () => {
    const { client, connection } = await connect(stdio, stdioDefinition(['--child']));
    const pid = connection.pid!()!;
    const detached = Number(textOf(await call(client, 'spawn_child', { detached: true })));
    const { children } = JSON.parse(textOf(await call(client, 'pids'))) as { children: number[] };
    expect(children).toHaveLength(2);
    const all = [pid, ...children];
    for (const p of all) seenPids.add(p);
    expect(all.every(isAlive)).toBe(true);
    expect(children).toContain(detached);

    await client.close();
    expect(all.filter(isAlive)).toEqual([]);
  });

  test('close stops a server that ignores stdin EOF and SIGTERM, and its children', async () => {
    const down: string[] = [];
    const { client, connection } = await connect(stdio, stdioDefinition(['--ignore-eof', '--ignore-sigterm', '--child']));
    connection.onDown!((reason) => void down.push(reason));
    const pid = connection.pid!()!;
    const { children } = JSON.parse(textOf(await call(client, 'pids'))) as { children: number[] };
    for (const p of children) seenPids.add(p);

    await client.close();
    expect([pid, ...children].filter(isAlive)).toEqual([]);
    expect(down).toEqual([]); // our own close is not the server going down
  });

  test('onDown fires when the server exits on its own, with the exit code and its last stderr line; its children go too', async () => {
    const { client, connection } = await connect(stdio, stdioDefinition(['--child']));
    const pid = connection.pid!()!;
    const { children } = JSON.parse(textOf(await call(client, 'pids'))) as { children: number[] };
    for (const p of children) seenPids.add(p);
    const order: string[] = [];
    const closed = new Promise<void>((resolve) => {
      client.onclose = () => {
        order.push('close');
        resolve();
      };
    });
    const reason = new Promise<string>((resolve) => {
      connection.onDown!((why) => {
        order.push('down');
        resolve(why);
      });
    });

    await call(client, 'write_stderr', { text: 'about to crash' });
    await call(client, 'exit', { code: 3 });
    expect(await reason).toContain('code 3');
    expect(await reason).toContain('about to crash');
    await closed; // the client learns of it as well, after onDown (so a listener on close already knows why)
    expect(order).toEqual(['down', 'close']);
    expect(connection.pid!()).toBeUndefined();
    await eventually(() => expect([pid, ...children].filter(isAlive)).toEqual([]));

    // A listener added after the fact still hears of it.
    expect(await new Promise<string>((resolve) => connection.onDown!(resolve))).toContain('code 3');
  });

  test('after a crash, close finds a process that left the tree but holds the server\'s pipes', async () => {
    const { client, connection } = await connect(stdio, stdioDefinition());
    const holder = Number(textOf(await call(client, 'spawn_child', { detached: true, holdPipes: true })));
    seenPids.add(holder);
    const reason = new Promise<string>((resolve) => connection.onDown!(resolve));
    await call(client, 'exit', { code: 0 });
    expect(await reason).toContain('code 0');
    // Not in the group, no longer a descendant: only its pipes tie it to the server, and the launcher finds it by them.
    await client.close();
    await eventually(() => expect(isAlive(holder)).toBe(false));
  });

  test('a server that exits at start: the connect fails, onDown and the stderr tail say why', async () => {
    const connection = await stdio.create(stdioDefinition(['--stderr', 'fatal: bad configuration', '--exit-at-start', '2']), context());
    const reason = new Promise<string>((resolve) => connection.onDown!(resolve));
    const client = new Client({ name: 't', version: '1' });
    await expect(client.connect(connection.transport)).rejects.toThrow();
    expect(await reason).toContain('code 2');
    expect(await reason).toContain('fatal: bad configuration');
    expect(connection.stderrTail!()).toContain('fatal: bad configuration');
  });

  test('onDown names the signal when the server is killed', async () => {
    const { connection } = await connect(stdio, stdioDefinition());
    const reason = new Promise<string>((resolve) => connection.onDown!(resolve));
    process.kill(connection.pid!()!, 'SIGKILL');
    expect(await reason).toContain('SIGKILL');
  });

  test('servers started and stopped under one teardown signal leave no abort listener on it (no MaxListenersExceededWarning in a long-running host); aborting still stops a running one', async () => {
    // As under `plinth up` or `plinth serve`: the plugin's one signal outlives every connection health restarts.
    const teardown = new AbortController();
    const factory = createStdioTransportFactory(STDIO_DEFAULTS, { launcher: () => launcher, signal: teardown.signal });
    // A listener left per connection would show as one per round: three rounds prove none is left (the
    // assertion is on the count, not on Node's warning, which needs more than ten).
    for (let i = 0; i < 3; i++) {
      const { client } = await connect(factory, stdioDefinition());
      await client.close();
    }
    const { connection } = await connect(factory, stdioDefinition());
    const down = new Promise<string>((resolve) => connection.onDown!(resolve));
    process.kill(connection.pid!()!, 'SIGKILL');
    await down;
    await eventually(() => expect(getEventListeners(teardown.signal, 'abort')).toHaveLength(0));

    const { connection: running } = await connect(factory, stdioDefinition());
    const pid = running.pid!()!;
    expect(getEventListeners(teardown.signal, 'abort')).toHaveLength(1);
    teardown.abort();
    await eventually(() => expect(isAlive(pid)).toBe(false));
  });

  test('a definition without command, a missing program and a missing cwd are coded errors', async () => {
    await expect(stdio.create(definition({ url: 'http://127.0.0.1:9/mcp' }), context())).rejects.toMatchObject({ code: 'PLN_E_MCP_TRANSPORT_CONFIG' });

    const missing = await stdio.create(definition({ command: 'plinth-no-such-program-xyz' }), context());
    await expect(new Client({ name: 't', version: '1' }).connect(missing.transport)).rejects.toMatchObject({ code: 'PLN_E_MCP_STDIO_SPAWN' });

    const nowhere = await stdio.create(stdioDefinition([], { cwd: join(tmpdir(), 'plinth-no-such-dir-xyz') }), context());
    await expect(new Client({ name: 't', version: '1' }).connect(nowhere.transport)).rejects.toMatchObject({ code: 'PLN_E_MCP_STDIO_SPAWN' });
  });

  test('server-everything over stdio: tools, progress notifications, stderr; nothing left after close', async () => {
    const { client, connection } = await connect(stdio, definition({ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] }));
    const pid = connection.pid!()!;
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('echo');
    expect(names).toContain('get-tiny-image');
    expect(textOf(await call(client, 'echo', { message: 'hello' }))).toContain('hello');
    expect((await call(client, 'get-tiny-image')).content.map((block) => block.type)).toContain('image');

    const progress: number[] = [];
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }, { onprogress: (p) => void progress.push(p.progress) });
    expectProgress(progress, 2);
    expect(connection.stderrTail!()).toContain('Starting default (STDIO) server');

    await client.close();
    expect(isAlive(pid)).toBe(false);
  });
});

// ── streamable HTTP and SSE against the fixture's HTTP server ─────────────

describe('HTTP transports against the fixture server', () => {
  let server: ChildProcess | undefined;
  let base = '';
  let mcpUrl = '';
  let sseUrl = '';
  const stats = async () => (await (await fetch(`${base}/stats`)).json()) as { resumes: string[]; drops: number; deleted: string[]; tags: string[]; authorization: string[]; openSseSessions: number };

  beforeAll(async () => {
    const started = await startListening([HTTP_SERVER, '--port', '0']);
    server = started.child;
    mcpUrl = String(started.info.url);
    sseUrl = String(started.info.sse);
    base = mcpUrl.replace(/\/mcp$/, '');
    expect(new URL(base).hostname).toBe('127.0.0.1');
  });
  afterAll(() => stopProcess(server));

  describe('transport-http', () => {
    const http = createHttpTransportFactory({ ...HTTP_DEFAULTS, reconnectDelayMs: 20 });

    test('connects with a session and the configured headers: tools, a call, logging notifications', async () => {
      const { client, connection } = await connect(http, definition({ transport: 'http', url: mcpUrl, headers: { 'X-Fixture-Tag': 'http-tag' } }));
      expect(connection.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('broadcast');
      expect(textOf(await call(client, 'add', { a: 2, b: 3 }))).toBe('5');
      const logged: unknown[] = [];
      client.setNotificationHandler('notifications/message', (notification) => void logged.push(notification.params.data));
      await call(client, 'log', { message: 'over http' });
      expect(logged).toEqual(['over http']);
      expect((await stats()).tags).toContain('http-tag');
    });

    test('resumes a dropped stream with Last-Event-ID: no notification lost or repeated', async () => {
      const { client } = await connect(http, definition({ transport: 'http', url: mcpUrl }));
      const received: string[] = [];
      client.setNotificationHandler('notifications/message', (notification) => void received.push(String(notification.params.data)));
      const before = await stats();

      // The server sends 3 on the standalone GET stream, closes it, and sends 3 more while the client is away.
      await call(client, 'broadcast', { count: 6, prefix: 'resumed', dropAfter: 3 });
      await eventually(() => expect(received).toHaveLength(6));
      expect(received).toEqual(['resumed 1', 'resumed 2', 'resumed 3', 'resumed 4', 'resumed 5', 'resumed 6']);
      const after = await stats();
      expect(after.drops).toBe(before.drops + 1);
      expect(after.resumes.length).toBeGreaterThan(before.resumes.length); // the GET came back with Last-Event-ID

      // And the resumed stream carries what comes next.
      await call(client, 'broadcast', { count: 2, prefix: 'later' });
      await eventually(() => expect(received).toHaveLength(8));
      expect(received.slice(6)).toEqual(['later 1', 'later 2']);
    });

    test('close terminates the session on the server', async () => {
      const { client, connection } = await connect(http, definition({ transport: 'http', url: mcpUrl }));
      const sessionId = connection.transport.sessionId!;
      await client.close();
      expect((await stats()).deleted).toContain(sessionId);
      const reuse = await fetch(mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expect(reuse.status).toBe(404);
    });

    test('uses the auth provider from the context', async () => {
      const authProvider: OAuthClientProvider = {
        redirectUrl: 'http://127.0.0.1/callback',
        clientMetadata: { redirect_uris: ['http://127.0.0.1/callback'] },
        clientInformation: () => undefined,
        tokens: () => ({ access_token: 'fixture-access-token', token_type: 'Bearer' }),
        saveTokens: () => {},
        redirectToAuthorization: () => {},
        saveCodeVerifier: () => {},
        codeVerifier: () => 'verifier',
      };
      const { client } = await connect(http, definition({ transport: 'http', url: mcpUrl }), context({ authProvider }));
      await client.ping();
      expect((await stats()).authorization).toContain('Bearer fixture-access-token');
    });

    test('a definition without an http(s) url is a coded error that does not show the url\'s secret', async () => {
      await expect(http.create(definition({ transport: 'http', command: 'node' }), context())).rejects.toMatchObject({ code: 'PLN_E_MCP_TRANSPORT_CONFIG' });
      const error = await Promise.resolve(http.create(definition({ transport: 'http', url: `ftp://127.0.0.1/?key=${SECRET}` }), context())).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'PLN_E_MCP_TRANSPORT_CONFIG' });
      expect(String((error as Error).message)).not.toContain(SECRET);
    });
  });

  describe('transport-sse', () => {
    const sse = createSseTransportFactory();

    test('connects to the legacy SSE endpoint with the configured headers: tools, a call, logging notifications', async () => {
      const { client } = await connect(sse, definition({ transport: 'sse', url: sseUrl, headers: { 'X-Fixture-Tag': 'sse-tag' } }));
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
      expect(textOf(await call(client, 'echo', { text: 'over sse' }))).toBe('over sse');
      const logged: unknown[] = [];
      client.setNotificationHandler('notifications/message', (notification) => void logged.push(notification.params.data));
      await call(client, 'log', { message: 'sse note', count: 2 });
      expect(logged).toEqual(['sse note 1', 'sse note 2']);
      expect((await stats()).tags).toContain('sse-tag');
      await client.close();
      await eventually(async () => expect((await stats()).openSseSessions).toBe(0));
    });

    test('a definition without a url is a coded error', async () => {
      await expect(sse.create(definition({ transport: 'sse' }), context())).rejects.toMatchObject({ code: 'PLN_E_MCP_TRANSPORT_CONFIG' });
    });

    test('1,600 calls on one connection: each POST its own abort signal, no MaxListenersExceededWarning, close still aborts', async () => {
      // As for streamable HTTP: the SDK gives every POST of a connection one signal, and Node's fetch piles a listener on it per request.
      const warnings: string[] = [];
      const onWarning = (warning: Error) => void warnings.push(`${warning.name}: ${warning.message}`);
      const realFetch = globalThis.fetch;
      const seen = new WeakSet<AbortSignal>();
      const counts = { withSignal: 0, reused: 0 };
      const signals: AbortSignal[] = [];
      globalThis.fetch = (input, init) => {
        const signal = init?.signal;
        if (signal && init?.method === 'POST') {
          counts.withSignal++;
          if (seen.has(signal)) counts.reused++;
          seen.add(signal);
          if (signals.length < 1) signals.push(signal);
        }
        return realFetch(input, init);
      };
      process.on('warning', onWarning);
      try {
        const { client } = await connect(sse, definition({ transport: 'sse', url: sseUrl }));
        for (let i = 0; i < 1_600; i++) expect(textOf(await call(client, 'echo', { text: `call ${i}` }))).toBe(`call ${i}`);
        expect(counts.withSignal).toBeGreaterThan(1_600);
        expect(counts.reused).toBe(0);
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);
        // A request's own signal still follows the connection's: closing aborts it.
        expect(signals[0]?.aborted).toBe(false);
        await client.close();
        expect(signals[0]?.aborted).toBe(true);
      } finally {
        globalThis.fetch = realFetch;
        process.off('warning', onWarning);
      }
    }, 120_000);
  });
});

// ── streamable HTTP sessions across a server restart ───────────────────────

describe('transport-http when the server forgets the session or goes away', () => {
  let server: ChildProcess | undefined;
  let base = '';
  let mcpUrl = '';
  const stats = async () => (await (await fetch(`${base}/stats`)).json()) as { initialized: number; sessions: string[]; gets: number };
  const forget = async () => ((await (await fetch(`${base}/forget`, { method: 'POST' })).json()) as { forgotten: string[] }).forgotten;

  beforeAll(async () => {
    const started = await startListening([HTTP_SERVER, '--port', '0']);
    server = started.child;
    mcpUrl = String(started.info.url);
    base = mcpUrl.replace(/\/mcp$/, '');
  });
  afterAll(() => stopProcess(server));

  /** A client that declares capabilities of its own, to see them repeated in a new session. */
  async function connectWith(factory: TransportFactory, url: string, ctx: TransportContext = context()): Promise<Connected> {
    const connection = await factory.create(definition({ transport: 'http', url }), ctx);
    const client = new Client({ name: 'plinth-session-test', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    clients.add(client);
    await client.connect(connection.transport);
    return { client, connection };
  }

  test('404 for the session: the next call starts a new session with the same handshake and is answered', async () => {
    // No stream reconnects during the test: the call is the first to meet the forgotten session.
    const http = createHttpTransportFactory({ ...HTTP_DEFAULTS, reconnectDelayMs: 60_000 });
    const { client, connection } = await connectWith(http, mcpUrl);
    const old = connection.transport.sessionId!;
    const before = await stats();
    expect(await forget()).toContain(old);

    expect(textOf(await call(client, 'echo', { text: 'after the restart' }))).toBe('after the restart');
    const renewed = connection.transport.sessionId;
    expect(renewed).toBeDefined();
    expect(renewed).not.toBe(old);
    const after = await stats();
    expect(after.initialized).toBe(before.initialized + 1);
    expect(after.sessions).toContain(renewed);
    // The server of the new session heard the client's own initialize again.
    expect(JSON.parse(textOf(await call(client, 'client_capabilities')))).toEqual({ roots: { listChanged: true } });
  });

  test('the standalone stream finds the session gone: a new session starts without a call, and notifications come on its stream', async () => {
    const http = createHttpTransportFactory({ ...HTTP_DEFAULTS, reconnectDelayMs: 20 });
    const before = await stats();
    const { client, connection } = await connectWith(http, mcpUrl);
    await eventually(async () => expect((await stats()).gets).toBeGreaterThan(before.gets)); // the GET stream is open
    const old = connection.transport.sessionId!;
    await forget();

    await eventually(async () => expect((await stats()).initialized).toBe(before.initialized + 2));
    await eventually(() => expect(connection.transport.sessionId).not.toBe(old));
    const received: string[] = [];
    client.setNotificationHandler('notifications/message', (notification) => void received.push(String(notification.params.data)));
    await call(client, 'broadcast', { count: 2, prefix: 'new stream' });
    await eventually(() => expect(received).toEqual(['new stream 1', 'new stream 2']));
  });

  test('a request the lost session had accepted fails with "connection closed" at once, not at its timeout', async () => {
    const http = createHttpTransportFactory({ ...HTTP_DEFAULTS, reconnectDelayMs: 20 });
    const { client } = await connectWith(http, mcpUrl);
    const pending = client.callTool({ name: 'slow', arguments: { ms: 25_000 } }, { timeout: 20_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 200)); // the server has the call
    await forget();
    expect(await pending).toMatchObject({ code: -32000, message: expect.stringContaining('lost the session') });
    expect(textOf(await call(client, 'echo', { text: 'still usable' }))).toBe('still usable');
  });

  test('a server that cannot be reached any more: onDown says why, the transport closes, the pending call fails at once', async () => {
    const own = await startListening([HTTP_SERVER, '--port', '0']);
    try {
      const http = createHttpTransportFactory({ ...HTTP_DEFAULTS, reconnectDelayMs: 20 });
      const { client, connection } = await connectWith(http, String(own.info.url));
      const downs: string[] = [];
      connection.onDown?.((reason) => void downs.push(reason));
      let closed = false;
      client.onclose = () => void (closed = true);
      const pending = client.callTool({ name: 'slow', arguments: { ms: 25_000 } }, { timeout: 20_000 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      own.child.kill('SIGKILL');
      expect(await pending).toMatchObject({ code: 'CONNECTION_CLOSED' }); // the SDK's own SdkError (it was -32000 in v1)
      expect(closed).toBe(true);
      expect(downs).toEqual([expect.stringContaining('ECONNREFUSED')]);
    } finally {
      await stopProcess(own.child);
    }
  });

  test('server-everything restarted on the same port (it answers a session it does not know with 400): the next call is answered in a new session', async () => {
    let everything = await startListening(['--import', LOOPBACK_LISTEN, EVERYTHING, 'streamableHttp'], { PORT: '0' });
    const port = String(everything.info.port);
    try {
      const http = createHttpTransportFactory({ ...HTTP_DEFAULTS, reconnectDelayMs: 60_000 });
      const { client, connection } = await connectWith(http, `http://127.0.0.1:${port}/mcp`);
      expect(textOf(await call(client, 'echo', { message: 'first' }))).toContain('first');
      const old = connection.transport.sessionId;
      const exited = new Promise((resolve) => everything.child.once('exit', resolve));
      everything.child.kill('SIGKILL');
      await exited;
      everything = await startListening(['--import', LOOPBACK_LISTEN, EVERYTHING, 'streamableHttp'], { PORT: port });
      expect(textOf(await call(client, 'echo', { message: 'second' }))).toContain('second');
      expect(connection.transport.sessionId).not.toBe(old);
    } finally {
      await stopProcess(everything.child);
    }
  });
});

// ── server-everything over streamable HTTP ─────────────────────────────────

describe('transport-http against server-everything', () => {
  let server: ChildProcess | undefined;
  let url = '';

  beforeAll(async () => {
    // server-everything listens on PORT on every interface; the preload binds it to 127.0.0.1 and reports the port.
    const started = await startListening(['--import', LOOPBACK_LISTEN, EVERYTHING, 'streamableHttp'], { PORT: '0' });
    server = started.child;
    url = `http://127.0.0.1:${String(started.info.port)}/mcp`;
  });
  afterAll(() => stopProcess(server));

  test('tools, a call, progress notifications; close ends the session', async () => {
    const { client, connection } = await connect(createHttpTransportFactory(), definition({ name: 'everything', transport: 'http', url }));
    expect(connection.transport.sessionId).toBeDefined();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('echo');
    expect(textOf(await call(client, 'echo', { message: 'over http' }))).toContain('over http');
    const progress: number[] = [];
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }, { onprogress: (p) => void progress.push(p.progress) });
    expectProgress(progress, 2);

    const sessionId = connection.transport.sessionId!;
    await client.close();
    // server-everything answers an unknown session with 400.
    const reuse = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(reuse.status).toBe(400);
  });

  test('300 calls through the mcp pipeline on one connection: each request its own abort signal, no MaxListenersExceededWarning', async () => {
    // Node's fetch adds an abort listener to the signal of each request and removes it only once the request
    // is garbage-collected: the SDK's one signal per connection would collect them past Node's limit.
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void warnings.push(`${warning.name}: ${warning.message}`);
    // Every request's signal, seen through the global fetch (the SDK looks it up at each request); weakly, so that this does not keep them.
    const realFetch = globalThis.fetch;
    const seen = new WeakSet<AbortSignal>();
    const counts = { withSignal: 0, reused: 0 };
    let longCall: AbortSignal | undefined;
    globalThis.fetch = (input, init) => {
      const signal = init?.signal;
      if (signal) {
        counts.withSignal++;
        if (seen.has(signal)) counts.reused++;
        seen.add(signal);
        if (typeof init.body === 'string' && init.body.includes('trigger-long-running-operation')) longCall = signal;
      }
      return realFetch(input, init);
    };
    process.on('warning', onWarning);
    const kernel = await createTestKernel({
      builtin: true,
      logLevel: 'warn',
      settings: { mcpServers: { everything: { url, transport: 'http' } }, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } },
    });
    try {
      const mcp = await kernel.get('mcp');
      expect((await mcp.start('everything')).state).toBe('connected');
      // 300 is 30 times Node's listener limit: a shared signal would cross it (and be counted as reused) long before.
      for (let i = 0; i < 300; i++) {
        const result = await mcp.callTool('everything__echo', { message: `call ${i}` });
        expect(result).toMatchObject({ ok: true, isError: false });
      }
      expect(counts.withSignal).toBeGreaterThan(300);
      expect(counts.reused).toBe(0);
      // A warning is emitted on the tick after the listener that crossed the limit was added.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);

      // Closing the connection still aborts a request under way: its own signal follows the transport's.
      const pending = mcp.callTool('everything__trigger-long-running-operation', { duration: 30, steps: 3 });
      await eventually(() => expect(longCall).toBeDefined());
      expect(longCall!.aborted).toBe(false);
      await mcp.stop('everything');
      expect(longCall!.aborted).toBe(true);
      expect((await pending).ok).toBe(false);
    } finally {
      globalThis.fetch = realFetch;
      process.off('warning', onWarning);
      await kernel.dispose();
    }
  }, 120_000);
});

// ── the plugins through a real kernel ──────────────────────────────────────

describe('transport plugins in a kernel', () => {
  test('each first-party transport is lazy, provides exactly its service, and is imported when asked for', async () => {
    const dirs = ['launcher', 'transport-stdio', 'transport-sse', 'transport-http'].map((name) => join(ROOT, 'plugins', name));
    const kernel = await createTestKernel({ pluginDirs: dirs, settings: { plugins: { 'transport-stdio': { settings: { stderrTailBytes: 2048 } } } } });
    try {
      for (const name of ['stdio', 'sse', 'http']) {
        const status = kernel.status().find((plugin) => plugin.name === `transport-${name}`);
        expect(status).toMatchObject({ state: 'lazy', provides: [`transport:${name}`] });
      }
      const factory = await kernel.get('transport:stdio');
      expect(kernel.status().find((plugin) => plugin.name === 'transport-stdio')?.state).toBe('active');
      expect(kernel.status().find((plugin) => plugin.name === 'transport-http')?.state).toBe('lazy');

      const { client, connection } = await connect(factory, stdioDefinition());
      expect(textOf(await call(client, 'echo', { text: 'through the kernel' }))).toBe('through the kernel');
      await call(client, 'write_stderr', { text: 'y'.repeat(99), repeat: 100 });
      await eventually(() => expect(connection.stderrTail!().length).toBeGreaterThan(1500));
      expect(Buffer.byteLength(connection.stderrTail!())).toBeLessThanOrEqual(2048 + 3); // the setting applies
    } finally {
      await kernel.dispose();
    }
  });

  test('a third-party transport plugin: transport:loopback, unknown to plinth, through a real kernel', async () => {
    const kernel = await createTestKernel({ pluginDirs: [LOOPBACK_PLUGIN], settings: { plugins: { 'transport-loopback': { settings: { greeting: 'hi' } } } } });
    try {
      expect(kernel.status().find((plugin) => plugin.name === 'transport-loopback')?.state).toBe('lazy');
      const factory = (await kernel.get('transport:loopback')) as TransportFactory;
      expect(kernel.status().find((plugin) => plugin.name === 'transport-loopback')?.state).toBe('active');

      const { client, connection } = await connect(factory, definition({ name: 'inproc', transport: 'loopback', args: ['--flag'] }));
      expect(client.getServerVersion()?.name).toBe('loopback-inproc');
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('greet');
      expect(textOf(await call(client, 'greet', { name: 'Ada' }))).toBe('hi, Ada (from inproc, args ["--flag"])');

      const down = new Promise<string>((resolve) => connection.onDown!(resolve));
      const closed = new Promise<void>((resolve) => (client.onclose = resolve));
      await call(client, 'vanish');
      expect(await down).toContain('went away');
      await closed;
    } finally {
      await kernel.dispose();
    }
  });

  test('the third-party transport as its README configures it: "transport" alone, neither command nor url', async () => {
    const kernel = await createTestKernel({
      builtin: true,
      pluginDirs: [LOOPBACK_PLUGIN],
      settings: { mcpServers: { inproc: { transport: 'loopback', args: ['--anything'] } }, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } },
    });
    try {
      const mcp = await kernel.get('mcp');
      expect(mcp.problems?.()).toEqual([]);
      expect((await mcp.start('inproc')).state).toBe('connected');
      const result = await mcp.callTool('inproc__greet', { name: 'Ada' });
      expect(result).toMatchObject({ ok: true, text: 'hello, Ada (from inproc, args ["--anything"])' });
    } finally {
      await kernel.dispose();
    }
  });
});
