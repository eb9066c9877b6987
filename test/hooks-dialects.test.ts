/**
 * Claude Code and Gemini CLI hooks, run unchanged: their settings shape in plinth's settings,
 * their scripts (bash with jq, python, node, written as the peers' documentation shows them,
 * in test/fixtures/hooks-dialects/) run as real processes through the real kernel and the hooks
 * plugin, and their answers read with their semantics — exit 2, JSON decisions,
 * permissionDecision allow/deny/ask, updatedInput / tool_input, additionalContext, plain text,
 * non-blocking errors, timeouts — and their matchers.
 *
 * Each test copies the fixtures into a fresh project (`.claude/hooks/`, `.gemini/hooks/`) and
 * writes the user's settings, as a user moving from a peer would.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tagPeerHooks } from 'plinth/internal';
import type { InlinePlugin } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import { readCommandLine } from '../plugins/hooks/dialects/command-line.js';
import { compilePeerMatcher } from '../plugins/hooks/dialects/matcher.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { hookSuite } from './support/hook-suite.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/hooks-dialects/', import.meta.url));

const { kernels, folders } = hookSuite();
/** A project holding the fixtures where each peer keeps its hooks. */
async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-dialects-'));
  folders.push(dir);
  await cp(join(FIXTURES, 'claude'), join(dir, '.claude', 'hooks'), { recursive: true });
  await cp(join(FIXTURES, 'gemini'), join(dir, '.gemini', 'hooks'), { recursive: true });
  await cp(join(FIXTURES, 'record.js'), join(dir, 'record.js'));
  return dir;
}

/** A kernel with the builtin plugins, the user's `hooks` (in a peer's shape) and the project. */
async function boot(workspace: string, hooks: Record<string, unknown>, extra: { plugins?: InlinePlugin[]; hookSettings?: Record<string, unknown> } = {}): Promise<TestKernel> {
  const kernel = await createTestKernel({
    builtin: true,
    workspace,
    settings: { hooks, ...(extra.hookSettings && { plugins: { hooks: { settings: extra.hookSettings } } }) },
    ...(extra.plugins && { plugins: extra.plugins }),
  });
  kernels.push(kernel);
  expect(kernel.report.plugins.filter((p) => p.state === 'failed').map((p) => `${p.name}: ${p.error?.message}`)).toEqual([]);
  return kernel;
}

/** `hooks.<event>: [{ matcher, hooks: [{ type: "command", command, … }] }]`. */
const group = (command: string | string[], options: { matcher?: string; timeout?: number; onError?: 'block'; sequential?: boolean; protocol?: 'claude' | 'gemini' } = {}) => {
  const { timeout, onError, ...rest } = options;
  const commands = typeof command === 'string' ? [command] : command;
  return { ...rest, hooks: commands.map((c) => ({ type: 'command', command: c, ...(timeout !== undefined && { timeout }), ...(onError && { onError }) })) };
};

/** `id → status[:failure]` of the last run of `event`. */
async function outcomes(kernel: TestKernel, event: Parameters<TestKernel['emit']>[0]): Promise<Record<string, string>> {
  const last = (await kernel.get('hooks')).lastRun(event as never);
  return Object.fromEntries((last?.outcomes ?? []).map((o) => [o.hook.id, o.status + (o.failure ? `:${o.failure}` : '')]));
}

async function records(file: string): Promise<Array<{ input: Record<string, unknown>; env: Record<string, string>; args: string[] }>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { input: Record<string, unknown>; env: Record<string, string>; args: string[] });
}

// ── Claude Code ─────────────────────────────────────────────────────────────

