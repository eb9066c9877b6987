import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { settingSchema, type SettingDecl } from '../sdk/manifest.js';
import { isPlinthError, type PlinthError } from '../sdk/errors.js';
import { disabledPlugins, loadConfig, pluginDirScopes, settingsFiles, timeouts, type Config } from '../kernel/config/load.js';
import { resolvePluginSettings, sensitiveValues } from '../kernel/config/plugin-settings.js';
import { DEFAULT_TIMEOUTS } from '../kernel/config/schema.js';
import { knownKeys, unknownKeys } from '../kernel/config/unknown-keys.js';
import { restrictWorkspace, workspacePolicy } from '../kernel/config/workspace-policy.js';
import { rejection } from './support/errors.js';

let root: string;
let home: string;
let workspace: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'plinth-config-'));
  home = path.join(root, 'home');
  workspace = path.join(root, 'project');
  await mkdir(path.join(workspace, '.plinth'), { recursive: true });
  await mkdir(home, { recursive: true });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const userFile = (): string => path.join(home, 'settings.json');
const workspaceFile = (): string => path.join(workspace, '.plinth', 'settings.json');

async function writeUser(settings: unknown): Promise<void> {
  await writeFile(userFile(), typeof settings === 'string' ? settings : JSON.stringify(settings, null, 2));
}
async function writeWorkspace(settings: unknown): Promise<void> {
  await writeFile(workspaceFile(), typeof settings === 'string' ? settings : JSON.stringify(settings, null, 2));
}

function load(options: { profile?: string; env?: Record<string, string | undefined> } = {}): Promise<Config> {
  return loadConfig({ home, workspace, env: {}, ...options });
}

/** The PlinthError a function throws. */
function thrown(fn: () => unknown): PlinthError {
  try {
    fn();
  } catch (error) {
    if (isPlinthError(error)) return error;
    throw error;
  }
  throw new Error('expected a PlinthError, nothing was thrown');
}

describe('loadConfig: files and merging', () => {
  it('works with neither file present', async () => {
    const config = await load();
    expect(config.settings).toEqual({});
    expect(config.profile).toBeUndefined();
    expect(config.files).toEqual([
      { scope: 'user', file: userFile(), exists: false },
      { scope: 'workspace', file: workspaceFile(), exists: false },
    ]);
  });

  it('treats an empty file as no settings', async () => {
    await writeUser('  \n');
    const config = await load();
    expect(config.settings).toEqual({});
    expect(config.files[0]?.exists).toBe(true);
  });

  it('merges workspace over user, deeply for objects', async () => {
    await writeUser({
      plugins: { mcp: { enabled: true, settings: { retries: 1, region: 'eu' } } },
      services: { 'transport:stdio': 'transport-stdio' },
      timeouts: { setup: 2000, teardown: 3000 },
    });
    await writeWorkspace({
      plugins: { mcp: { settings: { retries: 5 } }, health: { enabled: false } },
      timeouts: { setup: 4000 },
    });

    const { settings } = await load();

    expect(settings.plugins).toEqual({
      mcp: { enabled: true, settings: { retries: 5, region: 'eu' } },
      health: { enabled: false },
    });
    expect(settings.services).toEqual({ 'transport:stdio': 'transport-stdio' });
    expect(settings.timeouts).toEqual({ setup: 4000, teardown: 3000 });
  });

  it('replaces arrays rather than merging them', async () => {
    await writeUser({ plugins: { hooks: { settings: { allow: ['a', 'b'] } } }, tags: ['x', 'y'] });
    await writeWorkspace({ plugins: { hooks: { settings: { allow: ['c'] } } }, tags: ['z'] });

    const { settings } = await load();

    expect(settings.plugins?.hooks?.settings?.allow).toEqual(['c']);
    expect(settings.tags).toEqual(['z']);
  });

  it('passes plugin-owned sections through untouched', async () => {
    const mcpServers = { github: { command: 'gh-mcp', args: ['--stdio'], env: { LEVEL: 'debug' } } };
    await writeUser({ mcpServers, hooks: { before_tool: [{ command: './check.sh' }] } });

    const { settings } = await load();

    expect(settings.mcpServers).toEqual(mcpServers);
    expect(settings.hooks).toEqual({ before_tool: [{ command: './check.sh' }] });
  });

  it('resolves pluginDirs against the folder of their file and concatenates them, user first', async () => {
    await writeUser({ pluginDirs: ['extra', '/opt/plinth-plugins'] });
    await writeWorkspace({ pluginDirs: ['local-plugins', '../vendor'] });

    const { settings } = await load();

    expect(settings.pluginDirs).toEqual([
      path.join(home, 'extra'),
      path.resolve('/opt/plinth-plugins'),
      path.join(workspace, '.plinth', 'local-plugins'),
      path.join(workspace, 'vendor'),
    ]);
  });

  it('says which file named each plugin folder: the workspace (also by its profile) or the user', async () => {
    await writeUser({ pluginDirs: ['extra', '../shared'], profiles: { prod: { pluginDirs: ['prod-user'] } } });
    await writeWorkspace({ pluginDirs: ['local-plugins', '../../shared'], profiles: { prod: { pluginDirs: ['prod-ws'] } } });

    expect(pluginDirScopes(await load({ profile: 'prod' }))).toEqual([
      { dir: path.join(home, 'extra'), scope: 'user' },
      // Named by both files: the user chose it.
      { dir: path.join(root, 'shared'), scope: 'user' },
      { dir: path.join(workspace, '.plinth', 'local-plugins'), scope: 'workspace' },
      { dir: path.join(home, 'prod-user'), scope: 'user' },
      { dir: path.join(workspace, '.plinth', 'prod-ws'), scope: 'workspace' },
    ]);
  });

  it('does not let a "__proto__" key change object prototypes', async () => {
    await writeUser('{ "plugins": { "mcp": { "settings": { "__proto__": { "polluted": true } } } } }');
    await writeWorkspace('{ "plugins": { "mcp": { "settings": { "__proto__": { "also": true } } } } }');

    const { settings } = await load();

    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(settings.plugins?.mcp?.settings)).toBe(Object.prototype);
  });
});

