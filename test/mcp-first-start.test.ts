/**
 * A server run by a package runner (`npx -y pkg`, `uvx pkg`, …) downloads its
 * package on its first start, which takes longer than the connection timeout.
 * The stand-in `npx` here is a real program on a PATH the test controls: it
 * writes npm's "will be installed" line to stderr, sleeps as a download
 * would, then execs a real SDK server. With a small `connectTimeout` and the
 * runner's first start getting `firstStartTimeout`, the outcome is the
 * assertion (connected, or PLN_E_MCP_CONNECT_TIMEOUT), never a duration.
 * Also: which command lines are package runners, and the progress line on a
 * real terminal (a pty).
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { packageRunner } from '../plugins/mcp/package-runner.js';
import type { McpService, ServerState } from 'plinth/sdk';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { cleanEnv, ensureBuilt, sandbox } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const STDIO_SERVER = join(root, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false } };
/** Longer than the usual limit below, in every case: the stand-in is still "downloading" when it runs out. */
const DOWNLOAD_S = 2;
const USUAL_MS = 1000;
const PTY = join(root, 'test', 'support', 'on-terminal.py');
const BIN = join(root, 'dist', 'cli', 'bin.js');

beforeAll(() => ensureBuilt(), 120_000);

const kernels: TestKernel[] = [];
const folders: string[] = [];

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});
afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A folder holding `name`: a program that "downloads" for DOWNLOAD_S seconds, then becomes the fixture server. */
async function slowStarter(name: string): Promise<string> {
  const bin = await mkdtemp(join(tmpdir(), 'plinth-runner-'));
  folders.push(bin);
  const script = [
    '#!/bin/sh',
    'echo "npm warn exec The following package was not found and will be installed: fixture-server@1.0.0" >&2',
    `sleep ${DOWNLOAD_S}`,
    `exec "${process.execPath}" "${STDIO_SERVER}" --name first-start`,
    '',
  ].join('\n');
  await writeFile(join(bin, name), script);
  await chmod(join(bin, name), 0o755);
  return bin;
}

async function boot(servers: Record<string, { program: string; args: string[]; bin: string }>): Promise<{ kernel: TestKernel; mcp: McpService }> {
  const mcpServers = Object.fromEntries(
    Object.entries(servers).map(([name, { program, args, bin }]) => [name, { command: program, args, env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` } }]),
  );
  const kernel = await createTestKernel({
    builtin: true,
    settings: { mcpServers, plugins: { ...QUIET, mcp: { settings: { connectTimeout: USUAL_MS, firstStartTimeout: 60_000, retries: 0 } } } },
  });
  kernels.push(kernel);
  return { kernel, mcp: await kernel.get('mcp') };
}

describe('which command lines are package runners', () => {
  it('knows npx, npm exec, pnpm dlx, yarn dlx, bunx, uvx, uv tool run, pipx run (flags skipped), and nothing else', () => {
    const runner = (command: string, ...args: string[]) => packageRunner({ command, args });
    expect(runner('npx', '-y', '@modelcontextprotocol/server-everything')).toBe('npx');
    expect(runner('/usr/local/bin/npx.cmd', 'pkg')).toBe('npx');
    expect(runner('npm', '--yes', 'exec', 'pkg')).toBe('npm exec');
    expect(runner('pnpm', 'dlx', 'pkg')).toBe('pnpm dlx');
    expect(runner('yarn', 'dlx', 'pkg')).toBe('yarn dlx');
    expect(runner('bunx', 'pkg')).toBe('bunx');
    expect(runner('uvx', 'mcp-server-fetch')).toBe('uvx');
    expect(runner('uv', 'tool', 'run', 'mcp-server-fetch')).toBe('uv tool run');
    expect(runner('pipx', 'run', 'pkg')).toBe('pipx run');
    expect(runner('npm', 'run', 'serve')).toBeUndefined();
    expect(runner('uv', 'run', 'server.py')).toBeUndefined();
    expect(runner('node', 'server.js')).toBeUndefined();
    expect(packageRunner({ args: [] })).toBeUndefined();
  });
});

describe('a package runner\'s first start', () => {
  it('stays starting past the usual limit and connects; the next start has the usual limit, and after it timed out the longer one again', async () => {
    const bin = await slowStarter('npx');
    const { kernel, mcp } = await boot({ everything: { program: 'npx', args: ['-y', 'fixture-server'], bin } });
    const states: ServerState[] = [];
    mcp.onStateChange((status) => {
      if (status.name === 'everything') states.push(status.state);
    });

    const first = await mcp.start('everything');
    expect(first.error).toBeUndefined();
    expect(first).toMatchObject({ state: 'connected', serverInfo: { name: 'first-start' } });
    expect(states).toEqual(['starting', 'connected']);

    // Remembered by a hash: the record holds no argument.
    const record = await readFile(join(kernel.home, 'mcp-runners.json'), 'utf8');
    expect((JSON.parse(record) as { started: string[] }).started).toHaveLength(1);
    expect(record).not.toContain('fixture-server');

    // Started before: the usual limit, which the stand-in (still "downloading") outlasts.
    await mcp.stop('everything');
    const again = await mcp.start('everything');
    expect(again.error?.code).toBe('PLN_E_MCP_CONNECT_TIMEOUT');
    expect(again.error?.message).not.toContain('first start');

    // That timeout made it a first start again: the longer limit, connected.
    const third = await mcp.start('everything');
    expect(third.error).toBeUndefined();
    expect(third.state).toBe('connected');
  });

  it('is only for package runners: the same slow program under another name has the usual limit', async () => {
    const bin = await slowStarter('my-server');
    const { mcp } = await boot({ plain: { program: 'my-server', args: ['-y', 'fixture-server'], bin } });
    const status = await mcp.start('plain');
    expect(status.error?.code).toBe('PLN_E_MCP_CONNECT_TIMEOUT');
  });
});

describe('progress', () => {
  it('on a terminal, a first start shows the seconds spent and the server\'s last stderr line; without one, nothing', async () => {
    const bin = await slowStarter('npx');
    const box = await sandbox('plinth-first-start-');
    folders.push(box.base);
    await box.settings({
      mcpServers: { everything: { command: 'npx', args: ['-y', 'fixture-server'], env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` } } },
      plugins: { ...QUIET, mcp: { settings: { connectTimeout: USUAL_MS, firstStartTimeout: 60_000, retries: 0 } } },
    });
    const argv = [process.execPath, BIN, ...box.dirs, 'mcp', 'status', 'everything'];
    const run = promisify(execFile);
    const { stdout: terminal } = await run('python3', [PTY, JSON.stringify(argv), JSON.stringify(cleanEnv({}, { ci: true })), 'n', 'NEVER SHOWN'], { cwd: root, timeout: 60_000 });
    expect(terminal).toContain('MCP server "everything": first start (npx), ');
    expect(terminal).toContain(': npm warn exec The following package');
    expect(terminal).toMatch(/everything.*connected/);

    // A first start again (the record removed), on a pipe: no progress line.
    await rm(join(box.home, 'mcp-runners.json'));
    const { stdout, stderr } = await run(process.execPath, [BIN, ...box.dirs, 'mcp', 'status', 'everything'], { cwd: root, env: cleanEnv({}, { ci: true }), timeout: 60_000 });
    expect(stdout).toMatch(/everything.*connected/);
    expect(`${stdout}${stderr}`).not.toContain('first start');
  });
});