describe('Claude Code hooks', () => {
  /**
   * Each event's hook records the input document it read; `emits` fire the events (in the order a session
   * would). Split in two tests of four events each: every event is one process, and a loaded machine
   * must not take most of the time limit for one test.
   */
  async function claudeEvents(emits: (kernel: TestKernel) => Promise<void>, events: readonly string[]): Promise<Record<string, Record<string, unknown>>> {
    const workspace = await project();
    const log = join(workspace, 'claude.jsonl');
    const record = `node "$CLAUDE_PROJECT_DIR/record.js" '${log}' "quoted arg"`;
    const kernel = await boot(workspace, Object.fromEntries(events.map((e) => [e, [group(record)]])));
    await emits(kernel);
    const seen = await records(log);
    expect(seen.map((r) => r.input.hook_event_name)).toEqual(events);
    for (const r of seen) {
      expect(r.input).toMatchObject({ session_id: 's-1', cwd: workspace, transcript_path: '' });
      expect(r.env.CLAUDE_PROJECT_DIR).toBe(workspace);
      expect(r.env.GEMINI_PROJECT_DIR).toBeUndefined();
      expect(r.args).toEqual(['quoted arg']);
    }
    return Object.fromEntries(seen.map((r) => [r.input.hook_event_name as string, r.input]));
  }

  it('every Claude Code event (session, prompt, stop): the input document its scripts read, and CLAUDE_PROJECT_DIR', async () => {
    const by = await claudeEvents(
      async (kernel) => {
        await kernel.emit('session_start', { sessionId: 's-1', source: 'resume', model: 'claude-sonnet-4-5' });
        await kernel.emit('before_agent', { sessionId: 's-1', prompt: 'fix the bug' });
        await kernel.emit('after_agent', { sessionId: 's-1' });
        await kernel.emit('session_end', { sessionId: 's-1', reason: 'logout' });
      },
      ['SessionStart', 'UserPromptSubmit', 'Stop', 'SessionEnd'],
    );
    expect(by.SessionStart).toMatchObject({ source: 'resume', model: 'claude-sonnet-4-5' });
    expect(by.UserPromptSubmit).toMatchObject({ prompt: 'fix the bug' });
    expect(by.Stop).toMatchObject({ stop_hook_active: false });
    expect(by.SessionEnd).toMatchObject({ reason: 'logout' });
  });

  it('every Claude Code event (tools, compaction, notification): the input document its scripts read, and CLAUDE_PROJECT_DIR', async () => {
    const by = await claudeEvents(
      async (kernel) => {
        await kernel.emit('before_tool', { sessionId: 's-1', tool: 'github__create_issue', server: 'github', args: { title: 'x' } });
        await kernel.emit('after_tool', { sessionId: 's-1', tool: 'Bash', args: { command: 'ls' }, result: { stdout: 'a\nb' } });
        await kernel.emit('pre_compress', { sessionId: 's-1', trigger: 'manual' });
        await kernel.emit('notification', { sessionId: 's-1', message: 'Claude needs your permission to use Bash' });
      },
      ['PreToolUse', 'PostToolUse', 'PreCompact', 'Notification'],
    );
    // plinth's `github__create_issue` is an MCP tool: Claude Code calls it mcp__github__create_issue.
    expect(by.PreToolUse).toMatchObject({ tool_name: 'mcp__github__create_issue', tool_input: { title: 'x' } });
    expect(by.PostToolUse).toMatchObject({ tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: { stdout: 'a\nb' } });
    expect(by.PreCompact).toMatchObject({ trigger: 'manual' });
    expect(by.Notification).toMatchObject({ message: 'Claude needs your permission to use Bash' });
  });

  it('exit 2 blocks with stderr as the reason (bash with jq); the exact matcher "Bash" does not run for BashOutput', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { PreToolUse: [group('"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh', { matcher: 'Bash' })] });

    const blocked = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf build' } });
    expect(blocked.allow).toBe(false);
    expect(blocked.blockedBy).toMatchObject({ plugin: 'hooks', by: 'user:PreToolUse.0.0' });
    expect(blocked.messages[0]).toBe("Blocked: 'rm -rf build' deletes recursively; remove the files one by one");

    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.0.0': 'ran' });
    const other = await kernel.emit('before_tool', { tool: 'BashOutput', args: { command: 'rm -rf build' } });
    expect(other.allow).toBe(true);
  });

  it('a script named directly runs through the interpreter of its #! line, and through sh without one (as a shell would)', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      PreToolUse: [group('$CLAUDE_PROJECT_DIR/.claude/hooks/protect-env.py', { matcher: 'Write' }), group('.claude/hooks/no-shebang.sh', { matcher: 'Bash' })],
    });
    const { hooks } = await (await kernel.get('hooks')).definitions();
    expect(hooks.map((h) => h.action)).toEqual([
      { type: 'command', command: 'python3', args: [join(workspace, '.claude', 'hooks', 'protect-env.py')] },
      { type: 'command', command: 'sh', args: ['.claude/hooks/no-shebang.sh'] },
    ]);
    expect((await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'a/.env' } })).messages[0]).toBe('a/.env holds secrets and is protected');
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: {} })).messages[0]).toBe('no shebang here');
  });

  it('a JSON permissionDecision "deny", pretty-printed over several lines (python), blocks with its reason; the "Edit|Write" list matches both', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { PreToolUse: [group('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/protect-env.py"', { matcher: 'Edit|Write' })] });

    for (const tool of ['Edit', 'Write']) {
      const decision = await kernel.emit('before_tool', { tool, args: { file_path: `${workspace}/.env` } });
      expect(decision.allow).toBe(false);
      expect(decision.messages[0]).toBe(`${workspace}/.env holds secrets and is protected`);
    }
    expect((await kernel.emit('before_tool', { tool: 'Write', args: { file_path: `${workspace}/README.md` } })).allow).toBe(true);
    expect((await kernel.emit('before_tool', { tool: 'NotebookEdit', args: { file_path: `${workspace}/.env` } })).allow).toBe(true);
  });

  it('permissionDecision "allow" allows; "ask" becomes approval_request to the host, whose answer decides; no answer blocks', async () => {
    const workspace = await project();
    const asked: Array<Record<string, unknown>> = [];
    let answer: 'yes' | 'no' | 'none' = 'yes';
    const host: InlinePlugin = {
      manifest: { name: 'host-approvals' },
      setup(kernel) {
        kernel.on('approval_request', (context) => {
          asked.push({ ...context });
          if (answer === 'none') return undefined;
          return answer === 'yes' ? { context: { ...context, approved: true } } : { allow: false, message: 'the user said no' };
        });
      },
    };
    const kernel = await boot(workspace, { PreToolUse: [group('node .claude/hooks/permission.js', { matcher: 'Read|mcp__deploy__.*' })] }, { plugins: [host] });

    const read = await kernel.emit('before_tool', { tool: 'Read', args: { file_path: 'a.txt' } });
    expect(read.allow).toBe(true);
    expect(asked).toEqual([]);

    const release = { tool: 'deploy__release', server: 'deploy', args: { version: '2.0' } };
    const approved = await kernel.emit('before_tool', release);
    expect(approved.allow).toBe(true);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ operation: 'tool_call', requester: 'user:PreToolUse.0.0', reason: 'release 2.0 to production?', details: { tool: 'deploy__release', args: { version: '2.0' } } });

    answer = 'no';
    const refused = await kernel.emit('before_tool', release);
    expect(refused.allow).toBe(false);
    expect(refused.messages[0]).toContain('asks for approval: release 2.0 to production?; not approved: the user said no');

    answer = 'none';
    const unanswered = await kernel.emit('before_tool', release);
    expect(unanswered.allow).toBe(false);
    expect(unanswered.messages[0]).toContain('not approved: nobody approved it');
  });

  it('an updatedInput rewrite is seen by the next hook of a sequential group and by the caller', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      PreToolUse: [group(['python3 .claude/hooks/add-flag.py', 'bash .claude/hooks/see-command.sh'], { matcher: 'Bash', sequential: true })],
    });
    const decision = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'npm install', description: 'install' } });
    expect(decision.allow).toBe(true);
    expect(decision.context.args).toEqual({ command: 'npm install --no-audit', description: 'install' });
    expect(decision.messages).toContain('will run: npm install --no-audit');
  });

  it('UserPromptSubmit: plain stdout is added context, a JSON "block" refuses the prompt; SessionStart additionalContext reaches the model', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      UserPromptSubmit: [group('$CLAUDE_PROJECT_DIR/.claude/hooks/prompt-context.sh')],
      SessionStart: [group('$CLAUDE_PROJECT_DIR/.claude/hooks/session-context.py', { matcher: 'startup' })],
    });
    const prompt = await kernel.emit('before_agent', { prompt: 'what changed?' });
    expect(prompt.allow).toBe(true);
    expect(prompt.systemMessages).toEqual(['Current branch: main (from the UserPromptSubmit hook)']);

    const secret = await kernel.emit('before_agent', { prompt: 'use sk-live-123' });
    expect(secret.allow).toBe(false);
    expect(secret.messages[0]).toBe('the prompt contains an API key; remove it and ask again');

    const start = await kernel.emit('session_start', { sessionId: 'abc', source: 'startup' });
    expect(start.systemMessages).toEqual(['Session abc started from startup; open issues: 3']);
    // The matcher "startup" does not run on a resumed session.
    const resumed = await kernel.emit('session_start', { sessionId: 'abc', source: 'resume' });
    expect(resumed.systemMessages).toEqual([]);
  });

  it('Stop: a JSON "block" keeps the agent going with the reason; stop_hook_active lets it stop', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { Stop: [group('"${CLAUDE_PROJECT_DIR}"/.claude/hooks/keep-going.sh')] });
    const first = await kernel.emit('after_agent', {});
    expect(first.allow).toBe(false);
    expect(first.messages[0]).toBe('Run the tests before stopping');
    expect((await kernel.emit('after_agent', { stopHookActive: true })).allow).toBe(true);
  });

  it('PostToolUse: a "block" (JSON or exit 2) cannot undo the call: the reason goes to the model and the result stays', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      PostToolUse: [
        group(`node -e 'console.log(JSON.stringify({ decision: "block", reason: "the file has lint errors: run npm run lint" }))'`, { matcher: 'Write' }),
        group('.claude/hooks/block-rm.sh', { matcher: 'Bash' }),
      ],
    });
    const write = await kernel.emit('after_tool', { tool: 'Write', args: {}, result: { ok: true } });
    expect(write).toMatchObject({ allow: true, systemMessages: ['the file has lint errors: run npm run lint'] });
    const bash = await kernel.emit('after_tool', { tool: 'Bash', args: { command: 'rm -rf tmp' }, result: { stdout: '' } });
    expect(bash).toMatchObject({ allow: true, systemMessages: ["Blocked: 'rm -rf tmp' deletes recursively; remove the files one by one"] });
  });

  it('continue: false blocks with stopReason, says systemMessage, and stops the hooks after it', async () => {
    const workspace = await project();
    const log = join(workspace, 'after.jsonl');
    const kernel = await boot(workspace, {
      PreToolUse: [group([`node .claude/hooks/stop-everything.js`, `node record.js ${log}`], { sequential: true })],
    });
    const decision = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(decision.allow).toBe(false);
    expect(decision.messages[0]).toBe('maintenance window: no tool calls now\npaused by policy');
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.0.0': 'ran', 'user:PreToolUse.0.1': 'skipped' });
    expect(await records(log)).toEqual([]);
  });

  it('an exit other than 0 and 2 is a non-blocking error, unless the hook says onError: "block"; a timeout (seconds) too', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      PreToolUse: [group('.claude/hooks/broken.sh', { matcher: 'Bash' }), group('.claude/hooks/slow.sh', { matcher: 'Read', timeout: 1 })],
      PostToolUse: [group('.claude/hooks/broken.sh', { onError: 'block' })],
    });
    const bash = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(bash.allow).toBe(true);
    const last = (await kernel.get('hooks')).lastRun('before_tool');
    expect(last?.outcomes[0]).toMatchObject({ status: 'failed', failure: 'exit_nonzero', exitCode: 1, allow: true });
    expect(last?.outcomes[0]?.message).toContain('lint config not found');

    const slow = await kernel.emit('before_tool', { tool: 'Read', args: {} });
    expect(slow.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.1.0': 'failed:timeout' });
    expect((await kernel.get('hooks')).lastRun('before_tool')?.outcomes[0]?.message).toContain('timed out after 1000 ms');

    expect((await kernel.emit('after_tool', { tool: 'Bash', args: {}, result: {} })).allow).toBe(false);
  });

  it('a hook that never got to decide blocks a gate event whatever its onError: not found (exit 127), killed by a signal; elsewhere it stays a non-blocking error', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      PreToolUse: [group('.claude/hooks/needs-runner.sh', { matcher: 'Bash' }), group('.claude/hooks/crash.sh', { matcher: 'Read' })],
      Stop: [group('.claude/hooks/needs-runner.sh')],
    });
    const missing = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' } });
    expect(missing.allow).toBe(false);
    expect(missing.blockedBy).toMatchObject({ plugin: 'hooks', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(missing.blockedBy?.fix).toContain('was not found (exit 127)');
    expect(missing.messages.join('\n')).toContain('exited with code 127');

    const crashed = await kernel.emit('before_tool', { tool: 'Read', args: {} });
    expect(crashed.allow).toBe(false);
    expect(crashed.blockedBy).toMatchObject({ code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(crashed.blockedBy?.fix).toContain('killed by SIGSEGV');

    // Not a gate event: the peer's non-blocking error, as before.
    expect((await kernel.emit('after_agent', {})).allow).toBe(true);
    expect(await outcomes(kernel, 'after_agent')).toEqual({ 'user:Stop.0.0': 'failed:exit_nonzero' });
  });

  it('a command that needs a shell is refused with a fix, and runs through sh where plugins.hooks.settings.shellCommands allows the source', async () => {
    const workspace = await project();
    const piped = `echo '{"decision": "block", "reason": "piped"}' | cat`;
    const refused = await boot(workspace, { Stop: [group(piped)] });
    const { problems } = await (await refused.get('hooks')).definitions();
    expect(problems).toEqual([
      expect.objectContaining({ code: 'PLN_E_HOOK_SHELL_REFUSED', message: expect.stringContaining('the command needs a shell (the shell operator "|") and user hooks may not run shell commands; to allow it, add "user" to plugins.hooks.settings.shellCommands') }),
    ]);
    expect((await refused.emit('after_agent', {})).allow).toBe(true);
    await refused.dispose();
    kernels.splice(kernels.indexOf(refused), 1);

    const allowed = await boot(workspace, { Stop: [group(piped)] }, { hookSettings: { shellCommands: ['user'] } });
    const decision = await allowed.emit('after_agent', {});
    expect(decision.allow).toBe(false);
    expect(decision.messages[0]).toBe('piped');
  });

  it('a plinth definition with "protocol": "claude" speaks Claude Code\'s protocol under plinth\'s own rules; persistent and events without a Claude name are refused', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      before_tool: [{ name: 'no-rm', command: 'bash', args: ['.claude/hooks/block-rm.sh'], matcher: 'Ba*', protocol: 'claude', cwd: workspace }],
      after_tool: [{ name: 'kept', command: 'node', args: ['record.js', 'x'], protocol: 'claude', persistent: true }],
      file_change: [{ name: 'files', command: 'node', args: ['record.js', 'y'], protocol: 'gemini' }],
    });
    const { hooks, problems } = await (await kernel.get('hooks')).definitions();
    expect(hooks.map((h) => `${h.id} ${h.protocol} ${h.onError}`)).toEqual(['user:no-rm claude block']);
    expect(problems.map((p) => `${p.code} ${p.message.split(': ').slice(1).join(': ')}`)).toEqual([
      'PLN_E_HOOK_INVALID hooks.after_tool[0].persistent: a "claude" hook runs one process per event, as its peer does: "persistent" applies only to plinth\'s protocol',
      'PLN_E_HOOK_DIALECT_UNSUPPORTED hooks.file_change[0].protocol: Gemini CLI has no event for file_change: a "gemini" hook cannot subscribe to it',
    ]);
    // plinth's glob matcher, Claude Code's stdin and exit 2.
    const decision = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf x' } });
    expect(decision).toMatchObject({ allow: false, messages: ["Blocked: 'rm -rf x' deletes recursively; remove the files one by one"] });
  });

  it('every Claude Code event has a counterpart (SubagentStop: subagent_stop); a hook of a type plinth does not know is listed and blocks a gate event (never a silent allow)', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      SubagentStop: [group('node record.js x')],
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'websocket', url: 'ws://127.0.0.1:1/check' }] }],
      UserPromptSubmit: [{ hooks: [{ type: 'websocket', prompt: 'Check the prompt', timeout: 30 }] }],
      PostToolUse: [{ hooks: [{ type: 'websocket', prompt: 'Review the result' }] }],
      SessionStart: [group('node record.js y'), group('node record.js z', { protocol: 'gemini' })],
    });
    const { problems, hooks } = await (await kernel.get('hooks')).definitions();
    expect(problems).toEqual([]);
    expect(hooks.find((h) => h.id === 'user:SubagentStop.0.0')?.events).toEqual(['subagent_stop']);
    // SessionStart is both peers' event: the section's other events say Claude Code, a group may say otherwise.
    expect(hooks.map((h) => `${h.id}:${h.protocol}${h.unsupported ? ':unsupported' : ''}`).sort()).toEqual([
      'user:PostToolUse.0.0:claude:unsupported',
      'user:PreToolUse.0.0:claude:unsupported',
      'user:SessionStart.0.0:claude',
      'user:SessionStart.1.0:gemini',
      'user:SubagentStop.0.0:claude',
      'user:UserPromptSubmit.0.0:claude:unsupported',
    ]);
    expect(hooks.find((h) => h.id === 'user:PreToolUse.0.0')?.unsupported).toContain('Claude Code hook type "websocket" not supported yet');

    // The unknown hook guards Bash: Bash is blocked, with the reason and the fix; other tools (its matcher) are not.
    const bash = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(bash.allow).toBe(false);
    expect(bash.blockedBy).toMatchObject({ by: 'user:PreToolUse.0.0', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(bash.messages[0]).toContain('Claude Code hook type "websocket" not supported yet');
    expect(bash.blockedBy?.fix).toContain('remove the hook at');
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.0.0': 'failed:unsupported' });
    expect((await kernel.emit('before_tool', { tool: 'Read', args: { file_path: 'a' } })).allow).toBe(true);
    // The UserPromptSubmit one guards the prompt (before_agent, a gate event) the same way.
    expect((await kernel.emit('before_agent', { prompt: 'hi' })).allow).toBe(false);
    // After the call, nothing can be undone: it is skipped, and the model is told so.
    const after = await kernel.emit('after_tool', { tool: 'Bash', args: { command: 'ls' }, result: {} });
    expect(after.allow).toBe(true);
    expect(after.systemMessages.join('\n')).toContain('not supported yet');
  });
});

