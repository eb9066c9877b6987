/**
 * Discovery through the real kernel: plugins nested in the user's plugin folder
 * and in `pluginDirs` at several depths, the depth bound, folders never
 * entered, symlinks (followed inside the folder, never out of it), the seed's
 * extension manifest loading unchanged with its settings, and invalid
 * manifests among valid ones.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { discoverPlugins, MAX_DEPTH } from '../kernel/discovery.js';
import { type BootReport, Kernel } from '../kernel/kernel.js';
import { normalizeSection } from '../plugins/hooks/definition.js';
import { collectServers } from '../plugins/mcp/definitions.js';
import { IMPLIED_KERNEL_RANGE } from '../sdk/manifest.js';
import type { PluginInfo, PluginStatus } from '../sdk/index.js';

const roots: string[] = [];
const kernels: Kernel[] = [];

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
  await Promise.all(roots.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A temporary folder with a user home (`home/plugins`) and a workspace. */
async function tempRoot(): Promise<{ root: string; home: string; workspace: string; plugins: string }> {
  const root = await mkdtemp(join(tmpdir(), 'plinth-discovery-recursive-'));
  roots.push(root);
  const home = join(root, 'home');
  const workspace = join(root, 'workspace');
  await mkdir(join(home, 'plugins'), { recursive: true });
  await mkdir(workspace, { recursive: true });
  return { root, home, workspace, plugins: join(home, 'plugins') };
}

/** Writes `<base>/<rel>/manifest.json`: an object as JSON (declaration-only, version 1.0.0 unless given), a string as is. */
async function plugin(base: string, rel: string, manifest: Record<string, unknown> | string): Promise<string> {
  const dir = join(base, rel);
  await mkdir(dir, { recursive: true });
  const text = typeof manifest === 'string' ? manifest : JSON.stringify({ version: '1.0.0', ...manifest }, null, 2);
  await writeFile(join(dir, 'manifest.json'), text);
  return join(dir, 'manifest.json');
}

interface Booted {
  kernel: Kernel;
  report: BootReport;
  logs: string[];
  /** Every plugin's PluginInfo, as the `manifest` hook hands it to the plugins owning a section. */
  infos: PluginInfo[];
}

/** Boots the real kernel (no builtin plugins) on `home` and `workspace`. */
async function boot(options: { home: string; workspace: string; env?: Record<string, string>; pluginDirs?: string[] }): Promise<Booted> {
  const logs: string[] = [];
  const infos: PluginInfo[] = [];
  const kernel = new Kernel({
    home: options.home,
    workspace: options.workspace,
    builtin: false,
    env: options.env ?? {},
    logSink: (line) => logs.push(line),
    ...(options.pluginDirs && { pluginDirs: options.pluginDirs }),
    // The way an owner of a declarative section (hooks, mcp) sees each manifest.
    plugins: [{ manifest: { name: 'section-reader' }, setup: (k) => void k.hooks.manifest.tap((info) => void infos.push(info)) }],
  });
  kernels.push(kernel);
  const report = await kernel.boot();
  return { kernel, report, logs, infos };
}

const names = (report: BootReport, state = 'active'): string[] =>
  report.plugins
    .filter((p) => p.state === state && p.name !== 'section-reader')
    .map((p) => p.name)
    .sort();

function statusOf(report: BootReport, name: string): PluginStatus {
  const status = report.plugins.find((p) => p.name === name);
  if (!status) throw new Error(`no status for plugin "${name}"`);
  return status;
}

