/**
 * Signed registries against the marketplace client, with the real registry
 * server on 127.0.0.1: publisher signatures (ed25519 for plinth registries,
 * ECDSA P-256 in npm's shape), keys pinned or trusted on first use, and the
 * signed index that refuses a replayed older state (rollback), an expired one
 * (freeze) and documents that do not belong together (mix-and-match); keys
 * move only through a rotation signed by the previous key.
 */
import { createHash, createSign, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LockFile, MarketplaceService } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { packPlugin } from '../registry/pack.js';
import { publishPlugin } from '../registry/publish.js';
import { type SigningKey, signDocument, signingKey } from '../registry/signing.js';
import { rebuildIndex, rotateKey } from '../registry/trust-documents.js';
import { rejection } from './support/errors.js';
import { type FixturePlugin, servedRegistry, writePlugin } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-signing-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const ed25519 = (): SigningKey => signingKey(generateKeyPairSync('ed25519').privateKey);

async function signed(plugins: FixturePlugin[], key: SigningKey) {
  const served = await servedRegistry(base, plugins, { signingKey: key });
  closers.push(() => served.server.close());
  return served;
}

async function host(url: string, registry: Record<string, unknown> = {}): Promise<{ kernel: TestKernel; market: MarketplaceService }> {
  const kernel = await createTestKernel({ builtin: true, settings: { registries: [{ name: 'local', url, ...registry }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } } });
  closers.push(() => kernel.dispose());
  return { kernel, market: await kernel.get('marketplace') };
}

async function lockOf(kernel: TestKernel): Promise<LockFile> {
  return JSON.parse(await readFile(join(kernel.home, 'plugins.lock.json'), 'utf8')) as LockFile;
}

async function trustRecord(kernel: TestKernel): Promise<{ registries: Record<string, { keys: Array<{ keyid: string; how: string }>; index?: { version: number } }> }> {
  return JSON.parse(await readFile(join(kernel.home, 'registry-trust.json'), 'utf8')) as never;
}