// ── Gemini CLI ──────────────────────────────────────────────────────────────

describe('Gemini CLI hooks', () => {
  it('every Gemini CLI event: the input document, GEMINI_PROJECT_DIR and CLAUDE_PROJECT_DIR', async () => {
    const workspace = await project();
    const log = join(workspace, 'gemini.jsonl');
    const events = ['BeforeTool', 'AfterTool', 'BeforeAgent', 'AfterAgent', 'BeforeModel', 'AfterModel', 'BeforeToolSelection', 'SessionStart', 'SessionEnd', 'PreCompress', 'Notification'];
    const kernel = await boot(workspace, Object.fromEntries(events.map((e) => [e, [group(`node $GEMINI_PROJECT_DIR/record.js ${log}`)]])));

    const request = { model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }], config: { temperature: 1 } };
    await kernel.emit('session_start', { sessionId: 'g', source: 'clear' });
    await kernel.emit('before_agent', { sessionId: 'g', prompt: 'hi' });
    await kernel.emit('before_model', { sessionId: 'g', request });
    await kernel.emit('before_tool_selection', { sessionId: 'g', request });
    await kernel.emit('after_model', { sessionId: 'g', request, response: { candidates: [] } });
    await kernel.emit('before_tool', { sessionId: 'g', tool: 'fs__read', server: 'fs', args: { path: 'a' } });
    await kernel.emit('after_tool', { sessionId: 'g', tool: 'read_file', args: { path: 'a' }, result: { llmContent: 'A' } });
    await kernel.emit('after_agent', { sessionId: 'g', prompt: 'hi', response: 'hello' });
    await kernel.emit('pre_compress', { sessionId: 'g' });
    await kernel.emit('notification', { sessionId: 'g', message: 'permission needed', details: { tool: 'run_shell_command' } });
    await kernel.emit('session_end', { sessionId: 'g', reason: 'exit' });

    const seen = await records(log);
    expect(seen.map((r) => r.input.hook_event_name)).toEqual([
      'SessionStart', 'BeforeAgent', 'BeforeModel', 'BeforeToolSelection', 'AfterModel', 'BeforeTool', 'AfterTool', 'AfterAgent', 'PreCompress', 'Notification', 'SessionEnd',
    ]);
    for (const r of seen) {
      expect(r.input).toMatchObject({ session_id: 'g', cwd: workspace, timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      expect(r.env).toMatchObject({ GEMINI_PROJECT_DIR: workspace, GEMINI_CWD: workspace, CLAUDE_PROJECT_DIR: workspace, GEMINI_SESSION_ID: 'g' });
    }
    const by = Object.fromEntries(seen.map((r) => [r.input.hook_event_name as string, r.input]));
    expect(by.SessionStart).toMatchObject({ source: 'clear' });
    expect(by.BeforeModel).toMatchObject({ llm_request: request });
    expect(by.BeforeToolSelection).toMatchObject({ llm_request: request });
    expect(by.AfterModel).toMatchObject({ llm_request: request, llm_response: { candidates: [] } });
    // Gemini CLI's MCP tool name is mcp_<server>_<tool>; mcp_context.tool_name is the tool's own name.
    expect(by.BeforeTool).toMatchObject({ tool_name: 'mcp_fs_read', tool_input: { path: 'a' }, mcp_context: { server_name: 'fs', tool_name: 'read' } });
    expect(by.AfterTool).toMatchObject({ tool_name: 'read_file', tool_response: { llmContent: 'A' } });
    expect(by.AfterAgent).toMatchObject({ prompt: 'hi', prompt_response: 'hello', stop_hook_active: false });
    expect(by.PreCompress).toMatchObject({ trigger: 'auto' });
    expect(by.Notification).toMatchObject({ notification_type: 'ToolPermission', message: 'permission needed', details: { tool: 'run_shell_command' } });
    expect(by.SessionEnd).toMatchObject({ reason: 'exit' });
  });

  it('BeforeTool: a JSON "deny" blocks with its reason (regex matcher), exit 2 blocks with stderr, "allow" lets it through', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      BeforeTool: [
        group('$GEMINI_PROJECT_DIR/.gemini/hooks/block-secrets.sh', { matcher: 'write_file|replace' }),
        group('$GEMINI_PROJECT_DIR/.gemini/hooks/exit2.sh', { matcher: 'run_shell.*' }),
      ],
    });
    const key = await kernel.emit('before_tool', { tool: 'write_file', args: { path: 'a.ts', content: 'const k = "AKIAABCDEFGHIJKLMNOP"' } });
    expect(key.allow).toBe(false);
    expect(key.messages).toEqual(['Potential AWS key in the content; the file was not written\nBlocked a secret']);
    expect((await kernel.emit('before_tool', { tool: 'replace', args: { new_string: 'fine' } })).allow).toBe(true);

    const shell = await kernel.emit('before_tool', { tool: 'run_shell_command', args: { command: 'ls' } });
    expect(shell.allow).toBe(false);
    expect(shell.messages[0]).toBe('shell commands are disabled in this project');
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:BeforeTool.1.0': 'ran' });
  });

  it('BeforeTool hookSpecificOutput.tool_input merges over the arguments, seen by the next hook and the caller; AfterTool additionalContext', async () => {
    const workspace = await project();
    const log = join(workspace, 'seen.jsonl');
    const kernel = await boot(workspace, {
      BeforeTool: [group(['node .gemini/hooks/default-encoding.js', `node record.js ${log}`], { matcher: 'read_file', sequential: true })],
      AfterTool: [group('python3 .gemini/hooks/after-tool.py')],
    });
    const decision = await kernel.emit('before_tool', { tool: 'read_file', args: { path: '  notes.md ', limit: 10 } });
    expect(decision.context.args).toEqual({ path: 'notes.md', limit: 10, encoding: 'utf-8' });
    expect((await records(log))[0]?.input.tool_input).toEqual({ path: 'notes.md', limit: 10, encoding: 'utf-8' });

    const after = await kernel.emit('after_tool', { tool: 'read_file', args: {}, result: { llmContent: 'abc' } });
    expect(after.systemMessages).toEqual(['read_file returned 21 bytes']);
  });

  it('model hooks rewrite the request, the tool selection and the response', async () => {
    const workspace = await project();
    const model = 'node .gemini/hooks/model.js';
    const kernel = await boot(workspace, { BeforeModel: [group(model)], BeforeToolSelection: [group(model)], AfterModel: [group(model)] });
    const request = { model: 'gemini-2.5-pro', messages: [], config: { temperature: 1, topP: 0.9 } };
    const before = await kernel.emit('before_model', { request });
    // llm_request overrides parts of the request: the fields it names, at the top level.
    expect(before.context.request).toEqual({ model: 'gemini-2.5-flash', messages: [], config: { temperature: 0 } });
    const selection = await kernel.emit('before_tool_selection', { request });
    expect(selection.context.toolConfig).toEqual({ mode: 'ANY', allowedFunctionNames: ['read_file'] });
    const after = await kernel.emit('after_model', { request, response: { candidates: [{ content: { role: 'model', parts: ['SSN 123-45-6789'] } }] } });
    expect(after.context.response).toEqual({ candidates: [{ content: { role: 'model', parts: ['SSN [redacted]'] } }] });
  });

  it('agent hooks: BeforeAgent additionalContext, AfterAgent "deny" asks for a retry with the reason', async () => {
    const workspace = await project();
    const agent = 'python3 .gemini/hooks/agent.py';
    const kernel = await boot(workspace, { BeforeAgent: [group(agent)], AfterAgent: [group(agent)] });
    expect((await kernel.emit('before_agent', { prompt: 'hi' })).systemMessages).toEqual(['The user prefers short answers.']);
    const retry = await kernel.emit('after_agent', { prompt: 'hi', response: 'TODO: write it' });
    expect(retry.allow).toBe(false);
    expect(retry.messages[0]).toBe('The answer still has a TODO: finish it.');
    expect((await kernel.emit('after_agent', { prompt: 'hi', response: 'done' })).allow).toBe(true);
  });

  it('lifecycle hooks are advisory: a "deny" or exit 2 on SessionStart, SessionEnd, PreCompress, Notification is only said; plain text is a message', async () => {
    const workspace = await project();
    const lifecycle = 'bash .gemini/hooks/lifecycle.sh';
    const kernel = await boot(workspace, {
      SessionStart: [group([lifecycle, '.gemini/hooks/exit2.sh'])],
      SessionEnd: [group(lifecycle)],
      PreCompress: [group(lifecycle)],
      Notification: [group(lifecycle)],
      AfterTool: [group('.gemini/hooks/plain.sh')],
    });
    const start = await kernel.emit('session_start', { source: 'startup' });
    expect(start.allow).toBe(true);
    expect(start.messages.sort()).toEqual(['ignored on SessionStart\nSessionStart seen', 'shell commands are disabled in this project']);
    for (const [event, name] of [['session_end', 'SessionEnd'], ['pre_compress', 'PreCompress'], ['notification', 'Notification']] as const) {
      const decision = await kernel.emit(event, {});
      expect(decision.allow).toBe(true);
      expect(decision.messages).toEqual([`ignored on ${name}\n${name} seen`]);
    }
    const plain = await kernel.emit('after_tool', { tool: 'read_file', result: {} });
    expect(plain).toMatchObject({ allow: true, messages: ['Logged the tool call'] });
  });
});

