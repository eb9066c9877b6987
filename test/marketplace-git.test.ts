/**
 * Plugins from where people publish them: Claude Code and Codex marketplaces
 * (`plinth ext marketplace add|list|update|remove`, `ext install
 * <plugin>@<marketplace>`) and git repositories (`ext install <git url>#ref`,
 * `--ref`), as a user runs them. Every repository is a real one made here with
 * git and served by `git daemon` on 127.0.0.1 or read through `file://`; the
 * archive comes from an HTTP server on 127.0.0.1 and the npm entry from
 * plinth's registry server. Nothing is fetched from the network.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { create as createTar } from 'tar';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox, start } from './support/cli.js';
import { servedRegistry, writePlugin } from './support/market.js';
import { write } from './support/peer-folders.js';

const exec = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/** Runs git in `cwd` as a publisher would, with a name and address given on the command line. */
async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('git', ['-c', 'user.name=Publisher', '-c', 'user.email=publisher@example.test', '-c', 'init.defaultBranch=main', ...args], { cwd, env: GIT_ENV });
  return stdout.trim();
}

/** Commits everything in `dir` (a repository is made on first use), tags it when asked; the commit id. */
async function commitAll(dir: string, message: string, tag?: string): Promise<string> {
  if (!existsSync(join(dir, '.git'))) await git(dir, 'init', '-q');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', message);
  if (tag) await git(dir, 'tag', tag);
  return git(dir, 'rev-parse', 'HEAD');
}

/** A Claude Code plugin folder: `.claude-plugin/plugin.json` and a command. */
async function claudePlugin(dir: string, name: string, version: string, description = `${name}, a Claude Code plugin`): Promise<void> {
  await write(join(dir, '.claude-plugin', 'plugin.json'), { name, version, description, author: { name: 'Publisher' } });
  await write(join(dir, 'commands', 'hello.md'), `---\ndescription: Say hello from ${name}\n---\nSay hello.\n`);
}

let base: string;
let reposRoot: string;
let daemon: ChildProcess;
let daemonUrl: string;
let archiveServer: Server;
let archiveUrl: string;
let archiveSha: string;
let npmUrl: string;
let closeNpm: () => Promise<unknown>;
let claudeMarket: string;
let monoCommit: string;

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

async function accepting(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise<boolean>((done) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), done(true)));
      socket.once('error', () => done(false));
    });
    if (ok) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`git daemon never listened on ${port}`);
}

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-market-git-'));
  reposRoot = join(base, 'served');
  await mkdir(reposRoot, { recursive: true });

  // A plugin repository of its own (plinth's manifest), served by git daemon.
  const solo = join(reposRoot, 'solo.git');
  const soloSource = await writePlugin(join(base, 'src'), { name: 'solo', version: '1.0.0', description: 'a plugin in its own git repository' });
  await exec('cp', ['-r', soloSource, solo]);
  await commitAll(solo, 'solo 1.0.0');

  // A monorepo whose subfolder is a plugin (git-subdir), read through file://.
  const mono = join(base, 'mono');
  await claudePlugin(join(mono, 'packages', 'sub-plugin'), 'sub-plugin', '0.3.0');
  await write(join(mono, 'README.md'), '# a monorepo\n');
  monoCommit = await commitAll(mono, 'mono');

  // An archive pinned by SHA-256, served over HTTP.
  const archived = await writePlugin(join(base, 'src'), { name: 'archived', version: '2.1.0', description: 'a plugin published as an archive' });
  const archive = join(base, 'archived-2.1.0.tgz');
  await createTar({ gzip: true, file: archive, cwd: archived, prefix: 'package', portable: true }, ['manifest.json', 'index.ts']);
  const archiveBytes = await readFile(archive);
  archiveSha = createHash('sha256').update(archiveBytes).digest('hex');
  archiveServer = createServer((req, res) => {
    if (req.url === '/archived-2.1.0.tgz') return void res.writeHead(200, { 'content-type': 'application/gzip' }).end(archiveBytes);
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => archiveServer.listen(0, '127.0.0.1', done));
  archiveUrl = `http://127.0.0.1:${(archiveServer.address() as AddressInfo).port}/archived-2.1.0.tgz`;

  // An npm entry: a plugin in plinth's registry server.
  const npm = await servedRegistry(base, [{ name: 'npm-plugin', version: '1.4.0', description: 'a plugin from an npm registry' }]);
  npmUrl = npm.server.url;
  closeNpm = () => npm.server.close();

  // git daemon on 127.0.0.1 serves every repository under reposRoot.
  const port = await freePort();
  daemon = spawn('git', ['daemon', '--reuseaddr', `--base-path=${reposRoot}`, '--export-all', '--listen=127.0.0.1', `--port=${port}`, reposRoot], { env: GIT_ENV, stdio: 'ignore' });
  await accepting(port);
  daemonUrl = `git://127.0.0.1:${port}`;

  // The Claude Code marketplace: one plugin of each source kind.
  claudeMarket = join(reposRoot, 'claude-market.git');
  await claudePlugin(join(claudeMarket, 'plugins', 'relative-plugin'), 'relative-plugin', '1.0.0', 'lints the relative way');
  await write(join(claudeMarket, '.claude-plugin', 'marketplace.json'), {
    name: 'team-tools',
    owner: { name: 'Team', email: 'team@example.test' },
    metadata: { description: 'Tools of the team' },
    plugins: [
      { name: 'relative-plugin', source: './plugins/relative-plugin', description: 'lints the relative way', keywords: ['lint'] },
      { name: 'solo', source: { source: 'url', url: `${daemonUrl}/solo.git` }, description: 'a plugin in its own git repository' },
      { name: 'sub-plugin', source: { source: 'git-subdir', url: `file://${mono}`, path: 'packages/sub-plugin', ref: 'main', sha: monoCommit }, description: 'from a monorepo' },
      { name: 'archived', source: { source: 'archive', url: archiveUrl, sha256: archiveSha }, description: 'an archive' },
      { name: 'tampered', source: { source: 'archive', url: archiveUrl, sha256: '0'.repeat(64) }, description: 'an archive whose pin does not match' },
      { name: 'npm-plugin', source: { source: 'npm', package: 'npm-plugin', version: '1.4.0', registry: npmUrl }, description: 'from npm' },
      { name: 'escaping', source: './plugins/../../outside', description: 'leads outside the marketplace' },
      { name: 'someday', source: { source: 'hg', url: 'https://example.test/x' }, description: 'a source kind nobody installs' },
    ],
  });
  await commitAll(claudeMarket, 'the team marketplace');
}, 120_000);