describe('signatures and keys', () => {
  it('installs a version signed with ed25519 by a pinned key, and records the signature it was installed under', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    const { kernel, market } = await host(served.server.url, { keys: [key.keyid] });
    const result = await market.install('greeter', { yes: true });
    expect(result.changes).toEqual([expect.objectContaining({ name: 'greeter', to: '1.0.0', loaded: true })]);
    const entry = (await lockOf(kernel)).plugins.greeter!;
    expect(entry.signature?.keyid).toBe(key.keyid);
    expect(entry.tree?.digest).toMatch(/^sha256-/);
    expect(Object.keys(entry.tree!.files).sort()).toEqual(['index.ts', 'manifest.json']);
    const record = (await trustRecord(kernel)).registries[served.server.url]!;
    expect(record.keys).toEqual([expect.objectContaining({ keyid: key.keyid, how: 'pinned' })]);
    expect(record.index?.version).toBe(1);
  });

  it('trusts a listed key on first use only when asked, shows it, and refuses without anyone to ask', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    const { kernel, market } = await host(served.server.url);
    const refused = await rejection(market.install('greeter', { yes: true }));
    expect(refused.code).toBe('PLN_E_MARKET_KEY_UNTRUSTED');
    expect(refused.message).toContain(key.keyid);
    expect(refused.hint).toContain(`--trust-key ${key.keyid}`);
    const offered: string[] = [];
    const result = await market.install('greeter', { yes: true, trustKeys: async (request) => (offered.push(...request.keys.map((k) => `${k.keyid} ${k.keytype}`)), true) });
    expect(offered).toEqual([`${key.keyid} ed25519`]);
    expect(result.notes).toEqual([expect.objectContaining({ kind: 'trusted' })]);
    expect((await trustRecord(kernel)).registries[served.server.url]!.keys).toEqual([expect.objectContaining({ keyid: key.keyid, how: 'first-use' })]);
  });

  it('refuses a version signed by a key the registry is not trusted with, naming the key expected', async () => {
    const key = ed25519();
    const other = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    // 1.1.0 signed by another key; the index re-signed by the right one, so only the version's signature is wrong.
    await publishPlugin(served.folder, await writePlugin(join(base, 'sources'), { name: 'greeter', version: '1.1.0' }), { signingKey: other });
    await rebuildIndex(served.folder, key);
    const { market } = await host(served.server.url, { keys: [key.keyid] });
    const error = await rejection(market.install('greeter@1.1.0', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_SIGNATURE_KEY', details: expect.objectContaining({ expected: [key.keyid], signedBy: [other.keyid] }) as unknown });
    expect(error.message).toContain(`expected ${key.keyid}`);
  });

  it('signatures "required" refuses an unsigned version; "if-present" installs it', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    await publishPlugin(served.folder, await writePlugin(join(base, 'sources'), { name: 'plain', version: '1.0.0' }));
    await rebuildIndex(served.folder, key);
    const strict = await host(served.server.url, { keys: [key.keyid], signatures: 'required' });
    const error = await rejection(strict.market.install('plain', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_UNSIGNED', details: expect.objectContaining({ expected: [key.keyid] }) as unknown });
    const lenient = await host(served.server.url, { keys: [key.keyid], signatures: 'if-present' });
    expect((await lenient.market.install('plain', { yes: true })).changes).toEqual([expect.objectContaining({ name: 'plain', to: '1.0.0' })]);
    expect((await lockOf(lenient.kernel)).plugins.plain?.signature).toBeUndefined();
  });
});

describe('a registry that lists no keys', () => {
  it('installs signed versions with a note that they were not checked (a proxy passing on another registry\'s signatures)', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    await rm(join(served.folder, '-', 'npm'), { recursive: true });
    const { kernel, market } = await host(served.server.url);
    const result = await market.install('greeter', { yes: true });
    expect(result.notes).toEqual([expect.objectContaining({ kind: 'unchecked', message: expect.stringContaining('lists no signing keys') as unknown })]);
    expect((await lockOf(kernel)).plugins.greeter?.signature).toBeUndefined();
  });
});

