/**
 * The hook runner with real hook scripts (bash, node, python3) run as real
 * processes: hooks that behave, the red team of hooks that do not — each
 * checked for its failure code, a message naming the hook, and no process
 * left behind — and persistent mode.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildInput } from '../plugins/hooks/protocol.js';
import { createLauncher } from '../plugins/launcher/index.js';
import { DEFAULT_ALLOWED_COMMANDS, createRunner, type RunnerOptions } from '../plugins/hooks/runner/index.js';
import type { HookDefinition, HookRunner, RunResult } from '../plugins/hooks/types.js';
import { hookDefinition } from './support/hook-definition.js';
import { isAlive } from '../internal/process/tree.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/hooks/', import.meta.url));
const RED = join(FIXTURES, 'red-team');
const MiB = 1024 * 1024;

// ── helpers ────────────────────────────────────────────────────────────────

const INTERPRETER: Readonly<Record<string, string>> = { sh: 'bash', py: 'python3', js: 'node', mjs: 'node' };

/** A hook definition with every field types.ts asks for; `script` is run by the interpreter its extension names. */
function hook(name: string, overrides: Partial<HookDefinition> & { script?: string; command?: string; args?: string[] } = {}): HookDefinition {
  const { script, command, args, ...rest } = overrides;
  const interpreter = script === undefined ? undefined : INTERPRETER[script.split('.').pop() ?? ''];
  return hookDefinition({
    id: `user:${name}`,
    name,
    subscribedAs: ['pre-tool-call'],
    action: { type: 'command', command: command ?? interpreter ?? 'node', args: [...(script === undefined ? [] : [script]), ...(args ?? [])] },
    cwd: FIXTURES,
    ...rest,
  });
}

const input = (h: HookDefinition, context: Record<string, unknown> = { tool: 'read-file', args: { path: 'README.md' } }) =>
  buildInput(h, h.subscribedAs[0] ?? 'before_tool', context, 'session-1');

let workspace: string;
let warnings: string[];
const runners: HookRunner[] = [];

function runner(options: Partial<RunnerOptions> = {}): HookRunner {
  const created = createRunner({
    allowedCommands: DEFAULT_ALLOWED_COMMANDS,
    maxOutputBytes: MiB,
    env: [],
    workspace,
    log: { warn: (msg) => warnings.push(msg) },
    launcher: createLauncher(),
    ...options,
  });
  runners.push(created);
  return created;
}

/** Runs `h` once with a fresh runner. */
const runOnce = (h: HookDefinition, context?: Record<string, unknown>, options?: Partial<RunnerOptions>): Promise<RunResult> =>
  runner(options).run(h, input(h, context));

function expectFailure(result: RunResult, failure: string, h: HookDefinition): Extract<RunResult, { ok: false }> {
  if (result.ok) throw new Error(`expected ${failure}, got an answer: ${JSON.stringify(result.response)}`);
  expect(result.failure).toBe(failure);
  expect(result.message).toContain(`hook "${h.name}"`);
  expect(result.message).toContain(h.id);
  return result;
}

function expectAnswer(result: RunResult): Extract<RunResult, { ok: true }> {
  if (!result.ok) throw new Error(`expected an answer, got ${result.failure}: ${result.message}`);
  return result;
}


/** Processes (not zombies) whose command line contains `marker`. */
async function processesWith(marker: string): Promise<string[]> {
  const { stdout } = await execa('ps', ['-eo', 'pid=,pgid=,stat=,args=']);
  return stdout
    .split('\n')
    .filter((line) => line.includes(marker))
    .filter((line) => !/^\s*\d+\s+\d+\s+Z/.test(line));
}

async function eventually(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
}

/** No process left behind: none of `pids` alive and no process carrying `marker`, after a short bounded wait. */
async function expectNothingLeft(pids: readonly number[], marker?: string): Promise<void> {
  await eventually(async () => pids.every((pid) => !isAlive(pid)) && (marker === undefined || (await processesWith(marker)).length === 0));
  expect(pids.filter(isAlive)).toEqual([]);
  if (marker !== undefined) expect(await processesWith(marker)).toEqual([]);
}

