/**
 * Claude Code's handler fields and hook environment, honoured: `if` (a permission rule), `async`,
 * `asyncRewake` (with `rewakeMessage`, `rewakeSummary`), `once`, `shell`, `statusMessage`, the
 * exec form (`args`), `CLAUDE_ENV_FILE`, `CLAUDE_PLUGIN_DATA`, `GEMINI_SESSION_ID` and
 * `SessionStart`'s `model`.
 *
 * The hook scripts are written as Claude Code's hooks reference shows them (bash reading stdin with
 * jq, exit 2 with the reason on stderr, JSON on stdout) and run as real processes through the real
 * kernel and the hooks plugin, from the user's settings (trusted on first use), in a fresh project.
 * Each field is shown deciding both ways.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HookProgress, HooksService, RewakeRequest } from 'plinth/sdk';
import { trustSubject } from '../plugins/hooks/engine.js';
import { matchesPermissionRule, parsePermissionRule } from '../plugins/hooks/dialects/permission-rule.js';
import { parseEnvFile } from '../plugins/hooks/session-env.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { hookSuite } from './support/hook-suite.js';
import { expectExit, json, run, sandbox } from './support/cli.js';

const { kernels, folders } = hookSuite();
async function write(file: string, text: string, mode = 0o755): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
  await chmod(file, mode);
}

/** Claude Code's reference example: block `rm` commands (stdin read with jq, exit 2 with the reason). */
const BLOCK_RM = `#!/bin/bash
# .claude/hooks/block-rm.sh
COMMAND=$(jq -r '.tool_input.command')
echo "$COMMAND" >> "$CLAUDE_PROJECT_DIR/ran.log"
if echo "$COMMAND" | grep -q 'rm -rf'; then
  echo "Blocked: rm -rf is not allowed" >&2
  exit 2
fi
exit 0
`;

/** A file guard: refuses whatever file it is asked about, with a JSON permissionDecision. */
const DENY_FILE = `#!/bin/bash
FILE=$(jq -r '.tool_input.file_path // .tool_input.url // .tool_name')
echo "$FILE" >> "$CLAUDE_PROJECT_DIR/ran.log"
jq -n --arg f "$FILE" '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: ("refused: " + $f)}}'
`;

/** The reference's async example, cut down: report back through additionalContext. */
const REPORT_ASYNC = `#!/bin/bash
INPUT=$(cat)
FILE_PATH=$(echo "$INPUT" | jq -r '.tool_input.file_path // empty')
jq -nc --arg msg "Tests passed after editing $FILE_PATH" '{systemMessage: "tests ran", hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: $msg}}'
`;

/** An asyncRewake hook: exit 2 when the build is broken (a file says so), the reason on stderr. */
const WATCH_BUILD = `#!/bin/bash
cat > /dev/null
if [ -f "$CLAUDE_PROJECT_DIR/broken" ]; then
  echo "the build broke: $(cat "$CLAUDE_PROJECT_DIR/broken")" >&2
  exit 2
fi
exit 0
`;

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-fields-'));
  folders.push(dir);
  await write(join(dir, '.claude', 'hooks', 'block-rm.sh'), BLOCK_RM);
  await write(join(dir, '.claude', 'hooks', 'deny-file.sh'), DENY_FILE);
  await write(join(dir, '.claude', 'hooks', 'report-async.sh'), REPORT_ASYNC);
  await write(join(dir, '.claude', 'hooks', 'watch-build.sh'), WATCH_BUILD);
  return dir;
}

async function boot(workspace: string, hooks: Record<string, unknown>, hookSettings?: Record<string, unknown>): Promise<TestKernel> {
  const kernel = await createTestKernel({ builtin: true, workspace, settings: { hooks, ...(hookSettings && { plugins: { hooks: { settings: hookSettings } } }) } });
  kernels.push(kernel);
  expect(kernel.report.plugins.filter((p) => p.state === 'failed').map((p) => `${p.name}: ${p.error?.message}`)).toEqual([]);
  return kernel;
}

const hook = (command: string, fields: Record<string, unknown> = {}) => ({ type: 'command', command, ...fields });
const SCRIPT = (name: string) => `"$CLAUDE_PROJECT_DIR"/.claude/hooks/${name}`;

