/**
 * Every Claude Code hook event of its current reference, run unchanged: the peer's settings shape in
 * plinth's settings, hook scripts written as Claude Code's hooks reference shows them (bash with jq,
 * node; in test/fixtures/hooks-claude-events/), run as real processes through the real kernel and
 * the hooks plugin. For each event: the input document the hook reads, the field its matcher
 * matches, what exit 2 and a JSON decision mean there (blocking, allowing, advisory), and the
 * outputs that reach the host through the decision's `host` (defer, a permission prompt's answer,
 * retry, a replaced MCP result, a session title, a working copy's path, a stop of the agent loop,
 * Gemini CLI's tail tool call and cleared context).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENTS, GATE_EVENTS, type Decision, type EventName } from 'plinth/sdk';
import { PEER_EVENTS } from '../plugins/hooks/dialects/events.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { hookSuite } from './support/hook-suite.js';
import { BIN, cleanEnv, run, sandbox } from './support/cli.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/hooks-claude-events/', import.meta.url));
/** The recorder is shared with the dialect suite: one script that appends what any peer's hook is given. */
const RECORDER = fileURLToPath(new URL('./fixtures/hooks-dialects/record.js', import.meta.url));

/** The event scripts and the recorder in `<dir>/.claude/hooks/`, as a Claude Code user keeps them. */
async function copyHooks(dir: string): Promise<void> {
  await cp(FIXTURES, join(dir, '.claude', 'hooks'), { recursive: true });
  await cp(RECORDER, join(dir, '.claude', 'hooks', 'record.js'));
}

const { kernels, folders } = hookSuite();
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A project with the scripts in `.claude/hooks/`, as a Claude Code user keeps them. */
async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-claude-events-'));
  folders.push(dir);
  await copyHooks(dir);
  return dir;
}

/** A kernel with the builtin plugins and the user's `hooks` in a peer's shape. */
async function boot(workspace: string, hooks: Record<string, unknown>): Promise<TestKernel> {
  const kernel = await createTestKernel({ builtin: true, workspace, settings: { hooks } });
  kernels.push(kernel);
  expect(kernel.report.plugins.filter((p) => p.state === 'failed').map((p) => `${p.name}: ${p.error?.message}`)).toEqual([]);
  const { problems } = await (await kernel.get('hooks')).definitions();
  expect(problems.map((p) => p.message)).toEqual([]);
  return kernel;
}

/** `{ matcher?, hooks: [{ type: "command", command }] }` running `.claude/hooks/<script> <args>`. */
const group = (script: string, options: { matcher?: string; protocol?: 'claude' | 'gemini'; timeout?: number } = {}) => {
  const { timeout, ...rest } = options;
  return { ...rest, hooks: [{ type: 'command', command: `"$CLAUDE_PROJECT_DIR"/.claude/hooks/${script}`, ...(timeout !== undefined && { timeout }) }] };
};

const emit = (kernel: TestKernel, event: EventName, context: Record<string, unknown>): Promise<Decision> => kernel.emit(event, context);

type Recorded = { input: Record<string, unknown> };
async function records(file: string): Promise<Recorded[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Recorded);
}

describe('every Claude Code event has a plinth event', () => {
  it("each event of Claude Code's reference is mapped to an event of the sdk's list, and the gate events are among them", () => {
    const claude = Object.keys(PEER_EVENTS.claude).sort();
    expect(claude).toEqual(
      [
        'ConfigChange', 'CwdChanged', 'DirectoryAdded', 'Elicitation', 'ElicitationResult', 'FileChanged', 'InstructionsLoaded', 'MessageDisplay',
        'Notification', 'PermissionDenied', 'PermissionRequest', 'PostCompact', 'PostModelSwitch', 'PostToolBatch', 'PostToolUse', 'PostToolUseFailure',
        'PreCompact', 'PreModelSwitch', 'PreToolUse', 'SessionEnd', 'SessionStart', 'Setup', 'Stop', 'StopFailure', 'SubagentStart', 'SubagentStop',
        'TaskCompleted', 'TaskCreated', 'TeammateIdle', 'UserPromptExpansion', 'UserPromptSubmit', 'WorktreeCreate', 'WorktreeRemove',
      ].sort(),
    );
    for (const event of Object.values(PEER_EVENTS.claude)) expect(EVENTS).toContain(event);
    // One plinth event per Claude Code event.
    expect(new Set(Object.values(PEER_EVENTS.claude)).size).toBe(claude.length);
    expect(GATE_EVENTS).toEqual(expect.arrayContaining(['approval_request', 'prompt_expansion', 'before_model_switch', 'config_change', 'worktree_create', 'elicitation']));
  });
});

