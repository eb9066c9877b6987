/**
 * Which keys a registry is trusted to sign with, and whether the documents
 * it serves are current and belong together (TUF's rollback, freeze and
 * mix-and-match attacks; see internal/registry/trust.ts).
 *
 * Per registry, once per operation: the keys are those pinned in settings
 * (`keys`), else those recorded at first use, else, when the registry lists
 * keys, they are shown and the user asked (never without a terminal). A key
 * the registry lists but nobody trusts is trusted only through a rotation
 * signed by a trusted key. The index, when the registry publishes one (and
 * once it has, it must go on doing so), must be signed by a trusted key, not
 * older than the highest version seen, and not expired; only then is its
 * version recorded. Each version then needs its packument to match the
 * index and, under `signatures: "required"`, a signature by a trusted key.
 *
 * The revocations are established with the index, for every operation that
 * trusts a key of the registry (install, update and rollback as much as
 * verify): signed by a trusted key, not older than seen, not expired, and
 * the very document the index names (version and digest) when it names one.
 * A registry that never published revocations is not asked to; one that did
 * must go on serving them, and one whose index named them must go on naming
 * them (recorded per registry in registry-trust.json).
 */
import type { KeyObject } from 'node:crypto';
import { type KeyTrustRequest, type MarketNote, PlinthError } from 'plinth/sdk';
import { type AbbreviatedPackument, type AbbreviatedVersion, type IndexSigned, REGISTRY_INDEX_PATH, REGISTRY_REVOCATIONS_PATH, REGISTRY_ROTATIONS_PATH, type RegistryKeys, type RevocationsSigned, type RevokedVersion, type Rotations, checkVersionSignatures, documentSigner, packumentDigest, publicKeyOf, registryIndexSchema, revocationsDigest, revocationsSchema, rotationsSchema } from 'plinth/internal';
import { type DocumentContext, fetchKeys, fetchSignedDocument } from './documents.js';
import type { Registry } from './registries.js';
import type { RegistryState, TrustState, TrustedKey } from './trust-state.js';

export type SignaturePolicy = 'required' | 'if-present' | 'off';

/** What is established about one registry for this operation. */
export interface RegistryTrust {
  readonly policy: SignaturePolicy;
  /** keyid → key. */
  readonly keys: ReadonlyMap<string, KeyObject>;
  readonly index?: IndexSigned;
  /** The registry's revoked versions, checked (empty when it publishes none, or when nothing could be checked). */
  readonly revoked: readonly RevokedVersion[];
}

export interface TrustOptions {
  /** Asks the user to trust keys on first use; absent: nobody to ask. */
  readonly trustKeys?: ((request: KeyTrustRequest) => Promise<boolean>) | undefined;
  /** Keyids the command line said to trust on first use (`--trust-key`). */
  readonly trustKeyIds?: readonly string[] | undefined;
  /** Instead of asking, leave a registry whose keys nobody trusted yet unchecked (`outdated`, `verify`: they install nothing). */
  readonly readOnly?: boolean;
  readonly now?: () => Date;
}

/** Establishes and caches each registry's trust for one operation. */
export class RegistryTrustKeeper {
  private readonly cache = new Map<string, Promise<RegistryTrust>>();

  constructor(
    private readonly state: TrustState,
    private readonly options: TrustOptions = {},
  ) {}

  forRegistry(context: DocumentContext, registry: Registry): Promise<RegistryTrust> {
    const key = registry.url.href;
    let found = this.cache.get(key);
    if (!found) {
      found = establish(context, registry, this.state, this.options);
      this.cache.set(key, found);
    }
    return found;
  }
}

