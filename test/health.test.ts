/**
 * The health plugin against real faulty servers (test/fixtures/mcp/faulty/):
 * each test asserts the state reached, what a caller sees, and that no
 * process is left behind. The first part drives the monitor over a minimal
 * `mcp` service built on the SDK's own Client (fixtures/mcp/faulty/mini-mcp.ts);
 * the second boots real kernels.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { type Logger } from 'plinth/sdk';
import { createTestKernel, type TestKernel } from 'plinth/testing';
import type { InlinePlugin } from '../kernel/kernel.js';
import type { McpService } from 'plinth/sdk';
import { HealthBoard } from '../plugins/health/board.js';
import { HealthMonitor } from '../plugins/health/monitor.js';
import { createHealthService } from '../plugins/health/service.js';
import { backoffDelay, healthSettings, type HealthSettings } from '../plugins/health/settings.js';
import type { HealthChange, HealthService, HealthState } from 'plinth/sdk';
import { MiniMcp } from './fixtures/mcp/faulty/mini-mcp.js';
import { isAlive } from '../internal/process/tree.js';

const faulty = (file: string): string => fileURLToPath(new URL(`./fixtures/mcp/faulty/${file}`, import.meta.url));

/** Small numbers so that a whole backoff sequence takes a fraction of a second. */
const FAST: HealthSettings = {
  interval: 3_600_000, // checks only when a test asks: a death must be noticed without them
  timeout: 1500, // generous: a loaded machine must not make a healthy server look slow
  degradedMs: 2000,
  failuresForDegraded: 1,
  failuresForRestart: 3,
  maxRestarts: 3,
  backoffBaseMs: 50,
  startRetryMs: 50,
};

let markers = 0;
/** A unique word on a fixture's command line, to find its processes (leaked or not). */
const marker = (): string => `--health-test-marker=${process.pid}-${++markers}`;

// ---- process checks --------------------------------------------------------


/** Live processes whose command line contains `mark`. */
async function processesWith(mark: string): Promise<string[]> {
  const { stdout } = await execa('ps', ['-eo', 'pid=,stat=,args=']);
  return stdout.split('\n').filter((line) => line.includes(mark) && !/^\s*\d+\s+Z/.test(line));
}

async function eventually(check: () => boolean | Promise<boolean>, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
}

/** No process carrying `mark` survives (after a bounded wait: closing a stdio server takes a moment). */
async function expectNoneLeft(mark: string, pids: readonly number[] = []): Promise<void> {
  await eventually(async () => pids.every((pid) => !isAlive(pid)) && (await processesWith(mark)).length === 0);
  expect(pids.filter(isAlive)).toEqual([]);
  expect(await processesWith(mark)).toEqual([]);
}

// ---- the monitor over a minimal mcp service --------------------------------

interface Rig {
  readonly mcp: MiniMcp;
  readonly health: HealthService;
  readonly monitor: HealthMonitor;
  readonly changes: HealthChange[];
  readonly emitted: HealthChange[];
  readonly logs: string[];
  readonly mark: string;
  /** Resolves with the first change from now on that matches. */
  next(match: (change: HealthChange) => boolean): Promise<HealthChange>;
  /** The states `server` went through, in order. */
  states(server: string): HealthState[];
}

const rigs: Rig[] = [];

afterEach(async () => {
  for (const rig of rigs.splice(0)) {
    rig.monitor.close();
    await rig.mcp.close();
    await expectNoneLeft(rig.mark, rig.mcp.pids());
  }
});

