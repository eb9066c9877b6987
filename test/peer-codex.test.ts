/**
 * Codex CLI as plinth's third peer dialect, and what peer plugins offer beyond hooks and servers,
 * through the real kernel and the builtin plugins, with real files and real hook processes:
 *
 * - a Codex plugin folder (`.codex-plugin/plugin.json`, `.mcp.json`, `hooks/hooks.json`, `skills/`)
 *   in the user's plugins folder: its hooks load and decide as in Codex (exit 2 blocks; a
 *   `permissionDecision: "deny"` blocks; `allow` with `updatedInput` rewrites the call; `ask`, which
 *   Codex refuses, fails the hook and the call goes on; `apply_patch` gets its patch as
 *   `tool_input.command`; every shell tool is `Bash`; a Stop hook's block and a PostCompact hook;
 *   PermissionRequest as Codex reads it (`decision.behavior`, exit 2 with a reason, reserved fields
 *   fail the hook); SubagentStart's context and SubagentStop's block, matched on the agent type);
 *   its server is read from `.mcp.json` with `${PLUGIN_ROOT}` put in;
 * - a Claude Code plugin in the standard layout alone (no `.claude-plugin/plugin.json`): it loads
 *   where a plugin is meant to be (directly in a plugins folder), not deeper;
 * - a Gemini CLI extension with hooks that load and fire;
 * - the contributions view (the extensions service and `ext info`): commands, agents, skills,
 *   output styles and context files, each with its file and front-matter description.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import { write } from './support/peer-folders.js';

const py = (body: string) => `#!/usr/bin/env python3\nimport json, sys\ndata = json.load(sys.stdin)\n${body}\n`;

/** A Codex plugin as Codex's plugin docs lay one out, its hooks written as Codex's hooks docs show them. */
async function codexPlugin(dir: string): Promise<void> {
  await write(join(dir, '.codex-plugin', 'plugin.json'), {
    name: 'codex-guard',
    version: '1.2.0',
    description: 'Guards shell commands and patches',
    author: { name: 'Someone' },
    skills: './skills/',
    mcpServers: './.mcp.json',
    interface: { displayName: 'Codex Guard' },
  });
  await write(join(dir, '.mcp.json'), { mcpServers: { 'guard-notes': { command: 'node', args: ['${PLUGIN_ROOT}/server.mjs'], env: { TOKEN: '${GUARD_TOKEN}' } } } });
  await write(join(dir, 'skills', 'review', 'SKILL.md'), '---\nname: patch-review\ndescription: Review a patch before it lands\n---\n# Review\n');
  await write(join(dir, 'hooks', 'guard.py'), py(
    [
      'tool = data["tool_name"]',
      'command = data["tool_input"].get("command", "")',
      'log = open(data["cwd"] + "/codex-seen.jsonl", "a")',
      'log.write(json.dumps({"event": data["hook_event_name"], "tool": tool, "command": command, "turn": data.get("turn_id"), "model": data.get("model"), "root": __import__("os").environ.get("PLUGIN_ROOT")}) + "\\n")',
      'if tool == "Bash" and "rm -rf" in command:',
      '    print("codex-guard: recursive delete refused", file=sys.stderr)',
      '    sys.exit(2)',
      'if tool == "Bash" and command.startswith("curl"):',
      '    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "codex-guard: no network from the shell"}}))',
      'elif tool == "Bash" and command.startswith("npm install"):',
      '    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": command + " --ignore-scripts"}}}))',
      'elif tool == "Bash" and command.startswith("sudo"):',
      // Codex refuses "ask" on PreToolUse: the hook counts as failed and the call goes on.
      '    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}))',
      'elif tool == "apply_patch" and ".env" in command:',
      '    print(json.dumps({"decision": "block", "reason": "codex-guard: patches may not touch .env"}))',
    ].join('\n'),
  ));
  await write(join(dir, 'hooks', 'stop.py'), py('if not data.get("stop_hook_active") and "TODO" in (data.get("last_assistant_message") or ""):\n    print(json.dumps({"decision": "block", "reason": "finish the TODOs first"}))'));
  await write(join(dir, 'hooks', 'prompt.py'), py('if "sk-" in data["prompt"]:\n    print(json.dumps({"decision": "block", "reason": "codex-guard: that looks like an API key"}))\nelse:\n    print("Prompt checked for turn " + str(data.get("turn_id")))'));
  await write(join(dir, 'hooks', 'start.py'), py('print("fresh session after /clear (" + data["source"] + ")")'));
  await write(join(dir, 'hooks', 'compact.py'), py('print(json.dumps({"systemMessage": "compacted (" + data["trigger"] + ")"}))'));
  // PermissionRequest as Codex's hooks docs show it: hookSpecificOutput.decision.behavior, exit 2 with the reason on stderr.
  await write(join(dir, 'hooks', 'permission.py'), py(
    [
      'open(data["cwd"] + "/codex-permission.jsonl", "a").write(json.dumps(data) + "\\n")',
      'command = data["tool_input"].get("command", "")',
      'if command.startswith("git status"):',
      '    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}))',
      'elif command.startswith("git push"):',
      '    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "codex-guard: no pushes"}}}))',
      'elif command.startswith("dd"):',
      '    print("codex-guard: no raw disk writes", file=sys.stderr)',
      '    sys.exit(2)',
      'elif command.startswith("chmod"):',
      // Reserved by Codex: the hook fails and the normal approval goes on.
      '    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": {"command": "true"}}}}))',
    ].join('\n'),
  ));
  await write(join(dir, 'hooks', 'subagent.py'), py(
    [
      'if data["hook_event_name"] == "SubagentStart":',
      '    print(json.dumps({"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "review agent " + data["agent_id"] + ": stay read-only"}}))',
      'elif not data["stop_hook_active"] and "LGTM" not in (data.get("last_assistant_message") or ""):',
      '    print(json.dumps({"decision": "block", "reason": "end the review with LGTM or a list of findings"}))',
    ].join('\n'),
  ));
  await write(join(dir, 'hooks', 'hooks.json'), {
    hooks: {
      PreToolUse: [{ matcher: '^Bash$|^apply_patch$', hooks: [{ type: 'command', command: 'python3 "${PLUGIN_ROOT}/hooks/guard.py"', statusMessage: 'Checking', timeout: 30, if: 'Bash(rm *)' }] }],
      UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'python3 ${PLUGIN_ROOT}/hooks/prompt.py' }] }],
      SessionStart: [{ matcher: 'clear', hooks: [{ type: 'command', command: 'python3 ${PLUGIN_ROOT}/hooks/start.py' }] }],
      Stop: [{ matcher: 'ignored [', hooks: [{ type: 'command', command: 'python3 ${PLUGIN_ROOT}/hooks/stop.py' }] }],
      PostCompact: [{ hooks: [{ type: 'command', command: 'python3 ${PLUGIN_ROOT}/hooks/compact.py' }] }],
      PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'python3 ${PLUGIN_ROOT}/hooks/permission.py' }] }],
      SubagentStart: [{ matcher: 'reviewer', hooks: [{ type: 'command', command: 'python3 ${PLUGIN_ROOT}/hooks/subagent.py' }] }],
      SubagentStop: [{ matcher: 'reviewer', hooks: [{ type: 'command', command: 'python3 ${PLUGIN_ROOT}/hooks/subagent.py' }] }],
    },
  });
}

