/**
 * The real `plinth` executable, run from the build as a child process. Every
 * run gets its own temporary home and workspace, so the machine's ~/.plinth and
 * the current directory never matter.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KERNEL_API_VERSION } from '../sdk/version.js';
import { type Result, cleanEnv, describeRun, expectExit, json, plinth as run, ensureBuilt, modulesByFile, sourceModules } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'dist', 'cli', 'bin.js');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

/** Generous: a shared 2-core machine may be slow to start node and jiti. */
const TEST_TIMEOUT = 60_000;
const RUN_TIMEOUT = 45_000;

const temps: string[] = [];

beforeAll(() => {
  ensureBuilt();
}, 300_000);

afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A fresh folder under the OS temp folder, outside the repository. */
async function temp(prefix = 'plinth-cli-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** A home and a workspace, both empty. */
async function sandbox(): Promise<{ home: string; workspace: string; dirs: string[] }> {
  const base = await temp();
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  return { home, workspace, dirs: ['--home', home, '--workspace', workspace] };
}

interface PluginStatusJson {
  name: string;
  version: string;
  source: string;
  state: string;
  error?: { code: string; message: string };
}

function plugin(plugins: PluginStatusJson[], name: string): PluginStatusJson {
  const found = plugins.find((p) => p.name === name);
  if (!found) throw new Error(`no plugin "${name}" in ${JSON.stringify(plugins.map((p) => p.name))}`);
  return found;
}

/** Writes a plugin folder `<parent>/<name>` with a manifest and, optionally, index.ts. */
async function writePlugin(parent: string, manifest: Record<string, unknown> & { name: string }, code?: string): Promise<string> {
  const dir = join(parent, manifest.name);
  await mkdir(dir, { recursive: true });
  const full = { version: '1.0.0', kernel: `^${KERNEL_API_VERSION.split('.')[0]}.0.0`, ...(code !== undefined && { main: './index.ts' }), ...manifest };
  await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(full, null, 2)}\n`);
  if (code !== undefined) await writeFile(join(dir, 'index.ts'), code);
  return dir;
}

const TS_PLUGIN = `import { definePlugin, type PluginContext } from 'plinth/sdk';

interface Greeting {
  readonly text: string;
  readonly times: number;
}

enum Mood { Calm = 'calm' }

const greeting: Greeting = { text: 'hello', times: 2 };

function greet(ctx: PluginContext, g: Greeting): string {
  return \`\${ctx.name}: \${g.text.repeat(g.times)} (\${Mood.Calm})\`;
}

export default definePlugin({
  setup(kernel, ctx) {
    const message: string = greet(ctx, greeting);
    kernel.on('session_start', () => ({ systemMessage: message }));
  },
});
`;

const THROWING_PLUGIN = `import { definePlugin } from 'plinth/sdk';

export default definePlugin({
  setup(): void {
    throw new Error('boom in setup');
  },
});
`;

// ─────────────────────────────────────────────────────────────────────────────

describe('plinth --version', () => {
  test('prints the package version and the kernel API version', async () => {
    const result = await run(['--version']);
    expectExit(result, 0);
    expect(result.stdout).toContain(pkg.version);
    expect(result.stdout).toContain(`kernel API ${KERNEL_API_VERSION}`);
    expect(result.stderr).toBe('');

    const short = await run(['-V']);
    expectExit(short, 0);
    expect(short.stdout).toBe(result.stdout);
  }, TEST_TIMEOUT);

  test('--version --json prints one JSON document', async () => {
    const result = await run(['--version', '--json']);
    expectExit(result, 0);
    const body = json<{ name: string; version: string; kernelApi: string }>(result);
    expect(body).toMatchObject({ name: 'plinth', version: pkg.version, kernelApi: KERNEL_API_VERSION });
  }, TEST_TIMEOUT);

  test('loads no plugin code and no kernel module beyond the version', async () => {
    const { result, urls } = await runTracingImports(['--version']);
    expectExit(result, 0);
    expect(result.stdout).toContain(pkg.version);

    const rootUrl = pathToFileURL(root).href.replace(/\/?$/, '/');
    expect(urls, 'the hook saw the executable itself').toContain(pathToFileURL(bin).href);
    const plugins = urls.filter((u) => u.startsWith(`${rootUrl}plugins/`));
    expect(plugins, 'plugin modules loaded by --version').toEqual([]);
    const heavy = urls.filter((u) => /jiti|tapable|zod|semver/.test(u) || u.includes('/node_modules/'));
    expect(heavy, 'packages loaded by --version').toEqual([]);
    expect(sourceModules(urls), 'plinth modules loaded by --version').toEqual(['cli/bin.ts', 'sdk/version.ts']);
  }, TEST_TIMEOUT);
});

describe('what a command start loads', () => {
  test('a listing command loads no MCP SDK (nor zod\'s own modules): the mcp plugin imports the SDK when a server connects', async () => {
    const { dirs } = await sandbox();
    const { result, urls } = await runTracingImports(['plugins', 'list', ...dirs]);
    expectExit(result, 0);
    const rootUrl = pathToFileURL(root).href.replace(/\/?$/, '/');
    expect(urls, 'the mcp plugin was set up').toContain(`${rootUrl}dist/plugins/mcp/index.js`);
    const packages = urls.filter((u) => u.includes('/node_modules/@modelcontextprotocol/') || u.includes('/node_modules/zod/'));
    expect(packages, 'MCP SDK modules loaded by plugins list').toEqual([]);
  }, TEST_TIMEOUT);

  test('<command> --help sets up the command\'s plugin and the guards, not every plugin', async () => {
    const { dirs } = await sandbox();
    const { result, urls } = await runTracingImports(['ext', 'list', '--help', ...dirs]);
    expectExit(result, 0);
    expect(result.stdout).toContain('Usage: plinth ext list');
    const rootUrl = pathToFileURL(root).href.replace(/\/?$/, '/');
    const loaded = urls.filter((u) => u.startsWith(`${rootUrl}dist/plugins/`)).map((u) => u.slice(`${rootUrl}dist/plugins/`.length).split('/')[0]);
    expect(loaded).toContain('extensions');
    for (const guard of ['trust', 'hooks', 'sandbox']) expect(loaded, `guard ${guard}`).toContain(guard);
    for (const other of ['mcp', 'health', 'inspect']) expect(loaded, `${other} set up for ext list --help`).not.toContain(other);
  }, TEST_TIMEOUT);
});

/** Runs the CLI with a module.register resolve hook that records every URL Node resolves. */
async function runTracingImports(args: string[]): Promise<{ result: Awaited<ReturnType<typeof run>>; urls: string[] }> {
  const dir = await temp('plinth-resolve-hook-');
  const log = join(dir, 'resolved.txt');
  await writeFile(
    join(dir, 'hooks.mjs'),
    [
      "import { appendFileSync } from 'node:fs';",
      'const file = process.env.PLINTH_TEST_RESOLVE_LOG;',
      'export async function resolve(specifier, context, next) {',
      '  const result = await next(specifier, context);',
      "  if (file) appendFileSync(file, result.url + '\\n');",
      '  return result;',
      '}',
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
  const result = await run(args, { nodeArgs: ['--import', pathToFileURL(join(dir, 'register.mjs')).href], env: { PLINTH_TEST_RESOLVE_LOG: log } });
  const urls = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  return { result, urls };
}

describe('builtin plugins', () => {
  test('load from the build natively: no jiti, and plinth/sdk is the kernel\'s own dist/sdk', async () => {
    const { dirs } = await sandbox();
    const { result, urls } = await runTracingImports(['up', '--once', ...dirs]);
    expectExit(result, 0);
    const rootUrl = pathToFileURL(root).href.replace(/\/?$/, '/');
    expect(urls.filter((u) => u.includes('/jiti/')), 'jiti loaded for builtin plugins').toEqual([]);
    expect(urls).toContain(`${rootUrl}dist/plugins/hooks/index.js`);
    expect(urls.filter((u) => u.startsWith(`${rootUrl}plugins/`) && u.endsWith('.ts')), 'builtin TypeScript sources loaded').toEqual([]);
    expect(urls.filter((u) => u.endsWith('/sdk/index.js'))).toEqual(urls.filter((u) => u === `${rootUrl}dist/sdk/index.js`));
    // One instance of every module, the sdk above all: no source module is in two of the loaded chunks.
    const modules = [...modulesByFile(urls).values()].flat();
    expect(modules).toContain('sdk/errors.ts');
    expect(modules.filter((module, i) => modules.indexOf(module) !== i), 'modules loaded twice').toEqual([]);
  }, TEST_TIMEOUT);
});

describe('help and usage errors', () => {
  const COMMANDS = ['up', 'plugins list', 'plugins why', 'config show', 'plugin new'];

  test('--help lists up and the plugin commands, one line each, exit 0', async () => {
    const { dirs } = await sandbox();
    const result = await run(['--help', ...dirs]);
    expectExit(result, 0);
    const lines = result.stdout.split('\n');
    for (const command of COMMANDS) {
      // "  <command>  <summary>": the name, at least two spaces, then words.
      const pattern = new RegExp(`^\\s+${command.replace(' ', '\\s')}\\s{2,}\\S`);
      const matching = lines.filter((line) => pattern.test(line));
      expect(matching, `help lines for "${command}" in:\n${result.stdout}`).toHaveLength(1);
    }
    // Plugin commands say which plugin they come from.
    expect(lines.find((l) => /^\s+plugins list\s/.test(l))).toContain('(inspect)');
    expect(lines.find((l) => /^\s+plugin new\s/.test(l))).toContain('(scaffold)');
  }, TEST_TIMEOUT);

  test('no command prints the help and exits 2', async () => {
    const { dirs } = await sandbox();
    const result = await run(dirs);
    expectExit(result, 2);
    expect(result.stdout).toMatch(/^Usage: plinth <command>/m);
    expect(result.stdout).toMatch(/^\s+up\s{2,}\S/m);
  }, TEST_TIMEOUT);

  test('an unknown command is PLN_E_CLI_UNKNOWN_COMMAND, exit 2', async () => {
    const { dirs } = await sandbox();
    const result = await run(['frobnicate', ...dirs]);
    expectExit(result, 2);
    expect(result.stderr).toContain('PLN_E_CLI_UNKNOWN_COMMAND');
    expect(result.stderr).toContain('frobnicate');
    expect(result.stdout).toBe('');
  }, TEST_TIMEOUT);

  test('an unknown command names only its unknown words, and the command a typo meant', async () => {
    const { dirs } = await sandbox();
    const typo = await run(['plugins', 'lst', 'x', ...dirs]);
    expectExit(typo, 2);
    expect(typo.stderr).toContain('unknown command "plugins lst"');
    expect(typo.stderr).toContain('did you mean "plugins list"?');
    const word = await run(['plugns', 'list', ...dirs]);
    expect(word.stderr).toContain('unknown command "plugns"');
    expect(word.stderr).toContain('did you mean "plugins"?');
    // Its words after the first are arguments of a command that does not exist, not part of its name.
    expect((await run(['frobnicate', 'world', ...dirs])).stderr).toContain('unknown command "frobnicate"\n');
  }, TEST_TIMEOUT);

  test('an unknown option is PLN_E_CLI_USAGE, exit 2', async () => {
    const { dirs } = await sandbox();
    const result = await run(['up', '--once', '--no-such-option', ...dirs]);
    expectExit(result, 2);
    expect(result.stderr).toContain('PLN_E_CLI_USAGE');
    expect(result.stderr).toContain('--no-such-option');
  }, TEST_TIMEOUT);

  test('a missing argument is PLN_E_CLI_USAGE, exit 2', async () => {
    const { dirs } = await sandbox();
    const result = await run(['plugins', 'why', ...dirs]);
    expectExit(result, 2);
    expect(result.stderr).toContain('PLN_E_CLI_USAGE');
  }, TEST_TIMEOUT);

  test('with --json, errors are a JSON document with error.code', async () => {
    const { dirs } = await sandbox();
    const unknown = await run(['frobnicate', '--json', ...dirs]);
    expectExit(unknown, 2);
    expect(json(unknown).error.code).toBe('PLN_E_CLI_UNKNOWN_COMMAND');

    const usage = await run(['up', '--once', '--no-such-option', '--json', ...dirs]);
    expectExit(usage, 2);
    expect(json(usage).error.code).toBe('PLN_E_CLI_USAGE');
  }, TEST_TIMEOUT);
});

describe('--json keeps stdout for its one document', () => {
  const CHATTY_PLUGIN = `import { definePlugin } from 'plinth/sdk';

export default definePlugin({
  setup(kernel) {
    console.log('chatty: set up');
    process.stdout.write('chatty: a raw write\\n');
    kernel.on('before_tool', () => {
      console.log('chatty: before_tool');
    });
  },
});
`;

  test('what a plugin prints to stdout goes to stderr, in a command that succeeds and in one that fails', async () => {
    const { dirs } = await sandbox();
    const pluginDir = await writePlugin(await temp('plinth-chatty-'), { name: 'chatty', events: ['before_tool'] }, CHATTY_PLUGIN);

    const listed = await run(['plugins', 'list', '--json', '--plugin-dir', pluginDir, ...dirs]);
    expectExit(listed, 0);
    expect(json<{ plugins: PluginStatusJson[] }>(listed).plugins.map((p) => p.name)).toContain('chatty');
    expect(listed.stderr).toContain('chatty: set up');
    expect(listed.stderr).toContain('chatty: a raw write');

    const fired = await run(['hooks', 'run', 'before_tool', '--json', '--plugin-dir', pluginDir, ...dirs]);
    expectExit(fired, 0);
    expect(json(fired).decision.allow).toBe(true);
    expect(fired.stderr).toContain('chatty: before_tool');

    const failed = await run(['plugins', 'why', 'no-such-plugin', '--json', '--plugin-dir', pluginDir, ...dirs]);
    expectExit(failed, 1);
    expect(json(failed).error.code).toBe('PLN_E_PLUGIN_UNKNOWN');

    // Without --json, stdout is the person's: a plugin's output stays there.
    const text = await run(['plugins', 'list', '--plugin-dir', pluginDir, ...dirs]);
    expect(text.stdout).toContain('chatty: set up');
  }, TEST_TIMEOUT);
});

describe('an event handler that never answers', () => {
  const HANGING_GUARD = `import { definePlugin } from 'plinth/sdk';

export default definePlugin({
  setup(kernel) {
    // Waits for something that never comes, and holds nothing that keeps the process up.
    kernel.on('before_tool', () => new Promise(() => {}));
  },
});
`;

  test('is named after timeouts.event and blocks the event: the command answers (exit 5), it does not just end', async () => {
    const { home, dirs } = await sandbox();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ timeouts: { event: 300 }, plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } } }));
    const pluginDir = await writePlugin(await temp('plinth-hanging-'), { name: 'hanging', guards: ['before_tool'] }, HANGING_GUARD);

    const result = await run(['hooks', 'run', 'before_tool', '--json', '--plugin-dir', pluginDir, ...dirs]);
    expectExit(result, 5);
    expect(json(result).decision).toMatchObject({ allow: false, blockedBy: { plugin: 'hanging', code: 'PLN_E_EVENT_TIMEOUT' } });
  }, TEST_TIMEOUT);
});