function rig(servers: Record<string, { file: string; args?: string[] }>, settings: Partial<HealthSettings> = {}, connectTimeoutMs = 5000): Rig {
  const mark = marker();
  const config = Object.fromEntries(
    Object.entries(servers).map(([name, s]) => [name, { command: process.execPath, args: [faulty(s.file), ...(s.args ?? []), mark] }]),
  );
  const mcp = new MiniMcp(config, connectTimeoutMs);
  const logs: string[] = [];
  const log: Logger = {
    debug: (m) => void logs.push(`debug ${m}`),
    info: (m) => void logs.push(`info ${m}`),
    warn: (m) => void logs.push(`warn ${m}`),
    error: (m) => void logs.push(`error ${m}`),
  };
  const emitted: HealthChange[] = [];
  const board = new HealthBoard({ log, redact: (text) => text.replaceAll('sk-secret-value', '[redacted]'), emit: (change) => void emitted.push(change) });
  const monitor = new HealthMonitor({ settings: { ...FAST, ...settings }, board, mcp: async () => mcp, log });
  const health = createHealthService(monitor, board);
  const changes: HealthChange[] = [];
  const waiters = new Set<{ match: (c: HealthChange) => boolean; resolve: (c: HealthChange) => void }>();
  health.onChange((change) => {
    changes.push(change);
    for (const waiter of [...waiters]) {
      if (waiter.match(change)) {
        waiters.delete(waiter);
        waiter.resolve(change);
      }
    }
  });
  const next = (match: (c: HealthChange) => boolean): Promise<HealthChange> =>
    new Promise((resolve, reject) => {
      const waiter = { match, resolve };
      waiters.add(waiter);
      // A deadline for a broken test, not a timing assertion.
      setTimeout(() => waiters.delete(waiter) && reject(new Error(`no such change; seen: ${changes.map((c) => c.message).join(' | ')}`)), 20_000).unref();
    });
  const states = (server: string): HealthState[] => changes.filter((c) => c.server === server).map((c) => c.state);
  const made: Rig = { mcp, health, monitor, changes, emitted, logs, mark, next, states };
  rigs.push(made);
  return made;
}

const is = (server: string, state: HealthState) => (change: HealthChange) => change.server === server && change.state === state;

describe('health settings', () => {
  const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../plugins/health/manifest.json', import.meta.url)), 'utf8')) as {
    settings: Array<{ name: string; default: unknown }>;
  };
  const defaults = Object.fromEntries(manifest.settings.map((s) => [s.name, s.default]));

  test('the manifest defaults are valid: 30 s checks, 3 restarts 1 s, 2 s, 4 s apart', () => {
    const settings = healthSettings(defaults);
    expect(settings).toMatchObject({ interval: 30_000, maxRestarts: 3, backoffBaseMs: 1000 });
    expect([1, 2, 3].map((attempt) => backoffDelay(settings.backoffBaseMs, attempt))).toEqual([1000, 2000, 4000]);
  });

  test('a server cannot be restarted for failed checks before it is degraded by them', () => {
    expect(() => healthSettings({ ...defaults, failuresForDegraded: 4, failuresForRestart: 3 })).toThrow(/failuresForDegraded/);
    expect(() => healthSettings({ ...defaults, interval: 0 })).toThrow();
  });
});

