/**
 * Revocations against the marketplace client, with the real registry server
 * on 127.0.0.1: an install, update or rollback asks the registry's
 * revocations and refuses a revoked version, naming the one to use; the
 * revocations are bound to the signed index (their version and digest) and
 * expire, so an older list, or none, cannot be served in their place; and a
 * dependency comes from its dependent's registry, not from another registry
 * that has a plugin of the same name (dependency confusion).
 */
import { generateKeyPairSync } from 'node:crypto';
import { copyFile, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LockFile, type MarketplaceService } from '../sdk/index.js';
import { type RevocationsSigned, revocationsDigest } from '../internal/registry/trust.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { type SigningKey, signDocument, signingKey } from '../registry/signing.js';
import { revokeVersion } from '../registry/trust-documents.js';
import { rejection } from './support/errors.js';
import { type FixturePlugin, servedRegistry } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-revocations-'));
  // The first kernel of a worker imports every builtin plugin, and the marketplace's own modules: paid here,
  // under this hook's limit, not by whichever test comes first (6 s of its time alone, many more on a loaded machine).
  const warm = await createTestKernel({ builtin: true, settings: { plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } } });
  await warm.get('marketplace');
  await warm.dispose();
}, 120_000);
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const ed25519 = (): SigningKey => signingKey(generateKeyPairSync('ed25519').privateKey);

async function served(plugins: FixturePlugin[], key?: SigningKey) {
  const registry = await servedRegistry(base, plugins, key ? { signingKey: key } : {});
  closers.push(() => registry.server.close());
  return registry;
}

async function host(registries: unknown[]): Promise<{ kernel: TestKernel; market: MarketplaceService }> {
  const kernel = await createTestKernel({ builtin: true, settings: { registries, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } } });
  closers.push(() => kernel.dispose());
  return { kernel, market: await kernel.get('marketplace') };
}

/** A signed registry with greeter 1.0.0, 1.0.1 and 1.1.0, and a kernel that pins its key. */
async function signedGreeter() {
  const key = ed25519();
  const registry = await served(['1.0.0', '1.0.1', '1.1.0'].map((version) => ({ name: 'greeter', version })), key);
  const { kernel, market } = await host([{ name: 'local', url: registry.server.url, keys: [key.keyid] }]);
  return { key, registry, kernel, market };
}

async function lockOf(kernel: TestKernel): Promise<LockFile> {
  return JSON.parse(await readFile(join(kernel.home, 'plugins.lock.json'), 'utf8').catch(() => '{"plugins":{}}')) as LockFile;
}

async function greeting(kernel: TestKernel, name: string): Promise<string> {
  const service = (await kernel.get(`greeting:${name}` as never)) as unknown as () => string;
  return service();
}

const revocationsFile = (folder: string) => join(folder, '-', 'plinth', 'revocations.json');
const indexFile = (folder: string) => join(folder, '-', 'plinth', 'index.json');

