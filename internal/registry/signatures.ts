/**
 * Checking `dist.signatures` as npm does: the registry's public keys (the
 * document at `/-/npm/v1/keys`) and, per version, a signature over
 * `<name>@<version>:<dist.integrity>`: ECDSA P-256 / SHA-256 (DER, base64) as
 * npm's registry signs, or ed25519 as `plinth registry publish --sign` does.
 * A key's `keyid` is `SHA256:<base64 of the SHA-256 of its SPKI DER>`, so a
 * pinned keyid pins the key itself: a listed key whose bytes do not hash to
 * its keyid is never used.
 */
import { createHash, createPublicKey, type KeyObject, verify } from 'node:crypto';
import { z } from 'zod';
import type { Dist } from './packument.js';

/** npm's path of a registry's keys document. */
export const REGISTRY_KEYS_PATH = '-/npm/v1/keys';

/** The keys document: `{ keys: [{ keyid, key (SPKI DER, base64), keytype, scheme, expires }] }`. */
export const registryKeysSchema = z.looseObject({
  keys: z.array(z.looseObject({ keyid: z.string().min(1), key: z.string().min(1), keytype: z.string().optional(), scheme: z.string().optional(), expires: z.string().nullable().optional() })),
});

export type RegistryKeys = z.infer<typeof registryKeysSchema>;
export type RegistryKeyEntry = RegistryKeys['keys'][number];

/** The keyid of a public key: `SHA256:` and the unpadded base64 of the SHA-256 of its SPKI DER. */
export function keyidOf(spkiDer: Buffer): string {
  return `SHA256:${createHash('sha256').update(spkiDer).digest('base64').replace(/=+$/, '')}`;
}

/**
 * The public key of a keys-document entry, or undefined when its bytes are
 * not an ed25519 or P-256 SPKI key, or do not hash to its keyid.
 */
export function publicKeyOf(entry: Pick<RegistryKeyEntry, 'keyid' | 'key'>): KeyObject | undefined {
  let der: Buffer;
  let key: KeyObject;
  try {
    der = Buffer.from(entry.key, 'base64');
    key = createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
  if (keyidOf(der) !== entry.keyid.replace(/=+$/, '')) return undefined;
  const ok = key.asymmetricKeyType === 'ed25519' || (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1');
  return ok ? key : undefined;
}

/** Whether `sig` (base64) is `key`'s signature of `message`: ed25519, or ECDSA P-256 over SHA-256. */
export function verifySignature(key: KeyObject, message: string | Buffer, sig: string): boolean {
  try {
    return verify(key.asymmetricKeyType === 'ed25519' ? null : 'sha256', Buffer.isBuffer(message) ? message : Buffer.from(message), key, Buffer.from(sig, 'base64'));
  } catch {
    return false;
  }
}

/** What npm's registry signs for a version. */
export function versionMessage(name: string, version: string, integrity: string): string {
  return `${name}@${version}:${integrity}`;
}

/** A signature verdict; `keyid` is the key that verified it. */
export type SignatureVerdict = { readonly verdict: 'verified'; readonly keyid: string; readonly sig: string } | { readonly verdict: 'unsigned' | 'unknown-key' | 'invalid'; readonly keyids: readonly string[] };

/**
 * What a version's signatures say, given the keys trusted for its registry
 * (keyid → key): `verified` (one by a trusted key checks out), `unsigned`
 * (none at all), `unknown-key` (signed only by keys not trusted) or `invalid`
 * (a trusted key's signature does not match: the name, version or integrity
 * were changed after signing). `keyids`: the keys the signatures name.
 */
export function checkVersionSignatures(trusted: ReadonlyMap<string, KeyObject>, name: string, version: string, dist: Pick<Dist, 'integrity' | 'signatures'>): SignatureVerdict {
  const signatures = dist.signatures ?? [];
  const keyids = signatures.map((s) => s.keyid);
  if (signatures.length === 0) return { verdict: 'unsigned', keyids };
  const message = versionMessage(name, version, dist.integrity);
  let invalid = false;
  for (const signature of signatures) {
    const key = trusted.get(signature.keyid.replace(/=+$/, ''));
    if (!key) continue;
    if (verifySignature(key, message, signature.sig)) return { verdict: 'verified', keyid: signature.keyid, sig: signature.sig };
    invalid = true;
  }
  return { verdict: invalid ? 'invalid' : 'unknown-key', keyids };
}

/**
 * {@link checkVersionSignatures} against a keys document as it is served
 * (expired keys left out): `verified`, `unsigned`, `unknown-key` or `invalid`.
 */
export function checkDistSignatures(keys: RegistryKeys, name: string, version: string, dist: Pick<Dist, 'integrity' | 'signatures'>, now: Date = new Date()): 'verified' | 'unsigned' | 'unknown-key' | 'invalid' {
  const trusted = new Map<string, KeyObject>();
  for (const entry of keys.keys) {
    if (entry.expires != null && Date.parse(entry.expires) <= now.getTime()) continue;
    const key = publicKeyOf(entry);
    if (key) trusted.set(entry.keyid.replace(/=+$/, ''), key);
  }
  return checkVersionSignatures(trusted, name, version, dist).verdict;
}
