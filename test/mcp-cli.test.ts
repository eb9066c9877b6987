/**
 * The `mcp` commands and `plinth call` through the real CLI (`node
 * dist/cli/bin.js`), each run with its own temporary home and workspace,
 * against real servers: the builtin demo server, server-everything over stdio,
 * the SDK fixture servers over HTTP and SSE on 127.0.0.1, and a third-party
 * transport loaded with --plugin-dir. After each run that started a server,
 * no server process is left behind.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isAlive } from '../internal/process/tree.js';
import { type Result, expectExit, json, run, ensureBuilt } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'dist', 'cli', 'bin.js');
const demoDir = join(root, 'plugins', 'mcp-demo');
const servers = join(root, 'test', 'fixtures', 'mcp', 'servers');
const loopbackPlugin = join(root, 'test', 'fixtures', 'plugins', 'transport-loopback');
const everything = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const blockHook = join(root, 'test', 'fixtures', 'hooks', 'block.js');

/** Generous: a shared 2-core machine may be slow to start node, jiti and a server. */
const TEST_TIMEOUT = 120_000;

const temps: string[] = [];
const children: ChildProcess[] = [];

beforeAll(() => {
  ensureBuilt();
}, 300_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : undefined)));
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
  // The demo server has no marker of its own: none may be left without the plinth that started it.
  expect(orphanedDemoServers()).toEqual([]);
});

// ── helpers ──────────────────────────────────────────────────────────────────

interface Sandbox {
  home: string;
  workspace: string;
  userFile: string;
  workspaceFile: string;
  /** Put in every configured server's env: `leftovers()` finds their processes by it. */
  mark: string;
  dirs: string[];
}

async function sandbox(): Promise<Sandbox> {
  const base = await mkdtemp(join(tmpdir(), 'plinth-mcp-cli-'));
  temps.push(base);
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  return {
    home,
    workspace,
    userFile: join(home, 'settings.json'),
    workspaceFile: join(workspace, '.plinth', 'settings.json'),
    mark: randomUUID(),
    dirs: ['--home', home, '--workspace', workspace],
  };
}



/** The first object in `value` (searched depth first) with this `name` and a `state`: a server status. */
function findServer(value: unknown, name: string): Record<string, unknown> | undefined {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findServer(item, name);
      if (found) return found;
    }
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    if (record.name === name && typeof record.state === 'string') return record;
    for (const item of Object.values(record)) {
      const found = findServer(item, name);
      if (found) return found;
    }
  }
  return undefined;
}

async function writeSettings(file: string, settings: Record<string, unknown>): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(settings, null, 2)}\n`);
}

async function readJson(file: string): Promise<Record<string, any>> {
  return JSON.parse(await readFile(file, 'utf8')) as Record<string, any>;
}

/** Pids of live processes whose environment holds `PLINTH_TEST_MARK=<mark>`. */
function leftovers(mark: string): number[] {
  const needle = `PLINTH_TEST_MARK=${mark}`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(needle) && !zombie(entry)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

function zombie(pid: string | number): boolean {
  try {
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^\d+ \(.*\) /, ' '));
  } catch {
    return true;
  }
}


/** Demo servers (cwd plugins/mcp-demo) whose parent is gone (re-parented to init). */
function orphanedDemoServers(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) !== demoDir) continue;
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('server.mjs')) continue;
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^\d+ \(.*\) /, '').split(' ')[1]);
      if (ppid === 1 && !zombie(entry)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Waits (bounded) for processes to go: a server's exit may trail its client's by a moment. */
async function settle(check: () => number[]): Promise<number[]> {
  for (let waited = 0; waited < 3_000; waited += 100) {
    if (check().length === 0) return [];
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/** A stdio server entry that carries the sandbox's mark. */
function marked(box: Sandbox, entry: Record<string, unknown>): Record<string, unknown> {
  return { ...entry, env: { ...(entry.env as Record<string, string> | undefined), PLINTH_TEST_MARK: box.mark } };
}

/** Starts a fixture HTTP server on 127.0.0.1 and returns what it printed: port, url (/mcp), sse (/sse). */
async function httpFixture(args: string[] = []): Promise<{ port: number; url: string; sse: string; stats: () => Promise<Record<string, any>> }> {
  const child = spawn(process.execPath, [join(servers, 'http-server.mjs'), '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const end = buffer.indexOf('\n');
      if (end >= 0) resolve(buffer.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`fixture http server exited with ${code}`)));
  });
  const info = JSON.parse(line) as { port: number; url: string; sse: string };
  return { ...info, stats: async () => (await (await fetch(`http://127.0.0.1:${info.port}/stats`)).json()) as Record<string, any> };
}

