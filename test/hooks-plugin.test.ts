/**
 * The hooks plugin end to end: real hook processes (bash, node and python3
 * scripts in test/fixtures/hooks-e2e/) run through the real kernel with the
 * builtin plugins (hooks, trust, …), and through the real `plinth` executable
 * as a child process. Every kernel and every run gets its own temporary home
 * and workspace: the machine's ~/.plinth never matters.
 *
 * Read top to bottom, each test is an example of one thing a user does:
 * 1. hooks in settings decide `kernel.emit` (block, messages, context, aliases);
 * 2. trust: workspace hooks wait for approval, user hooks run on first use;
 * 3. hooks declared in a plugin's manifest;
 * 4. legacy `.plinth/hooks/*.json` files, `askAgent` prompts handed to the host;
 * 5. the `plinth hooks …` commands;
 * 6. `git_commit` through `plinth hooks install-git` in a real repository;
 * 7. `file_change` while `plinth up` runs;
 * 8. a hook that prints a secret: the secret stays out of the decision and the trace.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { appendFile, copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { InlinePlugin } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import type { AskAgentRequest } from 'plinth/sdk';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { type Result, cleanEnv, expectExit, json, plinth, ensureBuilt } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'dist', 'cli', 'bin.js');
const FIXTURES = join(root, 'test', 'fixtures', 'hooks-e2e');
/** A fixture script's absolute path. */
const fx = (...parts: string[]): string => join(FIXTURES, ...parts);

/** One CLI run: node and jiti start on a slow shared machine, but bounded. */
const RUN_TIMEOUT_MS = 30_000;

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
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

// ── helpers ─────────────────────────────────────────────────────────────────

async function temp(prefix = 'plinth-hooks-e2e-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
}

