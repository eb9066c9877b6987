/**
 * Closing the terminal ends `plinth up` the way Ctrl-C does: SIGHUP runs the
 * shutdown (teardowns, every MCP server's process group ended), and output
 * that can no longer be written (EPIPE, or EIO from a hung-up terminal) does
 * not crash plinth halfway through it. A real `plinth up` in a process group
 * of its own, with a real stdio MCP server that ignores the end of its stdin
 * (so only plinth's shutdown stops it) and a child in its process group.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { isAlive } from '../internal/process/tree.js';
import { BIN, ROOT, type Sandbox, cleanEnv, ensureBuilt, sandbox } from './support/cli.js';

const SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const TEST_TIMEOUT = 60_000;
/** A bound on waiting, never an assertion on speed. */
const WAIT_MS = 30_000;

interface ServerPids {
  readonly pid: number;
  /** plinth, which started it. */
  readonly ppid: number;
  readonly children: readonly number[];
}

const boxes: Sandbox[] = [];
const leftovers: number[] = [];

beforeAll(() => ensureBuilt(), 300_000);

afterEach(async () => {
  // Whatever a failing test left running goes, so the machine stays clean.
  for (const pid of leftovers.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  for (const box of boxes.splice(0)) await box.remove();
});

/** A sandbox whose user settings define one stdio server that writes its pids to `pidFile`. */
async function withServer(): Promise<{ box: Sandbox; pidFile: string }> {
  const box = await sandbox('plinth-hangup-');
  boxes.push(box);
  const pidFile = join(box.base, 'server.json');
  await box.settings({
    mcpServers: { fixture: { command: process.execPath, args: [SERVER, '--ignore-eof', '--child', '--pid-file', pidFile] } },
  });
  return { box, pidFile };
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function readPids(pidFile: string): ServerPids {
  const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as ServerPids;
  leftovers.push(pids.pid, ...pids.children);
  return pids;
}

/** Every process of the server's tree that is still running, after waiting (bounded) for them to go. */
async function stillRunning(pids: ServerPids): Promise<number[]> {
  const all = [pids.pid, ...pids.children];
  await until('the server to stop', () => all.every((pid) => !isAlive(pid))).catch(() => undefined);
  return all.filter(isAlive);
}

/** `plinth up` in a process group of its own, as a shell starts a job; resolves once it says it is up. */
async function startUp(box: Sandbox): Promise<{ child: ChildProcess; stderr: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }> {
  const child = spawn(process.execPath, [BIN, ...box.dirs, 'up'], { cwd: box.workspace, env: cleanEnv({}, { ci: true }), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  leftovers.push(child.pid!);
  let stderr = '';
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await new Promise<void>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes('plinth is up')) resolve();
    });
    void exited.then(() => reject(new Error(`plinth up exited before it was up:\n${stderr}`)));
  });
  return { child, stderr: () => stderr, exited };
}

describe('SIGHUP', () => {
  test('SIGHUP to plinth up\'s process group shuts down like SIGTERM: the server and its process group are gone', async () => {
    const { box, pidFile } = await withServer();
    const up = await startUp(box);
    await until('the server to write its pids', () => existsSync(pidFile));
    const pids = readPids(pidFile);
    expect(pids.ppid).toBe(up.child.pid);
    expect(pids.children.length).toBe(1);
    expect([pids.pid, ...pids.children].every(isAlive)).toBe(true);

    process.kill(-up.child.pid!, 'SIGHUP');
    const exit = await up.exited;
    expect(exit, up.stderr()).toEqual({ code: 0, signal: null });
    expect(up.stderr()).toMatch(/Stopped \d+ plugin\(s\) in [\d.]+ ms\./);
    expect(await stillRunning(pids)).toEqual([]);
  }, TEST_TIMEOUT);

  test('with stdout and stderr gone (EPIPE on every write), SIGHUP still ends the servers and plinth exits 0', async () => {
    const { box, pidFile } = await withServer();
    const up = await startUp(box);
    await until('the server to write its pids', () => existsSync(pidFile));
    const pids = readPids(pidFile);

    // The reader of plinth's output is gone, as when the terminal it wrote to was closed.
    up.child.stdout!.destroy();
    up.child.stderr!.destroy();
    process.kill(-up.child.pid!, 'SIGHUP');
    expect(await up.exited).toEqual({ code: 0, signal: null });
    expect(await stillRunning(pids)).toEqual([]);
  }, TEST_TIMEOUT);

  const hasScript = (() => {
    try {
      return process.platform === 'linux' && execFileSync('script', ['--version'], { encoding: 'utf8' }).includes('util-linux');
    } catch {
      return false;
    }
  })();

  test.skipIf(!hasScript)('closing the terminal plinth up runs in (a real pseudo-terminal) ends its servers', async () => {
    const { box, pidFile } = await withServer();
    const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
    const command = ['exec', process.execPath, BIN, ...box.dirs, 'up'].map(quote).join(' ');
    // util-linux `script` runs plinth on a new pseudo-terminal, as the controlling
    // process of its session; killing `script` closes the terminal's master side.
    const terminal = spawn('script', ['-qfec', command, '/dev/null'], { cwd: box.workspace, env: { ...cleanEnv({}, { ci: true }), SHELL: '/bin/sh' }, stdio: ['pipe', 'pipe', 'pipe'] });
    leftovers.push(terminal.pid!);
    let screen = '';
    await new Promise<void>((resolve, reject) => {
      terminal.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        screen += chunk;
        if (screen.includes('plinth is up')) resolve();
      });
      terminal.on('exit', () => reject(new Error(`the terminal ended before plinth was up:\n${screen}`)));
    });
    await until('the server to write its pids', () => existsSync(pidFile));
    const pids = readPids(pidFile);
    leftovers.push(pids.ppid);
    expect(isAlive(pids.ppid)).toBe(true);

    terminal.kill('SIGKILL');
    await until('plinth to exit after the hangup', () => !isAlive(pids.ppid));
    expect(await stillRunning(pids)).toEqual([]);
  }, TEST_TIMEOUT);
});