describe('the input document of each new event, and what its matcher matches', () => {
  /** Claude Code event, its matcher (or none), the context the host emits with, the fields the hook must read, and a context the matcher must not match. */
  const CASES: ReadonlyArray<{ peer: string; event: EventName; matcher?: string; context: Record<string, unknown>; reads: Record<string, unknown>; other?: Record<string, unknown> }> = [
    { peer: 'Setup', event: 'setup', matcher: 'init', context: { trigger: 'init' }, reads: { trigger: 'init' }, other: { trigger: 'maintenance' } },
    {
      peer: 'InstructionsLoaded',
      event: 'instructions_loaded',
      matcher: 'path_glob_match|nested_traversal',
      context: { file: '/p/src/CLAUDE.md', memoryType: 'Project', loadReason: 'nested_traversal', triggerFile: '/p/src/a.ts' },
      reads: { file_path: '/p/src/CLAUDE.md', memory_type: 'Project', load_reason: 'nested_traversal', trigger_file_path: '/p/src/a.ts' },
      other: { file: '/p/CLAUDE.md', loadReason: 'session_start' },
    },
    {
      peer: 'UserPromptExpansion',
      event: 'prompt_expansion',
      matcher: 'example-skill',
      context: { command: 'example-skill', args: 'arg1 arg2', expansionType: 'slash_command', commandSource: 'plugin', prompt: '/example-skill arg1 arg2' },
      reads: { expansion_type: 'slash_command', command_name: 'example-skill', command_args: 'arg1 arg2', command_source: 'plugin', prompt: '/example-skill arg1 arg2' },
      other: { command: 'senior-example-skill', prompt: '/senior-example-skill' },
    },
    {
      peer: 'PermissionRequest',
      event: 'approval_request',
      matcher: 'Bash',
      context: { tool: 'Bash', args: { command: 'rm -rf node_modules' }, permissionSuggestions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'rm -rf node_modules' }], behavior: 'allow', destination: 'localSettings' }] },
      reads: { tool_name: 'Bash', tool_input: { command: 'rm -rf node_modules' }, permission_suggestions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'rm -rf node_modules' }], behavior: 'allow', destination: 'localSettings' }] },
      other: { tool: 'Write', args: { file_path: '/p/a' } },
    },
    {
      peer: 'PermissionDenied',
      event: 'permission_denied',
      matcher: 'Bash',
      context: { tool: 'Bash', args: { command: 'rm -rf /tmp/build' }, toolUseId: 'toolu_01', reason: 'Blocked by classifier' },
      reads: { tool_name: 'Bash', tool_input: { command: 'rm -rf /tmp/build' }, tool_use_id: 'toolu_01', reason: 'Blocked by classifier' },
      other: { tool: 'Read', args: {}, reason: 'x' },
    },
    {
      peer: 'PostToolUseFailure',
      event: 'after_tool_failure',
      matcher: 'Bash',
      context: { tool: 'Bash', args: { command: 'npm test' }, toolUseId: 'toolu_02', error: "Exit code 1\nError: Cannot find module 'express'", isInterrupt: false, durationMs: 4187 },
      reads: { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_use_id: 'toolu_02', error: "Exit code 1\nError: Cannot find module 'express'", is_interrupt: false, duration_ms: 4187 },
      other: { tool: 'Edit', args: {}, error: 'x' },
    },
    {
      peer: 'PostToolBatch',
      event: 'after_tool_batch',
      context: { calls: [{ tool: 'Read', args: { file_path: '/p/a.py' }, toolUseId: 'toolu_1', result: '1\tx' }] },
      reads: { tool_calls: [{ tool_name: 'Read', tool_input: { file_path: '/p/a.py' }, tool_use_id: 'toolu_1', tool_response: '1\tx' }] },
    },
    { peer: 'SubagentStart', event: 'subagent_start', matcher: 'Explore', context: { agentId: 'agent-abc123', agentType: 'Explore' }, reads: { agent_id: 'agent-abc123', agent_type: 'Explore' }, other: { agentId: 'b', agentType: 'Plan' } },
    {
      peer: 'SubagentStop',
      event: 'subagent_stop',
      matcher: '^my-plugin:reviewer$',
      context: { agentId: 'def456', agentType: 'my-plugin:reviewer', response: 'Analysis complete.', agentTranscriptPath: '/t/agent-def456.jsonl' },
      reads: { agent_id: 'def456', agent_type: 'my-plugin:reviewer', last_assistant_message: 'Analysis complete.', agent_transcript_path: '/t/agent-def456.jsonl', stop_hook_active: false },
      other: { agentId: 'x', agentType: 'my-plugin:reviewer-2' },
    },
    {
      peer: 'TaskCreated',
      event: 'task_created',
      context: { taskId: 'task-001', subject: 'Implement user authentication', description: 'Add login and signup endpoints', teammate: 'implementer' },
      reads: { task_id: 'task-001', task_subject: 'Implement user authentication', task_description: 'Add login and signup endpoints', teammate_name: 'implementer' },
    },
    { peer: 'TaskCompleted', event: 'task_completed', context: { taskId: 'task-001', subject: 'Implement user authentication' }, reads: { task_id: 'task-001', task_subject: 'Implement user authentication' } },
    { peer: 'TeammateIdle', event: 'teammate_idle', context: { teammate: 'researcher' }, reads: { teammate_name: 'researcher' } },
    {
      peer: 'StopFailure',
      event: 'after_agent_failure',
      matcher: 'rate_limit|overloaded',
      context: { error: 'rate_limit', details: '429 Too Many Requests', response: 'API Error: Rate limit reached' },
      reads: { error: 'rate_limit', error_details: '429 Too Many Requests', last_assistant_message: 'API Error: Rate limit reached' },
      other: { error: 'billing_error' },
    },
    { peer: 'PostCompact', event: 'post_compress', matcher: 'manual', context: { trigger: 'manual', summary: 'Summary of the conversation' }, reads: { trigger: 'manual', compact_summary: 'Summary of the conversation' }, other: { trigger: 'auto' } },
    {
      peer: 'Elicitation',
      event: 'elicitation',
      matcher: 'my-mcp-server',
      context: { server: 'my-mcp-server', message: 'Please provide your credentials', mode: 'form', schema: { type: 'object', properties: { username: { type: 'string' } } } },
      reads: { mcp_server_name: 'my-mcp-server', message: 'Please provide your credentials', mode: 'form', requested_schema: { type: 'object', properties: { username: { type: 'string' } } } },
      other: { server: 'other', message: 'x' },
    },
    {
      peer: 'ElicitationResult',
      event: 'elicitation_result',
      matcher: 'my-mcp-server',
      context: { server: 'my-mcp-server', action: 'accept', content: { username: 'alice' }, mode: 'form', elicitationId: 'elicit-123' },
      reads: { mcp_server_name: 'my-mcp-server', action: 'accept', content: { username: 'alice' }, mode: 'form', elicitation_id: 'elicit-123' },
      other: { server: 'other', action: 'accept' },
    },
    {
      peer: 'ConfigChange',
      event: 'config_change',
      matcher: 'project_settings',
      context: { source: 'project_settings', file: '/p/.claude/settings.json' },
      reads: { source: 'project_settings', file_path: '/p/.claude/settings.json' },
      other: { source: 'user_settings' },
    },
    { peer: 'CwdChanged', event: 'cwd_change', context: { from: '/p', to: '/p/src' }, reads: { old_cwd: '/p', new_cwd: '/p/src' } },
    { peer: 'DirectoryAdded', event: 'directory_added', matcher: 'slash_command', context: { directory: '/other-repo', source: 'slash_command' }, reads: { directory: '/other-repo', source: 'slash_command' }, other: { directory: '/x', source: 'register_repo_root' } },
    // plinth's watcher says { file, changes: { type } }; the matcher is the changed file's name (`.envrc|.env` is a regular expression there).
    { peer: 'FileChanged', event: 'file_change', matcher: '.envrc|.env', context: { file: '/p/.envrc', changes: { type: 'modified' } }, reads: { file_path: '/p/.envrc', event: 'change' }, other: { file: '/p/src/app.ts', changes: { type: 'added' } } },
    { peer: 'WorktreeCreate', event: 'worktree_create', context: { name: 'feature-auth' }, reads: { name: 'feature-auth' } },
    { peer: 'WorktreeRemove', event: 'worktree_remove', context: { path: '/p/.claude/worktrees/feature-auth' }, reads: { worktree_path: '/p/.claude/worktrees/feature-auth' } },
    {
      peer: 'MessageDisplay',
      event: 'message_display',
      context: { turnId: 't-1', messageId: 'm-1', index: 0, final: false, delta: 'Here is the plan:\n' },
      reads: { turn_id: 't-1', message_id: 'm-1', index: 0, final: false, delta: 'Here is the plan:\n' },
    },
    { peer: 'PreModelSwitch', event: 'before_model_switch', matcher: 'claude-opus-5', context: { from: 'claude-sonnet-5', to: 'claude-opus-5', source: 'command' }, reads: { from_model: 'claude-sonnet-5', to_model: 'claude-opus-5', source: 'command' }, other: { from: 'a', to: 'claude-haiku-5' } },
    { peer: 'PostModelSwitch', event: 'after_model_switch', context: { from: 'claude-sonnet-5', to: 'claude-opus-5' }, reads: { from_model: 'claude-sonnet-5', to_model: 'claude-opus-5' } },
  ];

  // Three tests of eight or nine events: every event is one process at least.
  for (let part = 0; part < 3; part++) {
    const cases = CASES.slice(part * 9, part * 9 + 9);
    it(`${cases.map((c) => c.peer).join(', ')}`, async () => {
      const workspace = await project();
      const log = join(workspace, 'seen.jsonl');
      const kernel = await boot(
        workspace,
        Object.fromEntries(cases.map((c) => [c.peer, [{ ...(c.matcher !== undefined && { matcher: c.matcher }), hooks: [{ type: 'command', command: `node "$CLAUDE_PROJECT_DIR/.claude/hooks/record.js" ${log}` }] }]])),
      );
      for (const c of cases) {
        const decision = await emit(kernel, c.event, c.context);
        // A WorktreeCreate hook that prints no path made no working copy: the creation fails (the recorder prints nothing).
        expect(decision.allow, c.peer).toBe(c.peer !== 'WorktreeCreate');
        if (c.other !== undefined) await emit(kernel, c.event, c.other);
      }
      const seen = await records(log);
      // One run per event: the matcher let its own context through and kept the other out.
      expect(seen.map((r) => r.input.hook_event_name)).toEqual(cases.map((c) => c.peer));
      for (const [i, c] of cases.entries()) {
        expect(seen[i]!.input, c.peer).toMatchObject({ ...c.reads, hook_event_name: c.peer, cwd: workspace });
        expect(typeof seen[i]!.input.session_id, c.peer).toBe('string');
      }
    }, 120_000);
  }
});

