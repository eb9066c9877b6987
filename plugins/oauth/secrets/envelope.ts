/**
 * The encrypted file's format: a JSON envelope around AES-256-GCM ciphertext.
 * The header (`v`, `alg`, `kid`) is bound as additional authenticated data, so
 * editing it breaks the tag like editing the ciphertext does. `kid` names the
 * key (a hash prefix, not the key) so that a file read with another key is told
 * apart from a tampered one.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

export const ENVELOPE_VERSION = 1;
export const ALGORITHM = 'aes-256-gcm';
export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64');

export const envelopeSchema = z.object({
  v: z.literal(ENVELOPE_VERSION),
  alg: z.literal(ALGORITHM),
  kid: z.string().regex(/^[0-9a-f]{16}$/, 'expected 16 hex digits'),
  iv: base64.refine((value) => Buffer.from(value, 'base64').length === IV_BYTES, `expected a ${IV_BYTES}-byte IV`),
  tag: base64.refine((value) => Buffer.from(value, 'base64').length === TAG_BYTES, `expected a ${TAG_BYTES}-byte tag`),
  data: base64,
});

export type Envelope = z.infer<typeof envelopeSchema>;

/** The first 16 hex digits of the key's SHA-256: tells keys apart without revealing one. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

function additionalData(header: Pick<Envelope, 'v' | 'alg' | 'kid'>): Buffer {
  return Buffer.from(JSON.stringify([header.v, header.alg, header.kid]), 'utf8');
}

/** Encrypts `plaintext` under `key` with a fresh IV. */
export function seal(key: Buffer, plaintext: string): Envelope {
  const header = { v: ENVELOPE_VERSION, alg: ALGORITHM, kid: keyId(key) } as const;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(header));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { ...header, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

/** Why an envelope could not be opened. */
export type OpenFailure = 'wrong-key' | 'tampered';

/** Decrypts `envelope` with `key`, checking the tag; the plaintext, or why not. */
export function unseal(key: Buffer, envelope: Envelope): { ok: true; plaintext: string } | { ok: false; failure: OpenFailure } {
  if (envelope.kid !== keyId(key)) return { ok: false, failure: 'wrong-key' };
  const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(envelope.iv, 'base64'), { authTagLength: TAG_BYTES });
  decipher.setAAD(additionalData(envelope));
  decipher.setAuthTag(Buffer.from(envelope.tag, 'base64'));
  const head = decipher.update(Buffer.from(envelope.data, 'base64'));
  try {
    // GCM releases nothing as authentic until final() has checked the tag.
    return { ok: true, plaintext: Buffer.concat([head, decipher.final()]).toString('utf8') };
  } catch {
    return { ok: false, failure: 'tampered' };
  }
}
