/**
 * `plinth ext install|update|…` as a user runs them: the built command in a
 * sandboxed home, tarballs made by `npm pack` and by the registry's packer,
 * approval asked for (and its absence explained), and installs that are
 * killed in the middle of extraction and of the final move, or run twice at
 * once, leaving the previous version in place and a retry that succeeds.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, type Sandbox, cleanEnv, ensureBuilt, expectExit, json, run, sandbox, start } from './support/cli.js';
import { type FixturePlugin, servedRegistry, writePlugin } from './support/market.js';
import { bwrapHere } from './support/sandbox.js';

const exec = promisify(execFile);
const PTY = join(ROOT, 'test', 'support', 'on-terminal.py');
let base: string;
beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-market-cli-'));
}, 120_000);
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function box(registryUrl?: string): Promise<Sandbox> {
  const made = await sandbox('plinth-market-');
  closers.push(() => made.remove());
  await made.settings({ ...(registryUrl && { registries: [{ name: 'local', url: registryUrl }] }), plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
  return made;
}

async function registry(plugins: FixturePlugin[]) {
  const served = await servedRegistry(base, plugins);
  closers.push(() => served.server.close());
  return served;
}

type Listed = Array<{ name: string; version: string; source: string; state: string }>;
async function listed(sandboxed: Sandbox, name: string): Promise<Listed[number] | undefined> {
  const result = await run(sandboxed, ['plugins', 'list', '--json']);
  const data = json<{ plugins: Listed } | Listed>(result);
  return (Array.isArray(data) ? data : data.plugins).find((p) => p.name === name);
}

/**
 * Starts `plinth <args>` paused at `step` (PLINTH_MARKET_PAUSE_AT) and resolves once it says it is
 * there: the child, its exit, and all it wrote on stderr so far and later.
 */
async function pausedAt(home: Sandbox, args: string[], step: string) {
  const child = start(home, args, { PLINTH_MARKET_PAUSE_AT: step });
  const exited = new Promise<number | null>((done) => child.once('exit', done));
  let stderr = '';
  await new Promise<void>((done) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`marketplace: paused at ${step}`)) done();
    });
  });
  return { child, exited, stderr: () => stderr };
}

/** 5 MB of incompressible files, so that extraction takes a while. */
function bulk(): Record<string, Buffer> {
  return Object.fromEntries(Array.from({ length: 320 }, (_, i) => [`assets/part-${String(i).padStart(3, '0')}.bin`, randomBytes(16 * 1024)]));
}

describe('tarballs', () => {
  it('installs a tarball made by npm pack (package.json beside manifest.json), after approval with --yes', async () => {
    const dir = await writePlugin(join(base, 'npm'), { name: 'npm-style', version: '1.2.3' });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'plinth-plugin-npm-style', version: '1.2.3', type: 'module' }));
    const { stdout } = await exec('npm', ['pack', '--offline', '--json', '--pack-destination', base], { cwd: dir, env: { ...process.env, npm_config_update_notifier: 'false' } });
    const tarball = join(base, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
    const home = await box();
    const refused = await run(home, ['ext', 'install', tarball]);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_MARKET_APPROVAL');
    // Not a "no": nobody could be asked, and the error says why.
    expect(refused.stderr).toMatch(/must be approved before it is installed, and plinth could not ask: .*(terminal|CI)/);
    expect(refused.stderr).toContain('npm-style@1.2.3 declares:');
    expect(refused.stderr).toContain('code: runs ./index.ts inside plinth');
    expect(refused.stderr).toContain('--yes');
    expect(existsSync(join(home.home, 'plugins', 'npm-style'))).toBe(false);
    const installed = await run(home, ['ext', 'install', tarball, '--yes']);
    expectExit(installed, 0);
    expect(installed.stdout).toContain('installed npm-style@1.2.3 from file');
    expect(await listed(home, 'npm-style')).toMatchObject({ version: '1.2.3', source: 'user', state: 'active' });
    const lock = JSON.parse(await readFile(join(home.home, 'plugins.lock.json'), 'utf8')) as { plugins: Record<string, { integrity: string; registry: string; range: string }> };
    expect(lock.plugins['npm-style']).toMatchObject({ registry: 'file', range: tarball, integrity: expect.stringMatching(/^sha512-/) as string });
  }, 60_000);

  it('installs a tarball made by plinth registry pack, and reinstalling the same bytes changes nothing', async () => {
    const dir = await writePlugin(join(base, 'packer'), { name: 'packer-made', version: '0.3.0' });
    const out = join(base, 'packer-made-0.3.0.tgz');
    const home = await box();
    expectExit(await run(home, ['registry', 'pack', dir, '--out', out]), 0);
    const installed = await run(home, ['ext', 'install', out, '--yes']);
    expectExit(installed, 0);
    expect(installed.stdout).toContain('installed packer-made@0.3.0 from file');
    const again = await run(home, ['ext', 'install', out, '--yes']);
    expectExit(again, 0);
    expect(again.stdout).toContain('is already installed (--force installs it again)');
    expect(await listed(home, 'packer-made')).toMatchObject({ version: '0.3.0', source: 'user', state: 'active' });
  }, 60_000);

  it('installs from the registry server what its packer made, and --json says what changed', async () => {
    const { server } = await registry([{ name: 'packed', version: '1.0.0' }]);
    const home = await box(server.url);
    const result = await run(home, ['ext', 'install', 'packed', '--yes', '--json']);
    expectExit(result, 0);
    // A one-shot command does not load a first install: the next start (or a running `plinth up`) does.
    expect(json(result)).toMatchObject({ changes: [{ name: 'packed', to: '1.0.0', registry: 'local', loaded: false }], notes: [] });
    const search = await run(home, ['ext', 'search', 'pack']);
    expectExit(search, 0);
    expect(search.stdout).toMatch(/packed\s+1\.0\.0\s+local/);
  }, 60_000);
});