describe('loadConfig: profiles', () => {
  beforeEach(async () => {
    await writeUser({
      timeouts: { setup: 1000 },
      pluginDirs: ['base'],
      profiles: {
        prod: { timeouts: { setup: 9000 }, plugins: { oauth: { enabled: false } } },
        ci: { services: { 'secret-store': 'secrets-file' } },
      },
    });
    await writeWorkspace({
      plugins: { oauth: { settings: { clientId: 'abc' } } },
      profiles: { prod: { timeouts: { teardown: 800 }, pluginDirs: ['prod-plugins'] } },
    });
  });

  it('applies no profile by default', async () => {
    const config = await load();
    expect(config.profile).toBeUndefined();
    expect(config.settings.timeouts).toEqual({ setup: 1000 });
  });

  it('overlays the profile named in the options, merged from both files', async () => {
    const config = await load({ profile: 'prod' });

    expect(config.profile).toBe('prod');
    expect(config.settings.timeouts).toEqual({ setup: 9000, teardown: 800 });
    expect(config.settings.plugins?.oauth).toEqual({ enabled: false, settings: { clientId: 'abc' } });
    expect(config.settings.pluginDirs).toEqual([path.join(home, 'base'), path.join(workspace, '.plinth', 'prod-plugins')]);
  });

  it('takes the profile from PLINTH_PROFILE when the options name none', async () => {
    const config = await load({ env: { PLINTH_PROFILE: 'ci' } });
    expect(config.profile).toBe('ci');
    expect(config.settings.services).toEqual({ 'secret-store': 'secrets-file' });
  });

  it('prefers the option over PLINTH_PROFILE', async () => {
    const config = await load({ profile: 'ci', env: { PLINTH_PROFILE: 'prod' } });
    expect(config.profile).toBe('ci');
  });

  it('refuses an unknown profile and lists the defined ones', async () => {
    const error = await rejection(load({ profile: 'staging' }));
    expect(error.code).toBe('PLN_E_PROFILE_UNKNOWN');
    expect(error.message).toContain('staging');
    expect(error.message).toContain('ci, prod');
    expect(error.details).toMatchObject({ profile: 'staging', defined: ['ci', 'prod'] });
  });

  it('does not treat an inherited property name as a profile', async () => {
    const error = await rejection(load({ profile: 'constructor' }));
    expect(error.code).toBe('PLN_E_PROFILE_UNKNOWN');
  });
});

