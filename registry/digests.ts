/**
 * The digests a registry lists for a tarball: `integrity` (sha512 SRI, what
 * npm clients verify), a sha256 SRI (the least plinth's installer accepts) and
 * `shasum` (sha1 hex, as npm's `dist` has always had it: for compatibility
 * only, never used to verify anything).
 */
import { createHash } from 'node:crypto';
import ssri from 'ssri';

export interface TarballDigests {
  /** `sha512-<base64>`. */
  readonly integrity: string;
  /** `sha256-<base64>`. */
  readonly sha256: string;
  /** sha1, hex. */
  readonly shasum: string;
}

export function tarballDigests(bytes: Uint8Array): TarballDigests {
  return {
    integrity: ssri.fromData(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { algorithms: ['sha512'] }).toString(),
    sha256: ssri.fromData(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { algorithms: ['sha256'] }).toString(),
    shasum: createHash('sha1').update(bytes).digest('hex'),
  };
}

/** The SRI string a packument lists: sha512 and sha256, strongest first. */
export function distIntegrity(digests: TarballDigests): string {
  return `${digests.integrity} ${digests.sha256}`;
}