async function ranLog(workspace: string): Promise<string[]> {
  return (await readFile(join(workspace, 'ran.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

/** Resolves when `hookId` has ended `count` runs (the service's `progress`). */
function endings(kernel: { get(name: 'hooks'): Promise<HooksService> }, hookId: string): { seen: HookProgress[]; ended(count: number): Promise<void> } {
  const seen: HookProgress[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  void kernel.get('hooks').then((hooks) =>
    hooks.progress.tap('test', (p) => {
      seen.push(p);
      const done = seen.filter((s) => s.hook.id === hookId && s.phase === 'ended').length;
      for (const w of waiters.filter((w) => w.count <= done)) w.resolve();
    }),
  );
  return {
    seen,
    ended: (count) =>
      new Promise<void>((resolve) => {
        if (seen.filter((s) => s.hook.id === hookId && s.phase === 'ended').length >= count) resolve();
        else waiters.push({ count, resolve });
      }),
  };
}

describe('"if": a permission rule decides whether the hook runs', () => {
  it('Bash(rm *): runs for an rm (and blocks it), per subcommand and past VAR=value; never spawns for npm test', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { PreToolUse: [{ matcher: 'Bash', hooks: [hook(SCRIPT('block-rm.sh'), { if: 'Bash(rm *)' })] }] });

    const rm = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /tmp/build' } });
    expect(rm.allow).toBe(false);
    expect(rm.messages[0]).toBe('Blocked: rm -rf is not allowed');
    const compound = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'npm test && FOO=bar rm -rf dist' } });
    expect(compound.allow).toBe(false);
    const inner = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'echo $(rm -rf /)' } });
    expect(inner.allow).toBe(false);

    const npm = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'npm test' } });
    expect(npm.allow).toBe(true);
    const date = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'echo $(date)' } });
    expect(date.allow).toBe(true);
    // The hook never started for those two: its log holds the three rm commands only.
    expect(await ranLog(workspace)).toEqual(['rm -rf /tmp/build', 'npm test && FOO=bar rm -rf dist', 'echo $(rm -rf /)']);
  });

  it('Read(./secrets/**), Edit(src/**), WebFetch(domain:…) and mcp__server__* pick the calls they name; other calls pass unexamined', async () => {
    const workspace = await project();
    const guard = (rule: string) => hook(SCRIPT('deny-file.sh'), { if: rule });
    const kernel = await boot(workspace, {
      PreToolUse: [
        { matcher: 'Read', hooks: [guard('Read(./secrets/**)')] },
        { matcher: 'Edit|Write', hooks: [guard('Edit(src/**)')] },
        { matcher: 'WebFetch', hooks: [guard('WebFetch(domain:*.internal.example)')] },
        { matcher: 'mcp__.*', hooks: [guard('mcp__memory__delete_*')] },
      ],
    });
    const call = (tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => kernel.emit('before_tool', { tool, args, ...extra });

    const secret = await call('Read', { file_path: join(workspace, 'secrets', 'api.key') });
    expect(secret.allow).toBe(false);
    expect(secret.messages[0]).toBe(`refused: ${join(workspace, 'secrets', 'api.key')}`);
    expect((await call('Read', { file_path: join(workspace, 'README.md') })).allow).toBe(true);
    // Edit(…) covers Write too; a relative path is read from the working folder.
    expect((await call('Write', { file_path: 'src/a.ts' })).allow).toBe(false);
    expect((await call('Write', { file_path: 'docs/a.md' })).allow).toBe(true);
    expect((await call('WebFetch', { url: 'https://wiki.internal.example/page' })).allow).toBe(false);
    expect((await call('WebFetch', { url: 'https://example.com/' })).allow).toBe(true);
    // plinth names an MCP tool <server>__<tool>; the rule reads Claude Code's name, mcp__<server>__<tool>.
    expect((await call('memory__delete_entities', {}, { server: 'memory' })).allow).toBe(false);
    expect((await call('memory__create_entities', {}, { server: 'memory' })).allow).toBe(true);
    expect(await ranLog(workspace)).toEqual([join(workspace, 'secrets', 'api.key'), 'src/a.ts', 'https://wiki.internal.example/page', 'mcp__memory__delete_entities']);
  });

  it('a hook with "if" never runs on an event without a tool call, as in Claude Code', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { UserPromptSubmit: [{ hooks: [hook('exit 2', { if: 'Bash(*)' })] }] }, { shellCommands: ['user'] });
    const prompt = await kernel.emit('before_agent', { prompt: 'hello' });
    expect(prompt.allow).toBe(true);
    expect((await kernel.get('hooks')).lastRun('before_agent')).toBeUndefined();
  });

  it('a malformed rule is PLN_E_HOOK_INVALID where it is written, with the fix; the guard it should be blocks its gate event', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { PreToolUse: [{ matcher: 'Bash', hooks: [hook(SCRIPT('block-rm.sh'), { if: 'Bash(git *) && Bash(rm *)' })] }] });
    const { problems } = await (await kernel.get('hooks')).definitions();
    expect(problems).toEqual([
      expect.objectContaining({
        code: 'PLN_E_HOOK_INVALID',
        message: expect.stringMatching(/hooks\.PreToolUse\[0\]\.hooks\[0\]\.if: "if": "Bash\(git \*\) && Bash\(rm \*\)" is not a permission rule: there is text after its closing "\)".*fix: define one hook handler per rule/),
      }),
    ]);
    const blocked = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(blocked.allow).toBe(false);
    expect(blocked.blockedBy?.code).toBe('PLN_E_HOOK_INVALID');
  });

  it("plinth's own definitions take the same fields: if, once and statusMessage on a plinth-protocol hook; asyncRewake only with protocol claude", async () => {
    const workspace = await project();
    await write(
      join(workspace, 'guard.js'),
      `const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({ allow: false, message: 'plinth guard: ' + input.context.args.command }));
`,
      0o644,
    );
    const kernel = await boot(workspace, {
      before_tool: [
        { name: 'no-rm', command: 'node', args: [join(workspace, 'guard.js')], if: 'Bash(rm *)', statusMessage: 'Guarding' },
        { name: 'rewake', command: 'node', args: [join(workspace, 'guard.js')], asyncRewake: true },
      ],
    });
    const { hooks, problems } = await (await kernel.get('hooks')).definitions();
    expect(hooks.map((h) => `${h.id} ${h.if} ${h.statusMessage}`)).toEqual(['user:no-rm Bash(rm *) Guarding']);
    expect(problems).toEqual([expect.objectContaining({ code: 'PLN_E_HOOK_INVALID', message: expect.stringContaining('before_tool[1].asyncRewake: a rewake is an exit code 2 of a Claude Code hook') })]);
    // The unreadable user hook on a gate event blocks it, whatever the other does: correct it, and the "if" decides.
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).blockedBy?.code).toBe('PLN_E_HOOK_INVALID');
    const fixed = await boot(workspace, { before_tool: [{ name: 'no-rm', command: 'node', args: [join(workspace, 'guard.js')], if: 'Bash(rm *)', once: true }] });
    expect((await fixed.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(true);
    const rm = await fixed.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf x' } });
    expect(rm.allow).toBe(false);
    expect(rm.messages[0]).toBe('plinth guard: rm -rf x');
    expect((await fixed.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf x' } })).allow).toBe(true); // once
  });

  it('hooks validate warns about an "if" that can never hold and an "async" guard, and reports a bad rule as a problem', async () => {
    const b = await sandbox('plinth-fields-validate-');
    folders.push(b.base);
    await write(join(b.workspace, 'check.sh'), BLOCK_RM);
    const check = join(b.workspace, 'check.sh');
    await b.settings({
      plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } },
      hooks: {
        UserPromptSubmit: [{ hooks: [hook(check, { if: 'Bash(git *)' })] }],
        PreToolUse: [{ matcher: 'Bash', hooks: [hook(check, { async: true }), hook(check, { if: 'Read(' })] }],
      },
    });
    const result = await run(b, ['hooks', 'validate', '--json']);
    expectExit(result, 1);
    const report = json<{ problems: Array<{ code: string; message: string }>; warnings: Array<{ message: string; hint?: string }> }>(result);
    expect(report.problems).toEqual([expect.objectContaining({ code: 'PLN_E_HOOK_INVALID', message: expect.stringContaining('"if": "Read(" is not a permission rule: its "(" is never closed') })]);
    expect(report.warnings.map((w) => w.message)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('hook "user:UserPromptSubmit.0.0" never runs: its "if" is tested only on tool events'),
        expect.stringContaining('hook "user:PreToolUse.0.0" runs in the background ("async"): it never blocks before_tool'),
      ]),
    );
  });

  it('the rule grammar, read as the permissions reference describes it', () => {
    const test = (rule: string, tool: string, input: Record<string, unknown>) => {
      const parsed = parsePermissionRule(rule);
      if (!parsed.ok) throw new Error(parsed.why);
      return matchesPermissionRule(parsed.rule, { tool, input, cwd: '/p', projectDir: '/p', home: '/h' });
    };
    expect(test('Bash(ls *)', 'Bash', { command: 'ls -la' })).toBe(true);
    expect(test('Bash(ls *)', 'Bash', { command: 'lsof' })).toBe(false);
    expect(test('Bash(ls:*)', 'Bash', { command: 'ls' })).toBe(true);
    expect(test('Bash(npm test *)', 'Bash', { command: 'timeout 30 npm test --watch' })).toBe(true);
    expect(test('Bash(git push *)', 'Bash', { command: 'echo $(date)' })).toBe(true); // says more than the name: fails open
    expect(test('Bash(rm *)', 'Bash', { command: 'echo "open quote' })).toBe(true); // cannot be read: fails open
    expect(test('Bash(run_in_background:true)', 'Bash', { command: 'x', run_in_background: true })).toBe(true);
    expect(test('Edit(*.ts)', 'Edit', { file_path: '/p/a/b/c.ts' })).toBe(true);
    expect(test('Edit(*.ts)', 'Edit', { file_path: '/p/a/b/c.js' })).toBe(false);
    expect(test('Edit(src/**)', 'Edit', { file_path: '/p/lib/src/a.ts' })).toBe(false); // only <cwd>/src
    expect(test('Edit(**/src/**)', 'Edit', { file_path: '/p/lib/src/a.ts' })).toBe(true);
    expect(test('Read(~/.zshrc)', 'Read', { file_path: '/h/.zshrc' })).toBe(true);
    expect(test('Read(//etc/passwd)', 'Read', { file_path: '/etc/passwd' })).toBe(true);
    expect(test('Read(.env)', 'Read', { file_path: '/p/deep/.env' })).toBe(true);
    expect(test('WebFetch(domain:*.example.com)', 'WebFetch', { url: 'https://example.com/' })).toBe(false);
    expect(test('mcp__github', 'mcp__github__create_issue', {})).toBe(true);
    expect(test('Agent(model:opus)', 'Agent', { model: 'sonnet' })).toBe(false);
    expect(test('Agent(Explore)', 'Agent', { subagent_type: 'Explore' })).toBe(true);
    for (const bad of ['', 'Bash(', 'Bash()', 'Bash(command:rm *)', 'WebFetch(example.com)', 'Bash git']) {
      const parsed = parsePermissionRule(bad);
      expect(parsed.ok, bad).toBe(false);
      if (!parsed.ok) expect(parsed.fix).not.toBe('');
    }
  });
});