describe('plinth up --once', () => {
  test('loads a TypeScript plugin from a folder outside the repository', async () => {
    const { dirs } = await sandbox();
    const pluginDir = await writePlugin(await temp('plinth-ts-plugin-'), { name: 'ts-greeter', events: ['session_start'] }, TS_PLUGIN);
    expect(pluginDir.startsWith(root)).toBe(false);

    const result = await run(['up', '--once', '--plugin-dir', pluginDir, '--json', ...dirs]);
    expectExit(result, 0);
    const body = json<{ ready: boolean; plugins: PluginStatusJson[] }>(result);
    expect(body.ready).toBe(true);
    expect(plugin(body.plugins, 'ts-greeter')).toMatchObject({ state: 'active', source: 'path', version: '1.0.0' });
    expect(plugin(body.plugins, 'inspect').source).toBe('builtin');
  }, TEST_TIMEOUT);

  test('a plugin that throws in setup: exit 4, it is named, its dependent is skipped, the others are active', async () => {
    const { dirs } = await sandbox();
    const plugins = await temp('plinth-plugins-');
    await writePlugin(plugins, { name: 'ts-greeter' }, TS_PLUGIN);
    await writePlugin(plugins, { name: 'exploder' }, THROWING_PLUGIN);
    await writePlugin(plugins, { name: 'needs-exploder', dependencies: { exploder: '^1.0.0' } }, "import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup() {} });\n");

    const result = await run(['up', '--once', '--plugin-dir', plugins, '--json', ...dirs]);
    expectExit(result, 4);
    const body = json<{ plugins: PluginStatusJson[] }>(result);
    const failed = plugin(body.plugins, 'exploder');
    expect(failed.state).toBe('failed');
    expect(failed.error?.code).toBe('PLN_E_PLUGIN_SETUP');
    expect(failed.error?.message).toContain('boom in setup');
    expect(plugin(body.plugins, 'needs-exploder')).toMatchObject({ state: 'skipped', error: { code: 'PLN_E_DEP_FAILED' } });
    expect(plugin(body.plugins, 'ts-greeter').state).toBe('active');

    const text = await run(['up', '--once', '--plugin-dir', plugins, ...dirs]);
    expectExit(text, 4);
    expect(text.stdout).toMatch(/^exploder: PLN_E_PLUGIN_SETUP: .*boom in setup/m);
    expect(text.stdout).toMatch(/^ts-greeter\s.*\sactive\s/m);
  }, TEST_TIMEOUT);
});

