/**
 * `plinth ext outdated` and `ext update` of plugins installed from git: new commits on the branch
 * installed from, a marketplace's entry after `ext marketplace update`, a force-pushed branch and a
 * moved tag (refused, then taken with --accept-rewrite), rollback after an update; and the policy of
 * the user's settings: blocked and allowed marketplaces, pinned commits required, a minimum release
 * age. Every repository is a real one made here with git and read through `file://`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { write } from './support/peer-folders.js';
import { servedRegistry, writePlugin } from './support/market.js';
import { publishPlugin } from '../registry/publish.js';

const exec = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const LONG_AGO = '2020-01-01T00:00:00Z';

/** Runs git in `cwd` as a publisher would; `date`: the author and committer date of a commit. */
async function git(cwd: string, args: string[], date?: string): Promise<string> {
  const env = date ? { ...GIT_ENV, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : GIT_ENV;
  const { stdout } = await exec('git', ['-c', 'user.name=Publisher', '-c', 'user.email=publisher@example.test', '-c', 'init.defaultBranch=main', ...args], { cwd, env });
  return stdout.trim();
}

/** Writes a plinth plugin's manifest and code into `dir` at `version`, commits it (dated `date`, tagged `tag`); the commit id. */
async function release(dir: string, name: string, version: string, options: { date?: string; tag?: string; amend?: boolean } = {}): Promise<string> {
  await write(join(dir, 'manifest.json'), { name, version, description: `${name}, from git`, kernel: '^1.0.0', main: './index.ts' });
  await write(join(dir, 'index.ts'), `import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup() { /* ${version} */ } });\n`);
  if (!existsSync(join(dir, '.git'))) await git(dir, ['init', '-q']);
  await git(dir, ['add', '-A']);
  await git(dir, ['commit', '-q', ...(options.amend ? ['--amend'] : []), '-m', `${name} ${version}`], options.date ?? LONG_AGO);
  if (options.tag) await git(dir, ['tag', '-f', options.tag]);
  return git(dir, ['rev-parse', 'HEAD']);
}

interface Lock {
  plugins: Record<string, { version: string; range: string; source?: { kind: string; url?: string; ref?: string; commit?: string; marketplace?: string }; previous?: { version: string } }>;
}
async function lock(home: Sandbox): Promise<Lock> {
  return JSON.parse(await readFile(join(home.home, 'plugins.lock.json'), 'utf8')) as Lock;
}

let base: string;
beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-git-update-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A plinth home; `marketplace`: the marketplace plugin's settings (the policy) in the user's settings.json. */
async function box(marketplace: Record<string, unknown> = {}): Promise<Sandbox> {
  const made = await sandbox('plinth-git-update-');
  closers.push(() => made.remove());
  await made.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, marketplace: { settings: marketplace } } });
  return made;
}

interface Outdated {
  plugins: Array<{ name: string; current: string; wanted: string; commit?: string; newCommit?: string; newRef?: string; status?: string; reason?: string }>;
  notes: Array<{ kind: string; message: string }>;
  unchecked: Array<{ name: string; reason: string }>;
}