/** A Claude Code plugin with no plugin.json: the standard layout alone, as Claude Code reads it. */
async function layoutPlugin(dir: string): Promise<void> {
  await write(join(dir, 'hooks', 'hooks.json'), { hooks: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'python3 ${CLAUDE_PLUGIN_ROOT}/hooks/no-secrets.py' }] }] } });
  await write(join(dir, 'hooks', 'no-secrets.py'), py('if "secret" in data["tool_input"].get("file_path", ""):\n    print("layout-only: not in secret files", file=sys.stderr)\n    sys.exit(2)'));
  await write(join(dir, 'commands', 'deploy.md'), '---\ndescription: "Deploy the current branch"\nallowed-tools: Bash(git *)\n---\nDeploy $ARGUMENTS\n');
  await write(join(dir, 'commands', 'db', 'migrate.md'), '---\ndescription: Run the migrations\n---\nMigrate\n');
  await write(join(dir, 'agents', 'reviewer.md'), "---\nname: reviewer\ndescription: 'Reviews code, thoroughly'\n---\nYou review.\n");
  await write(join(dir, 'output-styles', 'terse.md'), '---\nname: Terse\ndescription: Short answers\n---\nBe short.\n');
  await write(join(dir, 'CLAUDE.md'), '# Conventions\n');
  await write(join(dir, 'AGENTS.md'), '# Agents\n');
}