describe('install, update and rollback refuse revoked versions', () => {
  it('install of a revoked version is refused with the version to use; a range passes over it', async () => {
    const { key, registry, kernel, market } = await signedGreeter();
    await revokeVersion(registry.folder, key, { name: 'greeter', version: '1.0.1', reason: 'leaks the greeting', use: '1.1.0' });
    const error = await rejection(market.install('greeter@1.0.1', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REVOKED', details: expect.objectContaining({ step: 'resolve', version: '1.0.1', use: '1.1.0' }) as unknown });
    expect(error.message).toContain('leaks the greeting');
    expect(error.hint).toContain('plinth ext install greeter@1.1.0');
    expect((await lockOf(kernel)).plugins).toEqual({});
    // ~1.0.0 would be 1.0.1: the newest it allows that is not revoked is installed instead.
    const result = await market.install('greeter@~1.0.0', { yes: true });
    expect(result.changes).toEqual([expect.objectContaining({ name: 'greeter', to: '1.0.0' })]);
  });

  it('a dependency is never resolved to a revoked version either', async () => {
    const key = ed25519();
    const registry = await served([{ name: 'lib', version: '1.0.0' }, { name: 'lib', version: '1.0.1' }, { name: 'app', version: '1.0.0', dependencies: { lib: '1.0.1' } }, { name: 'app2', version: '1.0.0', dependencies: { lib: '^1.0.0' } }], key);
    await revokeVersion(registry.folder, key, { name: 'lib', version: '1.0.1', reason: 'broken' });
    const { kernel, market } = await host([{ name: 'local', url: registry.server.url, keys: [key.keyid] }]);
    const error = await rejection(market.install('app', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REVOKED', details: expect.objectContaining({ version: '1.0.1', use: '1.0.0' }) as unknown });
    expect(error.message).toContain('needed by app@1.0.0');
    await market.install('app2', { yes: true });
    expect((await lockOf(kernel)).plugins.lib?.version).toBe('1.0.0');
  });

  it('update to a revoked latest is refused, naming the newest version that is not revoked', async () => {
    const { key, registry, kernel, market } = await signedGreeter();
    await market.install('greeter@1.0.0', { yes: true });
    await revokeVersion(registry.folder, key, { name: 'greeter', version: '1.1.0', reason: 'eats input' });
    const error = await rejection(market.update(['greeter'], { yes: true, latest: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REVOKED', details: expect.objectContaining({ version: '1.1.0', use: '1.0.1' }) as unknown });
    expect(error.hint).toContain('plinth ext install greeter@1.0.1');
    expect((await lockOf(kernel)).plugins.greeter?.version).toBe('1.0.0');
    // Nor is it offered as an update.
    expect((await market.outdated()).plugins).toEqual([expect.objectContaining({ name: 'greeter', current: '1.0.0', latest: '1.0.1' })]);
  });

  it('rollback onto a version revoked since is refused without anyone running ext verify first', async () => {
    const { key, registry, kernel, market } = await signedGreeter();
    await market.install('greeter@1.0.0', { yes: true });
    await market.install('greeter@1.1.0', { yes: true });
    await revokeVersion(registry.folder, key, { name: 'greeter', version: '1.0.0', reason: 'leaks the greeting', use: '1.0.1' });
    const error = await rejection(market.rollback('greeter'));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REVOKED', details: expect.objectContaining({ step: 'rollback', version: '1.0.0', use: '1.0.1' }) as unknown });
    expect(error.hint).toContain('plinth ext install greeter@1.0.1');
    expect((await lockOf(kernel)).plugins.greeter?.version).toBe('1.1.0');
    expect(await readlink(join(kernel.home, 'plugins', 'greeter'))).toContain('greeter@1.1.0');
    expect(await greeting(kernel, 'greeter')).toBe('greeter@1.1.0');
  });
});

describe('revocations cannot be frozen', () => {
  it('the index names its revocations: an older list beside the current index is refused, even on first contact', async () => {
    const { key, registry, market } = await signedGreeter();
    await revokeVersion(registry.folder, key, { name: 'greeter', version: '1.0.0', reason: 'first' });
    const index = JSON.parse(await readFile(indexFile(registry.folder), 'utf8')) as { signed: { revocations?: { version: number; digest: string } } };
    const first = JSON.parse(await readFile(revocationsFile(registry.folder), 'utf8')) as { signed: RevocationsSigned };
    expect(index.signed.revocations).toEqual({ version: first.signed.version, digest: revocationsDigest(first.signed) });
    expect(Date.parse(first.signed.expires!)).toBeGreaterThan(Date.now());
    await copyFile(revocationsFile(registry.folder), join(base, 'revocations-first.json'));
    await revokeVersion(registry.folder, key, { name: 'greeter', version: '1.0.1', reason: 'second', use: '1.1.0' });
    // A mirror serves the current index with the older (validly signed) list, which does not name 1.0.1.
    await copyFile(join(base, 'revocations-first.json'), revocationsFile(registry.folder));
    const error = await rejection(market.install('greeter@1.0.1', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REVOCATIONS_MISMATCH', details: expect.objectContaining({ step: 'revocations', served: first.signed.version, expected: first.signed.version + 1 }) as unknown });
    expect(error.hint).toMatch(/retry/);
  });

  it('an older list after a newer one was seen, or none, fails ext verify and install', async () => {
    const { key, registry, kernel, market } = await signedGreeter();
    await market.install('greeter@1.1.0', { yes: true });
    await revokeVersion(registry.folder, key, { name: 'greeter', version: '1.0.0', reason: 'first' });
    const oldList = join(base, `revocations-${Math.random()}`);
    const currentList = join(base, `revocations-${Math.random()}`);
    await copyFile(revocationsFile(registry.folder), oldList);
    await revokeVersion(registry.folder, key, { name: 'greeter', version: '1.0.1', reason: 'second' });
    await copyFile(revocationsFile(registry.folder), currentList);
    expect((await market.verify([])).plugins).toEqual([expect.objectContaining({ name: 'greeter', status: 'ok' })]);
    const record = JSON.parse(await readFile(join(kernel.home, 'registry-trust.json'), 'utf8')) as { registries: Record<string, { revocations?: { version: number; bound?: boolean } }> };
    expect(record.registries[registry.server.url]!.revocations).toMatchObject({ version: 2, bound: true });
    // The older list alone: not the index's, and older than seen.
    await copyFile(oldList, revocationsFile(registry.folder));
    expect(await rejection(market.verify([]))).toMatchObject({ code: 'PLN_E_MARKET_REVOCATIONS_ROLLBACK', details: expect.objectContaining({ served: 1, seen: 2 }) as unknown });
    // No list at all.
    await rm(revocationsFile(registry.folder));
    const missing = await rejection(market.verify([]));
    expect(missing.code).toBe('PLN_E_MARKET_REVOCATIONS_MISSING');
    expect(missing.hint).toContain('plinth registry index');
    expect((await rejection(market.install('greeter@1.0.0', { yes: true }))).code).toBe('PLN_E_MARKET_REVOCATIONS_MISSING');
    expect((await rejection(market.outdated())).code).toBe('PLN_E_MARKET_REVOCATIONS_MISSING');
    // An index signed again without naming revocations (as before them): refused once they were bound.
    const signed = JSON.parse(await readFile(indexFile(registry.folder), 'utf8')) as { signed: Record<string, unknown> };
    const { revocations: _bound, ...unbound } = signed.signed;
    await writeFile(indexFile(registry.folder), JSON.stringify(signDocument(key, { ...unbound, version: (unbound.version as number) + 1 })));
    await copyFile(currentList, revocationsFile(registry.folder));
    const unboundError = await rejection(market.verify([]));
    expect(unboundError.code).toBe('PLN_E_MARKET_REVOCATIONS_MISSING');
    expect(unboundError.message).toContain('no longer names its revocations');
  });

  it('a registry whose index names revocations but serves none is refused on first contact', async () => {
    const { key, registry, market } = await signedGreeter();
    await revokeVersion(registry.folder, key, { name: 'greeter', version: '1.0.0', reason: 'first' });
    await rm(revocationsFile(registry.folder));
    const error = await rejection(market.install('greeter@1.1.0', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REVOCATIONS_MISSING', details: expect.objectContaining({ expected: 1 }) as unknown });
  });

  it('expired revocations are refused, though the index naming them is current', async () => {
    const { key, registry, market } = await signedGreeter();
    const index = JSON.parse(await readFile(indexFile(registry.folder), 'utf8')) as { signed: Record<string, unknown> };
    const revocations: RevocationsSigned = { type: 'plinth-revocations', version: 1, expires: new Date(Date.now() - 86_400_000).toISOString(), revoked: [] };
    await writeFile(revocationsFile(registry.folder), JSON.stringify(signDocument(key, revocations)));
    await writeFile(indexFile(registry.folder), JSON.stringify(signDocument(key, { ...index.signed, version: (index.signed.version as number) + 1, revocations: { version: 1, digest: revocationsDigest(revocations) } })));
    const error = await rejection(market.install('greeter@1.1.0', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REVOCATIONS_EXPIRED', details: expect.objectContaining({ version: 1, expires: revocations.expires }) as unknown });
  });

  it('revocations an index does not name (an older registry) still count, and once seen must go on being served', async () => {
    const { key, registry, market } = await signedGreeter();
    const index = JSON.parse(await readFile(indexFile(registry.folder), 'utf8')) as { signed: Record<string, unknown> };
    await writeFile(revocationsFile(registry.folder), JSON.stringify(signDocument(key, { type: 'plinth-revocations', version: 1, revoked: [{ name: 'greeter', version: '1.0.1', reason: 'old style' }] })));
    expect(index.signed.revocations).toBeUndefined();
    expect((await rejection(market.install('greeter@1.0.1', { yes: true }))).code).toBe('PLN_E_MARKET_REVOKED');
    await market.install('greeter@1.1.0', { yes: true });
    await rm(revocationsFile(registry.folder));
    expect((await rejection(market.verify([]))).code).toBe('PLN_E_MARKET_REVOCATIONS_MISSING');
  });

  it('a registry that never published revocations is not refused for it', async () => {
    const { market } = await signedGreeter();
    expect((await market.install('greeter@1.0.1', { yes: true })).changes).toHaveLength(1);
    const verified = await market.verify([]);
    expect(verified.plugins).toEqual([expect.objectContaining({ status: 'ok' })]);
    expect(verified.notes).toEqual([]);
  });
});

describe('dependency confusion', () => {
  it('a dependency comes from its dependent\'s registry, not from the public registry that has the same name', async () => {
    const pub = await served([{ name: 'acme-helper', version: '1.9.9', greeting: 'the impostor' }]);
    const acme = await served([{ name: 'acme-helper', version: '1.0.0' }, { name: '@acme/tool', version: '1.0.0', dependencies: { 'acme-helper': '^1.0.0' } }]);
    const { kernel, market } = await host([
      { name: 'public', url: pub.server.url },
      { name: 'acme', url: acme.server.url, scope: '@acme' },
    ]);
    const result = await market.install('@acme/tool', { yes: true });
    expect(result.changes.map((c) => `${c.name}@${c.to} ${c.registry}`)).toEqual(['acme-helper@1.0.0 acme', '@acme/tool@1.0.0 acme']);
    expect(await greeting(kernel, 'acme-helper')).toBe('acme-helper@1.0.0');
  });

  it('when the dependent\'s registry does not have it and another does, it is refused; installed by name on purpose, it is used', async () => {
    const pub = await served([{ name: 'acme-helper', version: '1.9.9', greeting: 'the impostor' }]);
    const acme = await served([{ name: '@acme/tool', version: '1.0.0', dependencies: { 'acme-helper': '^1.0.0' } }]);
    const { kernel, market } = await host([
      { name: 'public', url: pub.server.url },
      { name: 'acme', url: acme.server.url, scope: '@acme' },
    ]);
    const error = await rejection(market.install('@acme/tool', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_DEPENDENCY_REGISTRY', details: expect.objectContaining({ plugin: 'acme-helper', registry: 'acme', other: 'public', neededBy: '@acme/tool@1.0.0' }) as unknown });
    expect(error.hint).toContain('plinth ext install acme-helper@^1.0.0');
    expect((await lockOf(kernel)).plugins).toEqual({});
    await market.install('acme-helper@^1.0.0', { yes: true });
    const result = await market.install('@acme/tool', { yes: true });
    expect(result.changes.map((c) => `${c.name}@${c.to} ${c.registry}`)).toEqual(['@acme/tool@1.0.0 acme']);
  });

  it('a dependency of a scope configured to a registry comes from that registry', async () => {
    const pub = await served([{ name: 'app', version: '1.0.0', dependencies: { '@acme/lib': '^1.0.0' } }, { name: '@acme/lib', version: '1.5.0', greeting: 'the impostor' }]);
    const acme = await served([{ name: '@acme/lib', version: '1.0.0' }]);
    const { kernel, market } = await host([
      { name: 'public', url: pub.server.url },
      { name: 'acme', url: acme.server.url, scope: '@acme' },
    ]);
    await market.install('app', { yes: true });
    expect(await greeting(kernel, '@acme/lib')).toBe('@acme/lib@1.0.0');
  });
});