describe('ext update of a plugin installed from a branch', () => {
  it('takes new commits on the branch; rollback goes back to the commit installed before', async () => {
    const repo = join(base, 'branchy');
    const first = await release(repo, 'branchy', '1.0.0');
    const home = await box();
    expectExit(await run(home, ['ext', 'install', `file://${repo}#main`, '--yes']), 0);
    expect((await lock(home)).plugins.branchy).toMatchObject({ version: '1.0.0', source: { kind: 'git', ref: 'main', commit: first } });

    // Nothing new: nothing to do.
    const none = json<Outdated>(await run(home, ['ext', 'outdated', '--json']));
    expect(none.plugins).toEqual([]);

    const second = await release(repo, 'branchy', '1.1.0');
    const outdated = json<Outdated>(await run(home, ['ext', 'outdated', '--json']));
    expect(outdated.plugins).toEqual([expect.objectContaining({ name: 'branchy', current: '1.0.0', commit: first, newCommit: second, newRef: 'main', status: 'newer' })]);
    const text = await run(home, ['ext', 'outdated']);
    expect(text.stdout).toMatch(/branchy\s+1\.0\.0 \([0-9a-f]{12}\)\s+[0-9a-f]{12}/);

    const updated = json<{ changes: Array<{ name: string; from: string; to: string }> }>(await run(home, ['ext', 'update', 'branchy', '--yes', '--json']));
    expect(updated.changes).toEqual([expect.objectContaining({ name: 'branchy', from: '1.0.0', to: '1.1.0', registry: 'git' })]);
    expect((await lock(home)).plugins.branchy).toMatchObject({ version: '1.1.0', source: { ref: 'main', commit: second }, previous: { version: '1.0.0' } });
    expect(await readlink(join(home.home, 'plugins', 'branchy'))).toBe(join('.versions', 'branchy@1.1.0'));
    // Up to date now; `update` of everything has nothing to do.
    expect(json<Outdated>(await run(home, ['ext', 'outdated', '--json'])).plugins).toEqual([]);
    expect(json<{ changes: unknown[] }>(await run(home, ['ext', 'update', '--yes', '--json'])).changes).toEqual([]);

    expectExit(await run(home, ['ext', 'rollback', 'branchy']), 0);
    expect((await lock(home)).plugins.branchy).toMatchObject({ version: '1.0.0', source: { commit: first } });
    expect(await readFile(join(home.home, 'plugins', 'branchy', 'index.ts'), 'utf8')).toContain('1.0.0');
  }, 90_000);

  it('reports a force-pushed branch, never follows it, and takes it with --accept-rewrite', async () => {
    const repo = join(base, 'pushy');
    await release(repo, 'pushy', '1.0.0');
    const installed = await release(repo, 'pushy', '1.1.0');
    const home = await box();
    expectExit(await run(home, ['ext', 'install', `file://${repo}#main`, '--yes']), 0);
    // The publisher rewrites the last commit: main no longer descends from what was installed.
    const rewritten = await release(repo, 'pushy', '1.2.0', { amend: true });

    const outdated = json<Outdated>(await run(home, ['ext', 'outdated', '--json']));
    expect(outdated.plugins).toEqual([expect.objectContaining({ name: 'pushy', newCommit: rewritten, status: 'rewritten' })]);
    expect(outdated.plugins[0]!.reason).toContain('does not descend from');
    const told = await run(home, ['ext', 'outdated']);
    expect(told.stdout).toMatch(/pushy\s+1\.1\.0 \([0-9a-f]{12}\)\s+[0-9a-f]{12} \(rewritten\)/);
    expect(told.stdout).toContain('`plinth ext update pushy --accept-rewrite` takes it');

    const refused = await run(home, ['ext', 'update', 'pushy', '--yes']);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_MARKET_GIT_REWRITTEN');
    expect(refused.stderr).toContain('branch main moved to');
    expect(refused.stderr).toContain('plinth ext update pushy --accept-rewrite');
    expect((await lock(home)).plugins.pushy).toMatchObject({ version: '1.1.0', source: { commit: installed } });

    expectExit(await run(home, ['ext', 'update', 'pushy', '--yes', '--accept-rewrite']), 0);
    expect((await lock(home)).plugins.pushy).toMatchObject({ version: '1.2.0', source: { ref: 'main', commit: rewritten } });
  }, 90_000);

  it('ext update of everything says which source was rewritten and still updates the others', async () => {
    const pushy = join(base, 'pushy-all');
    const steady = join(base, 'steady-all');
    await release(pushy, 'pushyall', '1.0.0');
    const installed = await release(pushy, 'pushyall', '1.1.0');
    await release(steady, 'steadyall', '1.0.0');
    const home = await box();
    expectExit(await run(home, ['ext', 'install', `file://${pushy}#main`, '--yes']), 0);
    expectExit(await run(home, ['ext', 'install', `file://${steady}#main`, '--yes']), 0);
    await release(pushy, 'pushyall', '1.2.0', { amend: true });
    const next = await release(steady, 'steadyall', '1.1.0');

    const all = json<{ changes: Array<{ name: string; to: string }>; notes: Array<{ kind: string; message: string }> }>(await run(home, ['ext', 'update', '--yes', '--json']));
    expect(all.changes).toEqual([expect.objectContaining({ name: 'steadyall', to: '1.1.0' })]);
    expect(all.notes).toEqual([expect.objectContaining({ kind: 'held', message: expect.stringContaining('pushyall not updated') })]);
    expect(all.notes[0]!.message).toContain('plinth ext update pushyall --accept-rewrite');
    expect((await lock(home)).plugins).toMatchObject({ pushyall: { version: '1.1.0', source: { commit: installed } }, steadyall: { version: '1.1.0', source: { commit: next } } });
  }, 90_000);

  it('reports a tag that was moved to another commit', async () => {
    const repo = join(base, 'taggy');
    const tagged = await release(repo, 'taggy', '1.0.0', { tag: 'v1.0.0' });
    const home = await box();
    expectExit(await run(home, ['ext', 'install', `file://${repo}`, '--ref', 'v1.0.0', '--yes']), 0);
    const moved = await release(repo, 'taggy', '1.0.1', { tag: 'v1.0.0' });
    expect(moved).not.toBe(tagged);

    const refused = await run(home, ['ext', 'update', 'taggy', '--yes']);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_MARKET_GIT_REWRITTEN');
    expect(refused.stderr).toContain('tag v1.0.0 now points at');
    expectExit(await run(home, ['ext', 'update', 'taggy', '--yes', '--accept-rewrite']), 0);
    expect((await lock(home)).plugins.taggy).toMatchObject({ version: '1.0.1', source: { ref: 'v1.0.0', commit: moved } });
  }, 90_000);
});

