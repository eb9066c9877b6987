/**
 * Peer hooks as people publish them, run unchanged through the real kernel and the hooks plugin:
 *
 * - a hook collection whose every hook runs through `uv run`, and scripts whose `#!` line is
 *   `#!/usr/bin/env -S uv run --script` (PEP 723); `node --import <module> <script>`;
 * - a Claude Code plugin whose hooks use Claude Code's current fields (`if`, `async`,
 *   `asyncRewake`, `once`, `shell`, `statusMessage`, exec-form `args`), all honoured, and a `prompt` hook;
 * - peer groups that hold only `SessionStart`, `SessionEnd` or `Notification`.
 *
 * uv is not installed on the machines that run these tests: a stand-in `uv` (a POSIX shell script
 * that does what `uv run` does with a script or a command: runs the `.py` file with python3, or
 * the command itself) is put on a PATH this file controls, and logs the arguments it was given, so
 * that the test sees which word reached it as the script.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import { scriptOf } from '../plugins/hooks/script.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const folders: string[] = [];
const boxes: Sandbox[] = [];
const savedPath = process.env.PATH;
const savedCI = process.env.CI;
let standIn: string;

async function write(file: string, text: string, mode = 0o644): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
  await chmod(file, mode);
}

beforeAll(async () => {
  ensureBuilt();
  process.env.CI = '1';
  standIn = await mkdtemp(join(tmpdir(), 'plinth-uv-'));
  folders.push(standIn);
  // The stand-in for uv (see the file comment): `uv run [--script] [--with X] [-p X] <file.py|command> args…`.
  await write(
    join(standIn, 'uv'),
    [
      '#!/bin/sh',
      'echo "$*" >> "$(dirname "$0")/uv.log"',
      '[ "$1" = run ] || { echo "stand-in uv: only run is known" >&2; exit 2; }',
      'shift',
      'while [ $# -gt 0 ]; do case "$1" in --script|-q|--quiet) shift ;; --with|-w|-p|--python) shift 2 ;; *) break ;; esac; done',
      'case "$1" in *.py) exec python3 "$@" ;; *) exec "$@" ;; esac',
      '',
    ].join('\n'),
    0o755,
  );
  process.env.PATH = `${standIn}${delimiter}${savedPath ?? ''}`;
}, 300_000);

afterAll(async () => {
  process.env.PATH = savedPath;
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await Promise.all([...folders.map((dir) => rm(dir, { recursive: true, force: true })), ...boxes.map((b) => b.remove())]);
});

/** A PreToolUse guard as the uv-based collections write one: PEP 723 header, JSON on stdin, exit 2 to block. */
const PRE_TOOL_USE_PY = `#!/usr/bin/env -S uv run --script
# /// script
# requires-python = ">=3.8"
# ///
import json
import sys

data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
if "rm -rf" in command:
    print("BLOCKED: dangerous rm command detected and prevented", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
`;

const ENV_GUARD_PY = `#!/usr/bin/env -S uv run --script
# /// script
# requires-python = ">=3.8"
# ///
import json
import sys

data = json.load(sys.stdin)
path = data.get("tool_input", {}).get("file_path", "")
if path.endswith(".env"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "writing .env files is not allowed"}}))
sys.exit(0)
`;