const readPids = (file: string): number[] => readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);

beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'plinth-runner-'));
});
afterAll(() => rmSync(workspace, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
  warnings = [];
});
warnings = [];

// ── hooks that behave ──────────────────────────────────────────────────────

describe('hooks that behave', () => {
  it('runs a bash hook: input on stdin, the subscribed spelling in the environment, the answer from stdout', async () => {
    const h = hook('bash-allow', { script: 'allow.sh' });
    const result = expectAnswer(await runOnce(h));
    expect(result.response.allow).toBe(true);
    expect(result.response.message).toMatch(/^bash read \d+ bytes for pre-tool-call$/);
    expect(result.stderrTail).toBe('');
  });

  it('runs a python3 hook that reads the protocol input', async () => {
    const h = hook('py-allow', { script: 'allow.py', version: '3.2.1' });
    const result = expectAnswer(await runOnce(h));
    expect(result.response).toEqual({
      allow: true,
      message: 'python saw pre-tool-call for py-allow',
      metadata: { version: '1.0.0', tool: 'read-file' },
    });
  });

  it('runs a node hook that blocks', async () => {
    const h = hook('node-block', { script: 'block.js', args: ['rm', 'shell'] });
    const r = runner();
    const blocked = expectAnswer(await r.run(h, input(h, { tool: 'shell' })));
    expect(blocked.response).toMatchObject({ allow: false, message: 'shell is not allowed here' });
    const allowed = expectAnswer(await r.run(h, input(h, { tool: 'read-file' })));
    expect(allowed.response.allow).toBe(true);
  });

  it('runs many hooks at once, each in its own process', async () => {
    const r = runner();
    const hooks = Array.from({ length: 12 }, (_, i) => hook(`many-${i}`, { script: ['allow.sh', 'allow.py', 'block.js'][i % 3] ?? 'allow.sh' }));
    const results = await Promise.all(hooks.map((h) => r.run(h, input(h))));
    expect(results.map((result) => expectAnswer(result).response.allow)).toEqual(hooks.map(() => true));
  });

  it('returns a rewritten context, a systemMessage and continue', async () => {
    const h = hook('py-context', { script: 'context.py' });
    const result = expectAnswer(await runOnce(h, { tool: 'read-file', args: { path: 'src/a.ts' } }));
    expect(result.response).toEqual({
      allow: true,
      continue: true,
      systemMessage: 'paths are absolute from here on',
      context: { tool: 'read-file', args: { path: join(workspace, 'src/a.ts') }, checked: true },
    });
  });

  it('runs an allowed program given by absolute path, or through a symlink to it', async () => {
    const direct = hook('abs-node', { command: process.execPath, args: ['block.js'] });
    expect(expectAnswer(await runOnce(direct)).response.allow).toBe(true);
    const link = join(workspace, 'node');
    symlinkSync(process.execPath, link);
    try {
      // Same real path as the allowed node: allowed, whatever the link is called or where it lives.
      const viaLink = hook('linked-node', { command: link, args: [join(FIXTURES, 'block.js')] });
      expect(expectAnswer(await runOnce(viaLink)).response.allow).toBe(true);
    } finally {
      rmSync(link);
    }
  });
});

