/**
 * Integrity of a downloaded tarball (`plugins/marketplace/verify.ts`): real
 * files in a temp folder, digests computed here with node:crypto, metadata
 * written as registries write it (`dist.integrity`, `dist.shasum`).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { integrityChecker, integrityStream, parseIntegrity, shasumIntegrity, verifyFile } from '../plugins/marketplace/verify.js';
import { rejection } from './support/errors.js';

let dir: string;
let file: string;
const DATA = Buffer.from('a plugin tarball, or close enough\n'.repeat(1000));

const sri = (algorithm: string, data: Buffer = DATA) => `${algorithm}-${createHash(algorithm).update(data).digest('base64')}`;
const wrong = (algorithm: string) => sri(algorithm, Buffer.from('something else'));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'plinth-verify-'));
  file = join(dir, 'download.tgz');
  writeFileSync(file, DATA);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('verifyFile', () => {
  test('a matching sha512 passes and names it', async () => {
    await expect(verifyFile(file, sri('sha512'), { size: DATA.length })).resolves.toMatchObject({ algorithm: 'sha512', digest: sri('sha512'), size: DATA.length });
  });

  test('sha256 alone is enough', async () => {
    await expect(verifyFile(file, sri('sha256'))).resolves.toMatchObject({ algorithm: 'sha256', digest: sri('sha256') });
  });

  test('a wrong hash: expected and actual in the error', async () => {
    const error = await rejection(verifyFile(file, wrong('sha512')));
    expect(error.code).toBe('PLN_E_INTEGRITY_MISMATCH');
    expect(error.details).toMatchObject({ step: 'verify', algorithm: 'sha512', expected: [wrong('sha512')], actual: sri('sha512') });
  });

  test('sha1-only metadata (an npm shasum) is refused as weak, before anything is read', async () => {
    const shasum = createHash('sha1').update(DATA).digest('hex');
    const error = await rejection(verifyFile(join(dir, 'never-read'), shasumIntegrity(shasum)!));
    expect(error.code).toBe('PLN_E_INTEGRITY_WEAK');
    expect(error.details?.algorithms).toEqual(['sha1']);
  });

  test('md5-only metadata is refused as weak, even when it matches', async () => {
    expect((await rejection(verifyFile(file, sri('md5')))).code).toBe('PLN_E_INTEGRITY_WEAK');
  });

  test('a wrong strong hash beside a right weak one fails on the strong one', async () => {
    const error = await rejection(verifyFile(file, `${wrong('sha512')} ${sri('sha1')} ${sri('md5')}`));
    expect(error.code).toBe('PLN_E_INTEGRITY_MISMATCH');
    expect(error.details?.algorithm).toBe('sha512');
  });

  test('a right strong hash beside a wrong weak one passes: weak digests are not evidence either way', async () => {
    await expect(verifyFile(file, `${sri('sha512')} ${wrong('sha1')}`)).resolves.toMatchObject({ algorithm: 'sha512' });
  });

  test('size mismatch: larger than claimed, and smaller', async () => {
    const larger = await rejection(verifyFile(file, sri('sha512'), { size: DATA.length - 1 }));
    expect(larger.code).toBe('PLN_E_INTEGRITY_SIZE');
    const smaller = await rejection(verifyFile(file, sri('sha512'), { size: DATA.length + 1 }));
    expect(smaller.code).toBe('PLN_E_INTEGRITY_SIZE');
    expect(smaller.details).toMatchObject({ expected: DATA.length + 1, actual: DATA.length });
  });

  test('a truncated download: a size error when the size is known, a mismatch when not', async () => {
    const cut = join(dir, 'cut.tgz');
    writeFileSync(cut, DATA);
    truncateSync(cut, 1000);
    expect((await rejection(verifyFile(cut, sri('sha512'), { size: DATA.length }))).code).toBe('PLN_E_INTEGRITY_SIZE');
    expect((await rejection(verifyFile(cut, sri('sha512')))).code).toBe('PLN_E_INTEGRITY_MISMATCH');
  });

  test.each([
    ['nothing', undefined],
    ['an empty string', '  '],
    ['not SRI at all', 'garbage'],
    ['an unknown algorithm', 'sha3-abcd'],
    ['bad base64', 'sha512-!!!!'],
    ['a digest of the wrong length', `sha512-${Buffer.alloc(32).toString('base64')}`],
    ['hex where base64 belongs', `sha256-${createHash('sha256').update(DATA).digest('hex')}`],
    ['a good hash followed by garbage', `${sri('sha512')} <script>`],
    ['a number', 42],
  ])('garbage metadata: %s', async (_what, metadata) => {
    const error = await rejection(verifyFile(file, metadata as string));
    expect(error.code).toBe('PLN_E_INTEGRITY_INVALID');
  });

  test('control characters in garbage metadata are shown escaped', async () => {
    const error = await rejection(verifyFile(file, 'sha512-\u001b[31mred'));
    expect(error.code).toBe('PLN_E_INTEGRITY_INVALID');
    expect(error.message).not.toContain('\u001b');
  });

  test('several strong hashes: the strongest is named, and every one given is checked', async () => {
    const all = `${sri('sha256')} ${sri('sha512')} ${sri('sha384')}`;
    await expect(verifyFile(file, all)).resolves.toMatchObject({ algorithm: 'sha512', digest: sri('sha512'), digests: { sha256: sri('sha256'), sha384: sri('sha384') } });
    // The strongest wrong: refused on it.
    const strongWrong = await rejection(verifyFile(file, `${sri('sha256')} ${wrong('sha512')}`));
    expect(strongWrong.details?.algorithm).toBe('sha512');
    // A weaker strong one wrong: metadata that disagrees with itself is refused too.
    const weakerWrong = await rejection(verifyFile(file, `${wrong('sha256')} ${sri('sha512')}`));
    expect(weakerWrong.code).toBe('PLN_E_INTEGRITY_MISMATCH');
    expect(weakerWrong.details?.algorithm).toBe('sha256');
  });

  test('two digests of the same algorithm: either may match (as SRI allows)', async () => {
    await expect(verifyFile(file, `${wrong('sha512')} ${sri('sha512')}`)).resolves.toMatchObject({ algorithm: 'sha512' });
  });
});

describe('parseIntegrity', () => {
  test('keeps only the strong part, strongest first: what a lock file records', () => {
    const parsed = parseIntegrity(`${sri('sha1')} ${sri('sha256')} ${sri('sha512')}`);
    expect(parsed.strongest).toBe('sha512');
    expect(parsed.integrity).toBe(`${sri('sha512')} ${sri('sha256')}`);
  });

  test('shasumIntegrity turns an npm shasum into SRI, and ignores anything else', () => {
    expect(shasumIntegrity(createHash('sha1').update(DATA).digest('hex'))).toBe(sri('sha1'));
    expect(shasumIntegrity('not hex')).toBeUndefined();
    expect(shasumIntegrity(undefined)).toBeUndefined();
  });
});

describe('integrityStream, while downloading', () => {
  test('passes the bytes through and verifies them', async () => {
    const out = join(dir, 'streamed.tgz');
    const check = integrityStream(sri('sha512'), { size: DATA.length });
    await pipeline(createReadStream(file), check, createWriteStream(out));
    expect(check.verified).toMatchObject({ algorithm: 'sha512', size: DATA.length });
  });

  test('a tarball swapped for another: the pipeline fails at the end, and nothing is verified', async () => {
    const other = join(dir, 'swapped.tgz');
    writeFileSync(other, Buffer.from('a different tarball with the same length'.padEnd(DATA.length, '!')));
    const check = integrityStream(sri('sha512'), { size: DATA.length });
    const error = await rejection(pipeline(createReadStream(other), check, createWriteStream(join(dir, 'out.tgz'))));
    expect(error.code).toBe('PLN_E_INTEGRITY_MISMATCH');
    expect(check.verified).toBeUndefined();
  });

  test('more bytes than the size claimed: stops as soon as they arrive', async () => {
    let passed = 0;
    const check = integrityStream(sri('sha512'), { size: 100 });
    const error = await rejection(
      pipeline(createReadStream(file, { highWaterMark: 64 }), check, async (chunks: AsyncIterable<Buffer>) => {
        for await (const chunk of chunks) passed += chunk.length;
      }),
    );
    expect(error.code).toBe('PLN_E_INTEGRITY_SIZE');
    expect(passed).toBeLessThanOrEqual(100);
  });

  test('weak metadata is refused when the stream is made, before a byte is downloaded', () => {
    expect(() => integrityStream(sri('sha1'))).toThrow(expect.objectContaining({ code: 'PLN_E_INTEGRITY_WEAK' }));
  });
});

describe('integrityChecker, fed the chunks of a download as they are written', () => {
  const chunks = (data: Buffer, size = 1000) => Array.from({ length: Math.ceil(data.length / size) }, (_, i) => data.subarray(i * size, (i + 1) * size));

  test('gives the verdict verifyFile gives for the same bytes', async () => {
    const check = integrityChecker(`${sri('sha256')} ${sri('sha512')}`, { size: DATA.length, subject: file });
    for (const chunk of chunks(DATA)) check.update(chunk);
    expect(check.finish()).toEqual(await verifyFile(file, `${sri('sha256')} ${sri('sha512')}`, { size: DATA.length }));
  });

  test('other bytes of the same length fail with the digest, fewer bytes with the size', () => {
    const swapped = integrityChecker(sri('sha512'), { size: DATA.length });
    for (const chunk of chunks(Buffer.alloc(DATA.length, 1))) swapped.update(chunk);
    expect(() => swapped.finish()).toThrow(expect.objectContaining({ code: 'PLN_E_INTEGRITY_MISMATCH' }));
    const cut = integrityChecker(sri('sha512'), { size: DATA.length });
    cut.update(DATA.subarray(0, 100));
    expect(() => cut.finish()).toThrow(expect.objectContaining({ code: 'PLN_E_INTEGRITY_SIZE' }));
  });

  test('weak or garbage metadata is refused when it is made, before a byte is downloaded', () => {
    expect(() => integrityChecker(sri('md5'))).toThrow(expect.objectContaining({ code: 'PLN_E_INTEGRITY_WEAK' }));
    expect(() => integrityChecker('sha512-not base64!')).toThrow(expect.objectContaining({ code: 'PLN_E_INTEGRITY_INVALID' }));
  });
});

describe('parseIntegrity takes a token exactly when ssri\'s strict parse does and the digest has its algorithm\'s length', () => {
  const sha512 = createHash('sha512').update('x').digest('base64');
  const sha256 = createHash('sha256').update('x').digest('base64');
  const sha384 = createHash('sha384').update('x').digest('base64');
  const tokens = [
    `sha512-${sha512}`,
    `sha256-${sha256}`,
    `sha384-${sha384}`,
    `sha512-${sha512}?opt`,
    `sha512-${sha512}?a?b`,
    `sha512-${sha512}?`,
    `sha512-${sha512}?bad option`,
    `SHA512-${sha512}`,
    `sha512-${sha512.slice(0, 40)}`,
    `sha512-${sha512.replace(/=+$/, '')}`,
    `sha512-${sha256}`,
    `sha256-${sha512}`,
    `sha512-${sha512.replace('+', '-')}`,
    `sha512_${sha512}`,
    `sha3-${sha512}`,
    `sha512-${'='.repeat(88)}`,
    `sha512-${sha512}${sha512}`,
  ];
  test.each(tokens)('%s', async (token) => {
    const { default: ssri } = await import('ssri');
    const parsed = ssri.parse(token, { strict: true, single: true });
    const lengths: Record<string, number> = { sha256: 32, sha384: 48, sha512: 64 };
    const expected = parsed && parsed.algorithm in lengths && Buffer.from(parsed.digest, 'base64').length === lengths[parsed.algorithm] ? `${parsed.algorithm}-${parsed.digest}` : undefined;
    let ours: string | undefined;
    try {
      ours = parseIntegrity(token).integrity;
    } catch (error) {
      expect((error as { code?: string }).code).toBe('PLN_E_INTEGRITY_INVALID');
    }
    expect(ours).toBe(expected);
  });
});