afterAll(async () => {
  daemon?.kill();
  await new Promise((done) => archiveServer?.close(done));
  await closeNpm?.();
  await rm(base, { recursive: true, force: true });
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-market-git-');
  closers.push(() => made.remove());
  await made.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
  return made;
}

interface Lock {
  plugins: Record<string, { version: string; registry: string; resolved: string; integrity: string; source?: { kind: string; url?: string; ref?: string; commit?: string; path?: string; marketplace?: string }; previous?: { version: string; source?: { ref?: string } } }>;
}
async function lock(home: Sandbox): Promise<Lock> {
  return JSON.parse(await readFile(join(home.home, 'plugins.lock.json'), 'utf8').catch(() => '{"plugins":{}}')) as Lock;
}

describe('a Claude Code marketplace served by git daemon', () => {
  it('is added, listed and searched beside the registries, each result naming where it comes from', async () => {
    const home = await box();
    const added = await run(home, ['ext', 'marketplace', 'add', `${daemonUrl}/claude-market.git`]);
    expectExit(added, 0);
    expect(added.stdout).toContain('Added marketplace team-tools (Claude Code catalogue, 7 plugins)');
    // The entries plinth cannot install are named, not silently dropped.
    expect(added.stderr).toContain('team-tools: skipped someday: plugins.7.source.source: the source kind "hg" is not one plinth installs');

    const listed = json<{ marketplaces: Array<{ name: string; format: string; plugins: number; source: { kind: string; url: string }; commit: string }> }>(await run(home, ['ext', 'marketplace', 'list', '--json']));
    expect(listed.marketplaces).toEqual([expect.objectContaining({ name: 'team-tools', format: 'claude', plugins: 7, source: { kind: 'git', url: `${daemonUrl}/claude-market.git` }, commit: await git(claudeMarket, 'rev-parse', 'HEAD') })]);
    expect(existsSync(join(home.home, 'cache', 'marketplaces', 'team-tools', 'catalogue.json'))).toBe(true);

    const found = json<{ hits: Array<{ name: string; registry: string }> }>(await run(home, ['ext', 'search', 'lint', '--json']));
    expect(found.hits).toContainEqual(expect.objectContaining({ name: 'relative-plugin', registry: 'marketplace:team-tools' }));
    // The embedded registry is still searched with it.
    const all = json<{ hits: Array<{ name: string; registry: string }> }>(await run(home, ['ext', 'search', '--json', '--limit', '100']));
    expect(all.hits.map((h) => h.registry)).toEqual(expect.arrayContaining(['plinth', 'marketplace:team-tools']));
    const text = await run(home, ['ext', 'search', 'monorepo']);
    expect(text.stdout).toMatch(/sub-plugin\s+-\s+marketplace:team-tools\s+from a monorepo/);
  }, 60_000);

  it('installs one plugin of each source kind by <plugin>@<marketplace>, recording where each came from', async () => {
    const home = await box();
    expectExit(await run(home, ['ext', 'marketplace', 'add', `${daemonUrl}/claude-market.git`]), 0);
    const marketCommit = await git(claudeMarket, 'rev-parse', 'HEAD');
    const soloCommit = await git(join(reposRoot, 'solo.git'), 'rev-parse', 'HEAD');

    // Without --yes (and no terminal) nothing is installed, and what it declares is shown.
    const unapproved = await run(home, ['ext', 'install', 'relative-plugin@team-tools']);
    expectExit(unapproved, 1);
    expect(unapproved.stderr).toContain(`relative-plugin@1.0.0 from ${daemonUrl}/claude-market.git#${marketCommit}:plugins/relative-plugin declares:`);
    expect(unapproved.stderr).toContain('PLN_E_MARKET_APPROVAL');

    for (const name of ['relative-plugin', 'solo', 'sub-plugin', 'archived', 'npm-plugin']) {
      const result = await run(home, ['ext', 'install', `${name}@team-tools`, '--yes']);
      expectExit(result, 0);
    }
    const { plugins } = await lock(home);
    expect(plugins['relative-plugin']).toMatchObject({ version: '1.0.0', registry: 'team-tools', source: { kind: 'local', url: `${daemonUrl}/claude-market.git`, commit: marketCommit, path: 'plugins/relative-plugin', marketplace: 'team-tools' } });
    expect(plugins.solo).toMatchObject({ version: '1.0.0', resolved: `${daemonUrl}/solo.git#${soloCommit}`, source: { kind: 'git', url: `${daemonUrl}/solo.git`, commit: soloCommit, marketplace: 'team-tools' } });
    expect(plugins['sub-plugin']).toMatchObject({ version: '0.3.0', source: { kind: 'git', ref: 'main', commit: monoCommit, path: 'packages/sub-plugin' } });
    expect(plugins.archived).toMatchObject({ version: '2.1.0', integrity: `sha256-${Buffer.from(archiveSha, 'hex').toString('base64')}`, resolved: archiveUrl, source: { kind: 'archive', url: archiveUrl } });
    expect(plugins['npm-plugin']).toMatchObject({ version: '1.4.0', registry: 'command-line', source: { kind: 'npm', marketplace: 'team-tools' } });

    // Each is a plugin as any other: listed, its files checked, and removed.
    const list = json<{ plugins: Array<{ name: string; version: string; source: string }> } | Array<{ name: string; version: string; source: string }>>(await run(home, ['plugins', 'list', '--json']));
    const names = (Array.isArray(list) ? list : list.plugins).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['relative-plugin', 'solo', 'sub-plugin', 'archived', 'npm-plugin']));
    const verified = json<{ plugins: Array<{ name: string; status: string }> }>(await run(home, ['ext', 'verify', '--json']));
    expect(verified.plugins.map((p) => `${p.name}:${p.status}`).sort()).toEqual(['archived:ok', 'npm-plugin:ok', 'relative-plugin:ok', 'solo:ok', 'sub-plugin:ok']);
    // No .git came with a git source.
    expect(existsSync(join(home.home, 'plugins', 'solo', '.git'))).toBe(false);
    expectExit(await run(home, ['ext', 'uninstall', 'sub-plugin']), 0);
    expect(existsSync(join(home.home, 'plugins', 'sub-plugin'))).toBe(false);
  }, 120_000);

  it('refuses an archive whose SHA-256 does not match, with nothing installed', async () => {
    const home = await box();
    expectExit(await run(home, ['ext', 'marketplace', 'add', `${daemonUrl}/claude-market.git`]), 0);
    const refused = await run(home, ['ext', 'install', 'tampered@team-tools', '--yes']);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_INTEGRITY_MISMATCH');
    expect((await lock(home)).plugins).toEqual({});
    const plugins = join(home.home, 'plugins');
    expect(readdirSync(plugins).filter((e) => !e.startsWith('.lock'))).toEqual([]);
    // An archive URL given by hand needs its pin, and is refused before anything is fetched without one.
    const unpinned = await run(home, ['ext', 'install', archiveUrl, '--yes']);
    expectExit(unpinned, 1);
    expect(unpinned.stderr).toContain('plinth installs one only with its SHA-256 pinned');
    // Pinned by its digest, an archive may be redirected to another origin (as release assets are).
    const mirror = createServer((_req, res) => res.writeHead(302, { location: archiveUrl }).end());
    await new Promise<void>((done) => mirror.listen(0, '127.0.0.1', done));
    closers.push(() => new Promise((done) => mirror.close(done)));
    const moved = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}/releases/archived.tgz`;
    expectExit(await run(home, ['ext', 'install', moved, '--sha256', archiveSha, '--yes']), 0);
    expect((await lock(home)).plugins.archived).toMatchObject({ version: '2.1.0', resolved: moved });
  }, 60_000);

  it('refuses an entry whose folder leads outside the marketplace, and a plugin it does not list', async () => {
    const home = await box();
    expectExit(await run(home, ['ext', 'marketplace', 'add', `${daemonUrl}/claude-market.git`]), 0);
    const escaping = await run(home, ['ext', 'install', 'escaping@team-tools', '--yes']);
    expectExit(escaping, 1);
    expect(escaping.stderr).toContain('leads outside the marketplace');
    const missing = await run(home, ['ext', 'install', 'nothing-here@team-tools', '--yes']);
    expectExit(missing, 1);
    expect(missing.stderr).toContain('PLN_E_MARKETPLACE_UNKNOWN: marketplace "team-tools" has no plugin "nothing-here"');
    const skipped = await run(home, ['ext', 'install', 'someday@team-tools', '--yes']);
    expect(skipped.stderr).toContain('with a source plinth cannot install');
    expect((await lock(home)).plugins).toEqual({});
  }, 60_000);

  it('update fetches the catalogue again; remove forgets it and keeps what was installed', async () => {
    const work = join(base, 'market-clone');
    await exec('git', ['clone', '-q', claudeMarket, work], { env: GIT_ENV });
    const home = await box();
    expectExit(await run(home, ['ext', 'marketplace', 'add', `file://${work}`]), 0);
    expectExit(await run(home, ['ext', 'install', 'relative-plugin@team-tools', '--yes']), 0);
    const file = join(work, '.claude-plugin', 'marketplace.json');
    const catalogue = JSON.parse(await readFile(file, 'utf8')) as { plugins: unknown[] };
    await claudePlugin(join(work, 'plugins', 'newcomer'), 'newcomer', '0.1.0', 'arrived later');
    catalogue.plugins.push({ name: 'newcomer', source: './plugins/newcomer', description: 'arrived later' });
    await writeFile(file, JSON.stringify(catalogue, null, 2));
    const after = await commitAll(work, 'a newcomer');

    expect(json<{ hits: unknown[] }>(await run(home, ['ext', 'search', 'arrived', '--json'])).hits).toEqual([]);
    const updated = await run(home, ['ext', 'marketplace', 'update', 'team-tools']);
    expectExit(updated, 0);
    expect(updated.stdout).toContain(`Updated marketplace team-tools: 8 plugins at ${after.slice(0, 12)}`);
    expect(json<{ hits: Array<{ name: string }> }>(await run(home, ['ext', 'search', 'arrived', '--json'])).hits.map((h) => h.name)).toEqual(['newcomer']);

    // An update killed between its two renames: the next command puts the catalogue back as it was.
    const child = start(home, ['ext', 'marketplace', 'update', 'team-tools'], { PLINTH_MARKET_PAUSE_AT: 'marketplace-swap' });
    const exited = new Promise((done) => child.once('exit', done));
    let said = '';
    await new Promise<void>((done) => child.stderr!.on('data', (chunk: Buffer) => ((said += chunk.toString()), said.includes('paused at marketplace-swap') && done())));
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(join(home.home, 'cache', 'marketplaces', 'team-tools'))).toBe(false);
    const back = json<{ marketplaces: Array<{ name: string; plugins: number; skipped: string[] }> }>(await run(home, ['ext', 'marketplace', 'list', '--json']));
    expect(back.marketplaces).toEqual([expect.objectContaining({ name: 'team-tools', plugins: 8 })]);
    expect(readdirSync(join(home.home, 'cache', 'marketplaces')).filter((e) => e.startsWith('.'))).toEqual([]);

    const removed = await run(home, ['ext', 'marketplace', 'remove', 'team-tools', '--json']);
    expectExit(removed, 0);
    expect(json<{ removed: string }>(removed).removed).toBe('team-tools');
    expect(json<{ marketplaces: unknown[] }>(await run(home, ['ext', 'marketplace', 'list', '--json'])).marketplaces).toEqual([]);
    expect(existsSync(join(home.home, 'cache', 'marketplaces', 'team-tools'))).toBe(false);
    expect((await lock(home)).plugins['relative-plugin']?.version).toBe('1.0.0');
    const gone = await run(home, ['ext', 'install', 'newcomer@team-tools', '--yes']);
    expectExit(gone, 1);
  }, 90_000);

  it('names the field of a catalogue that is not one', async () => {
    const bad = join(base, 'bad-market');
    await write(join(bad, '.claude-plugin', 'marketplace.json'), { name: 'bad', owner: { name: 'x' }, plugins: 'not a list' });
    const home = await box();
    const result = await run(home, ['ext', 'marketplace', 'add', bad]);
    expectExit(result, 1);
    expect(result.stderr).toContain('PLN_E_MARKETPLACE_INVALID');
    expect(result.stderr).toContain('"plugins"');
    const none = await run(home, ['ext', 'marketplace', 'add', join(base, 'src')]);
    expect(none.stderr).toContain('holds no marketplace catalogue');
    // A catalogue named like a version or the latest tag would take over name@latest: refused.
    for (const name of ['latest', '2.x']) {
      const taker = join(base, `taker-${name}`);
      await write(join(taker, '.claude-plugin', 'marketplace.json'), { name, owner: { name: 'x' }, plugins: [] });
      const refused = await run(home, ['ext', 'marketplace', 'add', taker]);
      expectExit(refused, 1);
      expect(refused.stderr).toContain('reads as a version or the latest tag');
    }
  }, 30_000);
});

