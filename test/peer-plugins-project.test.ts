/**
 * A peer plugin gets its peer's contract: an installed Claude Code plugin's
 * hook runs in the project folder, sees the project and the variables its
 * settings map, confined by real bubblewrap. The permissions are derived from
 * the peer format, shown at install, and granted like declared ones. As
 * hookify does, the guard reads its rules from a file in the project
 * (`.claude/guard.local.md`) and blocks `rm -rf`; without its rules it allows,
 * so a hook that cannot see the project silently stops guarding.
 */
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { write } from './support/peer-folders.js';
import { bwrapHere } from './support/sandbox.js';

const boxes: Sandbox[] = [];
beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

/** A Claude Code plugin whose PreToolUse hook (node) blocks what the project's rules file names. */
async function projectGuard(dir: string): Promise<void> {
  await write(join(dir, '.claude-plugin', 'plugin.json'), { name: 'project-guard', version: '1.0.0', userConfig: { mode: { type: 'string', title: 'Mode', default: 'strict' } } });
  await write(join(dir, 'hooks', 'hooks.json'), { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'node "${CLAUDE_PLUGIN_ROOT}/hooks/guard.js"' }] }] } });
  await write(
    join(dir, 'hooks', 'guard.js'),
    `const fs = require('fs');
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
  const { tool_input } = JSON.parse(input);
  // No rules file: nothing to enforce (as hookify does).
  if (!fs.existsSync('.claude/guard.local.md')) process.exit(0);
  const rules = fs.readFileSync('.claude/guard.local.md', 'utf8').split('\\n').filter(Boolean);
  const hit = rules.find((rule) => String(tool_input.command).includes(rule));
  if (hit === undefined) process.exit(0);
  process.stderr.write('project rule "' + hit + '" (cwd ' + process.cwd() + ', mode ' + process.env.CLAUDE_PLUGIN_OPTION_mode + ')');
  process.exit(2);
});
`,
  );
}

describe.skipIf(!bwrapHere().ok)('an installed Claude Code plugin works in the project', () => {
  it('its derived permissions (the project, its settings\' variables) are shown at install and granted; its hook then blocks rm -rf from the project\'s rules', async () => {
    const at = await sandbox('plinth-peer-project-');
    boxes.push(at);
    await at.settings({ plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } } });
    await write(join(at.workspace, '.claude', 'guard.local.md'), 'rm -rf\n');
    const dir = join(at.base, 'src', 'project-guard');
    await projectGuard(dir);
    const out = join(at.base, 'project-guard-1.0.0.tgz');
    expectExit(await run(at, ['registry', 'pack', dir, '--out', out]), 0);

    // The approval shows what it will be granted, as for any declared permission.
    const asked = await run(at, ['ext', 'install', out]);
    expectExit(asked, 1);
    expect(asked.stderr).toContain('permissions: filesystem: {"read":[],"write":["${workspace}"]}, env: ["CLAUDE_PLUGIN_OPTION_mode"]');
    const installed = await run(at, ['ext', 'install', out, '--yes']);
    expectExit(installed, 0);
    // Reviewed at install as any plugin's declared permissions are (no terminal here: the command that grants them).
    expect(installed.stderr).toContain('project-guard asks for permissions you have not granted (filesystem.write ${workspace}, env CLAUDE_PLUGIN_OPTION_mode): grant them with `plinth perms grant project-guard`');
    const listed = await run(at, ['perms', 'list', 'project-guard']);
    expect(listed.stdout).toMatch(/filesystem\.write \$\{workspace\}\s+\(not granted\)/);
    expect(listed.stdout).toMatch(/env CLAUDE_PLUGIN_OPTION_mode\s+\(not granted\)/);

    const granted = await run(at, ['perms', 'grant', 'project-guard']);
    expectExit(granted, 0);
    const context = JSON.stringify({ tool: 'Bash', args: { command: 'rm -rf build' } });
    const blocked = await run(at, ['hooks', 'run', 'before_tool', '--context', context, '--json']);
    expectExit(blocked, 5);
    expect(JSON.stringify(json(blocked))).toContain(`project rule \\"rm -rf\\" (cwd ${realpathSync(at.workspace)}, mode strict)`);
    expectExit(await run(at, ['hooks', 'run', 'before_tool', '--context', JSON.stringify({ tool: 'Bash', args: { command: 'ls' } })]), 0);
  }, 120_000);

  it('a Gemini CLI extension derives the same: the project, and each setting\'s envVar', async () => {
    const at = await sandbox('plinth-peer-project-');
    boxes.push(at);
    const dir = join(at.base, 'src', 'gem');
    await write(join(dir, 'gemini-extension.json'), { name: 'gem', version: '1.0.0', settings: [{ name: 'Key', description: 'the key', envVar: 'GEM_KEY' }] });
    await write(join(dir, 'hooks', 'hooks.json'), { hooks: { BeforeTool: [{ matcher: '.*', hooks: [{ type: 'command', command: 'true' }] }] } });
    expectExit(await run(at, ['ext', 'link', dir]), 0);
    const info = await run(at, ['ext', 'info', 'gem']);
    expect(info.stdout).toMatch(/permissions: derived from what Gemini CLI gives its hooks and servers/);
    const listed = await run(at, ['perms', 'list', 'gem']);
    expect(listed.stdout).toMatch(/filesystem\.write \$\{workspace\}\s+\(not granted\)/);
    expect(listed.stdout).toMatch(/env GEM_KEY\s+\(not granted\)/);
  }, 60_000);
});
