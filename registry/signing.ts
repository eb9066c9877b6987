/**
 * A registry's signing keys. `plinth registry keygen` makes an ed25519 pair;
 * an ECDSA P-256 key (what npm's registry signs with, e.g. from `openssl
 * ecparam -name prime256v1 -genkey`) signs too. Each version's
 * `dist.signatures` holds `{ keyid, sig }` over `<name>@<version>:<integrity>`
 * (npm's message), and the public keys are listed at `/-/npm/v1/keys`
 * (`keyid` is `SHA256:<base64 of the SHA-256 of the key's SPKI DER>`). The
 * same key signs the registry's index, revocations and rotations
 * (internal/registry/trust.ts).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { PlinthError } from '../sdk/errors.js';
import { writeFileAtomic } from '../sdk/files.js';
import type { DistSignature } from '../internal/registry/packument.js';
import { keyidOf, versionMessage } from '../internal/registry/signatures.js';
import { canonicalJson } from '../internal/registry/trust.js';

/** A key a publisher signs with. */
export interface SigningKey {
  readonly privateKey: KeyObject;
  readonly keyid: string;
  /** The public key's SPKI DER, base64: the `key` of the keys document. */
  readonly publicKey: string;
  readonly keytype: 'ed25519' | 'ecdsa-sha2-nistp256';
}

/** One entry of `/-/npm/v1/keys`. */
export interface RegistryKey {
  readonly expires: string | null;
  readonly keyid: string;
  readonly keytype: string;
  readonly scheme: string;
  readonly key: string;
}

/**
 * Reads a PEM private key: ed25519, or ECDSA P-256.
 *
 * @throws PlinthError `PLN_E_REGISTRY_SIGN_KEY` when it cannot be read or is neither.
 */
export async function readSigningKey(file: string): Promise<SigningKey> {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(await readFile(file));
  } catch (cause) {
    throw signKeyError(`${file} is not a readable PEM private key`, file, cause);
  }
  const ec = privateKey.asymmetricKeyType === 'ec' && privateKey.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  if (privateKey.asymmetricKeyType !== 'ed25519' && !ec) throw signKeyError(`${file} is neither an ed25519 nor an ECDSA P-256 key`, file);
  return signingKey(privateKey);
}

/** The signing key of a private key object. */
export function signingKey(privateKey: KeyObject): SigningKey {
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  return { privateKey, keyid: keyidOf(spki), publicKey: spki.toString('base64'), keytype: privateKey.asymmetricKeyType === 'ed25519' ? 'ed25519' : 'ecdsa-sha2-nistp256' };
}

/** Signs bytes: ed25519 as is, ECDSA over SHA-256 (DER). */
export function signBytes(key: SigningKey, message: string): string {
  return sign(key.keytype === 'ed25519' ? null : 'sha256', Buffer.from(message), key.privateKey).toString('base64');
}

/** The signature of one version. */
export function signVersion(key: SigningKey, name: string, version: string, integrity: string): DistSignature {
  return { keyid: key.keyid, sig: signBytes(key, versionMessage(name, version, integrity)) };
}

/** A signed document: `{ signed, signatures: [{ keyid, sig }] }` over the canonical JSON of `signed`. */
export function signDocument<T>(key: SigningKey, signed: T): { signed: T; signatures: DistSignature[] } {
  return { signed, signatures: [{ keyid: key.keyid, sig: signBytes(key, canonicalJson(signed)) }] };
}

/** The keys document entry of a key. */
export function keyEntry(key: SigningKey): RegistryKey {
  return { expires: null, keyid: key.keyid, keytype: key.keytype, scheme: key.keytype, key: key.publicKey };
}

/** The keys document with `key` in it (once). */
export function withKey(keys: readonly RegistryKey[], key: SigningKey): RegistryKey[] {
  if (keys.some((k) => k.keyid === key.keyid)) return [...keys];
  return [...keys, keyEntry(key)];
}

/**
 * `plinth registry keygen`: a new ed25519 pair, the private key written
 * 0600 (refused when the file exists: a key is never overwritten), the
 * public key next to it as `<file>.pub`.
 *
 * @throws PlinthError `PLN_E_REGISTRY_SIGN_KEY` when `file` exists.
 */
export async function generateSigningKey(file: string): Promise<SigningKey & { file: string; publicFile: string }> {
  const exists = await readFile(file).then(() => true, () => false);
  if (exists) {
    throw new PlinthError('PLN_E_REGISTRY_SIGN_KEY', `${file} exists: a signing key is never overwritten`, { hint: 'choose another file name, or remove the old key yourself if it is no longer used', details: { file } });
  }
  const { privateKey } = generateKeyPairSync('ed25519');
  const key = signingKey(privateKey);
  await writeFileAtomic(file, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), { mode: 0o600 });
  const publicFile = `${file}.pub`;
  await writeFileAtomic(publicFile, createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(), { mode: 0o644 });
  return { ...key, file, publicFile };
}

function signKeyError(message: string, file: string, cause?: unknown): PlinthError {
  return new PlinthError('PLN_E_REGISTRY_SIGN_KEY', message, {
    ...(cause !== undefined && { cause }),
    hint: 'make one with `plinth registry keygen <file>` (ed25519) and keep it secret',
    details: { file },
  });
}
