/**
 * The mcp plugin's server lifecycle, with real processes and real SDK servers
 * on 127.0.0.1: the fixture servers in test/fixtures/mcp/servers/ (stdio and
 * HTTP), and two tiny ones of our own in test/fixtures/mcp-core/ (a server
 * that never answers `initialize`, one that prints its secret and exits).
 * Every kernel gets its own temporary home and workspace. The health and
 * demo plugins are switched off, so that states change only as each test says.
 *
 * 1. definitions: settings layers, manifests, profiles, problems with file and path;
 * 2. a stdio server from settings connects, its states are observed, stop stops it;
 * 3. env references are resolved and never shown (status, errors, logs);
 * 4. the connection timeout; retries with backoff, then `error`;
 * 5. an unknown transport, and a disabled transport plugin;
 * 6. a workspace server waits for approval, starts once approved;
 * 7. a profile swaps a server's transport (HTTP ↔ SSE), and `auto` falls back to SSE;
 * 8. `serve` starts every enabled server; shutdown leaves no process.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collectServers } from '../plugins/mcp/definitions.js';
import type { McpService, ServerState, ServerStatus } from 'plinth/sdk';
import type { PluginInfo } from '../sdk/index.js';
import { parseManifest } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { isAlive } from '../internal/process/tree.js';
import { ensureBuilt } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'dist', 'cli', 'bin.js');
const SERVERS = join(root, 'test', 'fixtures', 'mcp', 'servers');
const CORE = join(root, 'test', 'fixtures', 'mcp-core');
const STDIO_SERVER = join(SERVERS, 'stdio-server.mjs');
const HTTP_SERVER = join(SERVERS, 'http-server.mjs');

/** Health restarts servers and the demo plugin adds one: off, so states change only as each test says. */
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

const folders: string[] = [];
const kernels: TestKernel[] = [];
const children: ChildProcess[] = [];
const savedCI = process.env.CI;

beforeAll(() => {
  ensureBuilt();
  // In process, trust asks on a terminal when it has one; these tests show the answer without one.
  process.env.CI = '1';
}, 300_000);

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

// ── helpers ─────────────────────────────────────────────────────────────────

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-mcp-servers-'));
  folders.push(dir);
  return dir;
}

interface BootOptions {
  /** The user settings (QUIET is merged into `plugins`). */
  settings?: Record<string, unknown>;
  /** Written as <workspace>/.plinth/settings.json. */
  workspaceSettings?: Record<string, unknown>;
  workspace?: string;
  profile?: string;
  /** The mcp plugin's own settings. */
  mcp?: Record<string, unknown>;
}

/** A kernel with the builtin plugins (trust, mcp, the transports), disposed after the test. */
async function boot(options: BootOptions = {}): Promise<{ kernel: TestKernel; mcp: McpService; workspace: string }> {
  const workspace = options.workspace ?? (await temp());
  if (options.workspaceSettings) {
    await mkdir(join(workspace, '.plinth'), { recursive: true });
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify(options.workspaceSettings, null, 2));
  }
  const settings = options.settings ?? {};
  const plugins = { ...QUIET, ...(settings.plugins as object | undefined), ...(options.mcp && { mcp: { settings: options.mcp } }) };
  const kernel = await createTestKernel({
    builtin: true,
    workspace,
    settings: { ...settings, plugins },
    ...(options.profile !== undefined && { profile: options.profile }),
  });
  kernels.push(kernel);
  return { kernel, mcp: await kernel.get('mcp'), workspace };
}

/** Every state change, as `previous→state`. */
function transitions(mcp: McpService, server: string): string[] {
  const seen: string[] = [];
  mcp.onStateChange((status, previous) => {
    if (status.name === server) seen.push(`${previous}→${status.state}`);
  });
  return seen;
}