describe('invalid settings', () => {
  test('settings.json that is not JSON: exit 3, names the file, line and column', async () => {
    const { workspace, dirs } = await sandbox();
    const file = join(workspace, '.plinth', 'settings.json');
    await mkdir(join(workspace, '.plinth'), { recursive: true });
    await writeFile(file, '{\n  "timeouts": {\n    "setup": 100,\n  }\n}\n');

    const result = await run(['up', '--once', ...dirs]);
    expectExit(result, 3);
    expect(result.stderr).toContain('PLN_E_CONFIG_PARSE');
    expect(result.stderr).toContain(`${file}:4:`);

    const asJson = await run(['up', '--once', '--json', ...dirs]);
    expectExit(asJson, 3);
    expect(json(asJson).error).toMatchObject({ code: 'PLN_E_CONFIG_PARSE', details: { file, line: 4 } });
  }, TEST_TIMEOUT);

  test('settings.json that breaks the schema: exit 3, names the file and the JSON path', async () => {
    const { home, dirs } = await sandbox();
    const file = join(home, 'settings.json');
    await writeFile(file, JSON.stringify({ timeouts: { setup: 'fast' } }));

    const result = await run(['plugins', 'list', ...dirs]);
    expectExit(result, 3);
    expect(result.stderr).toContain('PLN_E_CONFIG_INVALID');
    expect(result.stderr).toContain(file);
    expect(result.stderr).toContain('timeouts.setup');

    const asJson = await run(['up', '--once', '--json', ...dirs]);
    expectExit(asJson, 3);
    const error = json(asJson).error;
    expect(error.code).toBe('PLN_E_CONFIG_INVALID');
    expect(error.details.file).toBe(file);
    expect(error.details.issues.map((i: { path: string }) => i.path)).toContain('timeouts.setup');
  }, TEST_TIMEOUT);
});