describe('"async" and "asyncRewake": in the background', () => {
  it('async: the event does not wait and its decision does not count; additionalContext and systemMessage reach the next event', async () => {
    const workspace = await project();
    const kernel = await boot(
      workspace,
      {
        PostToolUse: [{ matcher: 'Write|Edit', hooks: [hook(SCRIPT('report-async.sh'), { async: true, timeout: 300 })] }],
        // An async guard cannot block: the action it would have stopped is not waiting for it.
        PreToolUse: [{ matcher: 'Bash', hooks: [hook(SCRIPT('block-rm.sh'), { async: true })] }],
      },
    );
    const report = endings(kernel, 'user:PostToolUse.0.0');
    const guard = endings(kernel, 'user:PreToolUse.0.0');

    const wrote = await kernel.emit('after_tool', { tool: 'Write', args: { file_path: 'src/a.ts' }, result: {}, sessionId: 's1' });
    expect(wrote.allow).toBe(true);
    expect(wrote.systemMessages).toEqual([]);
    await report.ended(1);

    const rm = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' }, sessionId: 's1' });
    expect(rm.allow).toBe(true); // the async guard's exit 2 decides nothing
    expect(rm.systemMessages).toEqual(['Tests passed after editing src/a.ts', 'tests ran']);
    await guard.ended(1);
    expect(await ranLog(workspace)).toEqual(['rm -rf /']);
    // Delivered once.
    const next = await kernel.emit('after_tool', { tool: 'Read', args: {}, result: {}, sessionId: 's1' });
    expect(next.systemMessages).toEqual([]);
    expect(report.seen.find((p) => p.hook.id === 'user:PostToolUse.0.0')).toMatchObject({ phase: 'started', background: true });
  });

  it('asyncRewake: exit 2 wakes the host (rewake) with stderr (else stdout), or rewakeMessage, and rewakeSummary; exit 0 wakes nobody; untaken, the message reaches the next event', async () => {
    const workspace = await project();
    await write(join(workspace, '.claude', 'hooks', 'backlog.sh'), '#!/bin/bash\ncat > /dev/null\necho "backlog forming: run gc"\nexit 2\n');
    const kernel = await boot(workspace, {
      PostToolUse: [
        { matcher: 'Bash', hooks: [hook(SCRIPT('watch-build.sh'), { asyncRewake: true, rewakeSummary: 'Build watcher' })] },
        { matcher: 'Edit', hooks: [hook(SCRIPT('watch-build.sh'), { asyncRewake: true, rewakeMessage: 'The build is broken: run the tests.' })] },
        { matcher: 'Write', hooks: [hook(SCRIPT('backlog.sh'), { asyncRewake: true })] },
      ],
    });

    const hooks = await kernel.get('hooks');
    const woken: RewakeRequest[] = [];
    let take = true;
    hooks.rewake.tapPromise('host', async (request) => {
      woken.push(request);
      return take ? true : undefined;
    });
    const bash = endings(kernel, 'user:PostToolUse.0.0');
    const edit = endings(kernel, 'user:PostToolUse.1.0');

    // The build is fine: the hook exits 0, nobody is woken.
    await kernel.emit('after_tool', { tool: 'Bash', args: { command: 'make' }, result: {}, sessionId: 's2' });
    await bash.ended(1);
    expect(woken).toEqual([]);

    await writeFile(join(workspace, 'broken'), 'missing semicolon');
    await kernel.emit('after_tool', { tool: 'Bash', args: { command: 'make' }, result: {}, sessionId: 's2' });
    await bash.ended(2);
    expect(woken).toEqual([
      { hook: { id: 'user:PostToolUse.0.0', name: 'PostToolUse.0.0', source: 'user' }, event: 'after_tool', message: 'the build broke: missing semicolon', summary: 'Build watcher', sessionId: 's2' },
    ]);

    // No tap takes it: the message waits for the next event.
    take = false;
    await kernel.emit('after_tool', { tool: 'Edit', args: { file_path: 'a.c' }, result: {}, sessionId: 's2' });
    await edit.ended(1);
    expect(woken.at(-1)?.message).toBe('The build is broken: run the tests.');
    const next = await kernel.emit('after_tool', { tool: 'Read', args: {}, result: {}, sessionId: 's2' });
    expect(next.systemMessages).toEqual(['The build is broken: run the tests.']);

    // Nothing on stderr: the message is what it printed, as Claude Code reads it.
    take = true;
    const backlog = endings(kernel, 'user:PostToolUse.2.0');
    await kernel.emit('after_tool', { tool: 'Write', args: { file_path: 'a.c' }, result: {}, sessionId: 's2' });
    await backlog.ended(1);
    expect(woken.at(-1)).toMatchObject({ hook: { id: 'user:PostToolUse.2.0' }, message: 'backlog forming: run gc' });
  });
});