// ── mcp add / list / remove ──────────────────────────────────────────────────

describe('mcp add, list, remove', () => {
  test('add writes the server into the user settings, keeps the rest of the file, leaves no temporary file', async () => {
    const box = await sandbox();
    // Four-space indentation and other keys: kept as they are.
    await writeFile(box.userFile, `${JSON.stringify({ timeouts: { event: 30000 }, plugins: { hooks: { enabled: true } } }, null, 4)}\n`);

    const added = await run(box, ['mcp', 'add', 'files', '--command', 'node', '--arg', 'server.js', '--arg=--token', '--arg', 'tok-arg-secret', '--env', 'API_KEY=sk-env-secret', '--env', 'MODE=fast', '--timeout', '5000', '--json']);
    expectExit(added, 0);
    expect(json(added)).toMatchObject({ added: 'files', scope: 'user', file: box.userFile, replaced: false });
    expect(added.stdout).not.toContain('sk-env-secret');

    const text = await readFile(box.userFile, 'utf8');
    expect(text).toMatch(/^ {4}"timeouts"/m);
    const settings = JSON.parse(text);
    expect(settings.timeouts).toEqual({ event: 30000 });
    expect(settings.plugins).toEqual({ hooks: { enabled: true } });
    expect(settings.mcpServers.files).toEqual({ command: 'node', args: ['server.js', '--token', 'tok-arg-secret'], env: { API_KEY: 'sk-env-secret', MODE: 'fast' }, timeout: 5000 });
    expect(await readdir(box.home)).toEqual(['settings.json']);

    // The same name again: refused, file untouched; with --force: replaced.
    const again = await run(box, ['mcp', 'add', 'files', '--command', 'node', '--arg', 'other.js', '--json']);
    expectExit(again, 1);
    expect(json(again).error.code).toBe('PLN_E_MCP_SERVER_EXISTS');
    expect(await readFile(box.userFile, 'utf8')).toBe(text);
    const forced = await run(box, ['mcp', 'add', 'files', '--command', 'node', '--arg', 'other.js', '--force', '--json']);
    expectExit(forced, 0);
    expect(json(forced).replaced).toBe(true);
    expect((await readJson(box.userFile)).mcpServers.files).toEqual({ command: 'node', args: ['other.js'] });
  }, TEST_TIMEOUT);

  test('add --scope workspace creates .plinth/settings.json (owner-only); list shows every server with secrets masked; remove edits the file that has it', async () => {
    const box = await sandbox();
    await writeSettings(box.userFile, { mcpServers: { local: { command: 'node', args: ['s.js', '--api-key=arg-secret-1'], env: { TOKEN: 'env-secret-2' } } } });
    const added = await run(box, ['mcp', 'add', 'remote', '--url', 'http://user:pw-secret-3@127.0.0.1:9/mcp?access_token=q-secret-4', '--header', 'Authorization=Bearer hdr-secret-5', '--transport', 'http', '--scope', 'workspace']);
    expectExit(added, 0);
    expect(added.stdout + added.stderr).not.toMatch(/secret-[345]/);
    expect(statSync(box.workspaceFile).mode & 0o777).toBe(0o600);
    expect((await readJson(box.workspaceFile)).mcpServers.remote).toEqual({
      url: 'http://user:pw-secret-3@127.0.0.1:9/mcp?access_token=q-secret-4',
      headers: { Authorization: 'Bearer hdr-secret-5' },
      transport: 'http',
    });

    const list = await run(box, ['mcp', 'list', '--json']);
    expectExit(list, 0);
    expect(list.stdout).not.toMatch(/secret-\d/);
    const byName = Object.fromEntries(json(list).servers.map((s: { name: string }) => [s.name, s]));
    expect(byName.local).toMatchObject({ source: 'user', transport: 'stdio', enabled: true, command: 'node', env: ['TOKEN'] });
    expect(byName.remote).toMatchObject({ source: 'workspace', transport: 'http', enabled: true, headers: ['Authorization'] });
    // The user has servers of their own: the builtin demo server is not listed (plugins/mcp-demo/README.md).
    expect(byName.demo).toBeUndefined();

    const table = await run(box, ['mcp', 'list']);
    expectExit(table, 0);
    for (const name of ['local', 'remote']) expect(table.stdout).toContain(name);
    expect(table.stdout).not.toMatch(/secret-\d/);

    const removed = await run(box, ['mcp', 'remove', 'remote', '--json']);
    expectExit(removed, 0);
    expect(json(removed)).toMatchObject({ removed: 'remote', scope: 'workspace' });
    expect((await readJson(box.workspaceFile)).mcpServers).toEqual({});
    expect((await readJson(box.userFile)).mcpServers.local).toBeDefined();

    // One name in both files: remove asks which.
    await run(box, ['mcp', 'add', 'local', '--command', 'node', '--arg', 'w.js', '--scope', 'workspace', '--force']);
    const both = await run(box, ['mcp', 'remove', 'local', '--json']);
    expectExit(both, 2);
    expect(json(both).error.code).toBe('PLN_E_CLI_USAGE');
    expectExit(await run(box, ['mcp', 'remove', 'local', '--scope', 'workspace']), 0);
    expect((await readJson(box.workspaceFile)).mcpServers).toEqual({});
    expect((await readJson(box.userFile)).mcpServers.local).toBeDefined();

    const unknown = await run(box, ['mcp', 'remove', 'remote', '--json']);
    expectExit(unknown, 1);
    expect(json(unknown).error.code).toBe('PLN_E_MCP_SERVER_UNKNOWN');
    // A plugin's server is not in any settings file: the hint says where it is (the demo, listed while no server of one's own is).
    const demo = await run(await sandbox(), ['mcp', 'remove', 'demo']);
    expectExit(demo, 1);
    expect(demo.stderr).toContain('PLN_E_MCP_SERVER_UNKNOWN');
    expect(demo.stderr).toContain('mcp-demo');
  }, TEST_TIMEOUT);

  test('concurrent adds to one file both land', async () => {
    const box = await sandbox();
    const names = ['one', 'two', 'three', 'four'];
    const results = await Promise.all(names.map((name) => run(box, ['mcp', 'add', name, '--command', 'node', '--arg', `${name}.js`])));
    for (const result of results) expectExit(result, 0);
    expect(Object.keys((await readJson(box.userFile)).mcpServers).sort()).toEqual([...names].sort());
    expect(await readdir(box.home)).toEqual(['settings.json']);
  }, TEST_TIMEOUT);

  test.each([
    ['neither --command nor --url', ['mcp', 'add', 'x']],
    ['both --command and --url', ['mcp', 'add', 'x', '--command', 'node', '--url', 'http://127.0.0.1:9/mcp']],
    ['a name with __', ['mcp', 'add', 'a__b', '--command', 'node']],
    ['--env without =', ['mcp', 'add', 'x', '--command', 'node', '--env', 'NOVALUE']],
    ['--header for a local server', ['mcp', 'add', 'x', '--command', 'node', '--header', 'A=b']],
    ['a command with spaces', ['mcp', 'add', 'x', '--command', 'node server.js']],
    ['stdio with a URL', ['mcp', 'add', 'x', '--url', 'http://127.0.0.1:9/mcp', '--transport', 'stdio']],
    ['an unknown --scope', ['mcp', 'add', 'x', '--command', 'node', '--scope', 'global']],
  ])('add refuses %s with exit 2 and writes nothing', async (_, args) => {
    const box = await sandbox();
    const result = await run(box, [...args, '--json']);
    expectExit(result, 2);
    expect(json(result).error.code).toBe('PLN_E_CLI_USAGE');
    expect(existsSync(box.userFile)).toBe(false);
    expect(existsSync(box.workspaceFile)).toBe(false);
  }, TEST_TIMEOUT);
});