describe('inspect commands', () => {
  test('plugins list --json lists builtin and path plugins with their states', async () => {
    const { dirs } = await sandbox();
    const plugins = await temp('plinth-plugins-');
    await writePlugin(plugins, { name: 'ts-greeter' }, TS_PLUGIN);
    const result = await run(['plugins', 'list', '--json', '--plugin-dir', plugins, ...dirs]);
    expectExit(result, 0);
    const body = json<{ plugins: PluginStatusJson[]; candidates: unknown[]; invalid: unknown[] }>(result);
    expect(plugin(body.plugins, 'inspect')).toMatchObject({ source: 'builtin', state: 'active' });
    expect(plugin(body.plugins, 'scaffold')).toMatchObject({ source: 'builtin', state: 'lazy' });
    expect(plugin(body.plugins, 'ts-greeter')).toMatchObject({ source: 'path', state: 'active' });
    expect(body.invalid).toEqual([]);
  }, TEST_TIMEOUT);

  test('plugins why names the chain of a plugin excluded by a missing dependency', async () => {
    const { dirs } = await sandbox();
    const plugins = await temp('plinth-plugins-');
    await writePlugin(plugins, { name: 'top', dependencies: { middle: '^1.0.0' } });
    await writePlugin(plugins, { name: 'middle', dependencies: { 'not-installed': '^2.0.0' } });

    const result = await run(['plugins', 'why', 'top', '--plugin-dir', plugins, ...dirs]);
    expectExit(result, 0);
    expect(result.stdout).toContain('top does not load');
    expect(result.stdout).toContain('PLN_E_DEP_MISSING');
    expect(result.stdout).toMatch(/"top" → "middle" → "not-installed"/);
    expect(result.stdout).toContain('^2.0.0');

    const asJson = await run(['plugins', 'why', 'top', '--json', '--plugin-dir', plugins, ...dirs]);
    expectExit(asJson, 0);
    const body = json(asJson);
    expect(body.status).toMatchObject({ state: 'excluded', error: { code: 'PLN_E_DEP_MISSING' } });
    expect(body.exclusion.details.chain).toEqual(['top', 'middle', 'not-installed']);

    const unknown = await run(['plugins', 'why', 'nobody-by-that-name', '--json', ...dirs]);
    expectExit(unknown, 1);
    expect(json(unknown).error.code).toBe('PLN_E_PLUGIN_UNKNOWN');
  }, TEST_TIMEOUT);

  test('config show masks credentials written literally in sections plugins own (a header, an OAuth client secret), not their ${env:} references', async () => {
    const { home, dirs } = await sandbox();
    const server = {
      url: 'http://127.0.0.1:9/mcp',
      headers: { Authorization: 'Bearer header-secret-81c2', 'X-Api-Key': '${env:SEARCH_KEY}', 'X-Tag': 'visible' },
      oauth: { clientId: 'plinth-cli', clientSecret: 'client-secret-5d0e' },
    };
    await writeFile(join(home, 'settings.json'), JSON.stringify({ mcpServers: { search: server }, plugins: { 'mcp-demo': { enabled: false } } }, null, 2));
    for (const args of [['config', 'show', '--json'], ['config', 'show']]) {
      const show = await run([...args, ...dirs]);
      expectExit(show, 0);
      expect(show.stdout).not.toContain('header-secret-81c2');
      expect(show.stdout).not.toContain('client-secret-5d0e');
      expect(show.stdout).toContain('${env:SEARCH_KEY}');
      expect(show.stdout).toContain('plinth-cli');
    }
    const shown = json(await run(['config', 'show', '--json', ...dirs])).settings.mcpServers.search;
    expect(shown.headers).toEqual({ Authorization: '[redacted]', 'X-Api-Key': '${env:SEARCH_KEY}', 'X-Tag': 'visible' });
    expect(shown.oauth).toEqual({ clientId: 'plinth-cli', clientSecret: '[redacted]' });
  }, TEST_TIMEOUT);

  /** A plugin with a sensitive setting in settings.json, whose code logs it: the kernel's redactor must still catch it. */
  async function keeperSetup(): Promise<{ home: string; dirs: string[]; plugins: string }> {
    const { home, dirs } = await sandbox();
    const plugins = await temp('plinth-plugins-');
    await writePlugin(
      plugins,
      { name: 'keeper', settings: [{ name: 'apiKey', type: 'string', sensitive: true, required: true }, { name: 'region', type: 'string', default: 'eu' }] },
      "import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup(kernel, ctx) { ctx.log.warn(`using key ${String(ctx.settings.apiKey)}`); } });\n",
    );
    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { keeper: { settings: { apiKey: SECRET_KEY, region: 'us' } } } }, null, 2));
    return { home, dirs, plugins };
  }
  const SECRET_KEY = 'sk-live-7f3a9c1e-do-not-print';
  const expectNoSecret = (runs: Awaited<ReturnType<typeof run>>[]) => {
    for (const result of runs) {
      expect(result.stdout + result.stderr, describeRun(result)).not.toContain(SECRET_KEY);
      expect(result.stdout + result.stderr, describeRun(result)).not.toContain('7f3a9c1e');
    }
  };

  // Two tests of a few commands each (each a plinth process, two of them `up`): far from the time limit on a loaded machine.
  test('a sensitive setting from settings.json never reaches stdout or stderr: config show', async () => {
    const { home, dirs, plugins } = await keeperSetup();
    const show = await run(['config', 'show', '--json', '--plugin-dir', plugins, ...dirs]);
    expectExit(show, 0);
    const config = json(show);
    expect(config.settings.plugins.keeper.settings.apiKey).toBe('[redacted]');
    expect(config.settings.plugins.keeper.settings.region).toBe('us');
    expect(config.files.find((f: { scope: string }) => f.scope === 'user')).toMatchObject({ file: join(home, 'settings.json'), exists: true });
    expectNoSecret([show, await run(['config', 'show', '--plugin-dir', plugins, ...dirs])]);
  }, TEST_TIMEOUT);

  test('a sensitive setting from settings.json never reaches stdout or stderr: up and plugins list, the plugin\'s own log redacted', async () => {
    const { dirs, plugins } = await keeperSetup();
    const runs = [
      await run(['up', '--once', '--json', '--plugin-dir', plugins, ...dirs]),
      await run(['up', '--once', '-v', '--plugin-dir', plugins, ...dirs]),
      await run(['plugins', 'list', '--json', '--plugin-dir', plugins, ...dirs]),
    ];
    expectNoSecret(runs);
    // The plugin did log, and the log was redacted.
    expect(runs[1]!.stderr).toContain('using key [redacted]');
  }, TEST_TIMEOUT);
});