/** A Gemini CLI extension with a hook, a command and its context file. */
async function geminiExtension(dir: string): Promise<void> {
  await write(join(dir, 'gemini-extension.json'), { name: 'gemini-guard', version: '0.3.0', contextFileName: 'GEMINI.md' });
  await write(join(dir, 'GEMINI.md'), 'Be careful.\n');
  await write(join(dir, 'commands', 'plan.toml'), 'description = "Plan the change"\nprompt = "Plan {{args}}"\n');
  await write(join(dir, 'hooks', 'check.py'), py('if "drop table" in data["tool_input"].get("query", "").lower():\n    print(json.dumps({"decision": "deny", "reason": "gemini-guard: no DROP TABLE"}))\nelse:\n    print(json.dumps({"decision": "allow", "hookSpecificOutput": {"additionalContext": "checked by gemini-guard"}}))'));
  await write(join(dir, 'hooks', 'hooks.json'), { hooks: { BeforeTool: [{ matcher: 'run_query', hooks: [{ type: 'command', command: 'python3 ${extensionPath}/hooks/check.py', timeout: 20000 }] }] } });
}

let base: string;
let home: string;
let workspace: string;
let kernel: Kernel;
const savedCI = process.env.CI;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-codex-'));
  home = join(base, 'home');
  workspace = join(base, 'project');
  await mkdir(workspace, { recursive: true });
  await codexPlugin(join(home, 'plugins', 'codex-guard'));
  await layoutPlugin(join(home, 'plugins', 'layout-only'));
  await geminiExtension(join(home, 'plugins', 'gemini-guard'));
  // Deeper than a plugin is meant to be: a project checkout with its own .mcp.json and commands is no plugin.
  await write(join(home, 'plugins', 'vendor', 'some-project', '.mcp.json'), { mcpServers: { x: { command: 'node' } } });
  await write(join(home, 'plugins', 'vendor', 'some-project', 'commands', 'x.md'), 'x');
  process.env.CI = '1';
  kernel = new Kernel({ home, workspace, builtin: true, env: { ...process.env }, logLevel: 'warn', logSink: () => undefined });
  await kernel.boot();
  const trust = await kernel.get('trust');
  for (const hook of (await (await kernel.get('hooks')).definitions()).hooks) if (hook.plugin !== undefined) await trust.approve(trustSubject(hook));
}, 60_000);

afterAll(async () => {
  await kernel?.shutdown();
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await rm(base, { recursive: true, force: true });
});