async function establish(context: DocumentContext, registry: Registry, state: TrustState, options: TrustOptions): Promise<RegistryTrust> {
  const now = (options.now ?? (() => new Date()))();
  const url = registry.url.href;
  if (registry.signatures === 'off') return { policy: 'off', keys: new Map(), revoked: [] };
  const recorded = await state.get(url);
  const listed = await fetchKeys(context, registry, true);
  const keys = new Map<string, KeyObject>();
  const newlyTrusted: TrustedKey[] = [];
  const retired = new Set<string>();
  for (const keyid of registry.keys ?? []) {
    const entry = recorded?.keys.find((k) => k.keyid === keyid) ?? listed?.keys.find((k) => k.keyid === keyid);
    const key = entry && publicKeyOf(entry);
    if (!key) {
      throw new PlinthError('PLN_E_MARKET_KEY_UNKNOWN', `resolve: registry "${registry.name}" does not list the key pinned for it (${keyid})${listed ? `; it lists ${listed.keys.map((k) => k.keyid).join(', ') || 'none'}` : ''}`, {
        hint: `nothing was downloaded; if the registry's operator changed keys, they publish a rotation signed by ${keyid}; otherwise correct "keys" of registry "${registry.name}" in your settings`,
        details: { step: 'resolve', registry: registry.name, expected: [keyid] },
      });
    }
    keys.set(keyid, key);
    if (!recorded?.keys.some((k) => k.keyid === keyid)) newlyTrusted.push({ keyid, key: entry.key, how: 'pinned', at: now.toISOString() });
  }
  for (const entry of recorded?.keys ?? []) {
    const key = publicKeyOf(entry);
    if (key) keys.set(entry.keyid, key);
  }
  const active = (listed?.keys ?? []).filter((k) => (k.expires == null || Date.parse(k.expires) > now.getTime()) && publicKeyOf(k) !== undefined);
  // A key listed but not trusted: a rotation may lead to it.
  let rotations: Rotations | undefined;
  if (keys.size > 0 && active.some((k) => !keys.has(k.keyid))) {
    rotations = await fetchSignedDocument(context, registry, REGISTRY_ROTATIONS_PATH, rotationsSchema, 'its key rotations');
    if (rotations) newlyTrusted.push(...followRotations(keys, rotations, registry, now, retired));
  }
  if (keys.size === 0 && active.length > 0) {
    const accepted = await trustOnFirstUse(registry, active, options);
    if (accepted === undefined) {
      context.notes.push({ registry: registry.name, kind: 'unchecked', message: `registry ${registry.name} signs with ${active.map((k) => k.keyid).join(', ')}, which is not trusted yet (the first install from it asks): its index and revocations were not checked` });
      return { policy: 'off', keys, revoked: [] };
    }
    for (const entry of accepted) {
      keys.set(entry.keyid, publicKeyOf(entry)!);
      newlyTrusted.push({ keyid: entry.keyid, key: entry.key, how: 'first-use', at: now.toISOString() });
    }
    context.notes.push({ registry: registry.name, kind: 'trusted', message: `trusted registry ${registry.name}'s key${accepted.length > 1 ? 's' : ''} ${accepted.map((k) => k.keyid).join(', ')} on first use (recorded in registry-trust.json)` });
  }
  const policy: SignaturePolicy = registry.signatures ?? (keys.size > 0 ? 'required' : 'if-present');
  let index = keys.size > 0 ? await fetchSignedDocument(context, registry, REGISTRY_INDEX_PATH, registryIndexSchema, 'its signed index') : undefined;
  if (index === undefined && recorded?.index) {
    throw new PlinthError('PLN_E_MARKET_INDEX_MISSING', `resolve: registry "${registry.name}" no longer serves its signed index (version ${recorded.index.version} was seen): refused, since without it an old or mixed set of documents cannot be told apart`, {
      hint: 'nothing was downloaded; the registry or something between may be replaying old documents; retry later, or ask its operator to publish the index again (`plinth registry index`)',
      details: { step: 'resolve', registry: registry.name, seen: recorded.index.version },
    });
  }
  if (index) {
    let signer = documentSigner(index, keys);
    if (!signer && !rotations) {
      rotations = await fetchSignedDocument(context, registry, REGISTRY_ROTATIONS_PATH, rotationsSchema, 'its key rotations');
      if (rotations) {
        newlyTrusted.push(...followRotations(keys, rotations, registry, now, retired));
        signer = documentSigner(index, keys);
      }
    }
    if (!signer) {
      throw new PlinthError('PLN_E_MARKET_INDEX_SIGNATURE', `resolve: the index of registry "${registry.name}" is not signed by a key trusted for it (signed by ${index.signatures.map((s) => s.keyid).join(', ')}; expected ${[...keys.keys()].join(' or ')})`, {
        hint: 'nothing was downloaded; a registry changes keys only through a rotation signed by its previous key (`plinth registry rotate-key`); tell its operator, or pin the right key in "keys"',
        details: { step: 'resolve', registry: registry.name, expected: [...keys.keys()], signedBy: index.signatures.map((s) => s.keyid) },
      });
    }
    const seen = recorded?.index?.version ?? 0;
    if (index.signed.version < seen) {
      throw new PlinthError('PLN_E_MARKET_INDEX_ROLLBACK', `resolve: registry "${registry.name}" served index version ${index.signed.version}, older than version ${seen} seen on ${recorded!.index!.seenAt.slice(0, 10)}: refused (a replayed, older state of the registry)`, {
        hint: 'nothing was downloaded; something serves old documents (a stale mirror or cache, or an attacker); retry later, or tell the registry\'s operator',
        details: { step: 'resolve', registry: registry.name, served: index.signed.version, seen },
      });
    }
    if (Date.parse(index.signed.expires) <= now.getTime()) {
      throw new PlinthError('PLN_E_MARKET_INDEX_EXPIRED', `resolve: the index of registry "${registry.name}" (version ${index.signed.version}) expired on ${index.signed.expires}: refused (the registry's state may be frozen at an old moment)`, {
        hint: 'nothing was downloaded; the registry\'s operator must sign it again (`plinth registry index --to <folder> --sign <key>`); retry later',
        details: { step: 'resolve', registry: registry.name, version: index.signed.version, expires: index.signed.expires },
      });
    }
  }
  // A registry that lists no keys cannot sign revocations: there is nothing to check them against.
  const revocations = keys.size > 0 ? await checkRevocations(context, registry, keys, index?.signed, recorded?.revocations, now) : undefined;
  const revocationsSeen = revocations && { version: revocations.version, bound: index?.signed.revocations !== undefined, ...(revocations.expires && { expires: revocations.expires }), seenAt: now.toISOString() };
  const revocationsChanged = revocationsSeen !== undefined && (revocationsSeen.version !== recorded?.revocations?.version || revocationsSeen.bound !== (recorded.revocations.bound ?? false));
  if (newlyTrusted.length > 0 || retired.size > 0 || (index && index.signed.version !== recorded?.index?.version) || revocationsChanged) {
    await state.update(url, (current) => remember(current, newlyTrusted, retired, index?.signed, revocationsSeen, now));
  }
  return { policy, keys, ...(index && { index: index.signed }), revoked: revocations?.revoked ?? [] };
}