// ── the demo server ──────────────────────────────────────────────────────────

describe('the builtin demo server', () => {
  test('mcp status --json starts it: connected, 3 tools, a pid that is gone once plinth exits', async () => {
    const box = await sandbox();
    const result = await run(box, ['mcp', 'status', '--json']);
    expectExit(result, 0);
    const demo = json(result).servers.find((s: { name: string }) => s.name === 'demo');
    expect(demo).toMatchObject({ name: 'demo', state: 'connected', transport: 'stdio', source: 'builtin', tools: 3, enabled: true });
    expect(demo.serverInfo).toMatchObject({ name: 'plinth-demo' });
    expect(typeof demo.pid).toBe('number');
    if (demo.health) expect(demo.health.state).toBe('healthy');
    expect(await settle(() => (isAlive(demo.pid) ? [demo.pid] : []))).toEqual([]);
  }, TEST_TIMEOUT);

  test('call demo__echo prints the text and exits 0; --args @file; structured content in --json', async () => {
    const box = await sandbox();
    const echo = await run(box, ['call', 'demo__echo', '--args', '{"message":"hello from plinth"}']);
    expectExit(echo, 0);
    expect(echo.stdout).toContain('hello from plinth');

    const file = join(box.workspace, 'args.json');
    await writeFile(file, JSON.stringify({ a: 2, b: 40 }));
    const add = await run(box, ['call', 'demo__add', '--args', `@${file}`, '--json']);
    expectExit(add, 0);
    expect(json(add)).toMatchObject({ tool: 'demo__add', ok: true, isError: false, structuredContent: { sum: 42 } });
    expect(json(add).text).toContain('2 + 40 = 42');
  }, TEST_TIMEOUT);

  test('a tool error exits 1 with the text; an unknown tool or server exits 1 with its code', async () => {
    const box = await sandbox();
    const toolError = await run(box, ['call', 'demo__now', '--args', '{"timeZone":"Nowhere/Atlantis"}']);
    expectExit(toolError, 1);
    expect(toolError.stdout).toContain('unknown time zone');

    const unknownTool = await run(box, ['call', 'demo__nope', '--json']);
    expectExit(unknownTool, 1);
    expect(json(unknownTool).error.code).toBe('PLN_E_MCP_TOOL_UNKNOWN');

    const unknownServer = await run(box, ['call', 'nowhere__echo', '--json']);
    expectExit(unknownServer, 1);
    expect(json(unknownServer).error.code).toBe('PLN_E_MCP_SERVER_UNKNOWN');
  }, TEST_TIMEOUT);

  test.each([
    ['invalid JSON', ['--args', '{"message":']],
    ['a JSON array', ['--args', '["hello"]']],
    ['a missing @file', ['--args', '@/nonexistent/args.json']],
    ['arguments the schema refuses', ['--args', '{"message": 42}']],
  ])('bad --args (%s) exit 2', async (_, args) => {
    const box = await sandbox();
    const result = await run(box, ['call', 'demo__echo', ...args, '--json']);
    expectExit(result, 2);
    expect(['PLN_E_CLI_USAGE', 'PLN_E_MCP_ARGS_INVALID']).toContain(json(result).error.code);
  }, TEST_TIMEOUT);

  test('a missing --args @file says so in words and what to give instead, not ENOENT', async () => {
    const box = await sandbox();
    const result = await run(box, ['call', 'demo__echo', '--args', '@/nonexistent/args.json', '--json']);
    expectExit(result, 2);
    const { error } = json(result);
    expect(error.message).toBe('cannot read the arguments file /nonexistent/args.json: there is no such file');
    expect(error.hint).toContain('@- for standard input');
  }, TEST_TIMEOUT);

  test.each([
    ['mcp', { retries: -1 }, ['call', 'demo__echo', '--args', '{"message":"hi"}'], 'plugins.mcp.settings.retries'],
    ['health', { maxRestarts: -2 }, ['call', 'demo__echo', '--args', '{"message":"hi"}'], 'plugins.health.settings.maxRestarts'],
    ['transport-stdio', { exitGraceMs: -5 }, ['call', 'demo__echo', '--args', '{"message":"hi"}'], 'plugins.transport-stdio.settings.exitGraceMs'],
    ['gateway', { maxSessions: 0 }, ['serve', '--http', '--port', '0'], 'plugins.gateway.settings.maxSessions'],
  ])('a %s setting out of range is PLN_E_SETTING_INVALID naming its key, not a dump of zod issues', async (plugin, settings, args, path) => {
    const box = await sandbox();
    await writeSettings(box.userFile, { plugins: { [plugin]: { settings } } });
    const result = await run(box, args);
    expect(result.stderr).toContain('PLN_E_SETTING_INVALID');
    expect(result.stderr).toContain(path);
    expect(result.stderr).not.toContain('"code": "too_small"');
  }, TEST_TIMEOUT);

  test('a gateway token that is too short: the message stays readable although the token is masked in it ("short" is in "shorter")', async () => {
    const box = await sandbox();
    await writeSettings(box.userFile, { plugins: { gateway: { settings: { token: 'short' } } } });
    const result = await run(box, ['serve', '--http', '--port', '0']);
    expectExit(result, 1);
    expect(result.stderr).toContain('PLN_E_GATEWAY_TOKEN: the gateway token from setting plugins.gateway.settings.token has 5 characters; it needs at least 16');
    expect(result.stderr).not.toContain('[redacted]');
  }, TEST_TIMEOUT);

  test('a tool name without __ is a usage error', async () => {
    const box = await sandbox();
    const result = await run(box, ['call', 'echo', '--json']);
    expectExit(result, 2);
    expect(json(result).error.code).toBe('PLN_E_CLI_USAGE');
  }, TEST_TIMEOUT);

  test('a user hook on before_tool that blocks the call: exit 5, the tool never runs', async () => {
    const box = await sandbox();
    // block.js blocks the tool names it is given: the namespaced name and the server's own, whichever the context carries.
    await writeSettings(box.userFile, { hooks: { before_tool: [{ name: 'no-echo', command: 'node', args: [blockHook, 'demo__echo', 'echo'] }] } });
    const blocked = await run(box, ['call', 'demo__echo', '--args', '{"message":"should not arrive"}', '--json']);
    expectExit(blocked, 5);
    const result = json(blocked);
    expect(result.ok).toBe(false);
    expect(result.error.code).toBe('PLN_E_MCP_BLOCKED');
    expect(result.text).not.toContain('should not arrive');

    const human = await run(box, ['call', 'demo__echo', '--args', '{"message":"nope"}']);
    expectExit(human, 5);
    expect(human.stderr).toContain('PLN_E_MCP_BLOCKED');
    // Another tool of the same server is not blocked.
    const add = await run(box, ['call', 'demo__add', '--args', '{"a":1,"b":1}']);
    expectExit(add, 0);
  }, TEST_TIMEOUT);

  // Each command starts the demo server: two commands per test, so that a loaded machine stays far from the time limit.
  test('mcp tools and restart on the demo server', async () => {
    const box = await sandbox();
    const tools = await run(box, ['mcp', 'tools', 'demo', '--json']);
    expectExit(tools, 0);
    expect(json(tools).tools.map((t: { name: string }) => t.name).sort()).toEqual(['demo__add', 'demo__echo', 'demo__now']);

    const restart = await run(box, ['mcp', 'restart', 'demo', '--json']);
    expectExit(restart, 0);
    expect(json(restart).server).toMatchObject({ name: 'demo', state: 'connected' });
  }, TEST_TIMEOUT);

  test('mcp resources and resources --read on the demo server', async () => {
    const box = await sandbox();
    const resources = await run(box, ['mcp', 'resources', 'demo', '--json']);
    expectExit(resources, 0);
    expect(json(resources).resources.map((r: { uri: string }) => r.uri)).toContain('demo://about');
    const read = await run(box, ['mcp', 'resources', 'demo', '--read', 'demo://about']);
    expectExit(read, 0);
    expect(read.stdout).toContain('plinth demo server');
  }, TEST_TIMEOUT);

  test('mcp prompts and prompts --get on the demo server', async () => {
    const box = await sandbox();
    const prompts = await run(box, ['mcp', 'prompts', 'demo']);
    expectExit(prompts, 0);
    expect(prompts.stdout).toContain('greet');
    const prompt = await run(box, ['mcp', 'prompts', 'demo', '--get', 'greet', '--arg', 'name=Ada']);
    expectExit(prompt, 0);
    expect(prompt.stdout).toContain('Please greet Ada');
  }, TEST_TIMEOUT);

  test('up --once --json shows the demo server connected', async () => {
    const box = await sandbox();
    const result = await run(box, ['up', '--once', '--json']);
    expectExit(result, 0);
    const report = json(result);
    expect(report.plugins.find((p: { name: string }) => p.name === 'mcp-demo')).toMatchObject({ state: 'active' });
    // Wherever the report puts server states: the object that describes the demo server.
    const demo = findServer(report, 'demo');
    expect(demo, result.stdout).toMatchObject({ state: 'connected', tools: 3 });
  }, TEST_TIMEOUT);
});