/** A user folder (home) and a project (workspace), side by side in a fresh temporary folder. */
async function sandbox(): Promise<{ base: string; home: string; workspace: string }> {
  const base = await temp();
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  return { base, home, workspace };
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** `<workspace>/.plinth/settings.json`: the untrusted, per-project settings. */
const workspaceSettings = (workspace: string, value: unknown) => writeJson(join(workspace, '.plinth', 'settings.json'), value);

/** A workspace hook script: a copy of a fixture inside the project, so that a test may edit it. */
async function workspaceScript(workspace: string, fixture: string, as: string): Promise<string> {
  const file = join(workspace, as);
  await mkdir(dirname(file), { recursive: true });
  await copyFile(fx(fixture), file);
  return file;
}

/** A kernel with every builtin plugin (hooks, trust, …), user `settings`, and the given workspace. */
async function boot(options: { settings?: Record<string, unknown>; workspace?: string; plugins?: InlinePlugin[]; pluginDirs?: string[]; env?: Record<string, string> } = {}): Promise<TestKernel> {
  const workspace = options.workspace ?? (await sandbox()).workspace;
  const kernel = await createTestKernel({
    builtin: true,
    workspace,
    ...(options.settings && { settings: options.settings }),
    ...(options.plugins && { plugins: options.plugins }),
    ...(options.pluginDirs && { pluginDirs: options.pluginDirs }),
    ...(options.env && { env: options.env }),
  });
  kernels.push(kernel);
  expect(kernel.report.plugins.filter((p) => p.state === 'failed').map((p) => `${p.name}: ${p.error?.message}`)).toEqual([]);
  return kernel;
}

/** Approves a hook as it is now, the way `plinth hooks trust <id>` does. */
async function approve(kernel: TestKernel, id: string): Promise<void> {
  const { hooks } = await (await kernel.get('hooks')).definitions();
  const hook = hooks.find((h) => h.id === id);
  if (!hook) throw new Error(`no hook ${id} among ${hooks.map((h) => h.id).join(', ')}`);
  await (await kernel.get('trust')).approve(trustSubject(hook));
}

/** What the external hooks did in the last emit of `event`: `id → status[:failure]`. */
async function outcomes(kernel: TestKernel, event: 'before_tool' | 'file_change'): Promise<Record<string, string>> {
  const last = (await kernel.get('hooks')).lastRun(event);
  return Object.fromEntries((last?.outcomes ?? []).map((o) => [o.hook.id, o.status + (o.failure ? `:${o.failure}` : '')]));
}

/** `plinth --home <home> --workspace <workspace> ...args`, from the temporary folder, without CI: to completion. */
function plinthIn(where: { home: string; workspace: string }, args: string[], env: Record<string, string> = {}): Promise<Result> {
  return plinth(['--home', where.home, '--workspace', where.workspace, ...args], { env, ci: false });
}

/** Polls `check` every 50 ms until it returns a value; fails after `timeoutMs` naming `what`. */
async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The hooks every settings example below starts from. */
const guardRm = { name: 'guard-rm', command: 'bash', args: [fx('guard-rm.sh')] };

// ── 1. settings hooks decide kernel.emit ────────────────────────────────────

describe('hooks from settings decide kernel.emit', () => {
  it('a user hook blocks before_tool for rm: the decision names the hooks plugin and the hook', async () => {
    const kernel = await boot({ settings: { hooks: { before_tool: [guardRm] } } });

    const rm = await kernel.emit('before_tool', { tool: 'rm', args: { path: '/' } });
    expect(rm.allow).toBe(false);
    expect(rm.blockedBy?.plugin).toBe('hooks');
    expect(rm.blockedBy?.by).toBe('user:guard-rm');
    expect(rm.messages).toContain('guard-rm: rm is not allowed in this project');

    const ls = await kernel.emit('before_tool', { tool: 'ls' });
    expect(ls.allow).toBe(true);
    expect(ls.blockedBy).toBeUndefined();
  });

  it('an in-process plugin and an external hook both add messages to one decision', async () => {
    const policy: InlinePlugin = {
      manifest: { name: 'policy' },
      setup(kernel) {
        kernel.on('before_tool', (context) => ({ message: `policy: ${String(context.tool)} is logged` }));
      },
    };
    const kernel = await boot({ settings: { hooks: { before_tool: [guardRm] } }, plugins: [policy] });

    const decision = await kernel.emit('before_tool', { tool: 'rm' });
    expect(decision.allow).toBe(false);
    expect(decision.messages).toContain('policy: rm is logged');
    expect(decision.messages).toContain('guard-rm: rm is not allowed in this project');
  });

  it('a context returned by a hook reaches the caller', async () => {
    const stamp = { name: 'stamp', command: 'node', args: [fx('stamp-context.js')], matcher: 'write_*' };
    const kernel = await boot({ settings: { hooks: { before_tool: [guardRm, stamp] } } });

    const decision = await kernel.emit('before_tool', { tool: 'write_file', path: 'notes.txt' });
    expect(decision.allow).toBe(true);
    expect(decision.context).toEqual({ tool: 'write_file', path: 'notes.txt', reviewedBy: 'stamp' });
    expect(decision.messages).toContain('stamp stamped the context');

    // The matcher `write_*` leaves other tools alone: the context comes back as it was given.
    const read = await kernel.emit('before_tool', { tool: 'read_file', path: 'notes.txt' });
    expect(read.context).toEqual({ tool: 'read_file', path: 'notes.txt' });
  });

  it('protocol aliases work in definitions and in emit; a hook receives the spelling it subscribed with', async () => {
    const kernel = await boot({
      settings: {
        hooks: {
          'pre-tool-call': [{ name: 'as-alias', command: 'python3', args: [fx('echo-event.py')] }],
          before_tool: [{ name: 'as-canonical', command: 'python3', args: [fx('echo-event.py')] }],
        },
      },
    });

    for (const emitted of ['before_tool', 'pre-tool-call']) {
      const decision = await kernel.emit(emitted, { tool: 'grep' });
      expect(decision.allow).toBe(true);
      expect(decision.messages).toContain('as-alias received pre-tool-call for grep');
      expect(decision.messages).toContain('as-canonical received before_tool for grep');
    }
  });
});

// ── 2. trust ────────────────────────────────────────────────────────────────

describe('trust gates every external hook', () => {
  it('a workspace hook waits for approval (skipped, the system messages say so), runs once approved, and blocks the gate event after its script changes', async () => {
    const { workspace } = await sandbox();
    const script = await workspaceScript(workspace, 'ran.js', 'hooks/check.js');
    await workspaceSettings(workspace, { hooks: { before_tool: [{ name: 'check', command: 'node', args: ['hooks/check.js'] }] } });
    const kernel = await boot({ workspace });

    // Not approved, no terminal: it does not run, the event goes on, and the message says how to approve it.
    const first = await kernel.emit('before_tool', { tool: 'ls' });
    expect(first.allow).toBe(true);
    expect(first.messages.join('\n')).toContain('plinth hooks trust workspace:check');
    expect(first.messages.join('\n')).not.toContain('check ran');
    expect(first.systemMessages.join('\n')).toContain('"workspace:check" was skipped on before_tool: it has not been approved');
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'workspace:check': 'skipped:untrusted' });

    // Approved through the trust service: it runs.
    await approve(kernel, 'workspace:check');
    const second = await kernel.emit('before_tool', { tool: 'ls' });
    expect(second.messages).toContain('check ran on before_tool');
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'workspace:check': 'ran' });

    // Someone edits the script: the approval no longer covers it, and the guard the user approved cannot
    // run, so the gate event is blocked (not allowed without it), with the command that approves it again.
    await appendFile(script, '// a harmless-looking change\n');
    const third = await kernel.emit('before_tool', { tool: 'ls' });
    expect(third.allow).toBe(false);
    expect(third.blockedBy).toMatchObject({ plugin: 'hooks', by: 'workspace:check', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(third.blockedBy?.reason).toContain('changed');
    expect(third.blockedBy?.fix).toContain('plinth hooks trust workspace:check');
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'workspace:check': 'failed:untrusted' });
  });

  it('a user hook runs on first use (and is pinned)', async () => {
    const kernel = await boot({ settings: { hooks: { before_tool: [{ name: 'mine', command: 'node', args: [fx('ran.js')] }] } } });

    const decision = await kernel.emit('before_tool', { tool: 'ls' });
    expect(decision.messages).toContain('mine ran on before_tool');
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:mine': 'ran' });

    const { hooks } = await (await kernel.get('hooks')).definitions();
    const verdict = await (await kernel.get('trust')).inspect(trustSubject(hooks.find((h) => h.id === 'user:mine')!));
    expect(verdict).toMatchObject({ trusted: true, level: 'user' });
  });
});