describe('health over the mcp contract', () => {
  test('a normal server is healthy; check pings it and records the latency', async () => {
    const { mcp, health } = rig({ ok: { file: 'normal.mjs' } });
    await mcp.start('ok');
    await health.start();
    expect(health.running()).toBe(true);
    const checked = await health.check('ok');
    expect(checked).toMatchObject({ name: 'ok', state: 'healthy', probe: 'ping', failures: 0, restarts: 0 });
    expect(checked?.latencyMs).toBeTypeOf('number');
    expect(checked?.lastCheck).toBeTypeOf('string');
    expect(health.status().map((s) => s.name)).toEqual(['ok']);
  });

  test('a server without ping is checked with tools/list instead', async () => {
    const { mcp, health } = rig({ noping: { file: 'normal.mjs', args: ['--no-ping'] } });
    await mcp.start('noping');
    await health.start();
    expect(await health.check('noping')).toMatchObject({ state: 'healthy', probe: 'tools/list', failures: 0 });
  });

  test('a slow ping marks the server degraded; a later fast one does not exist here, so it stays degraded', async () => {
    const { mcp, health, changes } = rig({ slow: { file: 'normal.mjs', args: ['--slow-ping=200'] } }, { degradedMs: 50, timeout: 5000 });
    await mcp.start('slow');
    await health.start();
    const checked = await health.check('slow');
    expect(checked?.state).toBe('degraded');
    expect(checked?.reason).toContain('ping took');
    expect(changes.at(-1)).toMatchObject({ kind: 'mcp-health', server: 'slow', state: 'degraded', previous: 'healthy', attempt: 0 });
  });

  test('SIGKILL: noticed at once (no check runs), restarted after the backoff, healthy again', async () => {
    const { mcp, health, next, states } = rig({ victim: { file: 'normal.mjs' } });
    await mcp.start('victim');
    await health.start();
    const pid = mcp.servers()[0]!.pid!;
    // A call in flight when the process dies: the caller is answered, not left hanging.
    const call = mcp.client('victim')!.callTool({ name: 'wait', arguments: { ms: 0 } });
    const restarting = next(is('victim', 'restarting'));
    process.kill(pid, 'SIGKILL');
    await expect(call).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' }); // the SDK's SdkErrorCode.ConnectionClosed
    const change = await restarting;
    expect(change).toMatchObject({ previous: 'healthy', attempt: 1 });
    expect(change.nextRetryAt).toBeTypeOf('string');
    await next(is('victim', 'healthy'));
    expect(states('victim')).toEqual(['healthy', 'restarting', 'healthy']);
    const now = mcp.servers()[0]!;
    expect(now.state).toBe('connected');
    expect(now.pid).not.toBe(pid);
    expect(isAlive(pid)).toBe(false);
    expect(health.status()[0]).toMatchObject({ state: 'healthy', restarts: 1, failures: 0 });
  });

  test('a crash in the middle of a call: the call fails, the server is restarted', async () => {
    const { mcp, health, next } = rig({ crashy: { file: 'crash-in-call.mjs' } });
    await mcp.start('crashy');
    await health.start();
    const back = next(is('crashy', 'healthy'));
    await expect(mcp.client('crashy')!.callTool({ name: 'crash', arguments: {} })).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    const change = await back;
    expect(change.reason).toContain('restart 1 of 3 succeeded');
    const result = await mcp.client('crashy')!.callTool({ name: 'echo', arguments: { text: 'back' } });
    expect(result.content).toEqual([{ type: 'text', text: 'back' }]);
  });

  test('exits at start: retried with doubling delays up to maxRestarts, then failed; a manual restart starts a new round', async () => {
    const { mcp, health, next, changes, emitted } = rig({ dead: { file: 'exit-at-start.mjs' } });
    await health.start(); // monitoring first, as at `plinth up`: the failed first start is news
    const failed = next(is('dead', 'failed'));
    expect((await mcp.start('dead')).state).toBe('error');
    const change = await failed;
    const restarting = changes.filter(is('dead', 'restarting'));
    expect(restarting.map((c) => c.attempt)).toEqual([1, 2, 3]);
    // The schedule, as announced: 50, 100, 200 ms after each transition.
    expect(restarting.map((c) => Date.parse(c.nextRetryAt!) - Date.parse(c.at))).toEqual([50, 100, 200]);
    expect(change.reason).toContain('gave up after 3 restarts');
    expect(change.reason).toContain('cannot open its database'); // the server's own stderr line
    expect(health.status()[0]).toMatchObject({ state: 'failed', restarts: 3 });
    expect(emitted).toEqual(changes); // every transition also goes out as a notification (none was a first healthy)

    // Manual restart: counters reset; it fails again, so automatic restarts take over from attempt 1.
    const again = next((c) => is('dead', 'restarting')(c) && c.attempt === 1);
    const manual = await health.restart('dead');
    expect(manual).toMatchObject({ state: 'restarting', restarts: 0 });
    expect(changes.filter(is('dead', 'restarting')).at(-2)).toMatchObject({ attempt: 0, reason: 'manual restart', previous: 'failed' });
    await again;
    await next(is('dead', 'failed'));
  });

  test('a server that starts late is retried until it comes up', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plinth-health-'));
    try {
      const { mcp, health, next, states } = rig({ late: { file: 'late-start.mjs', args: [`--state=${join(dir, 'starts')}`, '--fail=2'] } });
      await health.start();
      const up = next(is('late', 'healthy'));
      expect((await mcp.start('late')).state).toBe('error');
      expect((await up).reason).toContain('restart 2 of 3 succeeded');
      expect(states('late')).toEqual(['restarting', 'restarting', 'healthy']);
      expect(readFileSync(join(dir, 'starts'), 'utf8')).toBe('3');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('failed after the attempt limit, then a manual restart brings it back with its counters reset', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plinth-health-'));
    try {
      const { mcp, health, next } = rig({ late: { file: 'late-start.mjs', args: [`--state=${join(dir, 'starts')}`, '--fail=3'] } }, { maxRestarts: 2 });
      await health.start();
      const failed = next(is('late', 'failed'));
      await mcp.start('late');
      await failed;
      expect(health.status()[0]).toMatchObject({ state: 'failed', restarts: 2 });
      // The fourth start works: a person restarting it is always possible.
      expect(await health.restart('late')).toMatchObject({ state: 'healthy', restarts: 0, failures: 0 });
      expect(mcp.servers()[0]!.state).toBe('connected');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a hung server: failed checks degrade it, then restarts, then failed; the hung process is stopped', async () => {
    const { mcp, health, next, states } = rig({ stuck: { file: 'hang.mjs' } }, { interval: 100, timeout: 150, failuresForRestart: 2, maxRestarts: 1 });
    await mcp.start('stuck');
    await health.start();
    const firstPid = mcp.servers()[0]!.pid!;
    // A call that never gets an answer: only its own timeout ends it.
    await expect(mcp.client('stuck')!.callTool({ name: 'hang', arguments: {} }, { timeout: 200 })).rejects.toMatchObject({ code: 'REQUEST_TIMEOUT' });
    const failed = await next(is('stuck', 'failed'));
    expect(failed.reason).toContain('ping got no answer within 150 ms');
    expect(states('stuck')).toEqual(['healthy', 'degraded', 'restarting', 'healthy', 'degraded', 'failed']);
    // Given up while connected: stopped, so calls fail fast and the process is gone.
    await eventually(() => mcp.servers()[0]!.state === 'stopped');
    expect(mcp.servers()[0]!.state).toBe('stopped');
    expect(health.status()[0]?.state).toBe('failed');
    await eventually(() => !isAlive(firstPid));
    expect(isAlive(firstPid)).toBe(false);
  });

  test('garbage on stdout between messages: calls and checks still work', async () => {
    const { mcp, health } = rig({ noisy: { file: 'garbage-stdout.mjs' } });
    await mcp.start('noisy');
    await health.start();
    const result = await mcp.client('noisy')!.callTool({ name: 'noisy', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'noisy done' }]);
    expect(await health.check('noisy')).toMatchObject({ state: 'healthy', failures: 0 });
  });

  test('nothing but garbage on stdout: the start times out and restarts run out', async () => {
    const { mcp, health, next } = rig({ garbage: { file: 'garbage-stdout.mjs', args: ['--only'] } }, { maxRestarts: 1 }, 500);
    await health.start();
    const failed = next(is('garbage', 'failed'));
    expect((await mcp.start('garbage')).state).toBe('error');
    expect((await failed).reason).toContain('PLN_E_MCP_CONNECT_FAILED');
  });

  test('malformed JSON-RPC answers count as no answer: the check fails and the server is degraded', async () => {
    const { mcp, health } = rig({ bad: { file: 'malformed-jsonrpc.mjs' } });
    await mcp.start('bad');
    await health.start();
    const checked = await health.check('bad');
    expect(checked).toMatchObject({ state: 'degraded', failures: 1 });
    expect(checked?.reason).toContain('no answer');
  });

  test('a server stopped on purpose is no longer monitored and not restarted', async () => {
    const { mcp, health, changes } = rig({ ok: { file: 'normal.mjs' } });
    await mcp.start('ok');
    await health.start();
    await mcp.stop('ok');
    expect(health.status()).toEqual([]);
    expect(await health.check('ok')).toBeUndefined();
    expect(changes.map((c) => c.state)).toEqual(['healthy']);
  });

  test('check and restart name the problem for an unknown server', async () => {
    const { health } = rig({});
    await expect(health.check('nope')).rejects.toMatchObject({ code: 'PLN_E_HEALTH_SERVER_UNKNOWN' });
    await expect(health.restart('nope')).rejects.toMatchObject({ code: 'PLN_E_HEALTH_SERVER_UNKNOWN' });
  });

  test('without monitoring nothing happens on its own: a dead server is failed at the next check, not restarted', async () => {
    const { mcp, health, states } = rig({ victim: { file: 'normal.mjs' } });
    await mcp.start('victim');
    expect(await health.check('victim')).toMatchObject({ state: 'healthy' });
    expect(health.running()).toBe(false);
    process.kill(mcp.servers()[0]!.pid!, 'SIGKILL');
    await eventually(() => mcp.servers()[0]!.state === 'disconnected');
    const checked = await health.check('victim');
    expect(checked?.state).toBe('failed');
    expect(checked?.reason).toContain('restart it by hand');
    expect(states('victim')).toEqual(['healthy', 'failed']);
  });

  test('after close, a death is nobody\'s business: no transition, no restart', async () => {
    const { mcp, health, monitor, changes } = rig({ victim: { file: 'normal.mjs' } });
    await mcp.start('victim');
    await health.start();
    monitor.close();
    expect(health.running()).toBe(false);
    process.kill(mcp.servers()[0]!.pid!, 'SIGKILL');
    await eventually(() => mcp.servers()[0]!.state === 'disconnected');
    await new Promise((resolve) => setTimeout(resolve, 150)); // longer than the backoff: a restart would have begun
    expect(changes.map((c) => c.state)).toEqual(['healthy']);
    expect(mcp.servers()[0]!.state).toBe('disconnected');
  });

  test('reasons are redacted before they are logged or announced', async () => {
    const { mcp, health, next, logs } = rig({ dead: { file: 'exit-at-start.mjs', args: ['--say=token sk-secret-value rejected'] } }, { maxRestarts: 0 });
    await health.start();
    const failed = next(is('dead', 'failed'));
    await mcp.start('dead');
    const change = await failed;
    expect(change.reason).toContain('token [redacted] rejected');
    expect(JSON.stringify(change)).not.toContain('sk-secret-value');
    expect(logs.join('\n')).not.toContain('sk-secret-value');
  });
});

// ---- real kernels: the mcp plugin, the stdio transport, the health plugin ----

interface Booted {
  readonly kernel: TestKernel;
  readonly mcp: McpService;
  readonly health: HealthService;
  /** `notification` events with kind `mcp-health`, as an in-process handler saw them. */
  readonly seen: HealthChange[];
  /** Every change, as a `health.onChange` listener saw them (first healthy states included). */
  readonly changes: HealthChange[];
  readonly mark: string;
  /** Waits until a change matching `match` has happened; resolves with the first such. */
  until(match: (change: HealthChange) => boolean): Promise<HealthChange>;
}

const kernels: Booted[] = [];

afterEach(async () => {
  for (const booted of kernels.splice(0)) {
    await booted.kernel.dispose();
    await expectNoneLeft(booted.mark);
  }
});

/** Boots builtin plinth with `servers` (fixture files) and small health settings, then serves (as `plinth up`). */
async function boot(
  servers: Record<string, { file: string; args?: string[]; timeout?: number } | { url: string }>,
  settings: Partial<HealthSettings> = {},
  plugins: Record<string, { settings: Record<string, unknown> }> = {},
): Promise<Booted> {
  const mark = marker();
  const seen: HealthChange[] = [];
  const observer: InlinePlugin = {
    manifest: { name: 'observer', events: ['notification'] },
    setup(kernel) {
      kernel.on('notification', (context) => {
        if (context.kind === 'mcp-health') seen.push(context as unknown as HealthChange);
      });
    },
  };
  const mcpServers = Object.fromEntries(
    Object.entries(servers).map(([name, s]) => [
      name,
      'url' in s ? { url: s.url, transport: 'http' } : { command: process.execPath, args: [faulty(s.file), ...(s.args ?? []), mark], ...(s.timeout && { timeout: s.timeout }) },
    ]),
  );
  const kernel = await createTestKernel({
    builtin: true,
    plugins: [observer],
    settings: {
      mcpServers,
      plugins: {
        'mcp-demo': { enabled: false },
        // The mcp plugin's own retries (3 by default) are left on: the health plugin's restarts make one attempt
        // each regardless. They still apply to the first start at serve; short waits keep that quick.
        mcp: { settings: { retryBaseMs: 20 } },
        health: { settings: { ...FAST, ...settings } },
        ...plugins,
      },
    },
  });
  const failed = kernel.report.plugins.filter((p) => ['mcp', 'health', 'transport-stdio', 'observer'].includes(p.name) && p.state !== 'active' && p.state !== 'lazy');
  expect(failed).toEqual([]);
  const health = await kernel.get('health');
  const changes: HealthChange[] = [];
  health.onChange((change) => void changes.push(change));
  expect(health.running()).toBe(false); // not before the host stays up
  await kernel.serve();
  expect(health.running()).toBe(true);
  const until = async (match: (change: HealthChange) => boolean): Promise<HealthChange> => {
    await eventually(() => changes.some(match), 20_000);
    const found = changes.find(match);
    if (!found) throw new Error(`no such change; seen: ${changes.map((c) => c.message).join(' | ')}`);
    return found;
  };
  const booted: Booted = { kernel, mcp: await kernel.get('mcp'), health, seen, changes, mark, until };
  kernels.push(booted);
  return booted;
}

const HTTP_SERVER = fileURLToPath(new URL('./fixtures/mcp/servers/http-server.mjs', import.meta.url));

/** The fixture's streamable HTTP server on 127.0.0.1 (`port` 0: any free one), once it listens. */
async function httpServer(port = 0): Promise<{ child: ChildProcess; port: number; url: string; stats: () => Promise<{ initialized: number }> }> {
  const child = spawn(process.execPath, [HTTP_SERVER, '--port', String(port)], { stdio: ['ignore', 'pipe', 'ignore'] });
  const info = await new Promise<{ port: number; url: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited with code ${code} before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{')) resolve(JSON.parse(line) as { port: number; url: string });
    });
  });
  const stats = async () => (await (await fetch(info.url.replace(/\/mcp$/, '/stats'))).json()) as { initialized: number };
  return { child, ...info, stats };
}

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