describe('blocking and allowing, as Claude Code reads exit 2 and JSON on each event', () => {
  it('the events that can block: a block by exit 2 or by a JSON decision, and an allow', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      TaskCreated: [group('task-subject.sh')],
      TeammateIdle: [group('teammate-artifact.sh')],
      ConfigChange: [group('config-guard.sh')],
      UserPromptExpansion: [group('expansion-guard.sh')],
      PostToolBatch: [group('batch.sh')],
      PreModelSwitch: [group('model-switch.sh')],
      PreCompact: [group('decide.sh exit2', { matcher: 'manual' })],
      SubagentStop: [group('decide.sh json')],
      Elicitation: [group('decide.sh exit2', { matcher: 'untrusted-server' })],
      ElicitationResult: [group('decide.sh exit2', { matcher: 'untrusted-server' })],
    });

    // TaskCreated: exit 2 cancels the task, stderr the message.
    const badTask = await emit(kernel, 'task_created', { taskId: 't1', subject: 'Add feature' });
    expect(badTask).toMatchObject({ allow: false, messages: ["Task subject must start with a ticket number, e.g. '[TICKET-123] Add feature'"] });
    expect((await emit(kernel, 'task_created', { taskId: 't2', subject: '[TICKET-123] Add feature' })).allow).toBe(true);

    // TeammateIdle: exit 2 keeps the teammate working until the artifact exists (the hook runs in the project).
    expect(await emit(kernel, 'teammate_idle', { teammate: 'builder' })).toMatchObject({ allow: false, messages: ['Build artifact missing. Run the build before stopping.'] });
    await mkdir(join(workspace, 'dist'));
    await writeFile(join(workspace, 'dist', 'output.js'), '');
    expect((await emit(kernel, 'teammate_idle', { teammate: 'builder' })).allow).toBe(true);

    // ConfigChange: a JSON decision keeps the project's change out; the user's goes through.
    expect(await emit(kernel, 'config_change', { source: 'project_settings', file: join(workspace, '.claude', 'settings.json') })).toMatchObject({
      allow: false,
      messages: ['Configuration changes to project settings require admin approval'],
    });
    expect((await emit(kernel, 'config_change', { source: 'user_settings' })).allow).toBe(true);

    // UserPromptExpansion: blocked without the approval file; allowed with it, the checklist added for the model.
    expect(await emit(kernel, 'prompt_expansion', { command: 'deploy', prompt: '/deploy' })).toMatchObject({ allow: false, messages: ['/deploy needs an approval file'] });
    await writeFile(join(workspace, '.deploy-approved'), '');
    expect(await emit(kernel, 'prompt_expansion', { command: 'deploy', prompt: '/deploy' })).toMatchObject({ allow: true, systemMessages: ['Review checklist: tests, docs, changelog'] });

    // PostToolBatch: context once for the batch; a batch that read .env stops the loop before the next model call.
    const read = (file: string) => ({ tool: 'Read', args: { file_path: join(workspace, file) }, result: 'x' });
    expect(await emit(kernel, 'after_tool_batch', { calls: [read('a.py'), read('b.py')] })).toMatchObject({ allow: true, systemMessages: ['2 files read: run pytest before finishing'] });
    expect(await emit(kernel, 'after_tool_batch', { calls: [read('a.py'), read('.env')] })).toMatchObject({ allow: false, messages: ['the batch read .env: stopping before the next model call'] });

    // PreModelSwitch: permissionDecision "deny" keeps the model; another switch goes through.
    expect(await emit(kernel, 'before_model_switch', { from: 'claude-opus-5', to: 'claude-haiku-5' })).toMatchObject({ allow: false, messages: ['no switch to claude-haiku-5 during a security review'] });
    expect((await emit(kernel, 'before_model_switch', { from: 'claude-opus-5', to: 'claude-sonnet-5' })).allow).toBe(true);

    // PreCompact blocks compaction (exit 2) for the trigger its matcher names; SubagentStop's JSON block keeps the sub-agent working.
    expect(await emit(kernel, 'pre_compress', { trigger: 'manual' })).toMatchObject({ allow: false, messages: ['no PreCompact (exit 2)'] });
    expect((await emit(kernel, 'pre_compress', { trigger: 'auto' })).allow).toBe(true);
    expect(await emit(kernel, 'subagent_stop', { agentId: 'a', agentType: 'Explore' })).toMatchObject({ allow: false, messages: ['no SubagentStop (JSON)'] });

    // Elicitation: exit 2 declines the server's request; ElicitationResult: the user's answer becomes "decline".
    expect(await emit(kernel, 'elicitation', { server: 'untrusted-server', message: 'Your password?' })).toMatchObject({ allow: false, host: { elicitation: { action: 'decline' } } });
    expect(await emit(kernel, 'elicitation_result', { server: 'untrusted-server', action: 'accept', content: { password: 'x' } })).toMatchObject({ allow: false, host: { elicitation: { action: 'decline' } } });
    expect((await emit(kernel, 'elicitation', { server: 'docs-server', message: 'Which page?' })).allow).toBe(true);
  }, 180_000);

  it('the events that never block: exit 2 and a JSON block are said, fed to the model or ignored, as Claude Code does on each', async () => {
    const workspace = await project();
    const both = (how: 'exit2' | 'json') => [group(`decide.sh ${how}`)];
    const peers = ['Setup', 'SubagentStart', 'PostCompact', 'CwdChanged', 'PostModelSwitch', 'PermissionDenied', 'InstructionsLoaded', 'PostToolUseFailure', 'PermissionRequest'];
    const fire: Record<string, [EventName, Record<string, unknown>]> = {
      Setup: ['setup', { trigger: 'init' }],
      SubagentStart: ['subagent_start', { agentType: 'Explore' }],
      PostCompact: ['post_compress', { trigger: 'auto' }],
      CwdChanged: ['cwd_change', { from: '/a', to: '/b' }],
      PostModelSwitch: ['after_model_switch', { from: 'a', to: 'b' }],
      PermissionDenied: ['permission_denied', { tool: 'Bash', args: { command: 'x' } }],
      InstructionsLoaded: ['instructions_loaded', { file: '/p/CLAUDE.md' }],
      PostToolUseFailure: ['after_tool_failure', { tool: 'Bash', args: {}, error: 'Exit code 1' }],
      PermissionRequest: ['approval_request', { tool: 'Bash', args: { command: 'x' } }],
    };
    const effects: string[] = [];
    for (const how of ['exit2', 'json'] as const) {
      const kernel = await boot(workspace, Object.fromEntries(peers.map((p) => [p, both(how)])));
      for (const peer of peers) {
        const [event, context] = fire[peer]!;
        const d = await emit(kernel, event, context);
        const reason = `no ${peer} (${how === 'exit2' ? 'exit 2' : 'JSON'})`;
        const effect = !d.allow ? 'blocks' : d.messages.includes(reason) ? 'says' : d.systemMessages.includes(reason) ? 'tells the model' : d.messages.length + d.systemMessages.length === 0 ? 'nothing' : JSON.stringify(d);
        effects.push(`${how} ${peer} ${effect}`);
      }
      await kernel.dispose();
      kernels.splice(kernels.indexOf(kernel), 1);
    }
    expect(effects).toEqual([
      'exit2 Setup says',
      'exit2 SubagentStart says',
      'exit2 PostCompact says',
      'exit2 CwdChanged says',
      'exit2 PostModelSwitch says',
      // The denial already happened; Claude Code drops exit 2 and its stderr.
      'exit2 PermissionDenied nothing',
      'exit2 InstructionsLoaded nothing',
      // The tool already failed: stderr goes to the model.
      'exit2 PostToolUseFailure tells the model',
      // "Exit code 2 isn't honored for this event": only the decision object grants or denies.
      'exit2 PermissionRequest nothing',
      'json Setup says',
      'json SubagentStart says',
      'json PostCompact says',
      'json CwdChanged says',
      'json PostModelSwitch says',
      'json PermissionDenied says',
      'json InstructionsLoaded says',
      'json PostToolUseFailure tells the model',
      // A top-level "block" is no PermissionRequest decision: the prompt goes on, the host decides.
      'json PermissionRequest nothing',
    ]);
  }, 180_000);

  it('PreModelSwitch: a hook that reaches its time limit blocks the switch; TaskCreated ignores continue: false (Claude Code discards it there)', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { PreModelSwitch: [group('slow.sh', { timeout: 1 })], TaskCreated: [group('stop-build.sh')], TaskCompleted: [group('stop-build.sh')] });
    const slow = await emit(kernel, 'before_model_switch', { from: 'claude-sonnet-5', to: 'claude-opus-5' });
    expect(slow.allow).toBe(false);
    expect(slow.messages[0]).toContain('the model switch is blocked');
    const created = await emit(kernel, 'task_created', { taskId: 't', subject: 's' });
    expect(created.allow).toBe(true);
    expect(created.host).toBeUndefined();
    // TaskCompleted reads it: the teammate stops.
    expect(await emit(kernel, 'task_completed', { taskId: 't', subject: 's' })).toMatchObject({ allow: false, host: { stop: { reason: 'Build failed, fix errors before continuing' } } });
  }, 120_000);

  it('WorktreeCreate: the path the hook printed reaches the host; any non-zero exit or no path fails the creation (a gate event)', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { WorktreeCreate: [group('worktree-create.sh')], WorktreeRemove: [group('worktree-remove.sh')] });
    const made = await emit(kernel, 'worktree_create', { name: 'feature-auth' });
    const dir = join(workspace, 'worktrees', 'feature-auth');
    expect(made).toMatchObject({ allow: true, host: { worktreePath: dir } });
    expect((await stat(dir)).isDirectory()).toBe(true);
    // Exit 1 is no "non-blocking error" here: no working copy was made.
    expect(await emit(kernel, 'worktree_create', { name: 'refuse' })).toMatchObject({ allow: false, messages: ['cannot make a working copy named refuse'] });
    expect((await emit(kernel, 'worktree_remove', { path: dir })).allow).toBe(true);
    await expect(stat(dir)).rejects.toThrow();
  }, 120_000);
});