describe('runners: uv run, a uv script shebang, node --import', () => {
  it('runs each through its runner, takes the real script for the script (never "run"), and fingerprints it', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'plinth-runners-'));
    folders.push(workspace);
    await write(join(workspace, '.claude', 'hooks', 'pre_tool_use.py'), PRE_TOOL_USE_PY, 0o755);
    await write(join(workspace, '.claude', 'hooks', 'env_guard.py'), ENV_GUARD_PY, 0o755);
    await write(join(workspace, '.claude', 'hooks', 'register.mjs'), 'globalThis.registeredBy = "register.mjs";\n');
    await write(
      join(workspace, '.claude', 'hooks', 'edit-guard.mjs'),
      [
        "let raw = '';",
        "process.stdin.on('data', (c) => (raw += c));",
        "process.stdin.on('end', () => {",
        '  const input = JSON.parse(raw);',
        "  if (String(input.tool_input.file_path).startsWith('/etc/')) console.log(JSON.stringify({ decision: 'block', reason: `no edits in /etc (loaded: ${globalThis.registeredBy})` }));",
        '});',
        '',
      ].join('\n'),
    );
    const kernel: TestKernel = await createTestKernel({
      builtin: true,
      workspace,
      settings: {
        hooks: {
          PreToolUse: [
            // As the collection writes them: uv run and a path relative to the project.
            { matcher: 'Bash', hooks: [{ type: 'command', command: 'uv run --with rich .claude/hooks/pre_tool_use.py' }] },
            // A uv script named directly: its #! line says `uv run --script`.
            { matcher: 'Write', hooks: [{ type: 'command', command: '$CLAUDE_PROJECT_DIR/.claude/hooks/env_guard.py' }] },
            { matcher: 'Edit', hooks: [{ type: 'command', command: 'node --import ./.claude/hooks/register.mjs .claude/hooks/edit-guard.mjs' }] },
          ],
          // A command run through uv, not a script: `true` is no file, and must not be taken for one.
          PostToolUse: [{ hooks: [{ type: 'command', command: 'uv run true' }] }],
        },
      },
    });
    try {
      expect(kernel.report.plugins.filter((p) => p.state === 'failed')).toEqual([]);
      const rm = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' } });
      expect(rm.allow).toBe(false);
      expect(rm.messages[0]).toBe('BLOCKED: dangerous rm command detected and prevented');
      expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(true);

      const env = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'config/.env', content: 'X=1' } });
      expect(env.allow).toBe(false);
      expect(env.messages[0]).toBe('writing .env files is not allowed');
      expect((await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'a.ts' } })).allow).toBe(true);

      const etc = await kernel.emit('before_tool', { tool: 'Edit', args: { file_path: '/etc/hosts' } });
      expect(etc.allow).toBe(false);
      expect(etc.messages[0]).toBe('no edits in /etc (loaded: register.mjs)');

      const after = await kernel.emit('after_tool', { tool: 'Bash', args: { command: 'ls' }, result: {} });
      expect(after.allow).toBe(true);
      expect((await kernel.get('hooks')).lastRun('after_tool')?.outcomes.map((o) => `${o.hook.id} ${o.status}`)).toEqual(['user:PostToolUse.0.0 ran']);

      // What reached uv: the script's path, or the command; never a guess.
      const log = (await readFile(join(standIn, 'uv.log'), 'utf8')).trim().split('\n');
      expect(log).toEqual(expect.arrayContaining(['run --with rich .claude/hooks/pre_tool_use.py', `run --script ${join(workspace, '.claude', 'hooks', 'env_guard.py')}`, 'run true']));

      // The script is what was pinned at first use: an edit to it is a changed hook, and the gate blocks until approved again.
      const { hooks } = await (await kernel.get('hooks')).definitions();
      const bash = hooks.find((h) => h.id === 'user:PreToolUse.0.0')!;
      expect(scriptOf(bash)).toBe(join(workspace, '.claude', 'hooks', 'pre_tool_use.py'));
      expect(scriptOf(hooks.find((h) => h.id === 'user:PreToolUse.2.0')!)).toBe(join(workspace, '.claude', 'hooks', 'edit-guard.mjs'));
      expect(scriptOf(hooks.find((h) => h.id === 'user:PostToolUse.0.0')!)).toBeUndefined();
      expect((await (await kernel.get('trust')).inspect(trustSubject(bash))).trusted).toBe(true);
      await writeFile(join(workspace, '.claude', 'hooks', 'pre_tool_use.py'), `${PRE_TOOL_USE_PY}# edited\n`);
      const edited = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
      expect(edited.allow).toBe(false);
      expect(edited.blockedBy).toMatchObject({ by: 'user:PreToolUse.0.0', code: 'PLN_E_HOOK_UNRUNNABLE' });
    } finally {
      await kernel.dispose();
    }
  });

  it('knows the common runners, skipping their flags with values; a subcommand, module, package or unknown program names no script', () => {
    const of = (command: string, ...args: string[]) => scriptOf({ action: { type: 'command', command, args }, cwd: '/p' });
    expect(of('uv', 'run', 'x.py')).toBe('/p/x.py');
    expect(of('uv', 'run', '--with', 'requests', '--python', '3.12', 'hooks/x.py', '--flag')).toBe('/p/hooks/x.py');
    expect(of('uv', 'run', '--script', '/abs/hook')).toBe('/abs/hook');
    expect(of('uv', 'run', 'python', '-u', 'x.py')).toBe('/p/x.py');
    expect(of('uv', 'run', 'pytest')).toBeUndefined();
    expect(of('uv', 'run', '-m', 'pkg')).toBeUndefined();
    expect(of('uvx', 'ruff', 'check')).toBeUndefined();
    expect(of('node', '--import', 'tsx', 'x.ts')).toBe('/p/x.ts');
    expect(of('node', '-r', 'ts-node/register', 'x.ts')).toBe('/p/x.ts');
    expect(of('python3.12', '-W', 'ignore', 'x.py')).toBe('/p/x.py');
    expect(of('python3', '-m', 'http.server')).toBeUndefined();
    expect(of('bun', 'run', 'x.ts')).toBe('/p/x.ts');
    expect(of('bun', 'run', 'lint')).toBeUndefined();
    expect(of('deno', 'run', '--config', 'deno.json', '-A', 'x.ts')).toBe('/p/x.ts');
    expect(of('deno', 'run', 'npm:cowsay')).toBeUndefined();
    expect(of('npx', '-y', 'tsx', 'x.ts')).toBeUndefined();
    expect(of('pnpm', 'dlx', 'pkg')).toBeUndefined();
    expect(of('git', 'status')).toBeUndefined();
  });
});