describe('ext update of a marketplace entry', () => {
  it('follows the entry once ext marketplace update read its new sha', async () => {
    const repo = join(base, 'listed');
    const one = await release(repo, 'listed', '1.0.0');
    const two = await release(repo, 'listed', '2.0.0');
    const market = join(base, 'entry-market');
    const catalogue = (sha: string, version: string) => write(join(market, '.claude-plugin', 'marketplace.json'), { name: 'pinned-tools', owner: { name: 'Team' }, plugins: [{ name: 'listed', version, source: { source: 'url', url: `file://${repo}`, ref: 'main', sha } }] });
    await catalogue(one, '1.0.0');
    await git(market, ['init', '-q']);
    await git(market, ['add', '-A']);
    await git(market, ['commit', '-q', '-m', 'one'], LONG_AGO);

    const home = await box();
    expectExit(await run(home, ['ext', 'marketplace', 'add', `file://${market}`]), 0);
    expectExit(await run(home, ['ext', 'install', 'listed@pinned-tools', '--yes']), 0);
    expect((await lock(home)).plugins.listed).toMatchObject({ version: '1.0.0', source: { marketplace: 'pinned-tools', commit: one } });
    // The branch moved on, but the entry pins its sha: nothing to update until the catalogue says so.
    expect(json<Outdated>(await run(home, ['ext', 'outdated', '--json'])).plugins).toEqual([]);

    await catalogue(two, '2.0.0');
    await git(market, ['commit', '-q', '-am', 'two'], LONG_AGO);
    expectExit(await run(home, ['ext', 'marketplace', 'update', 'pinned-tools']), 0);
    const outdated = json<Outdated>(await run(home, ['ext', 'outdated', '--json']));
    expect(outdated.plugins).toEqual([expect.objectContaining({ name: 'listed', current: '1.0.0', wanted: '2.0.0', newCommit: two, status: 'newer' })]);
    expectExit(await run(home, ['ext', 'update', 'listed', '--yes']), 0);
    expect((await lock(home)).plugins.listed).toMatchObject({ version: '2.0.0', source: { marketplace: 'pinned-tools', commit: two } });
  }, 90_000);
});

describe('ext update of a folder of a marketplace', () => {
  it('follows the marketplace\'s commit, as ext marketplace update read it', async () => {
    const market = join(base, 'folder-market');
    await write(join(market, '.claude-plugin', 'marketplace.json'), { name: 'folder-tools', owner: { name: 'Team' }, plugins: [{ name: 'inside', source: './plugins/inside' }] });
    await release(join(market, 'plugins', 'inside'), 'inside', '1.0.0');
    // release() made plugins/inside a repository of its own: the marketplace is the outer one.
    await rm(join(market, 'plugins', 'inside', '.git'), { recursive: true, force: true });
    await git(market, ['init', '-q']);
    await git(market, ['add', '-A']);
    await git(market, ['commit', '-q', '-m', 'one'], LONG_AGO);
    const home = await box();
    expectExit(await run(home, ['ext', 'marketplace', 'add', `file://${market}`]), 0);
    expectExit(await run(home, ['ext', 'install', 'inside@folder-tools', '--yes']), 0);
    expect((await lock(home)).plugins.inside).toMatchObject({ version: '1.0.0', source: { kind: 'local', marketplace: 'folder-tools' } });

    await write(join(market, 'plugins', 'inside', 'manifest.json'), { name: 'inside', version: '1.1.0', description: 'inside, from git', kernel: '^1.0.0', main: './index.ts' });
    await git(market, ['commit', '-q', '-am', 'two'], LONG_AGO);
    // Not before the marketplace is read again.
    expect(json<Outdated>(await run(home, ['ext', 'outdated', '--json'])).plugins).toEqual([]);
    expectExit(await run(home, ['ext', 'marketplace', 'update', 'folder-tools']), 0);
    const marketCommit = await git(market, ['rev-parse', 'HEAD']);
    expect(json<Outdated>(await run(home, ['ext', 'outdated', '--json'])).plugins).toEqual([expect.objectContaining({ name: 'inside', newCommit: marketCommit, status: 'newer' })]);
    expectExit(await run(home, ['ext', 'update', 'inside', '--yes']), 0);
    expect((await lock(home)).plugins.inside).toMatchObject({ version: '1.1.0', source: { kind: 'local', commit: marketCommit } });
  }, 90_000);
});

