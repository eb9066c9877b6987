/**
 * The red team against `extractSafely`: hostile plugin tarballs, built here
 * with python3's `tarfile` (which writes whatever header it is told to), each
 * refused with `PLN_E_TARBALL_UNSAFE` naming the entry, with nothing written
 * outside the staging folder (the folder around it, with a victim file in it,
 * is the same before and after) and the staging folder gone. Then the
 * tarballs a real publisher makes (`npm pack`, node's `tar`) extract.
 *
 * Runs as root in CI, which is what makes the owner cases bite: as root, tar
 * would chown extracted files to the uid in the header.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as tar from 'tar';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { DEFAULT_EXTRACT_LIMITS, type ExtractLimits, extractSafely } from '../plugins/marketplace/extract.js';
import { rejection } from './support/errors.js';
import { offlineNpmEnv, shell } from './support/npm.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;

/** Writes the tarball a JSON spec describes: entries as given (any type, mode, owner, PAX header), then optional damage. */
const BUILDER = String.raw`
import sys, json, tarfile, io, zlib
spec = json.load(sys.stdin)
FORMATS = {'pax': tarfile.PAX_FORMAT, 'gnu': tarfile.GNU_FORMAT, 'ustar': tarfile.USTAR_FORMAT}
TYPES = {'file': tarfile.REGTYPE, 'dir': tarfile.DIRTYPE, 'symlink': tarfile.SYMTYPE, 'link': tarfile.LNKTYPE,
         'fifo': tarfile.FIFOTYPE, 'chr': tarfile.CHRTYPE, 'blk': tarfile.BLKTYPE, 'contiguous': tarfile.CONTTYPE}
fmt = FORMATS[spec.get('format', 'pax')]
dest = open(sys.argv[1], 'wb')
inner = io.BytesIO() if spec.get('gzipTwice') else dest
gz = None if spec.get('noGzip') else zlib.compressobj(spec.get('level', 6), zlib.DEFLATED, 31)

class Sink:
    """Raw tar bytes in, gzipped bytes out, as they come: a bomb is never held in memory."""
    def __init__(self): self.n = 0
    def write(self, b):
        self.n += len(b)
        inner.write(gz.compress(b) if gz else b)
        return len(b)
    def tell(self): return self.n

class Zeros:
    def __init__(self, n): self.left = n
    def read(self, n=-1):
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return b'\0' * n

sink = Sink()
archive = tarfile.open(fileobj=sink, mode='w', format=fmt)
ended_early = False
for e in spec['entries']:
    info = tarfile.TarInfo(e['name'])
    info.type = e['typeflag'].encode() if 'typeflag' in e else TYPES[e.get('type', 'file')]
    info.mode = int(e.get('mode', '755' if info.type == tarfile.DIRTYPE else '644'), 8)
    info.uid = e.get('uid', 0)
    info.gid = e.get('gid', 0)
    info.uname = info.gname = ''
    info.mtime = 1700000000
    if 'linkname' in e: info.linkname = e['linkname']
    if 'pax' in e: info.pax_headers = e['pax']
    if info.type in (tarfile.CHRTYPE, tarfile.BLKTYPE): info.devmajor, info.devminor = 1, 3
    data = None
    if 'data' in e:
        body = e['data'].encode()
        info.size, data = len(body), io.BytesIO(body)
    elif 'zeros' in e:
        info.size, data = e['zeros'], Zeros(e['zeros'])
    if 'declaredSize' in e:
        # A header promising more than follows: the archive ends inside this body.
        info.size = e['declaredSize']
        sink.write(info.tobuf(fmt, 'utf-8', 'surrogateescape'))
        sink.write(b'\0' * e.get('bodyBytes', 0))
        ended_early = True
        break
    archive.addfile(info, data)
if not ended_early:
    archive.close()
left = spec.get('trailingZeros', 0)
while left > 0:
    sink.write(b'\0' * min(left, 1 << 20))
    left -= min(left, 1 << 20)
if gz: inner.write(gz.flush())
if spec.get('gzipTwice'):
    outer = zlib.compressobj(6, zlib.DEFLATED, 31)
    dest.write(outer.compress(inner.getvalue()) + outer.flush())
dest.close()
if 'truncateTo' in spec:
    with open(sys.argv[1], 'r+b') as f: f.truncate(spec['truncateTo'])
`;