// ── 3. plugin manifests ─────────────────────────────────────────────────────

describe('hooks declared in a plugin manifest', () => {
  it('run their script relative to the plugin folder, as extension hooks that need approval', async () => {
    const pluginDir = fx('plugins', 'audit-plugin');
    const kernel = await boot({ pluginDirs: [pluginDir] });

    const { hooks } = await (await kernel.get('hooks')).definitions();
    expect(hooks.find((h) => h.id === 'audit-plugin/audit')).toMatchObject({ source: 'extension', plugin: 'audit-plugin', cwd: pluginDir, version: '1.2.0' });

    const before = await kernel.emit('before_tool', { tool: 'ls' });
    expect(before.messages.join('\n')).toContain('plinth hooks trust audit-plugin/audit');
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'audit-plugin/audit': 'skipped:untrusted' });

    await approve(kernel, 'audit-plugin/audit');
    const after = await kernel.emit('before_tool', { tool: 'ls' });
    // hooks/audit.js was found from the plugin folder; the protocol's hookVersion is the plugin's version.
    expect(after.messages).toContain('audit ran on before_tool (version 1.2.0)');
  });

  it('are ignored when the plugin itself was refused: an unapproved workspace plugin contributes no hooks', async () => {
    const { workspace } = await sandbox();
    await cp(fx('plugins', 'audit-plugin'), join(workspace, '.plinth', 'plugins', 'audit-plugin'), { recursive: true });
    const kernel = await createTestKernel({ builtin: true, workspace });
    kernels.push(kernel);

    expect(kernel.status().find((p) => p.name === 'audit-plugin')?.error?.code).toBe('PLN_E_PLUGIN_REFUSED');
    const { hooks } = await (await kernel.get('hooks')).definitions();
    expect(hooks.map((h) => h.id)).not.toContain('audit-plugin/audit');
  });
});