describe('the signed index', () => {
  it('refuses a tampered packument: it no longer matches the digest the index signed', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    const file = join(served.folder, 'greeter');
    const packument = JSON.parse(await readFile(file, 'utf8')) as { versions: Record<string, { dist: { integrity: string } }> };
    packument.versions['1.0.0']!.dist.integrity = `sha512-${createHash('sha512').update('other bytes').digest('base64')}`;
    await writeFile(file, JSON.stringify(packument));
    const { kernel, market } = await host(served.server.url, { keys: [key.keyid] });
    const error = await rejection(market.install('greeter', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_INDEX_MISMATCH', details: expect.objectContaining({ step: 'resolve', index: 1 }) as unknown });
    expect((await lockOf(kernel).catch(() => ({ plugins: {} }))).plugins).toEqual({});
  });

  it('refuses a packument from another moment than the index (mix-and-match)', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    await copyFile(join(served.folder, 'greeter'), join(base, 'greeter-then'));
    await served.publish({ name: 'greeter', version: '1.1.0' });
    // The index lists 1.0.0 and 1.1.0; the packument served is the one from before 1.1.0.
    await copyFile(join(base, 'greeter-then'), join(served.folder, 'greeter'));
    const { market } = await host(served.server.url, { keys: [key.keyid] });
    const error = await rejection(market.install('greeter@1.0.0', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_INDEX_MISMATCH', details: expect.objectContaining({ index: 2 }) as unknown });
  });

  it('refuses an older index once a newer one was seen (rollback), and says which versions', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    const index = join(served.folder, '-', 'plinth', 'index.json');
    await copyFile(index, join(base, 'index-v1.json'));
    await copyFile(join(served.folder, 'greeter'), join(base, 'greeter-v1'));
    await served.publish({ name: 'greeter', version: '1.1.0' });
    const { kernel, market } = await host(served.server.url, { keys: [key.keyid] });
    await market.install('greeter', { yes: true });
    expect((await trustRecord(kernel)).registries[served.server.url]!.index?.version).toBe(2);
    // The registry (or a mirror) replays its state from before 1.1.0: signed, consistent, and old.
    await copyFile(join(base, 'index-v1.json'), index);
    await copyFile(join(base, 'greeter-v1'), join(served.folder, 'greeter'));
    const error = await rejection(market.install('greeter@1.0.0', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_INDEX_ROLLBACK', details: expect.objectContaining({ served: 1, seen: 2 }) as unknown });
    expect((await trustRecord(kernel)).registries[served.server.url]!.index?.version).toBe(2);
    // Removing the index altogether does not switch the check off.
    await rm(index);
    expect((await rejection(market.install('greeter@1.0.0', { yes: true }))).code).toBe('PLN_E_MARKET_INDEX_MISSING');
  });

  it('refuses an expired index (freeze)', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    await rebuildIndex(served.folder, key, { now: new Date(Date.now() - 10 * 86_400_000), ttlDays: 7 });
    const { market } = await host(served.server.url, { keys: [key.keyid] });
    const error = await rejection(market.install('greeter', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_INDEX_EXPIRED', details: expect.objectContaining({ version: 2 }) as unknown });
    // Signed again by the operator: installable.
    await rebuildIndex(served.folder, key);
    expect((await market.install('greeter', { yes: true })).changes).toHaveLength(1);
  });

  it('refuses an index signed by a key that is not trusted', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    const intruder = ed25519();
    await rebuildIndex(served.folder, intruder);
    const { market } = await host(served.server.url, { keys: [key.keyid] });
    const error = await rejection(market.install('greeter', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_INDEX_SIGNATURE', details: expect.objectContaining({ expected: [key.keyid], signedBy: [intruder.keyid] }) as unknown });
  });
});

describe('key rotation', () => {
  it('follows a rotation signed by the previous key, and from then on trusts only the new one', async () => {
    const old = ed25519();
    const next = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], old);
    const { kernel, market } = await host(served.server.url, { keys: [old.keyid] });
    await market.install('greeter', { yes: true });
    await rotateKey(served.folder, old, next);
    const packument = JSON.parse(await readFile(join(served.folder, 'greeter'), 'utf8')) as { versions: Record<string, { dist: { signatures: Array<{ keyid: string }> } }> };
    expect(packument.versions['1.0.0']!.dist.signatures.map((s) => s.keyid)).toEqual([next.keyid]);
    // The key handed over from signs nothing more.
    expect((await rejection(served.publish({ name: 'greeter', version: '1.1.0' }))).code).toBe('PLN_E_REGISTRY_SIGN_KEY');
    await publishPlugin(served.folder, await writePlugin(join(base, 'sources'), { name: 'greeter', version: '1.2.0' }), { signingKey: next });
    const result = await market.install('greeter@1.2.0', { yes: true });
    expect(result.changes).toEqual([expect.objectContaining({ from: '1.0.0', to: '1.2.0' })]);
    expect((await lockOf(kernel)).plugins.greeter?.signature?.keyid).toBe(next.keyid);
    const keys = (await trustRecord(kernel)).registries[served.server.url]!.keys;
    expect(keys.map((k) => [k.keyid, k.how])).toEqual([[next.keyid, 'rotated']]);
  });

  it('refuses a rotation the previous key did not sign, and keeps trusting the previous key', async () => {
    const key = ed25519();
    const served = await signed([{ name: 'greeter', version: '1.0.0' }], key);
    const { kernel, market } = await host(served.server.url, { keys: [key.keyid] });
    await market.install('greeter', { yes: true });
    // Someone with write access to the folder but not the key: a new key, a rotation signed by it, everything re-signed.
    const forger = ed25519();
    const rotation = signDocument(forger, { type: 'plinth-rotation' as const, from: key.keyid, to: { keyid: forger.keyid, key: forger.publicKey }, at: new Date().toISOString() });
    await writeFile(join(served.folder, '-', 'plinth', 'rotations.json'), JSON.stringify({ rotations: [rotation] }));
    const keysFile = join(served.folder, '-', 'npm', 'v1', 'keys');
    const keys = JSON.parse(await readFile(keysFile, 'utf8')) as { keys: unknown[] };
    await writeFile(keysFile, JSON.stringify({ keys: [...keys.keys, { expires: null, keyid: forger.keyid, keytype: 'ed25519', scheme: 'ed25519', key: forger.publicKey }] }));
    await rebuildIndex(served.folder, forger);
    const error = await rejection(market.install('greeter', { yes: true, force: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_KEY_ROTATION', details: expect.objectContaining({ expected: key.keyid, to: forger.keyid }) as unknown });
    expect((await trustRecord(kernel)).registries[served.server.url]!.keys.map((k) => k.keyid)).toEqual([key.keyid]);
  });
});

describe('npm-format registry signatures', () => {
  /** A registry in npm's shape (no plinth index): ECDSA P-256 signatures over `name@version:integrity`, keys at /-/npm/v1/keys. */
  async function npmRegistry(tamper: boolean) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = publicKey.export({ type: 'spki', format: 'der' });
    const keyid = `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
    const packed = await packPlugin(await writePlugin(join(base, 'sources'), { name: 'npm-style', version: '1.0.0' }));
    const signedIntegrity = tamper ? `sha512-${createHash('sha512').update('something else').digest('base64')}` : packed.integrity;
    const sig = createSign('SHA256').update(`npm-style@1.0.0:${signedIntegrity}`).sign(privateKey, 'base64');
    let origin = '';
    const server = createServer((req, res) => {
      const send = (status: number, body: string | Buffer, type = 'application/json') => (res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }), res.end(body));
      if (req.url === '/-/npm/v1/keys') return send(200, JSON.stringify({ keys: [{ expires: null, keyid, keytype: 'ecdsa-sha2-nistp256', scheme: 'ecdsa-sha2-nistp256', key: der.toString('base64') }] }));
      if (req.url === '/npm-style') {
        const version = { ...packed.manifest, dist: { integrity: packed.integrity, shasum: packed.shasum, tarball: `${origin}npm-style/-/npm-style-1.0.0.tgz`, signatures: [{ keyid, sig }] } };
        return send(200, JSON.stringify({ name: 'npm-style', 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': version } }));
      }
      if (req.url === '/npm-style/-/npm-style-1.0.0.tgz') return send(200, packed.bytes, 'application/octet-stream');
      return send(404, JSON.stringify({ error: 'not found' }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    closers.push(() => new Promise<void>((done) => (server.close(() => done()), server.closeAllConnections())));
    return { url: origin, keyid };
  }

  it('verifies ECDSA P-256 signatures against the keys endpoint and records the one installed under', async () => {
    const npm = await npmRegistry(false);
    const { kernel, market } = await host(npm.url, { keys: [npm.keyid] });
    expect((await market.install('npm-style', { yes: true })).changes).toEqual([expect.objectContaining({ name: 'npm-style', to: '1.0.0' })]);
    expect((await lockOf(kernel)).plugins['npm-style']?.signature?.keyid).toBe(npm.keyid);
  });

  it('refuses an ECDSA signature over another integrity', async () => {
    const npm = await npmRegistry(true);
    const { market } = await host(npm.url, { keys: [npm.keyid] });
    const error = await rejection(market.install('npm-style', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_SIGNATURE', details: expect.objectContaining({ verdict: 'invalid', expected: [npm.keyid] }) as unknown });
  });
});
