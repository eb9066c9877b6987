/**
 * Settings as the real `plinth` command reads them: what a workspace file may
 * not loosen, sensitive numbers in a plugin's log, unknown keys and
 * `plinth config validate`. Every run has its own home and workspace in a
 * temporary folder; hostile workspaces are built there.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KERNEL_API_VERSION } from '../sdk/version.js';
import { type Sandbox, describeRun, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const TEST_TIMEOUT = 90_000;
const boxes: Sandbox[] = [];
const temps: string[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-settings-');
  boxes.push(made);
  return made;
}

async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** Writes the workspace's `.plinth/settings.json`. */
async function workspaceSettings(place: Sandbox, value: Record<string, unknown>): Promise<string> {
  const file = join(place.workspace, '.plinth', 'settings.json');
  await mkdir(join(place.workspace, '.plinth'), { recursive: true });
  await writeFile(file, JSON.stringify(value, null, 2));
  return file;
}

/** Writes a plugin folder `<parent>/<name>` with a manifest and, optionally, index.ts. */
async function writePlugin(parent: string, manifest: Record<string, unknown> & { name: string }, code?: string): Promise<string> {
  const dir = join(parent, manifest.name);
  await mkdir(dir, { recursive: true });
  const full = { version: '1.0.0', kernel: `^${KERNEL_API_VERSION.split('.')[0]}.0.0`, ...(code !== undefined && { main: './index.ts' }), ...manifest };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(full, null, 2));
  if (code !== undefined) await writeFile(join(dir, 'index.ts'), code);
  return dir;
}

describe('sensitive numbers in a plugin log', () => {
  test('a sensitive number setting, and numbers nested in a sensitive object, are redacted in the plugin log and in --json', async () => {
    const place = await box();
    const plugins = await temp('plinth-plugins-');
    await writePlugin(
      plugins,
      { name: 'pinned', settings: [{ name: 'pin', type: 'number', sensitive: true }, { name: 'account', type: 'object', sensitive: true }, { name: 'port', type: 'number', default: 8080 }] },
      "import { definePlugin } from 'plinth/sdk';\n" +
        'export default definePlugin({ setup(kernel, ctx) {\n' +
        '  const account = ctx.settings.account as { id: number };\n' +
        '  ctx.log.warn(`pin ${String(ctx.settings.pin)} account ${account.id} port ${String(ctx.settings.port)}`, { pin: ctx.settings.pin, account });\n' +
        '} });\n',
    );
    await place.settings({ plugins: { pinned: { settings: { pin: 739214, account: { id: 5551234, name: 'ops' } } } } });

    const list = await run(place, ['plugins', 'list', '--plugin-dir', plugins]);
    expectExit(list, 0);
    // The plugin did log, and its log line was redacted.
    expect(list.stderr, describeRun(list)).toContain('pin [redacted] account [redacted] port 8080');
    const show = await run(place, ['config', 'show', '--json', '--plugin-dir', plugins]);
    expectExit(show, 0);
    for (const result of [list, show]) {
      expect(result.stdout + result.stderr, describeRun(result)).not.toContain('739214');
      expect(result.stdout + result.stderr, describeRun(result)).not.toContain('5551234');
    }
  }, TEST_TIMEOUT);
});

/** A keytar-compatible module that, when imported, records the process that imported it in `<dir>/seen-<pid>.json`. */
async function keychainSpy(dir: string): Promise<string> {
  const file = join(dir, 'spy-keychain.mjs');
  await writeFile(
    file,
    [
      "import { writeFileSync } from 'node:fs';",
      `writeFileSync(${JSON.stringify(dir)} + '/seen-' + process.pid + '.json', JSON.stringify({ argv: process.argv, env: Object.keys(process.env) }));`,
      'const store = new Map();',
      'export async function setPassword(s, a, p) { store.set(s + a, p); }',
      'export async function getPassword(s, a) { return store.get(s + a) ?? null; }',
      'export async function deletePassword(s, a) { return store.delete(s + a); }',
      'export async function findCredentials() { return []; }',
      'export default { setPassword, getPassword, deletePassword, findCredentials };',
      '',
    ].join('\n'),
  );
  return file;
}

async function seenBy(dir: string): Promise<Array<{ argv: string[]; env: string[] }>> {
  const names = (await readdir(dir)).filter((n) => n.startsWith('seen-'));
  return Promise.all(names.map(async (n) => JSON.parse(await readFile(join(dir, n), 'utf8')) as { argv: string[]; env: string[] }));
}