describe('outputs that reach the host: Decision.host', () => {
  it('PermissionRequest answers the prompt: allow (approved, the input replaced, the rules to remember), deny (the message, interrupt); no answer leaves it to the host', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { PermissionRequest: [group('permission-request.sh', { matcher: 'Bash' })] });
    const suggestion = { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'npm run lint' }], behavior: 'allow', destination: 'localSettings' };
    const lint = await emit(kernel, 'approval_request', { tool: 'Bash', args: { command: 'npm run lint' }, permissionSuggestions: [suggestion] });
    expect(lint).toMatchObject({ allow: true, context: { approved: true, args: { command: 'npm run lint -- --quiet' } }, host: { permission: { behavior: 'allow', updatedPermissions: [suggestion] } } });
    const rm = await emit(kernel, 'approval_request', { tool: 'Bash', args: { command: 'rm -rf /' } });
    expect(rm).toMatchObject({ allow: false, messages: ['rm is not allowed here'], host: { permission: { behavior: 'deny', message: 'rm is not allowed here', interrupt: true } } });
    const other = await emit(kernel, 'approval_request', { tool: 'Bash', args: { command: 'git status' } });
    expect(other.allow).toBe(true);
    expect(other.context.approved).toBeUndefined();
    expect(other.host).toBeUndefined();
  }, 120_000);

  it("a PreToolUse hook's \"ask\" is answered by a PermissionRequest hook, as Claude Code's permission prompt is", async () => {
    const workspace = await project();
    await writeFile(
      join(workspace, '.claude', 'hooks', 'ask.sh'),
      '#!/bin/bash\njq -n \'{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "confirm the shell command"}}\'\n',
      { mode: 0o755 },
    );
    const kernel = await boot(workspace, { PreToolUse: [group('ask.sh', { matcher: 'Bash' })], PermissionRequest: [group('permission-request.sh', { matcher: 'Bash' })] });
    const lint = await emit(kernel, 'before_tool', { tool: 'Bash', args: { command: 'npm run lint' } });
    expect(lint.allow, JSON.stringify(lint)).toBe(true);
    const denied = await emit(kernel, 'before_tool', { tool: 'Bash', args: { command: 'rm -rf build' } });
    expect(denied.allow).toBe(false);
    expect(denied.messages[0]).toContain('rm is not allowed here');
    // Nobody answers for git: the ask blocks (fail closed), as before.
    expect((await emit(kernel, 'before_tool', { tool: 'Bash', args: { command: 'git push' } })).allow).toBe(false);
  }, 120_000);

  it('defer, retry, a replaced MCP result, a session title and watched paths, a stop of the agent loop, an elicitation answer, displayed text', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      PreToolUse: [group('defer-question.sh')],
      PermissionDenied: [group('permission-denied.sh')],
      PostToolUse: [group('mcp-redact.sh', { matcher: 'mcp__vault__.*' })],
      SessionStart: [group('session-title.sh')],
      Stop: [group('stop-build.sh')],
      Elicitation: [group('elicitation.sh', { matcher: 'my-mcp-server' })],
      ElicitationResult: [group('elicitation-result.sh')],
      MessageDisplay: [group('plain-display.sh')],
    });

    // defer: the call does not run now, and is not refused either: the host pauses and resumes it later.
    const question = { tool: 'AskUserQuestion', args: { questions: [{ question: 'Which framework?' }] } };
    expect(await emit(kernel, 'before_tool', question)).toMatchObject({ allow: true, host: { defer: { reason: 'the app asks the user' } } });
    expect((await emit(kernel, 'before_tool', { tool: 'Read', args: {} })).host).toBeUndefined();

    expect(await emit(kernel, 'permission_denied', { tool: 'Bash', args: { command: 'ls -la' }, reason: 'Blocked by classifier' })).toMatchObject({ allow: true, host: { retry: true } });
    expect((await emit(kernel, 'permission_denied', { tool: 'Bash', args: { command: 'curl x | sh' }, reason: 'Blocked by classifier' })).host).toBeUndefined();

    // plinth names the MCP tool <server>__<tool>; the hook's matcher says Claude Code's mcp__vault__read.
    const mcp = await emit(kernel, 'after_tool', { tool: 'vault__read', server: 'vault', args: { key: 'db' }, result: { text: 'password is tok-abc123' } });
    expect(mcp).toMatchObject({ allow: true, host: { toolOutput: '{"text":"password is [redacted]"}' } });

    const start = await emit(kernel, 'session_start', { source: 'startup', model: 'claude-sonnet-5' });
    expect(start.host).toEqual({ sessionTitle: workspace.split('/').pop(), watchPaths: ['/tmp/.envrc'] });
    expect((await emit(kernel, 'session_start', { source: 'resume', sessionTitle: 'mine' })).host).toBeUndefined();

    // continue: false is a stop of the agent loop the host honours, stopReason for the user.
    const stop = await emit(kernel, 'after_agent', { response: 'done' });
    expect(stop).toMatchObject({ allow: false, messages: ['Build failed, fix errors before continuing'], host: { stop: { reason: 'Build failed, fix errors before continuing' } } });

    expect(await emit(kernel, 'elicitation', { server: 'my-mcp-server', message: 'Please provide your credentials', mode: 'form' })).toMatchObject({
      allow: true,
      host: { elicitation: { action: 'accept', content: { username: 'alice' } } },
    });
    expect(await emit(kernel, 'elicitation_result', { server: 'my-mcp-server', action: 'accept', content: { username: 'a', password: 'p' } })).toMatchObject({
      allow: true,
      host: { elicitation: { action: 'decline', content: {} } },
    });

    expect(await emit(kernel, 'message_display', { delta: 'Use **bold** and `code`\n', final: true })).toMatchObject({ allow: true, host: { displayContent: 'Use bold and code\n' } });
  }, 180_000);

  it("Gemini CLI: AfterTool's tailToolCallRequest and AfterAgent's clearContext", async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      AfterTool: [{ matcher: 'write_file', hooks: [{ type: 'command', command: `node "$GEMINI_PROJECT_DIR/.claude/hooks/tail-call.js"` }] }],
      AfterAgent: [{ hooks: [{ type: 'command', command: `node "$GEMINI_PROJECT_DIR/.claude/hooks/clear-context.js"` }] }],
    });
    const wrote = await emit(kernel, 'after_tool', { tool: 'write_file', args: { file_path: 'notes.md', content: 'x' }, result: { llmContent: 'ok' } });
    expect(wrote).toMatchObject({ allow: true, host: { tailToolCall: { name: 'read_file', args: { file_path: 'notes.md' } } } });
    expect(await emit(kernel, 'after_agent', { prompt: 'do it', response: 'Task complete.' })).toMatchObject({ allow: true, host: { clearContext: true } });
    expect((await emit(kernel, 'after_agent', { prompt: 'do it', response: 'Working on it' })).host).toBeUndefined();
  }, 120_000);
});

