/**
 * Hot reload through the real watcher: a kernel with the builtin plugins
 * serving (as `plinth up` does), a linked plugin folder under development
 * (code whose main imports a module, and a hook script) and an
 * unrelated server from the user settings. Files are edited on disk, and the
 * test waits for the new version to answer events:
 *
 * 1. a change to a module the plugin's main imports, to the manifest, and to a hook script;
 * 2. a broken edit: the old version keeps answering and the line names the code; a fixed edit loads;
 * 3. the unrelated server's process is the same one throughout;
 * 4. `plinth up` prints one line per reload.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import { planReload } from '../plugins/extensions/reload.js';
import type { McpService, PluginStatus, ServerState, ServerStatus } from '../sdk/index.js';
import { ensureBuilt, start } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const STDIO_SERVER = join(root, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
/** Long enough for a loaded machine; a reload takes a fraction of it. */
const WAIT_MS = 20_000;

const folders: string[] = [];
const kernels: Kernel[] = [];
const savedCI = process.env.CI;

beforeAll(() => {
  process.env.CI = '1';
  ensureBuilt();
}, 300_000);
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
});
afterAll(async () => {
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-ext-reload-'));
  folders.push(dir);
  return dir;
}

/** The plugin folder `devtool`: main imports answer.ts; a before_tool hook script that says its version. */
async function writeDevtool(dir: string, { version = '1.0.0', answer = 'one', guard = 'g1' } = {}): Promise<void> {
  await mkdir(join(dir, 'hooks'), { recursive: true });
  await writeFile(join(dir, 'answer.ts'), `export const answer = ${JSON.stringify(answer)};\n`);
  await writeFile(
    join(dir, 'index.ts'),
    `import { definePlugin } from 'plinth/sdk';
     import { answer } from './answer.ts';
     export default definePlugin({ setup(kernel) { kernel.on('before_tool', () => ({ message: 'devtool ' + answer })); } });
    `,
  );
  await writeGuard(dir, guard);
  await writeManifest(dir, version);
}

async function writeManifest(dir: string, version: string): Promise<void> {
  const manifest = {
    name: 'devtool',
    version,
    kernel: '^1.0.0',
    main: './index.ts',
    hooks: { before_tool: [{ name: 'guard', command: 'node', args: ['hooks/guard.js'] }] },
  };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

async function writeGuard(dir: string, word: string): Promise<void> {
  await writeFile(
    join(dir, 'hooks', 'guard.js'),
    `let text = ''; process.stdin.on('data', (c) => (text += c)); process.stdin.on('end', () => process.stdout.write(JSON.stringify({ allow: true, message: 'guard ${word}' })));\n`,
  );
}

/** Resolves when `check` holds, polling; rejects with what was seen last after WAIT_MS. */
async function until<T>(what: string, read: () => Promise<T> | T, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  let last: T;
  for (;;) {
    last = await read();
    if (check(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function reached(mcp: McpService, server: string, state: ServerState): Promise<ServerStatus> {
  return until(`${server} ${state}`, () => mcp.servers().find((s) => s.name === server), (s) => s?.state === state) as Promise<ServerStatus>;
}

async function approveHooks(kernel: Kernel): Promise<void> {
  const { hooks } = await (await kernel.get('hooks')).definitions();
  const trust = await kernel.get('trust');
  for (const hook of hooks.filter((h) => h.plugin === 'devtool')) await trust.approve(trustSubject(hook));
}

/** A serving kernel with `devtool` linked from `dir` and the unrelated server `other`. */
async function serving(dir: string): Promise<{ kernel: Kernel; mcp: McpService; logs: string[]; home: string }> {
  const base = await temp();
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await mkdir(workspace, { recursive: true });
  await mkdir(join(home, 'plugins'), { recursive: true });
  const settings = {
    links: [dir],
    plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false }, extensions: { settings: { reloadDebounceMs: 100 } } },
    mcpServers: { other: { command: process.execPath, args: [STDIO_SERVER, '--name', 'other'] } },
  };
  await writeFile(join(home, 'settings.json'), JSON.stringify(settings));
  const logs: string[] = [];
  const kernel = new Kernel({ home, workspace, env: {}, logLevel: 'debug', logSink: (line) => void logs.push(line) });
  kernels.push(kernel);
  await kernel.boot();
  await approveHooks(kernel);
  const mcp = await kernel.get('mcp');
  await kernel.serve();
  return { kernel, mcp, logs, home };
}

const messages = async (kernel: Kernel) => (await kernel.emit('before_tool', { tool: 'ls' })).messages;
const reloads = (logs: readonly string[]) => logs.filter((l) => /\b(reloaded|kept|could not load) devtool@/.test(l));

describe('which plugins a batch of changes reloads', () => {
  const status = (name: string, dir: string, source: PluginStatus['source'] = 'user'): PluginStatus => ({ name, version: '1.0.0', source, state: 'active', provides: [], dir });
  const change = (absolutePath: string, kind: 'created' | 'changed' | 'deleted' = 'changed') => ({ path: absolutePath, absolutePath, kind });
  const plugins = [status('outer', '/p/outer'), status('inner', '/p/outer/vendor/inner'), status('core', '/b/core', 'builtin')];

  it('replaces the plugin whose folder holds the file (the deepest one), once per batch', () => {
    expect(planReload('/p', [change('/p/outer/index.ts'), change('/p/outer/lib/a.ts'), change('/p/outer/vendor/inner/manifest.json')], plugins)).toEqual({ replace: ['outer', 'inner'], rescan: false });
  });

  it('rescans for a change outside every plugin folder, or a manifest that went; ignores a staging dot-folder; never replaces a builtin plugin', () => {
    expect(planReload('/p', [change('/p/newbie/manifest.json', 'created')], plugins)).toEqual({ replace: [], rescan: true });
    expect(planReload('/p', [change('/p/outer/manifest.json', 'deleted')], plugins)).toEqual({ replace: [], rescan: true });
    expect(planReload('/p', [change('/p/.staging-123/manifest.json', 'created')], plugins)).toEqual({ replace: [], rescan: false });
    expect(planReload('/b', [change('/b/core/index.ts')], plugins)).toEqual({ replace: [], rescan: true });
  });
});

describe('hot reload while serving', () => {
  it('reloads a changed module, manifest and hook script; keeps the old version on a broken edit; never restarts the unrelated server', async () => {
    const dir = join(await temp(), 'devtool');
    await writeDevtool(dir);
    const { kernel, mcp, logs } = await serving(dir);
    const other = await reached(mcp, 'other', 'connected');
    expect(await messages(kernel)).toEqual(expect.arrayContaining(['devtool one', 'guard g1']));
    expect(kernel.status().find((p) => p.name === 'devtool')).toMatchObject({ linked: true, state: 'active' });

    // 1a. A module the main imports.
    await writeFile(join(dir, 'answer.ts'), 'export const answer = "two";\n');
    await until('devtool two', () => messages(kernel), (m) => m.includes('devtool two'));
    expect(reloads(logs).at(-1)).toContain('reloaded devtool@1.0.0');

    // 1b. The manifest.
    await writeManifest(dir, '1.0.1');
    await until('version 1.0.1', () => kernel.status().find((p) => p.name === 'devtool')?.version, (v) => v === '1.0.1');
    await until('the reload line', () => reloads(logs), (lines) => lines.some((l) => l.includes('reloaded devtool@1.0.1')));
    // The hook's version is the plugin's: its approval was of 1.0.0, so on a gate event it blocks, naming the fix, until approved again.
    expect((await kernel.emit('before_tool', { tool: 'ls' })).allow).toBe(false);
    await approveHooks(kernel);
    expect(await messages(kernel)).toEqual(expect.arrayContaining(['devtool two', 'guard g1']));

    // 1c. The hook script: reloaded; a changed hook needs approval again, then its new output is what runs.
    const before = reloads(logs).length;
    await writeGuard(dir, 'g2');
    await until('a reload', () => reloads(logs).length, (n) => n > before);
    await approveHooks(kernel);
    await until('guard g2', () => messages(kernel), (m) => m.includes('guard g2'));

    // 2. A broken edit: the old version keeps answering; the line says what is wrong.
    await writeFile(join(dir, 'index.ts'), "import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup( {\n");
    const kept = await until('the kept line', () => reloads(logs), (lines) => lines.some((l) => l.includes('kept devtool@1.0.1: PLN_E_')));
    expect(kept.at(-1)).toMatch(/kept devtool@1\.0\.1: PLN_E_[A-Z_]+: /);
    expect(await messages(kernel)).toContain('devtool two');
    expect(kernel.status().find((p) => p.name === 'devtool')).toMatchObject({ state: 'active', version: '1.0.1' });

    // A fixed edit loads.
    await writeFile(join(dir, 'index.ts'), `import { definePlugin } from 'plinth/sdk';\nimport { answer } from './answer.ts';\nexport default definePlugin({ setup(kernel) { kernel.on('before_tool', () => ({ message: 'devtool fixed ' + answer })); } });\n`);
    await until('devtool fixed two', () => messages(kernel), (m) => m.includes('devtool fixed two'));
    expect(reloads(logs).at(-1)).toContain('reloaded devtool@1.0.1');

    // 3. The unrelated server is the process it was.
    expect(mcp.servers().find((s) => s.name === 'other')).toMatchObject({ state: 'connected', pid: other.pid });
  }, 120_000);
});

describe('plugin folders that appear and go while serving', () => {
  it('a new folder in the user plugins folder is added, and removed again when it goes', async () => {
    const dir = join(await temp(), 'devtool');
    await writeDevtool(dir);
    const { kernel, logs, home } = await serving(dir);
    const fresh = join(home, 'plugins', 'newbie');
    await mkdir(fresh, { recursive: true });
    await writeFile(join(fresh, 'manifest.json'), JSON.stringify({ name: 'newbie', version: '0.3.0', kernel: '^1.0.0', description: 'arrives late' }));
    await until('newbie active', () => kernel.status().find((p) => p.name === 'newbie')?.state, (state) => state === 'active');
    await until('the added line', () => logs, (lines) => lines.some((l) => l.includes('added newbie@0.3.0')));

    await rm(fresh, { recursive: true, force: true });
    await until('newbie gone', () => kernel.status().find((p) => p.name === 'newbie'), (found) => found === undefined);
    await until('the removed line', () => logs, (lines) => lines.some((l) => l.includes('removed newbie@0.3.0')));
    expect(await messages(kernel)).toContain('devtool one');
  }, 60_000);
});

describe('the settings files while serving', () => {
  it('an edit of settings.json (as `plinth ext disable` from another terminal makes) applies without a restart', async () => {
    const dir = join(await temp(), 'devtool');
    await writeDevtool(dir);
    const { kernel, logs, home } = await serving(dir);
    expect(await messages(kernel)).toContain('devtool one');
    const file = join(home, 'settings.json');
    const settings = JSON.parse(await readFile(file, 'utf8')) as { plugins: Record<string, { enabled?: boolean }> };
    settings.plugins.devtool = { enabled: false };
    await writeFile(file, JSON.stringify(settings));
    await until('devtool disabled', () => kernel.status().find((p) => p.name === 'devtool')?.state, (state) => state === 'excluded');
    await until('the removed line', () => logs, (lines) => lines.some((l) => l.includes('removed devtool@')));
    expect(await messages(kernel)).not.toContain('devtool one');

    settings.plugins.devtool = {};
    await writeFile(file, JSON.stringify(settings));
    await until('devtool back', () => kernel.status().find((p) => p.name === 'devtool')?.state, (state) => state === 'active');
    expect(await messages(kernel)).toContain('devtool one');
  }, 60_000);
});

describe('plinth up', () => {
  it('prints one line per reload, naming the plugin and the outcome', async () => {
    const base = await temp();
    const dir = join(base, 'devtool');
    await writeDevtool(dir);
    const home = join(base, 'home');
    const workspace = join(base, 'project');
    await mkdir(workspace, { recursive: true });
    await mkdir(home, { recursive: true });
    await writeFile(join(home, 'settings.json'), JSON.stringify({ links: [dir], plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false }, extensions: { settings: { reloadDebounceMs: 100 } } } }));
    const child = start({ dirs: ['--home', home, '--workspace', workspace], workspace }, ['up']);
    const lines: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (line) => void lines.push(line));
    child.stdout!.resume();
    try {
      await until('plinth is up', () => lines, (l) => l.some((x) => x.includes('plinth is up')));
      await writeManifest(dir, '1.1.0');
      await until('the reload line', () => lines, (l) => l.includes('plinth: reloaded devtool@1.1.0'));
      await writeFile(join(dir, 'index.ts'), 'export default {\n');
      const seen = await until('the kept line', () => lines, (l) => l.some((x) => x.startsWith('plinth: kept devtool@1.1.0: PLN_E_')));
      expect(seen.filter((x) => x.startsWith('plinth: reloaded') || x.startsWith('plinth: kept'))).toHaveLength(2);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
    }
    expect(await readFile(join(dir, 'manifest.json'), 'utf8')).toContain('1.1.0');
  }, 120_000);
});
