/**
 * The installed-files record (internal/registry/installed-tree.ts) on real files: what an
 * install records, the fast path that trusts an unchanged stat, and what
 * makes it hash again; and the packument digest the signed index pins, the
 * same for both forms the real registry server sends.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTree, hashTree, treeDigest } from '../internal/registry/installed-tree.js';
import { packumentDigest } from '../internal/registry/trust.js';
import { signingKey } from '../registry/signing.js';
import { servedRegistry } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-tree-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(base, 'plugin-'));
  await mkdir(join(dir, 'lib'));
  await writeFile(join(dir, 'manifest.json'), '{}');
  await writeFile(join(dir, 'lib', 'a.js'), 'export const a = 1;\n');
  return dir;
}

describe('the installed tree', () => {
  it('records every file; an unchanged folder passes on stats alone', async () => {
    const dir = await folder();
    const tree = await hashTree(dir);
    expect(Object.keys(tree.files).sort()).toEqual(['lib/a.js', 'manifest.json']);
    expect(tree.digest).toBe(treeDigest(tree.files));
    expect(await checkTree(dir, tree)).toMatchObject({ ok: true, rehashed: 0 });
    expect(await checkTree(dir, tree, { full: true })).toMatchObject({ ok: true, rehashed: 2 });
  });

  it('hashes again a file whose stat changed, and finds an edit that restored size and mtime (ctime moved)', async () => {
    const dir = await folder();
    const tree = await hashTree(dir);
    const file = join(dir, 'lib', 'a.js');
    const before = await stat(file);
    await writeFile(file, 'export const a = 2;\n'); // same size
    await utimes(file, before.atime, before.mtime);
    expect(await checkTree(dir, tree)).toMatchObject({ ok: false, changed: ['lib/a.js'], rehashed: 1 });
  });

  it('a file touched but not changed passes after its rehash', async () => {
    const dir = await folder();
    const tree = await hashTree(dir);
    await utimes(join(dir, 'manifest.json'), new Date(), new Date());
    expect(await checkTree(dir, tree)).toMatchObject({ ok: true, rehashed: 1 });
  });

  it('names added and removed files, and a folder where a file was', async () => {
    const dir = await folder();
    const tree = await hashTree(dir);
    await rm(join(dir, 'lib', 'a.js'));
    await mkdir(join(dir, 'lib', 'a.js'));
    await writeFile(join(dir, 'lib', 'a.js', 'inner.js'), '');
    await writeFile(join(dir, '.hidden'), 'x');
    expect(await checkTree(dir, tree)).toMatchObject({ ok: false, changed: [], added: ['.hidden', 'lib/a.js/inner.js'], removed: ['lib/a.js'] });
  });
});

describe('the packument digest', () => {
  it('is the same for the full and the abbreviated packument the server sends, and the one the index lists', async () => {
    const key = signingKey(generateKeyPairSync('ed25519').privateKey);
    const served = await servedRegistry(base, [{ name: 'greeter', version: '1.0.0' }, { name: 'greeter', version: '1.1.0' }], { signingKey: key });
    try {
      type Doc = Parameters<typeof packumentDigest>[0];
      const full = (await (await fetch(new URL('greeter', served.server.url))).json()) as Doc;
      const abbreviated = (await (await fetch(new URL('greeter', served.server.url), { headers: { accept: 'application/vnd.npm.install-v1+json' } })).json()) as Doc;
      const index = (await (await fetch(new URL('-/plinth/index.json', served.server.url))).json()) as { signed: { version: number; packuments: Record<string, string> } };
      expect(packumentDigest(full)).toBe(packumentDigest(abbreviated));
      expect(index.signed).toMatchObject({ version: 2, packuments: { greeter: packumentDigest(full) } });
      expect(packumentDigest({ ...full, 'dist-tags': { latest: '1.0.0' } })).not.toBe(packumentDigest(full));
    } finally {
      await served.server.close();
    }
  });
});