describe('a Claude Code marketplace in a folder, with a pluginRoot', () => {
  it('reads it where it is; a bare folder name is below metadata.pluginRoot', async () => {
    const market = join(base, 'rooted-market');
    await claudePlugin(join(market, 'plugins', 'formatter'), 'formatter', '3.0.0', 'formats');
    await write(join(market, '.claude-plugin', 'marketplace.json'), { name: 'rooted', owner: { name: 'Team' }, metadata: { pluginRoot: './plugins' }, plugins: [{ name: 'formatter', source: 'formatter' }] });
    const home = await box();
    const added = await run(home, ['ext', 'marketplace', 'add', market]);
    expectExit(added, 0);
    expect(added.stdout).toContain(`Added marketplace rooted (Claude Code catalogue, 1 plugin) from ${market}.`);
    expectExit(await run(home, ['ext', 'install', 'formatter@rooted', '--yes']), 0);
    expect((await lock(home)).plugins.formatter).toMatchObject({ version: '3.0.0', source: { kind: 'local', url: market, path: 'plugins/formatter', marketplace: 'rooted' } });
    // Read where it is: no clone of it is made.
    expect(existsSync(join(home.home, 'cache', 'marketplaces', 'rooted', 'repo'))).toBe(false);
    const text = await run(home, ['ext', 'marketplace', 'list']);
    expect(text.stdout).toMatch(/rooted\s+claude\s+1\s+/);
  }, 60_000);
});