describe('loadConfig: errors point at file and place', () => {
  it('reports invalid JSON with file, line and column', async () => {
    await writeWorkspace('{\n  "plugins": {\n    "mcp": { "enabled": true, }\n  }\n}\n');

    const error = await rejection(load());

    expect(error.code).toBe('PLN_E_CONFIG_PARSE');
    expect(error.message).toContain(`${workspaceFile()}:3:`);
    expect(error.details).toMatchObject({ file: workspaceFile(), line: 3 });
  });

  it('names the position of a missing comma', async () => {
    await writeUser('{\n  "a": 1\n  "b": 2\n}');
    const error = await rejection(load());
    expect(error.code).toBe('PLN_E_CONFIG_PARSE');
    expect(error.details).toMatchObject({ file: userFile(), line: 3, column: 3 });
  });

  it('never quotes the file text in a parse error', async () => {
    await writeUser('{ "plugins": { "oauth": { "settings": { "token": "sk-live-0123456789" } } } oops }');
    const error = await rejection(load());
    expect(error.code).toBe('PLN_E_CONFIG_PARSE');
    expect(JSON.stringify(error.toJSON())).not.toContain('sk-live-0123456789');
  });

  it('reports schema violations with the file and each JSON path', async () => {
    await writeUser({ plugins: { mcp: { enabled: true } } });
    await writeWorkspace({
      plugins: { mcp: { enabled: 'yes' } },
      profiles: { prod: { timeouts: { setup: -5 } } },
    });

    const error = await rejection(load());

    expect(error.code).toBe('PLN_E_CONFIG_INVALID');
    expect(error.message).toContain(workspaceFile());
    expect(error.message).toContain('plugins.mcp.enabled');
    expect(error.message).toContain('profiles.prod.timeouts.setup');
    const details = error.details as { file: string; issues: Array<{ path: string; message: string }> };
    expect(details.file).toBe(workspaceFile());
    expect(details.issues.map((issue) => issue.path)).toEqual(['plugins.mcp.enabled', 'profiles.prod.timeouts.setup']);
    expect(details.issues[0]?.message).toContain('true or false');
  });

  it('checks each file on its own, so the error names the right one', async () => {
    await writeUser({ timeouts: { shutdown: 1.5 } });
    await writeWorkspace({ timeouts: { shutdown: 1000 } });

    const error = await rejection(load());

    expect(error.code).toBe('PLN_E_CONFIG_INVALID');
    expect(error.details).toMatchObject({ file: userFile(), issues: [{ path: 'timeouts.shutdown' }] });
  });

  it('rejects a settings file that is not an object', async () => {
    await writeUser('[]');
    const error = await rejection(load());
    expect(error.code).toBe('PLN_E_CONFIG_INVALID');
    expect(error.message).toContain('(top level)');
  });

  it('rejects a misspelt key in a kernel-owned section', async () => {
    await writeUser({ plugins: { mcp: { enable: false } } });
    const error = await rejection(load());
    expect(error.code).toBe('PLN_E_CONFIG_INVALID');
    expect(error.message).toContain('plugins.mcp');
    expect(error.message).toContain('enable');
  });

  it('reports an unreadable settings path', async () => {
    await mkdir(userFile());
    const error = await rejection(load());
    expect(error.code).toBe('PLN_E_CONFIG_READ');
    expect(error.details).toMatchObject({ file: userFile() });
  });
});

describe('disabledPlugins and timeouts', () => {
  it('says where the winning enabled: false came from', async () => {
    await writeUser({
      plugins: { health: { enabled: false }, oauth: { enabled: false }, trust: { enabled: false } },
      profiles: { offline: { plugins: { marketplace: { enabled: false } } } },
    });
    await writeWorkspace({ plugins: { oauth: { enabled: true }, trust: { enabled: false }, sandbox: { enabled: false } } });

    const disabled = disabledPlugins(await load({ profile: 'offline' }));

    expect(Object.fromEntries(disabled)).toEqual({
      health: 'user settings',
      trust: 'workspace settings',
      sandbox: 'workspace settings',
      marketplace: 'profile offline',
    });
  });

  it('works on a config built by hand', () => {
    const config: Config = { settings: { plugins: { mcp: { enabled: false } } }, files: [], profile: undefined };
    expect(disabledPlugins(config).get('mcp')).toBe('settings');
  });

  it('fills in default timeouts', async () => {
    await writeUser({ timeouts: { teardown: 250 } });
    expect(timeouts(await load())).toEqual({ ...DEFAULT_TIMEOUTS, teardown: 250 });
    expect(DEFAULT_TIMEOUTS).toEqual({ setup: 10_000, teardown: 5_000, shutdown: 15_000, event: 60_000 });
  });
});

