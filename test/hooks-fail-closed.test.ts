/**
 * Guards fail closed, through the real `plinth` executable: a user's
 * `before_tool` hook that cannot run — its plugin did not load (a mistyped
 * hooks setting), its approval is out of date (the script was edited after it
 * was pinned), its script is missing, its definition cannot be read — blocks
 * the gate event with the reason and the fix (exit 5), and never lets
 * `plinth call` run the tool. A workspace hook nobody approved is skipped, and
 * the decision's system messages say so; non-gate events go on as before.
 * `plinth hooks validate` finds the same problems without running anything.
 *
 * Every run gets its own temporary home and workspace; `plinth call` talks to
 * the builtin demo MCP server (a real child process).
 */
import { appendFile, copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Sandbox, ROOT, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const BLOCK = join(ROOT, 'test', 'fixtures', 'hooks', 'block.js');
/** node, jiti and a server start on a slow shared machine: generous, but bounded. */
const TEST_TIMEOUT = 120_000;

const boxes: Sandbox[] = [];

beforeAll(() => {
  ensureBuilt();
}, 300_000);

afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function box(settings?: Record<string, unknown>): Promise<Sandbox> {
  const made = await sandbox('plinth-fail-closed-');
  boxes.push(made);
  if (settings) await made.settings(settings);
  return made;
}

/** A copy of block.js in the user folder, so that a test can edit or delete it. */
async function userScript(where: Sandbox, name = 'guard.js'): Promise<string> {
  const file = join(where.home, 'hooks-bin', name);
  await mkdir(dirname(file), { recursive: true });
  await copyFile(BLOCK, file);
  return file;
}

/** The user hook of every test: it blocks demo__echo (both the namespaced and the server's own name). */
const noEcho = (script: string, extra: Record<string, unknown> = {}) => ({ name: 'no-echo', command: 'node', args: [script, 'demo__echo', 'echo'], ...extra });

interface CallResult {
  ok: boolean;
  text?: string;
  error?: { code: string; message: string };
}

async function call(where: Sandbox, message: string) {
  const result = await run(where, ['call', 'demo__echo', '--args', JSON.stringify({ message }), '--json']);
  return { result, body: json<CallResult>(result) };
}

interface RunBody {
  decision: { allow: boolean; messages: string[]; systemMessages: string[]; blockedBy?: { plugin: string; by?: string; reason?: string; code?: string; fix?: string } };
  hooks: Array<{ hook: { id: string }; status: string; failure?: string; allow: boolean }>;
}

async function hooksRun(where: Sandbox, event: string, context: Record<string, unknown>) {
  const result = await run(where, ['hooks', 'run', event, '--context', JSON.stringify(context), '--json']);
  return { result, body: json<RunBody>(result) };
}

describe('the hooks plugin does not load', () => {
  test('a mistyped hooks setting (timeout: "5s"): plinth call is blocked (exit 5) naming the hooks plugin and the fix; the tool never runs', async () => {
    const where = await box();
    await where.settings({ hooks: { before_tool: [noEcho(BLOCK)] }, plugins: { hooks: { settings: { timeout: '5s' } } } });

    const { result, body } = await call(where, 'must not arrive');
    expectExit(result, 5);
    expect(body.ok).toBe(false);
    expect(body.error?.code).toBe('PLN_E_MCP_BLOCKED');
    expect(body.error?.message).toContain('plugin "hooks"');
    expect(body.error?.message).toContain('PLN_E_GUARD_UNAVAILABLE');
    expect(body.error?.message).toContain('PLN_E_SETTING_INVALID');
    // The fix: the setting to correct, or how to go on without the plugin.
    expect(body.error?.message).toContain('set plugins.hooks.settings.timeout to a number');
    expect(body.error?.message).toContain('plugins.hooks.enabled: false');
    expect(JSON.stringify(body)).not.toContain('must not arrive');
  }, TEST_TIMEOUT);

  test('perMinute: 0 is PLN_E_SETTING_INVALID naming the key, not a zod dump, and blocks the call the same way', async () => {
    const where = await box();
    await where.settings({ hooks: { before_tool: [noEcho(BLOCK)] }, plugins: { hooks: { settings: { perMinute: 0 } } } });

    const { result, body } = await call(where, 'must not arrive');
    expectExit(result, 5);
    expect(body.error?.message).toContain('PLN_E_GUARD_UNAVAILABLE');
    expect(body.error?.message).toContain('PLN_E_SETTING_INVALID: plugin "hooks": plugins.hooks.settings.perMinute: expected a positive integer');
    expect(body.error?.message).not.toMatch(/too_small|"code"|"path"|\[\s*\{/);

    const status = await run(where, ['up', '--once', '--json']);
    const hooks = json<{ plugins: Array<{ name: string; state: string; error?: { code: string; message: string } }> }>(status).plugins.find((p) => p.name === 'hooks');
    expect(hooks).toMatchObject({ state: 'failed', error: { code: 'PLN_E_SETTING_INVALID' } });
    expect(hooks?.error?.message).toBe('plugin "hooks": plugins.hooks.settings.perMinute: expected a positive integer');
  }, TEST_TIMEOUT);
});

describe('a user hook that cannot run blocks the gate event', () => {
  test('a pinned user hook whose script is then edited: blocked (exit 5) with the approve command; approving lets it run again', async () => {
    const where = await box();
    const script = await userScript(where);
    await where.settings({ hooks: { before_tool: [noEcho(script)] } });

    // First use pins it; it runs and allows ls.
    const first = await hooksRun(where, 'before_tool', { tool: 'ls' });
    expectExit(first.result, 0);
    expect(first.body.hooks.map((h) => `${h.hook.id} ${h.status}`)).toEqual(['user:no-echo ran']);

    await appendFile(script, '\n// edited after it was pinned\n');
    const edited = await hooksRun(where, 'before_tool', { tool: 'ls' });
    expectExit(edited.result, 5);
    expect(edited.body.decision.blockedBy).toMatchObject({ plugin: 'hooks', by: 'user:no-echo', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(edited.body.decision.blockedBy?.reason).toContain('changed');
    expect(edited.body.decision.blockedBy?.fix).toContain('plinth hooks trust user:no-echo');
    expect(edited.body.hooks).toMatchObject([{ hook: { id: 'user:no-echo' }, status: 'failed', failure: 'untrusted', allow: false }]);

    // plinth call is blocked too: the guard did not run, so the tool does not either.
    const { result, body } = await call(where, 'must not arrive');
    expectExit(result, 5);
    expect(body.error?.message).toContain('plinth hooks trust user:no-echo');

    // The human form of hooks run names the hook and the fix as well.
    const human = await run(where, ['hooks', 'run', 'before_tool', '--context', '{"tool":"ls"}']);
    expectExit(human, 5);
    expect(human.stdout).toContain('BLOCKED by user:no-echo');
    expect(human.stdout).toMatch(/^fix: review the change, then approve it: plinth hooks trust user:no-echo/m);

    expectExit(await run(where, ['hooks', 'trust', 'user:no-echo']), 0);
    const approved = await hooksRun(where, 'before_tool', { tool: 'ls' });
    expectExit(approved.result, 0);
    expect(approved.body.hooks.map((h) => h.status)).toEqual(['ran']);
  }, TEST_TIMEOUT);

  test('a missing script blocks before_tool even with onError: allow; on after_tool the same hook only fails as onError says', async () => {
    const where = await box();
    const missing = join(where.home, 'hooks-bin', 'gone.js');
    await where.settings({
      hooks: {
        before_tool: [noEcho(missing, { onError: 'allow' })],
        after_tool: [{ name: 'audit', command: 'node', args: [missing], onError: 'allow' }],
      },
    });

    const blocked = await hooksRun(where, 'before_tool', { tool: 'ls' });
    expectExit(blocked.result, 5);
    expect(blocked.body.decision.blockedBy).toMatchObject({ plugin: 'hooks', by: 'user:no-echo', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(blocked.body.decision.blockedBy?.reason).toContain(missing);
    expect(blocked.body.decision.blockedBy?.fix).toContain('restore the script');
    expect(blocked.body.hooks).toMatchObject([{ status: 'failed', failure: 'script_missing', allow: false }]);

    const { result } = await call(where, 'must not arrive');
    expectExit(result, 5);

    const after = await hooksRun(where, 'after_tool', { tool: 'ls' });
    expectExit(after.result, 0);
    expect(after.body.hooks).toMatchObject([{ hook: { id: 'user:audit' }, status: 'failed', failure: 'script_missing', allow: true }]);
  }, TEST_TIMEOUT);

  test('a user definition for before_tool that cannot be read blocks before_tool, naming the file and path; after_tool is unaffected', async () => {
    const where = await box();
    await where.settings({
      hooks: {
        before_tool: [noEcho(BLOCK, { timeout: '5s' })],
        after_tool: [{ name: 'fine', command: 'node', args: [BLOCK] }],
      },
    });
    const blocked = await hooksRun(where, 'before_tool', { tool: 'ls' });
    expectExit(blocked.result, 5);
    expect(blocked.body.decision.blockedBy).toMatchObject({ plugin: 'hooks', code: 'PLN_E_HOOK_INVALID' });
    expect(blocked.body.decision.blockedBy?.reason).toContain('hooks.before_tool[0].timeout');
    expect(blocked.body.decision.blockedBy?.fix).toContain('plinth hooks validate');

    const after = await hooksRun(where, 'after_tool', { tool: 'ls' });
    expectExit(after.result, 0);
  }, TEST_TIMEOUT);
});

describe('hooks nobody approved', () => {
  test('an unapproved workspace hook is skipped, the decision allows, and its system messages say so', async () => {
    const where = await box();
    const script = join(where.workspace, 'hooks', 'check.js');
    await mkdir(dirname(script), { recursive: true });
    await copyFile(BLOCK, script);
    await mkdir(join(where.workspace, '.plinth'), { recursive: true });
    await writeFile(join(where.workspace, '.plinth', 'settings.json'), JSON.stringify({ hooks: { before_tool: [{ name: 'check', command: 'node', args: ['hooks/check.js'] }] } }));

    const skipped = await hooksRun(where, 'before_tool', { tool: 'rm' });
    expectExit(skipped.result, 0);
    expect(skipped.body.decision.allow).toBe(true);
    expect(skipped.body.hooks).toMatchObject([{ hook: { id: 'workspace:check' }, status: 'skipped', failure: 'untrusted' }]);
    expect(skipped.body.decision.systemMessages.join('\n')).toContain('The workspace hook "workspace:check" was skipped on before_tool: it has not been approved');
    expect(skipped.body.decision.systemMessages.join('\n')).toContain('plinth hooks trust workspace:check');
  }, TEST_TIMEOUT);
});

describe('plinth hooks validate checks what a run would check', () => {
  test('a missing script, a command that is not allowed and an out-of-date approval are problems (exit 1, --json); a valid set passes', async () => {
    const where = await box();
    const edited = await userScript(where, 'edited.js');
    const settings = {
      hooks: {
        before_tool: [
          { name: 'gone', command: 'node', args: [join(where.home, 'nope.js')] },
          { name: 'curl', command: 'curl', args: ['https://example.invalid'] },
          { name: 'edited', command: 'node', args: [edited] },
        ],
      },
    };
    // A first run, with "edited" alone, pins it as it is now; then it is edited and the others are added.
    await where.settings({ hooks: { before_tool: [settings.hooks.before_tool[2]] } });
    expectExit((await hooksRun(where, 'before_tool', { tool: 'ls' })).result, 0);
    await appendFile(edited, '\n// changed\n');
    await where.settings(settings);

    const human = await run(where, ['hooks', 'validate']);
    expectExit(human, 1);
    expect(human.stdout).toContain('PLN_E_HOOK_UNRUNNABLE');
    expect(human.stdout).toContain(join(where.home, 'nope.js'));
    expect(human.stdout).not.toContain('are valid');

    const result = await run(where, ['hooks', 'validate', '--json']);
    expectExit(result, 1);
    const body = json<{ valid: boolean; hooks: number; problems: Array<{ code: string; hook?: string; failure?: string; hint?: string }> }>(result);
    expect(body.valid).toBe(false);
    expect(body.problems.map((p) => `${p.hook} ${p.code} ${p.failure}`).sort()).toEqual([
      'user:curl PLN_E_HOOK_UNRUNNABLE not_allowed',
      'user:edited PLN_E_HOOK_UNRUNNABLE untrusted',
      'user:gone PLN_E_HOOK_UNRUNNABLE script_missing',
    ]);
    expect(body.problems.find((p) => p.hook === 'user:edited')?.hint).toContain('plinth hooks trust user:edited');

    // Fixed: the script restored, curl removed, the edit approved.
    await copyFile(BLOCK, join(where.home, 'nope.js'));
    await where.settings({ hooks: { before_tool: [settings.hooks.before_tool[0], settings.hooks.before_tool[2]] } });
    expectExit(await run(where, ['hooks', 'trust', 'user:edited']), 0);
    const fixed = await run(where, ['hooks', 'validate', '--json']);
    expectExit(fixed, 0);
    expect(json(fixed)).toMatchObject({ valid: true, hooks: 2, problems: [] });
    await rm(join(where.home, 'nope.js'));
  }, TEST_TIMEOUT);

  test('an unapproved workspace hook is a warning, not a problem', async () => {
    const where = await box();
    await mkdir(join(where.workspace, '.plinth'), { recursive: true });
    await copyFile(BLOCK, join(where.workspace, 'check.js'));
    await writeFile(join(where.workspace, '.plinth', 'settings.json'), JSON.stringify({ hooks: { before_tool: [{ name: 'check', command: 'node', args: ['check.js'] }] } }));
    const result = await run(where, ['hooks', 'validate', '--json']);
    expectExit(result, 0);
    const body = json<{ valid: boolean; warnings: Array<{ hook?: string; failure?: string }> }>(result);
    expect(body.valid).toBe(true);
    expect(body.warnings).toMatchObject([{ hook: 'workspace:check', failure: 'untrusted' }]);
  }, TEST_TIMEOUT);
});
