/**
 * DPoP (RFC 9449, SEP-1932): sender-constrained tokens. The SDK signs the
 * proofs (`DpopSession`: a proof per token request and per request to the MCP
 * server, `ath` bound to the access token, `use_dpop_nonce` challenges retried
 * with the server's nonce); plinth keeps the key pair with the tokens it is
 * bound to, in the stored record (the keychain or the encrypted file), so
 * that every plinth process presents the same key the authorization server
 * bound the token to (`cnf.jkt`). The private key is kept as a JWK in the
 * record only: never logged, never shown by `auth status`.
 *
 * plinth asks for DPoP where the MCP server wants it: its protected-resource
 * metadata (RFC 9728) says `dpop_bound_access_tokens_required` or lists
 * `dpop_signing_alg_values_supported`, or its 401 offers the `DPoP` scheme —
 * or wherever the authorization server supports it with `"dpop": true`. The
 * authorization server's advertisement alone does not turn it on: an
 * authorization server advertises DPoP for every resource it serves, and a
 * resource that does not take DPoP refuses a DPoP-bound token. `"dpop": false`
 * never asks for it.
 */
import { webcrypto } from 'node:crypto';
import { DpopSession, generateDpopKeyPair } from '@modelcontextprotocol/client';
import type { DpopAlg, DpopKeyPair, OAuthDiscoveryState } from '@modelcontextprotocol/client';

/** Algorithms plinth signs proofs with, in its order of preference. */
const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA'] as const satisfies readonly DpopAlg[];
type PlinthDpopAlg = (typeof ALGORITHMS)[number];

const IMPORT: Readonly<Record<PlinthDpopAlg, webcrypto.EcKeyImportParams | webcrypto.Algorithm>> = {
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
  ES384: { name: 'ECDSA', namedCurve: 'P-384' },
  ES512: { name: 'ECDSA', namedCurve: 'P-521' },
  EdDSA: { name: 'Ed25519' },
};

/** A DPoP key pair as stored with the tokens bound to it. */
export interface StoredDpopKey {
  readonly alg: PlinthDpopAlg;
  readonly privateJwk: webcrypto.JsonWebKey;
  readonly publicJwk: webcrypto.JsonWebKey;
  /** RFC 7638 thumbprint: the token's `cnf.jkt`. */
  readonly thumbprint: string;
}

/**
 * The algorithm to sign with, or undefined for no DPoP. `wanted`: the MCP
 * server's 401 offered the DPoP scheme; `setting`: the server's `oauth.dpop`.
 * The algorithm is the first plinth signs with that the authorization server
 * lists (then the resource's list), else ES256 where neither lists any.
 */
export function dpopAlgorithm(discovery: OAuthDiscoveryState | undefined, wanted: boolean, setting: boolean | undefined): PlinthDpopAlg | undefined {
  if (setting === false) return undefined;
  const resource = discovery?.resourceMetadata as { dpop_bound_access_tokens_required?: unknown; dpop_signing_alg_values_supported?: unknown } | undefined;
  const advertised = (discovery?.authorizationServerMetadata as { dpop_signing_alg_values_supported?: unknown } | undefined)?.dpop_signing_alg_values_supported;
  const resourceWants = resource?.dpop_bound_access_tokens_required === true || Array.isArray(resource?.dpop_signing_alg_values_supported);
  if (!(wanted || resourceWants || (setting === true && Array.isArray(advertised)))) return undefined;
  for (const listed of [advertised, resource?.dpop_signing_alg_values_supported]) {
    if (!Array.isArray(listed)) continue;
    // A list without an algorithm plinth signs with: it cannot prove possession there.
    return ALGORITHMS.find((alg) => listed.includes(alg));
  }
  return 'ES256';
}

/** A fresh key pair, exportable so that it can be stored with the tokens. */
export async function newDpopKey(alg: PlinthDpopAlg): Promise<StoredDpopKey> {
  const pair = await generateDpopKeyPair({ alg, extractable: true });
  const privateJwk = await webcrypto.subtle.exportKey('jwk', pair.privateKey);
  return { alg, privateJwk, publicJwk: pair.publicJwk as webcrypto.JsonWebKey, thumbprint: pair.thumbprint };
}

/** A session signing with a stored key (its private key imported unexportable). */
export async function dpopSession(key: StoredDpopKey): Promise<DpopSession> {
  const params = IMPORT[key.alg];
  const privateKey = await webcrypto.subtle.importKey('jwk', key.privateJwk, params, false, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('jwk', key.publicJwk, params, true, ['verify']);
  const keyPair: DpopKeyPair = { privateKey, publicKey, publicJwk: key.publicJwk as DpopKeyPair['publicJwk'], thumbprint: key.thumbprint, alg: key.alg };
  return DpopSession.create({ keyPair });
}

/** Whether `value` is a stored key plinth can use. */
export function isStoredDpopKey(value: unknown): value is StoredDpopKey {
  const key = value as Partial<StoredDpopKey> | undefined;
  return (
    typeof key === 'object' &&
    key !== null &&
    (ALGORITHMS as readonly string[]).includes(String(key.alg)) &&
    typeof key.privateJwk === 'object' &&
    typeof key.publicJwk === 'object' &&
    typeof key.thumbprint === 'string'
  );
}
