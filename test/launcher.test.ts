/**
 * The launcher with real child processes: the environment allowlist, program
 * resolution errors, the kill of a whole tree on timeout, output limits, the
 * trace, the teardown of an owner, and a swapped launcher that sees every
 * launch. Every pid started here is killed after each test.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { createLauncher, type LauncherImpl } from '../plugins/launcher/index.js';
import { isPlinthError, type Launcher, type LaunchRunResult } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { descendantsOf, isAlive, killGroup, signalEach } from '../internal/process/tree.js';

const LAUNCHER_DIR = fileURLToPath(new URL('../plugins/launcher/', import.meta.url));
const NODE = process.execPath;
const scratch = mkdtempSync(join(tmpdir(), 'plinth-launcher-'));
const STDIO_SERVER = fileURLToPath(new URL('./fixtures/mcp/servers/stdio-server.mjs', import.meta.url));

const pids = new Set<number>();
const launchers: LauncherImpl[] = [];
const kernels: TestKernel[] = [];

afterEach(async () => {
  await Promise.all(launchers.splice(0).map((l) => l.close()));
  await Promise.all(kernels.splice(0).map((k) => k.dispose()));
  for (const pid of pids) {
    killGroup(pid);
    signalEach([pid], 'SIGKILL');
  }
  pids.clear();
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function launcher(): LauncherImpl {
  const created = createLauncher({ redact: (text) => text.replaceAll('hunter2', '[redacted]') });
  launchers.push(created);
  return created;
}

/** Waits until `check` holds, up to `ms` (no timing is asserted: this only bounds a wait). */
async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return check();
}

/** A node script that forks a grandchild (which prints its pid and idles), then idles itself. */
const FORKS_GRANDCHILD = `
const { spawn } = require('node:child_process');
const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
process.stdout.write(JSON.stringify({ grandchild: g.pid }) + '\\n');
setInterval(() => {}, 1000);
`;

/**
 * A node script that starts a daemon by a double fork (an intermediate starts a sleeper in a session
 * of its own, with no stdio, prints its pid and exits) and prints the daemon's pid.
 */
const DOUBLE_FORKS = `
const { spawnSync } = require('node:child_process');
const inner = "const d = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' }); d.unref(); process.stdout.write(String(d.pid));";
process.stdout.write(spawnSync(process.execPath, ['-e', inner], { encoding: 'utf8' }).stdout);
`;

const text = (result: LaunchRunResult): string => result.stdout.toString('utf8');

async function caught(work: () => unknown): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('environment', () => {
  test('a variable of the host is absent unless declared; allowlisted ones pass', async () => {
    process.env.PLINTH_TEST_LAUNCHER_SECRET = 'sk-do-not-leak';
    process.env.PLINTH_TEST_LAUNCHER_PASSED = 'passed';
    try {
      const l = launcher();
      const script = 'process.stdout.write(JSON.stringify(process.env))';
      const plain = JSON.parse(text(await l.run({ owner: 'test', program: NODE, args: ['-e', script] }))) as Record<string, string>;
      expect(plain.PLINTH_TEST_LAUNCHER_SECRET).toBeUndefined();
      expect(plain.PLINTH_TEST_LAUNCHER_PASSED).toBeUndefined();
      expect(plain.PATH).toBe(process.env.PATH);

      const declared = JSON.parse(
        text(await l.run({ owner: 'test', program: NODE, args: ['-e', script], env: { OWN: 'value' }, passEnv: ['PLINTH_TEST_LAUNCHER_PA*'] })),
      ) as Record<string, string>;
      expect(declared.OWN).toBe('value');
      expect(declared.PLINTH_TEST_LAUNCHER_PASSED).toBe('passed');
      expect(declared.PLINTH_TEST_LAUNCHER_SECRET).toBeUndefined();
    } finally {
      delete process.env.PLINTH_TEST_LAUNCHER_SECRET;
      delete process.env.PLINTH_TEST_LAUNCHER_PASSED;
    }
  });
});

