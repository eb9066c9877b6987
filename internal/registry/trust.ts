/**
 * A plinth registry's signed documents, after TUF's roles and attacks
 * (theupdateframework.io): signatures on each version prove who published
 * it, but not that the documents a client sees are current or belong
 * together. So a registry also publishes, signed by its key:
 *
 * - the **index** (`-/plinth/index.json`): each plugin's current packument
 *   digest, a `version` that only grows and an `expires` date. A client keeps
 *   the highest version it has seen and refuses an older index (rollback),
 *   an expired one (freeze), and a packument whose digest is not the index's
 *   (mix-and-match: documents from different moments served together);
 * - the **revocations** (`-/plinth/revocations.json`): versions withdrawn, why,
 *   and what to move to, with a `version` that only grows and an `expires`
 *   date. The index names the revocations it goes with (`revocations`: their
 *   version and {@link revocationsDigest}), so an older list, or none, cannot
 *   be served beside a current index (freeze of the revocations); the two are
 *   signed together, and expire together;
 * - the **rotations** (`-/plinth/rotations.json`): each a new key, signed by
 *   the key before it; a client follows the chain from the key it trusts and
 *   nothing else moves its trust to another key.
 *
 * Each is `{ signed, signatures: [{ keyid, sig }] }`; the signature is over
 * the canonical JSON of `signed` (keys sorted, no spaces), whose `type` names
 * the document, so that one kind cannot be passed off as another. A version
 * message (`name@version:integrity`) never starts with `{`, so no document
 * signature is a version signature either.
 */
import { createHash, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { distSignatureSchema } from './packument.js';
import { verifySignature } from './signatures.js';

export const REGISTRY_INDEX_PATH = '-/plinth/index.json';
export const REGISTRY_REVOCATIONS_PATH = '-/plinth/revocations.json';
export const REGISTRY_ROTATIONS_PATH = '-/plinth/rotations.json';

const isoDate = z.string().refine((s) => Number.isFinite(Date.parse(s)), 'expected an ISO date such as "2030-01-01T00:00:00.000Z"');

/** The revocations an index goes with: their version and {@link revocationsDigest}. */
export const revocationsBindingSchema = z.looseObject({ version: z.int().nonnegative(), digest: z.string().min(1) });
export type RevocationsBinding = z.infer<typeof revocationsBindingSchema>;

/**
 * What the index says. `packuments`: name → {@link packumentDigest};
 * `revocations`: the revocations document it goes with, when the registry
 * publishes one. Signed documents keep fields they do not know (loose
 * objects): a signature covers every field, and a field dropped while
 * parsing would make a valid signature fail.
 */
export const indexSignedSchema = z.looseObject({
  type: z.literal('plinth-index'),
  version: z.int().positive(),
  expires: isoDate,
  packuments: z.record(z.string(), z.string()),
  revocations: revocationsBindingSchema.optional(),
});
export type IndexSigned = z.infer<typeof indexSignedSchema>;

/** One revoked version: `version` is exact; `use` the version to move to, when the registry names one. */
export const revokedVersionSchema = z.looseObject({ name: z.string(), version: z.string(), reason: z.string(), use: z.string().optional(), at: isoDate.optional() });
export type RevokedVersion = z.infer<typeof revokedVersionSchema>;

export const revocationsSignedSchema = z.looseObject({
  type: z.literal('plinth-revocations'),
  version: z.int().nonnegative(),
  /** Absent only in documents written before revocations expired. */
  expires: isoDate.optional(),
  revoked: z.array(revokedVersionSchema),
});
export type RevocationsSigned = z.infer<typeof revocationsSignedSchema>;

/** A key in a rotation: keyid and SPKI DER (base64), as in the keys document. */
export const rotatedKeySchema = z.looseObject({ keyid: z.string().min(1), key: z.string().min(1) });

export const rotationSignedSchema = z.looseObject({
  type: z.literal('plinth-rotation'),
  /** The keyid of the key that signs this rotation, and is replaced. */
  from: z.string().min(1),
  to: rotatedKeySchema,
  at: isoDate,
});
export type RotationSigned = z.infer<typeof rotationSignedSchema>;

/** `{ signed, signatures }` around one of the documents above. */
export function signedDocumentSchema<T extends z.ZodType>(signed: T) {
  return z.object({ signed, signatures: z.array(distSignatureSchema).min(1) });
}

export const registryIndexSchema = signedDocumentSchema(indexSignedSchema);
export type RegistryIndex = z.infer<typeof registryIndexSchema>;
export const revocationsSchema = signedDocumentSchema(revocationsSignedSchema);
export type Revocations = z.infer<typeof revocationsSchema>;
export const rotationSchema = signedDocumentSchema(rotationSignedSchema);
export type Rotation = z.infer<typeof rotationSchema>;
/** The rotations file: oldest first. */
export const rotationsSchema = z.object({ rotations: z.array(rotationSchema) });
export type Rotations = z.infer<typeof rotationsSchema>;

/** JSON with object keys sorted and no whitespace: the bytes a document signature covers. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The keyid of the trusted key that signed `document` (its canonical `signed`), or undefined when none did. */
export function documentSigner(document: { signed: unknown; signatures: ReadonlyArray<{ keyid: string; sig: string }> }, trusted: ReadonlyMap<string, KeyObject>): string | undefined {
  const message = canonicalJson(document.signed);
  for (const signature of document.signatures) {
    const key = trusted.get(signature.keyid.replace(/=+$/, ''));
    if (key && verifySignature(key, message, signature.sig)) return signature.keyid;
  }
  return undefined;
}

/**
 * What the index pins of a packument: its name, dist-tags and each version's
 * integrity, in canonical JSON, SHA-256 (`sha256-<base64>`). The same for
 * the full and the abbreviated form, and whatever the server does to tarball
 * URLs; any version added, removed or changed, or a tag moved, changes it.
 */
export function packumentDigest(packument: { name: string; 'dist-tags': Readonly<Record<string, string>>; versions: Readonly<Record<string, { dist: { integrity?: string | undefined } }>> }): string {
  const versions = Object.fromEntries(Object.entries(packument.versions).map(([v, doc]) => [v, doc.dist.integrity]));
  const text = canonicalJson({ name: packument.name, 'dist-tags': packument['dist-tags'], versions });
  return `sha256-${createHash('sha256').update(text).digest('base64')}`;
}

/** What an index pins of a revocations document: the SHA-256 of the canonical JSON of its `signed` (`sha256-<base64>`). */
export function revocationsDigest(signed: RevocationsSigned): string {
  return `sha256-${createHash('sha256').update(canonicalJson(signed)).digest('base64')}`;
}
