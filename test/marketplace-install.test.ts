/**
 * The marketplace installs, updates, rolls back and uninstalls plugins from a
 * real registry server on 127.0.0.1 into the running kernel's home: each
 * version in a folder of its own, the active one linked at plugins/<name>, the
 * lock file recording what was asked for, and nothing changed by a step that
 * fails.
 */
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRequest, LockFile, MarketplaceService } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { signingKey } from '../registry/signing.js';
import { type FixturePlugin, servedRegistry } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-market-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A kernel with the builtin plugins (the marketplace and trust among them), its home's registry the one given. */
async function host(url: string): Promise<{ kernel: TestKernel; market: MarketplaceService }> {
  const kernel = await createTestKernel({ builtin: true, settings: { registries: [{ name: 'local', url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } } });
  closers.push(() => kernel.dispose());
  return { kernel, market: await kernel.get('marketplace') };
}

async function registry(plugins: FixturePlugin[]) {
  const served = await servedRegistry(base, plugins);
  closers.push(() => served.server.close());
  return served;
}

async function greeting(kernel: TestKernel, name: string): Promise<string> {
  const service = (await kernel.get(`greeting:${name}` as never)) as unknown as () => string;
  return service();
}

async function lockOf(kernel: TestKernel): Promise<LockFile> {
  return JSON.parse(await readFile(join(kernel.home, 'plugins.lock.json'), 'utf8')) as LockFile;
}

async function listing(kernel: TestKernel): Promise<string[]> {
  const plugins = join(kernel.home, 'plugins');
  const top = await readdir(plugins).catch(() => [] as string[]);
  const versions = await readdir(join(plugins, '.versions')).catch(() => [] as string[]);
  return [...top.filter((e) => e !== '.versions'), ...versions.map((v) => `.versions/${v}`)].sort();
}

describe('install', () => {
  it('installs the newest version in range, links it, records it and loads it live', async () => {
    const { server } = await registry([
      { name: 'greeter', version: '1.0.0' },
      { name: 'greeter', version: '1.4.0' },
      { name: 'greeter', version: '2.0.0' },
    ]);
    const { kernel, market } = await host(server.url);
    const result = await market.install('greeter@^1.0.0', { yes: true });
    expect(result.changes).toEqual([expect.objectContaining({ name: 'greeter', to: '1.4.0', registry: 'local', loaded: true })]);
    expect(await greeting(kernel, 'greeter')).toBe('greeter@1.4.0');
    expect(kernel.status().find((p) => p.name === 'greeter')).toMatchObject({ source: 'user', state: 'active' });
    const link = join(kernel.home, 'plugins', 'greeter');
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toBe(join('.versions', 'greeter@1.4.0'));
    const entry = (await lockOf(kernel)).plugins.greeter!;
    expect(entry).toMatchObject({ name: 'greeter', version: '1.4.0', range: '^1.0.0', registry: 'local' });
    expect(entry.integrity).toMatch(/^sha512-/);
    expect(entry.resolved).toBe(`${server.url}-/greeter-1.4.0.tgz`);
    // Staging is gone; only the link, the version folder and the lock stay.
    expect(await listing(kernel)).toEqual(['.versions/greeter@1.4.0', 'greeter']);
  });

  it('without --yes and without a terminal, stops before anything is written and says how to approve', async () => {
    const { server } = await registry([{ name: 'greeter', version: '1.0.0', hooks: { before_tool: [{ name: 'audit', command: 'node', args: ['audit.js'] }] }, files: { 'audit.js': '' } }]);
    const { kernel, market } = await host(server.url);
    const error = await rejection(market.install('greeter'));
    expect(error.code).toBe('PLN_E_MARKET_APPROVAL');
    expect(error.details?.step).toBe('approve');
    expect(error.hint).toContain('plinth ext install greeter --yes');
    expect(await listing(kernel)).toEqual([]);
    // What is asked: the code, the hooks and what they run.
    let asked: ApprovalRequest | undefined;
    const declined = await rejection(market.install('greeter', { approve: async (request) => ((asked = request), false) }));
    expect(declined.code).toBe('PLN_E_MARKET_APPROVAL');
    expect(asked?.plugins[0]?.declarations).toMatchObject({ code: './index.ts', hooks: ['before_tool audit: node audit.js'], provides: ['greeting:greeter'] });
    expect(await listing(kernel)).toEqual([]);
  });

  it('installs dependencies first, and explains a conflict without installing anything', async () => {
    const { server } = await registry([
      { name: 'base-lib', version: '1.2.0' },
      { name: 'base-lib', version: '2.0.0' },
      { name: 'app', version: '1.0.0', dependencies: { 'base-lib': '^1.0.0' } },
      { name: 'other', version: '1.0.0', dependencies: { 'base-lib': '^2.0.0' } },
    ]);
    const { kernel, market } = await host(server.url);
    const result = await market.install('app', { yes: true });
    expect(result.changes.map((c) => `${c.name}@${c.to}`)).toEqual(['base-lib@1.2.0', 'app@1.0.0']);
    expect((await lockOf(kernel)).plugins['base-lib']).toMatchObject({ dependency: true, range: '^1.0.0' });
    expect(await greeting(kernel, 'app')).toBe('app@1.0.0');
    const error = await rejection(market.install('other', { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_CONFLICT');
    expect(error.message).toContain('other@1.0.0 needs base-lib@^2.0.0');
    expect(await listing(kernel)).not.toContain('other');
    // Uninstalling what another plugin depends on is refused, naming it.
    const refused = await rejection(market.uninstall('base-lib'));
    expect(refused.code).toBe('PLN_E_MARKET_DEPENDED_ON');
    expect(refused.message).toContain('app@1.0.0');
  });

  it('--registry installs from the registry given instead of the configured ones', async () => {
    const configured = await registry([{ name: 'greeter', version: '1.0.0' }]);
    const given = await registry([{ name: 'greeter', version: '3.0.0' }]);
    const { kernel, market } = await host(configured.server.url);
    const result = await market.install('greeter', { yes: true, registry: given.server.url });
    expect(result.changes).toEqual([expect.objectContaining({ to: '3.0.0', registry: 'command-line' })]);
    expect((await lockOf(kernel)).plugins.greeter?.resolved).toBe(`${given.server.url}-/greeter-3.0.0.tgz`);
    // Updates come from that registry too, not the configured one.
    await given.publish({ name: 'greeter', version: '3.1.0' });
    expect((await market.outdated()).plugins).toEqual([expect.objectContaining({ current: '3.0.0', latest: '3.1.0', registry: 'command-line' })]);
    await market.update(['greeter'], { yes: true });
    expect(await greeting(kernel, 'greeter')).toBe('greeter@3.1.0');
  });

  it('refuses a version for another kernel, saying which kernel it needs', async () => {
    const { server } = await registry([{ name: 'future', version: '1.0.0', kernel: '^9.0.0' }]);
    const { market } = await host(server.url);
    const error = await rejection(market.install('future', { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_NO_MATCH');
    expect(error.message).toContain('needs kernel ^9.0.0');
  });

  it('a name the registry does not have is said as such, with the name it has when one is a typo away', async () => {
    const { server } = await registry([
      { name: 'lint-guard', version: '1.0.0' },
      { name: 'lint-format', version: '1.0.0' },
    ]);
    const { kernel, market } = await host(server.url);
    const typo = await rejection(market.install('lint-gaurd', { yes: true }));
    expect(typo).toMatchObject({ code: 'PLN_E_MARKET_NOT_FOUND', message: 'resolve: registry "local" has no plugin "lint-gaurd"', details: { step: 'resolve', registry: 'local', suggestion: 'lint-guard' } });
    expect(typo.hint).toBe('did you mean "lint-guard"? `plinth ext install lint-guard`');
    const unknown = await rejection(market.install('nothing-like-it', { yes: true }));
    expect(unknown.message).toBe('resolve: registry "local" has no plugin "nothing-like-it"');
    expect(unknown.hint).toContain('plinth ext search <text>');
    expect(unknown.details).not.toHaveProperty('suggestion');
    expect(await listing(kernel)).toEqual([]);
  });
});

describe('a step that fails changes nothing', () => {
  it('a tarball swapped after it was published fails verification: the old version stays, no staging is left', async () => {
    const { server, folder, publish } = await registry([{ name: 'greeter', version: '1.0.0' }]);
    const { kernel, market } = await host(server.url);
    await market.install('greeter', { yes: true });
    await publish({ name: 'greeter', version: '1.1.0' });
    // Someone replaces the tarball on the server with another plugin's bytes of the same name and version.
    const other = await servedRegistry(base, [{ name: 'greeter', version: '1.1.0', greeting: 'evil' }]);
    closers.push(() => other.server.close());
    await writeFile(join(folder, '-', 'greeter-1.1.0.tgz'), await readFile(join(other.folder, '-', 'greeter-1.1.0.tgz')));
    const before = await readFile(join(kernel.home, 'plugins.lock.json'), 'utf8');
    const error = await rejection(market.update(['greeter'], { yes: true }));
    expect(error.code).toBe('PLN_E_INTEGRITY_MISMATCH');
    expect(error.details?.step).toBe('verify');
    expect(await greeting(kernel, 'greeter')).toBe('greeter@1.0.0');
    expect(await readFile(join(kernel.home, 'plugins.lock.json'), 'utf8')).toBe(before);
    expect(await listing(kernel)).toEqual(['.versions/greeter@1.0.0', 'greeter']);
  });

  it('a tarball whose manifest names another version than the registry offered is refused at the validate step', async () => {
    const { server, folder, publish } = await registry([{ name: 'greeter', version: '1.0.0' }]);
    const { kernel, market } = await host(server.url);
    await market.install('greeter', { yes: true });
    await publish({ name: 'greeter', version: '1.1.0' });
    // The registry's 1.1.0 entry points at the 1.0.0 tarball, with that tarball's (correct) integrity.
    const packument = JSON.parse(await readFile(join(folder, 'greeter'), 'utf8')) as { versions: Record<string, { dist: { tarball: string; integrity: string } }> };
    packument.versions['1.1.0']!.dist = { ...packument.versions['1.0.0']!.dist };
    await writeFile(join(folder, 'greeter'), JSON.stringify(packument));
    const error = await rejection(market.update(['greeter'], { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_MISMATCH', details: expect.objectContaining({ step: 'validate', claimed: 'greeter@1.1.0', found: 'greeter@1.0.0' }) as unknown });
    expect(await listing(kernel)).toEqual(['.versions/greeter@1.0.0', 'greeter']);
  });

  it('a lock file written just before a kill, ahead of the switch, is read back as the version still linked', async () => {
    const { server, publish } = await registry([{ name: 'greeter', version: '1.0.0' }]);
    const { kernel, market } = await host(server.url);
    await market.install('greeter', { yes: true });
    await publish({ name: 'greeter', version: '1.1.0' });
    // What a process killed between "record" and the link's switch leaves: the lock names 1.1.0, the link 1.0.0.
    const lock = await lockOf(kernel);
    const v1 = lock.plugins.greeter!;
    lock.plugins.greeter = { ...v1, version: '1.1.0', integrity: 'sha512-AAAA', previous: v1 };
    await writeFile(join(kernel.home, 'plugins.lock.json'), JSON.stringify(lock));
    expect((await market.installed()).plugins.greeter).toEqual(v1);
    // And the next update goes from 1.0.0, recording 1.0.0 as the previous version.
    const update = await market.update(['greeter'], { yes: true });
    expect(update.changes).toEqual([expect.objectContaining({ from: '1.0.0', to: '1.1.0' })]);
    expect((await lockOf(kernel)).plugins.greeter?.previous).toMatchObject({ version: '1.0.0', integrity: v1.integrity });
  });

  it('checks a signed version against the registry\'s keys before downloading it, and refuses a signature that does not match', async () => {
    const key = signingKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    const served = await servedRegistry(base, [{ name: 'signed', version: '1.0.0' }, { name: 'signed', version: '1.1.0' }], { signingKey: key });
    closers.push(() => served.server.close());
    const { kernel, market } = await host(served.server.url);
    const result = await market.install('signed@1.0.0', { yes: true, trustKeyIds: [key.keyid] });
    expect(result).toMatchObject({ changes: [expect.objectContaining({ to: '1.0.0' })], notes: [expect.objectContaining({ kind: 'trusted' })] });
    // Without the signed index (a registry that publishes only npm's keys), the signature is what catches the change below.
    await rm(join(served.folder, '-', 'plinth'), { recursive: true });
    await rm(join(kernel.home, 'registry-trust.json'));
    const again = await market.install('signed@1.0.0', { yes: true, trustKeyIds: [key.keyid] });
    expect(again.changes).toEqual([]);
    // 1.1.0's entry now carries 1.0.0's signature: name, version and integrity no longer match what was signed.
    const file = join(served.folder, 'signed');
    const packument = JSON.parse(await readFile(file, 'utf8')) as { versions: Record<string, { dist: { signatures: unknown } }> };
    packument.versions['1.1.0']!.dist.signatures = packument.versions['1.0.0']!.dist.signatures;
    await writeFile(file, JSON.stringify(packument));
    const error = await rejection(market.update(['signed'], { latest: true, yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_SIGNATURE', details: expect.objectContaining({ step: 'resolve', verdict: 'invalid' }) as unknown });
    expect(await listing(kernel)).toEqual(['.versions/signed@1.0.0', 'signed']);
  });

  it('never replaces a folder the user put at plugins/<name>', async () => {
    const { server } = await registry([{ name: 'greeter', version: '1.0.0' }]);
    const { kernel, market } = await host(server.url);
    await mkdir(join(kernel.home, 'plugins', 'greeter'), { recursive: true });
    await writeFile(join(kernel.home, 'plugins', 'greeter', 'notes.txt'), 'mine');
    const error = await rejection(market.install('greeter', { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_NOT_OURS');
    expect(await readFile(join(kernel.home, 'plugins', 'greeter', 'notes.txt'), 'utf8')).toBe('mine');
    expect(await listing(kernel)).toEqual(['greeter']);
  });
});

describe('update, rollback, uninstall', () => {
  it('an update whose new version fails to load leaves the old one serving, linked and recorded', async () => {
    const { server, publish } = await registry([{ name: 'greeter', version: '1.0.0' }]);
    const { kernel, market } = await host(server.url);
    await market.install('greeter', { yes: true });
    await publish({ name: 'greeter', version: '1.1.0', broken: true });
    const error = await rejection(market.update(['greeter'], { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_LOAD');
    expect(error.details).toMatchObject({ step: 'load', kept: '1.0.0' });
    expect(await greeting(kernel, 'greeter')).toBe('greeter@1.0.0');
    expect(await readlink(join(kernel.home, 'plugins', 'greeter'))).toBe(join('.versions', 'greeter@1.0.0'));
    expect((await lockOf(kernel)).plugins.greeter?.version).toBe('1.0.0');
    expect(await listing(kernel)).not.toContain('.versions/greeter@1.1.0');
  });

  it('updates within the range, asks again when the declarations change, rolls back and uninstalls', async () => {
    const { server, publish } = await registry([{ name: 'greeter', version: '1.0.0' }]);
    const { kernel, market } = await host(server.url);
    await market.install('greeter@^1.0.0', { yes: true });
    await publish({ name: 'greeter', version: '1.1.0' });
    await publish({ name: 'greeter', version: '2.0.0' });
    expect((await market.outdated()).plugins).toEqual([expect.objectContaining({ name: 'greeter', current: '1.0.0', wanted: '1.1.0', latest: '2.0.0' })]);
    // Same declarations: no question.
    const update = await market.update(['greeter']);
    expect(update.changes).toEqual([expect.objectContaining({ from: '1.0.0', to: '1.1.0', loaded: true })]);
    expect(await greeting(kernel, 'greeter')).toBe('greeter@1.1.0');
    // A new hook: asked again, with the difference.
    await publish({ name: 'greeter', version: '1.2.0', hooks: { before_tool: [{ name: 'audit', command: 'node', args: ['audit.js'] }] }, files: { 'audit.js': '' } });
    let asked: ApprovalRequest | undefined;
    await market.update(['greeter'], { approve: async (request) => ((asked = request), true) });
    expect(asked?.plugins[0]).toMatchObject({ name: 'greeter', version: '1.2.0', from: '1.1.0', changed: ['+ hooks: before_tool audit: node audit.js'] });
    expect(await greeting(kernel, 'greeter')).toBe('greeter@1.2.0');
    expect((await lockOf(kernel)).plugins.greeter).toMatchObject({ version: '1.2.0', range: '^1.0.0', previous: { version: '1.1.0' } });
    // Rollback: back to the previous version, live.
    const back = await market.rollback('greeter');
    expect(back.changes).toEqual([expect.objectContaining({ from: '1.2.0', to: '1.1.0' })]);
    expect(await greeting(kernel, 'greeter')).toBe('greeter@1.1.0');
    // --latest crosses the range.
    await market.update(['greeter'], { latest: true, yes: true });
    expect(await greeting(kernel, 'greeter')).toBe('greeter@2.0.0');
    const removed = await market.uninstall('greeter');
    expect(removed).toMatchObject({ name: 'greeter', version: '2.0.0' });
    expect(kernel.status().find((p) => p.name === 'greeter')).toBeUndefined();
    expect((await listing(kernel)).filter((e) => !e.startsWith('.lock-'))).toEqual([]);
    expect((await lockOf(kernel)).plugins).toEqual({});
  });
});