// ── 4. legacy files ─────────────────────────────────────────────────────────

describe('legacy hook files (.plinth/hooks/*.json)', () => {
  it('runCommand runs a process; askAgent hands the rendered prompt to the host, or to systemMessages without a taker', async () => {
    const { workspace } = await sandbox();
    await writeJson(join(workspace, '.plinth', 'hooks', 'lint.json'), {
      name: 'Lint on Save',
      when: { type: 'fileEdited', patterns: ['*.ts'] },
      then: { type: 'runCommand', command: `node "${fx('ran.js')}"` },
    });
    await writeJson(join(workspace, '.plinth', 'hooks', 'review.json'), {
      name: 'Review changes',
      when: { type: 'fileEdited', patterns: ['*.ts'] },
      then: { type: 'askAgent', prompt: 'Review the changes in {{file.path}}' },
    });
    // The hook runs a fixture outside the workspace, which the sandbox would hide from a workspace hook (granted
    // nothing): what is tested here is the legacy format. Confinement: test/sandbox-*.test.ts.
    const kernel = await boot({ workspace, settings: { plugins: { sandbox: { enabled: false } } } });
    // Workspace files: approved first, as `plinth hooks trust` would.
    await approve(kernel, 'workspace:lint-on-save');
    await approve(kernel, 'workspace:review-changes');

    // No host takes askAgent prompts: the prompt reaches the model as a system message.
    const untaken = await kernel.emit('file_change', { file: 'src/app.ts' });
    expect(untaken.allow).toBe(true);
    expect(untaken.messages).toContain('Lint on Save ran on on-file-change');
    expect(untaken.systemMessages).toContain('Review the changes in src/app.ts');

    // A host taps the hooks service's askAgent hook and takes the prompt.
    const asked: AskAgentRequest[] = [];
    (await kernel.get('hooks')).askAgent.tapPromise('host', async (request) => {
      asked.push(request);
      return true;
    });
    const taken = await kernel.emit('file_change', { file: 'src/app.ts' });
    expect(asked.map((r) => ({ id: r.hook.id, event: r.event, prompt: r.prompt }))).toEqual([
      { id: 'workspace:review-changes', event: 'file_change', prompt: 'Review the changes in src/app.ts' },
    ]);
    expect(taken.systemMessages).not.toContain('Review the changes in src/app.ts');

    // `*.ts` only: a Markdown file runs neither.
    const markdown = await kernel.emit('file_change', { file: 'README.md' });
    expect(markdown.messages).toEqual([]);
    expect(asked).toHaveLength(1);
  });
});

// ── 5. the CLI ──────────────────────────────────────────────────────────────