describe('what a one-shot command sets up', () => {
  const loadedLines = (stderr: string) => [...stderr.matchAll(/loaded ([\w@.-]+)@[\d.]+ in/g)].map((m) => m[1]).sort();

  it('install sets up the marketplace, its dependencies and the guards, not every plugin, and leaves a new plugin to the host that runs it', async () => {
    const { server } = await registry([{ name: 'fresh', version: '1.0.0' }]);
    const home = await box(server.url);
    const result = await run(home, ['-v', 'ext', 'install', 'fresh', '--yes']);
    expectExit(result, 0);
    expect(result.stdout).toContain('installed fresh@1.0.0 from local');
    // hooks, trust and sandbox are guards; launcher is a dependency of hooks. mcp and extensions (eager) wait; fresh is not loaded here.
    expect(loadedLines(result.stderr)).toEqual(['hooks', 'launcher', 'marketplace', 'sandbox', 'trust']);
    expect(await listed(home, 'fresh')).toMatchObject({ version: '1.0.0', source: 'user', state: 'active' });
  }, 60_000);

  it('update loads the new version in the command before the old one goes: a version that does not load is switched back', async () => {
    const { server, publish } = await registry([{ name: 'steady', version: '1.0.0' }]);
    const home = await box(server.url);
    expectExit(await run(home, ['ext', 'install', 'steady', '--yes']), 0);
    await publish({ name: 'steady', version: '1.1.0', broken: true });
    const broken = await run(home, ['ext', 'update', 'steady', '--yes']);
    expectExit(broken, 1);
    expect(broken.stderr).toContain('PLN_E_MARKET_LOAD');
    expect(broken.stderr).toContain('steady@1.0.0 is back in place');
    expect(await listed(home, 'steady')).toMatchObject({ version: '1.0.0', state: 'active' });
    await publish({ name: 'steady', version: '1.2.0' });
    const updated = await run(home, ['ext', 'update', 'steady', '--yes', '--json']);
    expectExit(updated, 0);
    expect(json(updated)).toMatchObject({ changes: [{ name: 'steady', from: '1.0.0', to: '1.2.0', loaded: true }] });
  }, 60_000);
});