describe('a Codex plugin folder', () => {
  it('loads as a plugin: its hooks in the codex dialect, its server from .mcp.json with ${PLUGIN_ROOT} put in', async () => {
    expect(kernel.status().find((p) => p.name === 'codex-guard')).toMatchObject({ version: '1.2.0', source: 'user', state: 'active' });
    const info = await (await kernel.get('extensions')).info('codex-guard');
    expect(info.peer).toMatchObject({ format: 'codex', file: join(home, 'plugins', 'codex-guard', '.codex-plugin', 'plugin.json') });
    expect(info.mcpServers).toEqual(['guard-notes']);
    expect((await kernel.get('mcp')).definition('guard-notes')).toMatchObject({ command: 'node', args: [join(home, 'plugins', 'codex-guard', 'server.mjs')], plugin: 'codex-guard' });
    expect(info.peer?.ignored.map((f) => f.field)).toEqual(expect.arrayContaining(['author', 'interface', 'skills']));

    const { hooks, problems } = await (await kernel.get('hooks')).definitions();
    const ours = hooks.filter((h) => h.plugin === 'codex-guard');
    expect(ours.map((h) => `${h.id} ${h.protocol} ${h.events.join(',')} ${h.timeoutMs}`)).toEqual([
      'codex-guard/PreToolUse.0.0 codex before_tool 30000',
      'codex-guard/UserPromptSubmit.0.0 codex before_agent 600000',
      'codex-guard/SessionStart.0.0 codex session_start 600000',
      'codex-guard/Stop.0.0 codex after_agent 600000',
      'codex-guard/PostCompact.0.0 codex post_compress 600000',
      'codex-guard/PermissionRequest.0.0 codex approval_request 600000',
      'codex-guard/SubagentStart.0.0 codex subagent_start 600000',
      'codex-guard/SubagentStop.0.0 codex subagent_stop 600000',
    ]);
    // Every event of Codex's hooks docs has a plinth event: nothing is left out.
    expect(problems).toEqual([]);
    // Claude Code's `if` in a Codex hooks file: Codex ignores it, so does plinth (the curl call below still reaches the hook).
    expect(ours[0]?.notYet).toEqual([expect.stringContaining('Claude Code\'s "if" is not a Codex CLI hook field: Codex ignores it, and so does plinth')]);
    expect(ours[0]?.action).toEqual({ type: 'command', command: 'python3', args: [join(home, 'plugins', 'codex-guard', 'hooks', 'guard.py')] });
  });

  it('decides as Codex: exit 2 and a deny block with the reason, allow+updatedInput rewrites, an "ask" fails the hook and the call goes on', async () => {
    const rm_ = await kernel.emit('before_tool', { tool: 'shell', args: { command: 'rm -rf build' }, turnId: 'turn-1', model: 'gpt-5-codex' });
    expect(rm_.allow).toBe(false);
    expect(rm_.messages[0]).toBe('codex-guard: recursive delete refused');

    const curl = await kernel.emit('before_tool', { tool: 'exec_command', args: { command: 'curl https://example.com' } });
    expect(curl.allow).toBe(false);
    expect(curl.messages[0]).toBe('codex-guard: no network from the shell');

    const npm = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'npm install left-pad' } });
    expect(npm.allow).toBe(true);
    expect(npm.context.args).toEqual({ command: 'npm install left-pad --ignore-scripts' });

    const sudo = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'sudo ls' } });
    expect(sudo.allow).toBe(true);

    const patch = '*** Begin Patch\n*** Update File: .env\n+KEY=1\n*** End Patch';
    const env = await kernel.emit('before_tool', { tool: 'apply_patch', args: { input: patch } });
    expect(env.allow).toBe(false);
    expect(env.messages[0]).toBe('codex-guard: patches may not touch .env');
    expect((await kernel.emit('before_tool', { tool: 'apply_patch', args: { input: patch.replace('.env', 'a.ts') } })).allow).toBe(true);
    // Not matched: Codex would not call the hook for another tool.
    expect((await kernel.emit('before_tool', { tool: 'web_search', args: { command: 'rm -rf /' } })).allow).toBe(true);

    const seen = (await readFile(join(workspace, 'codex-seen.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(seen[0]).toEqual({ event: 'PreToolUse', tool: 'Bash', command: 'rm -rf build', turn: 'turn-1', model: 'gpt-5-codex', root: join(home, 'plugins', 'codex-guard') });
    expect(seen.map((s) => s.tool)).toEqual(['Bash', 'Bash', 'Bash', 'Bash', 'apply_patch', 'apply_patch']);
    expect(seen[4]?.command).toBe(patch);
  });

  it('a Stop hook blocks with its reason (its matcher ignored, as Codex ignores it there); a PostCompact hook speaks', async () => {
    const stop = await kernel.emit('after_agent', { response: 'Done, but TODO: tests' });
    expect(stop.allow).toBe(false);
    expect(stop.messages).toContain('finish the TODOs first');
    expect((await kernel.emit('after_agent', { response: 'All done' })).allow).toBe(true);
    const compact = await kernel.emit('post_compress', { trigger: 'manual' });
    expect(compact.messages).toContain('compacted (manual)');
  });

  it("PermissionRequest decides as Codex: behavior allow approves, deny and exit 2 deny with the reason, a reserved field fails the hook; the matcher is the tool's", async () => {
    const status = await kernel.emit('approval_request', { tool: 'exec_command', args: { command: 'git status' }, turnId: 'turn-7', model: 'gpt-5-codex' });
    expect(status.allow).toBe(true);
    expect(status.context.approved).toBe(true);
    expect(status.host?.permission).toEqual({ behavior: 'allow' });

    const push = await kernel.emit('approval_request', { tool: 'Bash', args: { command: 'git push origin main' } });
    expect(push.allow).toBe(false);
    expect(push.messages[0]).toBe('codex-guard: no pushes');
    expect(push.host?.permission).toEqual({ behavior: 'deny', message: 'codex-guard: no pushes' });

    const dd = await kernel.emit('approval_request', { tool: 'shell', args: { command: 'dd if=/dev/zero of=/dev/sda' } });
    expect(dd.allow).toBe(false);
    expect(dd.messages[0]).toBe('codex-guard: no raw disk writes');

    // updatedInput is reserved in Codex's PermissionRequest: the hook fails (onError allow), no decision, the host asks as usual.
    const chmod = await kernel.emit('approval_request', { tool: 'Bash', args: { command: 'chmod 777 x' } });
    expect(chmod.allow).toBe(true);
    expect(chmod.context.approved).toBeUndefined();
    expect(chmod.host?.permission).toBeUndefined();
    // Another tool: the matcher (Bash) does not match, the hook does not run.
    expect((await kernel.emit('approval_request', { tool: 'apply_patch', args: { input: 'git push' } })).allow).toBe(true);

    const seen = (await readFile(join(workspace, 'codex-permission.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(seen).toHaveLength(4);
    expect(seen[0]).toMatchObject({ hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'git status' }, turn_id: 'turn-7', model: 'gpt-5-codex', transcript_path: null });
    expect(seen[0]).not.toHaveProperty('permission_suggestions');
  });

  it('SubagentStart adds context for the sub-agent (advisory); SubagentStop blocks to keep it working; both match the agent type', async () => {
    const start = await kernel.emit('subagent_start', { agentId: 'thread-42', agentType: 'reviewer' });
    expect(start.allow).toBe(true);
    expect(start.systemMessages).toContain('review agent thread-42: stay read-only');
    expect((await kernel.emit('subagent_start', { agentId: 'thread-43', agentType: 'worker' })).systemMessages).toEqual([]);

    const stop = await kernel.emit('subagent_stop', { agentId: 'thread-42', agentType: 'reviewer', response: 'looked at it', stopHookActive: false });
    expect(stop.allow).toBe(false);
    expect(stop.messages).toContain('end the review with LGTM or a list of findings');
    expect((await kernel.emit('subagent_stop', { agentId: 'thread-42', agentType: 'reviewer', response: 'LGTM', stopHookActive: false })).allow).toBe(true);
    expect((await kernel.emit('subagent_stop', { agentId: 'thread-42', agentType: 'reviewer', response: 'looked', stopHookActive: true })).allow).toBe(true);
    expect((await kernel.emit('subagent_stop', { agentId: 'thread-44', agentType: 'worker', response: 'done' })).allow).toBe(true);
  });

  it('UserPromptSubmit: a block refuses the prompt, plain stdout is context; SessionStart matches its source', async () => {
    const key = await kernel.emit('before_agent', { prompt: 'use sk-abc123', turnId: 't-9' });
    expect(key.allow).toBe(false);
    expect(key.messages[0]).toBe('codex-guard: that looks like an API key');
    const fine = await kernel.emit('before_agent', { prompt: 'hello', turnId: 't-9' });
    expect(fine.allow).toBe(true);
    expect(fine.systemMessages).toContain('Prompt checked for turn t-9');
    expect((await kernel.emit('session_start', { source: 'clear' })).systemMessages).toContain('fresh session after /clear (clear)');
    expect((await kernel.emit('session_start', { source: 'startup' })).systemMessages).not.toContain('fresh session after /clear (startup)');
  });
});

describe("a Claude Code plugin in the standard layout alone", () => {
  it('loads where a plugin is meant to be, named after its folder, and its hook fires; a project deeper down is no plugin', async () => {
    expect(kernel.status().find((p) => p.name === 'layout-only')).toMatchObject({ version: '0.0.0', state: 'active' });
    expect(kernel.status().find((p) => p.name === 'some-project')).toBeUndefined();
    const info = await (await kernel.get('extensions')).info('layout-only');
    expect(info.peer?.format).toBe('claude');
    expect(info.peer?.notes.map((n) => n.field)).toEqual(expect.arrayContaining(['plugin.json']));
    const secret = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'config/secret.txt' } });
    expect(secret.allow).toBe(false);
    expect(secret.messages[0]).toBe('layout-only: not in secret files');
    expect((await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'a.ts' } })).allow).toBe(true);
  });
});