/**
 * The registry's revocations, when it publishes them, checked against what
 * was seen before and against the index (see the module's comment).
 * @throws PlinthError `PLN_E_MARKET_REVOCATIONS` (not signed by a trusted key), `…_REVOCATIONS_MISSING`,
 *   `…_REVOCATIONS_ROLLBACK`, `…_REVOCATIONS_MISMATCH`, `…_REVOCATIONS_EXPIRED`.
 */
async function checkRevocations(context: DocumentContext, registry: Registry, keys: ReadonlyMap<string, KeyObject>, index: IndexSigned | undefined, seen: RegistryState['revocations'], now: Date): Promise<RevocationsSigned | undefined> {
  const doc = await fetchSignedDocument(context, registry, REGISTRY_REVOCATIONS_PATH, revocationsSchema, 'its revocations');
  const bound = index?.revocations;
  const details = { step: 'revocations', registry: registry.name };
  if (!doc) {
    if (!bound && !seen) return undefined;
    const why = bound ? `its signed index (version ${index!.version}) names revocations version ${bound.version}` : `revocations version ${seen!.version} were seen${seen!.seenAt ? ` on ${seen!.seenAt.slice(0, 10)}` : ''}`;
    throw new PlinthError('PLN_E_MARKET_REVOCATIONS_MISSING', `revocations: registry "${registry.name}" serves no revocations (${REGISTRY_REVOCATIONS_PATH}), but ${why}: refused, since without them a revoked version cannot be told apart`, {
      hint: 'nothing was changed; something (a stale mirror or cache, or an attacker) may be hiding them; retry later, or ask the registry\'s operator to publish them again (`plinth registry index --to <folder> --sign <key>` signs them with the index)',
      details: { ...details, ...(bound && { expected: bound.version }), ...(seen && { seen: seen.version }) },
    });
  }
  if (!documentSigner(doc, keys)) {
    throw new PlinthError('PLN_E_MARKET_REVOCATIONS', `revocations: registry "${registry.name}"'s revocations are not signed by a key trusted for it (signed by ${doc.signatures.map((s) => s.keyid).join(', ')}; expected ${[...keys.keys()].join(' or ')}): refused`, {
      hint: 'nothing was changed; until they are, revoked versions cannot be told apart: tell the registry\'s operator (a registry changes keys only through a rotation signed by its previous key)',
      details: { ...details, expected: [...keys.keys()], signedBy: doc.signatures.map((s) => s.keyid) },
    });
  }
  const highest = seen?.version ?? 0;
  if (doc.signed.version < highest) {
    throw new PlinthError('PLN_E_MARKET_REVOCATIONS_ROLLBACK', `revocations: registry "${registry.name}" served revocations version ${doc.signed.version}, older than version ${highest} seen${seen?.seenAt ? ` on ${seen.seenAt.slice(0, 10)}` : ''}: refused (an old list may hide a revocation)`, {
      hint: 'nothing was changed; something serves old documents (a stale mirror or cache, or an attacker); retry later, or tell the registry\'s operator',
      details: { ...details, served: doc.signed.version, seen: highest },
    });
  }
  if (bound) {
    const digest = revocationsDigest(doc.signed);
    if (doc.signed.version !== bound.version || digest !== bound.digest) {
      throw new PlinthError('PLN_E_MARKET_REVOCATIONS_MISMATCH', `revocations: registry "${registry.name}" served revocations version ${doc.signed.version}${doc.signed.version === bound.version ? ' with other contents than' : ', not'} the version ${bound.version} its signed index (version ${index!.version}) names: refused (documents from different moments, or an old list beside a current index)`, {
        hint: 'nothing was changed; retry in a moment (a revocation may be being published); if it persists, tell the registry\'s operator',
        details: { ...details, served: doc.signed.version, expected: bound.version, index: index!.version },
      });
    }
  } else if (seen?.bound) {
    throw new PlinthError('PLN_E_MARKET_REVOCATIONS_MISSING', `revocations: the signed index of registry "${registry.name}"${index ? ` (version ${index.version})` : ''} no longer names its revocations, as it did when version ${seen.version} was seen: refused (an index that names none cannot tell an old list from the current one)`, {
      hint: 'nothing was changed; the registry may be served by an older plinth, or something replays old documents; ask its operator to sign the index again with a current plinth (`plinth registry index --to <folder> --sign <key>`)',
      details: { ...details, seen: seen.version },
    });
  }
  if (doc.signed.expires !== undefined && Date.parse(doc.signed.expires) <= now.getTime()) {
    throw new PlinthError('PLN_E_MARKET_REVOCATIONS_EXPIRED', `revocations: the revocations of registry "${registry.name}" (version ${doc.signed.version}) expired on ${doc.signed.expires}: refused (the list may be frozen at an old moment)`, {
      hint: 'nothing was changed; the registry\'s operator must sign them again (`plinth registry index --to <folder> --sign <key>` signs the index and the revocations); retry then',
      details: { ...details, version: doc.signed.version, expires: doc.signed.expires },
    });
  }
  return doc.signed;
}