describe('on a terminal', () => {
  /** `plinth <args>` on a pseudo-terminal (python's pty), answering its question with `answer`. */
  async function onTerminal(home: Sandbox, args: string[], answer: string): Promise<{ code: number; screen: string }> {
    const argv = [process.execPath, BIN, ...home.dirs, ...args];
    return new Promise((resolve) => {
      execFile('python3', [PTY, JSON.stringify(argv), JSON.stringify(cleanEnv({}, { ci: false })), answer], { cwd: home.workspace, timeout: 60_000 }, (error, stdout) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, screen: stdout });
      });
    });
  }

  it('shows what the plugin declares, asks, installs on "y" with a progress bar, and installs nothing on "n"', async () => {
    const { server } = await registry([{ name: 'asked', version: '1.0.0', files: bulk(), hooks: { before_tool: [{ name: 'audit', command: 'node', args: ['audit.js'] }] } }]);
    const home = await box(server.url);
    const declined = await onTerminal(home, ['ext', 'install', 'asked'], 'n');
    expect(declined.code, declined.screen).toBe(1);
    expect(declined.screen).toContain('asked@1.0.0 declares:');
    expect(declined.screen).toContain('hooks: before_tool audit: node audit.js');
    expect(declined.screen).toContain('Install asked@1.0.0? [y/N]');
    expect(declined.screen).toContain('PLN_E_MARKET_APPROVAL');
    expect(existsSync(join(home.home, 'plugins', 'asked'))).toBe(false);
    const accepted = await onTerminal(home, ['ext', 'install', 'asked'], 'y');
    expect(accepted.code, accepted.screen).toBe(0);
    expect(accepted.screen).toMatch(/asked \[[#.]+\] \d+% [\d.]+\/[\d.]+ MB/);
    expect(accepted.screen).toContain('installed asked@1.0.0 from local');
    expect(await listed(home, 'asked')).toMatchObject({ version: '1.0.0', state: 'active' });
  }, 90_000);
});

describe('the embedded default registry', () => {
  it('with no registry configured, search and install work offline from the registry plinth ships', async () => {
    const home = await box();
    const search = await run(home, ['ext', 'search', 'hello', '--json']);
    expectExit(search, 0);
    const hits = json<{ hits: Array<{ name: string; registry: string }> }>(search).hits;
    expect(hits.map((h) => h.name)).toEqual(expect.arrayContaining(['hello-command', 'hello-guard']));
    expect(new Set(hits.map((h) => h.registry))).toEqual(new Set(['plinth']));
    const installed = await run(home, ['ext', 'install', 'hello-command', '--yes']);
    expectExit(installed, 0);
    expect(installed.stdout).toContain('installed hello-command@');
    const hello = await run(home, ['hello', 'marketplace']);
    expectExit(hello, 0);
    expect(hello.stdout).toContain('marketplace');
  }, 60_000);

  it('stays available by name once registries are set: what came from it is checked against it, and --registry plinth installs from it', async () => {
    const home = await box();
    expectExit(await run(home, ['ext', 'install', 'hello-command', '--yes']), 0);
    // The configured registry has a plugin of the same name, newer: not the one installed.
    const { server } = await registry([{ name: 'hello-command', version: '9.0.0' }]);
    await home.settings({ registries: [{ name: 'local', url: server.url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
    const outdated = await run(home, ['ext', 'outdated', '--json']);
    expectExit(outdated, 0);
    expect(json(outdated)).toMatchObject({ plugins: [], unchecked: [], revoked: [] });
    const update = await run(home, ['ext', 'update', 'hello-command', '--yes']);
    expectExit(update, 0);
    expect(update.stdout).toContain('Nothing to do: up to date.');
    // Named, it is searched and installed from; unnamed, the configured registry is the one asked.
    const search = await run(home, ['ext', 'search', 'hello', '--registry', 'plinth', '--json']);
    expectExit(search, 0);
    expect(json<{ hits: Array<{ name: string; registry: string }> }>(search).hits).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'hello-guard', registry: 'plinth' })]));
    const installed = await run(home, ['ext', 'install', 'hello-guard', '--registry', 'plinth', '--yes']);
    expectExit(installed, 0);
    expect(installed.stdout).toContain('installed hello-guard@1.0.0 from plinth');
    const elsewhere = await run(home, ['ext', 'search', 'hello', '--json']);
    expect(new Set(json<{ hits: Array<{ registry: string }> }>(elsewhere).hits.map((h) => h.registry))).toEqual(new Set(['local']));
  }, 90_000);

  it('outdated names what it could not check and never calls it up to date', async () => {
    const served = await servedRegistry(base, [{ name: 'faraway', version: '1.0.0' }]);
    const home = await box(served.server.url);
    expectExit(await run(home, ['ext', 'install', 'faraway', '--yes']), 0);
    await served.server.close();
    await rm(join(home.home, 'cache'), { recursive: true, force: true });
    const outdated = await run(home, ['ext', 'outdated']);
    expectExit(outdated, 1);
    expect(outdated.stdout).not.toContain('up to date');
    expect(outdated.stdout).toContain('not checked: faraway@1.0.0 (registry local)');
    // A registry gone from the settings: the same.
    await home.settings({ registries: [{ name: 'acme', url: 'http://127.0.0.1:9/', scope: '@acme' }] });
    const gone = await run(home, ['ext', 'outdated', '--json']);
    expectExit(gone, 1);
    expect(json(gone)).toMatchObject({ plugins: [], unchecked: [expect.objectContaining({ name: 'faraway', registry: 'local' })] });
  }, 60_000);

  // Its hook runs confined (a downloaded plugin always is), so this needs bubblewrap.
  it.runIf(bwrapHere().ok)('the example guard, installed with --yes, blocks rm at once: the install approved its hook', async () => {
    const home = await box();
    expectExit(await run(home, ['ext', 'install', 'hello-guard', '--yes']), 0);
    const listedHooks = await run(home, ['hooks', 'list']);
    expect(listedHooks.stdout).toMatch(/hello-guard\/no-rm\s+before_tool\s+extension\s+approved/);
    const blocked = await run(home, ['hooks', 'run', 'before_tool', '--context', '{"tool":"rm"}', '--json']);
    expectExit(blocked, 5);
    expect(JSON.stringify(json(blocked))).toContain('hello-guard: the rm tool is not allowed');
    expectExit(await run(home, ['hooks', 'run', 'before_tool', '--context', '{"tool":"ls"}']), 0);
  }, 60_000);
});

