/**
 * What `extractSafely` records as it writes (`Extracted.tree`) is what
 * `hashTree` reads back from the folder, also once the folder is renamed
 * into place as an install does (a rename keeps every file's inode, so its
 * size, mtime and ctime); the modes it writes; the order of entries it
 * accepts; and an install's lock file, which records that tree.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { extractSafely } from '../plugins/marketplace/extract.js';
import { TreeWriter } from '../plugins/marketplace/tree-writer.js';
import { packPlugin } from '../registry/pack.js';
import { type LockFile } from '../sdk/index.js';
import { hashTree } from '../internal/registry/installed-tree.js';
import { createTestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { servedRegistry } from './support/market.js';
import { offlineNpmEnv, shell } from './support/npm.js';

let base: string;
let counter = 0;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'plinth-extract-tree-'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A fresh case folder with an empty staging folder in it. */
function scene(): { parent: string; staging: string } {
  const parent = join(base, `case-${++counter}`);
  const staging = join(parent, 'staging');
  mkdirSync(staging, { recursive: true });
  return { parent, staging };
}

/** A plugin folder: nested folders, an empty file, an executable, a name long enough for a PAX header, and `extra`. */
function pluginFolder(parent: string, extra: Record<string, Buffer | string> = {}): string {
  const dir = join(parent, 'plugin-src');
  mkdirSync(join(dir, 'lib', 'deep', 'deeper'), { recursive: true });
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ name: 'tree-plugin', version: '1.2.3', kernel: '^1.0.0', main: './index.js' }));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'tree-plugin', version: '1.2.3' }));
  writeFileSync(join(dir, 'index.js'), 'export default {};\n');
  writeFileSync(join(dir, 'lib', 'empty.txt'), '');
  writeFileSync(join(dir, 'lib', 'run.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(dir, 'lib', 'run.sh'), 0o755);
  writeFileSync(join(dir, 'lib', 'deep', 'deeper', `${'n'.repeat(140)}.md`), 'a long name\n');
  for (const [path, content] of Object.entries(extra)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** Moves the extracted `package` folder elsewhere on the same disk, as an install moves it into `plugins/.versions/`. */
function moved(dir: string, parent: string): string {
  const target = join(parent, 'versions', 'tree-plugin@1.2.3');
  mkdirSync(join(parent, 'versions'), { recursive: true });
  renameSync(dir, target);
  return target;
}

describe('the tree extraction records', () => {
  test('a plinth-packed tarball: what hashTree reads from the folder moved into place', async () => {
    const { parent, staging } = scene();
    const packed = await packPlugin(pluginFolder(parent));
    const tarball = join(staging, packed.fileName);
    writeFileSync(tarball, packed.bytes);
    const extracted = await extractSafely(tarball, staging);
    expect(Object.keys(extracted.tree.files).sort()).toEqual([...packed.files].sort());
    expect(extracted.tree.files['lib/empty.txt']).toMatchObject({ size: 0, sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' });
    expect(extracted).toMatchObject({ files: packed.files.length, bytes: packed.unpackedSize });
    expect(await hashTree(extracted.dir)).toEqual(extracted.tree);
    // Renamed into place: every file keeps its size, mtime and ctime, so the record stands as written.
    expect(await hashTree(moved(extracted.dir, parent))).toEqual(extracted.tree);
  });

  test('an npm-packed tarball, the same', async () => {
    const { parent, staging } = scene();
    const src = pluginFolder(parent);
    const result = await shell(`npm pack --pack-destination ${JSON.stringify(staging)} --silent`, src, await offlineNpmEnv(join(parent, 'npm')));
    expect(result.code, result.stderr).toBe(0);
    const extracted = await extractSafely(join(staging, result.stdout.trim().split('\n').pop()!), staging);
    expect(Object.keys(extracted.tree.files)).toContain('lib/deep/deeper/' + `${'n'.repeat(140)}.md`);
    expect(await hashTree(moved(extracted.dir, parent))).toEqual(extracted.tree);
  });

  test('many files and files larger than what may wait to be written (backpressure), the same', async () => {
    const { parent, staging } = scene();
    const extra: Record<string, Buffer> = {};
    for (let i = 0; i < 60; i++) extra[`assets/small/${i % 7}/part-${i}.bin`] = randomBytes(1 + ((i * 7919) % 40_000));
    for (let i = 0; i < 3; i++) extra[`assets/large-${i}.bin`] = randomBytes(5 * 1024 * 1024 + i);
    const packed = await packPlugin(pluginFolder(parent, extra));
    const tarball = join(staging, packed.fileName);
    writeFileSync(tarball, packed.bytes);
    const extracted = await extractSafely(tarball, staging);
    expect(extracted.files).toBe(packed.files.length);
    expect(readFileSync(join(extracted.dir, 'assets', 'large-2.bin')).equals(extra['assets/large-2.bin']!)).toBe(true);
    expect(await hashTree(extracted.dir)).toEqual(extracted.tree);
  }, 60_000);
});

describe('modes and order', () => {
  test('files and folders get their normalised modes; the umask may only tighten them', async () => {
    const { parent, staging } = scene();
    const tarball = join(staging, 'modes.tgz');
    const src = pluginFolder(parent);
    chmodSync(join(src, 'lib', 'deep'), 0o777);
    chmodSync(join(src, 'index.js'), 0o666);
    // Not portable: folders come as entries of their own, with their modes.
    await tar.c({ gzip: true, file: tarball, cwd: src, prefix: 'package', portable: false }, readdirSync(src));
    const previous = process.umask(0o077);
    try {
      const { dir, tree } = await extractSafely(tarball, staging);
      const mode = (path: string) => (lstatSync(join(dir, path)).mode & 0o7777).toString(8);
      expect([mode('lib/deep'), mode('lib/run.sh'), mode('index.js'), mode('lib/empty.txt')]).toEqual(['700', '700', '600', '600']);
      expect(await hashTree(dir)).toEqual(tree);
    } finally {
      process.umask(previous);
    }
  });

  test('a folder entry after the files in it: the folder gets its own mode, the files stay', async () => {
    const { parent, staging } = scene();
    const src = pluginFolder(parent);
    chmodSync(join(src, 'lib'), 0o750);
    const tarball = join(staging, 'late-folder.tgz');
    // Entries in this order: the files of lib/ (which imply the folder), then lib/ itself.
    const files = ['manifest.json', 'index.js', 'lib/empty.txt', 'lib/run.sh', 'lib/deep/deeper/' + `${'n'.repeat(140)}.md`];
    await tar.c({ gzip: true, file: tarball, cwd: src, prefix: 'package', portable: true, noDirRecurse: true }, [...files, 'lib']);
    const listed: string[] = [];
    await tar.t({ file: tarball, onReadEntry: (entry) => void listed.push(entry.path) });
    expect(listed.at(-1)).toBe('package/lib/');
    const previous = process.umask(0o022);
    try {
      const { dir, tree } = await extractSafely(tarball, staging);
      expect((lstatSync(join(dir, 'lib')).mode & 0o777).toString(8)).toBe('750');
      expect((lstatSync(join(dir, 'lib', 'deep')).mode & 0o777).toString(8)).toBe('755');
      expect(Object.keys(tree.files).sort()).toEqual(files.sort());
      expect(await hashTree(dir)).toEqual(tree);
    } finally {
      process.umask(previous);
    }
  });

  test('a duplicate entry far behind the first, once writing is under way: refused, and no trace', async () => {
    const { parent, staging } = scene();
    const src = pluginFolder(parent, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`assets/f${i}.bin`, randomBytes(20_000)])));
    const tarball = join(parent, 'duplicate.tar.gz');
    const names = ['manifest.json', 'index.js', ...readdirSync(join(src, 'assets')).map((name) => `assets/${name}`)];
    await tar.c({ gzip: true, file: tarball, cwd: src, prefix: 'package', portable: true, noDirRecurse: true }, [...names, 'assets/f3.bin']);
    const error = await rejection(extractSafely(tarball, staging));
    expect(error.code).toBe('PLN_E_TARBALL_UNSAFE');
    expect(error.details?.entry).toBe('package/assets/f3.bin');
    expect(readdirSync(parent).sort()).toEqual(['duplicate.tar.gz', 'plugin-src']);
  });
});

describe('an install', () => {
  test('records the tree its extraction wrote: what hashTree reads in plugins/.versions', async () => {
    const { server } = await servedRegistry(base, [{ name: 'treed', version: '1.0.0', files: { 'lib/a.js': 'export {};\n', 'lib/deep/b.txt': 'b\n', 'empty.txt': '' } }]);
    closers.push(() => server.close());
    const kernel = await createTestKernel({ builtin: true, settings: { registries: [{ name: 'local', url: server.url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } } });
    closers.push(() => kernel.dispose());
    await (await kernel.get('marketplace')).install('treed', { yes: true });
    const lock = JSON.parse(readFileSync(join(kernel.home, 'plugins.lock.json'), 'utf8')) as LockFile;
    const recorded = lock.plugins.treed!.tree!;
    expect(Object.keys(recorded.files).sort()).toEqual(['empty.txt', 'index.ts', 'lib/a.js', 'lib/deep/b.txt', 'manifest.json']);
    expect(await hashTree(join(kernel.home, 'plugins', '.versions', 'treed@1.0.0'))).toEqual(recorded);
  });
});

describe('the writer', () => {
  test('takes no more than its cap of bodies ahead of the disk: the entry being read is paused, and the parser with it', async () => {
    const { parent, staging } = scene();
    const src = pluginFolder(parent, { 'assets/a.bin': randomBytes(3 * 1024 * 1024), 'assets/b.bin': randomBytes(3 * 1024 * 1024) });
    const file = join(parent, 'raw.tar');
    await tar.c({ file, cwd: src, prefix: 'package', portable: true }, readdirSync(src));
    const cap = 16 * 1024;
    const slice = 64 * 1024;
    const writer = new TreeWriter(staging, { parallel: 2, maxBufferedBytes: cap });
    const parser = new tar.Parser();
    let taken = Promise.resolve();
    parser.on('entry', (entry: tar.ReadEntry) => {
      taken = taken.then(() => writer.accept(entry, entry.type === 'Directory' ? 0o755 : 0o644));
    });
    const closed = new Promise((done) => parser.on('close', done));
    const raw = readFileSync(file);
    let most = 0;
    let held = 0;
    // Without backpressure every write would return true and the whole archive would be taken at once.
    for (let at = 0; at < raw.length; at += slice) {
      if (!parser.write(raw.subarray(at, at + slice))) {
        held++;
        await new Promise((done) => parser.once('drain', done));
      }
      most = Math.max(most, writer.bufferedBytes);
    }
    parser.end();
    await closed;
    await taken;
    const { tree } = await writer.finish();
    expect(held).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(cap + slice);
    expect(await hashTree(join(staging, 'package'))).toEqual(tree);
  }, 60_000);
});