// ── every event, both ways of blocking ──────────────────────────────────────

describe('a block on every event of both peers, by exit 2 and by JSON decision', () => {
  /**
   * plinth event, the context it fires with, and what a block means there: `blocks`, `says` (advisory: a message),
   * `tells the model` (Claude Code's PostToolUse), `ignores` (Claude Code drops exit 2 on Notification and reads only the JSON).
   */
  const EVENTS: ReadonlyArray<[string, string, 'claude' | 'gemini', Record<string, unknown>, 'blocks' | 'says' | 'tells the model' | 'says; exit 2 ignored']> = [
    ['PreToolUse', 'before_tool', 'claude', { tool: 'Bash', args: {} }, 'blocks'],
    ['PostToolUse', 'after_tool', 'claude', { tool: 'Bash', args: {}, result: {} }, 'tells the model'],
    ['UserPromptSubmit', 'before_agent', 'claude', { prompt: 'x' }, 'blocks'],
    ['Stop', 'after_agent', 'claude', {}, 'blocks'],
    ['SessionStart', 'session_start', 'claude', {}, 'says'],
    ['SessionEnd', 'session_end', 'claude', {}, 'says'],
    // Claude Code's PreCompact blocks compaction (its current reference), Gemini CLI's PreCompress is advisory.
    ['PreCompact', 'pre_compress', 'claude', {}, 'blocks'],
    ['Notification', 'notification', 'claude', { message: 'm' }, 'says; exit 2 ignored'],
    ['BeforeTool', 'before_tool', 'gemini', { tool: 'read_file', args: {} }, 'blocks'],
    ['AfterTool', 'after_tool', 'gemini', { tool: 'read_file', args: {}, result: {} }, 'blocks'],
    ['BeforeAgent', 'before_agent', 'gemini', { prompt: 'x' }, 'blocks'],
    ['AfterAgent', 'after_agent', 'gemini', { prompt: 'x', response: 'y' }, 'blocks'],
    ['BeforeModel', 'before_model', 'gemini', { request: {} }, 'blocks'],
    ['AfterModel', 'after_model', 'gemini', { request: {}, response: {} }, 'blocks'],
    ['BeforeToolSelection', 'before_tool_selection', 'gemini', { request: {} }, 'blocks'],
    ['SessionStart', 'session_start', 'gemini', {}, 'says'],
    ['SessionEnd', 'session_end', 'gemini', {}, 'says'],
    ['PreCompress', 'pre_compress', 'gemini', {}, 'says'],
    ['Notification', 'notification', 'gemini', { message: 'm' }, 'says'],
  ];

  for (const how of ['exit2', 'json'] as const) {
    it(`by ${how === 'exit2' ? 'exit 2 (stderr the reason)' : 'JSON "decision": "block" (reason)'}`, async () => {
      const workspace = await project();
      await cp(join(FIXTURES, 'decide.sh'), join(workspace, 'decide.sh'));
      const results: string[] = [];
      for (const protocol of ['claude', 'gemini'] as const) {
        const events = EVENTS.filter((e) => e[2] === protocol);
        const kernel = await boot(workspace, Object.fromEntries(events.map(([peer]) => [peer, [group(`bash decide.sh ${how}`, { protocol })]])));
        for (const [peer, event, , context] of events) {
          const decision = await kernel.emit(event as Parameters<TestKernel['emit']>[0], context);
          const reason = `no ${peer} (${how === 'exit2' ? 'exit 2' : 'JSON'})`;
          const effect = !decision.allow && decision.messages[0] === reason ? 'blocks' : decision.allow && decision.messages.includes(reason) ? 'says' : decision.allow && decision.systemMessages.includes(reason) ? 'tells the model' : decision.allow && decision.messages.length === 0 && decision.systemMessages.length === 0 ? 'ignores' : `?? ${JSON.stringify(decision)}`;
          results.push(`${protocol} ${peer} ${effect}`);
        }
        await kernel.dispose();
        kernels.splice(kernels.indexOf(kernel), 1);
      }
      const expected = (effect: string) => (effect === 'says; exit 2 ignored' ? (how === 'exit2' ? 'ignores' : 'says') : effect);
      expect(results).toEqual(EVENTS.map(([peer, , protocol, , effect]) => `${protocol} ${peer} ${expected(effect)}`));
    });
  }
});

