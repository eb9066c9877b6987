/**
 * A newcomer's first hour (issue 10, items 23 and 25), through the real CLI:
 * every command group prints its help (`plinth mcp --help`); `plinth mcp add`
 * takes the shapes of Claude Code's and Gemini CLI's `mcp add` (`-- <command>
 * [args…]`, `<url>`, `-e`, `-H "Name: value"`, `-t`, `-s user|workspace|project`)
 * as well as its own (`--command`/`--arg`, `--url`); `plinth mcp get <name>`
 * shows what was written (secrets masked) and the state, against real servers
 * (the SDK fixture server over stdio and over HTTP and SSE on 127.0.0.1); the
 * builtin demo server is listed only while the user has no server of their own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const SERVERS = join(ROOT, 'test', 'fixtures', 'mcp', 'servers');
const STDIO = join(SERVERS, 'stdio-server.mjs');
const TIMEOUT = 120_000;
const boxes: Sandbox[] = [];
let http: ChildProcess | undefined;
let urls: { url: string; sse: string };

beforeAll(async () => {
  ensureBuilt();
  http = spawn(process.execPath, [join(SERVERS, 'http-server.mjs'), '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
  urls = await new Promise((resolve, reject) => {
    http!.once('exit', (code) => reject(new Error(`http fixture exited with ${code}`)));
    createInterface({ input: http!.stdout! }).on('line', (line) => {
      if (line.startsWith('{')) resolve(JSON.parse(line) as { url: string; sse: string });
    });
  });
}, 300_000);

afterAll(async () => {
  if (http && http.exitCode === null) {
    const exited = new Promise((resolve) => http!.once('exit', resolve));
    http.kill('SIGTERM');
    await exited;
  }
  await Promise.all(boxes.map((box) => box.remove()));
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-mcp-add-');
  boxes.push(made);
  return made;
}

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8'));
const userServers = async (b: Sandbox) => (await readJson(join(b.home, 'settings.json'))).mcpServers;
const workspaceServers = async (b: Sandbox) => (await readJson(join(b.workspace, '.plinth', 'settings.json'))).mcpServers;

describe('command groups print their help', () => {
  test('every group of `plinth --help` (mcp, hooks, trust, auth, plugins, config, …): exit 0, each of its commands with its usage and summary', async () => {
    const b = await box();
    const help = await run(b, ['--help']);
    expectExit(help, 0);
    const lines = help.stdout.split('\n');
    const section = lines.slice(lines.indexOf('Commands:') + 1, lines.indexOf('', lines.indexOf('Commands:')));
    const names = section.flatMap((line) => {
      const match = /^ {2}(\S+(?: \S+)*?) {2,}/.exec(line);
      return match ? [match[1]!] : [];
    });
    const groups = [...new Set(names.filter((n) => n.includes(' ')).map((n) => n.split(' ')[0]!))];
    expect(groups).toEqual(expect.arrayContaining(['mcp', 'hooks', 'trust', 'auth', 'plugins', 'config']));
    for (const group of groups) {
      const shown = await run(b, [group, '--help']);
      expectExit(shown, 0);
      expect(shown.stdout).toContain(`Usage: plinth ${group} <command>`);
      for (const name of names.filter((n) => n.startsWith(`${group} `))) expect(shown.stdout, `${group} --help lists ${name}`).toContain(`plinth ${name}`);
    }
  }, TIMEOUT);

  test('a group alone prints its help and exits 2 (like plinth alone); a wrong subcommand is still an unknown command', async () => {
    const b = await box();
    const bare = await run(b, ['mcp']);
    expectExit(bare, 2);
    expect(bare.stdout).toContain('plinth mcp add');
    expect(bare.stdout).toContain('plinth mcp get <name>');
    const wrong = await run(b, ['--json', 'mcp', 'nope']);
    expectExit(wrong, 2);
    expect(json(wrong).error.code).toBe('PLN_E_CLI_UNKNOWN_COMMAND');
  }, TIMEOUT);
});

describe('mcp add in the shapes of the peers\' docs, then mcp get', () => {
  test('get and list --json show each server\'s trust: a user server pinned on first use, a workspace one pending with its approve command, then approved', async () => {
    const b = await box();
    expectExit(await run(b, ['mcp', 'add', 'mine', '--', process.execPath, STDIO]), 0);
    expectExit(await run(b, ['mcp', 'add', '-s', 'workspace', 'theirs', '--', process.execPath, STDIO]), 0);
    const pending = await run(b, ['mcp', 'get', 'theirs']);
    expectExit(pending, 1);
    expect(pending.stdout).toMatch(/trust\s+pending: approve with `plinth trust approve mcp-server theirs/);
    const listed = json<{ servers: Array<{ name: string; trust?: { trusted: boolean; level: string } }> }>(await run(b, ['mcp', 'list', '--json']));
    expect(listed.servers.find((s) => s.name === 'theirs')?.trust).toMatchObject({ trusted: false, level: 'pending' });
    expect(listed.servers.find((s) => s.name === 'mine')?.trust).toMatchObject({ trusted: true, level: 'user' });

    expectExit(await run(b, ['trust', 'approve', 'mcp-server', 'theirs']), 0);
    const approved = await run(b, ['mcp', 'get', 'theirs', '--json']);
    expect(json<{ trust: { trusted: boolean; level: string } }>(approved).trust).toMatchObject({ trusted: true, level: 'approved' });
  }, TIMEOUT);

  test('a password or token in a server\'s URL never shows, also where an error quotes the URL whole (get, status, call, --json, the log)', async () => {
    const b = await box();
    const url = new URL(urls.url);
    url.username = 'ada';
    url.password = 'pw-7Hq2xLm9';
    url.searchParams.set('api_key', 'key-Zr84Kp1w');
    expectExit(await run(b, ['mcp', 'add', 'creds', url.toString()]), 0);
    for (const args of [['mcp', 'get', 'creds'], ['mcp', 'status', 'creds', '--json'], ['mcp', 'status', 'creds'], ['call', 'creds__echo', '--args', '{"text":"x"}']]) {
      const result = await run(b, args);
      const all = result.stdout + result.stderr;
      expect(all, args.join(' ')).toContain('creds');
      expect(all, args.join(' ')).not.toContain('pw-7Hq2xLm9');
      expect(all, args.join(' ')).not.toContain('key-Zr84Kp1w');
    }
  }, TIMEOUT);

  test('<name> -- <command> [args…] with -e KEY=VALUE (repeated): written as typed, the program\'s own options kept; get shows it connected, env values never', async () => {
    const b = await box();
    const added = await run(b, ['mcp', 'add', '-e', 'API_KEY=env-secret-1', '--env', 'MODE=fast', 'files', '--', process.execPath, STDIO, '--name', 'from-dashes']);
    expectExit(added, 0);
    expect((await userServers(b)).files).toEqual({ command: process.execPath, args: [STDIO, '--name', 'from-dashes'], env: { API_KEY: 'env-secret-1', MODE: 'fast' } });

    const got = await run(b, ['mcp', 'get', 'files']);
    expectExit(got, 0);
    expect(got.stdout).toMatch(/state\s+connected \(\d+ tools, pid \d+, from-dashes 1\.0\.0, MCP 2025-11-25 \(legacy\)\)/);
    expect(got.stdout).toContain('API_KEY, MODE (values not shown)');
    expect(got.stdout + got.stderr).not.toContain('env-secret-1');

    const asJson = await run(b, ['--json', 'mcp', 'get', 'files']);
    expectExit(asJson, 0);
    expect(asJson.stdout).not.toContain('env-secret-1');
    const body = json(asJson);
    expect(body.server).toMatchObject({ name: 'files', source: 'user', transport: 'stdio', command: process.execPath, args: [STDIO, '--name', 'from-dashes'], env: ['API_KEY', 'MODE'] });
    expect(body.state).toBe('connected');
    expect(body.status).toMatchObject({ state: 'connected', serverInfo: { name: 'from-dashes' } });
    expect(body.instructions).toEqual(expect.any(String));
  }, TIMEOUT);

  test('<name> <command> [args…] without "--" (Gemini CLI) and -t stdio', async () => {
    const b = await box();
    expectExit(await run(b, ['mcp', 'add', '-t', 'stdio', 'plain', process.execPath, STDIO]), 0);
    expect((await userServers(b)).plain).toEqual({ command: process.execPath, args: [STDIO], transport: 'stdio' });
    const got = await run(b, ['--json', 'mcp', 'get', 'plain']);
    expectExit(got, 0);
    expect(json(got).state).toBe('connected');
  }, TIMEOUT);

  test('-t http <name> <url> with -H "Name: value" (repeated): headers as typed; get shows it connected, header values never', async () => {
    const b = await box();
    const added = await run(b, ['mcp', 'add', '-t', 'http', '-H', 'Authorization: Bearer hdr-secret-2', '--header', 'X-Fixture-Tag: one:two', 'docs', urls.url]);
    expectExit(added, 0);
    expect(added.stdout + added.stderr).not.toContain('hdr-secret-2');
    expect((await userServers(b)).docs).toEqual({ url: urls.url, headers: { Authorization: 'Bearer hdr-secret-2', 'X-Fixture-Tag': 'one:two' }, transport: 'http' });

    const got = await run(b, ['mcp', 'get', 'docs']);
    expectExit(got, 0);
    expect(got.stdout).toMatch(/transport\s+http/);
    expect(got.stdout).toMatch(/state\s+connected/);
    expect(got.stdout).toContain('Authorization, X-Fixture-Tag (values not shown)');
    expect(got.stdout + got.stderr).not.toContain('hdr-secret-2');
  }, TIMEOUT);

  test('--transport sse <name> <url>, and a URL with no -t (streamable HTTP, falling back to SSE)', async () => {
    const b = await box();
    expectExit(await run(b, ['mcp', 'add', '--transport', 'sse', 'legacy', urls.sse]), 0);
    expectExit(await run(b, ['mcp', 'add', 'remote', urls.url]), 0);
    expect(await userServers(b)).toEqual({ legacy: { url: urls.sse, transport: 'sse' }, remote: { url: urls.url } });
    const legacy = json(await run(b, ['--json', 'mcp', 'get', 'legacy']));
    expect(legacy).toMatchObject({ server: { transport: 'sse' }, state: 'connected' });
    const remote = json(await run(b, ['--json', 'mcp', 'get', 'remote']));
    expect(remote).toMatchObject({ server: { transport: 'auto' }, state: 'connected', status: { transport: 'http' } });
  }, TIMEOUT);

  test('-s project and -s workspace write the workspace file; get shows the server as a workspace one waiting for approval', async () => {
    const b = await box();
    expectExit(await run(b, ['mcp', 'add', '-s', 'project', 'team', '--', process.execPath, STDIO]), 0);
    expectExit(await run(b, ['mcp', 'add', '--scope', 'workspace', 'team2', '--', process.execPath, STDIO]), 0);
    expect(Object.keys(await workspaceServers(b))).toEqual(['team', 'team2']);
    const got = await run(b, ['--json', 'mcp', 'get', 'team']);
    expectExit(got, 1);
    const body = json(got);
    expect(body.server).toMatchObject({ name: 'team', source: 'workspace' });
    expect(body.status.error.code).toBe('PLN_E_MCP_UNTRUSTED');
    expect(body.status.error.message).toContain('plinth trust approve mcp-server team');
  }, TIMEOUT);

  test('plinth\'s own forms keep working: --command with --arg, --url with --header Name=Value', async () => {
    const b = await box();
    expectExit(await run(b, ['mcp', 'add', 'old', '--command', process.execPath, '--arg', STDIO]), 0);
    expectExit(await run(b, ['mcp', 'add', 'oldurl', '--url', urls.url, '--header', 'Authorization=Bearer x', '--transport', 'http']), 0);
    expect(await userServers(b)).toEqual({
      old: { command: process.execPath, args: [STDIO] },
      oldurl: { url: urls.url, headers: { Authorization: 'Bearer x' }, transport: 'http' },
    });
    expect(json(await run(b, ['--json', 'mcp', 'get', 'old'])).state).toBe('connected');
  }, TIMEOUT);

  test('shapes that do not fit are usage errors (exit 2) that write nothing; get of an unknown name is PLN_E_MCP_SERVER_UNKNOWN', async () => {
    const b = await box();
    const cases = [
      ['mcp', 'add', 'nothing'],
      ['mcp', 'add', 'both', '--command', 'node', '--', 'node', 's.js'],
      ['mcp', 'add', 'mixed', '--arg', 'a.js', '--', 'node', 'b.js'],
      ['mcp', 'add', '-t', 'http', 'extra', urls.url, 'more'],
      ['mcp', 'add', '-s', 'local', 'where', '--', 'node', 's.js'],
      ['mcp', 'add', '-H', ': no-name', 'hdr', urls.url],
    ];
    for (const args of cases) {
      const result = await run(b, ['--json', ...args]);
      expectExit(result, 2);
      expect(json(result).error.code, args.join(' ')).toBe('PLN_E_CLI_USAGE');
    }
    expect(existsSync(join(b.home, 'settings.json'))).toBe(false);
    const unknown = await run(b, ['--json', 'mcp', 'get', 'nope']);
    expectExit(unknown, 1);
    expect(json(unknown).error.code).toBe('PLN_E_MCP_SERVER_UNKNOWN');
  }, TIMEOUT);
});

describe('the builtin demo server is for a first run only', () => {
  // Three tests of a few commands each (every command is a plinth process): far from the time limit on a loaded machine.
  test('listed (and started) with no server of one\'s own', async () => {
    const fresh = await box();
    const first = json(await run(fresh, ['--json', 'mcp', 'list']));
    expect(first.servers.map((s: { name: string }) => s.name)).toEqual(['demo']);
    const status = json(await run(fresh, ['--json', 'mcp', 'status']));
    expect(status.servers.map((s: { name: string; state: string }) => `${s.name} ${s.state}`)).toEqual(['demo connected']);
  }, TIMEOUT);

  test('gone once the user or the workspace has a server, enabled or not', async () => {
    const withUser = await box();
    await withUser.settings({ mcpServers: { mine: { command: process.execPath, args: [STDIO] } } });
    expect(json(await run(withUser, ['--json', 'mcp', 'list'])).servers.map((s: { name: string }) => s.name)).toEqual(['mine']);
    const started = json(await run(withUser, ['--json', 'mcp', 'status']));
    expect(started.servers.map((s: { name: string }) => s.name)).toEqual(['mine']);
    expect((await run(withUser, ['mcp', 'list'])).stdout).not.toContain('demo');

    // A disabled server of one's own is still one's own.
    const disabled = await box();
    await disabled.settings({ mcpServers: { mine: { command: process.execPath, args: [STDIO], enabled: false } } });
    expect(json(await run(disabled, ['--json', 'mcp', 'list'])).servers.map((s: { name: string }) => s.name)).toEqual(['mine']);

    const withWorkspace = await box();
    expectExit(await run(withWorkspace, ['mcp', 'add', '-s', 'workspace', 'team', '--', process.execPath, STDIO]), 0);
    expect(json(await run(withWorkspace, ['--json', 'mcp', 'list'])).servers.map((s: { name: string }) => s.name)).toEqual(['team']);
  }, TIMEOUT);

  test('switching it off keeps it listed as off; "fallback" in a settings file is an unknown key', async () => {
    const off = await box();
    await off.settings({ mcpServers: { demo: { enabled: false } } });
    const listed = json(await run(off, ['--json', 'mcp', 'list']));
    expect(listed.servers.map((s: { name: string; enabled: boolean }) => `${s.name} ${s.enabled}`)).toEqual(['demo false']);

    // `fallback` is a plugin's word: in a settings file it is an unknown key.
    const claimed = await box();
    await claimed.settings({ mcpServers: { mine: { command: process.execPath, args: [STDIO], fallback: true } } });
    const problems = json(await run(claimed, ['--json', 'mcp', 'list'])).problems;
    expect(problems.map((p: { code: string }) => p.code)).toContain('PLN_E_MCP_SERVER_INVALID');
  }, TIMEOUT);
});

test('mcp add to the user settings says what its relative words will mean: "." is the user folder, and a path that exists here but not there will not be found', async () => {
  const b = await box();
  await mkdir(join(b.workspace, 'tools'), { recursive: true });
  await writeFile(join(b.workspace, 'tools', 'server.js'), '');
  const added = await run(b, ['mcp', 'add', 'rel', '--', 'node', 'tools/server.js', '.']);
  expectExit(added, 0);
  expect(added.stderr).toContain(`"tools/server.js" is read from the user folder ${b.home}, where it does not exist: give its full path (${join(b.workspace, 'tools', 'server.js')})`);
  expect(added.stderr).toContain(`"." in a user server is the user folder ${b.home}`);
  // Written as typed: the note says what it means, the entry is the user's to correct.
  expect(await userServers(b)).toEqual({ rel: { command: 'node', args: ['tools/server.js', '.'] } });
  const quiet = await run(b, ['mcp', 'add', 'full', '--', 'node', join(b.workspace, 'tools', 'server.js'), '${workspace}']);
  expectExit(quiet, 0);
  expect(quiet.stderr).not.toContain('note:');
}, TIMEOUT);