describe('a Gemini CLI extension with hooks', () => {
  it('loads and fires: a deny blocks with its reason, an allow adds its context', async () => {
    const drop = await kernel.emit('before_tool', { tool: 'run_query', args: { query: 'DROP TABLE users' } });
    expect(drop.allow).toBe(false);
    expect(drop.messages[0]).toBe('gemini-guard: no DROP TABLE');
    const select = await kernel.emit('before_tool', { tool: 'run_query', args: { query: 'select 1' } });
    expect(select.allow).toBe(true);
    expect(select.systemMessages).toContain('checked by gemini-guard');
  });
});

describe('contributions', () => {
  it('lists each command, agent, skill, output style and context file with its file and description', async () => {
    const extensions = await kernel.get('extensions');
    const root = join(home, 'plugins', 'layout-only');
    const layout = await extensions.contributions('layout-only');
    expect(layout).toEqual([
      { plugin: 'layout-only', kind: 'command', name: 'db:migrate', path: 'commands/db/migrate.md', file: join(root, 'commands', 'db', 'migrate.md'), description: 'Run the migrations' },
      { plugin: 'layout-only', kind: 'command', name: 'deploy', path: 'commands/deploy.md', file: join(root, 'commands', 'deploy.md'), description: 'Deploy the current branch' },
      { plugin: 'layout-only', kind: 'agent', name: 'reviewer', path: 'agents/reviewer.md', file: join(root, 'agents', 'reviewer.md'), description: 'Reviews code, thoroughly' },
      { plugin: 'layout-only', kind: 'output-style', name: 'terse', path: 'output-styles/terse.md', file: join(root, 'output-styles', 'terse.md'), description: 'Short answers' },
      { plugin: 'layout-only', kind: 'context', name: 'AGENTS.md', path: 'AGENTS.md', file: join(root, 'AGENTS.md') },
      { plugin: 'layout-only', kind: 'context', name: 'CLAUDE.md', path: 'CLAUDE.md', file: join(root, 'CLAUDE.md') },
    ]);
    expect(await extensions.contributions('codex-guard')).toEqual([
      { plugin: 'codex-guard', kind: 'skill', name: 'patch-review', path: 'skills/review/SKILL.md', file: join(home, 'plugins', 'codex-guard', 'skills', 'review', 'SKILL.md'), description: 'Review a patch before it lands' },
    ]);
    expect((await extensions.contributions('gemini-guard')).map((c) => `${c.kind} ${c.name} ${c.path} ${c.description ?? ''}`)).toEqual(['command plan commands/plan.toml Plan the change', 'context GEMINI.md GEMINI.md ']);
    // Every enabled plugin's, in one list: builtins offer none.
    const all = await extensions.contributions();
    expect(new Set(all.map((c) => c.plugin))).toEqual(new Set(['codex-guard', 'layout-only', 'gemini-guard']));
    // ext info carries them too.
    expect((await extensions.info('layout-only')).contributions).toEqual(layout);
    await expect(extensions.contributions('no-such-plugin')).rejects.toMatchObject({ code: 'PLN_E_PLUGIN_UNKNOWN' });
  });
});