describe('profiles', () => {
  async function withProfile() {
    const box = await sandbox();
    await writeFile(
      join(box.home, 'settings.json'),
      JSON.stringify({ profiles: { minimal: { plugins: { scaffold: { enabled: false } } } } }, null, 2),
    );
    return box;
  }

  test('--profile overlays a profile that disables a plugin', async () => {
    const { dirs } = await withProfile();
    const plain = await run(['plugins', 'list', '--json', ...dirs]);
    expectExit(plain, 0);
    expect(plugin(json(plain).plugins, 'scaffold').state).toBe('lazy');

    const result = await run(['plugins', 'list', '--json', '--profile', 'minimal', ...dirs]);
    expectExit(result, 0);
    const scaffold = plugin(json(result).plugins, 'scaffold');
    expect(scaffold.state).toBe('excluded');
    expect(scaffold.error?.code).toBe('PLN_E_PLUGIN_DISABLED');
    expect(scaffold.error?.message).toContain('profile minimal');

    // A disabled plugin is not a failure for `up`.
    const up = await run(['up', '--once', '--profile', 'minimal', ...dirs]);
    expectExit(up, 0);
  }, TEST_TIMEOUT);

  test('PLINTH_PROFILE selects a profile too', async () => {
    const { dirs } = await withProfile();
    const result = await run(['plugins', 'list', '--json', ...dirs], { env: { PLINTH_PROFILE: 'minimal' } });
    expectExit(result, 0);
    expect(plugin(json(result).plugins, 'scaffold').error?.code).toBe('PLN_E_PLUGIN_DISABLED');
  }, TEST_TIMEOUT);

  test('an unknown profile is PLN_E_PROFILE_UNKNOWN, exit 3', async () => {
    const { dirs } = await withProfile();
    const result = await run(['up', '--once', '--json', '--profile', 'nope', ...dirs]);
    expectExit(result, 3);
    const error = json(result).error;
    expect(error.code).toBe('PLN_E_PROFILE_UNKNOWN');
    expect(error.message).toContain('minimal');
  }, TEST_TIMEOUT);
});