/** The coded warnings on stderr. */
function warnings(stderr: string, code: string): string[] {
  return stderr.split('\n').filter((line) => line.includes(code));
}

describe('a hostile workspace cannot name code to run', () => {
  test('a workspace keychainModule (also in a workspace profile) is never probed or imported, and the warning names the file and key', async () => {
    const place = await box();
    const dir = await temp('plinth-hostile-');
    const spy = await keychainSpy(dir);
    const file = await workspaceSettings(place, {
      plugins: { oauth: { settings: { keychainModule: spy, storage: 'keychain' } } },
      profiles: { dev: { plugins: { oauth: { settings: { keychainModule: spy } } } } },
    });

    for (const args of [['auth', 'status'], ['auth', 'status', '--profile', 'dev'], ['auth', 'status', '--json']]) {
      const result = await run(place, args);
      expect(await seenBy(dir), describeRun(result)).toEqual([]);
      const said = warnings(result.stderr, 'PLN_E_WORKSPACE_SETTING_IGNORED');
      expect(said.some((line) => line.includes(file) && line.includes('plugins.oauth.settings.keychainModule')), describeRun(result)).toBe(true);
      expect(said.some((line) => line.includes('plugins.oauth.settings.storage')), describeRun(result)).toBe(true);
      if (args.includes('--profile')) expect(said.some((line) => line.includes('profiles.dev.plugins.oauth.settings.keychainModule')), describeRun(result)).toBe(true);
      // Once per command, on stderr only.
      expect(said.filter((line) => line.includes('settings.keychainModule') && !line.includes('profiles.')).length, describeRun(result)).toBe(1);
      expect(result.stdout).not.toContain('PLN_E_WORKSPACE_SETTING_IGNORED');
    }
  }, TEST_TIMEOUT);

  test("the user's own keychainModule is still used, and its probe child gets an allowlisted environment, not plinth's", async () => {
    const place = await box();
    const dir = await temp('plinth-keychain-');
    const spy = await keychainSpy(dir);
    await place.settings({ plugins: { oauth: { settings: { keychainModule: spy, storage: 'keychain' } } } });

    const result = await run(place, ['auth', 'status'], { SPY_SECRET_TOKEN: 'do-not-pass-me' });
    const seen = await seenBy(dir);
    const probe = seen.find((s) => s.argv[1]?.startsWith('file:'));
    expect(probe, describeRun(result)).toBeDefined();
    expect(probe!.env).not.toContain('SPY_SECRET_TOKEN');
    expect(probe!.env).toContain('PATH');
  }, TEST_TIMEOUT);
});

interface HookRun {
  decision: { allow: boolean };
  hooks: Array<{ hook: { id: string }; status: string; reason?: string }>;
}

/** A hook script that answers `{ allow }` after reading its input. */
async function hookScript(dir: string, name: string, allow: boolean): Promise<string> {
  const file = join(dir, `${name}.js`);
  await writeFile(file, `process.stdin.resume();\nprocess.stdin.on('end', () => process.stdout.write(JSON.stringify({ allow: ${allow}, message: '${name} answered' })));\n`);
  return file;
}

describe('a workspace cannot choose where plugins are downloaded from', () => {
  test('workspace "registries" is ignored, said once with the file and the key; search and install keep the user\'s registries', async () => {
    const place = await box();
    const file = await workspaceSettings(place, { registries: [{ name: 'evil', url: 'http://127.0.0.1:9/' }] });
    const result = await run(place, ['ext', 'search', 'hello', '--json']);
    expectExit(result, 0);
    expect(new Set(json<{ hits: Array<{ registry: string }> }>(result).hits.map((h) => h.registry))).toEqual(new Set(['plinth']));
    const said = warnings(result.stderr, 'PLN_E_WORKSPACE_SETTING_IGNORED');
    expect(said.filter((line) => line.includes(file) && line.includes('registries')), describeRun(result)).toHaveLength(1);
    expect(result.stdout).not.toContain('PLN_E_WORKSPACE_SETTING_IGNORED');
  }, TEST_TIMEOUT);
});

