/**
 * Integrity of a downloaded plugin tarball, checked before a single byte of it
 * is extracted.
 *
 *   const expected = parseIntegrity(dist.integrity ?? shasumIntegrity(dist.shasum));  // before downloading
 *   const verified = await verifyFile(tarball, expected, { size });                     // after
 *
 * or, while downloading, `pipeline(body, integrityStream(expected, { size }), file)`, or
 * `integrityChecker(expected, { size })` fed each chunk as it is written and asked once it is all in.
 *
 * The metadata is read with ssri in strict mode: only sha256, sha384 and
 * sha512 count. md5 and sha1 digests are ignored (they never make a download
 * pass); metadata with nothing stronger is refused (`PLN_E_INTEGRITY_WEAK`).
 * Every strong digest given is checked, so metadata that disagrees with itself
 * fails; the result names the strongest. Anything unreadable in the metadata
 * is refused (`PLN_E_INTEGRITY_INVALID`) rather than skipped. Digests are not
 * secrets: errors show expected and actual.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import ssri from 'ssri';
import { PlinthError, safeLine } from 'plinth/sdk';

/** The algorithms a download may be verified with, weakest first. */
export const STRONG_ALGORITHMS = ['sha256', 'sha384', 'sha512'] as const;
export type StrongAlgorithm = (typeof STRONG_ALGORITHMS)[number];

/** Digest lengths in bytes: a digest of another length is garbage, not a mismatch. */
const DIGEST_BYTES: Readonly<Record<StrongAlgorithm, number>> = { sha256: 32, sha384: 48, sha512: 64 };
const WEAK_ALGORITHMS = new Set(['md5', 'sha1']);
const STEP = 'verify';

/** Metadata checked and ready: the strong digests to compare a download with. */
export interface ExpectedIntegrity {
  /** Per strong algorithm present, the accepted digests (base64, as in SRI). */
  readonly digests: ReadonlyMap<StrongAlgorithm, readonly string[]>;
  /** The strongest algorithm present: the one the result names. */
  readonly strongest: StrongAlgorithm;
  /** The strong part of the metadata, as an SRI string (what a lock file records). */
  readonly integrity: string;
}

/** What a successful check established. */
export interface Verified {
  /** The strongest algorithm checked (every strong one given was). */
  readonly algorithm: StrongAlgorithm;
  /** The SRI of the data in that algorithm, e.g. `sha512-…`. */
  readonly digest: string;
  /** Every strong algorithm checked, with the data's SRI. */
  readonly digests: Readonly<Partial<Record<StrongAlgorithm, string>>>;
  readonly size: number;
}

export interface VerifyOptions {
  /** The size the registry claims (`dist.unpackedSize` is not this: the tarball's own size), checked when given. */
  readonly size?: number | undefined;
  /** What to call the data in errors (a file path, a URL); the file path by default. */
  readonly subject?: string | undefined;
}

/**
 * The SRI form (`sha1-…`) of npm's hex `dist.shasum`, so that metadata with
 * only a shasum is refused as weak by {@link parseIntegrity}, saying so,
 * rather than as missing.
 */
export function shasumIntegrity(shasum: unknown): string | undefined {
  if (typeof shasum !== 'string' || !/^[0-9a-f]{40}$/i.test(shasum)) return undefined;
  return `sha1-${Buffer.from(shasum, 'hex').toString('base64')}`;
}

/**
 * Checks registry metadata before anything is downloaded: at least one
 * sha256, sha384 or sha512 digest, well formed; md5 and sha1 ignored beside
 * one, refused alone; any other token refused.
 */