describe('an install that is interrupted, or run twice at once', () => {
  it('killed in the middle of extraction: the previous version still loads and a retry succeeds', async () => {
    const { server, publish } = await registry([{ name: 'big', version: '1.0.0' }]);
    const home = await box(server.url);
    expectExit(await run(home, ['ext', 'install', 'big', '--yes']), 0);
    await publish({ name: 'big', version: '2.0.0', files: bulk() });
    const child = start(home, ['ext', 'install', 'big@2.0.0', '--yes']);
    let gone = false;
    const exited = new Promise((done) => child.once('exit', (code) => ((gone = true), done(code))));
    const plugins = join(home.home, 'plugins');
    // Kill it once the first extracted file of the new version appears in its staging folder.
    for (let seen = false; !seen; ) {
      expect(gone, 'the install ended before its extraction was seen').toBe(false);
      for (const entry of readdirSync(plugins).filter((e) => e.startsWith('.staging-'))) {
        const tree = join(plugins, entry, '0', 'tree', 'package', 'assets');
        if (existsSync(tree) && readdirSync(tree).length > 0) seen = true;
      }
      if (!seen) await new Promise((done) => setImmediate(done));
    }
    child.kill('SIGKILL');
    await exited;
    expect(await readlink(join(plugins, 'big'))).toBe(join('.versions', 'big@1.0.0'));
    expect(await listed(home, 'big')).toMatchObject({ version: '1.0.0', state: 'active' });
    const retry = await run(home, ['ext', 'install', 'big@2.0.0', '--yes']);
    expectExit(retry, 0);
    expect(await listed(home, 'big')).toMatchObject({ version: '2.0.0', state: 'active' });
    // The dead install's staging folder went with the retry.
    expect(readdirSync(plugins).filter((e) => e.startsWith('.staging-'))).toEqual([]);
  }, 90_000);

  it('killed in the middle of the final move: the previous version still loads and a retry succeeds', async () => {
    const { server, publish } = await registry([{ name: 'mover', version: '1.0.0' }]);
    const home = await box(server.url);
    expectExit(await run(home, ['ext', 'install', 'mover', '--yes']), 0);
    await publish({ name: 'mover', version: '1.1.0' });
    const { child, exited } = await pausedAt(home, ['ext', 'update', 'mover', '--yes'], 'move');
    child.kill('SIGKILL');
    await exited;
    const plugins = join(home.home, 'plugins');
    expect(await readlink(join(plugins, 'mover'))).toBe(join('.versions', 'mover@1.0.0'));
    expect(await listed(home, 'mover')).toMatchObject({ version: '1.0.0', state: 'active' });
    const lock = JSON.parse(await readFile(join(home.home, 'plugins.lock.json'), 'utf8')) as { plugins: Record<string, { version: string }> };
    expect(lock.plugins.mover?.version).toBe('1.0.0');
    const retry = await run(home, ['ext', 'update', 'mover', '--yes']);
    expectExit(retry, 0);
    expect(retry.stdout).toContain('updated mover@1.1.0 (was 1.0.0)');
    expect(await listed(home, 'mover')).toMatchObject({ version: '1.1.0', state: 'active' });
  }, 90_000);

  it('killed between the two renames of --force: the next command puts the version back; a folder deleted by hand is reported, then restored', async () => {
    const { server } = await registry([{ name: 'again', version: '1.0.0' }]);
    const home = await box(server.url);
    expectExit(await run(home, ['ext', 'install', 'again', '--yes']), 0);
    const plugins = join(home.home, 'plugins');
    const folder = join(plugins, '.versions', 'again@1.0.0');
    const { child, exited } = await pausedAt(home, ['ext', 'install', 'again', '--force', '--yes'], 'replace');
    child.kill('SIGKILL');
    await exited;
    // The old folder is set aside and the new one is not in yet: the plugin is said to be missing, not passed over.
    expect(existsSync(folder)).toBe(false);
    const broken = await run(home, ['plugins', 'list']);
    expect(broken.stdout + broken.stderr).toContain('PLN_E_PLUGIN_LINK_BROKEN');
    // Any marketplace command settles what the killed one left: the version set aside goes back, as it was.
    const verified = await run(home, ['ext', 'verify', 'again']);
    expectExit(verified, 0);
    expect(verified.stdout).toContain('again@1.0.0: ok, every file as installed');
    expect(readdirSync(join(plugins, '.versions'))).toEqual(['again@1.0.0']);
    expect(await listed(home, 'again')).toMatchObject({ version: '1.0.0', state: 'active' });

    await rm(folder, { recursive: true });
    const missing = await run(home, ['ext', 'verify', 'again']);
    expectExit(missing, 1);
    expect(missing.stdout).toContain(`again@1.0.0: missing: its folder ${folder} is gone: it does not load (plinth ext install --force again@1.0.0)`);
    expectExit(await run(home, ['ext', 'install', 'again@1.0.0', '--force', '--yes']), 0);
    expect(await listed(home, 'again')).toMatchObject({ version: '1.0.0', state: 'active' });
    expectExit(await run(home, ['ext', 'verify', 'again']), 0);
  }, 90_000);

  it('killed with SIGKILL holding its plugin lock: the next command removes the dead lock and says nothing of it', async () => {
    const { server } = await registry([{ name: 'locked', version: '1.0.0' }]);
    const home = await box(server.url);
    const plugins = join(home.home, 'plugins');
    const { child, exited } = await pausedAt(home, ['ext', 'install', 'locked', '--yes'], 'extract');
    expect(readdirSync(plugins)).toContain('.lock-locked');
    child.kill('SIGKILL');
    await exited;
    expect(readdirSync(plugins)).toContain('.lock-locked');
    // Any marketplace command settles what the dead one left: its staging folder and its lock.
    const outdated = await run(home, ['ext', 'outdated']);
    expectExit(outdated, 0);
    expect(readdirSync(plugins).filter((e) => e.startsWith('.'))).toEqual([]);
    const installed = await run(home, ['ext', 'install', 'locked', '--yes']);
    expectExit(installed, 0);
    expect(installed.stderr).not.toMatch(/lock|PLN_E_/i);
    expect(readdirSync(plugins).filter((e) => e.startsWith('.')).sort()).toEqual(['.versions']);
  }, 90_000);

  it('install of a URL it does not fetch from says which sources it takes, fetching nothing', async () => {
    const home = await box();
    // (git URLs and owner/repo are installed from git: test/marketplace-git.test.ts)
    for (const spec of ['ftp://example.test/o/r', 'github:o/r']) {
      const result = await run(home, ['ext', 'install', spec, '--json']);
      expectExit(result, 1);
      expect(json<{ error: { code: string; message: string } }>(result).error).toMatchObject({ code: 'PLN_E_MARKET_SOURCE', message: expect.stringContaining('name, name@range or name@tag') as unknown });
    }
    expect(existsSync(join(home.home, 'plugins')) ? readdirSync(join(home.home, 'plugins')).filter((e) => e.startsWith('.lock')) : []).toEqual([]);
  }, 60_000);

  it('interrupted with SIGTERM before the move: it says so, removes its staging folder and changes nothing', async () => {
    const { server, publish } = await registry([{ name: 'calm', version: '1.0.0' }]);
    const home = await box(server.url);
    expectExit(await run(home, ['ext', 'install', 'calm', '--yes']), 0);
    await publish({ name: 'calm', version: '2.0.0' });
    const { child, exited, stderr } = await pausedAt(home, ['ext', 'install', 'calm@2', '--yes'], 'extract');
    child.kill('SIGTERM');
    expect(await exited).not.toBe(0);
    expect(stderr()).toContain('PLN_E_MARKET_INTERRUPTED');
    const plugins = join(home.home, 'plugins');
    expect(readdirSync(plugins).filter((e) => e.startsWith('.') && e !== '.versions')).toEqual([]);
    expect(readdirSync(join(plugins, '.versions'))).toEqual(['calm@1.0.0']);
    expect(await listed(home, 'calm')).toMatchObject({ version: '1.0.0', state: 'active' });
  }, 90_000);

  it('two installs of the same plugin at once: one waits for the other, and the plugin is installed once', async () => {
    const { server } = await registry([{ name: 'twice', version: '1.0.0', files: bulk() }]);
    const home = await box(server.url);
    const [a, b] = await Promise.all([run(home, ['ext', 'install', 'twice', '--yes']), run(home, ['ext', 'install', 'twice', '--yes'])]);
    expectExit(a, 0);
    expectExit(b, 0);
    expect([a.stdout, b.stdout].filter((out) => out.includes('installed twice@1.0.0'))).toHaveLength(1);
    expect([a.stdout, b.stdout].filter((out) => out.includes('Nothing to do: twice is already installed'))).toHaveLength(1);
    const plugins = join(home.home, 'plugins');
    expect(readdirSync(join(plugins, '.versions'))).toEqual(['twice@1.0.0']);
    expect(readdirSync(plugins).filter((e) => e.startsWith('.')).sort()).toEqual(['.versions']);
    expect(await listed(home, 'twice')).toMatchObject({ version: '1.0.0', state: 'active' });
  }, 90_000);
});