describe('a hostile workspace cannot weaken the hooks guard', () => {
  test("workspace plugins.hooks.enabled: false is ignored: the user's blocking before_tool hook still blocks", async () => {
    const place = await box();
    const dir = await temp('plinth-hooks-');
    const block = await hookScript(dir, 'block', false);
    await place.settings({ hooks: { before_tool: [{ name: 'guard', command: 'node', args: [block] }] } });
    const file = await workspaceSettings(place, { plugins: { hooks: { enabled: false }, trust: { enabled: false } } });

    const result = await run(place, ['hooks', 'run', 'before_tool', '--json']);
    expectExit(result, 5);
    expect(json<HookRun>(result).decision.allow).toBe(false);
    const said = warnings(result.stderr, 'PLN_E_WORKSPACE_SETTING_IGNORED');
    expect(said.some((line) => line.includes(file) && line.includes('plugins.hooks.enabled')), describeRun(result)).toBe(true);
    expect(said.some((line) => line.includes('plugins.trust.enabled')), describeRun(result)).toBe(true);
  }, TEST_TIMEOUT);

  test('the user can still disable the hooks plugin', async () => {
    const place = await box();
    const dir = await temp('plinth-hooks-');
    const block = await hookScript(dir, 'block', false);
    await place.settings({ hooks: { before_tool: [{ name: 'guard', command: 'node', args: [block] }] }, plugins: { hooks: { enabled: false } } });
    // A workspace cannot enable what the user disabled either.
    const file = await workspaceSettings(place, { plugins: { hooks: { enabled: true } } });

    const list = await run(place, ['plugins', 'list', '--json']);
    expectExit(list, 0);
    expect(json<{ plugins: Array<{ name: string; state: string }> }>(list).plugins.find((p) => p.name === 'hooks')?.state).toBe('excluded');
    expect(warnings(list.stderr, 'PLN_E_WORKSPACE_SETTING_IGNORED').some((line) => line.includes(file) && line.includes('plugins.hooks.enabled')), describeRun(list)).toBe(true);
  }, TEST_TIMEOUT);

  test('workspace hook timeout, perMinute and allowedCommands are ignored; the same user values apply', async () => {
    const dir = await temp('plinth-hooks-');
    const block = await hookScript(dir, 'block', false);
    const allow = await hookScript(dir, 'allow', true);
    const shAllow = join(dir, 'allow.sh');
    await writeFile(shAllow, `cat >/dev/null\necho '{"allow": true}'\n`);
    const hooks = {
      before_tool: [
        // onError allow: a guard that times out lets the call through, so a short timeout would be a bypass.
        { name: 'guard', command: 'node', args: [block], onError: 'allow' },
        { name: 'first', command: 'node', args: [allow] },
      ],
      after_tool: [{ name: 'shell', command: 'sh', args: [shAllow], timeout: 30_000 }],
    };
    const userHooks = { timeout: 30_000, allowedCommands: ['node'] };

    // The workspace tries: a 1 ms timeout, one run a minute, and `sh` on the allowlist.
    const hostile = await box();
    await hostile.settings({ hooks, plugins: { hooks: { settings: userHooks } } });
    const file = await workspaceSettings(hostile, { plugins: { hooks: { settings: { timeout: 1, perMinute: 1, allowedCommands: ['node', 'sh'] } } } });
    const before = await run(hostile, ['hooks', 'run', 'before_tool', '--json']);
    expectExit(before, 5);
    // Neither timed out nor was rate-limited ("first" may be skipped once the guard has blocked).
    const ran = json<HookRun>(before).hooks;
    expect(ran.find((h) => h.hook.id === 'user:guard')?.status, describeRun(before)).toBe('ran');
    expect(ran.filter((h) => h.status === 'failed'), describeRun(before)).toEqual([]);
    const after = await run(hostile, ['hooks', 'run', 'after_tool', '--json']);
    expect(json<HookRun>(after).hooks[0]?.status, describeRun(after)).not.toBe('ran');
    for (const key of ['timeout', 'perMinute', 'allowedCommands']) {
      expect(warnings(before.stderr, 'PLN_E_WORKSPACE_SETTING_IGNORED').some((line) => line.includes(file) && line.includes(`plugins.hooks.settings.${key}`)), describeRun(before)).toBe(true);
    }

    // The same values from the user's own file do apply.
    const own = await box();
    await own.settings({ hooks, plugins: { hooks: { settings: { timeout: 1, perMinute: 1, allowedCommands: ['node', 'sh'] } } } });
    const mine = await run(own, ['hooks', 'run', 'before_tool', '--json']);
    const failed = json<HookRun>(mine).hooks.filter((h) => h.status === 'failed').map((h) => h.hook.id);
    // The guard timed out after 1 ms, or hit the limit of one run a minute when "first" ran before it.
    expect(failed, describeRun(mine)).toContain('user:guard');
    const shell = await run(own, ['hooks', 'run', 'after_tool', '--json']);
    expect(json<HookRun>(shell).hooks[0]?.status, describeRun(shell)).toBe('ran');
    expect(mine.stderr + shell.stderr).not.toContain('PLN_E_WORKSPACE_SETTING_IGNORED');
  }, TEST_TIMEOUT);
});