const statesOf = (seen: readonly HealthChange[], server: string): HealthState[] => seen.filter((c) => c.server === server).map((c) => c.state);

describe('health in a real kernel', () => {
  test('SIGKILL: the call in flight answers PLN_E_MCP_DISCONNECTED, the server is restarted, notifications tell the story', async () => {
    const { mcp, until, seen, changes } = await boot({ victim: { file: 'normal.mjs' } });
    await until(is('victim', 'healthy'));
    const pid = mcp.servers().find((s) => s.name === 'victim')!.pid!;
    const call = mcp.callTool('victim__wait', { ms: 0 });
    await new Promise((resolve) => setTimeout(resolve, 100)); // let the request reach the server (either way the answer is the same)
    process.kill(pid, 'SIGKILL');
    const result = await call;
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('PLN_E_MCP_DISCONNECTED');
    const restarting = await until(is('victim', 'restarting'));
    expect(restarting).toMatchObject({ kind: 'mcp-health', previous: 'healthy', attempt: 1 });
    // Whichever the mcp service heard first: the process's death or the closed connection.
    expect(restarting.reason).toMatch(/SIGKILL|closed the connection/);
    await until((c) => is('victim', 'healthy')(c) && c.previous === 'restarting');
    expect(statesOf(changes, 'victim')).toEqual(['healthy', 'restarting', 'healthy']);
    // The notifications are the same changes, less the first "healthy" (nothing happened yet).
    await eventually(() => seen.length === 2);
    expect(seen).toEqual(changes.slice(1));
    expect(isAlive(pid)).toBe(false);
    await eventually(() => mcp.tools().some((t) => t.name === 'victim__echo'));
    expect((await mcp.callTool('victim__echo', { text: 'again' })).text).toContain('again');
  });

  test('a remote server killed: down at once (restarting, not degraded), the pending call answers PLN_E_MCP_DISCONNECTED; restarted on the same port, it is reconnected in a new session and healthy', async () => {
    let server = await httpServer();
    try {
      // Checks every 200 ms; enough restarts, 200 ms apart and doubling, to outlast a server process starting again.
      // The broken SSE streams are not reopened within the test: the check is what finds the server gone.
      const { mcp, until, changes } = await boot(
        { web: { url: server.url } },
        { interval: 200, backoffBaseMs: 200, maxRestarts: 8 },
        { 'transport-http': { settings: { reconnectDelayMs: 60_000 } } },
      );
      await until(is('web', 'healthy'));
      await eventually(() => mcp.tools().some((t) => t.name === 'web__slow'));
      const pending = mcp.callTool('web__slow', { ms: 20_000 }, { timeoutMs: 25_000 });
      await new Promise((resolve) => setTimeout(resolve, 200)); // the server has the call
      await killed(server.child);

      const down = await until(is('web', 'restarting'));
      // The first change after healthy: a dead server is not a slow one.
      expect(statesOf(changes, 'web').slice(0, 2)).toEqual(['healthy', 'restarting']);
      expect(down.reason).toMatch(/connection|cannot be reached/);
      const result = await pending;
      expect(result.error?.code).toBe('PLN_E_MCP_DISCONNECTED');

      server = await httpServer(server.port);
      await until((c) => is('web', 'healthy')(c) && c.previous === 'restarting');
      await eventually(() => mcp.tools().some((t) => t.name === 'web__echo'));
      expect((await mcp.callTool('web__echo', { text: 'back' })).text).toBe('back');
      expect((await server.stats()).initialized).toBe(1); // a new session, on the new process
      // The client's capabilities, as a server sees them over the real connection path (SEP-1034 defaults declared).
      expect(JSON.parse((await mcp.callTool('web__client_capabilities', {})).text)).toMatchObject({ elicitation: { form: { applyDefaults: true } } });
    } finally {
      await killed(server.child);
    }
  });

  test('a crash in the middle of a call: PLN_E_MCP_DISCONNECTED for that call, then the server is back', async () => {
    const { mcp, until } = await boot({ crashy: { file: 'crash-in-call.mjs' } });
    await until(is('crashy', 'healthy'));
    const result = await mcp.callTool('crashy__crash', {});
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('PLN_E_MCP_DISCONNECTED');
    const back = await until((c) => is('crashy', 'healthy')(c) && c.previous === 'restarting');
    expect(back.reason).toContain('restart 1 of 3 succeeded');
    await eventually(() => mcp.tools().some((t) => t.name === 'crashy__echo'));
    const echo = await mcp.callTool('crashy__echo', { text: 'alive' });
    expect(echo.ok).toBe(true);
  });

  test('exits at start: restarts with backoff, then failed; a manual restart is still possible', async () => {
    const { mcp, health, until, seen } = await boot({ dead: { file: 'exit-at-start.mjs' } });
    const failed = await until(is('dead', 'failed'));
    expect(seen.filter(is('dead', 'restarting')).map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(failed.reason).toContain('gave up after 3 restarts');
    // The last restart made one connection attempt, not the mcp plugin's 1 + 3 retries.
    expect(mcp.servers().find((s) => s.name === 'dead')).toMatchObject({ state: 'error', attempts: 1 });
    // The caller: the server never connected, so its tools were never known; the message says it is not connected.
    const result = await mcp.callTool('dead__echo', { text: 'x' });
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('PLN_E_MCP_TOOL_UNKNOWN');
    expect(result.error?.message).toContain('no server "dead" is connected');
    expect(await health.restart('dead')).toMatchObject({ state: 'restarting', restarts: 0 });
    await until((c) => is('dead', 'restarting')(c) && c.attempt === 0);
  });

  test('a late starter: failed after the attempt limit, a manual restart brings it back and its tools answer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plinth-health-'));
    try {
      // The first start makes 4 attempts (the mcp plugin's retries), each of the 2 restarts one: 6 failures, then it works.
      // Legacy: under `auto`, a server that exits as its probe arrives is started a second time as a legacy one (each attempt then counts two starts).
      const { mcp, health, until } = await boot({ late: { file: 'late-start.mjs', args: [`--state=${join(dir, 'starts')}`, '--fail=6'] } }, { maxRestarts: 2 }, { mcp: { settings: { protocol: 'legacy' } } });
      await until(is('late', 'failed'));
      expect(Number(readFileSync(join(dir, 'starts'), 'utf8'))).toBe(6);
      expect(await health.restart('late')).toMatchObject({ state: 'healthy', restarts: 0 });
      await eventually(() => mcp.tools().some((t) => t.name === 'late__echo'));
      expect((await mcp.callTool('late__echo', { text: 'finally' })).ok).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a hung server: the call times out with PLN_E_MCP_CALL_TIMEOUT, checks fail, restarts run out, failed', async () => {
    const { mcp, until, changes } = await boot({ stuck: { file: 'hang.mjs' } }, { interval: 100, timeout: 150, failuresForRestart: 2, maxRestarts: 1 });
    await until(is('stuck', 'healthy'));
    await eventually(() => mcp.tools().some((t) => t.name === 'stuck__hang'));
    const result = await mcp.callTool('stuck__hang', {}, { timeoutMs: 200 });
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('PLN_E_MCP_CALL_TIMEOUT');
    const failed = await until(is('stuck', 'failed'));
    expect(failed.reason).toContain('no answer');
    expect(statesOf(changes, 'stuck')).toEqual(['healthy', 'degraded', 'restarting', 'healthy', 'degraded', 'failed']);
    // Given up while connected: stopped, so the next caller is told at once.
    await eventually(() => mcp.servers().find((s) => s.name === 'stuck')?.state === 'stopped');
    const after = await mcp.callTool('stuck__hang', {}, { timeoutMs: 5000 });
    expect(after.ok).toBe(false);
    expect(after.error?.code).toBe('PLN_E_MCP_DISCONNECTED');
  });

  test('garbage on stdout: a noisy server still works; one that only writes garbage times out at start and fails', async () => {
    const { mcp, health, until } = await boot({ noisy: { file: 'garbage-stdout.mjs' }, garbage: { file: 'garbage-stdout.mjs', args: ['--only'], timeout: 500 } }, { maxRestarts: 1 });
    await until(is('noisy', 'healthy'));
    await eventually(() => mcp.tools().some((t) => t.name === 'noisy__noisy'));
    const result = await mcp.callTool('noisy__noisy', {});
    expect(result.ok).toBe(true);
    expect(result.text).toContain('noisy done');
    expect(await health.check('noisy')).toMatchObject({ state: 'healthy', failures: 0 });
    const failed = await until(is('garbage', 'failed'));
    expect(failed.reason).toContain('PLN_E_MCP_CONNECT_TIMEOUT');
  });

  test('malformed JSON-RPC: the call times out with PLN_E_MCP_CALL_TIMEOUT, the check fails, the server is degraded', async () => {
    const { mcp, health, until } = await boot({ bad: { file: 'malformed-jsonrpc.mjs' } });
    await until(is('bad', 'healthy'));
    await eventually(() => mcp.tools().some((t) => t.name === 'bad__echo'));
    const result = await mcp.callTool('bad__echo', { text: 'x' }, { timeoutMs: 300 });
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('PLN_E_MCP_CALL_TIMEOUT');
    expect(await health.check('bad')).toMatchObject({ state: 'degraded', failures: 1 });
    await until(is('bad', 'degraded'));
  });

  test('status lists servers in definition order; shutdown stops monitoring before the servers stop', async () => {
    const { kernel, health, until, changes, mark } = await boot({ one: { file: 'normal.mjs' }, two: { file: 'normal.mjs', args: ['--no-ping'] } });
    await until(is('one', 'healthy'));
    await until(is('two', 'healthy'));
    expect(health.status().map((s) => s.name)).toEqual(['one', 'two']);
    expect((await health.check('two'))?.probe).toBe('tools/list');
    const before = changes.length;
    kernels.splice(0); // disposed here
    await kernel.dispose();
    await expectNoneLeft(mark);
    expect(changes.length).toBe(before); // no "restarting" for servers stopped by the shutdown
    expect(health.running()).toBe(false);
  });
});