describe('resolvePluginSettings', () => {
  const decl = (input: Partial<SettingDecl> & { name: string }): SettingDecl => settingSchema.parse(input);

  const decls: SettingDecl[] = [
    decl({ name: 'endpoint', type: 'string', default: 'https://api.example.com' }),
    decl({ name: 'retries', type: 'number', envVar: 'MCP_RETRIES', default: 3 }),
    decl({ name: 'verbose', type: 'boolean', envVar: 'MCP_VERBOSE' }),
    decl({ name: 'headers', type: 'object', envVar: 'MCP_HEADERS' }),
    decl({ name: 'scopes', type: 'array', envVar: 'MCP_SCOPES' }),
  ];

  it('takes settings values first, then the environment, then the default', () => {
    const resolved = resolvePluginSettings('mcp', decls, { endpoint: 'http://localhost:8080' }, { MCP_RETRIES: '7' });
    expect(resolved).toEqual({ endpoint: 'http://localhost:8080', retries: 7 });

    const fromValues = resolvePluginSettings('mcp', decls, { retries: 2 }, { MCP_RETRIES: '7' });
    expect(fromValues.retries).toBe(2);

    const fromDefault = resolvePluginSettings('mcp', decls, undefined, {});
    expect(fromDefault).toEqual({ endpoint: 'https://api.example.com', retries: 3 });
  });

  it('coerces environment strings to the declared type', () => {
    const resolved = resolvePluginSettings('mcp', decls, {}, {
      MCP_RETRIES: ' 12 ',
      MCP_VERBOSE: '1',
      MCP_HEADERS: '{"x-trace":"on"}',
      MCP_SCOPES: '["read","write"]',
    });
    expect(resolved).toMatchObject({ retries: 12, verbose: true, headers: { 'x-trace': 'on' }, scopes: ['read', 'write'] });

    for (const [raw, expected] of [['true', true], ['FALSE', false], ['0', false]] as const) {
      expect(resolvePluginSettings('mcp', decls, {}, { MCP_VERBOSE: raw }).verbose).toBe(expected);
    }
  });

  it('treats null and an empty environment variable as unset', () => {
    const resolved = resolvePluginSettings('mcp', decls, { retries: null }, { MCP_VERBOSE: '' });
    expect(resolved).toEqual({ endpoint: 'https://api.example.com', retries: 3 });
  });

  it('keeps undeclared keys as they are', () => {
    const resolved = resolvePluginSettings('mcp', decls, { experimental: { x: 1 } }, {});
    expect(resolved.experimental).toEqual({ x: 1 });
  });

  it('rejects a settings value of the wrong type, naming plugin, path and expected type', () => {
    const error = thrown(() => resolvePluginSettings('mcp', decls, { retries: 'many' }, {}));
    expect(error.code).toBe('PLN_E_SETTING_INVALID');
    expect(error.plugin).toBe('mcp');
    expect(error.message).toContain('plugins.mcp.settings.retries');
    expect(error.message).toContain('number');
  });

  it('rejects an environment value that does not coerce, naming the variable', () => {
    for (const env of [{ MCP_RETRIES: 'ten' }, { MCP_VERBOSE: 'yes' }, { MCP_HEADERS: '{oops' }, { MCP_SCOPES: '{"a":1}' }]) {
      const error = thrown(() => resolvePluginSettings('mcp', decls, {}, env));
      expect(error.code).toBe('PLN_E_SETTING_INVALID');
      expect(error.plugin).toBe('mcp');
      expect(error.message).toContain(Object.keys(env)[0]);
    }
  });

  it('rejects a declared default of the wrong type', () => {
    const error = thrown(() => resolvePluginSettings('acme', [decl({ name: 'port', type: 'number', default: '80' })], {}, {}));
    expect(error.code).toBe('PLN_E_SETTING_INVALID');
    expect(error.message).toContain('default');
  });

  it('requires a required setting, naming the path and the variable that could supply it', () => {
    const required = [decl({ name: 'apiKey', required: true, sensitive: true, envVar: 'ACME_API_KEY' })];

    const error = thrown(() => resolvePluginSettings('acme', required, {}, {}));
    expect(error.code).toBe('PLN_E_SETTING_REQUIRED');
    expect(error.plugin).toBe('acme');
    expect(error.message).toContain('plugins.acme.settings.apiKey');
    expect(error.message).toContain('ACME_API_KEY');

    expect(resolvePluginSettings('acme', required, {}, { ACME_API_KEY: 'k-123456' })).toEqual({ apiKey: 'k-123456' });
  });

  it('never puts a sensitive value in an error', () => {
    const secret = 'sk-live-9f8e7d6c5b4a';
    const sensitive = [
      decl({ name: 'token', type: 'number', sensitive: true, envVar: 'ACME_TOKEN' }),
      decl({ name: 'headers', type: 'array', sensitive: true, envVar: 'ACME_HEADERS' }),
    ];
    const attempts = [
      () => resolvePluginSettings('acme', sensitive, { token: secret }, {}),
      () => resolvePluginSettings('acme', sensitive, {}, { ACME_TOKEN: secret }),
      () => resolvePluginSettings('acme', sensitive.slice(1), {}, { ACME_HEADERS: `{"auth":"${secret}"` }),
      () => resolvePluginSettings('acme', sensitive.slice(1), {}, { ACME_HEADERS: `{"auth":"${secret}"}` }),
    ];
    for (const attempt of attempts) {
      const error = thrown(attempt);
      expect(error.code).toBe('PLN_E_SETTING_INVALID');
      expect(JSON.stringify(error.toJSON())).not.toContain(secret);
      expect(String(error.stack)).not.toContain(secret);
    }
  });

  it('lists the strings of sensitive settings for the redactor', () => {
    const withSecrets = [
      decl({ name: 'token', sensitive: true }),
      decl({ name: 'auth', type: 'object', sensitive: true }),
      decl({ name: 'endpoint' }),
      decl({ name: 'unset', sensitive: true }),
    ];
    const resolved = resolvePluginSettings('acme', withSecrets, { token: 't-1234', auth: { bearer: 'b-5678' }, endpoint: 'https://x' }, {});
    expect(sensitiveValues(withSecrets, resolved)).toEqual(['t-1234', 'b-5678']);
  });

  it('lists sensitive numbers too, also nested ones, but not booleans or numbers of ordinary settings', () => {
    const withNumbers = [
      decl({ name: 'pin', type: 'number', sensitive: true }),
      decl({ name: 'account', type: 'object', sensitive: true }),
      decl({ name: 'port', type: 'number' }),
    ];
    const resolved = resolvePluginSettings('acme', withNumbers, { pin: 739214, account: { id: 55512, codes: [8812, 0.5], verified: true }, port: 8080 }, {});
    expect(sensitiveValues(withNumbers, resolved)).toEqual(['739214', '55512', '8812', '0.5']);
  });
});