export function parseIntegrity(metadata: unknown): ExpectedIntegrity {
  if (typeof metadata !== 'string' || metadata.trim() === '') {
    throw new PlinthError('PLN_E_INTEGRITY_INVALID', `${STEP}: the registry gave no integrity for the tarball (expected "sha512-…" or "sha256-…")`, {
      hint: 'the registry must publish dist.integrity with a sha256 or sha512 digest; ask its maintainer, or install from a registry that does',
      details: { step: STEP },
    });
  }
  const digests = new Map<StrongAlgorithm, string[]>();
  const weak: string[] = [];
  for (const token of metadata.trim().split(/\s+/)) {
    const algorithm = token.slice(0, Math.max(0, token.indexOf('-'))).toLowerCase();
    if (WEAK_ALGORITHMS.has(algorithm)) {
      weak.push(algorithm);
      continue;
    }
    const strong = strongHash(token);
    if (!strong) {
      throw new PlinthError('PLN_E_INTEGRITY_INVALID', `${STEP}: the tarball's integrity metadata is not a valid SRI hash: "${safeLine(token.slice(0, 120))}"`, {
        hint: 'the registry must publish dist.integrity as "sha512-<base64>" (or sha256/sha384); ask its maintainer to fix the packument',
        details: { step: STEP, token: safeLine(token.slice(0, 120)) },
      });
    }
    const list = digests.get(strong.algorithm) ?? [];
    list.push(strong.digest);
    digests.set(strong.algorithm, list);
  }
  const strongest = [...STRONG_ALGORITHMS].reverse().find((algorithm) => digests.has(algorithm));
  if (!strongest) {
    const names = [...new Set(weak)].join(' and ');
    throw new PlinthError('PLN_E_INTEGRITY_WEAK', `${STEP}: the registry gives only a ${names} digest for the tarball; ${names} can be forged, so plinth does not trust it`, {
      hint: 'the registry must publish dist.integrity with sha256 or sha512 (npm and Verdaccio do); republish the plugin with a current packer, or use another registry',
      details: { step: STEP, algorithms: [...new Set(weak)] },
    });
  }
  const integrity = STRONG_ALGORITHMS.filter((a) => digests.has(a))
    .reverse()
    .flatMap((a) => digests.get(a)!.map((d) => `${a}-${d}`))
    .join(' ');
  return { digests, strongest, integrity };
}

/** One token as a strong hash, or undefined: ssri strict parsing, then the digest's length. */
function strongHash(token: string): { algorithm: StrongAlgorithm; digest: string } | undefined {
  const parsed = ssri.parse(token, { strict: true, single: true });
  if (!parsed) return undefined;
  const algorithm = STRONG_ALGORITHMS.find((a) => a === parsed.algorithm);
  if (!algorithm || Buffer.from(parsed.digest, 'base64').length !== DIGEST_BYTES[algorithm]) return undefined;
  return { algorithm, digest: parsed.digest };
}

/** Hashes bytes in every strong algorithm the metadata names, counting them. */
class Digester {
  readonly #hashes: Array<[StrongAlgorithm, Hash]>;
  size = 0;

  constructor(readonly expected: ExpectedIntegrity) {
    this.#hashes = [...expected.digests.keys()].map((algorithm) => [algorithm, createHash(algorithm)]);
  }