describe('plinth up (staying up)', () => {
  /** Spawns `plinth up`, waits for "plinth is up" on stderr, sends `signal`, and collects the rest. */
  async function upUntilSignal(args: string[], signal: NodeJS.Signals): Promise<Result> {
    const child: ChildProcess = spawn(process.execPath, [bin, 'up', ...args], { cwd: tmpdir(), env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<Result>((resolve) => {
      child.on('close', (code, sig) => resolve({ code, signal: sig, stdout, stderr }));
    });
    // A safety net: never leave a child behind, whatever the assertions say.
    const guard = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT);
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          if (stderr.includes('plinth is up')) resolve();
        });
        child.on('close', () => reject(new Error(`plinth up exited before it was up:\nstdout:\n${stdout}\nstderr:\n${stderr}`)));
      });
      child.kill(signal);
      return await exited;
    } finally {
      clearTimeout(guard);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }

  test('stays up until SIGINT, then stops cleanly with exit 0', async () => {
    const { dirs } = await sandbox();
    const plugins = await temp('plinth-plugins-');
    await writePlugin(plugins, { name: 'ts-greeter' }, TS_PLUGIN);
    const result = await upUntilSignal(['--plugin-dir', plugins, ...dirs], 'SIGINT');
    expectExit(result, 0);
    expect(result.signal).toBeNull();
    expect(result.stdout).toMatch(/^ts-greeter\s.*\sactive\s/m);
    expect(result.stderr).toContain('shutting down');
    // ts-greeter and the eager builtin plugins (trust gates loading, so it is always eager).
    expect(result.stderr).toMatch(/Stopped \d+ plugin\(s\) in [\d.]+ ms\./);
    expect(result.stderr).not.toContain('PLN_E_');
  }, TEST_TIMEOUT);

  test('stops on SIGTERM too', async () => {
    const { dirs } = await sandbox();
    const result = await upUntilSignal(dirs, 'SIGTERM');
    expectExit(result, 0);
    expect(result.stderr).toMatch(/Stopped \d+ plugin\(s\)/);
  }, TEST_TIMEOUT);

  test('a plugin whose teardown hangs does not hang shutdown', async () => {
    const { home, dirs } = await sandbox();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ timeouts: { teardown: 300 } }));
    const plugins = await temp('plinth-plugins-');
    await writePlugin(plugins, { name: 'ts-greeter' }, TS_PLUGIN);
    // Its teardown never settles and leaves a timer running, which would also keep Node alive.
    await writePlugin(
      plugins,
      { name: 'stuck' },
      "import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup() { return () => new Promise<void>(() => { setInterval(() => {}, 1000); }); } });\n",
    );
    const result = await upUntilSignal(['--plugin-dir', plugins, ...dirs], 'SIGINT');
    expectExit(result, 0);
    expect(result.stderr).toContain('PLN_E_TEARDOWN_TIMEOUT');
    expect(result.stderr).toContain('"stuck"');
    expect(result.stderr).toMatch(/Stopped \d+ plugin\(s\) in [\d.]+ ms, 1 problem\(s\)\./);
  }, TEST_TIMEOUT);
});