// ── server-everything over stdio: every content type ─────────────────────────

describe('a server that fails at start', () => {
  test('one-shot commands make one connection attempt (the retries setting is for a host that stays up) and report the error at once', async () => {
    const box = await sandbox();
    // The default `retries` (3) stays in force: only the commands' own rule is under test.
    await writeSettings(box.userFile, { mcpServers: { broken: marked(box, { command: process.execPath, args: ['-e', 'process.exit(3)'] }) } });
    const status = await run(box, ['mcp', 'status', 'broken', '--json']);
    expectExit(status, 1);
    expect(json(status).servers[0]).toMatchObject({ name: 'broken', state: 'error', attempts: 1, error: { code: 'PLN_E_MCP_CONNECT_FAILED' } });

    const call = await run(box, ['call', 'broken__anything', '--json']);
    expectExit(call, 1);
    expect(json(call).error).toMatchObject({ code: 'PLN_E_MCP_CONNECT_FAILED', server: 'broken', state: 'error' });
    expect(json(call).error.message).not.toContain('attempts'); // "(after 4 attempts)" when retried
    expect(await settle(() => leftovers(box.mark))).toEqual([]);
  }, TEST_TIMEOUT);
});

describe('call against server-everything over stdio', () => {
  let box: Sandbox;
  beforeAll(async () => {
    box = await sandbox();
    await writeSettings(box.userFile, { mcpServers: { everything: marked(box, { command: process.execPath, args: [everything, 'stdio'] }) } });
  });

  afterAll(async () => {
    expect(await settle(() => leftovers(box.mark))).toEqual([]);
  });

  test.each([
    ['text', 'everything__echo', { message: 'plain text' }, ['plain text']],
    ['image', 'everything__get-tiny-image', {}, ['image/png']],
    ['embedded resource', 'everything__get-resource-reference', { resourceType: 'Text', resourceId: 1 }, ['demo://resource/dynamic/text/1']],
    ['resource link', 'everything__get-resource-links', { count: 2 }, ['demo://resource/dynamic/']],
    ['structured content', 'everything__get-structured-content', { location: 'New York' }, ['temperature']],
  ])('%s content', async (_, tool, args, expected) => {
    const result = await run(box, ['call', tool, '--args', JSON.stringify(args)]);
    expectExit(result, 0);
    for (const text of expected) expect(result.stdout).toContain(text);
    expect(await settle(() => leftovers(box.mark))).toEqual([]);
  }, TEST_TIMEOUT);

  test('audio (the fixture server: server-everything has no audio tool) and all content types in one result', async () => {
    const fixture = await sandbox();
    await writeSettings(fixture.userFile, { mcpServers: { fx: marked(fixture, { command: process.execPath, args: [join(servers, 'stdio-server.mjs')] }) } });
    const audio = await run(fixture, ['call', 'fx__audio', '--json']);
    expectExit(audio, 0);
    expect(json(audio).content[0]).toMatchObject({ type: 'audio', mimeType: 'audio/wav' });
    expect(json(audio).text).toContain('audio/wav');
    const all = await run(fixture, ['call', 'fx__all_content']);
    expectExit(all, 0);
    for (const text of ['image/png', 'audio/wav', 'fixture://']) expect(all.stdout).toContain(text);
    expect(await settle(() => leftovers(fixture.mark))).toEqual([]);
  }, TEST_TIMEOUT);

  test('a server secret that comes back in a tool result is masked, in text and in --json', async () => {
    const box = await sandbox();
    await writeSettings(box.userFile, { mcpServers: { fx: marked(box, { command: process.execPath, args: [join(servers, 'stdio-server.mjs')], env: { API_KEY: 'sk-cli-test-7f3a9' } }) } });
    const text = await run(box, ['call', 'fx__get_env', '--args', '{"name":"API_KEY"}']);
    expectExit(text, 0);
    expect(text.stdout).toContain('[redacted]');
    const asJson = await run(box, ['call', 'fx__get_env', '--args', '{"name":"API_KEY"}', '--json']);
    expectExit(asJson, 0);
    for (const result of [text, asJson]) expect(result.stdout + result.stderr).not.toContain('sk-cli-test-7f3a9');
    expect(await settle(() => leftovers(box.mark))).toEqual([]);
  }, TEST_TIMEOUT);
});

