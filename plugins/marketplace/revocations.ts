/**
 * A registry's revocations (`-/plinth/revocations.json`): versions withdrawn,
 * why, and what to move to. The list counts only when a key trusted for the
 * registry signed it, and only when it is not older than the last one seen
 * (an older list could hide a revocation). Installed versions it names are
 * returned; the lock file marks them, so that they do not load again.
 */
import semver from 'semver';
import { type LockEntry, PlinthError, REGISTRY_REVOCATIONS_PATH, type RevokedEntry, type RevokedVersion, documentSigner, revocationsSchema } from 'plinth/sdk';
import { type DocumentContext, fetchPackument, fetchSignedDocument } from './documents.js';
import type { Registry } from './registries.js';
import { type RegistryTrustKeeper, checkVersion } from './registry-trust.js';
import type { TrustState } from './trust-state.js';

/** The registry's revoked versions, verified; empty when it publishes none or nobody trusts its keys yet (a note says so). */
export async function fetchRevocations(context: DocumentContext, keeper: RegistryTrustKeeper, state: TrustState, registry: Registry): Promise<readonly RevokedVersion[]> {
  const trust = await keeper.forRegistry(context, registry);
  if (trust.policy === 'off') return [];
  const doc = await fetchSignedDocument(context, registry, REGISTRY_REVOCATIONS_PATH, revocationsSchema, 'its revocations');
  if (!doc) return [];
  if (trust.keys.size === 0) {
    context.notes.push({ registry: registry.name, kind: 'unchecked', message: `registry ${registry.name} publishes revocations, but none of its keys is trusted yet: not checked` });
    return [];
  }
  if (!documentSigner(doc, trust.keys)) {
    throw new PlinthError('PLN_E_MARKET_REVOCATIONS', `registry "${registry.name}"'s revocations are not signed by a key trusted for it (expected ${[...trust.keys.keys()].join(' or ')}): ignored`, {
      hint: 'tell the registry\'s operator; until then revoked versions cannot be told apart',
      details: { step: 'revocations', registry: registry.name, expected: [...trust.keys.keys()] },
    });
  }
  const seen = (await state.get(registry.url.href))?.revocations?.version ?? 0;
  if (doc.signed.version < seen) {
    throw new PlinthError('PLN_E_MARKET_REVOCATIONS', `registry "${registry.name}" served revocations version ${doc.signed.version}, older than version ${seen} seen before: refused (an old list may hide a revocation)`, {
      hint: 'something serves old documents (a stale mirror or cache, or an attacker); retry later, or tell the registry\'s operator',
      details: { step: 'revocations', registry: registry.name, served: doc.signed.version, seen },
    });
  }
  if (doc.signed.version > seen) await state.update(registry.url.href, (current) => ({ keys: current?.keys ?? [], ...(current?.index && { index: current.index }), revocations: { version: doc.signed.version } }));
  return doc.signed.revoked;
}

/**
 * The installed entries `revoked` names, each with the version to move to:
 * the registry's `use`, else the newest version it has that is not revoked
 * and that an install would accept (signed, under a registry that requires it).
 */
export async function revokedInstalled(context: DocumentContext, keeper: RegistryTrustKeeper, registry: Registry, entries: readonly LockEntry[], revoked: readonly RevokedVersion[]): Promise<RevokedEntry[]> {
  const out: RevokedEntry[] = [];
  for (const entry of entries) {
    const hit = revoked.find((r) => r.name === entry.name && r.version === entry.version);
    if (!hit) continue;
    let use = hit.use;
    if (use === undefined) {
      const packument = await fetchPackument(context, registry, entry.name).catch(() => undefined);
      if (packument) {
        const trust = await keeper.forRegistry(context, registry);
        const installable = Object.values(packument.versions).filter((v) => {
          if (revoked.some((r) => r.name === entry.name && r.version === v.version) || semver.prerelease(v.version) !== null) return false;
          try {
            checkVersion(trust, registry, packument, v, []);
            return true;
          } catch {
            return false; // one the install would refuse (unsigned, say) is no way out
          }
        });
        use = semver.maxSatisfying(installable.map((v) => v.version), '*') ?? undefined;
      }
    }
    out.push({ name: entry.name, version: entry.version, reason: hit.reason, ...(use && { use }), registry: registry.name });
  }
  return out;
}