function remember(current: RegistryState | undefined, added: readonly TrustedKey[], retired: ReadonlySet<string>, index: IndexSigned | undefined, revocations: RegistryState['revocations'], now: Date): RegistryState {
  const keys = [...(current?.keys ?? [])];
  for (const key of added) if (!keys.some((k) => k.keyid === key.keyid)) keys.push(key);
  const seen = current?.index?.version ?? 0;
  return {
    keys: keys.filter((k) => !retired.has(k.keyid)),
    ...(index && index.version >= seen ? { index: { version: index.version, expires: index.expires, seenAt: now.toISOString() } } : current?.index ? { index: current.index } : {}),
    ...(revocations && revocations.version >= (current?.revocations?.version ?? 0) ? { revocations } : current?.revocations ? { revocations: current.revocations } : {}),
  };
}

/**
 * Follows the rotations from the trusted keys: one whose `from` is trusted
 * must be signed by it, and then its `to` replaces it. Mutates `keys`;
 * adds the keys handed over from to `retired`.
 * @throws PlinthError `PLN_E_MARKET_KEY_ROTATION` for a rotation from a trusted key that it did not sign.
 */
export function followRotations(keys: Map<string, KeyObject>, rotations: Rotations, registry: Pick<Registry, 'name'>, now: Date, retired: Set<string>): TrustedKey[] {
  const moved: TrustedKey[] = [];
  for (const rotation of rotations.rotations) {
    const from = rotation.signed.from;
    const fromKey = keys.get(from);
    if (!fromKey) continue;
    const signer = documentSigner(rotation, new Map([[from, fromKey]]));
    const toKey = publicKeyOf(rotation.signed.to);
    if (!signer || !toKey) {
      throw new PlinthError('PLN_E_MARKET_KEY_ROTATION', `resolve: registry "${registry.name}" publishes a rotation from ${from} to ${rotation.signed.to.keyid} that ${signer ? 'names a key whose bytes do not match its keyid' : `is not signed by ${from}`}: refused`, {
        hint: 'nothing was downloaded; only the previous key can hand over to a new one; tell the registry\'s operator (the rotation may be forged)',
        details: { step: 'resolve', registry: registry.name, expected: from, to: rotation.signed.to.keyid },
      });
    }
    keys.delete(from);
    retired.add(from);
    keys.set(rotation.signed.to.keyid, toKey);
    moved.push({ keyid: rotation.signed.to.keyid, key: rotation.signed.to.key, how: 'rotated', at: now.toISOString() });
  }
  return moved;
}