// ── transports chosen by configuration alone ─────────────────────────────────

describe('transports by configuration', () => {
  test('a profile swaps the transport: --profile legacy reports sse, without it http', async () => {
    const fixture = await httpFixture();
    const box = await sandbox();
    await writeSettings(box.userFile, {
      mcpServers: { remote: { url: fixture.url, transport: 'http' } },
      profiles: { legacy: { mcpServers: { remote: { url: fixture.sse, transport: 'sse' } } } },
    });

    const plain = await run(box, ['mcp', 'status', 'remote', '--json']);
    expectExit(plain, 0);
    expect(json(plain).servers[0]).toMatchObject({ name: 'remote', state: 'connected', transport: 'http' });

    const sseBefore = (await fixture.stats()).sseSessions as number;
    const legacy = await run(box, ['--profile', 'legacy', 'mcp', 'status', 'remote', '--json']);
    expectExit(legacy, 0);
    expect(json(legacy).servers[0]).toMatchObject({ name: 'remote', state: 'connected', transport: 'sse' });
    // The server saw it too: one more legacy SSE session.
    expect((await fixture.stats()).sseSessions).toBe(sseBefore + 1);

    const call = await run(box, ['--profile', 'legacy', 'call', 'remote__echo', '--args', '{"text":"over sse"}']);
    expectExit(call, 0);
    expect(call.stdout).toContain('over sse');
  }, TEST_TIMEOUT);

  test('a third-party transport from --plugin-dir: a server with transport "loopback" answers calls', async () => {
    const box = await sandbox();
    // The loopback transport runs its server inside plinth's process: the URL only names it (a scheme plinth's own transports do not speak);
    // it may be left out, since a transport plugin's transport alone defines a server (test/transports.test.ts runs the README's form).
    await writeSettings(box.userFile, { mcpServers: { looped: { transport: 'loopback', url: 'loopback://in-process' } } });
    const status = await run(box, ['--plugin-dir', loopbackPlugin, 'mcp', 'status', 'looped', '--json']);
    expectExit(status, 0);
    expect(json(status).servers[0]).toMatchObject({ name: 'looped', state: 'connected', transport: 'loopback' });

    const call = await run(box, ['--plugin-dir', loopbackPlugin, 'call', 'looped__echo', '--args', '{"text":"through loopback"}']);
    expectExit(call, 0);
    expect(call.stdout).toContain('through loopback');
    const greet = await run(box, ['--plugin-dir', loopbackPlugin, 'call', 'looped__greet', '--args', '{"name":"Ada"}']);
    expectExit(greet, 0);
    expect(greet.stdout).toContain('Ada');
    expect(greet.stdout).toContain('looped');

    // Without the plugin nothing provides transport:loopback: the server fails with a code, plinth does not crash.
    const without = await run(box, ['mcp', 'status', 'looped', '--json']);
    expectExit(without, 1);
    expect(json(without).servers[0].state).toBe('error');
    expect(json(without).servers[0].error.code).toBe('PLN_E_MCP_TRANSPORT_UNKNOWN');
  }, TEST_TIMEOUT);
});