describe('a Codex marketplace in a folder', () => {
  it('is read from .agents/plugins/marketplace.json and its local entries install', async () => {
    const market = join(base, 'codex-market');
    const plugin = await writePlugin(join(base, 'src'), { name: 'codex-helper', version: '0.2.0', description: 'helps Codex users' });
    await exec('cp', ['-r', plugin, join(market, 'plugins', 'codex-helper')]).catch(async () => {
      await mkdir(join(market, 'plugins'), { recursive: true });
      await exec('cp', ['-r', plugin, join(market, 'plugins', 'codex-helper')]);
    });
    await write(join(market, 'plugins', 'codex-helper', '.codex-plugin', 'plugin.json'), { name: 'codex-helper', version: '0.2.0', description: 'helps Codex users' });
    await write(join(market, '.agents', 'plugins', 'marketplace.json'), {
      name: 'codex-shelf',
      interface: { displayName: 'The Codex shelf' },
      plugins: [
        { name: 'codex-helper', source: { source: 'local', path: './plugins/codex-helper' }, policy: { installation: 'AVAILABLE', authentication: 'ON_INSTALL' }, category: 'Productivity' },
        { name: 'linked-out', source: { source: 'local', path: './shelf/outside' }, policy: { installation: 'AVAILABLE', authentication: 'ON_INSTALL' }, category: 'Productivity' },
      ],
    });
    // `shelf` is a link of the marketplace to a folder outside it: what is under it is never taken.
    await writePlugin(join(base, 'elsewhere'), { name: 'outside', version: '1.0.0' }).then((dir) => exec('mv', [dir, join(base, 'elsewhere', 'outside')]));
    await symlink(join(base, 'elsewhere'), join(market, 'shelf'));
    const home = await box();
    const added = await run(home, ['ext', 'marketplace', 'add', join(market, '.agents', 'plugins', 'marketplace.json'), '--json']);
    expectExit(added, 0);
    expect(json<{ name: string; format: string; source: { kind: string; path: string } }>(added)).toMatchObject({ name: 'codex-shelf', format: 'codex', source: { kind: 'path', path: market } });
    const found = json<{ hits: Array<{ name: string; registry: string }> }>(await run(home, ['ext', 'search', 'productivity', '--json']));
    expect(found.hits).toContainEqual(expect.objectContaining({ name: 'codex-helper', registry: 'marketplace:codex-shelf' }));
    expectExit(await run(home, ['ext', 'install', 'codex-helper@codex-shelf', '--yes']), 0);
    expect((await lock(home)).plugins['codex-helper']).toMatchObject({ version: '0.2.0', source: { kind: 'local', url: market, path: 'plugins/codex-helper', marketplace: 'codex-shelf' } });
    const linked = await run(home, ['ext', 'install', 'linked-out@codex-shelf', '--yes']);
    expectExit(linked, 1);
    expect(linked.stderr).toContain('leads outside the repository through a symbolic link');
    expect((await lock(home)).plugins.outside).toBeUndefined();
  }, 60_000);
});