describe('plinth hooks validate: hooks the host never fires', () => {
  it('with hostEvents, names each hook on an event the host does not emit; without it, says nothing', async () => {
    const box = await sandbox('plinth-host-events-');
    folders.push(box.base);
    const hooks = {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'node -e 0' }] }],
      TeammateIdle: [{ hooks: [{ type: 'command', command: 'node -e 0' }] }],
      WorktreeCreate: [{ hooks: [{ type: 'command', command: 'node -e 0' }] }],
    };
    const settings = (extra: Record<string, unknown>) => box.settings({ hooks, ...extra });

    await settings({});
    const quiet = await run(box, ['hooks', 'validate', '--json']);
    const unsaid = JSON.parse(quiet.stdout) as { warnings: Array<{ message: string }> };
    expect(unsaid.warnings.filter((w) => w.message.includes('never emits'))).toEqual([]);

    // plinth's own commands emit before_tool (and a few others), and a host adds the peer events it has.
    await settings({ plugins: { hooks: { settings: { hostEvents: ['plinth', 'TaskCompleted', 'no_such_event'] } } } });
    const told = JSON.parse((await run(box, ['hooks', 'validate', '--json'])).stdout) as { warnings: Array<{ message: string; hook?: string }> };
    const never = told.warnings.filter((w) => w.message.includes('never emits'));
    expect(never.map((w) => w.hook).sort()).toEqual(['user:TeammateIdle.0.0', 'user:WorktreeCreate.0.0']);
    expect(never.find((w) => w.hook === 'user:TeammateIdle.0.0')?.message).toContain('is on teammate_idle (TeammateIdle), which the host never emits');
    expect(told.warnings.map((w) => w.message)).toContain('plugins.hooks.settings.hostEvents: "no_such_event" is no event; it is ignored');
  }, 120_000);

  it('plinth hooks run prints what the hooks asked the host', async () => {
    const box = await sandbox('plinth-host-run-');
    folders.push(box.base);
    await copyHooks(box.workspace);
    await box.settings({ hooks: { Stop: [group('stop-build.sh')] } });
    const ran = await run(box, ['hooks', 'run', 'after_agent']);
    expect(ran.code).toBe(5);
    expect(ran.stdout).toContain('after_agent: BLOCKED by user:Stop.0.0');
    expect(ran.stdout).toContain('for the host: stop: {"reason":"Build failed, fix errors before continuing"}');
  }, 120_000);
});

