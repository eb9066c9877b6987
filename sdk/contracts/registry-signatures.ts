/**
 * Checking `dist.signatures` as npm does: the registry's public keys (the
 * document at `/-/npm/v1/keys`) and, per version, an ECDSA P-256 / SHA-256
 * signature over `<name>@<version>:<dist.integrity>`. `plinth registry
 * publish --sign-key` makes them; a client that knows a registry's keys can
 * refuse a version whose metadata was changed after signing.
 */
import { createVerify } from 'node:crypto';
import { z } from 'zod';
import type { Dist } from './registry.js';

/** npm's path of a registry's keys document. */
export const REGISTRY_KEYS_PATH = '-/npm/v1/keys';

/** The keys document: `{ keys: [{ keyid, key (SPKI DER, base64), keytype, scheme, expires }] }`. */
export const registryKeysSchema = z.looseObject({
  keys: z.array(z.looseObject({ keyid: z.string().min(1), key: z.string().min(1), keytype: z.string().optional(), scheme: z.string().optional(), expires: z.string().nullable().optional() })),
});

export type RegistryKeys = z.infer<typeof registryKeysSchema>;

/**
 * What a version's signatures say, given the registry's keys: `verified` (a
 * signature by a known key that has not expired checks out), `unsigned`
 * (none at all), `unknown-key` (signed only by keys not in the list, or
 * expired ones) or `invalid` (a known key's signature does not match: the
 * name, version or integrity were changed after signing).
 */
export function checkDistSignatures(keys: RegistryKeys, name: string, version: string, dist: Pick<Dist, 'integrity' | 'signatures'>, now: Date = new Date()): 'verified' | 'unsigned' | 'unknown-key' | 'invalid' {
  const signatures = dist.signatures ?? [];
  if (signatures.length === 0) return 'unsigned';
  const message = `${name}@${version}:${dist.integrity}`;
  let known = false;
  for (const signature of signatures) {
    const key = keys.keys.find((k) => k.keyid === signature.keyid && (k.expires == null || Date.parse(k.expires) > now.getTime()));
    if (!key) continue;
    known = true;
    const pem = `-----BEGIN PUBLIC KEY-----\n${key.key}\n-----END PUBLIC KEY-----`;
    let ok = false;
    try {
      ok = createVerify('SHA256').update(message).verify(pem, signature.sig, 'base64');
    } catch {
      ok = false;
    }
    if (!ok) return 'invalid';
  }
  return known ? 'verified' : 'unknown-key';
}