describe('"once", "statusMessage", "shell" and the exec form', () => {
  it('once: the hook runs once per session, then is left out (a block the first time, not the second; a new session again)', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, { PreToolUse: [{ matcher: 'Bash', hooks: [hook(SCRIPT('block-rm.sh'), { once: true })] }] });
    const rm = (sessionId: string) => kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf x' }, sessionId });
    expect((await rm('a')).allow).toBe(false);
    expect((await rm('a')).allow).toBe(true);
    expect((await rm('b')).allow).toBe(false);
    expect(await ranLog(workspace)).toEqual(['rm -rf x', 'rm -rf x']);
  });

  it('statusMessage reaches the host through the service\'s progress, for a hook that allows and one that blocks', async () => {
    const workspace = await project();
    const kernel = await boot(workspace, {
      PreToolUse: [{ matcher: 'Bash', hooks: [hook(SCRIPT('block-rm.sh'), { statusMessage: 'Checking the command…' })] }],
    });
    const shown: string[] = [];
    (await kernel.get('hooks')).progress.tap('spinner', (p) => shown.push(`${p.phase}:${p.statusMessage ?? ''}`));
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(true);
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' } })).allow).toBe(false);
    expect(shown).toEqual(['started:Checking the command…', 'ended:Checking the command…', 'started:Checking the command…', 'ended:Checking the command…']);
  });

  it('shell "bash" runs the string through bash; the shell is part of what trust approves', async () => {
    const workspace = await project();
    const bashOnly = '[[ "$(jq -r .tool_input.command)" == *--force* ]] && { echo "no force pushes" >&2; exit 2; }; exit 0';
    const kernel = await boot(workspace, { PreToolUse: [{ matcher: 'Bash', hooks: [hook(bashOnly, { shell: 'bash' })] }] }, { shellCommands: ['user'] });
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'git push --force' } })).messages[0]).toBe('no force pushes');
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'git push' } })).allow).toBe(true);
    const [defined] = (await (await kernel.get('hooks')).definitions()).hooks;
    expect(trustSubject(defined!).runs).toEqual({ command: 'bash', args: ['-c', bashOnly], cwd: workspace });
  });

  it('shell "powershell": refused without shellCommands; with it, a guard whose PowerShell is not allowed blocks its event', async () => {
    const workspace = await project();
    const ps = { PreToolUse: [{ matcher: 'Bash', hooks: [hook('if ($input -match "rm") { exit 2 }', { shell: 'powershell' })] }] };
    const refused = await boot(workspace, ps);
    const { problems } = await (await refused.get('hooks')).definitions();
    expect(problems[0]).toMatchObject({ code: 'PLN_E_HOOK_SHELL_REFUSED', message: expect.stringContaining('"shell": "powershell" command runs through PowerShell') });
    expect((await refused.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(false);

    const allowed = await boot(workspace, ps, { shellCommands: ['user'] });
    const [defined] = (await (await allowed.get('hooks')).definitions()).hooks;
    expect(defined?.action).toEqual({ type: 'command', command: 'pwsh', args: ['-NoProfile', '-NonInteractive', '-Command', 'if ($input -match "rm") { exit 2 }'] });
    // pwsh is not among allowedCommands (nor installed here): the guard cannot run, so its event is blocked.
    const blocked = await allowed.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(blocked.allow).toBe(false);
    expect(blocked.blockedBy?.code).toBe('PLN_E_HOOK_UNRUNNABLE');
  });

  it('exec form: "command" and "args" run as written, no shell, no splitting; ${CLAUDE_PROJECT_DIR} is put in', async () => {
    const workspace = await project();
    await write(
      join(workspace, '.claude', 'hooks', 'argv.js'),
      `const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const [, , marker] = process.argv;
if (input.tool_input.command.includes(marker)) { console.error('refused: ' + JSON.stringify(process.argv.slice(2))); process.exit(2); }
`,
    );
    const kernel = await boot(workspace, {
      PreToolUse: [{ matcher: 'Bash', hooks: [hook('node', { args: ['${CLAUDE_PROJECT_DIR}/.claude/hooks/argv.js', "it's `x` $HOME;", 'two words'] })] }],
    });
    const blocked = await kernel.emit('before_tool', { tool: 'Bash', args: { command: "echo it's `x` $HOME;" } });
    expect(blocked.allow).toBe(false);
    expect(blocked.messages[0]).toBe(`refused: ${JSON.stringify(["it's `x` $HOME;", 'two words'])}`);
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(true);
  });
});