// ── a peer plugin's hooks ───────────────────────────────────────────────────

describe("a Claude Code plugin's and a Gemini CLI extension's hooks (manifest.peer, as the extensions plugin synthesises it)", () => {
  it('are read in that peer\'s dialect, with CLAUDE_PLUGIN_ROOT and ${extensionPath}, as extension hooks that need approval', async () => {
    const workspace = await project();
    const log = join(workspace, 'plugins.jsonl');
    const claudeDir = join(workspace, 'vendor', 'safety');
    const geminiDir = join(workspace, 'vendor', 'greeter');
    await cp(join(FIXTURES, 'claude'), join(claudeDir, 'hooks'), { recursive: true });
    await cp(join(FIXTURES, 'record.js'), join(claudeDir, 'record.js'));
    await cp(join(FIXTURES, 'record.js'), join(geminiDir, 'record.js'));
    const manifest = (dir: string, value: Record<string, unknown>) => writeFile(join(dir, 'manifest.json'), JSON.stringify(value, null, 2));
    await manifest(claudeDir, {
      name: 'safety',
      version: '1.0.0',
      peer: { format: 'claude', file: join(claudeDir, '.claude-plugin', 'plugin.json') },
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '"${CLAUDE_PLUGIN_ROOT}"/hooks/block-rm.sh' }] }],
        SessionStart: [{ hooks: [{ type: 'command', command: `node "\${CLAUDE_PLUGIN_ROOT}/record.js" ${log} claude` }] }],
      },
    });
    // SessionStart alone is both peers' event: manifest.peer says which.
    await manifest(geminiDir, {
      name: 'greeter',
      version: '2.0.0',
      peer: { format: 'gemini', file: join(geminiDir, 'gemini-extension.json') },
      hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `node \${extensionPath}\${/}record.js ${log} gemini` }] }] },
    });
    const kernel = await createTestKernel({ builtin: true, workspace, pluginDirs: [claudeDir, geminiDir] });
    kernels.push(kernel);

    const hooks = await kernel.get('hooks');
    const { hooks: defined, problems } = await hooks.definitions();
    expect(problems).toEqual([]);
    expect(defined.map((h) => `${h.id} ${h.protocol} ${h.source}`).sort()).toEqual(['greeter/SessionStart.0.0 gemini extension', 'safety/PreToolUse.0.0 claude extension', 'safety/SessionStart.0.0 claude extension']);
    const guard = defined.find((h) => h.id === 'safety/PreToolUse.0.0');
    expect(guard?.action).toEqual({ type: 'command', command: 'bash', args: [join(claudeDir, 'hooks', 'block-rm.sh')] });
    expect(guard?.origin).toBe(`${join(claudeDir, '.claude-plugin', 'plugin.json')}#hooks.PreToolUse[0].hooks[0]`);

    // Not approved yet: skipped, and the decision says so.
    const before = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' } });
    expect(before.allow).toBe(true);
    expect(before.systemMessages.join('\n')).toContain('plinth hooks trust safety/PreToolUse.0.0');

    const trust = await kernel.get('trust');
    for (const hook of defined) await trust.approve(trustSubject(hook));
    const after = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' } });
    expect(after.allow).toBe(false);
    expect(after.blockedBy?.by).toBe('safety/PreToolUse.0.0');

    await kernel.emit('session_start', { source: 'startup' });
    const seen = await records(log);
    expect(seen.map((r) => [r.args[0], r.input.hook_event_name, r.env.CLAUDE_PLUGIN_ROOT ?? null, r.env.GEMINI_PROJECT_DIR ?? null]).sort()).toEqual([
      ['claude', 'SessionStart', claudeDir, null],
      ['gemini', 'SessionStart', null, workspace],
    ]);
  });
});

