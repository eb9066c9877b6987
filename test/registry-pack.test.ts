/**
 * `registry/pack.ts` and `registry/publish.ts` on real folders: a tarball is
 * the same bytes for the same folder, holds regular files under `package/`
 * only, follows the skip rule, and its digests are those of its bytes; a
 * tarball made by `npm pack` is accepted the same way; publishing writes the
 * packument, tarball and search index of the static layout.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmod, link, mkdir, mkdtemp, readFile, readdir, rm, symlink, utimes, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssri from 'ssri';
import { Parser, type ReadEntry } from 'tar';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REGISTRY_SEARCH_INDEX, packumentSchema, resolveTarballUrl, searchResponseSchema } from '../internal/registry/packument.js';
import { PACK_MTIME, packPlugin } from '../registry/pack.js';
import { publishPlugin, publishTarball } from '../registry/publish.js';
import { readTarball } from '../registry/tarball-read.js';
import { rejection } from './support/errors.js';
import { ROOT, ensureBuilt, plinth } from './support/cli.js';
import { offlineNpmEnv, shell } from './support/npm.js';

let base: string;
beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-pack-'));
}, 120_000);
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

let count = 0;
/** A fresh plugin folder with a manifest, code and a README. */
async function plugin(manifest: Record<string, unknown> = {}, files: Record<string, string> = {}): Promise<string> {
  const dir = join(base, `plugin-${++count}`);
  await mkdir(dir, { recursive: true });
  const full = { name: 'sample', version: '1.0.0', description: 'A sample plugin', kernel: '^1.0.0', main: './index.ts', ...manifest };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(full, null, 2));
  const all = { 'index.ts': "import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup() {} });\n", 'README.md': '# sample\n', 'lib/util.ts': 'export const one = 1;\n', ...files };
  for (const [path, text] of Object.entries(all)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

interface Header {
  readonly path: string;
  readonly type: string;
  readonly mode: number;
  readonly uid: number | undefined;
  readonly gid: number | undefined;
  readonly mtime: number;
  readonly uname: string;
  readonly body: string;
}

/** Every entry of a gzipped tar with its header fields and content. */
async function entries(bytes: Buffer): Promise<Header[]> {
  const found: Header[] = [];
  const parser = new Parser({
    onReadEntry: (entry: ReadEntry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () =>
        found.push({ path: entry.path, type: entry.type, mode: entry.mode ?? -1, uid: entry.uid, gid: entry.gid, mtime: entry.mtime?.getTime() ?? -1, uname: entry.uname ?? '', body: Buffer.concat(chunks).toString('utf8') }),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('error', reject);
    parser.on('end', resolve);
    parser.end(bytes);
  });
  return found;
}

describe('pack', () => {
  test('the same folder gives the same bytes, whatever the files\' times, modes or location', async () => {
    const dir = await plugin();
    const first = await packPlugin(dir);
    expect((await packPlugin(dir)).bytes.equals(first.bytes)).toBe(true);

    await utimes(join(dir, 'index.ts'), new Date('2001-02-03T04:05:06Z'), new Date('2001-02-03T04:05:06Z'));
    await utimes(join(dir, 'lib'), new Date('2011-01-01T00:00:00Z'), new Date('2011-01-01T00:00:00Z'));
    await chmod(join(dir, 'README.md'), 0o600);
    await chmod(join(dir, 'lib', 'util.ts'), 0o664);
    const copy = join(base, 'elsewhere', 'deeper');
    await cp(dir, copy, { recursive: true });
    expect((await packPlugin(dir)).bytes.equals(first.bytes)).toBe(true);
    expect((await packPlugin(copy)).bytes.equals(first.bytes)).toBe(true);

    // A change to a file is a change to the bytes.
    await writeFile(join(dir, 'README.md'), '# sample, edited\n');
    expect((await packPlugin(dir)).bytes.equals(first.bytes)).toBe(false);
  });

  test('entries are the files, sorted, under package/, with no owner, one mtime and modes 0644 or 0755', async () => {
    const dir = await plugin({}, { 'bin/run.sh': '#!/bin/sh\necho hi\n' });
    await chmod(join(dir, 'bin', 'run.sh'), 0o750);
    const packed = await packPlugin(dir);
    const list = await entries(packed.bytes);
    expect(list.map((e) => e.path)).toEqual(['package/README.md', 'package/bin/run.sh', 'package/index.ts', 'package/lib/util.ts', 'package/manifest.json']);
    expect(packed.files).toEqual(list.map((e) => e.path.slice('package/'.length)));
    for (const entry of list) {
      expect(entry.type).toBe('File');
      // No owner: portable headers leave uid, gid and names empty, which readers take as 0 (below).
      expect([entry.uid, entry.gid, entry.uname]).toEqual([undefined, undefined, '']);
      expect(entry.mtime).toBe(PACK_MTIME.getTime());
      expect(entry.mode).toBe(entry.path === 'package/bin/run.sh' ? 0o755 : 0o644);
    }
    expect(list.find((e) => e.path === 'package/lib/util.ts')?.body).toBe('export const one = 1;\n');
    expect(packed.unpackedSize).toBe(list.reduce((sum, e) => sum + Buffer.byteLength(e.body), 0));
    expect(packed.fileName).toBe('sample-1.0.0.tgz');
    const listing = execFileSync('tar', ['-tvzf', '-'], { input: packed.bytes }).toString().trim().split('\n');
    expect(listing.every((line) => / 0\/0 /.test(line))).toBe(true);
  });

  test('node_modules, dot-files, dot-folders, *.tgz and empty folders are left out', async () => {
    const dir = await plugin({}, {
      '.git/config': '[core]\n',
      '.env': 'SECRET=1\n',
      'lib/.DS_Store': 'x',
      'node_modules/dep/index.js': 'module.exports = 1;\n',
      'lib/node_modules/inner/index.js': '1',
      'sample-0.9.0.tgz': 'old pack',
      'docs/guide.md': '# guide\n',
    });
    await mkdir(join(dir, 'empty'));
    const packed = await packPlugin(dir);
    expect(packed.files).toEqual(['README.md', 'docs/guide.md', 'index.ts', 'lib/util.ts', 'manifest.json']);
  });

  test('a link inside the folder is packed as what it points to; a hard link as a second file', async () => {
    const dir = await plugin();
    await symlink('lib/util.ts', join(dir, 'alias.ts'));
    await symlink('lib', join(dir, 'lib-link'));
    await link(join(dir, 'README.md'), join(dir, 'README.copy.md'));
    const list = await entries((await packPlugin(dir)).bytes);
    const byPath = new Map(list.map((e) => [e.path, e]));
    expect(byPath.get('package/alias.ts')).toMatchObject({ type: 'File', body: 'export const one = 1;\n' });
    expect(byPath.get('package/lib-link/util.ts')).toMatchObject({ type: 'File', body: 'export const one = 1;\n' });
    expect(byPath.get('package/README.copy.md')).toMatchObject({ type: 'File', body: '# sample\n' });
    expect(list.every((e) => e.type === 'File')).toBe(true);
  });

  test('a link out of the folder, a broken link and a link loop are refused', async () => {
    const outside = join(base, 'outside-secret.txt');
    await writeFile(outside, 'secret');
    const out = await plugin();
    await symlink(outside, join(out, 'secret.txt'));
    const outError = await rejection(packPlugin(out));
    expect(outError.code).toBe('PLN_E_REGISTRY_PACK_LINK');
    expect(outError.message).toContain('outside the plugin folder');

    const broken = await plugin();
    await symlink('missing.ts', join(broken, 'gone.ts'));
    expect((await rejection(packPlugin(broken))).code).toBe('PLN_E_REGISTRY_PACK_LINK');

    const loop = await plugin();
    await symlink('..', join(loop, 'lib', 'up'));
    expect((await rejection(packPlugin(loop))).code).toBe('PLN_E_REGISTRY_PACK_LINK');

    const skipped = await plugin({}, { 'node_modules/dep/index.js': '1' });
    await symlink('node_modules/dep/index.js', join(skipped, 'dep.js'));
    expect((await rejection(packPlugin(skipped))).code).toBe('PLN_E_REGISTRY_PACK_LINK');
  });

  test('a FIFO is refused', async () => {
    const dir = await plugin();
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    expect((await rejection(packPlugin(dir))).code).toBe('PLN_E_REGISTRY_PACK_ENTRY');
  });

  test('the manifest is checked first: missing, invalid, main outside or missing, imports leaving the folder', async () => {
    const empty = join(base, 'not-a-plugin');
    await mkdir(empty);
    const missing = await rejection(packPlugin(empty));
    expect(missing.code).toBe('PLN_E_REGISTRY_PACK_MANIFEST');
    // The command the hint suggests is one plinth has.
    const suggested = /`plinth ([a-z][a-z ]*?)(?: <[^`]*)?`/.exec(missing.hint ?? '')?.[1];
    expect(suggested, missing.hint).toBeDefined();
    const help = await plinth([...suggested!.split(' '), '--help']);
    expect(help.code, `plinth ${suggested} --help: ${help.stderr}`).toBe(0);
    expect((await rejection(packPlugin(await plugin({ version: 'one' })))).code).toBe('PLN_E_MANIFEST_INVALID');
    expect((await rejection(packPlugin(await plugin({ main: '../elsewhere/index.ts' })))).code).toBe('PLN_E_REGISTRY_PACK_MAIN');
    expect((await rejection(packPlugin(await plugin({ main: './missing.ts' })))).code).toBe('PLN_E_REGISTRY_PACK_MAIN');

    const climbing = await plugin({}, { 'lib/uses.ts': "import type { X } from '../../mcp/types.js';\nexport const load = () => import('../../../sdk/x.js');\n" });
    const error = await rejection(packPlugin(climbing));
    expect(error.code).toBe('PLN_E_REGISTRY_PACK_IMPORT');
    expect(error.details?.imports).toEqual(['lib/uses.ts imports "../../mcp/types.js"', 'lib/uses.ts imports "../../../sdk/x.js"']);
    // Relative imports that stay inside are fine.
    await expect(packPlugin(await plugin({}, { 'lib/inner.ts': "export { one } from './util.js';\nimport '../index.js';\n" }))).resolves.toBeDefined();
  });

  test('integrity is the sha512 SRI of the bytes, sha256 and shasum too', async () => {
    const packed = await packPlugin(await plugin());
    expect(packed.integrity).toBe(ssri.fromData(packed.bytes, { algorithms: ['sha512'] }).toString());
    expect(packed.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    expect(packed.sha256).toBe(`sha256-${createHash('sha256').update(packed.bytes).digest('base64')}`);
    expect(packed.shasum).toBe(createHash('sha1').update(packed.bytes).digest('hex'));
    expect(ssri.checkData(packed.bytes, packed.integrity)).toBeTruthy();
    expect(ssri.checkData(Buffer.concat([packed.bytes, Buffer.from([0])]), packed.integrity)).toBe(false);
  });

  test('every builtin plugin packs on its own, the transports included, and reads back the same', async () => {
    const names = (await readdir(join(ROOT, 'plugins'), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(['transport-stdio', 'transport-http', 'transport-sse']));
    for (const name of names) {
      const dir = join(ROOT, 'plugins', name);
      const packed = await packPlugin(dir);
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { name: string; version: string };
      expect([packed.manifest.name, packed.manifest.version]).toEqual([manifest.name, manifest.version]);
      const back = await readTarball(packed.bytes);
      expect(back.files).toEqual(packed.files);
      expect(back.manifest.name).toBe(manifest.name);
    }
  });
});

describe('npm pack', () => {
  test('a tarball made by npm pack has the same layout and is accepted by the publisher', async () => {
    const dir = await plugin({ name: 'npm-made', version: '2.0.0' });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'npm-made', version: '2.0.0', description: 'packed by npm', license: 'MIT' }, null, 2));
    const env = await offlineNpmEnv(join(base, 'npm'));
    const packedByNpm = await shell('npm pack --json --pack-destination ..', dir, env);
    expect(packedByNpm.code, packedByNpm.stderr).toBe(0);
    const [{ filename }] = JSON.parse(packedByNpm.stdout) as [{ filename: string }];
    const bytes = await readFile(join(dir, '..', filename));

    const theirs = await readTarball(bytes);
    const ours = await packPlugin(dir);
    expect(theirs.manifest.name).toBe('npm-made');
    expect(theirs.files).toEqual(ours.files);
    expect((await entries(bytes)).every((e) => e.path.startsWith('package/') && e.type === 'File')).toBe(true);

    const registry = join(base, 'npm-registry');
    const published = await publishTarball(registry, bytes);
    expect(published.status).toBe('published');
    expect(await readFile(join(registry, published.tarball))).toEqual(bytes);
  }, 120_000);

  test('what is not a plugin tarball is refused before it enters a registry', async () => {
    expect((await rejection(readTarball(Buffer.from('not a tarball')))).code).toBe('PLN_E_REGISTRY_TARBALL_LAYOUT');
    // A tar without package/manifest.json: a plugin folder packed by hand from its parent.
    const dir = await plugin();
    const stray = execFileSync('tar', ['-czf', '-', '-C', dir, '.']);
    expect((await rejection(readTarball(stray))).code).toBe('PLN_E_REGISTRY_TARBALL_LAYOUT');
    // A link, and an entry outside package/, built with python3's tarfile.
    const script = [
      'import io, sys, tarfile',
      'buf = io.BytesIO()',
      "t = tarfile.open(fileobj=buf, mode='w:gz')",
      'def add(name, data=b"", kind=tarfile.REGTYPE, link=""):',
      '    info = tarfile.TarInfo(name); info.type = kind; info.linkname = link; info.size = len(data)',
      '    t.addfile(info, io.BytesIO(data))',
      'add("package/manifest.json", b\'{"name":"bad","version":"1.0.0"}\')',
      'add("package/link", kind=tarfile.SYMTYPE, link="/etc/passwd")',
      'add("../escape.txt", b"x")',
      't.close()',
      'sys.stdout.buffer.write(buf.getvalue())',
    ].join('\n');
    const bad = execFileSync('python3', ['-c', script]);
    const error = await rejection(readTarball(bad));
    expect(error.code).toBe('PLN_E_REGISTRY_TARBALL_LAYOUT');
    expect(error.details?.problems).toEqual(['"package/link" is a SymbolicLink, not a regular file', '"../escape.txt" is outside package/']);
  });
});

describe('publish', () => {
  test('a folder becomes a packument, a tarball and a search index entry', async () => {
    const registry = join(base, 'registry-1');
    const dir = await plugin({ name: 'weather', version: '1.0.0', description: 'Weather tools', keywords: ['forecast', 'mcp'], dependencies: { mcp: '^1.0.0' } });
    const result = await publishPlugin(registry, dir, { now: new Date('2026-01-02T03:04:05Z') });
    const packed = await packPlugin(dir);
    expect(result).toMatchObject({ name: 'weather', version: '1.0.0', status: 'published', tarball: '-/weather-1.0.0.tgz', latest: '1.0.0', packument: 'weather' });
    expect((await readFile(join(registry, '-', 'weather-1.0.0.tgz'))).equals(packed.bytes)).toBe(true);

    const packument = packumentSchema.parse(JSON.parse(await readFile(join(registry, 'weather'), 'utf8')));
    const version = packument.versions['1.0.0']!;
    expect(version).toMatchObject({ name: 'weather', version: '1.0.0', description: 'Weather tools', keywords: ['forecast', 'mcp'], kernel: '^1.0.0', dependencies: { mcp: '^1.0.0' }, main: './index.ts' });
    expect(version.dist).toEqual({ tarball: '-/weather-1.0.0.tgz', integrity: `${packed.integrity} ${packed.sha256}`, shasum: packed.shasum, fileCount: packed.files.length, unpackedSize: packed.unpackedSize });
    expect(ssri.checkData(packed.bytes, version.dist.integrity)).toBeTruthy();
    expect(resolveTarballUrl('https://plugins.example/reg', version.dist.tarball).href).toBe('https://plugins.example/reg/-/weather-1.0.0.tgz');
    expect(packument['dist-tags']).toEqual({ latest: '1.0.0' });
    expect(packument.time).toEqual({ created: '2026-01-02T03:04:05.000Z', modified: '2026-01-02T03:04:05.000Z', '1.0.0': '2026-01-02T03:04:05.000Z' });

    const index = searchResponseSchema.parse(JSON.parse(await readFile(join(registry, REGISTRY_SEARCH_INDEX), 'utf8')));
    // `maintainers`: npm's own client reads it as a list (`npm search` against a static folder served as is).
    expect(index.objects.map((o) => o.package)).toEqual([{ name: 'weather', version: '1.0.0', description: 'Weather tools', keywords: ['forecast', 'mcp'], maintainers: [], date: '2026-01-02T03:04:05.000Z' }]);
    // Writes are atomic: no temporary file or lock is left behind.
    expect(await readdir(join(registry, '-'))).toEqual(['v1', 'weather-1.0.0.tgz']);
    expect(await readdir(registry)).toEqual(['-', 'weather']);
  });

  test('dist-tags.latest is the highest version that is not a prerelease; the index follows it', async () => {
    const registry = join(base, 'registry-2');
    for (const version of ['1.0.0', '2.0.0-beta.1', '1.1.0', '0.9.0']) await publishPlugin(registry, await plugin({ name: 'tagged', version, description: `tagged ${version}` }));
    const packument = packumentSchema.parse(JSON.parse(await readFile(join(registry, 'tagged'), 'utf8')));
    expect(packument['dist-tags'].latest).toBe('1.1.0');
    expect(Object.keys(packument.versions)).toEqual(['0.9.0', '1.0.0', '1.1.0', '2.0.0-beta.1']);
    const index = searchResponseSchema.parse(JSON.parse(await readFile(join(registry, REGISTRY_SEARCH_INDEX), 'utf8')));
    expect(index.objects.map((o) => [o.package.name, o.package.version, o.package.description])).toEqual([['tagged', '1.1.0', 'tagged 1.1.0']]);
  });

  test('a dist-tag points at a version, on publishing or afterwards; latest is not one to set', async () => {
    const registry = join(base, 'registry-tags');
    await publishPlugin(registry, await plugin({ name: 'tags', version: '1.0.0' }));
    const beta = await plugin({ name: 'tags', version: '2.0.0-beta.1' });
    expect((await publishPlugin(registry, beta, { tag: 'next' })).status).toBe('published');
    const read = async () => packumentSchema.parse(JSON.parse(await readFile(join(registry, 'tags'), 'utf8')))['dist-tags'];
    expect(await read()).toEqual({ latest: '1.0.0', next: '2.0.0-beta.1' });
    expect((await publishPlugin(registry, beta, { tag: 'beta' })).status).toBe('tagged');
    expect(await read()).toEqual({ latest: '1.0.0', next: '2.0.0-beta.1', beta: '2.0.0-beta.1' });
    expect((await publishPlugin(registry, beta, { tag: 'beta' })).status).toBe('unchanged');
    for (const tag of ['latest', '^1.0.0', '1.2.3', 'has space', '']) expect((await rejection(publishPlugin(registry, beta, { tag }))).code, tag).toBe('PLN_E_REGISTRY_TAG_INVALID');
  });

  test('the same version again: a no-op with the same bytes, refused with other bytes', async () => {
    const registry = join(base, 'registry-3');
    const dir = await plugin({ name: 'immutable' });
    await publishPlugin(registry, dir);
    const before = await readFile(join(registry, 'immutable'), 'utf8');
    expect((await publishPlugin(registry, dir)).status).toBe('unchanged');
    expect(await readFile(join(registry, 'immutable'), 'utf8')).toBe(before);

    const tarballBefore = await readFile(join(registry, '-', 'immutable-1.0.0.tgz'));
    await writeFile(join(dir, 'README.md'), '# changed\n');
    const error = await rejection(publishPlugin(registry, dir));
    expect(error.code).toBe('PLN_E_REGISTRY_VERSION_EXISTS');
    expect(await readFile(join(registry, 'immutable'), 'utf8')).toBe(before);
    expect((await readFile(join(registry, '-', 'immutable-1.0.0.tgz'))).equals(tarballBefore)).toBe(true);
  });

  test('a lost search index entry or tarball is restored by publishing the same tarball again', async () => {
    const registry = join(base, 'registry-4');
    const dir = await plugin({ name: 'repaired' });
    await publishPlugin(registry, dir);
    const tarball = await readFile(join(registry, '-', 'repaired-1.0.0.tgz'));
    await writeFile(join(registry, REGISTRY_SEARCH_INDEX), JSON.stringify({ objects: [], total: 0 }));
    await rm(join(registry, '-', 'repaired-1.0.0.tgz'));
    expect((await publishPlugin(registry, dir)).status).toBe('unchanged');
    expect((await readFile(join(registry, '-', 'repaired-1.0.0.tgz'))).equals(tarball)).toBe(true);
    const index = searchResponseSchema.parse(JSON.parse(await readFile(join(registry, REGISTRY_SEARCH_INDEX), 'utf8')));
    expect(index.objects.map((o) => o.package.name)).toEqual(['repaired']);
  });

  test('a scoped plugin is stored as @scope/name, its tarball under -/@scope/', async () => {
    const registry = join(base, 'registry-5');
    const result = await publishPlugin(registry, await plugin({ name: '@acme/tools', version: '3.1.4' }));
    expect(result.tarball).toBe('-/@acme/tools-3.1.4.tgz');
    expect(packumentSchema.parse(JSON.parse(await readFile(join(registry, '@acme', 'tools'), 'utf8'))).name).toBe('@acme/tools');
    await expect(readFile(join(registry, '-', '@acme', 'tools-3.1.4.tgz'))).resolves.toBeDefined();
  });

  test('a fixed publish time makes the whole folder reproducible', async () => {
    const now = new Date('2026-05-05T00:00:00Z');
    const dirs = [await plugin({ name: 'one' }), await plugin({ name: '@s/two', version: '0.1.0' })];
    const snapshot = async (folder: string) => {
      for (const dir of dirs) await publishPlugin(folder, dir, { now });
      const out = execFileSync('sh', ['-c', 'find . -type f | sort | xargs sha256sum'], { cwd: folder }).toString();
      return out;
    };
    expect(await snapshot(join(base, 'repro-a'))).toBe(await snapshot(join(base, 'repro-b')));
  });

  test('a base URL writes absolute tarball URLs', async () => {
    const registry = join(base, 'registry-6');
    await publishPlugin(registry, await plugin({ name: 'hosted' }), { baseUrl: 'https://cdn.example/plugins' });
    const packument = packumentSchema.parse(JSON.parse(await readFile(join(registry, 'hosted'), 'utf8')));
    expect(packument.versions['1.0.0']!.dist.tarball).toBe('https://cdn.example/plugins/-/hosted-1.0.0.tgz');
  });
});