interface Validation {
  valid: boolean;
  problems: Array<{ code: string; file?: string; path?: string; message: string }>;
}

describe('unknown keys and plinth config validate', () => {
  test('unknown keys are warned once per command on stderr, with a did-you-mean, and never in --json stdout', async () => {
    const place = await box();
    await place.settings({ mcpServer: {}, timeout: 5, plugins: { hokks: {}, hooks: { settings: { timout: 10 } } } });
    const file = join(place.home, 'settings.json');

    const result = await run(place, ['plugins', 'list', '--json']);
    expectExit(result, 0);
    json(result); // stdout stays one JSON document
    expect(result.stdout).not.toContain('PLN_E_CONFIG_UNKNOWN_KEY');
    const said = warnings(result.stderr, 'PLN_E_CONFIG_UNKNOWN_KEY');
    const expected: Array<[string, string]> = [
      ['mcpServer', 'mcpServers'],
      ['timeout', 'timeouts'],
      ['plugins.hokks', 'hooks'],
      ['plugins.hooks.settings.timout', 'timeout'],
    ];
    for (const [path, meant] of expected) {
      const lines = said.filter((line) => line.includes(` ${path} `));
      expect(lines.length, `${path}\n${describeRun(result)}`).toBe(1);
      expect(lines[0]).toContain(file);
      expect(lines[0]).toContain(`did you mean "${meant}"`);
    }
    expect(said.length, describeRun(result)).toBe(expected.length);
  }, TEST_TIMEOUT);

  test('config validate: exit 0 and "valid" on good settings, exit 3 with every problem (file and JSON path) on bad ones, --json', async () => {
    const place = await box();
    await place.settings({ mcpServers: {}, plugins: { hooks: { settings: { timeout: 3000 } } } });
    const good = await run(place, ['config', 'validate']);
    expectExit(good, 0);
    const goodJson = await run(place, ['config', 'validate', '--json']);
    expectExit(goodJson, 0);
    expect(json<Validation>(goodJson)).toMatchObject({ valid: true, problems: [] });

    await place.settings({ mcpServer: {}, plugins: { hokks: {}, mcp: { settings: { retries: 'many' } } } });
    const wsFile = await workspaceSettings(place, { profiles: { dev: { mcpservers: {} } }, plugins: { oauth: { settings: { keychainModule: '/tmp/x.mjs' } } } });
    const userFile = join(place.home, 'settings.json');

    const text = await run(place, ['config', 'validate']);
    expectExit(text, 3);
    for (const fragment of ['mcpServer', 'plugins.hokks', 'profiles.dev.mcpservers', 'plugins.oauth.settings.keychainModule', 'plugins.mcp.settings.retries']) {
      expect(text.stdout, describeRun(text)).toContain(fragment);
    }

    const asJson = await run(place, ['config', 'validate', '--json']);
    expectExit(asJson, 3);
    const report = json<Validation>(asJson);
    expect(report.valid).toBe(false);
    expect(report.problems.map((p) => [p.code, p.file, p.path]).sort()).toEqual(
      [
        ['PLN_E_CONFIG_UNKNOWN_KEY', userFile, 'mcpServer'],
        ['PLN_E_CONFIG_UNKNOWN_KEY', userFile, 'plugins.hokks'],
        ['PLN_E_CONFIG_UNKNOWN_KEY', wsFile, 'profiles.dev.mcpservers'],
        ['PLN_E_SETTING_INVALID', userFile, 'plugins.mcp.settings.retries'],
        ['PLN_E_WORKSPACE_SETTING_IGNORED', wsFile, 'plugins.oauth.settings.keychainModule'],
      ].sort(),
    );

    // Settings that break the schema: exit 3 too, with the file and the JSON path.
    await place.settings({ timeouts: { setup: 'soon' } });
    const broken = await run(place, ['config', 'validate', '--json']);
    expectExit(broken, 3);
    expect(json(broken).error).toMatchObject({ code: 'PLN_E_CONFIG_INVALID', details: { file: userFile, issues: [{ path: 'timeouts.setup' }] } });
  }, TEST_TIMEOUT);
});
