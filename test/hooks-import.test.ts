/**
 * `plinth hooks import --from claude|gemini|codex [file]`, through the real `plinth` executable: a Claude
 * Code project settings file, a Gemini CLI user settings file and Codex CLI's `~/.codex/hooks.json`
 * and `~/.codex/config.toml` in their documented shapes, what
 * the import shows before writing (and what it refuses, and why), what it writes (through the
 * sdk's settings-file editor), that it is idempotent, and that trust applies to what it wrote
 * exactly as to plinth's own hooks: workspace hooks wait for approval, user hooks run.
 */
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/hooks-dialects/', import.meta.url));
const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function box(): Promise<Sandbox & { peerHome: string }> {
  const created = await sandbox('plinth-hooks-import-');
  boxes.push(created);
  const peerHome = join(created.base, 'me');
  await mkdir(peerHome, { recursive: true });
  await cp(join(FIXTURES, 'claude'), join(created.workspace, '.claude', 'hooks'), { recursive: true });
  await cp(join(FIXTURES, 'gemini'), join(created.workspace, '.gemini', 'hooks'), { recursive: true });
  return Object.assign(created, { peerHome });
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** A project's `.claude/settings.json` as Claude Code's hooks reference shows them, with what plinth cannot take. */
const CLAUDE_PROJECT = {
  permissions: { allow: ['Bash(npm test)'] },
  enabledPlugins: { 'security-guidance@claude-code-plugins': true },
  extraKnownMarketplaces: { 'claude-code-plugins': { source: { source: 'github', repo: 'anthropics/claude-code' } } },
  statusLine: { type: 'command', command: '~/.claude/statusline.sh' },
  hooks: {
    PreToolUse: [
      { matcher: 'Bash', hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh', if: 'Bash(rm *)' }] },
      { matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/protect-env.py"', timeout: 10, statusMessage: 'Checking for .env', async: false }] },
      // Its script is not in the project: it could not run, so it is not offered.
      { matcher: 'Read', hooks: [{ type: 'command', command: 'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/not-copied.py"' }] },
    ],
    PostToolUse: [{ matcher: 'Edit|MultiEdit|Write', hooks: [{ type: 'command', command: "jq -r '.tool_input.file_path' | xargs npx prettier --write" }] }],
    SubagentStop: [{ hooks: [{ type: 'command', command: 'echo done' }] }],
    // A handler type plinth does not know (it runs command, http, mcp_tool, prompt and agent hooks).
    UserPromptSubmit: [{ hooks: [{ type: 'websocket', url: 'ws://127.0.0.1:7000/prompts' }] }],
  },
};

describe('plinth hooks import --from claude', () => {
  it('shows what it would add and refuse, writes nothing without --yes, then writes the workspace settings; workspace hooks wait for approval', async () => {
    const b = await box();
    await writeJson(join(b.workspace, '.claude', 'settings.json'), CLAUDE_PROJECT);
    const env = { HOME: b.peerHome };

    const dry = await run(b, ['hooks', 'import', '--from', 'claude', '--json'], env);
    expectExit(dry, 1);
    const plan = json<{ written: boolean; scope: string; reason: string; items: Array<{ action: string; event: string; at: string; code?: string; reason?: string; plinthEvent?: string }> }>(dry);
    expect(plan).toMatchObject({ written: false, scope: 'workspace', reason: 'nothing was asked because of --json; run again with --yes to write' });
    expect(plan.items.map((i) => `${i.action} ${i.at}${i.code ? ` ${i.code}` : ''}`)).toEqual([
      'add hooks.PreToolUse[0].hooks[0]',
      'add hooks.PreToolUse[1].hooks[0]',
      'refused hooks.PreToolUse[2].hooks[0] PLN_E_HOOK_UNRUNNABLE',
      'refused hooks.PostToolUse[0].hooks[0] PLN_E_HOOK_SHELL_REFUSED',
      // SubagentStop is subagent_stop now; `echo` is no allowed program.
      'refused hooks.SubagentStop[0].hooks[0] PLN_E_HOOK_UNRUNNABLE',
      'refused hooks.UserPromptSubmit[0].hooks[0] PLN_E_HOOK_DIALECT_UNSUPPORTED',
    ]);
    expect(plan.items[0]?.plinthEvent).toBe('before_tool');
    expect(plan.items[2]?.reason).toContain(`it cannot run (script_missing): its script ${join(b.workspace, '.claude', 'hooks', 'not-copied.py')} does not exist`);
    expect(plan.items[3]?.reason).toContain('the command needs a shell (the shell operator "|") and workspace hooks may not run shell commands; to allow it, add "workspace" to plugins.hooks.settings.shellCommands');
    expect(plan.items[4]?.reason).toContain('not_allowed');
    expect(plan.items[5]?.reason).toContain('Claude Code hook type "websocket" not supported yet');
    // Nothing of the file is left out without a word.
    const notes = (plan as unknown as { notes: string[] }).notes;
    // The hook's "if" is honoured: no note for it.
    expect(notes.map((n) => n.slice(0, n.indexOf(':')))).toEqual(['"permissions"', '"enabledPlugins"', '"extraKnownMarketplaces"', '"statusLine"']);
    // Plugins and marketplaces are plinth import's: the notes say so.
    expect(notes[1]).toContain('`plinth import --from claude` shows them and installs them once confirmed');
    expect(notes[2]).toContain('`plinth import --from claude` adds them once confirmed');
    await expect(readFile(join(b.workspace, '.plinth', 'settings.json'), 'utf8')).rejects.toThrow();

    const human = await run(b, ['hooks', 'import', '--from', 'claude'], env);
    expectExit(human, 1);
    expect(human.stdout).toContain(`Claude Code hooks in ${join(b.workspace, '.claude', 'settings.json')} → plinth workspace settings`);
    expect(human.stdout).toMatch(/refused\s+PostToolUse\s+after_tool\s+Edit\|MultiEdit\|Write/);
    expect(human.stdout).toContain('Nothing written: nothing was asked because CI is set; run again with --yes to write.');

    const written = await run(b, ['hooks', 'import', '--from', 'claude', '--yes'], env);
    expectExit(written, 0);
    expect(written.stdout).toContain('Added 2 hook(s)');
    expect(written.stdout).toContain('workspace:PreToolUse.0.0, workspace:PreToolUse.1.0');
    const settings = JSON.parse(await readFile(join(b.workspace, '.plinth', 'settings.json'), 'utf8')) as { hooks: Record<string, unknown> };
    expect(settings.hooks).toEqual({
      PreToolUse: [
        { matcher: 'Bash', hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh', if: 'Bash(rm *)' }], protocol: 'claude' },
        { matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/protect-env.py"', timeout: 10, statusMessage: 'Checking for .env', async: false }], protocol: 'claude' },
      ],
    });

    // Trust applies as to plinth's own workspace hooks: listed, pending, not run until approved.
    const list = json<{ hooks: Array<{ id: string; trust: string; events: string[] }> }>(await run(b, ['hooks', 'list', '--json'], env));
    expect(list.hooks.map((h) => `${h.id} ${h.events.join(',')} ${h.trust}`)).toEqual(['workspace:PreToolUse.0.0 before_tool pending', 'workspace:PreToolUse.1.0 before_tool pending']);
    const context = JSON.stringify({ tool: 'Bash', args: { command: 'rm -rf /' } });
    const pending = await run(b, ['hooks', 'run', 'before_tool', '--context', context, '--json'], env);
    expectExit(pending, 0);
    expect(json<{ hooks: Array<{ status: string; failure?: string }> }>(pending).hooks).toEqual([expect.objectContaining({ status: 'skipped', failure: 'untrusted' })]);
    expectExit(await run(b, ['hooks', 'trust', 'workspace:PreToolUse.0.0'], env), 0);
    const guarded = await run(b, ['hooks', 'run', 'before_tool', '--context', context, '--json'], env);
    expectExit(guarded, 5);
    expect(json<{ decision: { messages: string[] } }>(guarded).decision.messages[0]).toBe("Blocked: 'rm -rf /' deletes recursively; remove the files one by one");

    // Again: nothing new.
    const again = await run(b, ['hooks', 'import', '--from', 'claude', '--yes', '--json'], env);
    expect(json<{ items: Array<{ action: string }>; written: boolean }>(again)).toMatchObject({ written: false });
    expect(json<{ items: Array<{ action: string }> }>(again).items.filter((i) => i.action === 'present')).toHaveLength(2);
  });

  it('refuses a file it cannot read, one that is not JSON, and a wrong --from, saying what to do', async () => {
    const b = await box();
    const env = { HOME: b.peerHome };
    const none = await run(b, ['hooks', 'import', '--from', 'claude'], env);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('PLN_E_HOOK_IMPORT');
    expect(none.stderr).toContain('no Claude Code settings file found');

    const missing = await run(b, ['hooks', 'import', '--from', 'claude', 'no-such.json'], env);
    expect(missing.stderr).toContain(`PLN_E_HOOK_IMPORT: cannot read ${join(b.workspace, 'no-such.json')}: there is no such file`);

    await writeFile(join(b.workspace, 'broken.json'), '{ "hooks": { "PreToolUse": [ }');
    const broken = await run(b, ['hooks', 'import', '--from', 'claude', 'broken.json'], env);
    expect(broken.stderr).toContain('PLN_E_HOOK_IMPORT');
    expect(broken.stderr).toMatch(/broken\.json is not valid JSON: .* at line 1, column \d+/);

    const wrong = await run(b, ['hooks', 'import', '--from', 'cursor'], env);
    expectExit(wrong, 2);
    expect(wrong.stderr).toContain('--from must be claude, gemini or codex, got "cursor"');
  });
});

describe('plinth hooks import --from gemini', () => {
  it("reads the user's ~/.gemini/settings.json into the user settings; Gemini's own switches are noted; a shell command is added once shellCommands allows it; user hooks run", async () => {
    const b = await box();
    await writeJson(join(b.peerHome, '.gemini', 'settings.json'), {
      hooksConfig: { enabled: true },
      hooks: {
        enabled: true,
        disabled: ['old-logger'],
        BeforeTool: [
          {
            matcher: 'write_file|replace',
            hooks: [{ name: 'secret-scanner', type: 'command', command: '$GEMINI_PROJECT_DIR/.gemini/hooks/block-secrets.sh', description: 'Prevent committing secrets', timeout: 5000 }],
          },
        ],
        AfterAgent: [{ hooks: [{ type: 'command', command: 'echo "{}" && true' }] }],
      },
    });
    const env = { HOME: b.peerHome };

    const first = await run(b, ['hooks', 'import', '--from', 'gemini', '--yes', '--json'], env);
    expectExit(first, 0);
    const plan = json<{ scope: string; written: boolean; added: string[]; notes: string[]; items: Array<{ action: string; code?: string }> }>(first);
    expect(plan).toMatchObject({ scope: 'user', written: true, added: ['user:BeforeTool.0.0'] });
    expect(plan.items.map((i) => i.action + (i.code ? ` ${i.code}` : ''))).toEqual(['add', 'refused PLN_E_HOOK_SHELL_REFUSED']);
    expect(plan.notes).toEqual([
      expect.stringContaining('"hooksConfig": Gemini CLI\'s own switch for hooks'),
      expect.stringContaining('"hooks.enabled" is Gemini CLI\'s own switch'),
      expect.stringContaining('"hooks.disabled" is Gemini CLI\'s own switch'),
    ]);
    const settings = JSON.parse(await readFile(join(b.home, 'settings.json'), 'utf8')) as { hooks: Record<string, Array<{ protocol: string }>> };
    expect(Object.keys(settings.hooks)).toEqual(['BeforeTool']);
    expect(settings.hooks.BeforeTool?.[0]?.protocol).toBe('gemini');

    // User hooks run on first use: the imported scanner guards write_file now.
    const context = JSON.stringify({ tool: 'write_file', args: { path: 'a', content: 'AKIAABCDEFGHIJKLMNOP' } });
    const blocked = await run(b, ['hooks', 'run', 'before_tool', '--context', context, '--json'], env);
    expectExit(blocked, 5);
    expect(json<{ decision: { messages: string[] } }>(blocked).decision.messages[0]).toContain('Potential AWS key in the content');

    // The user allows shell commands for their own hooks: the refused one comes in, the scanner is already there.
    const current = JSON.parse(await readFile(join(b.home, 'settings.json'), 'utf8')) as Record<string, unknown>;
    await writeJson(join(b.home, 'settings.json'), { ...current, plugins: { hooks: { settings: { shellCommands: ['user'] } } } });
    const second = json<{ added: string[]; items: Array<{ action: string }> }>(await run(b, ['hooks', 'import', '--from', 'gemini', '--yes', '--json'], env));
    expect(second.items.map((i) => i.action)).toEqual(['present', 'add']);
    expect(second.added).toEqual(['user:AfterAgent.0.0']);
  });
});

/** A PreToolUse guard as Codex's hooks docs write one: JSON on stdin, a deny as hookSpecificOutput, exit 2 with a reason on stderr. */
const CODEX_GUARD = `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
if data.get("tool_name") == "Bash" and "rm -rf" in command:
    print("codex: recursive delete blocked", file=sys.stderr)
    sys.exit(2)
if data.get("tool_name") == "apply_patch" and "secrets/" in command:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "codex: patches stay out of secrets/"}}))
`;

describe('plinth hooks import --from codex', () => {
  it("reads ~/.codex/config.toml's [hooks] tables and ~/.codex/hooks.json into the user settings; what Codex has and plinth has not is refused or noted; the hooks run and decide as in Codex", async () => {
    const b = await box();
    const codex = join(b.peerHome, '.codex');
    await mkdir(join(codex, 'hooks'), { recursive: true });
    await writeFile(join(codex, 'hooks', 'guard.py'), CODEX_GUARD, { mode: 0o755 });
    await writeFile(
      join(codex, 'config.toml'),
      [
        'model = "gpt-5-codex"',
        '',
        '[features]',
        'hooks = true',
        '',
        '[mcp_servers.docs]',
        'command = "npx"',
        'args = ["-y", "docs-mcp"]',
        'env = { DOCS_TOKEN = "tok-secret-123" }',
        '',
        '[mcp_servers.remote]',
        'url = "https://example.com/mcp"',
        'bearer_token_env_var = "REMOTE_TOKEN"',
        '',
        '[[hooks.PreToolUse]]',
        'matcher = "^Bash$"',
        '',
        '[[hooks.PreToolUse.hooks]]',
        'type = "command"',
        'command = "python3 ~/.codex/hooks/guard.py"',
        'timeout = 30',
        'statusMessage = "Checking the command"',
        '',
        '[[hooks.PermissionRequest]]',
        'matcher = "Bash"',
        '',
        '[[hooks.PermissionRequest.hooks]]',
        'type = "command"',
        'command = "python3 ~/.codex/hooks/guard.py"',
        '',
        '[hooks.state."/home/me/.codex/config.toml:pre_tool_use:0:0"]',
        'trusted_hash = "abc"',
        '',
      ].join('\n'),
    );
    await writeJson(join(codex, 'hooks.json'), {
      hooks: {
        PreToolUse: [{ matcher: 'apply_patch', hooks: [{ type: 'command', command: 'python3 ~/.codex/hooks/guard.py' }] }],
        Stop: [{ hooks: [{ type: 'prompt' }] }],
      },
    });
    const env = { HOME: b.peerHome };

    const toml = await run(b, ['hooks', 'import', '--from', 'codex', join(codex, 'config.toml'), '--yes', '--json'], env);
    expectExit(toml, 0);
    const plan = json<{ scope: string; written: boolean; added: string[]; notes: string[]; items: Array<{ action: string; event: string; code?: string; reason?: string; plinthEvent?: string }> }>(toml);
    // Codex's PermissionRequest is plinth's approval_request.
    expect(plan).toMatchObject({ scope: 'user', written: true, added: ['user:PreToolUse.0.0', 'user:PermissionRequest.0.0'] });
    expect(plan.items.map((i) => `${i.action} ${i.event}${i.code ? ` ${i.code}` : ''} ${i.plinthEvent}`)).toEqual(['add PreToolUse before_tool', 'add PermissionRequest approval_request']);
    expect(plan.notes.map((n) => n.slice(0, n.indexOf(':')))).toEqual(['"model"', '"features"', '"mcp_servers"', '"mcp_servers"', '"hooks.state"']);
    expect(plan.notes[2]).toContain('plinth mcp add');
    // Each server as a ready `plinth mcp add` line; a variable's value (maybe a secret) is never copied, only referenced.
    expect(plan.notes[3]).toBe(`"mcp_servers": to add them to plinth: plinth mcp add -e 'DOCS_TOKEN=\${env:DOCS_TOKEN}' docs -- npx -y docs-mcp; plinth mcp add -t http -H 'Authorization: Bearer \${env:REMOTE_TOKEN}' remote https://example.com/mcp`);
    expect(toml.stdout + toml.stderr).not.toContain('tok-secret-123');

    // Without a file: the first of the project's .codex/hooks.json, its config.toml, then the user's: here ~/.codex/hooks.json.
    const fromJson = await run(b, ['hooks', 'import', '--from', 'codex', '--yes', '--json'], env);
    expectExit(fromJson, 0);
    const second = json<{ file: string; added: string[]; items: Array<{ action: string; code?: string; reason?: string }> }>(fromJson);
    expect(second.file).toBe(join(codex, 'hooks.json'));
    expect(second.added).toEqual(['user:PreToolUse.1.0']);
    expect(second.items.map((i) => `${i.action}${i.code ? ` ${i.code}` : ''}`)).toEqual(['add', 'refused PLN_E_HOOK_DIALECT_UNSUPPORTED']);
    expect(second.items[1]?.reason).toContain('Codex CLI hook type "prompt" not supported yet');

    const settings = JSON.parse(await readFile(join(b.home, 'settings.json'), 'utf8')) as { hooks: Record<string, Array<Record<string, unknown>>> };
    expect(settings.hooks.PreToolUse).toEqual([
      { matcher: '^Bash$', hooks: [{ type: 'command', command: 'python3 ~/.codex/hooks/guard.py', timeout: 30, statusMessage: 'Checking the command' }], protocol: 'codex' },
      { matcher: 'apply_patch', hooks: [{ type: 'command', command: 'python3 ~/.codex/hooks/guard.py' }], protocol: 'codex' },
    ]);

    // User hooks run on first use, in Codex's dialect: Codex's shell tool is Bash, its patch is tool_input.command.
    const rm = await run(b, ['hooks', 'run', 'before_tool', '--context', JSON.stringify({ tool: 'shell', args: { command: 'rm -rf /' } }), '--json'], env);
    expectExit(rm, 5);
    expect(json<{ decision: { messages: string[] } }>(rm).decision.messages[0]).toBe('codex: recursive delete blocked');
    const patch = await run(b, ['hooks', 'run', 'before_tool', '--context', JSON.stringify({ tool: 'apply_patch', args: { input: '*** Begin Patch\n*** Add File: secrets/key\n+x\n*** End Patch' } }), '--json'], env);
    expectExit(patch, 5);
    expect(json<{ decision: { messages: string[] } }>(patch).decision.messages[0]).toBe('codex: patches stay out of secrets/');
    const ls = await run(b, ['hooks', 'run', 'before_tool', '--context', JSON.stringify({ tool: 'shell', args: { command: 'ls' } }), '--json'], env);
    expectExit(ls, 0);

    const broken = join(b.workspace, 'broken.toml');
    await writeFile(broken, '[[hooks.PreToolUse]\nmatcher = 1\n');
    const bad = await run(b, ['hooks', 'import', '--from', 'codex', broken], env);
    expect(bad.stderr).toMatch(/PLN_E_HOOK_IMPORT: .*broken\.toml is not valid TOML at line 1, column \d+/);
  });
});
