/**
 * Registry signatures as npm's registry makes them: each version's
 * `dist.signatures` holds `{ keyid, sig }`, an ECDSA P-256 / SHA-256
 * signature (DER, base64) over `<name>@<version>:<dist.integrity>`, and the
 * registry lists its public keys at `/-/npm/v1/keys` (`keyid` is
 * `SHA256:<base64 of the SHA-256 of the key's SPKI DER>`), which is what
 * `npm audit signatures` checks installed packages against.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { PlinthError } from '../sdk/errors.js';
import type { DistSignature } from '../sdk/contracts/registry.js';

/** A key a publisher signs with. */
export interface SigningKey {
  readonly privateKey: KeyObject;
  readonly keyid: string;
  /** The public key's SPKI DER, base64: the `key` of the keys document. */
  readonly publicKey: string;
}

/** One entry of `/-/npm/v1/keys`. */
export interface RegistryKey {
  readonly expires: string | null;
  readonly keyid: string;
  readonly keytype: 'ecdsa-sha2-nistp256';
  readonly scheme: 'ecdsa-sha2-nistp256';
  readonly key: string;
}

/**
 * Reads a PEM private key (an EC key on P-256, as `openssl ecparam -name prime256v1 -genkey` makes).
 *
 * @throws PlinthError `PLN_E_REGISTRY_SIGN_KEY` when it cannot be read or is not such a key.
 */
export async function readSigningKey(file: string): Promise<SigningKey> {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(await readFile(file));
  } catch (cause) {
    throw signKeyError(`${file} is not a readable PEM private key`, file, cause);
  }
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw signKeyError(`${file} is not an ECDSA P-256 key (npm's registry signatures use one)`, file);
  }
  return signingKey(privateKey);
}

/** The signing key of a private key object. */
export function signingKey(privateKey: KeyObject): SigningKey {
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  return { privateKey, keyid: `SHA256:${createHash('sha256').update(spki).digest('base64').replace(/=+$/, '')}`, publicKey: spki.toString('base64') };
}

/** The signature of one version. */
export function signVersion(key: SigningKey, name: string, version: string, integrity: string): DistSignature {
  return { keyid: key.keyid, sig: sign('sha256', Buffer.from(`${name}@${version}:${integrity}`), key.privateKey).toString('base64') };
}

/** The keys document with `key` in it (once). */
export function withKey(keys: readonly RegistryKey[], key: SigningKey): RegistryKey[] {
  if (keys.some((k) => k.keyid === key.keyid)) return [...keys];
  return [...keys, { expires: null, keyid: key.keyid, keytype: 'ecdsa-sha2-nistp256', scheme: 'ecdsa-sha2-nistp256', key: key.publicKey }];
}

function signKeyError(message: string, file: string, cause?: unknown): PlinthError {
  return new PlinthError('PLN_E_REGISTRY_SIGN_KEY', message, {
    ...(cause !== undefined && { cause }),
    hint: 'make one with `openssl ecparam -name prime256v1 -genkey -noout -out registry-key.pem` and keep it secret',
    details: { file },
  });
}