describe('restrictWorkspace: a workspace file may tighten, never loosen', () => {
  const manifests = [
    { name: 'guarded', guard: true, guards: [], settings: [settingSchema.parse({ name: 'module', scope: 'user' }), settingSchema.parse({ name: 'color' })] },
    { name: 'other', guard: false, guards: [], settings: [] },
    { name: 'gatekeeper', guard: false, guards: ['before_tool'], settings: [] },
  ];
  const policy = workspacePolicy(manifests);

  it('drops user-only settings, a guard disabled, a plugin enabled against the user, and timeouts, each with a warning naming file and path', async () => {
    await writeUser({ plugins: { other: { enabled: false }, guarded: { settings: { module: 'mine' } } } });
    await writeWorkspace({
      timeouts: { setup: 1 },
      plugins: { guarded: { enabled: false, settings: { module: '/evil.mjs', color: 'red' } }, other: { enabled: true } },
    });
    const { config, ignored } = restrictWorkspace(await load(), policy);

    expect(config.settings.plugins?.guarded).toEqual({ settings: { module: 'mine', color: 'red' } });
    expect(config.settings.plugins?.other?.enabled).toBe(false);
    expect(config.settings.timeouts).toBeUndefined();
    expect(disabledPlugins(config)).toEqual(new Map([['other', 'user settings']]));
    expect(ignored.map((e) => e.code)).toEqual(Array(4).fill('PLN_E_WORKSPACE_SETTING_IGNORED'));
    expect(ignored.map((e) => e.details?.path).sort()).toEqual(['plugins.guarded.enabled', 'plugins.guarded.settings.module', 'plugins.other.enabled', 'timeouts']);
    expect(ignored.every((e) => e.details?.file === workspaceFile())).toBe(true);
    // The layers plugins read are the restricted ones too.
    expect(config.layers?.find((l) => l.scope === 'workspace')?.settings.plugins?.guarded?.settings).toEqual({ color: 'red' });
    // Never the value.
    expect(JSON.stringify(ignored.map((e) => e.toJSON()))).not.toContain('evil');
  });

  it("applies to the workspace file's profiles; the user's profile may set them", async () => {
    await writeUser({ profiles: { dev: { plugins: { guarded: { settings: { module: 'user-dev' } } } } } });
    await writeWorkspace({ profiles: { dev: { plugins: { guarded: { enabled: false, settings: { module: '/evil.mjs' } } } }, other: { timeouts: { event: 5 } } } });
    const { config, ignored } = restrictWorkspace(await load({ profile: 'dev' }), policy);
    expect(config.settings.plugins?.guarded).toEqual({ settings: { module: 'user-dev' } });
    // Only the profile in use is reported.
    expect(ignored.map((e) => e.details?.path).sort()).toEqual(['profiles.dev.plugins.guarded.enabled', 'profiles.dev.plugins.guarded.settings.module']);
  });

  it('counts a plugin that guards events as a guard: a workspace cannot disable it', async () => {
    await writeWorkspace({ plugins: { gatekeeper: { enabled: false } } });
    const { config, ignored } = restrictWorkspace(await load(), policy);
    expect(config.settings.plugins?.gatekeeper?.enabled).toBeUndefined();
    expect(ignored.map((e) => e.details?.path)).toEqual(['plugins.gatekeeper.enabled']);
  });

  it('keeps what a workspace may set: a plain setting, a non-guard disabled', async () => {
    await writeWorkspace({ plugins: { other: { enabled: false }, guarded: { settings: { color: 'blue' } } } });
    const loaded = await load();
    const { config, ignored } = restrictWorkspace(loaded, policy);
    expect(ignored).toEqual([]);
    expect(config).toBe(loaded);
  });
});