describe('the policy of the user settings', () => {
  let market: string;
  let repo: string;
  beforeAll(async () => {
    repo = join(base, 'acme', 'widget');
    await release(repo, 'widget', '1.0.0');
    market = join(base, 'acme', 'acme-market');
    await write(join(market, '.claude-plugin', 'marketplace.json'), { name: 'acme-tools', owner: { name: 'Acme' }, plugins: [{ name: 'widget', source: { source: 'url', url: `file://${repo}` } }] });
    await git(market, ['init', '-q']);
    await git(market, ['add', '-A']);
    await git(market, ['commit', '-q', '-m', 'acme'], LONG_AGO);
  }, 30_000);

  it('refuses a blocked marketplace at add, and at install once blocked after it was added; blocked wins over allowed', async () => {
    const blocked = await box({ blockedMarketplaces: ['acme/*'] });
    const add = await run(blocked, ['ext', 'marketplace', 'add', `file://${market}`]);
    expectExit(add, 1);
    expect(add.stderr).toContain('PLN_E_MARKET_POLICY');
    expect(add.stderr).toContain('plugins.marketplace.blockedMarketplaces ("acme/*")');
    expect(existsSync(join(blocked.home, 'marketplaces.json'))).toBe(false);
    // A git URL of a blocked owner is refused as well.
    const direct = await run(blocked, ['ext', 'install', `file://${repo}`, '--yes']);
    expectExit(direct, 1);
    expect(direct.stderr).toContain('blockedMarketplaces');

    // Added while allowed, then blocked by its name: install refuses it, naming the setting; blocked wins over allowed.
    const home = await box();
    expectExit(await run(home, ['ext', 'marketplace', 'add', `file://${market}`]), 0);
    await home.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, marketplace: { settings: { allowedMarketplaces: ['acme-*'], blockedMarketplaces: ['acme-tools'] } } } });
    const install = await run(home, ['ext', 'install', 'widget@acme-tools', '--yes']);
    expectExit(install, 1);
    expect(install.stderr).toContain('marketplace "acme-tools" is blocked by the setting plugins.marketplace.blockedMarketplaces ("acme-tools")');
    expect(existsSync(join(home.home, 'plugins', 'widget'))).toBe(false);
    // A workspace (a cloned repository) cannot lift it: the policy is read from the user's settings only.
    await write(join(home.workspace, '.plinth', 'settings.json'), { plugins: { marketplace: { settings: { blockedMarketplaces: [], allowedMarketplaces: [] } } } });
    const fromWorkspace = await run(home, ['ext', 'install', 'widget@acme-tools', '--yes']);
    expectExit(fromWorkspace, 1);
    expect(fromWorkspace.stderr).toContain('blocked by the setting plugins.marketplace.blockedMarketplaces');
  }, 90_000);

  it('with an allowed list, takes only what matches it', async () => {
    const other = await box({ allowedMarketplaces: ['github.com/acme/*'] });
    const refused = await run(other, ['ext', 'marketplace', 'add', `file://${market}`]);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('is not among the sources the setting plugins.marketplace.allowedMarketplaces allows ("github.com/acme/*")');

    const allowed = await box({ allowedMarketplaces: ['acme/*'] });
    expectExit(await run(allowed, ['ext', 'marketplace', 'add', `file://${market}`]), 0);
    expectExit(await run(allowed, ['ext', 'install', 'widget@acme-tools', '--yes']), 0);
    expect((await lock(allowed)).plugins.widget).toMatchObject({ version: '1.0.0', source: { marketplace: 'acme-tools' } });
  }, 90_000);

  it('requirePinnedCommit refuses a git source at a branch, and takes one at a commit', async () => {
    const home = await box({ requirePinnedCommit: true });
    const branch = await run(home, ['ext', 'install', `file://${repo}#main`, '--yes']);
    expectExit(branch, 1);
    expect(branch.stderr).toContain('is not pinned to a commit, and the setting plugins.marketplace.requirePinnedCommit requires one');
    expectExit(await run(home, ['ext', 'marketplace', 'add', `file://${market}`]), 0);
    const entry = await run(home, ['ext', 'install', 'widget@acme-tools', '--yes']);
    expectExit(entry, 1);
    expect(entry.stderr).toContain('widget@acme-tools is not pinned to a commit');
    expect(existsSync(join(home.home, 'plugins', 'widget'))).toBe(false);

    const commit = await git(repo, ['rev-parse', 'HEAD']);
    expectExit(await run(home, ['ext', 'install', `file://${repo}#${commit}`, '--yes']), 0);
    expect((await lock(home)).plugins.widget).toMatchObject({ source: { ref: commit, commit } });
  }, 90_000);

  it('minReleaseAgeDays holds back a commit younger than it, and takes it once it is old enough', async () => {
    const young = join(base, 'young');
    await release(young, 'young', '1.0.0', { tag: 'v1.0.0' });
    const home = await box({ minReleaseAgeDays: 3 });
    expectExit(await run(home, ['ext', 'install', `file://${young}#v1.0.0`, '--yes']), 0);
    // Released just now: held back, and said so.
    await release(young, 'young', '1.1.0', { tag: 'v1.1.0', date: new Date().toISOString() });
    const outdated = json<Outdated>(await run(home, ['ext', 'outdated', '--json']));
    expect(outdated.plugins).toEqual([]);
    expect(outdated.notes).toContainEqual(expect.objectContaining({ kind: 'held', message: expect.stringContaining('younger than the 3 day(s) the setting plugins.marketplace.minReleaseAgeDays requires') }));
    const held = await run(home, ['ext', 'update', 'young', '--yes']);
    expectExit(held, 0);
    expect(held.stderr).toContain('young not updated');
    expect((await lock(home)).plugins.young).toMatchObject({ version: '1.0.0' });

    // A release old enough below the young one is taken instead (the newest tag the policy allows).
    await release(young, 'young', '1.0.5', { tag: 'v1.0.5', date: '2024-01-01T00:00:00Z' });
    expectExit(await run(home, ['ext', 'update', 'young', '--yes']), 0);
    expect((await lock(home)).plugins.young).toMatchObject({ version: '1.0.5', source: { ref: 'v1.0.5' } });
  }, 90_000);

  it('minReleaseAgeDays holds back an npm version published too recently, taking the newest one old enough', async () => {
    const served = await servedRegistry(base, [{ name: 'aged', version: '1.0.0' }]);
    closers.push(() => served.server.close());
    const home = await box();
    const settings = (minReleaseAgeDays: number) => home.settings({ registries: [{ name: 'local', url: served.server.url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, marketplace: { settings: { minReleaseAgeDays } } } });
    await settings(3);
    expectExit(await run(home, ['ext', 'install', 'aged@^1.0.0', '--yes']), 0);
    // 1.1.0 was published long ago (its packument's time says so), 1.2.0 just now.
    await publishPlugin(served.folder, await writePlugin(join(base, 'sources'), { name: 'aged', version: '1.1.0' }), { now: new Date('2024-02-01T00:00:00Z') });
    await publishPlugin(served.folder, await writePlugin(join(base, 'sources'), { name: 'aged', version: '1.2.0' }));

    const first = await run(home, ['ext', 'update', 'aged', '--yes', '--json']);
    expectExit(first, 0);
    expect(json<{ changes: Array<{ name: string; to: string }> }>(first).changes).toEqual([expect.objectContaining({ name: 'aged', to: '1.1.0' })]);
    const second = await run(home, ['ext', 'update', 'aged', '--yes']);
    expectExit(second, 0);
    expect(second.stderr).toContain('aged not updated to 1.2.0: published');
    expect(second.stdout).toContain('held back by minReleaseAgeDays');
    expect((await lock(home)).plugins.aged).toMatchObject({ version: '1.1.0' });

    // Without the policy, the newest is taken.
    await settings(0);
    expectExit(await run(home, ['ext', 'update', 'aged', '--yes']), 0);
    expect((await lock(home)).plugins.aged).toMatchObject({ version: '1.2.0' });
  }, 90_000);
});