describe('plinth plugin new', () => {
  test('creates .plinth/plugins/<name>, which up loads as active', async () => {
    const { workspace, dirs } = await sandbox();
    const created = await run(['plugin', 'new', 'my-plugin', ...dirs]);
    expectExit(created, 0);
    const dir = join(workspace, '.plinth', 'plugins', 'my-plugin');
    expect((await readdir(dir)).sort()).toEqual(['.gitignore', '.npmrc', 'README.md', 'index.test.ts', 'index.ts', 'manifest.json', 'package.json', 'tsconfig.json', 'vitest.config.ts']);

    // A workspace plugin needs approval; the one you just created is approved as created.
    expect(created.stdout).toContain('Approved it as it is now');

    const up = await run(['up', '--once', '--json', ...dirs]);
    expectExit(up, 0);
    expect(plugin(json(up).plugins, 'my-plugin')).toMatchObject({ state: 'active', source: 'workspace', version: '0.1.0' });

    // Once edited, it is a different plugin from the one approved.
    await writeFile(join(dir, 'index.ts'), `${readFileSync(join(dir, 'index.ts'), 'utf8')}// edited\n`);
    const edited = await run(['up', '--once', '--json', ...dirs]);
    expectExit(edited, 4);
    const refused = plugin(json(edited).plugins, 'my-plugin');
    expect(refused).toMatchObject({ state: 'failed', error: { code: 'PLN_E_PLUGIN_REFUSED' } });
    expect(refused.error?.message).toContain('plinth trust approve plugin my-plugin');

    // It guards before_tool: refused, it blocks tool calls (with the approve command) rather than let them through.
    const fired = await run(['hooks', 'run', 'before_tool', '--context', JSON.stringify({ tool: 'rm' }), '--json', ...dirs]);
    const decision = json<{ decision: { allow: boolean; blockedBy?: { plugin: string; code?: string; fix?: string } } }>(fired).decision;
    expect(decision.allow).toBe(false);
    expect(decision.blockedBy).toMatchObject({ plugin: 'my-plugin', code: 'PLN_E_GUARD_UNAVAILABLE' });
    expect(`${JSON.stringify(decision.blockedBy)}`).toContain('plinth trust approve plugin my-plugin');
  }, TEST_TIMEOUT);

  test('--json prints the folder and files', async () => {
    const { workspace, dirs } = await sandbox();
    const created = await run(['plugin', 'new', '@me/scoped-one', '--json', ...dirs]);
    expectExit(created, 0);
    const body = json<{ dir: string; files: string[]; approved: boolean }>(created);
    expect(body.dir).toBe(join(workspace, '.plinth', 'plugins', '@me', 'scoped-one'));
    expect(body.files).toContain('manifest.json');
    expect(body.approved).toBe(true);
  }, TEST_TIMEOUT);

  test('a bad name is PLN_E_SCAFFOLD_NAME, exit 1', async () => {
    const { workspace, dirs } = await sandbox();
    const result = await run(['plugin', 'new', 'Not A Name', '--json', ...dirs]);
    expectExit(result, 1);
    expect(json(result).error.code).toBe('PLN_E_SCAFFOLD_NAME');
    expect(existsSync(join(workspace, '.plinth', 'plugins'))).toBe(false);
  }, TEST_TIMEOUT);

  test('an existing folder is PLN_E_SCAFFOLD_EXISTS, exit 1', async () => {
    const { dirs } = await sandbox();
    expectExit(await run(['plugin', 'new', 'twice', ...dirs]), 0);
    const again = await run(['plugin', 'new', 'twice', ...dirs]);
    expectExit(again, 1);
    expect(again.stderr).toContain('PLN_E_SCAFFOLD_EXISTS');
  }, TEST_TIMEOUT);
});