interface EntrySpec {
  name: string;
  type?: 'file' | 'dir' | 'symlink' | 'link' | 'fifo' | 'chr' | 'blk' | 'contiguous';
  /** A raw tar type flag, for types tar does not know. */
  typeflag?: string;
  data?: string;
  zeros?: number;
  /** A header claiming this size, followed by only `bodyBytes` of body: the archive ends there. */
  declaredSize?: number;
  bodyBytes?: number;
  linkname?: string;
  /** Octal, e.g. "4755". */
  mode?: string;
  uid?: number;
  gid?: number;
  pax?: Record<string, string>;
}

interface TarSpec {
  entries: EntrySpec[];
  format?: 'pax' | 'gnu' | 'ustar';
  level?: number;
  trailingZeros?: number;
  gzipTwice?: boolean;
  noGzip?: boolean;
  truncateTo?: number;
}

let base: string;
let builder: string;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'plinth-redteam-'));
  builder = join(base, 'build-tarball.py');
  writeFileSync(builder, BUILDER);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function buildTarball(file: string, spec: TarSpec): Promise<void> {
  const child = run('python3', [builder, file], { maxBuffer: MiB });
  child.child.stdin!.end(JSON.stringify(spec));
  await child;
}

/** A sound plugin: what every hostile tarball wraps its one bad entry in, so that the bad entry is the only reason to refuse. */
const MANIFEST = JSON.stringify({ name: 'red-team', version: '1.0.0', kernel: '^1.0.0', main: './index.ts' });
const SOUND: EntrySpec[] = [
  { name: 'package/', type: 'dir' },
  { name: 'package/manifest.json', data: MANIFEST },
  { name: 'package/index.ts', data: 'export default {};\n' },
];