/** A Claude Code plugin with six hooks in Claude Code's current shape, as a published security plugin writes them. */
async function securityPlugin(dir: string): Promise<void> {
  await write(join(dir, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'sec-demo', version: '1.0.0', description: 'security checks' }));
  const py = (body: string) => `#!/usr/bin/env python3\nimport json, sys\ndata = json.load(sys.stdin)\n${body}\nsys.exit(0)\n`;
  await write(join(dir, 'hooks', 'guard.py'), py('if "rm -rf" in data.get("tool_input", {}).get("command", ""):\n    print("sec-demo: recursive delete refused", file=sys.stderr)\n    sys.exit(2)'));
  await write(join(dir, 'hooks', 'commit_check.py'), py('c = data.get("tool_input", {}).get("command", "")\nif "git commit" in c and "AKIA" in c:\n    print("sec-demo: a key in the commit message", file=sys.stderr)\n    sys.exit(2)'));
  await write(join(dir, 'hooks', 'review.py'), py(''));
  await write(join(dir, 'hooks', 'session.py'), py('print("sec-demo is watching")'));
  await write(
    join(dir, 'hooks', 'hooks.json'),
    JSON.stringify({
      description: 'security reminders',
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'python3', args: ['${CLAUDE_PLUGIN_ROOT}/hooks/guard.py'], statusMessage: 'Checking the command' }] },
          { matcher: 'Bash', hooks: [{ type: 'command', if: 'Bash(git commit *)', shell: 'bash', command: 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/commit_check.py"', timeout: 30 }] },
          { matcher: 'WebFetch', hooks: [{ type: 'prompt', prompt: 'Is fetching $ARGUMENTS safe?' }] },
        ],
        PostToolUse: [
          { matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'python3 ${CLAUDE_PLUGIN_ROOT}/hooks/review.py', async: true }] },
          { matcher: 'Bash', hooks: [{ type: 'command', if: 'Bash(git commit:*)', asyncRewake: true, command: 'python3 ${CLAUDE_PLUGIN_ROOT}/hooks/review.py' }] },
        ],
        SessionStart: [{ hooks: [{ type: 'command', command: 'python3 ${CLAUDE_PLUGIN_ROOT}/hooks/session.py', once: true }] }],
      },
    }),
  );
}

/** Peer folders whose hooks are only events both peers have: their dialect is their folder's. */
async function lifecycleOnly(home: string): Promise<void> {
  await write(join(home, 'plugins', 'claude-start', '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'claude-start', version: '1.0.0' }));
  await write(join(home, 'plugins', 'claude-start', 'hooks', 'hooks.json'), JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'echo started' }] }] } }));
  await write(join(home, 'plugins', 'gemini-end', 'gemini-extension.json'), JSON.stringify({ name: 'gemini-end', version: '1.0.0' }));
  await write(join(home, 'plugins', 'gemini-end', 'hooks', 'hooks.json'), JSON.stringify({ hooks: { SessionEnd: [{ hooks: [{ type: 'command', command: 'echo ended' }] }], Notification: [{ hooks: [{ type: 'command', command: 'echo noted' }] }] } }));
}