describe('a Gemini CLI extension repository with tags, installed by its URL', () => {
  let repo: string;
  let v1: string;
  let v2: string;
  beforeAll(async () => {
    repo = join(reposRoot, 'gemini-ext.git');
    await write(join(repo, 'gemini-extension.json'), { name: 'gemini-tagged', version: '1.0.0', description: 'A Gemini CLI extension' });
    await write(join(repo, 'GEMINI.md'), '# One\n');
    v1 = await commitAll(repo, 'one', 'v1.0.0');
    await write(join(repo, 'gemini-extension.json'), { name: 'gemini-tagged', version: '2.0.0', description: 'A Gemini CLI extension' });
    await write(join(repo, 'GEMINI.md'), '# Two\n');
    v2 = await commitAll(repo, 'two', 'v2.0.0');
  }, 30_000);

  it('installs at a tag (--ref, #ref), versions side by side, pinned to the commit; rollback goes back to the other tag', async () => {
    const home = await box();
    expectExit(await run(home, ['ext', 'install', `${daemonUrl}/gemini-ext.git`, '--ref', 'v1.0.0', '--yes']), 0);
    expect((await lock(home)).plugins['gemini-tagged']).toMatchObject({ version: '1.0.0', range: 'v1.0.0', source: { kind: 'git', ref: 'v1.0.0', commit: v1 } });
    expect(await readFile(join(home.home, 'plugins', 'gemini-tagged', 'GEMINI.md'), 'utf8')).toBe('# One\n');

    expectExit(await run(home, ['ext', 'install', `file://${repo}#v2.0.0`, '--yes']), 0);
    const moved = (await lock(home)).plugins['gemini-tagged']!;
    expect(moved).toMatchObject({ version: '2.0.0', source: { kind: 'git', url: `file://${repo}`, ref: 'v2.0.0', commit: v2 }, previous: { version: '1.0.0', source: { ref: 'v1.0.0' } } });
    expect(await readlink(join(home.home, 'plugins', 'gemini-tagged'))).toBe(join('.versions', 'gemini-tagged@2.0.0'));
    expect(existsSync(join(home.home, 'plugins', '.versions', 'gemini-tagged@1.0.0'))).toBe(true);

    // A commit id is a ref too.
    const byCommit = await run(home, ['ext', 'install', `file://${repo}`, '--ref', v2, '--yes', '--json']);
    expectExit(byCommit, 0);

    expectExit(await run(home, ['ext', 'rollback', 'gemini-tagged']), 0);
    expect((await lock(home)).plugins['gemini-tagged']).toMatchObject({ version: '1.0.0', source: { ref: 'v1.0.0', commit: v1 } });
    expect(await readFile(join(home.home, 'plugins', 'gemini-tagged', 'GEMINI.md'), 'utf8')).toBe('# One\n');
    const verified = json<{ plugins: Array<{ name: string; status: string }> }>(await run(home, ['ext', 'verify', 'gemini-tagged', '--json']));
    expect(verified.plugins).toEqual([expect.objectContaining({ name: 'gemini-tagged', status: 'ok' })]);
    // Installed at a semver tag, an update takes the newest one (as Gemini CLI updates from tags).
    const outdated = json<{ plugins: Array<{ name: string; current: string; wanted: string; newRef: string; status: string }> }>(await run(home, ['ext', 'outdated', '--json']));
    expect(outdated.plugins).toEqual([expect.objectContaining({ name: 'gemini-tagged', current: '1.0.0', wanted: 'v2.0.0', newRef: 'v2.0.0', status: 'newer' })]);
    expectExit(await run(home, ['ext', 'update', 'gemini-tagged', '--yes']), 0);
    expect((await lock(home)).plugins['gemini-tagged']).toMatchObject({ version: '2.0.0', source: { ref: 'v2.0.0', commit: v2 } });
  }, 90_000);

  it('the same version at another commit (a branch that moved on) replaces the files in place, pinned to the new commit', async () => {
    const home = await box();
    expectExit(await run(home, ['ext', 'install', `file://${repo}#v2.0.0`, '--yes']), 0);
    await git(repo, 'checkout', '-q', '-b', 'next');
    await write(join(repo, 'GEMINI.md'), '# Two, amended\n');
    const amended = await commitAll(repo, 'amended, same version');
    await git(repo, 'checkout', '-q', 'main');
    expectExit(await run(home, ['ext', 'install', `file://${repo}`, '--ref', 'next', '--yes']), 0);
    expect((await lock(home)).plugins['gemini-tagged']).toMatchObject({ version: '2.0.0', source: { ref: 'next', commit: amended } });
    expect(await readFile(join(home.home, 'plugins', 'gemini-tagged', 'GEMINI.md'), 'utf8')).toBe('# Two, amended\n');
    const verified = json<{ plugins: Array<{ status: string }> }>(await run(home, ['ext', 'verify', 'gemini-tagged', '--json']));
    expect(verified.plugins[0]?.status).toBe('ok');
    // The same commit again changes nothing.
    const again = await run(home, ['ext', 'install', `file://${repo}`, '--ref', 'next', '--yes']);
    expectExit(again, 0);
    expect(again.stdout).toContain('Nothing to do');
  }, 60_000);

  it('refuses a ref that does not exist, and a symbolic link in the repository, with nothing installed', async () => {
    const home = await box();
    const noRef = await run(home, ['ext', 'install', `file://${repo}`, '--ref', 'v9.9.9', '--yes']);
    expectExit(noRef, 1);
    expect(noRef.stderr).toContain('PLN_E_MARKET_GIT');
    const linked = join(base, 'linked-repo');
    await write(join(linked, 'gemini-extension.json'), { name: 'linked', version: '1.0.0' });
    await symlink('/etc/passwd', join(linked, 'passwd'));
    await commitAll(linked, 'a link');
    const refused = await run(home, ['ext', 'install', `file://${linked}`, '--yes']);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_TARBALL_UNSAFE');
    expect(refused.stderr).toContain('passwd is a symbolic link');
    expect((await lock(home)).plugins).toEqual({});
  }, 60_000);

  it('refuses a source URL with credentials in it, never showing them: nothing is fetched, nothing recorded', async () => {
    const home = await box();
    for (const url of ['https://someone:s3cret-token-value@127.0.0.1:9/acme/tools.git', 'https://s3cret-token-value@127.0.0.1:9/acme/tools.tgz']) {
      const args = url.endsWith('.tgz') ? ['ext', 'install', url, '--sha256', 'a'.repeat(64), '--yes'] : ['ext', 'install', url, '--yes'];
      const refused = await run(home, args);
      expectExit(refused, 1);
      expect(refused.stderr).toContain('PLN_E_MARKET_SOURCE');
      expect(refused.stderr).toContain('carries credentials');
      expect(refused.stderr + refused.stdout).not.toContain('s3cret-token-value');
    }
    for (const url of ['https://someone:s3cret-token-value@127.0.0.1:9/acme/market.git', 'https://someone:s3cret-token-value@127.0.0.1:9/marketplace.json']) {
      const refused = await run(home, ['ext', 'marketplace', 'add', url]);
      expectExit(refused, 1);
      expect(refused.stderr).toContain('carries credentials');
      expect(refused.stderr + refused.stdout).not.toContain('s3cret-token-value');
    }
    const listed = await run(home, ['ext', 'marketplace', 'list', '--json']);
    expect(listed.stdout).not.toContain('s3cret-token-value');
    expect((await lock(home)).plugins).toEqual({});
  }, 60_000);

  it('a SIGKILL during a git install leaves the previous version in place, and a retry succeeds', async () => {
    const home = await box();
    expectExit(await run(home, ['ext', 'install', `${daemonUrl}/gemini-ext.git#v1.0.0`, '--yes']), 0);
    for (const step of ['extract', 'move']) {
      const child = start(home, ['ext', 'install', `${daemonUrl}/gemini-ext.git#v2.0.0`, '--yes'], { PLINTH_MARKET_PAUSE_AT: step });
      const exited = new Promise((done) => child.once('exit', done));
      let stderr = '';
      await new Promise<void>((done) => {
        child.stderr!.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes(`marketplace: paused at ${step}`)) done();
        });
      });
      child.kill('SIGKILL');
      await exited;
      expect(await readlink(join(home.home, 'plugins', 'gemini-tagged'))).toBe(join('.versions', 'gemini-tagged@1.0.0'));
      expect((await lock(home)).plugins['gemini-tagged']).toMatchObject({ version: '1.0.0', source: { commit: v1 } });
      expect(await readFile(join(home.home, 'plugins', 'gemini-tagged', 'GEMINI.md'), 'utf8')).toBe('# One\n');
    }
    // Killed while git clones (the checkout appearing in its staging folder).
    const cloning = start(home, ['ext', 'install', `${daemonUrl}/gemini-ext.git#v2.0.0`, '--yes']);
    let ended = false;
    const cloned = new Promise((done) => cloning.once('exit', (code) => ((ended = true), done(code))));
    const plugins = join(home.home, 'plugins');
    for (let seen = false; !seen; ) {
      expect(ended, 'the install ended before its clone was seen').toBe(false);
      seen = readdirSync(plugins).some((e) => e.startsWith('.staging') && existsSync(join(plugins, e, 'fetched', 'git')));
      if (!seen) await new Promise((done) => setImmediate(done));
    }
    cloning.kill('SIGKILL');
    await cloned;
    expect(await readlink(join(plugins, 'gemini-tagged'))).toBe(join('.versions', 'gemini-tagged@1.0.0'));
    expect((await lock(home)).plugins['gemini-tagged']).toMatchObject({ version: '1.0.0', source: { commit: v1 } });
    expectExit(await run(home, ['ext', 'install', `${daemonUrl}/gemini-ext.git#v2.0.0`, '--yes']), 0);
    expect((await lock(home)).plugins['gemini-tagged']).toMatchObject({ version: '2.0.0', source: { commit: v2 } });
    // What the killed installs left in staging went with the retry.
    expect(readdirSync(join(home.home, 'plugins')).filter((e) => e.startsWith('.staging'))).toEqual([]);
  }, 120_000);
});

