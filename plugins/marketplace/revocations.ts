/**
 * A registry's revocations (`-/plinth/revocations.json`): versions withdrawn,
 * why, and what to move to. They are established with the registry's keys
 * and index (registry-trust.ts: signed by a trusted key, not older than seen,
 * the ones the index names, not expired). Installed versions they name are
 * returned; the lock file marks them, so that they do not load again; an
 * install, update or rollback refuses them (resolve.ts, service.ts).
 */
import semver from 'semver';
import { type LockEntry, PlinthError, type RevokedEntry } from 'plinth/sdk';
import { type RevokedVersion } from 'plinth/internal';
import { type DocumentContext, fetchPackument } from './documents.js';
import type { Registry } from './registries.js';
import { type RegistryTrust, type RegistryTrustKeeper, checkVersion } from './registry-trust.js';

/** The registry's revoked versions, verified; empty when it publishes none or nobody trusts its keys yet (a note says so). */
export async function fetchRevocations(context: DocumentContext, keeper: RegistryTrustKeeper, registry: Registry): Promise<readonly RevokedVersion[]> {
  return (await keeper.forRegistry(context, registry)).revoked;
}

/**
 * The newest version of `name` an install would accept instead of a revoked
 * one: not revoked, not a prerelease, within `range` when given, and passing
 * the checks of an install (a newer unsigned version under a registry that
 * requires signatures is no way out).
 */
export function replacementFor(trust: RegistryTrust, registry: Registry, packument: Parameters<typeof checkVersion>[2], range = '*'): string | undefined {
  const installable = Object.values(packument.versions).filter((v) => {
    if (trust.revoked.some((r) => r.name === packument.name && r.version === v.version) || semver.prerelease(v.version) !== null) return false;
    if (v.dist.integrity === undefined) return false; // refused by an install as weak
    try {
      checkVersion(trust, registry, packument, v, []);
      return true;
    } catch {
      return false;
    }
  });
  return semver.maxSatisfying(installable.map((v) => v.version), range) ?? undefined;
}

/** `PLN_E_MARKET_REVOKED` for installing (or rolling back to) a revoked version, with the version to use instead. */
export function revokedError(step: string, registry: Registry, hit: RevokedVersion, use: string | undefined, what: string): PlinthError {
  const id = `${hit.name}@${hit.version}`;
  return new PlinthError('PLN_E_MARKET_REVOKED', `${step}: ${id} was revoked by registry "${registry.name}" (${hit.reason}): ${what}`, {
    plugin: hit.name,
    hint: use ? `use ${use} instead: \`plinth ext install ${hit.name}@${use}\`` : `the registry names no version to move to; \`plinth ext search ${hit.name}\` shows what it has`,
    details: { step, registry: registry.name, version: hit.version, reason: hit.reason, ...(use && { use }) },
  });
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
      if (packument) use = replacementFor({ ...(await keeper.forRegistry(context, registry)), revoked }, registry, packument);
    }
    out.push({ name: entry.name, version: entry.version, reason: hit.reason, ...(use && { use }), registry: registry.name });
  }
  return out;
}