describe('tagPeerHooks (plinth/sdk)', () => {
  it("stamps a peer's protocol on each matcher group and leaves the rest as it is", () => {
    const hooks = { SessionStart: [{ hooks: [] }, 'odd'], before_tool: [{ name: 'x' }], enabled: true };
    expect(tagPeerHooks(hooks, 'gemini')).toEqual({ SessionStart: [{ hooks: [], protocol: 'gemini' }, 'odd'], before_tool: [{ name: 'x' }], enabled: true });
    expect(hooks.SessionStart[0]).toEqual({ hooks: [] });
  });
});

// ── the pieces, one by one ──────────────────────────────────────────────────

describe('peer matchers', () => {
  const test = (protocol: 'claude' | 'gemini', matcher: string, name: string): boolean => {
    const compiled = compilePeerMatcher(protocol, matcher);
    if (!compiled.ok) throw new Error(compiled.why);
    return compiled.test(name);
  };

  it('Claude Code: plain names and | lists match exactly, anything else is a regular expression', () => {
    expect(test('claude', 'Write', 'Write')).toBe(true);
    expect(test('claude', 'Write', 'NotebookWrite')).toBe(false);
    expect(test('claude', 'Edit|MultiEdit|Write', 'MultiEdit')).toBe(true);
    expect(test('claude', 'Notebook.*', 'NotebookEdit')).toBe(true);
    expect(test('claude', 'mcp__memory__.*', 'mcp__memory__create_entities')).toBe(true);
    expect(test('claude', 'mcp__.*__write.*', 'mcp__fs__write_file')).toBe(true);
    expect(test('claude', 'mcp__.*__write.*', 'mcp__fs__read_file')).toBe(false);
    expect(compilePeerMatcher('claude', 'Bash(')).toMatchObject({ ok: false, why: expect.stringContaining('is not a valid regular expression') });
  });

  it('Gemini CLI: a regular expression, and an invalid one compared exactly', () => {
    expect(test('gemini', 'read_.*', 'read_many_files')).toBe(true);
    expect(test('gemini', 'write_file|replace', 'replace')).toBe(true);
    expect(test('gemini', 'run_shell_command(git', 'run_shell_command(git')).toBe(true);
    expect(test('gemini', 'run_shell_command(git', 'run_shell_command')).toBe(false);
  });
});