describe('permissions at install', () => {
  const DECLARED = { network: { allow: ['api.example.com'] }, env: ['GREETER_TOKEN'] };

  it('--yes installs without granting; --grant also grants what the plugin declares, stored as plinth perms grant stores it; a first install is reviewed at once either way', async () => {
    const { server } = await registry([{ name: 'asker', version: '1.0.0', permissions: DECLARED }, { name: 'granted', version: '1.0.0', permissions: DECLARED }]);
    const home = await box(server.url);
    const yes = await run(home, ['ext', 'install', 'asker', '--yes']);
    expectExit(yes, 0);
    expect(yes.stderr).toContain('asker asks for permissions you have not granted (network api.example.com, env GREETER_TOKEN): grant them with `plinth perms grant asker`');

    const grant = await run(home, ['ext', 'install', 'granted', '--yes', '--grant']);
    expectExit(grant, 0);
    expect(grant.stderr).toContain('granted granted the permissions it declares');
    expect(grant.stderr).not.toContain('asks for permissions');
    const stored = JSON.parse(await readFile(join(home.home, 'sandbox', 'grants.json'), 'utf8'));
    expect(stored.plugins.granted).toMatchObject({ version: '1.0.0', source: 'downloaded', permissions: DECLARED });
    expect(stored.plugins.asker).toBeUndefined();
  });
});

describe('a registry folder', () => {
  it('that does not exist (a typo in its url) is said to be missing, not to lack the plugin asked for', async () => {
    const home = await box();
    const missing = join(home.base, 'plinth-registy');
    await home.settings({ registries: [{ name: 'folder', url: missing }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
    for (const args of [['ext', 'install', 'lint-guard', '--yes', '--json'], ['ext', 'search', 'lint', '--json']]) {
      const result = await run(home, args);
      expectExit(result, 1);
      const { error } = json<{ error: { code: string; message: string; hint: string } }>(result);
      expect(error.code).toBe('PLN_E_MARKET_REGISTRY_UNREACHABLE');
      expect(error.message).toContain(`the folder ${missing} does not exist`);
      expect(error.hint).toContain('"url"');
      expect(error.hint).not.toContain('plinth ext search');
    }
  }, 60_000);
});