describe("Claude Code's current hook fields in a plugin", () => {
  it('every hook is there: args, shell "bash", if, async/asyncRewake, once and statusMessage are honoured, the prompt hook blocks what it guards', async () => {
    const base = await mkdtemp(join(tmpdir(), 'plinth-sec-'));
    folders.push(base);
    const home = join(base, 'home');
    const workspace = join(base, 'project');
    await mkdir(workspace, { recursive: true });
    await securityPlugin(join(home, 'plugins', 'sec-demo'));
    await lifecycleOnly(home);
    const kernel = new Kernel({ home, workspace, builtin: true, env: { ...process.env }, logLevel: 'warn', logSink: () => undefined });
    await kernel.boot();
    try {
      const hooksService = await kernel.get('hooks');
      const { hooks, problems } = await hooksService.definitions();
      expect(problems).toEqual([]);
      const ours = hooks.filter((h) => h.plugin === 'sec-demo');
      expect(ours.map((h) => h.id)).toEqual([
        'sec-demo/PreToolUse.0.0',
        'sec-demo/PreToolUse.1.0',
        'sec-demo/PreToolUse.2.0',
        'sec-demo/PostToolUse.0.0',
        'sec-demo/PostToolUse.1.0',
        'sec-demo/SessionStart.0.0',
      ]);
      const by = Object.fromEntries(ours.map((h) => [h.id, h]));
      expect(by['sec-demo/PreToolUse.0.0']?.action).toEqual({ type: 'command', command: 'python3', args: [join(home, 'plugins', 'sec-demo', 'hooks', 'guard.py')] });
      expect(ours.filter((h) => h.notYet !== undefined)).toEqual([]);
      expect(by['sec-demo/PreToolUse.0.0']?.statusMessage).toBe('Checking the command');
      expect(by['sec-demo/PreToolUse.1.0']?.if).toBe('Bash(git commit *)');
      // A prompt hook runs through the host's `model` service (sdk/contracts/model.ts).
      expect(by['sec-demo/PreToolUse.2.0']?.action).toEqual({ type: 'prompt', prompt: 'Is fetching $ARGUMENTS safe?' });
      expect(by['sec-demo/PreToolUse.2.0']?.unsupported).toBeUndefined();
      expect(by['sec-demo/PostToolUse.0.0']?.async).toEqual({});
      expect(by['sec-demo/PostToolUse.1.0']).toMatchObject({ if: 'Bash(git commit:*)', async: { rewake: true } });
      expect(by['sec-demo/SessionStart.0.0']?.once).toBe(true);
      // Groups holding only events both peers have speak their folder's peer.
      expect(hooks.filter((h) => h.plugin === 'claude-start' || h.plugin === 'gemini-end').map((h) => `${h.id}:${h.protocol}`)).toEqual([
        'claude-start/SessionStart.0.0:claude',
        'gemini-end/SessionEnd.0.0:gemini',
        'gemini-end/Notification.0.0:gemini',
      ]);

      // ext info names only what plinth cannot run, never a field as an unknown key.
      const info = await (await kernel.get('extensions')).info('sec-demo');
      const said = [...(info.peer?.notes ?? []), ...(info.peer?.ignored ?? [])].map((f) => `${f.field} | ${f.reason}`);
      expect(said.filter((s) => s.includes('not supported yet'))).toEqual([]);
      expect(said.join('\n')).not.toMatch(/unknown key/i);

      const trust = await kernel.get('trust');
      for (const hook of ours) await trust.approve(trustSubject(hook));
      const rm = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf build' } });
      expect(rm.allow).toBe(false);
      expect(rm.messages[0]).toBe('sec-demo: recursive delete refused');
      const commit = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'git commit -m "AKIAABCDEFGHIJKLMNOP"' } });
      expect(commit.allow).toBe(false);
      expect(commit.messages[0]).toBe('sec-demo: a key in the commit message');
      expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(true);
      const fetch = await kernel.emit('before_tool', { tool: 'WebFetch', args: { url: 'https://example.com' } });
      expect(fetch.allow).toBe(false);
      expect(fetch.blockedBy).toMatchObject({ by: 'sec-demo/PreToolUse.2.0', code: 'PLN_E_HOOK_UNRUNNABLE' });
      // No host lends a model here: the guard cannot run, so what it guards is blocked, naming the missing service.
      expect(fetch.blockedBy?.reason).toContain('no host or plugin provides the `model` service');
      expect(fetch.blockedBy?.fix).toContain("kernel.provide('model'");
      const start = await kernel.emit('session_start', { source: 'startup' });
      expect(start.systemMessages).toContain('sec-demo is watching');
      // once: the session's second start runs it no more.
      expect((await kernel.emit('session_start', { source: 'resume' })).systemMessages).not.toContain('sec-demo is watching');
    } finally {
      await kernel.shutdown();
    }
  });

  it('hooks validate and ext info name no honoured field, only the hook type plinth cannot run; hooks run says why a lifecycle group of unknown peer did not run', async () => {
    const b = await sandbox('plinth-peer-fields-');
    boxes.push(b);
    await b.settings({ plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } } });
    await securityPlugin(join(b.home, 'plugins', 'sec-demo'));
    await write(
      join(b.workspace, '.plinth', 'settings.json'),
      JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'echo which-peer' }] }] } }),
    );

    const validate = await run(b, ['hooks', 'validate']);
    expectExit(validate, 1);
    expect(validate.stdout).not.toContain('Claude Code field not supported yet');
    // No host lends a model to the CLI: the prompt hook would block what it guards, as validate says.
    expect(validate.stdout).toContain('hook "sec-demo/PreToolUse.2.0" cannot run: it is a "prompt" hook and no host or plugin provides the `model` service');
    expect(validate.stdout).not.toContain('unknown key');

    const info = await run(b, ['ext', 'info', 'sec-demo']);
    expectExit(info, 0);
    expect(info.stdout).not.toContain('Claude Code field not supported yet');
    expect(info.stdout).not.toContain('PreToolUse[2].hooks[0].type');

    const session = await run(b, ['hooks', 'run', 'session_start', '--json']);
    expectExit(session, 0);
    const ran = json<{ hooks: unknown[]; problems: Array<{ code: string; message: string }> }>(session);
    expect(ran.problems).toEqual([
      expect.objectContaining({ code: 'PLN_E_HOOK_INVALID', message: expect.stringContaining('"SessionStart" is an event of both Claude Code and Gemini CLI, and nothing in') }),
    ]);
  });

  it('a lifecycle group without "protocol" speaks the peer the rest of its settings file says (what hooks import wrote)', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'plinth-lifecycle-'));
    folders.push(workspace);
    const log = join(workspace, 'seen.txt');
    const kernel = await createTestKernel({
      builtin: true,
      workspace,
      settings: {
        hooks: {
          // As `hooks import --from claude` wrote it, then a group added by hand without "protocol".
          Notification: [{ hooks: [{ type: 'command', command: `sh -c 'cat >> ${log}'` }], protocol: 'claude' }],
          SessionStart: [
            { hooks: [{ type: 'command', command: `python3 -c "import json,sys; d=json.load(sys.stdin); open('${log}','a').write(d['hook_event_name'] + ' ' + d['model'] + '\\\\n')"` }] },
            // Claude Code's "shell": "bash": a command that needs a shell runs through bash (sh has no BASH_VERSION).
            { hooks: [{ type: 'command', shell: 'bash', command: `echo "bash \${BASH_VERSION%%.*}" >> '${log}'` }] },
          ],
        },
        plugins: { hooks: { settings: { shellCommands: ['user'] } } },
      },
    });
    try {
      const { hooks, problems } = await (await kernel.get('hooks')).definitions();
      expect(problems).toEqual([]);
      expect(hooks.map((h) => `${h.id}:${h.protocol}`)).toEqual(['user:Notification.0.0:claude', 'user:SessionStart.0.0:claude', 'user:SessionStart.1.0:claude']);
      expect(hooks.find((h) => h.id === 'user:SessionStart.1.0')?.action).toMatchObject({ command: 'bash', args: ['-c', expect.stringContaining('BASH_VERSION')] });
      await kernel.emit('session_start', { source: 'startup', model: 'claude-opus-4-1' });
      const lines = (await readFile(log, 'utf8')).trim().split('\n').sort();
      expect(lines).toEqual(['SessionStart claude-opus-4-1', expect.stringMatching(/^bash \d+$/)]);
    } finally {
      await kernel.dispose();
    }
  });
});