describe('plinth hooks …', () => {
  /** A user hook that blocks rm and a workspace hook (node hooks/check.js) not yet approved. */
  async function project(): Promise<{ home: string; workspace: string; base: string }> {
    const where = await sandbox();
    await writeJson(join(where.home, 'settings.json'), { hooks: { before_tool: [guardRm] } });
    await workspaceScript(where.workspace, 'ran.js', 'hooks/check.js');
    await workspaceSettings(where.workspace, { hooks: { before_tool: [{ name: 'check', command: 'node', args: ['hooks/check.js'] }] } });
    return where;
  }

  it('hooks list --json: each hook with its source and trust state', async () => {
    const where = await project();
    const result = await plinthIn(where, ['hooks', 'list', '--json']);
    expectExit(result, 0);
    const { hooks, problems } = json<{ hooks: Array<Record<string, unknown>>; problems: unknown[] }>(result);
    expect(problems).toEqual([]);
    expect(hooks.map((h) => h.id)).toEqual(['user:guard-rm', 'workspace:check']);
    expect(hooks[0]).toMatchObject({ id: 'user:guard-rm', source: 'user', trust: 'user', trusted: true, events: ['before_tool'] });
    expect(hooks[1]).toMatchObject({ id: 'workspace:check', source: 'workspace', trust: 'pending', trusted: false });
  });

  it('hooks run: a block exits 5 and names the hook; --context takes JSON or @file', async () => {
    const where = await project();

    const blocked = await plinthIn(where, ['hooks', 'run', 'before_tool', '--context', '{"tool":"rm"}']);
    expectExit(blocked, 5);
    expect(blocked.stdout).toContain('BLOCKED by user:guard-rm');
    expect(blocked.stdout).toContain('guard-rm: rm is not allowed in this project');

    const file = join(where.base, 'context.json');
    await writeJson(file, { tool: 'ls', args: { path: '.' } });
    const allowed = await plinthIn(where, ['hooks', 'run', 'pre-tool-call', '--context', `@${file}`, '--json']);
    expectExit(allowed, 0);
    const body = json<{ event: string; decision: { allow: boolean; context: unknown }; hooks: Array<{ hook: { id: string }; status: string; durationMs: number; message?: string }> }>(allowed);
    expect(body.event).toBe('before_tool');
    expect(body.decision.allow).toBe(true);
    expect(body.decision.context).toEqual({ tool: 'ls', args: { path: '.' } });
    expect(body.hooks.map((h) => `${h.hook.id} ${h.status}`)).toEqual(['user:guard-rm ran', 'workspace:check skipped']);
    expect(typeof body.hooks[0]!.durationMs).toBe('number');
    expect(body.hooks[1]!.message).toContain('plinth hooks trust workspace:check');
  });

  it('hooks run with a peer\'s event name says which plinth event it is; a typo gets the nearest', async () => {
    const where = await project();
    const claude = await plinthIn(where, ['hooks', 'run', 'PreToolUse', '--json']);
    expectExit(claude, 1);
    expect(JSON.parse(claude.stdout).error).toMatchObject({
      code: 'PLN_E_EVENT_UNKNOWN',
      message: 'unknown event "PreToolUse": that is Claude Code\'s name for plinth\'s before_tool',
      hint: 'plinth hooks run before_tool (hooks defined under "PreToolUse" run on it)',
    });
    const gemini = await plinthIn(where, ['hooks', 'run', 'BeforeModel', '--json']);
    expect(JSON.parse(gemini.stdout).error.message).toContain("Gemini CLI's name for plinth's before_model");
    const typo = await plinthIn(where, ['hooks', 'run', 'before_tol', '--json']);
    expect(JSON.parse(typo.stdout).error.message).toBe('unknown event "before_tol" (did you mean "before_tool"?)');
  });

  it('hooks run with a --context that is not JSON is a usage error (exit 2)', async () => {
    const where = await project();
    const result = await plinthIn(where, ['hooks', 'run', 'before_tool', '--context', '{tool: rm}']);
    expectExit(result, 2);
    expect(result.stderr).toContain('PLN_E_CLI_USAGE');

    const missing = await plinthIn(where, ['hooks', 'run', 'before_tool', '--context', `@${join(where.base, 'no-such.json')}`]);
    expectExit(missing, 2);
    expect(missing.stderr).toContain('PLN_E_CLI_USAGE');
    expect(missing.stderr).toContain('no-such.json: there is no such file');
    expect(missing.stderr).toMatch(/fix: give the path of a JSON file/);
  });

  it('hooks trust <id> lets a workspace hook run; hooks untrust withdraws it', async () => {
    const where = await project();
    const run = async () => {
      const result = await plinthIn(where, ['hooks', 'run', 'before_tool', '--context', '{"tool":"ls"}', '--json']);
      expectExit(result, 0);
      const body = json<{ decision: { messages: string[] }; hooks: Array<{ hook: { id: string }; status: string; failure?: string }> }>(result);
      const check = body.hooks.find((h) => h.hook.id === 'workspace:check');
      return { status: check && check.status + (check.failure ? `:${check.failure}` : ''), messages: body.decision.messages };
    };

    expect((await run()).status).toBe('skipped:untrusted');

    const trusted = await plinthIn(where, ['hooks', 'trust', 'workspace:check']);
    expectExit(trusted, 0);
    expect(trusted.stdout).toContain('Approved hook workspace:check');
    const afterTrust = await run();
    expect(afterTrust.status).toBe('ran');
    expect(afterTrust.messages).toContain('check ran on before_tool');

    const untrusted = await plinthIn(where, ['hooks', 'untrust', 'workspace:check']);
    expectExit(untrusted, 0);
    expect(untrusted.stdout).toContain('Withdrew the approval of hook workspace:check');
    expect((await run()).status).toBe('skipped:untrusted');

    const unknown = await plinthIn(where, ['hooks', 'trust', 'workspace:nope']);
    expectExit(unknown, 1);
    expect(unknown.stderr).toContain('PLN_E_HOOK_UNKNOWN');
  });

  it('hooks validate: a broken definition exits 1, naming the file and the JSON path', async () => {
    const where = await sandbox();
    await workspaceSettings(where.workspace, {
      hooks: {
        before_tool: [{ name: 'slow', command: 'node', args: ['slow.js'], timeout: 'soon' }],
        befor_tool: [{ name: 'typo', command: 'node', args: ['typo.js'] }],
      },
    });
    const file = join(where.workspace, '.plinth', 'settings.json');

    const result = await plinthIn(where, ['hooks', 'validate']);
    expectExit(result, 1);
    expect(result.stdout).toContain(`PLN_E_HOOK_INVALID: ${file}: hooks.before_tool[0].timeout:`);
    expect(result.stdout).toContain(`PLN_E_HOOK_EVENT_UNKNOWN: ${file}: hooks.befor_tool:`);
    expect(result.stdout).toContain('did you mean "before_tool"?');

    const asJson = await plinthIn(where, ['hooks', 'validate', '--json']);
    expectExit(asJson, 1);
    const body = json<{ valid: boolean; problems: Array<{ code: string; message: string }> }>(asJson);
    expect(body.valid).toBe(false);
    expect(body.problems.map((p) => p.code)).toEqual(['PLN_E_HOOK_INVALID', 'PLN_E_HOOK_EVENT_UNKNOWN']);
  });

  it('hooks trace --json: the recent runs with event, hook, duration, exit code and stderr tail', async () => {
    const where = await sandbox();
    const lint = { name: 'lint-step', command: 'bash', args: [fx('exit-3.sh')], onError: 'allow' };
    await writeJson(join(where.home, 'settings.json'), { hooks: { before_tool: [guardRm, lint] } });

    expectExit(await plinthIn(where, ['hooks', 'run', 'before_tool', '--context', '{"tool":"ls"}']), 0);
    expectExit(await plinthIn(where, ['hooks', 'run', 'before_tool', '--context', '{"tool":"rm"}']), 5);

    const result = await plinthIn(where, ['hooks', 'trace', '--json']);
    expectExit(result, 0);
    type Run = { event: string; hook: string; status: string; allow: boolean; durationMs: number; exitCode?: number; failure?: string; stderrTail?: string };
    const { runs } = json<{ runs: Run[] }>(result);
    expect(runs.map((r) => `${r.event} ${r.hook} ${r.status}`)).toEqual([
      'before_tool user:guard-rm ran',
      'before_tool user:lint-step failed',
      'before_tool user:guard-rm ran',
      'before_tool user:lint-step skipped',
    ]);
    for (const run of runs) expect(typeof run.durationMs).toBe('number');
    expect(runs[1]).toMatchObject({ failure: 'exit_nonzero', exitCode: 3, allow: true });
    expect(runs[1]!.stderrTail).toContain('lint-step: 2 problems found');
    expect(runs[2]).toMatchObject({ allow: false, exitCode: 0, message: 'guard-rm: rm is not allowed in this project' });

    // The same, for a person; `hooks list` shows each hook's last result.
    const text = await plinthIn(where, ['hooks', 'trace', '--limit', '2']);
    expectExit(text, 0);
    expect(text.stdout).toContain('DURATION');
    expect(text.stdout).toContain('user:lint-step');
    const list = json<{ hooks: Array<{ id: string; last: { status: string } | null }> }>(await plinthIn(where, ['hooks', 'list', '--json']));
    expect(list.hooks.map((h) => `${h.id} ${h.last?.status}`)).toEqual(['user:guard-rm ran', 'user:lint-step skipped']);
  });
});