describe('environment', () => {
  const SECRET = 'PLINTH_TEST_SECRET_API_KEY';
  const EXTRA = 'PLINTH_TEST_EXTRA_VAR';

  beforeAll(() => {
    process.env[SECRET] = 'sk-do-not-leak';
    process.env[EXTRA] = 'passed on purpose';
  });
  afterAll(() => {
    delete process.env[SECRET];
    delete process.env[EXTRA];
  });

  it('gives a hook the allowlist and plinth variables, never the host secrets', async () => {
    const h = hook('env-dump', { script: 'env.js' });
    const env = expectAnswer(await runOnce(h)).response.metadata?.env as Record<string, string>;
    expect(env[SECRET]).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain('sk-do-not-leak');
    expect(env[EXTRA]).toBeUndefined();
    expect(env).toMatchObject({
      PATH: process.env.PATH,
      PLINTH_HOOK_ID: 'user:env-dump',
      PLINTH_HOOK_NAME: 'env-dump',
      PLINTH_HOOK_EVENT: 'pre-tool-call',
      PLINTH_WORKSPACE: workspace,
    });
    const allowed = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM', 'TMPDIR', 'TEMP', 'TMP']);
    // What node itself may add (it sets nothing on Linux) aside, every variable is one we chose to pass.
    // PLINTH_TREE: the launcher's mark of the child's tree (internal/process/tree.ts), no value of the host's.
    expect(Object.keys(env).filter((name) => !allowed.has(name) && !name.startsWith('PLINTH_HOOK_') && name !== 'PLINTH_WORKSPACE' && name !== 'PLINTH_TREE')).toEqual([]);
    expect(env.PLINTH_TREE).toMatch(/^[\w-]{16}$/);
  });

  it('passes the extra names of the env setting', async () => {
    const h = hook('env-extra', { script: 'env.js' });
    const env = expectAnswer(await runOnce(h, undefined, { env: [EXTRA] })).response.metadata?.env as Record<string, string>;
    expect(env[EXTRA]).toBe('passed on purpose');
    expect(env[SECRET]).toBeUndefined();
  });
});

// ── the red team ───────────────────────────────────────────────────────────