describe('unknownKeys', () => {
  const known = knownKeys([
    { name: 'hooks', configKeys: ['hooks'], settings: [settingSchema.parse({ name: 'timeout', type: 'number' })] },
    { name: 'mcp', configKeys: ['mcpServers'], settings: [] },
  ]);

  it('names each unknown key with its file, JSON path and the key meant, in files and their profiles', async () => {
    await writeUser({ mcpServer: {}, hooks: {}, plugins: { hokks: {}, hooks: { settings: { timout: 1, timeout: 2 } } } });
    await writeWorkspace({ profiles: { dev: { profiles: {}, mcpServers: {}, timeouts: {} } } });
    const config = await load();
    const files = settingsFiles(config)!;
    const found = unknownKeys([files.user, files.workspace], known);
    expect(found.every((e) => e.code === 'PLN_E_CONFIG_UNKNOWN_KEY')).toBe(true);
    expect(found.map((e) => [e.details?.file, e.details?.path, e.details?.suggestion])).toEqual([
      [userFile(), 'mcpServer', 'mcpServers'],
      [userFile(), 'plugins.hokks', 'hooks'],
      [userFile(), 'plugins.hooks.settings.timout', 'timeout'],
      // A profile cannot hold profiles.
      [workspaceFile(), 'profiles.dev.profiles', undefined],
    ]);
  });

  it('finds nothing in good settings, or when there are no files', async () => {
    const empty = settingsFiles(await load())!;
    expect(unknownKeys([empty.user, empty.workspace], known)).toEqual([]);
    await writeUser({ $schema: 'x', hooks: {}, mcpServers: {}, plugins: { mcp: {}, hooks: { enabled: true, settings: { timeout: 5 } } }, timeouts: {}, services: {}, pluginDirs: [] });
    const files = settingsFiles(await load())!;
    expect(unknownKeys([files.user, files.workspace], known)).toEqual([]);
  });
});