describe('the environment', () => {
  it('CLAUDE_ENV_FILE: what a SessionStart hook exports reaches the later hooks of that session (parsed, never run)', async () => {
    const workspace = await project();
    // The reference's example, and a line that would run a command if the file were sourced.
    const persist = `if [ -n "$CLAUDE_ENV_FILE" ]; then
  echo 'export NODE_ENV=production' >> "$CLAUDE_ENV_FILE"
  echo 'export DEBUG_LOG=true' >> "$CLAUDE_ENV_FILE"
  echo 'export PATH="$PATH:./node_modules/.bin"' >> "$CLAUDE_ENV_FILE"
  echo 'export PWNED=$(touch "$CLAUDE_PROJECT_DIR/pwned")' >> "$CLAUDE_ENV_FILE"
fi
exit 0`;
    const guard = '[ "$NODE_ENV" = production ] && { echo "no deploys from a production shell (DEBUG_LOG=$DEBUG_LOG)" >&2; exit 2; }; exit 0';
    const kernel = await boot(
      workspace,
      { SessionStart: [{ matcher: 'startup', hooks: [hook(persist)] }], PreToolUse: [{ matcher: 'Bash', hooks: [hook(guard)] }] },
      { shellCommands: ['user'] },
    );
    const deploy = (sessionId: string) => kernel.emit('before_tool', { tool: 'Bash', args: { command: 'deploy' }, sessionId });
    expect((await deploy('s1')).allow).toBe(true);
    await kernel.emit('session_start', { source: 'startup', sessionId: 's1' });
    const blocked = await deploy('s1');
    expect(blocked.allow).toBe(false);
    expect(blocked.messages[0]).toBe('no deploys from a production shell (DEBUG_LOG=true)');
    // Another session never saw the file.
    expect((await deploy('s2')).allow).toBe(true);
    await expect(stat(join(workspace, 'pwned'))).rejects.toThrow();
    // The session's end forgets it.
    await kernel.emit('session_end', { reason: 'other', sessionId: 's1' });
    expect((await deploy('s1')).allow).toBe(true);
  });

  it('the env file is read as assignments only', () => {
    const read = parseEnvFile(
      [
        'export A=1 B="two words" C=\'$A literal\'',
        'declare -x D="x\\"y"',
        'E=${A}-$B',
        'source ./evil.sh',
        'export F=`id`',
        'export PLINTH_HOOK_ID=spoofed',
        'PATH="$PATH:/opt/bin"',
      ].join('\n'),
      { PATH: '/usr/bin' },
    );
    expect(read.vars).toEqual({ A: '1', B: 'two words', C: '$A literal', D: 'x"y', E: '1-two words', PATH: '/usr/bin:/opt/bin' });
    expect(read.skipped).toEqual([expect.stringMatching(/^line 4: not an assignment/), expect.stringMatching(/^line 5: a command substitution/), expect.stringMatching(/^line 6: PLINTH_HOOK_ID is set by plinth/)]);
  });

  it("GEMINI_SESSION_ID for a Gemini CLI hook, SessionStart's model for a Claude Code one", async () => {
    const workspace = await project();
    const log = join(workspace, 'seen.log');
    const kernel = await boot(
      workspace,
      {
        SessionStart: [
          { protocol: 'gemini', hooks: [hook(`echo "gemini $GEMINI_SESSION_ID" >> '${log}'`)] },
          { protocol: 'claude', hooks: [hook(`echo "claude $(jq -r .model)" >> '${log}'`)] },
        ],
      },
      { shellCommands: ['user'] },
    );
    await kernel.emit('session_start', { source: 'startup', sessionId: 'sess-9', model: 'claude-sonnet-4-6' });
    expect((await readFile(log, 'utf8')).split('\n').filter(Boolean).sort()).toEqual(['claude claude-sonnet-4-6', 'gemini sess-9']);
  });
});