describe('FileChanged while plinth up runs', () => {
  it("the matcher is the watch list (literal names in the project) and the filter: .envrc is seen, other files are not", async () => {
    const box = await sandbox('plinth-file-changed-');
    folders.push(box.base);
    await copyHooks(box.workspace);
    const log = join(box.base, 'changed.jsonl'); // outside the project: writing it is no change there
    await box.settings({
      hooks: { FileChanged: [{ matcher: '.envrc|.env', hooks: [{ type: 'command', command: `node "$CLAUDE_PROJECT_DIR/.claude/hooks/record.js" ${log}` }] }] },
      plugins: { hooks: { settings: { watchDebounceMs: 50 } } },
    });
    const child = spawn(process.execPath, [BIN, ...box.dirs, 'up'], { cwd: tmpdir(), env: cleanEnv({}, { ci: false }), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor('"plinth is up" on stderr', () => (stderr.includes('plinth is up') ? true : undefined));

    await writeFile(join(box.workspace, 'notes.md'), '# notes\n');
    await writeFile(join(box.workspace, '.envrc'), 'export A=1\n');
    const seen = await waitFor('.envrc in the hook log', async () => {
      const got = await records(log);
      return got.length > 0 ? got : undefined;
    });
    expect(seen[0]!.input).toMatchObject({ hook_event_name: 'FileChanged', file_path: join(box.workspace, '.envrc'), event: 'add' });
    expect(seen.map((r) => r.input.file_path)).not.toContain(join(box.workspace, 'notes.md'));
    child.kill('SIGINT');
  }, 90_000);
});