describe('red team', () => {
  let scratch: string;
  let marker: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'plinth-red-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  afterEach(() => {
    marker = '';
  });
  const newMarker = (): string => {
    marker = `m${randomUUID().replaceAll('-', '')}`;
    return marker;
  };

  it('invalid JSON → invalid_json', async () => {
    const h = hook('invalid-json', { script: 'red-team/invalid-json.sh', args: [newMarker()] });
    const failed = expectFailure(await runOnce(h), 'invalid_json', h);
    expect(failed.message).toContain('did not answer with JSON');
    await expectNothingLeft([], marker);
  });

  it('empty output → invalid_json "empty output"', async () => {
    const h = hook('empty-output', { script: 'red-team/empty-output.sh', args: [newMarker()] });
    expect(expectFailure(await runOnce(h), 'invalid_json', h).message).toContain('empty output');
    await expectNothingLeft([], marker);
  });

  it('allow missing → invalid_output', async () => {
    const h = hook('missing-allow', { script: 'red-team/missing-allow.py', args: [newMarker()] });
    expect(expectFailure(await runOnce(h), 'invalid_output', h).message).toContain('"allow" is missing');
    await expectNothingLeft([], marker);
  });

  it('allow not a boolean → invalid_output', async () => {
    const h = hook('allow-not-boolean', { script: 'red-team/allow-not-boolean.py', args: [newMarker()] });
    expect(expectFailure(await runOnce(h), 'invalid_output', h).message).toContain('"allow" must be a boolean (got a string)');
    await expectNothingLeft([], marker);
  });

  it('100 MB on stdout → output_too_large: the limit kills it long before its timeout', async () => {
    const h = hook('huge-output', { script: 'red-team/huge-output.js', args: [newMarker()], timeoutMs: 25_000 });
    const failed = expectFailure(await runOnce(h), 'output_too_large', h);
    expect(failed.message).toContain('more than 1 MiB to stdout');
    await expectNothingLeft([], marker);
  });

  it('never exits → timeout, and its whole tree is killed', async () => {
    const pidFile = join(scratch, 'never-exits.pids');
    const h = hook('never-exits', { script: 'red-team/never-exits.sh', args: [pidFile, newMarker()], timeoutMs: 500 });
    const failed = expectFailure(await runOnce(h), 'timeout', h);
    expect(failed.message).toContain('timed out after 500 ms');
    const pids = readPids(pidFile);
    expect(pids).toHaveLength(2);
    await expectNothingLeft(pids, marker);
  });

  it('a child that outlives the hook (bash, sleep &) is killed when the hook exits', async () => {
    const pidFile = join(scratch, 'outlives-sh.pid');
    const h = hook('outlives-sh', { script: 'red-team/outlives.sh', args: [pidFile, newMarker()] });
    expect(expectAnswer(await runOnce(h)).response.message).toBe('left a child behind');
    await expectNothingLeft(readPids(pidFile), marker);
  });

  it('a node child that outlives the hook in its process group is killed when the hook exits', async () => {
    const pidFile = join(scratch, 'outlives-js.pid');
    const h = hook('outlives-js', { script: 'red-team/outlives.js', args: [pidFile, newMarker()] });
    expectAnswer(await runOnce(h));
    await expectNothingLeft(readPids(pidFile), marker);
  });

  it.skipIf(process.platform !== 'linux')('a detached child that leaves the group but holds the pipes is found and killed', async () => {
    const pidFile = join(scratch, 'outlives-setsid.pid');
    const h = hook('outlives-setsid', { script: 'red-team/outlives.js', args: [pidFile, newMarker(), '--setsid'] });
    expectAnswer(await runOnce(h));
    await expectNothingLeft(readPids(pidFile), marker);
    expect(warnings.join('\n')).toContain('left its process group');
  });

  it('closes stdin at once → not a crash, even with 4 MB of input it never reads', async () => {
    const h = hook('closes-stdin', { script: 'red-team/closes-stdin.sh', args: [newMarker()] });
    const result = expectAnswer(await runOnce(h, { blob: 'x'.repeat(4 * MiB) }));
    expect(result.response.message).toBe('closed stdin at once');
    await expectNothingLeft([], marker);
  });

  it('never reads stdin → not a crash', async () => {
    const h = hook('ignores-stdin', { script: 'red-team/ignores-stdin.py', args: [newMarker()] });
    expect(expectAnswer(await runOnce(h, { blob: 'x'.repeat(4 * MiB) })).response.allow).toBe(true);
    await expectNothingLeft([], marker);
  });

  it('floods stderr past the limit → output_too_large, with a bounded tail', async () => {
    const h = hook('floods-stderr', { script: 'red-team/floods-stderr.py', args: [String(50 * MiB), newMarker()] });
    const failed = expectFailure(await runOnce(h), 'output_too_large', h);
    expect(failed.message).toContain('to stderr');
    expect(failed.stderrTail.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(failed.stderrTail)).toBeLessThanOrEqual(2048);
    await expectNothingLeft([], marker);
  });

  it('chatty stderr under the limit is fine, and its tail is kept', async () => {
    const h = hook('chatty-stderr', { script: 'red-team/floods-stderr.py', args: [String(200 * 1024), newMarker()] });
    const result = expectAnswer(await runOnce(h));
    expect(result.stderrTail.endsWith('last words from the flood\n')).toBe(true);
    expect(Buffer.byteLength(result.stderrTail)).toBeLessThanOrEqual(2048);
  });

  it('binary output → invalid_json', async () => {
    const h = hook('binary-output', { script: 'red-team/binary-output.js', args: [newMarker()] });
    expect(expectFailure(await runOnce(h), 'invalid_json', h).message).toContain('not UTF-8');
    await expectNothingLeft([], marker);
  });

  it('__proto__ keys in the output → an answer with plain objects, nothing polluted', async () => {
    const h = hook('proto-keys', { script: 'red-team/proto-keys.js', args: [newMarker()] });
    const { response } = expectAnswer(await runOnce(h));
    expect(response.metadata).toEqual({ kept: 1 });
    expect(response.context).toEqual({ nested: { ok: true } });
    for (const value of [response, response.metadata, response.context, response.context?.nested]) {
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect((value as Record<string, unknown>).polluted).toBeUndefined();
      expect((value as Record<string, unknown>).isAdmin).toBeUndefined();
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('exit 3 → exit_nonzero with the code and the stderr tail', async () => {
    const h = hook('exit-3', { script: 'red-team/exit-3.sh', args: [newMarker()] });
    const failed = expectFailure(await runOnce(h), 'exit_nonzero', h);
    expect(failed.exitCode).toBe(3);
    expect(failed.message).toContain('exited with code 3');
    expect(failed.message).toContain('disk quota exceeded');
    expect(failed.stderrTail).toBe('checking the diff\nerror: disk quota exceeded while checking\n');
    await expectNothingLeft([], marker);
  });

  it('killed by a signal it was not sent → crashed', async () => {
    const h = hook('crash', { script: 'red-team/crash.sh', args: [newMarker()] });
    const failed = expectFailure(await runOnce(h), 'crashed', h);
    expect(failed.signal).toBe('SIGSEGV');
    expect(failed.message).toContain('SIGSEGV');
    await expectNothingLeft([], marker);
  });

  describe('the whitelist applies to what actually runs', () => {
    const fakeNode = join(FIXTURES, 'fake-bin', 'node');
    const ranMark = (): string => join(workspace, 'fake-node-ran');
    afterEach(() => rmSync(ranMark(), { force: true }));

    it('refuses a program that is not on the list', async () => {
      const h = hook('curl', { command: 'curl', args: ['https://example.com'] });
      const failed = expectFailure(await runOnce(h), 'not_allowed', h);
      expect(failed.message).toContain('"curl"');
      expect(failed.message).toContain('allowedCommands');
    });

    it('refuses /some/dir/node that is not the allowed node, and never runs it', async () => {
      const h = hook('abs-fake-node', { command: fakeNode, args: [] });
      expect(expectFailure(await runOnce(h), 'not_allowed', h).message).toContain(fakeNode);
      expect(existsSync(ranMark())).toBe(false);
    });

    it('refuses ./node in the hook\'s folder', async () => {
      const h = hook('rel-fake-node', { command: './node', args: [], cwd: join(FIXTURES, 'fake-bin') });
      expectFailure(await runOnce(h), 'not_allowed', h);
      expect(existsSync(ranMark())).toBe(false);
    });

    it('refuses an interpreter that is not listed, even when it exists', async () => {
      const h = hook('bash-not-listed', { script: 'allow.sh' });
      expectFailure(await runOnce(h, undefined, { allowedCommands: ['node'] }), 'not_allowed', h);
    });
  });

  it('bash -c with an injected argument: the argument is data, never run', async () => {
    const touched = join(scratch, 'injected');
    const injected = `; touch ${touched}; $(touch ${touched}-2) \`touch ${touched}-3\``;
    const h = hook('bash-c', { command: 'bash', args: ['-c', 'printf \'{"allow":true,"message":"%s"}\' "$1"', 'bash-c', injected] });
    const result = expectAnswer(await runOnce(h));
    expect(result.response.message).toBe(injected);
    for (const file of [touched, `${touched}-2`, `${touched}-3`]) expect(existsSync(file)).toBe(false);
  });

  it('a missing script → script_missing, before anything is spawned', async () => {
    const h = hook('missing-script', { script: 'red-team/not-there.js' });
    const failed = expectFailure(await runOnce(h), 'script_missing', h);
    expect(failed.message).toContain(join(RED, 'not-there.js'));
  });

  it('a program that cannot start → spawn_failed', async () => {
    const noCwd = hook('no-cwd', { script: 'allow.sh', cwd: join(workspace, 'no-such-dir') });
    // The script is absolute so that only the cwd is missing.
    const failed = await runOnce({ ...noCwd, action: { type: 'command', command: 'bash', args: [join(FIXTURES, 'allow.sh')] } });
    expect(expectFailure(failed, 'spawn_failed', noCwd).message).toContain('working directory');
    const notInstalled = hook('not-installed', { command: 'plinth-no-such-program', args: [] });
    const missing = expectFailure(await runOnce(notInstalled, undefined, { allowedCommands: ['plinth-no-such-program'] }), 'spawn_failed', notInstalled);
    expect(missing.message).toContain('not found on PATH');
  });

  it('arguments a process cannot take, or input that is not JSON → spawn_failed', async () => {
    const nul = hook('nul-arg', { script: 'allow.sh', args: ['a\0b'] });
    expectFailure(await runOnce(nul), 'spawn_failed', nul);
    const persistentNul = { ...nul, persistent: { idleMs: 1000 } } as const;
    expectFailure(await runOnce(persistentNul), 'spawn_failed', nul);
    const bigint = hook('bigint-context', { script: 'allow.sh' });
    expect(expectFailure(await runOnce(bigint, { n: 1n }), 'spawn_failed', bigint).message).toContain('JSON');
  });

  it('an askAgent hook has no process to run', async () => {
    const h = hook('ask', { action: { type: 'askAgent', prompt: 'review {{file.path}}' } });
    expectFailure(await runOnce(h), 'spawn_failed', h);
  });

  it('a cancelled run kills the tree and says so', async () => {
    const pidFile = join(scratch, 'cancelled.pids');
    const h = hook('cancelled', { script: 'red-team/never-exits.sh', args: [pidFile, newMarker()], timeoutMs: 20_000 });
    const controller = new AbortController();
    const running = runner().run(h, input(h), controller.signal);
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').includes(' '));
    controller.abort(new Error('the event timed out'));
    const failed = expectFailure(await running, 'timeout', h);
    expect(failed.message).toContain('the event timed out');
    await expectNothingLeft(readPids(pidFile), marker);
  });

  it('close() kills hooks still running', async () => {
    const pidFile = join(scratch, 'closed.pids');
    const h = hook('closed-while-running', { script: 'red-team/never-exits.sh', args: [pidFile, newMarker()], timeoutMs: 20_000 });
    const r = runner();
    const running = r.run(h, input(h));
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').includes(' '));
    await r.close();
    expect((await running).ok).toBe(false);
    await expectNothingLeft(readPids(pidFile), marker);
    expectFailure(await r.run(h, input(h)), 'timeout', h);
  });
});

// ── persistent mode ────────────────────────────────────────────────────────

describe('persistent mode', () => {
  const persistentHook = (name: string, idleMs = 10_000, timeoutMs = 2000): HookDefinition =>
    hook(name, { script: 'persistent.mjs', persistent: { idleMs }, timeoutMs });

  const pidOf = (result: RunResult): number => expectAnswer(result).response.metadata?.pid as number;

  it('answers many requests with one process, in order', async () => {
    const h = persistentHook('p-many');
    const r = runner();
    const first = expectAnswer(await r.run(h, input(h)));
    expect(first.response.metadata).toMatchObject({ count: 1, event: 'pre-tool-call', persistent: '1' });
    for (let i = 2; i <= 20; i++) expect(expectAnswer(await r.run(h, input(h))).response.metadata?.count).toBe(i);
    // Concurrent requests are queued: one in flight, answered in the order asked.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => r.run(h, input(h, { tool: i % 2 === 0 ? 'rm' : 'ls' }))));
    expect(burst.map((result) => expectAnswer(result).response.metadata?.count)).toEqual(Array.from({ length: 20 }, (_, i) => 21 + i));
    expect(burst.map((result) => expectAnswer(result).response.allow)).toEqual(Array.from({ length: 20 }, (_, i) => i % 2 !== 0));
    expect(new Set([first, ...burst].map(pidOf)).size).toBe(1);
    const pid = pidOf(first);
    await r.close();
    await expectNothingLeft([pid]);
  });

  it('restarts after a crash: the request in flight fails, the next one gets a fresh process', async () => {
    const h = persistentHook('p-crash');
    const r = runner();
    const pid = pidOf(await r.run(h, input(h)));
    const crashed = expectFailure(await r.run(h, input(h, { crash: true })), 'exit_nonzero', h);
    expect(crashed.exitCode).toBe(7);
    expect(crashed.message).toContain('before answering');
    await expectNothingLeft([pid]);
    const next = expectAnswer(await r.run(h, input(h)));
    expect(next.response.metadata).toMatchObject({ count: 1 });
    expect(pidOf(next)).not.toBe(pid);
  });

  it('times out a request, kills the process and restarts on the next request', async () => {
    // One hook; only the hanging request gets the short timeout, so that a slow start elsewhere cannot time out.
    const h = persistentHook('p-timeout', 10_000, 5000);
    const impatient = { ...h, timeoutMs: 500 };
    const r = runner();
    const pid = pidOf(await r.run(h, input(h)));
    const [hung, queued] = await Promise.all([r.run(impatient, input(h, { hang: true })), r.run(h, input(h))]);
    expect(expectFailure(hung, 'timeout', h).message).toContain('timed out after 500 ms');
    // The request queued behind it is served by a fresh process.
    expect(expectAnswer(queued).response.metadata).toMatchObject({ count: 1 });
    expect(pidOf(queued)).not.toBe(pid);
    await expectNothingLeft([pid]);
  });

  it('closes the process when idle, and starts another when needed', async () => {
    const h = persistentHook('p-idle', 200);
    const r = runner();
    const pid = pidOf(await r.run(h, input(h)));
    await expectNothingLeft([pid]);
    const again = pidOf(await r.run(h, input(h)));
    expect(again).not.toBe(pid);
    expect(warnings).toEqual([]);
  });

  it('limits the answer line: an oversized line fails the request and the process is replaced', async () => {
    const h = persistentHook('p-huge');
    const r = runner({ maxOutputBytes: 64 * 1024 });
    const pid = pidOf(await r.run(h, input(h)));
    expect(expectFailure(await r.run(h, input(h, { huge: 200 * 1024 })), 'output_too_large', h).message).toContain('64 KiB to stdout');
    await expectNothingLeft([pid]);
    expect(pidOf(await r.run(h, input(h)))).not.toBe(pid);
  });

  it('a line nobody asked for ends the process; the next request gets a fresh one', async () => {
    const h = persistentHook('p-twice');
    const r = runner();
    const pid = pidOf(await r.run(h, input(h, { twice: true })));
    await expectNothingLeft([pid]);
    expect(warnings.join('\n')).toContain('a line nobody asked for');
    expect(pidOf(await r.run(h, input(h)))).not.toBe(pid);
  });

  it('keeps a bounded stderr tail per request', async () => {
    const h = persistentHook('p-noise');
    const r = runner();
    const result = expectAnswer(await r.run(h, input(h, { noise: 100_000 })));
    expect(result.stderrTail).toMatch(/^n+$/);
    expect(result.stderrTail.length).toBeLessThanOrEqual(2048);
    expect(expectAnswer(await r.run(h, input(h))).stderrTail).toBe('');
  });

  it('a cancelled request: in flight, the process is replaced; queued, it never reaches the process', async () => {
    const h = persistentHook('p-cancel');
    const r = runner();
    const pid = pidOf(await r.run(h, input(h)));
    const inFlight = new AbortController();
    const queued = new AbortController();
    const hangFile = join(workspace, `hang-${randomUUID()}`);
    const hung = r.run(h, input(h, { hang: true, hangFile }), inFlight.signal);
    const waiting = r.run(h, input(h), queued.signal);
    const after = r.run(h, input(h));
    await eventually(() => existsSync(hangFile));
    expect(existsSync(hangFile)).toBe(true);
    queued.abort('the user pressed Ctrl-C');
    expect(expectFailure(await waiting, 'timeout', h).message).toContain('the user pressed Ctrl-C');
    inFlight.abort(new Error('the event timed out'));
    expect(expectFailure(await hung, 'timeout', h).message).toContain('the event timed out');
    // The next request goes to a fresh process, which has seen only it.
    const next = expectAnswer(await after);
    expect(pidOf(next)).not.toBe(pid);
    expect(next.response.metadata).toMatchObject({ count: 1 });
    await expectNothingLeft([pid]);
  });

  it('close() stops the process tree and refuses further runs', async () => {
    const h = persistentHook('p-close');
    const r = runner();
    const pid = pidOf(await r.run(h, input(h)));
    await r.close();
    await expectNothingLeft([pid]);
    expect(expectFailure(await r.run(h, input(h)), 'timeout', h).message).toContain('closed');
  });

  it('applies the whitelist and the script check in persistent mode too', async () => {
    const fake = hook('p-fake', { command: join(FIXTURES, 'fake-bin', 'node'), args: [], persistent: { idleMs: 1000 } });
    expectFailure(await runOnce(fake), 'not_allowed', fake);
    const missing = hook('p-missing', { script: 'nope.mjs', persistent: { idleMs: 1000 } });
    expectFailure(await runOnce(missing), 'script_missing', missing);
  });
});