async function trustOnFirstUse(registry: Registry, active: RegistryKeys['keys'], options: TrustOptions): Promise<RegistryKeys['keys'] | undefined> {
  const given = options.trustKeyIds ?? [];
  const named = active.filter((k) => given.includes(k.keyid));
  if (named.length > 0) return named;
  if (options.readOnly) return undefined;
  const request: KeyTrustRequest = { registry: registry.name, url: registry.url.href, keys: active.map((k) => ({ keyid: k.keyid, keytype: publicKeyOf(k)!.asymmetricKeyType === 'ed25519' ? 'ed25519' : 'ecdsa-sha2-nistp256' })) };
  if (options.trustKeys && (await options.trustKeys(request))) return active;
  const keyids = active.map((k) => k.keyid);
  const why = given.length > 0 ? `and --trust-key ${given.join(', ')} is not a key it lists` : `which ${options.trustKeys ? 'you did not trust' : 'nobody was asked to trust (no terminal)'}`;
  throw new PlinthError('PLN_E_MARKET_KEY_UNTRUSTED', `resolve: registry "${registry.name}" (${registry.url.href}) signs with ${keyids.join(', ')}, ${why}: nothing was installed`, {
    hint: `check the fingerprint with the registry's operator, then run the command again on a terminal, add --trust-key ${keyids[0]}, or pin it: "keys": ["${keyids[0]}"] in registry "${registry.name}" of your settings`,
    details: { step: 'resolve', registry: registry.name, keys: keyids },
  });
}