describe('recursive discovery', () => {
  it('finds plugins at every depth down to the bound, and none below it', async () => {
    const { home, workspace, plugins } = await tempRoot();
    await plugin(plugins, 'one', { name: 'one' });
    await plugin(plugins, '@acme/two', { name: '@acme/two' });
    await plugin(plugins, 'vendor/@acme/three', { name: '@acme/three' });
    await plugin(plugins, 'repo/plugins/group/four', { name: 'four' });
    await plugin(plugins, 'repo/plugins/group/deeper/five', { name: 'five' });

    const { report } = await boot({ home, workspace });

    expect(MAX_DEPTH).toBe(4);
    expect(names(report)).toEqual(['@acme/three', '@acme/two', 'four', 'one']);
    expect(statusOf(report, 'four').dir).toBe(join(plugins, 'repo/plugins/group/four'));
    expect(statusOf(report, 'four').source).toBe('user');
    expect(report.plugins.some((p) => p.name === 'five')).toBe(false);
    expect(report.invalid).toEqual([]);
  });

  it('searches a pluginDirs folder the same way, keeping depth-first code-point order', async () => {
    const { root, home, workspace } = await tempRoot();
    const dev = join(root, 'dev');
    await plugin(dev, 'b/z', { name: 'bz' });
    await plugin(dev, 'b/a/deep', { name: 'bad' });
    await plugin(dev, 'a', { name: 'a' });

    const { report } = await boot({ home, workspace, pluginDirs: [dev] });
    const found = await discoverPlugins([{ dir: dev, source: 'path' }]);

    expect(names(report)).toEqual(['a', 'bad', 'bz']);
    expect(statusOf(report, 'bad').source).toBe('path');
    expect(found.candidates.map((c) => c.manifest.name)).toEqual(['a', 'bad', 'bz']);
  });

  it('does not search inside a plugin, a dot-folder or node_modules', async () => {
    const { home, workspace, plugins } = await tempRoot();
    await plugin(plugins, 'outer', { name: 'outer' });
    await plugin(plugins, 'outer/fixtures/inner', { name: 'inner' });
    await plugin(plugins, '.staging-42/half-installed', { name: 'half-installed' });
    await plugin(plugins, 'group/.cache/cached', { name: 'cached' });
    await plugin(plugins, 'group/node_modules/dep', { name: 'dep' });
    await plugin(plugins, 'group/kept', { name: 'kept' });

    const { report } = await boot({ home, workspace });

    expect(names(report)).toEqual(['kept', 'outer']);
  });

  it('marks the candidates of a linked source as linked', async () => {
    const { root } = await tempRoot();
    await plugin(root, 'work/my-plugin', { name: 'my-plugin' });
    const { candidates } = await discoverPlugins([{ dir: join(root, 'work/my-plugin'), source: 'path', linked: true }]);
    expect(candidates.map((c) => [c.manifest.name, c.linked])).toEqual([['my-plugin', true]]);
  });
});

describe('symlinks', () => {
  it('follows a symlinked folder whose real path is inside the plugin folder, and counts a folder reached twice once', async () => {
    const { home, workspace, plugins } = await tempRoot();
    // A store in a dot-folder, reached only through the link (as a package manager lays it out).
    await plugin(plugins, '.store/stored-1.0.0', { name: 'stored' });
    await symlink(join(plugins, '.store/stored-1.0.0'), join(plugins, 'stored'), 'dir');
    // A plugin reached both directly and through an alias.
    await plugin(plugins, 'versions/aliased', { name: 'aliased' });
    await symlink(join(plugins, 'versions'), join(plugins, 'current'), 'dir');
    // A relative link that loops back to the folder itself: bounded, and finds nothing new.
    await symlink('..', join(plugins, 'versions/loop'), 'dir');

    const { report, logs } = await boot({ home, workspace });

    expect(names(report)).toEqual(['aliased', 'stored']);
    expect(statusOf(report, 'stored').dir).toBe(join(plugins, 'stored'));
    expect(statusOf(report, 'aliased').dir).toBe(join(plugins, 'current/aliased')); // first in code-point order
    expect(report.invalid).toEqual([]);
    expect(logs.some((line) => line.includes('PLN_E_PLUGIN_LINK_OUTSIDE'))).toBe(false);
  });

  it('skips a symlink that leads out of the plugin folder with a coded warning naming link, target and fix; the rest load', async () => {
    const { root, home, workspace, plugins } = await tempRoot();
    await plugin(root, 'elsewhere/escaped', { name: 'escaped' });
    // A sibling whose path merely starts with the plugin folder's path is outside too.
    await plugin(root, 'home/plugins-evil/sneaky', { name: 'sneaky' });
    await symlink(join(root, 'elsewhere/escaped'), join(plugins, 'escaped'), 'dir');
    await mkdir(join(plugins, 'group'), { recursive: true });
    await symlink(join(root, 'home/plugins-evil'), join(plugins, 'group/evil'), 'dir');
    await plugin(plugins, 'group/fine', { name: 'fine' });

    const { report, logs } = await boot({ home, workspace });

    expect(names(report)).toEqual(['fine']);
    const outside = report.invalid.filter((e) => e.code === 'PLN_E_PLUGIN_LINK_OUTSIDE');
    expect(outside.map((e) => e.details?.link)).toEqual([join(plugins, 'escaped'), join(plugins, 'group/evil')]);
    const [escaped] = outside;
    expect(escaped?.details).toMatchObject({ target: join(root, 'elsewhere/escaped'), dir: plugins });
    expect(escaped?.message).toContain(join(plugins, 'escaped'));
    expect(escaped?.message).toContain(join(root, 'elsewhere/escaped'));
    expect(escaped?.hint).toContain(`plinth ext link ${join(root, 'elsewhere/escaped')}`);
    expect(logs.filter((line) => line.includes('PLN_E_PLUGIN_LINK_OUTSIDE') && line.includes('plinth ext link'))).toHaveLength(2);
  });

  it('reports a symlink whose target is gone, naming the link and its target, instead of passing over it; the rest load', async () => {
    const { home, workspace, plugins } = await tempRoot();
    // What an installed plugin looks like once its version folder was deleted by hand.
    await mkdir(join(plugins, '@team'), { recursive: true });
    await symlink(join('.versions', 'gone@1.0.0'), join(plugins, 'gone'), 'dir');
    await symlink(join('..', '.versions', '@team+kit@2.0.0'), join(plugins, '@team', 'kit'), 'dir');
    await plugin(plugins, 'here', { name: 'here' });

    const { report } = await boot({ home, workspace });

    expect(names(report)).toEqual(['here']);
    const broken = report.invalid.filter((e) => e.code === 'PLN_E_PLUGIN_LINK_BROKEN');
    expect(broken.map((e) => e.details)).toEqual([
      { link: join(plugins, '@team', 'kit'), target: join('..', '.versions', '@team+kit@2.0.0') },
      { link: join(plugins, 'gone'), target: join('.versions', 'gone@1.0.0') },
    ]);
    expect(broken[1]?.message).toContain(`${join(plugins, 'gone')}: a symlink to .versions/gone@1.0.0, which does not exist`);
    expect(broken[0]?.hint).toContain('plinth ext install --force @team/kit');
    expect(broken[1]?.hint).toContain('plinth ext install --force gone');
  });
});