/** Resolves once `server` reaches `state` (already there counts). */
function reached(mcp: McpService, server: string, state: ServerState): Promise<ServerStatus> {
  return new Promise((resolve) => {
    const now = mcp.servers().find((s) => s.name === server);
    if (now?.state === state) return resolve(now);
    const off = mcp.onStateChange((status) => {
      if (status.name === server && status.state === state) {
        off();
        resolve(status);
      }
    });
  });
}


/** Whether `pid` is gone, allowing a killed process a moment to be reaped. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  return !isAlive(pid);
}

/** A tool's text answer, through the SDK client of a connected server. */
async function toolText(mcp: McpService, server: string, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await mcp.client(server)!.callTool({ name: tool, arguments: args });
  return (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('');
}

/** The fixture HTTP server on 127.0.0.1 (streamable HTTP at /mcp, SSE at /sse), for the whole file. */
let http: { base: string; child: ChildProcess } | undefined;
async function httpServer(): Promise<{ base: string; stats: () => Promise<Record<string, unknown>> }> {
  if (!http) {
    const child = spawn(process.execPath, [HTTP_SERVER, '--port', '0', '--name', 'http-fixture'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the HTTP fixture exited with ${code}`)));
    });
    const { port } = JSON.parse(line) as { port: number };
    http = { base: `http://127.0.0.1:${port}`, child };
  }
  const { base } = http;
  return { base, stats: async () => (await (await fetch(`${base}/stats`)).json()) as Record<string, unknown> };
}

// ── 1. definitions ──────────────────────────────────────────────────────────

describe('definitions', () => {
  const plugin = (name: string, source: PluginInfo['source'], mcpServers: Record<string, unknown>, settings: unknown[] = []): PluginInfo => {
    const parsed = parseManifest({ name, version: '1.0.0', kernel: '^1.0.0', mcpServers, settings });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    return { name, version: '1.0.0', source, dir: `/plugins/${name}`, manifest: parsed.manifest };
  };
  const inputs = (over: Partial<Parameters<typeof collectServers>[0]>) => ({
    layers: [],
    plugins: [],
    manifests: [],
    config: {},
    env: {},
    home: '/home/u/.plinth',
    workspace: '/work/project',
    connectTimeoutMs: 10_000,
    ...over,
  });

  it('reads settings layers and manifests; later layers win by name; a profile amends field by field', () => {
    const { servers, problems } = collectServers(
      inputs({
        layers: [
          { scope: 'user', file: '/home/u/.plinth/settings.json', settings: { mcpServers: { shared: { command: 'node', args: ['user.js'] }, remote: { url: 'https://example.com/mcp' } } } },
          { scope: 'workspace', file: '/work/project/.plinth/settings.json', settings: { mcpServers: { shared: { command: 'node', args: ['ws.js'], cwd: 'tools' } } } },
          { scope: 'workspace', file: '/work/project/.plinth/settings.json', profile: 'legacy', settings: { mcpServers: { remote: { transport: 'sse', timeout: 500 } } } },
        ],
        plugins: [plugin('lib', 'builtin', { bundled: { command: 'node', args: ['server.mjs'] } }), plugin('ext', 'user', { extra: { url: 'http://127.0.0.1:1/mcp' } })],
      }),
    );
    expect(problems).toEqual([]);
    const byName = new Map(servers.map((s) => [s.definition.name, s.definition]));
    expect([...byName.keys()]).toEqual(['bundled', 'extra', 'shared', 'remote']);
    expect(byName.get('bundled')).toMatchObject({ source: 'builtin', plugin: 'lib', cwd: '/plugins/lib', transport: 'stdio' });
    expect(byName.get('extra')).toMatchObject({ source: 'extension', transport: 'auto' });
    expect(byName.get('shared')).toMatchObject({ source: 'workspace', args: ['ws.js'], cwd: '/work/project/tools' });
    // The workspace profile amended a user server: it keeps its URL, takes the transport, and needs approval now.
    expect(byName.get('remote')).toMatchObject({ source: 'workspace', url: 'https://example.com/mcp', transport: 'sse', connectTimeoutMs: 500 });
    expect(byName.get('remote')!.origin).toContain('amended by /work/project/.plinth/settings.json#profiles.legacy.mcpServers.remote');
    // Trust keeps a profile's version of a server apart from the base one.
    expect(servers.map((s) => s.trustId)).toEqual(['bundled', 'extra', 'shared', 'remote@legacy']);
  });

  it('a user entry runs from the user folder; one that names the workspace\'s content acts for settings:workspace (confined); plinth\'s PATH loses its workspace folders', () => {
    const file = '/home/u/.plinth/settings.json';
    const { servers, problems } = collectServers(
      inputs({
        env: { PATH: '/work/project/node_modules/.bin:/usr/bin:/work/project' },
        layers: [
          {
            scope: 'user',
            file,
            settings: {
              mcpServers: {
                files: { command: 'npx', args: ['-y', 'server-filesystem', '${workspace}'] },
                rel: { command: 'node', args: ['tools/server.js'], cwd: 'tools' },
                script: { command: 'node', args: ['--require=${workspace}/hook.js', 'x.js'] },
                here: { command: 'node', args: ['x.js'], cwd: '${workspace}/sub' },
              },
            },
          },
        ],
      }),
    );
    expect(problems).toEqual([]);
    const byName = new Map(servers.map((s) => [s.definition.name, s]));
    expect(byName.get('files')!.definition).toMatchObject({ source: 'user', cwd: '/home/u/.plinth', args: ['-y', 'server-filesystem', '/work/project'], env: { PATH: '/usr/bin' }, actingFor: { id: 'settings:user' } });
    // The trust subject keeps the placeholder: one user server in every folder.
    expect(byName.get('files')!.written.args).toEqual(['-y', 'server-filesystem', '${workspace}']);
    expect(byName.get('rel')!.definition).toMatchObject({ source: 'user', cwd: '/home/u/.plinth/tools' });
    for (const name of ['script', 'here']) {
      const { definition } = byName.get(name)!;
      expect(definition, name).toMatchObject({ source: 'workspace', actingFor: { id: 'settings:workspace', source: 'workspace', dir: '/work/project' } });
      expect(definition.origin, name).toContain('(runs workspace content: ');
      // Confined as the workspace's: its PATH is the sandbox's business, not rewritten here.
      expect(definition.env.PATH, name).toBeUndefined();
    }
  });

  it('plinth run from the home folder: the workspace holds the user\'s own folders, and nothing in it is judged as a project\'s', () => {
    const { servers } = collectServers(
      inputs({
        env: { HOME: '/home/u', PATH: '/home/u/.nvm/bin:/usr/bin' },
        home: '/home/u/.plinth',
        workspace: '/home/u',
        layers: [{ scope: 'user', file: '/home/u/.plinth/settings.json', settings: { mcpServers: { mine: { command: 'node', args: ['/home/u/tools/server.js'] } } } }],
      }),
    );
    expect(servers[0]!.definition).toMatchObject({ source: 'user', cwd: '/home/u/.plinth', actingFor: { id: 'settings:user' } });
    expect(servers[0]!.definition.env.PATH).toBeUndefined();
  });

  it('reports bad entries with file and JSON path, and keeps the good ones', () => {
    const file = '/work/project/.plinth/settings.json';
    const { servers, problems } = collectServers(
      inputs({
        layers: [
          {
            scope: 'workspace',
            file,
            settings: {
              mcpServers: {
                good: { command: 'node', args: ['ok.js'] },
                typo: { comand: 'node' },
                both: { command: 'node', url: 'https://example.com' },
                'a__b': { command: 'node' },
                wrong: { url: 'https://example.com/mcp', timeout: -1 },
                lonely: { enabled: false },
              },
            },
          },
        ],
        plugins: [plugin('one', 'user', { dup: { command: 'a' } }), plugin('two', 'user', { dup: { command: 'b' } })],
      }),
    );
    expect(servers.map((s) => s.definition.name)).toEqual(['dup', 'good']);
    expect(servers[0]!.definition.command).toBe('a');
    const found = problems.map((p) => [p.code, (p.details as { path: string }).path]);
    expect(found).toEqual([
      ['PLN_E_MCP_SERVER_DUPLICATE', 'mcpServers.dup'],
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.typo.comand'],
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.both'],
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.a__b'],
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.wrong.timeout'],
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.lonely'],
    ]);
    expect(problems[1]!.message).toContain(file);
    expect(problems[1]!.message).toContain('did you mean "command"');
  });

  it('an entry pasted from Gemini CLI: its "httpUrl" and "trust" are reported with what to write instead', () => {
    const file = '/home/u/.plinth/settings.json';
    const { servers, problems } = collectServers(
      inputs({ layers: [{ scope: 'user', file, settings: { mcpServers: { docs: { httpUrl: 'https://example.com/mcp' }, local: { command: 'node', trust: true } } } }] }),
    );
    expect(servers).toEqual([]);
    expect(problems.map((p) => [p.code, (p.details as { path: string }).path])).toEqual([
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.docs.httpUrl'],
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.local.trust'],
    ]);
    expect(problems[0]!.message).toContain('write it as "url", with "transport": "http"');
    expect(problems[1]!.message).toContain('plinth trust approve mcp-server');
  });

  it('a transport plugin\'s transport defines a server without command or url; a builtin one alone only amends', () => {
    const file = '/home/u/.plinth/settings.json';
    const { servers, problems } = collectServers(
      inputs({
        layers: [
          {
            scope: 'user',
            file,
            settings: {
              mcpServers: {
                inproc: { transport: 'loopback', args: ['--flag'] },
                swapped: { transport: 'sse' },
                replaced: { url: 'https://example.com/mcp', headers: { 'X-Tag': 'kept?' } },
              },
            },
          },
          { scope: 'user', file, profile: 'local', settings: { mcpServers: { replaced: { transport: 'loopback' } } } },
        ],
        plugins: [plugin('ext', 'user', { bundled: { transport: 'loopback' }, bare: { transport: 'http' } })],
      }),
    );
    const byName = new Map(servers.map((s) => [s.definition.name, s.definition]));
    expect([...byName.keys()]).toEqual(['bundled', 'inproc', 'replaced']);
    expect(byName.get('bundled')).toMatchObject({ transport: 'loopback', source: 'extension', plugin: 'ext' });
    expect(byName.get('inproc')).toMatchObject({ transport: 'loopback', args: ['--flag'], source: 'user' });
    expect(byName.get('inproc')!.command).toBeUndefined();
    expect(byName.get('inproc')!.url).toBeUndefined();
    // A definition replaces the earlier one whole: nothing of the URL server is kept.
    expect(byName.get('replaced')).toMatchObject({ transport: 'loopback', headers: {} });
    expect(byName.get('replaced')!.url).toBeUndefined();
    expect(byName.get('replaced')!.origin).not.toContain('amended');
    // `{ "transport": "sse" }` alone still amends, and there is nothing to amend; a manifest entry must define.
    expect(problems.map((p) => [p.code, (p.details as { path: string }).path])).toEqual([
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.bare'],
      ['PLN_E_MCP_SERVER_INVALID', 'mcpServers.swapped'],
    ]);
  });

  it('resolves ${env:…} and ${setting:…} into secrets; what cannot be resolved keeps the server, with the problem', () => {
    const { servers, problems } = collectServers(
      inputs({
        layers: [
          {
            scope: 'user',
            file: '/u/settings.json',
            settings: {
              mcpServers: {
                ok: { command: 'node', env: { TOKEN: '${env:MY_TOKEN}', LEVEL: '${setting:tool.level}', PLAIN: 'visible' }, headers: {} },
                remote: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${env:MY_TOKEN}' } },
                other: { command: 'node', env: { KEY: '${API_KEY}' } },
                sensitive: { command: 'node', env: { KEY: '${setting:tool.apiKey}' } },
              },
            },
          },
        ],
        manifests: [plugin('tool', 'user', {}, [{ name: 'level', type: 'string', default: 'debug' }, { name: 'apiKey', type: 'string', sensitive: true }])],
        env: { MY_TOKEN: 'tok-123456' },
      }),
    );
    const [ok, remote, other, sensitive] = servers;
    expect(ok!.definition.env).toEqual({ TOKEN: 'tok-123456', LEVEL: 'debug', PLAIN: 'visible' });
    expect(ok!.definition.secrets).toEqual(['tok-123456', 'debug']);
    expect(ok!.written.env.TOKEN).toBe('${env:MY_TOKEN}');
    expect(remote!.definition.headers.Authorization).toBe('Bearer tok-123456');
    expect(remote!.definition.secrets).toContain('Bearer tok-123456');
    expect(other!.unresolved?.code).toBe('PLN_E_MCP_REFERENCE_UNRESOLVED');
    expect(other!.unresolved?.message).toContain('${env:API_KEY}');
    expect(sensitive!.unresolved?.code).toBe('PLN_E_MCP_REFERENCE_UNRESOLVED');
    expect(problems.map((p) => p.code)).toEqual(['PLN_E_MCP_REFERENCE_UNRESOLVED', 'PLN_E_MCP_REFERENCE_UNRESOLVED']);
    expect(JSON.stringify(problems)).not.toContain('tok-123456');
  });
});

// ── 2. lifecycle of a stdio server ──────────────────────────────────────────

describe('a stdio server from settings', () => {
  it('connects, reports its states, and stop ends its process', async () => {
    const { mcp } = await boot({ settings: { mcpServers: { fx: { command: process.execPath, args: [STDIO_SERVER, '--name', 'fx-server'] } } } });
    expect(mcp.servers()).toEqual([expect.objectContaining({ name: 'fx', state: 'stopped', transport: 'stdio', source: 'user', attempts: 0 })]);
    const seen = transitions(mcp, 'fx');

    const status = await mcp.start('fx');
    expect(status).toMatchObject({ state: 'connected', transport: 'stdio', attempts: 0, serverInfo: { name: 'fx-server' } });
    expect(status.pid).toBeGreaterThan(0);
    expect(status.tools).toBeGreaterThan(0);
    expect(mcp.tools().map((t) => t.name)).toContain('fx__echo');
    expect(await toolText(mcp, 'fx', 'echo', { text: 'hi' })).toContain('hi');
    // A second start of a connected server changes nothing.
    expect((await mcp.start('fx')).pid).toBe(status.pid);

    await mcp.stop('fx');
    expect(await gone(status.pid!)).toBe(true);
    expect(mcp.servers()[0]!.state).toBe('stopped');
    expect(mcp.client('fx')).toBeUndefined();
    expect(seen).toEqual(['stopped→starting', 'starting→connected', 'connected→stopped']);
  });

  it('notices a server that dies: disconnected, with the reason; restart connects again', async () => {
    const { mcp } = await boot({ settings: { mcpServers: { fx: { command: process.execPath, args: [STDIO_SERVER] } } } });
    const first = await mcp.start('fx');
    const down = reached(mcp, 'fx', 'disconnected');
    process.kill(first.pid!, 'SIGKILL');
    const status = await down;
    expect(status.error?.code).toBe('PLN_E_MCP_DISCONNECTED');
    expect(status.error?.message).toContain('SIGKILL');
    expect(mcp.tools().filter((t) => t.server === 'fx')).toEqual([]);

    const again = await mcp.restart('fx');
    expect(again.state).toBe('connected');
    expect(again.pid).not.toBe(first.pid);
  });

  it('refuses unknown and disabled servers with their codes', async () => {
    const { mcp } = await boot({ settings: { mcpServers: { off: { command: 'node', enabled: false } } } });
    await expect(mcp.start('nope')).rejects.toMatchObject({ code: 'PLN_E_MCP_SERVER_UNKNOWN' });
    await expect(mcp.start('off')).rejects.toMatchObject({ code: 'PLN_E_MCP_SERVER_DISABLED' });
    expect(await mcp.startAll()).toEqual([]);
  });
});

// ── 3. secrets ──────────────────────────────────────────────────────────────

describe('env references', () => {
  const token = `tok-${randomBytes(12).toString('hex')}`;
  beforeAll(() => {
    process.env.MCP_TEST_TOKEN = token;
  });
  afterAll(() => {
    delete process.env.MCP_TEST_TOKEN;
  });

  it('reach the server resolved, and are never shown in statuses, errors or logs', async () => {
    const env = { MCP_TEST_TOKEN: '${env:MCP_TEST_TOKEN}' };
    const { kernel, mcp } = await boot({
      settings: {
        mcpServers: {
          fx: { command: process.execPath, args: [STDIO_SERVER], env },
          leaky: { command: process.execPath, args: [join(CORE, 'leak-env.mjs')], env },
        },
      },
      mcp: { retries: 0 },
    });
    const fx = await mcp.start('fx');
    expect(fx.state).toBe('connected');
    expect(await toolText(mcp, 'fx', 'get_env', { name: 'MCP_TEST_TOKEN' })).toBe(JSON.stringify(token));
    expect(mcp.definition('fx')!.secrets).toEqual([token]);

    // A server that prints the secret on stderr and stdout, then exits.
    const leaky = await mcp.start('leaky');
    expect(leaky.state).toBe('error');
    expect(leaky.error?.code).toBe('PLN_E_MCP_CONNECT_FAILED');
    expect(leaky.stderrTail).toContain('leak-env: token is [redacted]');

    const shown = JSON.stringify([mcp.servers(), mcp.problems?.(), kernel.logs]);
    expect(shown).not.toContain(token);
  });
});

// ── 4. timeout and retries ──────────────────────────────────────────────────

describe('connecting', () => {
  it('gives up on a server that never answers initialize after the connection timeout, and stops it', async () => {
    const { mcp } = await boot({ settings: { mcpServers: { silent: { command: process.execPath, args: [join(CORE, 'silent.mjs')], timeout: 1500 } } }, mcp: { retries: 0 } });
    const status = await mcp.start('silent');
    expect(status.state).toBe('error');
    expect(status.error?.code).toBe('PLN_E_MCP_CONNECT_TIMEOUT');
    expect(status.error?.message).toContain('1500 ms');
    expect(status.attempts).toBe(1);
    const pid = Number(/silent: pid (\d+)/.exec(status.stderrTail ?? '')?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(await gone(pid)).toBe(true);
  });

  it('retries with exponential backoff, then reports error', async () => {
    const { kernel, mcp } = await boot({
      settings: { mcpServers: { quitter: { command: process.execPath, args: [STDIO_SERVER, '--exit-at-start', '3', '--stderr', 'quitter: leaving'] } } },
      mcp: { retries: 2, retryBaseMs: 20 },
    });
    const seen = transitions(mcp, 'quitter');
    const status = await mcp.start('quitter');
    expect(status.state).toBe('error');
    expect(status.error?.code).toBe('PLN_E_MCP_CONNECT_FAILED');
    expect(status.error?.message).toContain('after 3 attempts');
    expect(status.attempts).toBe(3);
    expect(status.stderrTail).toContain('quitter: leaving');
    const waits = kernel.logs.flatMap((line) => /retrying in (\d+) ms/.exec(line)?.[1] ?? []);
    expect(waits).toEqual(['20', '40']);
    expect(seen).toEqual(['stopped→starting', 'starting→error']);
  });

  it('a caller may ask for fewer (or more) retries than the setting: start, restart and startAll take { retries }', async () => {
    const { kernel, mcp } = await boot({
      settings: { mcpServers: { quitter: { command: process.execPath, args: [STDIO_SERVER, '--exit-at-start', '3'] } } },
      mcp: { retries: 2, retryBaseMs: 20 },
    });
    const once = await mcp.start('quitter', { retries: 0 });
    expect(once).toMatchObject({ state: 'error', attempts: 1, error: { code: 'PLN_E_MCP_CONNECT_FAILED' } });
    expect(once.error?.message).not.toContain('after');
    expect(await mcp.restart('quitter', { retries: 3 })).toMatchObject({ state: 'error', attempts: 4 });
    expect((await mcp.startAll({ retries: 0 })).find((s) => s.name === 'quitter')).toMatchObject({ state: 'error', attempts: 1 });
    // Not a whole number of at least 0: the nearest that is.
    expect(await mcp.restart('quitter', { retries: -5 })).toMatchObject({ state: 'error', attempts: 1 });
    // Without options, the setting.
    expect(await mcp.restart('quitter')).toMatchObject({ state: 'error', attempts: 3 });
    expect(kernel.logs.flatMap((line) => /retrying in (\d+) ms/.exec(line)?.[1] ?? [])).toEqual(['20', '40', '80', '20', '40']);
  });
});

// ── 5. transports that are not there ────────────────────────────────────────

describe('transports', () => {
  it('names what to install for an unknown transport, and what to enable for a disabled one; neither is retried', async () => {
    const { mcp } = await boot({
      settings: {
        plugins: { 'transport-stdio': { enabled: false } },
        mcpServers: {
          pigeon: { url: 'http://127.0.0.1:9/mcp', transport: 'carrier-pigeon' },
          local: { command: process.execPath, args: [STDIO_SERVER] },
        },
      },
    });
    const pigeon = await mcp.start('pigeon');
    expect(pigeon).toMatchObject({ state: 'error', attempts: 1, error: { code: 'PLN_E_MCP_TRANSPORT_UNKNOWN' } });
    expect(pigeon.error?.message).toContain('transport:carrier-pigeon');
    const local = await mcp.start('local');
    expect(local).toMatchObject({ state: 'error', attempts: 1, error: { code: 'PLN_E_MCP_TRANSPORT_UNKNOWN' } });
    expect(local.error?.message).toContain('plugins.transport-stdio.enabled');
  });
});

// ── 6. trust ────────────────────────────────────────────────────────────────

describe('a workspace server', () => {
  it('is not started until approved, starts once approved, and needs approval again when its script changes', async () => {
    const workspace = await temp();
    // The server's script lives in the workspace: what the project ships, and what trust fingerprints.
    const script = join(workspace, 'server.mjs');
    await writeFile(script, `import ${JSON.stringify(STDIO_SERVER)};\n`);
    // The server loads the MCP SDK from outside the workspace, which the sandbox would hide from a workspace server
    // (granted nothing): what is tested here is approval. Confinement: test/sandbox-*.test.ts.
    const { mcp } = await boot({ workspace, workspaceSettings: { mcpServers: { ws: { command: process.execPath, args: ['server.mjs'] } } }, settings: { plugins: { sandbox: { enabled: false } } } });
    expect(mcp.definition('ws')).toMatchObject({ source: 'workspace', cwd: workspace });

    const refused = await mcp.start('ws');
    expect(refused.state).toBe('error');
    expect(refused.error?.code).toBe('PLN_E_MCP_UNTRUSTED');
    const command = /plinth trust approve mcp-server ws[^\n]*/.exec(refused.error!.message)?.[0];
    expect(command).toBeDefined();

    // The user runs the command the message gives.
    const words = command!.split(' ').slice(1);
    await promisify(execFile)(process.execPath, [bin, ...words, '--workspace', workspace], { cwd: workspace, env: { ...process.env, CI: '1' } });

    const approved = await mcp.restart('ws');
    expect(approved.state).toBe('connected');
    expect(approved.source).toBe('workspace');

    await appendFile(script, '// changed\n');
    const changed = await mcp.restart('ws');
    expect(changed.error?.code).toBe('PLN_E_MCP_UNTRUSTED');
    expect(changed.error?.message).toContain('changed');
  });
});

// ── 7. transports by profile ────────────────────────────────────────────────

describe('a profile', () => {
  it('swaps a remote server from streamable HTTP to SSE without touching anything else', async () => {
    const { base, stats } = await httpServer();
    const settings = {
      mcpServers: { remote: { url: `${base}/mcp`, transport: 'http' } },
      profiles: { legacy: { mcpServers: { remote: { url: `${base}/sse`, transport: 'sse' } } } },
    };
    const before = (await stats()).sseSessions as number;

    const { mcp: plain } = await boot({ settings });
    const overHttp = await plain.start('remote');
    expect(overHttp).toMatchObject({ state: 'connected', transport: 'http', serverInfo: { name: 'http-fixture' } });
    expect(await toolText(plain, 'remote', 'echo', { text: 'over http' })).toContain('over http');

    const { mcp: legacy } = await boot({ settings, profile: 'legacy' });
    const overSse = await legacy.start('remote');
    expect(overSse).toMatchObject({ state: 'connected', transport: 'sse', serverInfo: { name: 'http-fixture' } });
    expect(await toolText(legacy, 'remote', 'echo', { text: 'over sse' })).toContain('over sse');
    expect((await stats()).sseSessions).toBe(before + 1);
  });

  it('is not needed for an old server: a url without transport falls back to SSE when streamable HTTP answers 4xx', async () => {
    const { base } = await httpServer();
    const { mcp } = await boot({ settings: { mcpServers: { old: { url: `${base}/sse` }, current: { url: `${base}/mcp` } } } });
    expect(mcp.definition('old')!.transport).toBe('auto');
    const [old, current] = await mcp.startAll();
    expect(old).toMatchObject({ name: 'old', state: 'connected', transport: 'sse' });
    expect(current).toMatchObject({ name: 'current', state: 'connected', transport: 'http' });
  });
});

// ── 8. serve and shutdown ───────────────────────────────────────────────────

describe('serve and shutdown', () => {
  it('serve starts every enabled server; shutdown stops each, with the processes they started', async () => {
    const { kernel, mcp } = await boot({
      settings: {
        mcpServers: {
          one: { command: process.execPath, args: [STDIO_SERVER, '--child'] },
          two: { command: process.execPath, args: [STDIO_SERVER, '--ignore-eof'] },
          off: { command: process.execPath, args: [STDIO_SERVER], enabled: false },
        },
      },
    });
    await kernel.serve();
    const [one, two] = await Promise.all([reached(mcp, 'one', 'connected'), reached(mcp, 'two', 'connected')]);
    expect(mcp.servers().find((s) => s.name === 'off')!.state).toBe('stopped');
    const info = JSON.parse(await toolText(mcp, 'one', 'pids')) as { children: number[] };
    const pids = [one.pid!, two.pid!, ...info.children];
    expect(pids.every((pid) => isAlive(pid))).toBe(true);

    const report = await kernels.pop()!.dispose();
    expect(report.errors).toEqual([]);
    for (const pid of pids) expect(await gone(pid)).toBe(true);
  });

  it('a stop during a start calls the start off and leaves no process', async () => {
    const pidFile = join(await temp(), 'pid');
    const { mcp } = await boot({ settings: { mcpServers: { silent: { command: process.execPath, args: [join(CORE, 'silent.mjs'), pidFile] } } } });
    const starting = mcp.start('silent');
    await reached(mcp, 'silent', 'starting');
    // Wait until the process runs, then stop.
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    await mcp.stop('silent');
    const status = await starting;
    expect(status.state).toBe('stopped');
    expect(await gone(Number(await readFile(pidFile, 'utf8')))).toBe(true);
  });
});