/**
 * git's smart HTTP, as a forge serves it: `git http-backend` (a CGI program) behind a small node
 * HTTP server on 127.0.0.1, serving the repositories under `root` at `/<owner>/<repo>`; `v0`: as an
 * old server, that does not hand out a commit by its id.
 */
async function httpBackend(root: string, { v0 = false }: { v0?: boolean } = {}): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const child = spawn('git', ['http-backend'], {
      env: {
        ...GIT_ENV,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['content-encoding'] && { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) }),
        // Without the client's Git-Protocol header the backend speaks protocol v0 (no fetch of a commit by its id).
        ...(!v0 && req.headers['git-protocol'] && { GIT_PROTOCOL: String(req.headers['git-protocol']) }),
      },
    });
    req.pipe(child.stdin);
    let head: Buffer = Buffer.alloc(0);
    let started = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (started) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const colon = line.indexOf(':');
        const [key, value] = [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
        if (key.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[key] = value;
      }
      res.writeHead(status, headers);
      started = true;
      res.write(head.subarray(end + 4));
    });
    child.stdout.on('end', () => res.end());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((done) => server.close(() => done())) };
}

describe('a repository served over HTTP, by its URL as a forge shows it', () => {
  it('ext install http://<host>/<owner>/<repo> installs it (once a lock-file path error); a marketplace repository is pointed to marketplace add', async () => {
    const root = join(base, 'forge');
    const widget = join(root, 'acme', 'widget');
    await claudePlugin(widget, 'widget', '0.9.0');
    const commit = await commitAll(widget, 'widget');
    await exec('cp', ['-r', claudeMarket, join(root, 'acme', 'tools')]);
    const forge = await httpBackend(root);
    closers.push(forge.close);
    const home = await box();
    const installed = await run(home, ['ext', 'install', `${forge.url}/acme/widget`, '--yes', '--json']);
    expectExit(installed, 0);
    expect(json<{ changes: Array<{ name: string; to: string }> }>(installed).changes).toEqual([expect.objectContaining({ name: 'widget', to: '0.9.0' })]);
    expect((await lock(home)).plugins.widget).toMatchObject({ resolved: `${forge.url}/acme/widget#${commit}`, source: { kind: 'git', url: `${forge.url}/acme/widget`, commit } });
    expect(readdirSync(join(home.home, 'plugins')).filter((e) => e.startsWith('.lock'))).toEqual([]);

    const market = await run(home, ['ext', 'install', `${forge.url}/acme/tools`, '--yes']);
    expectExit(market, 1);
    expect(market.stderr).toContain('is a plugin marketplace, not a plugin');
    expect(market.stderr).toContain(`plinth ext marketplace add ${forge.url}/acme/tools`);
    expectExit(await run(home, ['ext', 'marketplace', 'add', `${forge.url}/acme/tools`]), 0);
    expectExit(await run(home, ['ext', 'install', 'relative-plugin@team-tools', '--yes']), 0);

    // A commit pinned on a server that does not hand out commits by id: the history is cloned, then the commit checked out.
    await write(join(widget, 'commands', 'hello.md'), '---\ndescription: Say hello, later\n---\nSay hello.\n');
    await commitAll(widget, 'later');
    const oldForge = await httpBackend(root, { v0: true });
    closers.push(oldForge.close);
    expectExit(await run(home, ['ext', 'install', `${oldForge.url}/acme/widget`, '--ref', commit, '--yes']), 0);
    expect((await lock(home)).plugins.widget).toMatchObject({ source: { url: `${oldForge.url}/acme/widget`, ref: commit, commit } });
  }, 90_000);
});

describe('names that are not plugins', () => {
  it('a URL given to uninstall or rollback is "not installed", not a lock-file path error', async () => {
    const home = await box();
    for (const command of ['uninstall', 'rollback']) {
      const result = await run(home, ['ext', command, 'https://github.com/owner/repo']);
      expectExit(result, 1);
      expect(result.stderr).toContain('PLN_E_MARKET_NOT_INSTALLED');
      expect(result.stderr).not.toContain('PLN_E_FILE_WRITE');
    }
  }, 30_000);
});