/**
 * The seed's extension manifest, put together from its "Extension" examples
 * as written there: the hooks section (Hook System Integration), the settings
 * (Settings Integration) and a stdio server in the form of its MCP Transport
 * section. No `kernel`, no `main`.
 */
const SEED_MANIFEST = `{
  "name": "github-tools",
  "version": "1.0.0",
  "description": "GitHub tools and an input check for the agent",
  "hooks": {
    "before_model": [
      {
        "name": "validate-input",
        "command": "node",
        "args": ["hooks/validate.js"]
      }
    ]
  },
  "mcpServers": {
    "github": {
      "command": "node",
      "args": ["server.js"],
      "transport": "stdio"
    }
  },
  "settings": [
    {
      "name": "githubToken",
      "envVar": "GITHUB_TOKEN",
      "sensitive": true,
      "description": "GitHub personal access token"
    }
  ]
}
`;

describe("the seed's extension manifest", () => {
  it('loads unchanged, taken as made for the current kernel major, its setting read from the environment and redacted', async () => {
    const { home, workspace, plugins } = await tempRoot();
    await plugin(plugins, 'github-tools', SEED_MANIFEST);
    const token = 'ghp_seedTokenValue1234567890';

    const { kernel, report, infos } = await boot({ home, workspace, env: { GITHUB_TOKEN: token } });

    expect(report.invalid).toEqual([]);
    expect(statusOf(report, 'github-tools').state).toBe('active');
    const info = infos.find((p) => p.name === 'github-tools');
    expect(info?.manifest.kernel).toBe(IMPLIED_KERNEL_RANGE);
    expect(IMPLIED_KERNEL_RANGE).toBe(`^${kernel.apiVersion.split('.')[0]}.0.0`);
    expect(kernel.settingsEnv('github-tools')).toEqual({ GITHUB_TOKEN: token });
    expect(kernel.redact(`token ${token}`)).not.toContain(token);
  });

  it("is read without a problem by the hooks plugin's and the mcp plugin's definition readers", async () => {
    const { home, workspace, plugins } = await tempRoot();
    await plugin(plugins, 'github-tools', SEED_MANIFEST);
    const { infos } = await boot({ home, workspace });
    const info = infos.find((p) => p.name === 'github-tools');
    if (!info) throw new Error('the manifest hook did not announce github-tools');
    const dir = join(plugins, 'github-tools');

    const hooks = normalizeSection(info.manifest.hooks, { source: 'extension', origin: join(dir, 'manifest.json'), baseDir: dir, plugin: info.name }, { timeoutMs: 5000, idleMs: 60_000 });
    expect(hooks.problems).toEqual([]);
    expect(hooks.hooks.map((h) => [h.id, h.events, h.action, h.cwd])).toEqual([
      ['github-tools/validate-input', ['before_model'], { type: 'command', command: 'node', args: ['hooks/validate.js'] }, dir],
    ]);

    const servers = collectServers({ layers: [], plugins: [info], manifests: [info], config: {}, env: {}, home, workspace, connectTimeoutMs: 10_000 });
    expect(servers.problems).toEqual([]);
    expect(servers.servers.map((s) => [s.definition.name, s.definition.transport, s.definition.command, s.definition.args, s.definition.cwd])).toEqual([
      ['github', 'stdio', 'node', ['server.js'], dir],
    ]);

    // The seed's remote form puts the URL in "command"; plinth reads it from "url", and says so at the path.
    const remote = { ...info, manifest: { ...info.manifest, mcpServers: { remote: { command: 'http://localhost:3000/mcp', transport: 'sse' } } } };
    const refused = collectServers({ layers: [], plugins: [remote], manifests: [remote], config: {}, env: {}, home, workspace, connectTimeoutMs: 10_000 });
    expect(refused.servers).toEqual([]);
    expect(refused.problems.map((p) => [p.code, p.details?.path])).toEqual([['PLN_E_MCP_SERVER_INVALID', 'mcpServers.remote.command']]);
    expect(refused.problems[0]?.message).toContain('give "url", not "command"');
  });

  it('resolves declared defaults and stops only its plugin, naming the setting and how to set it, when a required one is missing', async () => {
    const { home, workspace, plugins } = await tempRoot();
    const settings = [
      { name: 'org', envVar: 'GITHUB_ORG', default: 'plinth-dev', description: 'Organisation to search' },
      { name: 'apiKey', envVar: 'SEARCH_API_KEY', sensitive: true, required: true, description: 'Search API key' },
    ];
    await plugin(plugins, 'search-tools', { name: 'search-tools', description: 'Search', settings });
    await plugin(plugins, 'github-tools', SEED_MANIFEST);

    const missing = await boot({ home, workspace });
    const failed = statusOf(missing.report, 'search-tools');
    expect(failed.state).toBe('failed');
    expect(failed.error?.code).toBe('PLN_E_SETTING_REQUIRED');
    expect(failed.error?.message).toContain('plugins.search-tools.settings.apiKey');
    expect(failed.error?.message).toContain('SEARCH_API_KEY');
    expect(failed.error?.hint).toMatch(/settings\.json.*export SEARCH_API_KEY/);
    expect(statusOf(missing.report, 'github-tools').state).toBe('active');

    const set = await boot({ home, workspace, env: { SEARCH_API_KEY: 'key-from-env-0042' } });
    expect(statusOf(set.report, 'search-tools').state).toBe('active');
    expect(set.kernel.settingsEnv('search-tools')).toEqual({ GITHUB_ORG: 'plinth-dev', SEARCH_API_KEY: 'key-from-env-0042' });
  });
});