describe('program resolution', () => {
  test('a name not on PATH, a path that is no executable, a missing cwd and a bad request are coded', async () => {
    const l = launcher();
    const notFound = await caught(() => l.start({ owner: 'test', program: 'plinth-no-such-program' }));
    expect(isPlinthError(notFound) && notFound.code).toBe('PLN_E_LAUNCH_NOT_FOUND');
    const data = join(scratch, 'data.txt');
    writeFileSync(data, 'not a program');
    const notExecutable = await caught(() => l.run({ owner: 'test', program: data }));
    expect(isPlinthError(notExecutable) && notExecutable.code).toBe('PLN_E_LAUNCH_NOT_FOUND');
    const noCwd = await caught(() => l.run({ owner: 'test', program: NODE, cwd: join(scratch, 'missing') }));
    expect(isPlinthError(noCwd) && noCwd.code).toBe('PLN_E_LAUNCH_CWD');
    const invalid = await caught(() => l.run({ owner: 'test', program: '' }));
    expect(isPlinthError(invalid) && invalid.code).toBe('PLN_E_LAUNCH_INVALID');
    expect(l.trace().filter((e) => e.state === 'failed').map((e) => e.program)).toEqual(['plinth-no-such-program', data, NODE]);
  });

  test('a name is looked up on the PATH of the child and its real path is started', async () => {
    const bin = mkdtempSync(join(scratch, 'bin-'));
    const tool = join(bin, 'plinth-launcher-tool');
    writeFileSync(tool, `#!${NODE}\nprocess.stdout.write(process.argv0 + ' ran')\n`);
    chmodSync(tool, 0o755);
    const l = launcher();
    const result = await l.run({ owner: 'test', program: 'plinth-launcher-tool', env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
    expect(text(result)).toContain('ran');
    expect(l.trace().at(-1)?.program).toBe(tool);
  });
});

describe('the tree', () => {
  test('a timeout kills the child and the grandchild it forked', async () => {
    const l = launcher();
    const child = l.start({ owner: 'test', program: NODE, args: ['-e', FORKS_GRANDCHILD], stdin: 'ignore', timeoutMs: 1500 });
    pids.add(child.pid!);
    const first = await new Promise<string>((resolve) => child.stdout!.once('data', (data: Buffer) => resolve(data.toString())));
    const { grandchild } = JSON.parse(first) as { grandchild: number };
    pids.add(grandchild);
    expect(isAlive(grandchild)).toBe(true);
    const end = await child.ended;
    expect(end.signal).toBe('SIGKILL');
    expect(await until(() => !isAlive(grandchild))).toBe(true);
    const entry = l.trace().at(-1)!;
    expect(entry.state).toBe('killed');
    expect(entry.reason).toContain('timed out');
  });

  test('run() reports a timeout, and stop() ends a tree politely', async () => {
    const l = launcher();
    const timed = await l.run({ owner: 'test', program: NODE, args: ['-e', FORKS_GRANDCHILD], timeoutMs: 800 });
    expect(timed.timedOut).toBe(true);
    const { grandchild } = JSON.parse(text(timed)) as { grandchild: number };
    pids.add(grandchild);
    expect(await until(() => !isAlive(grandchild))).toBe(true);

    const child = l.start({ owner: 'test', program: NODE, args: ['-e', FORKS_GRANDCHILD] });
    pids.add(child.pid!);
    const first = await new Promise<string>((resolve) => child.stdout!.once('data', (data: Buffer) => resolve(data.toString())));
    const second = (JSON.parse(first) as { grandchild: number }).grandchild;
    pids.add(second);
    const end = await child.stop({ exitGraceMs: 50, killGraceMs: 500 });
    expect(end.signal).toBe('SIGTERM');
    expect(await until(() => !isAlive(second))).toBe(true);
  });

  test('a daemon the child started (double fork: a session of its own, its parent gone, no pipe held) is killed when the child ends, and when it is stopped', async () => {
    const l = launcher();
    const ended = await l.run({ owner: 'test', program: NODE, args: ['-e', DOUBLE_FORKS] });
    const daemon = Number(text(ended));
    pids.add(daemon);
    expect(daemon).toBeGreaterThan(0);
    // Nobody's descendant, in no group of the child's, holding none of its pipes: only its mark finds it.
    expect(await until(() => !isAlive(daemon)), `daemon ${daemon} outlived run()`).toBe(true);

    const child = l.start({ owner: 'test', program: NODE, args: ['-e', `${DOUBLE_FORKS}; setInterval(() => {}, 1000)`] });
    pids.add(child.pid!);
    const second = Number(await new Promise<string>((resolve) => child.stdout!.once('data', (data: Buffer) => resolve(data.toString()))));
    pids.add(second);
    expect(isAlive(second)).toBe(true);
    await child.stop({ exitGraceMs: 50, killGraceMs: 500 });
    expect(await until(() => !isAlive(second)), `daemon ${second} outlived stop()`).toBe(true);
  });

  test('output beyond the byte limit kills the child; what came before is kept', async () => {
    const l = launcher();
    const result = await l.run({ owner: 'test', program: NODE, args: ['-e', 'process.stdout.write("x".repeat(100000)); setInterval(() => {}, 1000)'], maxOutputBytes: 1000 });
    expect(result.tooLarge).toBe('stdout');
    expect(result.stdout.length).toBe(1000);
    expect(result.signal).toBe('SIGKILL');
    const errors = await l.run({ owner: 'test', program: NODE, args: ['-e', 'process.stderr.write("e".repeat(5000)); setInterval(() => {}, 1000)'], maxOutputBytes: 1000 });
    expect(errors.tooLarge).toBe('stderr');
  });
});

describe('trace', () => {
  test('who started what: owner, program, shortened redacted args, pid, exit, duration; env never', async () => {
    const l = launcher();
    await l.run({ owner: 'alpha', purpose: 'a check', program: NODE, args: ['-e', 'process.exit(3)', '--', '--token', 'abc', '--password=hunter2', 'hunter2'], env: { SECRET: 'env-value' } });
    await l.run({ owner: 'beta', program: NODE, args: ['-e', '0', 'visible'], secretArgs: true });
    const [first, second] = l.trace();
    expect(first).toMatchObject({ owner: 'alpha', purpose: 'a check', program: NODE, state: 'exited', exitCode: 3 });
    expect(first!.pid).toBeGreaterThan(0);
    expect(first!.durationMs).toBeGreaterThanOrEqual(0);
    expect(first!.args).toContain('process.exit(3)');
    expect(first!.args).not.toContain('abc');
    expect(first!.args).not.toContain('hunter2');
    expect(JSON.stringify(l.trace())).not.toContain('env-value');
    expect(second).toMatchObject({ owner: 'beta', args: '[hidden]', exitCode: 0 });
  });

  test('the trace is bounded', async () => {
    const l = createLauncher({ traceSize: 2 });
    launchers.push(l);
    for (const code of [1, 2, 3]) await l.run({ owner: 'test', program: NODE, args: ['-e', `process.exit(${code})`] });
    expect(l.trace().map((e) => e.exitCode)).toEqual([2, 3]);
  });
});

describe('owners', () => {
  test('ctx.exec names the plugin, and its teardown kills the children it started', async () => {
    let grandchild = 0;
    let running: Promise<LaunchRunResult> | undefined;
    const kernel = await createTestKernel({
      pluginDirs: [LAUNCHER_DIR],
      plugins: [
        {
          manifest: { name: 'owner-plugin', dependencies: { launcher: '*' }, permissions: { shell: [NODE] } },
          async setup(_kernel, ctx) {
            running = ctx.exec({ program: NODE, args: ['-e', FORKS_GRANDCHILD] });
          },
        },
      ],
    });
    kernels.push(kernel);
    const launcherService = await kernel.get('launcher');
    expect(await until(() => launcherService.trace().some((e) => e.pid !== undefined))).toBe(true);
    const entry = launcherService.trace()[0]!;
    expect(entry.owner).toBe('owner-plugin');
    pids.add(entry.pid!);
    for (let tries = 0; grandchild === 0 && tries < 250; tries++) {
      grandchild = (await descendantsOf(entry.pid!))[0] ?? 0;
      if (grandchild === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(grandchild).toBeGreaterThan(0);
    pids.add(grandchild);
    await kernel.shutdown();
    const result = await running!;
    expect(result.cancelled).toBe(true);
    expect(isAlive(entry.pid!)).toBe(false);
    expect(await until(() => !isAlive(grandchild))).toBe(true);
    expect(launcherService.trace()[0]!.state).toBe('killed');
  });
});


describe('a swapped launcher', () => {
  test('services.launcher choosing a plugin that wraps and records sees every hook and stdio server launch', async () => {
    const seen: Array<{ owner: string; program: string; purpose?: string }> = [];
    const real = createLauncher();
    launchers.push(real);
    const recording: Launcher = {
      start(request, options) {
        seen.push({ owner: request.owner, program: request.program, ...(request.purpose !== undefined && { purpose: request.purpose }) });
        return real.start(request, options);
      },
      run(request, options) {
        seen.push({ owner: request.owner, program: request.program, ...(request.purpose !== undefined && { purpose: request.purpose }) });
        return real.run(request, options);
      },
      trace: () => real.trace(),
    };
    const hookScript = join(scratch, 'allow-hook.js');
    writeFileSync(hookScript, "process.stdin.resume(); process.stdin.on('end', () => process.stdout.write(JSON.stringify({ allow: true })));\n");
    const kernel = await createTestKernel({
      builtin: true,
      plugins: [{ manifest: { name: 'recording-launcher', provides: ['launcher'] }, setup: (k) => void k.provide('launcher', recording) }],
      settings: {
        services: { launcher: 'recording-launcher' },
        hooks: { before_tool: [{ name: 'recorded', command: 'node', args: [hookScript] }] },
        mcpServers: { fixture: { command: NODE, args: [STDIO_SERVER] } },
        plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } },
      },
    });
    kernels.push(kernel);
    expect((await kernel.emit('before_tool', { tool: 'ls' })).allow).toBe(true);
    const mcp = await kernel.get('mcp');
    const status = await mcp.start('fixture');
    expect(status.pid).toBeGreaterThan(0);
    pids.add(status.pid!);
    expect(seen.map((s) => s.owner).sort()).toEqual(['hooks', 'transport-stdio']);
    expect(seen.find((s) => s.owner === 'hooks')?.purpose).toContain('recorded');
    expect(seen.find((s) => s.owner === 'transport-stdio')?.program).toBe(NODE);
    // The builtin launcher was passed over: the recorder's trace is the only one, and it has both.
    expect(real.trace().map((e) => e.owner).sort()).toEqual(['hooks', 'transport-stdio']);
  });
});