// ── 6. git_commit ───────────────────────────────────────────────────────────

describe('git_commit through plinth hooks install-git', () => {
  it('a user hook stops a WIP commit and lets a good one through, seeing the staged files, branch and message', async () => {
    const { base, home, workspace: repo } = await sandbox();
    // Keep the machine's git configuration (hooksPath, templates, signing) out of the test.
    const gitConfig = join(base, 'gitconfig');
    await writeFile(gitConfig, '');
    // No PLINTH_HOME here: the installed hook pins the --home that install-git ran with.
    const env = cleanEnv({ GIT_CONFIG_GLOBAL: gitConfig, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' }, { ci: false });
    const git = (...args: string[]) => spawnSync('git', args, { cwd: repo, env, encoding: 'utf8', timeout: RUN_TIMEOUT_MS * 2 });
    expect(git('init', '-q', '-b', 'main').status).toBe(0);
    git('config', 'user.email', 'dev@example.invalid');
    git('config', 'user.name', 'Plinth Dev');
    git('config', 'commit.gpgsign', 'false');

    const received = join(base, 'commit-guard.jsonl');
    await writeJson(join(home, 'settings.json'), {
      hooks: { git_commit: [{ name: 'commit-guard', command: 'python3', args: [fx('commit-guard.py'), received] }] },
    });

    const installed = await plinthIn({ home, workspace: repo }, ['hooks', 'install-git']);
    expectExit(installed, 0);
    expect(installed.stdout).toContain('commit-msg');

    await writeFile(join(repo, 'a.txt'), 'a\n');
    await mkdir(join(repo, 'src'));
    await writeFile(join(repo, 'src', 'b.ts'), 'export {};\n');
    expect(git('add', 'a.txt', 'src/b.ts').status).toBe(0);

    const wip = git('commit', '-q', '-m', 'WIP x');
    expect(wip.status, wip.stderr).not.toBe(0);
    expect(`${wip.stdout}${wip.stderr}`).toContain('commit-guard: finish the work before committing');
    expect(git('rev-parse', '-q', '--verify', 'HEAD').status).not.toBe(0); // no commit exists

    const good = git('commit', '-q', '-m', 'good');
    expect(good.status, `${good.stdout}${good.stderr}`).toBe(0);
    expect(git('log', '--format=%s').stdout.trim()).toBe('good');

    const lines = (await readFile(received, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(lines).toEqual([
      { event: 'git_commit', files: ['a.txt', 'src/b.ts'], branch: 'main', message: 'WIP x' },
      { event: 'git_commit', files: ['a.txt', 'src/b.ts'], branch: 'main', message: 'good' },
    ]);
  }, 60_000);
});

// ── 7. file_change while plinth up runs ─────────────────────────────────────

describe('file_change while plinth up runs', () => {
  it('a *.txt hook sees a written .txt file and never the .md; SIGINT stops plinth with exit 0', async () => {
    const { base, home, workspace } = await sandbox();
    const log = join(base, 'changed-files.log'); // outside the workspace: writing it is not a change there
    await writeJson(join(home, 'settings.json'), {
      hooks: { file_change: [{ name: 'log-txt', command: 'bash', args: [fx('log-file.sh'), log], files: ['*.txt'] }] },
      plugins: { hooks: { settings: { watchDebounceMs: 50 } } },
    });

    const child = spawn(process.execPath, [bin, '--home', home, '--workspace', workspace, 'up'], { cwd: tmpdir(), env: cleanEnv({}, { ci: false }), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));

    await waitFor('"plinth is up" on stderr', () => (stderr.includes('plinth is up') ? true : undefined), RUN_TIMEOUT_MS);

    await writeFile(join(workspace, 'notes.md'), '# notes\n');
    await mkdir(join(workspace, 'docs'));
    await writeFile(join(workspace, 'docs', 'todo.txt'), 'write tests\n');

    const logged = await waitFor('docs/todo.txt in the hook log', async () => {
      const text = await readFile(log, 'utf8').catch(() => '');
      return text.includes('docs/todo.txt') ? text : undefined;
    });
    expect(logged).not.toContain('notes.md');

    child.kill('SIGINT');
    const code = await Promise.race([exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), RUN_TIMEOUT_MS))]);
    expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
    expect(stderr).toContain('shutting down');
    expect((await readFile(log, 'utf8')).split('\n').filter(Boolean)).toEqual(['docs/todo.txt']);
  }, 60_000);
});

// ── 8. secrets ──────────────────────────────────────────────────────────────

describe('a hook that prints a secret', () => {
  const SECRET = 'sk-live-4f9c2e7a1b3d5e6f';
  const leak = { name: 'leaky', command: 'node', args: [fx('leak-secret.js')] };
  /** The hooks plugin passes SECRETIVE_API_KEY to hooks (its `env` setting); the `secretive` plugin marks it sensitive. */
  const settings = { hooks: { before_tool: [leak] }, plugins: { hooks: { settings: { env: ['SECRETIVE_API_KEY'] } } } };

  it('in process: the decision carries [redacted], never the value', async () => {
    const saved = process.env.SECRETIVE_API_KEY;
    process.env.SECRETIVE_API_KEY = SECRET; // what hook processes inherit (the runner reads the host's environment)
    try {
      const kernel = await boot({ settings, pluginDirs: [fx('plugins', 'secretive')], env: { SECRETIVE_API_KEY: SECRET } });
      const decision = await kernel.emit('before_tool', { tool: 'http_get' });
      expect(decision.allow).toBe(true);
      expect(decision.messages).toContain('called the API with key [redacted]'); // the hook did print it
      expect(JSON.stringify(decision)).not.toContain(SECRET);
      expect(kernel.logs.join('\n')).not.toContain(SECRET);
      // Nor does the hooks service, which any plugin (or the host) may ask for the last run's outcomes.
      const last = (await kernel.get('hooks')).lastRun('before_tool');
      expect(last?.outcomes[0]?.stderrTail).toContain('debug: calling the API with key [redacted]');
      expect(JSON.stringify(last)).not.toContain(SECRET);
    } finally {
      if (saved === undefined) delete process.env.SECRETIVE_API_KEY;
      else process.env.SECRETIVE_API_KEY = saved;
    }
  });

  it('through the CLI: neither hooks run nor hooks trace (nor the trace file) shows the value', async () => {
    const where = await sandbox();
    await writeJson(join(where.home, 'settings.json'), settings);
    const env = { SECRETIVE_API_KEY: SECRET };
    const pluginDir = ['--plugin-dir', fx('plugins', 'secretive')];

    const ran = await plinthIn(where, [...pluginDir, 'hooks', 'run', 'before_tool', '--context', '{"tool":"http_get"}', '--json'], env);
    expectExit(ran, 0);
    expect(ran.stdout + ran.stderr).not.toContain(SECRET);
    expect(json<{ decision: { messages: string[] } }>(ran).decision.messages).toContain('called the API with key [redacted]');

    const trace = await plinthIn(where, [...pluginDir, 'hooks', 'trace', '--json'], env);
    expectExit(trace, 0);
    expect(trace.stdout + trace.stderr).not.toContain(SECRET);
    const [entry] = json<{ runs: Array<{ message?: string; stderrTail?: string }> }>(trace).runs;
    expect(entry?.stderrTail).toContain('debug: calling the API with key [redacted]');

    // The file behind `hooks trace` was written redacted, not only printed so.
    const file = await readFile(join(where.home, 'hooks-trace.jsonl'), 'utf8');
    expect(file).toContain('[redacted]');
    expect(file).not.toContain(SECRET);
  });
});