/** Every path under `dir` with what it is and holds: what must not change. */
function snapshot(dir: string, skip: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (path === skip) continue;
      const info = lstatSync(path);
      const what = info.isSymbolicLink()
        ? `link → ${readlinkSync(path)}`
        : info.isDirectory()
          ? 'dir'
          : info.isFile()
            ? `file ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
            : 'other';
      out[path.slice(dir.length)] = `${what} mode ${(info.mode & 0o7777).toString(8)} uid ${info.uid} gid ${info.gid}`;
      if (info.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return out;
}

/** A fresh sentinel folder per case: a victim file, an empty victim folder, and the staging folder with the tarball in it. */
interface Scene {
  parent: string;
  victim: string;
  staging: string;
  tarball: string;
}
let scene: Scene;
let counter = 0;

beforeEach(() => {
  const parent = join(base, `case-${++counter}`);
  mkdirSync(join(parent, 'victim-dir'), { recursive: true });
  const victim = join(parent, 'victim.txt');
  writeFileSync(victim, 'original\n');
  scene = { parent, victim, staging: join(parent, 'staging'), tarball: join(parent, 'staging', 'download.tgz') };
});

/**
 * Builds the tarball in a new staging folder, extracts it, and returns the
 * error after checking the aftermath: the sentinel folder unchanged (victim
 * included), the staging folder gone.
 */
async function refused(spec: TarSpec, limits: Partial<ExtractLimits> = {}) {
  const before = snapshot(scene.parent, scene.staging);
  mkdirSync(scene.staging);
  await buildTarball(scene.tarball, spec);
  const error = await rejection(extractSafely(scene.tarball, scene.staging, limits));
  expect(snapshot(scene.parent, scene.staging)).toEqual(before);
  expect(readFileSync(scene.victim, 'utf8')).toBe('original\n');
  expect(readdirSync(scene.parent).sort()).toEqual(['victim-dir', 'victim.txt']);
  return error;
}

/** Refused as unsafe, for this entry. */
async function expectUnsafe(entries: EntrySpec[], entry: string, options: Omit<TarSpec, 'entries'> & { limits?: Partial<ExtractLimits> } = {}) {
  const { limits, ...spec } = options;
  const error = await refused({ ...spec, entries }, limits);
  expect(error.code).toBe('PLN_E_TARBALL_UNSAFE');
  expect(error.details?.entry).toBe(entry);
  return error;
}

describe('the sound wrapper', () => {
  test('alone, extracts: every refusal below is the hostile entry\'s doing', async () => {
    mkdirSync(scene.staging);
    await buildTarball(scene.tarball, { entries: SOUND });
    const result = await extractSafely(scene.tarball, scene.staging);
    expect(result).toMatchObject({ dir: join(scene.staging, 'package'), files: 2, manifest: { name: 'red-team', version: '1.0.0' } });
  });
});

describe('a bad entry found late', () => {
  /** Names created in the staging folder while `extract` runs (inotify: events queue up, none is lost). */
  async function createdDuring(extract: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    const watcher = watch(scene.staging, (_event, name) => name && seen.push(String(name)));
    try {
      await extract().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      watcher.close();
    }
    return seen;
  }

  test('refuses the tarball once the files before it are written, and leaves no trace of them', async () => {
    // One pass: the files before the bad entry are written (the watcher sees them), then removed with the staging folder.
    const files = Array.from({ length: 50 }, (_, i) => ({ name: `package/lib/f${i}.js`, data: 'x'.repeat(10_000) }));
    const entries = [...SOUND, ...files, { name: 'package/last', type: 'symlink' as const, linkname: '/' }];
    const before = snapshot(scene.parent, scene.staging);
    mkdirSync(scene.staging);
    await buildTarball(scene.tarball, { entries });
    let error: unknown;
    expect(await createdDuring(() => extractSafely(scene.tarball, scene.staging).catch((e: unknown) => (error = e)))).toContain('package');
    expect((error as { code?: string }).code).toBe('PLN_E_TARBALL_UNSAFE');
    expect((error as { details?: { entry?: string } }).details?.entry).toBe('package/last');
    expect(snapshot(scene.parent, scene.staging)).toEqual(before);
    expect(readdirSync(scene.parent).sort()).toEqual(['victim-dir', 'victim.txt']);
  });
});

describe('paths', () => {
  test('".." traversal, at the start and inside package/', async () => {
    await expectUnsafe([...SOUND, { name: '../victim.txt', data: 'owned' }], '../victim.txt');
    await expectUnsafe([...SOUND, { name: 'package/../../victim.txt', data: 'owned' }], 'package/../../victim.txt');
  });

  test('absolute paths are refused, not rebased into staging', async () => {
    const target = join(scene.parent, 'victim.txt');
    await expectUnsafe([...SOUND, { name: target, data: 'owned' }], target);
    // A path tar would strip to "package/x" under staging: still refused.
    await expectUnsafe([...SOUND, { name: '/package/x', data: 'x' }], '/package/x');
  });

  test('a PAX path with ".." behind a harmless ustar name', async () => {
    await expectUnsafe([...SOUND, { name: 'package/harmless.txt', pax: { path: 'package/../../victim.txt' }, data: 'owned' }], 'package/../../victim.txt');
  });

  test('a PAX long name with ".."', async () => {
    const name = `package/${'a'.repeat(120)}/../../../victim.txt`;
    await expectUnsafe([...SOUND, { name, data: 'owned' }], name, { format: 'pax' });
  });

  test('a GNU long name with ".."', async () => {
    const name = `package/${'a'.repeat(120)}/../../../victim.txt`;
    await expectUnsafe([...SOUND, { name, data: 'owned' }], name, { format: 'gnu' });
  });

  test('Windows-style paths: backslashes, drive-relative and drive-absolute', async () => {
    await expectUnsafe([...SOUND, { name: 'package\\..\\..\\victim.txt', data: 'owned' }], 'package\\..\\..\\victim.txt');
    await expectUnsafe([...SOUND, { name: 'C:victim.txt', data: 'owned' }], 'C:victim.txt');
    await expectUnsafe([...SOUND, { name: 'C:\\victim.txt', data: 'owned' }], 'C:\\victim.txt');
    await expectUnsafe([...SOUND, { name: 'package/C:victim.txt', data: 'owned' }], 'package/C:victim.txt');
  });

  test('names with control characters (shown escaped in the error)', async () => {
    const error = await expectUnsafe([...SOUND, { name: 'package/evil\u001b[2J.txt', data: 'x' }], 'package/evil\\x1b[2J.txt');
    expect(error.message).not.toContain('\u001b');
    await expectUnsafe([...SOUND, { name: 'package/new\nline.txt', data: 'x' }], 'package/new\\x0aline.txt');
    await expectUnsafe([...SOUND, { name: 'package/\u202eexe.txt', data: 'x' }], 'package/\\u202eexe.txt');
  });

  test('entries outside package/', async () => {
    await expectUnsafe([...SOUND, { name: 'other/file.txt', data: 'x' }], 'other/file.txt');
    await expectUnsafe([{ name: 'manifest.json', data: MANIFEST }, ...SOUND], 'manifest.json');
    await expectUnsafe([{ name: 'package', data: 'a file named package' }], 'package');
    await expectUnsafe([...SOUND, { name: './package/x.txt', data: 'x' }], './package/x.txt');
  });

  test('nesting beyond the depth limit', async () => {
    const deep = `package/${Array.from({ length: DEFAULT_EXTRACT_LIMITS.maxDepth + 1 }, () => 'd').join('/')}`;
    await expectUnsafe([...SOUND, { name: deep, data: 'x' }], deep);
    // At the limit, the same tarball extracts.
    const atLimit = `package/${Array.from({ length: DEFAULT_EXTRACT_LIMITS.maxDepth }, () => 'd').join('/')}`;
    rmSync(scene.staging, { recursive: true, force: true });
    mkdirSync(scene.staging);
    await buildTarball(scene.tarball, { entries: [...SOUND, { name: atLimit, data: 'x' }] });
    await expect(extractSafely(scene.tarball, scene.staging)).resolves.toMatchObject({ files: 3 });
  });

  test('a name longer than a file system allows, or a path far longer than a plugin needs: refused as unsafe, not failed as a disk error', async () => {
    const long = `package/${'n'.repeat(300)}.js`;
    const error = await expectUnsafe([...SOUND, { name: long, data: 'x' }], `${long.slice(0, 300)}…`, { format: 'pax' });
    expect(error.details?.reason).toContain('303 bytes');
    // Multi-byte letters count in bytes: 100 × "é" is 200 bytes, fine; 130 × "é" is 260.
    await expectUnsafe([...SOUND, { name: `package/${'é'.repeat(130)}`, data: 'x' }], `package/${'é'.repeat(130)}`, { format: 'pax' });
    const wide = `package/${Array.from({ length: 12 }, () => 'w'.repeat(200)).join('/')}/x`;
    await expectUnsafe([...SOUND, { name: wide, data: 'x' }], `${wide.slice(0, 300)}…`, { format: 'pax' });
    rmSync(scene.staging, { recursive: true, force: true });
    mkdirSync(scene.staging);
    await buildTarball(scene.tarball, { entries: [...SOUND, { name: `package/${'é'.repeat(100)}`, data: 'x' }, { name: `package/${'n'.repeat(255)}`, data: 'x' }], format: 'pax' });
    await expect(extractSafely(scene.tarball, scene.staging)).resolves.toMatchObject({ files: 4 });
  });

  test('duplicate entries, also differing only in case', async () => {
    await expectUnsafe([...SOUND, { name: 'package/a.txt', data: '1' }, { name: 'package/a.txt', data: '2' }], 'package/a.txt');
    await expectUnsafe([...SOUND, { name: 'package/a.txt', data: '1' }, { name: 'package/A.txt', data: '2' }], 'package/A.txt');
    await expectUnsafe([...SOUND, { name: 'package/lib', data: 'a file' }, { name: 'package/lib/x.js', data: 'x' }], 'package/lib/x.js');
  });
});

describe('links', () => {
  test('a symlink out of the folder, and a file written through it', async () => {
    await expectUnsafe([...SOUND, { name: 'package/out', type: 'symlink', linkname: scene.parent }, { name: 'package/out/victim.txt', data: 'owned' }], 'package/out');
    await expectUnsafe([...SOUND, { name: 'package/up', type: 'symlink', linkname: '../..' }, { name: 'package/up/victim.txt', data: 'owned' }], 'package/up');
  });

  test('a symlink that stays inside is refused too: a plugin needs none', async () => {
    await expectUnsafe([...SOUND, { name: 'package/alias.ts', type: 'symlink', linkname: 'index.ts' }], 'package/alias.ts');
  });

  test('a hardlink to a file outside, and a file written through it', async () => {
    await expectUnsafe([...SOUND, { name: 'package/hard', type: 'link', linkname: scene.victim }, { name: 'package/hard', data: 'owned' }], 'package/hard');
    await expectUnsafe([...SOUND, { name: 'package/hard', type: 'link', linkname: '../victim.txt' }], 'package/hard');
  });

  test('a file replaced by a link', async () => {
    await expectUnsafe([...SOUND, { name: 'package/a.txt', data: 'x' }, { name: 'package/a.txt', type: 'symlink', linkname: scene.victim }, { name: 'package/a.txt', data: 'owned' }], 'package/a.txt');
  });

  test('a folder replaced by a link', async () => {
    await expectUnsafe(
      [...SOUND, { name: 'package/lib/', type: 'dir' }, { name: 'package/lib', type: 'symlink', linkname: join(scene.parent, 'victim-dir') }, { name: 'package/lib/planted.txt', data: 'owned' }],
      'package/lib',
    );
  });
});

describe('special files, modes and owners', () => {
  test('a FIFO, a character device, a block device', async () => {
    await expectUnsafe([...SOUND, { name: 'package/fifo', type: 'fifo' }], 'package/fifo');
    await expectUnsafe([...SOUND, { name: 'package/null', type: 'chr' }], 'package/null');
    await expectUnsafe([...SOUND, { name: 'package/disk', type: 'blk' }], 'package/disk');
  });

  test('entry types tar skips on its own (unknown, contiguous) are refused, not skipped', async () => {
    await expectUnsafe([...SOUND, { name: 'package/odd', typeflag: 'Q', data: 'x' }], 'package/odd');
    await expectUnsafe([...SOUND, { name: 'package/cont', type: 'contiguous', data: 'x' }], 'package/cont');
  });

  test('setuid, setgid and sticky modes', async () => {
    await expectUnsafe([...SOUND, { name: 'package/run', data: '#!/bin/sh\n', mode: '4755' }], 'package/run');
    await expectUnsafe([...SOUND, { name: 'package/run', data: '#!/bin/sh\n', mode: '2755' }], 'package/run');
    await expectUnsafe([...SOUND, { name: 'package/tmp/', type: 'dir', mode: '1777' }], 'package/tmp/');
  });

  test('foreign uid or gid (as root, tar would chown to them)', async () => {
    const foreign = 4242;
    expect([process.getuid?.(), process.getgid?.()]).not.toContain(foreign);
    await expectUnsafe([...SOUND, { name: 'package/theirs.txt', data: 'x', uid: foreign }], 'package/theirs.txt');
    await expectUnsafe([...SOUND, { name: 'package/theirs.txt', data: 'x', gid: foreign }], 'package/theirs.txt');
    await expectUnsafe([...SOUND, { name: 'package/theirs/', type: 'dir', uid: foreign, gid: foreign }], 'package/theirs/');
  });

  test('owner 0, as npm pack and plinth write it, is accepted and the files are the installer\'s', async () => {
    mkdirSync(scene.staging);
    await buildTarball(scene.tarball, { entries: [...SOUND, { name: 'package/ours.txt', data: 'x', uid: 0, gid: 0 }] });
    const { dir } = await extractSafely(scene.tarball, scene.staging);
    expect(lstatSync(join(dir, 'ours.txt')).uid).toBe(process.getuid?.());
  });

  test('modes are written never writable by group or others, always usable by the owner, whatever the umask', async () => {
    mkdirSync(scene.staging);
    await buildTarball(scene.tarball, { entries: [...SOUND, { name: 'package/open/', type: 'dir', mode: '777' }, { name: 'package/open/run.sh', data: 'x', mode: '777' }, { name: 'package/open/data.txt', data: 'x', mode: '666' }, { name: 'package/open/locked.txt', data: 'x', mode: '000' }] });
    const previous = process.umask(0);
    try {
      const { dir } = await extractSafely(scene.tarball, scene.staging);
      expect([lstatSync(join(dir, 'open')), lstatSync(join(dir, 'open', 'run.sh')), lstatSync(join(dir, 'open', 'data.txt')), lstatSync(join(dir, 'open', 'locked.txt'))].map((s) => (s.mode & 0o777).toString(8))).toEqual(['755', '755', '644', '600']);
    } finally {
      process.umask(previous);
    }
  });
});

describe('size: bombs and limits', () => {
  test('a file whose header claims more than one file may hold: refused at the header, before its body is read', async () => {
    // 4 GiB promised, none of it present: refused as unsafe, not as truncated.
    await expectUnsafe([...SOUND, { name: 'package/huge.bin', declaredSize: 4 * 1024 * MiB, bodyBytes: 4096 }], 'package/huge.bin');
  });

  test('a classic gzip bomb (ratio over 1000) in many files: the total-size cap', async () => {
    const entries = [...SOUND, ...Array.from({ length: 6 }, (_, i) => ({ name: `package/zeros-${i}.bin`, zeros: MiB }))];
    await expectUnsafe(entries, 'package/zeros-3.bin', { level: 9, limits: { maxTotalBytes: 4 * MiB } });
  });

  test('a bomb just under tar\'s own ratio limit, which tar accepts: the default total cap catches it', async () => {
    // Three files of 50 MiB of zeros at gzip level 1 (ratio ≈ 230, far below tar's 1000): 150 MiB in all.
    const entries = [...SOUND, ...[0, 1, 2].map((i) => ({ name: `package/zeros-${i}.bin`, zeros: 50 * MiB }))];
    const before = snapshot(scene.parent, scene.staging);
    mkdirSync(scene.staging);
    await buildTarball(scene.tarball, { entries, level: 1 });
    const compressed = lstatSync(scene.tarball).size;
    expect((150 * MiB) / compressed).toBeLessThan(1000);
    let listed = 0;
    await tar.t({ file: scene.tarball, onReadEntry: () => listed++ }); // tar's own limits: no complaint
    expect(listed).toBe(entries.length);
    const error = await rejection(extractSafely(scene.tarball, scene.staging));
    expect(error.code).toBe('PLN_E_TARBALL_UNSAFE');
    expect(error.details?.entry).toBe('package/zeros-2.bin');
    expect(snapshot(scene.parent, scene.staging)).toEqual(before);
    expect(readdirSync(scene.parent)).not.toContain('staging');
  });

  test('a bomb hidden in padding after the end of the archive: the archive-size cap', async () => {
    await expectUnsafe(SOUND, '(the archive)', { level: 9, trailingZeros: 32 * MiB, limits: { maxArchiveBytes: 8 * MiB } });
  });

  test('one file over the single-file limit', async () => {
    await expectUnsafe([...SOUND, { name: 'package/big.bin', zeros: 2 * MiB }], 'package/big.bin', { limits: { maxFileBytes: MiB } });
  });

  test('more entries than allowed', async () => {
    const entries = [...SOUND, ...Array.from({ length: 20 }, (_, i) => ({ name: `package/f${i}.txt`, data: String(i) }))];
    await expectUnsafe(entries, 'package/f7.txt', { limits: { maxEntries: 10 } });
  });

  test('a tarball compressed twice (tar would gunzip the inner one past our counters)', async () => {
    await expectUnsafe(SOUND, '(the archive)', { gzipTwice: true });
  });
});

describe('the manifest inside', () => {
  const withManifest = (manifest: Record<string, unknown>): EntrySpec[] => [
    { name: 'package/', type: 'dir' },
    { name: 'package/manifest.json', data: JSON.stringify({ name: 'red-team', version: '1.0.0', kernel: '^1.0.0', ...manifest }) },
    { name: 'package/index.ts', data: 'export default {};\n' },
  ];

  test('main outside the plugin, relative or absolute', async () => {
    await expectUnsafe(withManifest({ main: '../../victim.ts' }), 'package/manifest.json');
    await expectUnsafe(withManifest({ main: join(scene.parent, 'victim.ts') }), 'package/manifest.json');
  });

  test('a hook script outside the plugin, by argument or by cwd', async () => {
    const error = await expectUnsafe(withManifest({ hooks: { before_tool: [{ name: 'h', command: 'node', args: ['../outside.js'] }] } }), 'package/manifest.json');
    expect(error.details?.reason).toContain('hooks.before_tool[0].args[0]');
    await expectUnsafe(withManifest({ hooks: { before_tool: [{ name: 'h', command: 'node', args: ['hook.js'], cwd: '..' }] } }), 'package/manifest.json');
    await expectUnsafe(withManifest({ hooks: { session_start: [{ name: 'h', command: './../../bin/evil' }] } }), 'package/manifest.json');
  });

  test('an MCP server script outside the plugin', async () => {
    await expectUnsafe(withManifest({ mcpServers: { files: { command: 'node', args: [join(scene.parent, 'server.js')] } } }), 'package/manifest.json');
  });

  test('paths inside the plugin, bare programs, flags and URLs are fine', async () => {
    mkdirSync(scene.staging);
    const manifest = {
      main: './index.ts',
      hooks: { before_tool: [{ name: 'h', command: 'node', args: ['--no-warnings', 'hooks/check.js', 'https://example.test/x'], cwd: './hooks/..' }] },
      mcpServers: { files: { command: 'node', args: ['./server/main.js'] }, remote: { url: 'http://127.0.0.1:1/mcp' } },
    };
    await buildTarball(scene.tarball, { entries: withManifest(manifest) });
    await expect(extractSafely(scene.tarball, scene.staging)).resolves.toMatchObject({ manifest: { main: './index.ts' } });
  });

  test('no manifest, or an invalid one', async () => {
    expect((await refused({ entries: [{ name: 'package/index.ts', data: 'x' }] })).code).toBe('PLN_E_TARBALL_INVALID');
    expect((await refused({ entries: withManifest({ version: 'one' }) })).code).toBe('PLN_E_MANIFEST_INVALID');
    expect((await refused({ entries: [{ name: 'package/manifest.json', data: '{ nope' }] })).code).toBe('PLN_E_TARBALL_INVALID');
  });

  test('a well-formed npm package without a plugin manifest is said not to be a plugin, not to be damaged', async () => {
    const error = await refused({ entries: [{ name: 'package/package.json', data: JSON.stringify({ name: 'left-pad', version: '1.3.0', main: 'index.js' }) }, { name: 'package/index.js', data: 'module.exports = 1;\n' }] });
    expect(error.code).toBe('PLN_E_TARBALL_NOT_PLUGIN');
    expect(error.details?.package).toBe('left-pad@1.3.0');
    expect(error.hint).not.toMatch(/retry|damaged/);
  });
});

describe('damaged archives', () => {
  test('not gzipped, truncated, empty: invalid, and no trace', async () => {
    expect((await refused({ entries: SOUND, noGzip: true })).code).toBe('PLN_E_TARBALL_INVALID');
    expect((await refused({ entries: [...SOUND, { name: 'package/big.txt', data: 'y'.repeat(100_000) }], truncateTo: 200 })).code).toBe('PLN_E_TARBALL_INVALID');
    expect((await refused({ entries: [] })).code).toBe('PLN_E_TARBALL_INVALID');
  });
});

describe('the tarball file itself', () => {
  test('a FIFO or a symlink where the tarball should be: invalid, without blocking, and no trace', async () => {
    const before = snapshot(scene.parent, scene.staging);
    mkdirSync(scene.staging);
    await run('mkfifo', [scene.tarball]);
    expect((await rejection(extractSafely(scene.tarball, scene.staging))).code).toBe('PLN_E_TARBALL_INVALID');
    mkdirSync(scene.staging);
    symlinkSync(scene.victim, scene.tarball);
    expect((await rejection(extractSafely(scene.tarball, scene.staging))).code).toBe('PLN_E_TARBALL_INVALID');
    expect(snapshot(scene.parent, scene.staging)).toEqual(before);
    expect(readdirSync(scene.parent)).not.toContain('staging');
  });
});

describe('the staging folder', () => {
  test('a staging folder that is a symlink is refused and left alone, its target too', async () => {
    const target = join(scene.parent, 'victim-dir');
    symlinkSync(target, scene.staging);
    const error = await rejection(extractSafely(scene.victim, scene.staging));
    expect(error.code).toBe('PLN_E_STAGING_INVALID');
    expect(lstatSync(scene.staging).isSymbolicLink()).toBe(true);
    expect(readdirSync(target)).toEqual([]);
  });

  test('a staging folder that already holds a package/ is refused and left alone', async () => {
    mkdirSync(join(scene.staging, 'package'), { recursive: true });
    const error = await rejection(extractSafely(scene.victim, scene.staging));
    expect(error.code).toBe('PLN_E_STAGING_INVALID');
    expect(readdirSync(scene.staging)).toEqual(['package']);
  });
});

describe('tarballs real publishers make', () => {
  /** A plugin folder with nested files and a name long enough to need a PAX header. */
  function pluginFolder(): string {
    const dir = join(scene.parent, 'plugin-src');
    const long = `${'l'.repeat(150)}.md`;
    mkdirSync(join(dir, 'lib', 'deep'), { recursive: true });
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ name: 'packed-plugin', version: '2.1.0', kernel: '^1.0.0', main: './index.ts', hooks: { before_tool: [{ name: 'check', command: 'node', args: ['lib/check.js'] }] } }));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'packed-plugin', version: '2.1.0' }));
    writeFileSync(join(dir, 'index.ts'), 'export default {};\n');
    writeFileSync(join(dir, 'lib', 'check.js'), 'process.exit(0);\n');
    writeFileSync(join(dir, 'lib', 'deep', long), 'long name\n');
    return dir;
  }

  test('npm pack', async () => {
    const src = pluginFolder();
    mkdirSync(scene.staging);
    const result = await shell(`npm pack --pack-destination ${JSON.stringify(scene.staging)} --silent`, src, await offlineNpmEnv(join(scene.parent, 'npm')));
    expect(result.code, result.stderr).toBe(0);
    const tarball = join(scene.staging, result.stdout.trim().split('\n').pop()!);
    const extracted = await extractSafely(tarball, scene.staging);
    expect(extracted).toMatchObject({ dir: join(scene.staging, 'package'), files: 5, manifest: { name: 'packed-plugin', version: '2.1.0' } });
    expect(readFileSync(join(extracted.dir, 'lib', 'deep', `${'l'.repeat(150)}.md`), 'utf8')).toBe('long name\n');
  });

  test('node tar, with folder entries and the packer\'s own uid and gid', async () => {
    const src = pluginFolder();
    mkdirSync(scene.staging);
    // Not portable: the headers carry this process's uid and gid, and folders come as entries of their own.
    await tar.c({ gzip: true, file: scene.tarball, cwd: src, prefix: 'package', portable: false }, readdirSync(src));
    const extracted = await extractSafely(scene.tarball, scene.staging);
    expect(extracted).toMatchObject({ files: 5, bytes: expect.any(Number), manifest: { name: 'packed-plugin' } });
    expect(lstatSync(join(extracted.dir, 'lib', 'check.js')).isFile()).toBe(true);
  });
});