describe('invalid manifests among valid ones', () => {
  it('reports each with its file, JSON path and fix, and boots every other plugin', async () => {
    const { home, workspace, plugins } = await tempRoot();
    await plugin(plugins, 'good-one', { name: 'good-one' });
    await plugin(plugins, 'group/good-two', SEED_MANIFEST.replace('github-tools', 'good-two'));
    const badJson = await plugin(plugins, 'bad-json', '{\n  "name": "bad-json",\n  "version": "1.0.0",\n}\n');
    const noName = await plugin(plugins, 'group/no-name', { description: 'forgot its name' });
    const codeNoKernel = await plugin(plugins, 'group/deep/code-no-kernel', { name: 'code-no-kernel', main: './index.ts' });
    const badSections = await plugin(plugins, '@acme/bad-sections', { name: '@acme/bad-sections', version: 'one', hooks: [], settings: [{ envVar: 'X' }] });

    const { report, logs } = await boot({ home, workspace });

    expect(names(report)).toEqual(['good-one', 'good-two']);
    const byFile = new Map(report.invalid.map((e) => [e.details?.file, e]));
    expect([...byFile.keys()].sort()).toEqual([badSections, badJson, codeNoKernel, noName].sort());

    const json = byFile.get(badJson);
    expect(json?.code).toBe('PLN_E_MANIFEST_UNREADABLE');
    expect(json?.message).toContain(`${badJson}:4:1`);
    expect(json?.hint).toMatch(/fix the JSON/);

    const invalid = (file: string) => {
      const error = byFile.get(file);
      expect(error?.code).toBe('PLN_E_MANIFEST_INVALID');
      expect(error?.hint).toContain(file);
      return (error?.details?.issues ?? []) as Array<{ path: string; message: string }>;
    };
    expect(invalid(noName)).toEqual([{ path: 'name', message: expect.stringMatching(/^missing: add .*"my-plugin"/) }]);
    expect(invalid(codeNoKernel)).toEqual([{ path: 'kernel', message: expect.stringContaining(`add "kernel": "${IMPLIED_KERNEL_RANGE}"`) }]);
    expect(byFile.get(codeNoKernel)?.message).toContain(`${codeNoKernel}: kernel: missing`);
    expect(invalid(badSections).map((i) => i.path).sort()).toEqual(['hooks', 'settings[0].name', 'version']);
    expect(invalid(badSections).find((i) => i.path === 'hooks')?.message).toMatch(/object keyed by event name, e\.g\./);

    for (const file of byFile.keys()) expect(logs.some((line) => line.includes(String(file)))).toBe(true);
  });
});