  update(chunk: Buffer): void {
    this.size += chunk.length;
    for (const [, hash] of this.#hashes) hash.update(chunk);
  }

  /** The verdict: size first (a truncated download says so), then every digest. */
  finish(subject: string, size: number | undefined): Verified {
    if (size !== undefined) checkSize(subject, this.size, size, true);
    const actual: Partial<Record<StrongAlgorithm, string>> = {};
    for (const [algorithm, hash] of this.#hashes) actual[algorithm] = hash.digest('base64');
    // Strongest first, so that a wrong sha512 beside a right sha256 is reported on the sha512.
    for (const algorithm of [...STRONG_ALGORITHMS].reverse()) {
      const accepted = this.expected.digests.get(algorithm);
      if (!accepted || accepted.includes(actual[algorithm]!)) continue;
      const expected = accepted.map((d) => `${algorithm}-${d}`).join(' or ');
      const got = `${algorithm}-${actual[algorithm]}`;
      throw new PlinthError('PLN_E_INTEGRITY_MISMATCH', `${STEP}: ${subject} does not match the registry's ${algorithm} digest: expected ${expected}, got ${got}`, {
        hint: 'the download was corrupted or tampered with, or the registry changed the tarball after publishing it; nothing was installed; retry, and if it fails again report it to the registry',
        details: { step: STEP, algorithm, expected: accepted.map((d) => `${algorithm}-${d}`), actual: got, size: this.size },
      });
    }
    const { strongest } = this.expected;
    const digests = Object.fromEntries(Object.entries(actual).map(([a, d]) => [a, `${a}-${d}`])) as Partial<Record<StrongAlgorithm, string>>;
    return { algorithm: strongest, digest: digests[strongest]!, digests, size: this.size };
  }
}

/** `final`: the whole data is in; otherwise only "too many bytes" is known yet. */
function checkSize(subject: string, actual: number, expected: number, final: boolean): void {
  if (actual === expected || (!final && actual < expected)) return;
  const what = actual < expected ? 'is truncated' : 'is larger than the registry says';
  throw new PlinthError('PLN_E_INTEGRITY_SIZE', `${STEP}: ${subject} ${what}: expected ${expected} bytes, got ${final ? actual : `more than ${expected}`}`, {
    hint: 'the download was cut short or altered; nothing was installed; retry, and if it fails again report it to the registry',
    details: { step: STEP, expected, actual },
  });
}

/** Metadata as the registry gave it (anything: it is checked), or already checked by {@link parseIntegrity}. */
export type IntegrityInput = string | ExpectedIntegrity | undefined;

function expectedOf(integrity: IntegrityInput): ExpectedIntegrity {
  const checked = typeof integrity === 'object' && integrity !== null && integrity.digests instanceof Map;
  return checked ? integrity : parseIntegrity(integrity);
}

/** Verifies a downloaded file against the registry's integrity (and size, when known). */
export async function verifyFile(file: string, integrity: IntegrityInput, options: VerifyOptions = {}): Promise<Verified> {
  const digester = new Digester(expectedOf(integrity));
  const subject = options.subject ?? file;
  await pipeline(createReadStream(file), async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) {
      digester.update(chunk);
      if (options.size !== undefined) checkSize(subject, digester.size, options.size, false);
    }
  });
  return digester.finish(subject, options.size);
}

/** Verifies bytes as they are read elsewhere (a download written to its file): every chunk through `update`, then `finish`. */
export interface IntegrityChecker {
  update(chunk: Buffer): void;
  /** The verdict once every byte is in (size first, then every strong digest); throws as `verifyFile` does. */
  finish(): Verified;
}

/**
 * Verifies while downloading, without reading the file again: the metadata is
 * checked at once (weak or garbage metadata is refused before a byte is
 * downloaded), and `finish` is the same verdict `verifyFile` gives, to be had
 * before a byte is extracted.
 */
export function integrityChecker(integrity: IntegrityInput, options: VerifyOptions = {}): IntegrityChecker {
  const digester = new Digester(expectedOf(integrity));
  const subject = options.subject ?? 'the download';
  return { update: (chunk) => digester.update(chunk), finish: () => digester.finish(subject, options.size) };
}

/** A pass-through stream that verifies what flows through it; its result once it has ended. */
export interface IntegrityStream extends Transform {
  /** Set when the stream has ended and everything matched. */
  readonly verified: Verified | undefined;
}

/**
 * Verifies while downloading: bytes pass through unchanged; the stream fails
 * (`PLN_E_INTEGRITY_SIZE`) as soon as more bytes than `size` arrive, and at
 * its end when a digest does not match, so `pipeline(body, stream, file)`
 * rejects and the file can be thrown away.
 */
export function integrityStream(integrity: IntegrityInput, options: VerifyOptions = {}): IntegrityStream {
  const digester = new Digester(expectedOf(integrity));
  const subject = options.subject ?? 'the download';
  let verified: Verified | undefined;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        digester.update(chunk);
        if (options.size !== undefined) checkSize(subject, digester.size, options.size, false);
        callback(null, chunk);
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        verified = digester.finish(subject, options.size);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
  return Object.defineProperty(stream, 'verified', { get: () => verified }) as IntegrityStream;
}