describe('a Claude Code plugin using "if" and "async", loaded unchanged', () => {
  /** A formatter-and-guard plugin laid out as Claude Code's plugins reference shows: `.claude-plugin/plugin.json`, `hooks/hooks.json`, scripts. */
  async function fmtGuard(dir: string): Promise<void> {
    await write(join(dir, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'fmt-guard', version: '1.2.0', description: 'formats edits, guards pushes and lockfiles' }), 0o644);
    await write(
      join(dir, 'hooks', 'setup.sh'),
      `#!/bin/bash
MODEL=$(jq -r '.model')
echo "session on $MODEL" >> "$1/sessions.log"
if [ -n "$CLAUDE_ENV_FILE" ]; then
  echo 'export FMT_STYLE=strict' >> "$CLAUDE_ENV_FILE"
fi
exit 0
`,
    );
    await write(
      join(dir, 'hooks', 'no-force.sh'),
      `#!/bin/bash
COMMAND=$(jq -r '.tool_input.command')
echo "$COMMAND" >> "$CLAUDE_PLUGIN_DATA/checked.log"
if [[ "$COMMAND" == *--force* ]]; then
  echo "fmt-guard ($FMT_STYLE): no force pushes" >&2
  exit 2
fi
exit 0
`,
    );
    await write(
      join(dir, 'hooks', 'lockfile.js'),
      `const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: input.tool_input.file_path + ' is generated: run the package manager' } }));
`,
      0o644,
    );
    await write(
      join(dir, 'hooks', 'format.sh'),
      `#!/bin/bash
FILE=$(jq -r '.tool_input.file_path')
echo "$FILE" >> "$CLAUDE_PLUGIN_DATA/formatted.log"
jq -nc --arg f "$FILE" '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: ("fmt-guard formatted " + $f)}}'
`,
    );
    await write(
      join(dir, 'hooks', 'hooks.json'),
      JSON.stringify({
        description: 'fmt-guard hooks',
        hooks: {
          SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'bash "${CLAUDE_PLUGIN_ROOT}/hooks/setup.sh" "${CLAUDE_PLUGIN_DATA}"', statusMessage: 'Preparing fmt-guard' }] }],
          PreToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'command', if: 'Bash(git push *)', command: '${CLAUDE_PLUGIN_ROOT}/hooks/no-force.sh' }] },
            { matcher: 'Edit|Write', hooks: [{ type: 'command', if: 'Edit(*.lock)', command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/hooks/lockfile.js'] }] },
          ],
          PostToolUse: [{ matcher: 'Edit|Write', hooks: [{ type: 'command', async: true, command: '${CLAUDE_PLUGIN_ROOT}/hooks/format.sh', timeout: 120 }] }],
        },
      }),
      0o644,
    );
  }

  it('all its hooks load, fire and decide as in Claude Code; CLAUDE_PLUGIN_DATA persists under plinth home; its env file reaches its own later hooks', async () => {
    const { Kernel } = await import('../kernel/kernel.js');
    const base = await mkdtemp(join(tmpdir(), 'plinth-fmt-'));
    folders.push(base);
    const home = join(base, 'home');
    const workspace = join(base, 'project');
    await mkdir(workspace, { recursive: true });
    await fmtGuard(join(home, 'plugins', 'fmt-guard'));
    const kernel = new Kernel({ home, workspace, builtin: true, env: { ...process.env }, logLevel: 'warn', logSink: () => undefined });
    await kernel.boot();
    try {
      const service = await kernel.get('hooks');
      const { hooks, problems } = await service.definitions();
      expect(problems).toEqual([]);
      const ours = hooks.filter((h) => h.plugin === 'fmt-guard');
      expect(ours.map((h) => `${h.id} ${h.events.join(',')}${h.if ? ` if ${h.if}` : ''}${h.async ? ' async' : ''}`)).toEqual([
        'fmt-guard/SessionStart.0.0 session_start',
        'fmt-guard/PreToolUse.0.0 before_tool if Bash(git push *)',
        'fmt-guard/PreToolUse.1.0 before_tool if Edit(*.lock)',
        'fmt-guard/PostToolUse.0.0 after_tool async',
      ]);
      expect(ours.filter((h) => h.notYet !== undefined || h.unsupported !== undefined)).toEqual([]);
      const trust = await kernel.get('trust');
      for (const h of ours) await trust.approve(trustSubject(h));
      const data = join(home, 'plugin-data', 'fmt-guard');
      const formatted = endings(kernel, 'fmt-guard/PostToolUse.0.0');
      const session = { sessionId: 'fmt-1' };

      const started = await kernel.emit('session_start', { source: 'startup', model: 'claude-opus-4-7', ...session });
      expect(started.allow).toBe(true);
      expect(await readFile(join(data, 'sessions.log'), 'utf8')).toBe('session on claude-opus-4-7\n');

      const force = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'git push --force origin main' }, ...session });
      expect(force.allow).toBe(false);
      expect(force.messages[0]).toBe('fmt-guard (strict): no force pushes');
      expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'git push origin main' }, ...session })).allow).toBe(true);
      expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls -la' }, ...session })).allow).toBe(true);
      expect(await readFile(join(data, 'checked.log'), 'utf8')).toBe('git push --force origin main\ngit push origin main\n');

      const lock = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'yarn.lock' }, ...session });
      expect(lock.allow).toBe(false);
      expect(lock.messages[0]).toBe('yarn.lock is generated: run the package manager');
      expect((await kernel.emit('before_tool', { tool: 'Edit', args: { file_path: 'src/a.ts' }, ...session })).allow).toBe(true);

      const edited = await kernel.emit('after_tool', { tool: 'Edit', args: { file_path: 'src/a.ts' }, result: {}, ...session });
      expect(edited.allow).toBe(true);
      expect(edited.systemMessages).toEqual([]);
      await formatted.ended(1);
      const next = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' }, ...session });
      expect(next.systemMessages).toEqual(['fmt-guard formatted src/a.ts']);
      expect(await readFile(join(data, 'formatted.log'), 'utf8')).toBe('src/a.ts\n');
    } finally {
      await kernel.shutdown();
    }
  });
});