describe('peer command strings', () => {
  const expansions = { CLAUDE_PROJECT_DIR: '/work/my project', CLAUDE_PLUGIN_ROOT: '/plugins/fmt', extensionPath: '/ext/x' };
  const read = (command: string) => readCommandLine(command, expansions, '/home/me');

  it('expands the forms real configurations use, and splits quoted arguments, without a shell', () => {
    expect(read('$CLAUDE_PROJECT_DIR/.claude/hooks/check.sh')).toEqual({ kind: 'argv', argv: ['/work/my project/.claude/hooks/check.sh'] });
    expect(read('"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh --strict')).toEqual({ kind: 'argv', argv: ['/work/my project/.claude/hooks/check.sh', '--strict'] });
    expect(read('"${CLAUDE_PLUGIN_ROOT}"/scripts/format.py')).toEqual({ kind: 'argv', argv: ['/plugins/fmt/scripts/format.py'] });
    expect(read('node ${extensionPath}${/}run.js')).toEqual({ kind: 'argv', argv: ['node', '/ext/x/run.js'] });
    expect(read("python3 ~/hooks/log.py 'a b' \"c \\\"d\\\"\" e\\ f")).toEqual({ kind: 'argv', argv: ['python3', '/home/me/hooks/log.py', 'a b', 'c "d"', 'e f'] });
  });

  it('says what needs a shell: operators, substitution, globs, other variables, assignments', () => {
    expect(read('jq -r .tool_input.command | grep rm')).toMatchObject({ kind: 'shell', needs: 'the shell operator "|"' });
    expect(read('npm test && echo ok')).toMatchObject({ kind: 'shell', needs: 'the shell operator "&&"' });
    expect(read('cat > /tmp/log')).toMatchObject({ kind: 'shell', needs: 'the shell operator ">"' });
    expect(read('(cd x; make)')).toMatchObject({ kind: 'shell' });
    expect(read('echo $(date)')).toMatchObject({ kind: 'shell', needs: 'command substitution "$(…)"' });
    expect(read('ls *.ts')).toMatchObject({ kind: 'shell', needs: 'the wildcard "*"' });
    expect(read('echo $USER')).toMatchObject({ kind: 'shell', needs: 'the variable $USER' });
    expect(read('DEBUG=1 node x.js')).toMatchObject({ kind: 'shell', needs: 'the variable assignment "DEBUG=1"' });
    expect(read('echo "unclosed')).toEqual({ kind: 'invalid', why: 'a double quote is not closed' });
  });
});