/**
 * Checks one version before its tarball is fetched: its packument against the
 * index, its signature against the policy. The signature it verified under,
 * for the lock file.
 */
export function checkVersion(trust: RegistryTrust, registry: Registry, packument: AbbreviatedPackument, version: AbbreviatedVersion, notes: MarketNote[]): { keyid: string; sig: string } | undefined {
  if (trust.policy === 'off') return undefined;
  const id = `${version.name}@${version.version}`;
  if (trust.index) {
    const expected = trust.index.packuments[packument.name];
    const actual = packumentDigest(packument);
    if (expected !== actual) {
      throw new PlinthError('PLN_E_MARKET_INDEX_MISMATCH', `resolve: the packument of "${packument.name}" on registry "${registry.name}" ${expected === undefined ? 'is not in its signed index' : `does not match its signed index (version ${trust.index.version})`}: refused (documents from different moments, or changed)`, {
        plugin: packument.name,
        hint: 'nothing was downloaded; retry in a moment (a publish may be under way); if it persists, tell the registry\'s operator',
        details: { step: 'resolve', registry: registry.name, expected: expected ?? null, actual, index: trust.index.version },
      });
    }
  }
  if (trust.keys.size === 0 && trust.policy !== 'required') {
    // A registry that lists no keys (a proxy passing on another's signatures): nothing to check against.
    if ((version.dist.signatures ?? []).length > 0) notes.push({ registry: registry.name, kind: 'unchecked', message: `${id} is signed, but registry ${registry.name} lists no signing keys: signatures not checked` });
    return undefined;
  }
  // A version without `integrity` is refused before this (resolve.ts); an empty one never verifies.
  const verdict = checkVersionSignatures(trust.keys, version.name, version.version, { ...version.dist, integrity: version.dist.integrity ?? '' });
  if (verdict.verdict === 'verified') return { keyid: verdict.keyid, sig: verdict.sig };
  const expected = [...trust.keys.keys()];
  if (verdict.verdict === 'unsigned') {
    if (trust.policy === 'if-present') return undefined;
    throw new PlinthError('PLN_E_MARKET_UNSIGNED', `resolve: ${id} on registry "${registry.name}" is not signed, and the registry requires signatures (expected one by ${expected.join(' or ') || 'its key'}): refused`, {
      plugin: version.name,
      hint: `nothing was downloaded; the publisher signs with \`plinth registry publish --sign <key>\`; to accept unsigned versions from this registry set "signatures": "if-present" in its settings`,
      details: { step: 'resolve', registry: registry.name, expected },
    });
  }
  if (verdict.verdict === 'unknown-key') {
    throw new PlinthError('PLN_E_MARKET_SIGNATURE_KEY', `resolve: ${id} on registry "${registry.name}" is signed by ${verdict.keyids.join(', ')}, not by a key trusted for it (expected ${expected.join(' or ')}): refused`, {
      plugin: version.name,
      hint: 'nothing was downloaded; a registry changes keys only through a rotation signed by its previous key; tell its operator, or correct "keys" in your settings',
      details: { step: 'resolve', registry: registry.name, expected, signedBy: verdict.keyids },
    });
  }
  throw new PlinthError('PLN_E_MARKET_SIGNATURE', `resolve: the signature of ${id} on registry "${registry.name}" by ${verdict.keyids.join(', ')} does not match its name, version and integrity: refused`, {
    plugin: version.name,
    hint: 'the document was changed after the registry signed it: nothing was downloaded; tell the registry\'s operator, or use another registry',
    details: { step: 'resolve', registry: registry.name, verdict: 'invalid', expected },
  });
}
