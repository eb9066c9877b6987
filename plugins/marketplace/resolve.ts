/**
 * Which versions to install: the newest version within the range (or the
 * tag) that this kernel can run (as far as the registry says) and its
 * registry has not revoked, staged at once, then the dependencies its
 * staged manifest declares, transitively, unless a plugin already present
 * satisfies them. A conflict is explained: who needs what, and what is there.
 *
 * A dependency comes from its dependent's registry (unless its `@scope` is
 * configured to a registry of its own): a public name cannot stand in for a
 * private one (dependency confusion). When the dependent's registry does not
 * have it and another registry does, it is refused, naming both.
 */
import semver from 'semver';
import { KERNEL_API_VERSION, PlinthError, isPlinthError } from 'plinth/sdk';
import { type AbbreviatedPackument, type AbbreviatedVersion, closestName, resolveTarballUrl } from 'plinth/internal';
import { type DocumentContext, fetchPackument, fetchSearch } from './documents.js';
import { type Registry, registryFor } from './registries.js';
import { type RegistryTrust, type RegistryTrustKeeper, checkVersion } from './registry-trust.js';
import { replacementFor, revokedError } from './revocations.js';
import { parseIntegrity, shasumIntegrity } from './verify.js';

/** One version chosen for installation. */
export interface Planned {
  readonly name: string;
  readonly version: string;
  readonly registry: Registry;
  readonly tarball: URL;
  readonly integrity: string;
  /** The range or tag asked for (for a dependency, the range its dependent names). */
  readonly range: string;
  /** Needed by another plugin, not asked for by name. */
  readonly dependency: boolean;
  readonly size?: number;
  /** The registry signature it verified under (recorded in the lock file). */
  readonly signature?: { readonly keyid: string; readonly sig: string };
}

/** A plugin already present (builtin, or installed by the user). */
export interface Present {
  readonly version: string;
  readonly source: string;
}

/**
 * A name the registry does not have, said as such (not as a URL that 404'd),
 * with the closest name it does have when one is a typo away: looked up with
 * a search for the name's longest word, best effort (a failed search only
 * costs the suggestion).
 */
async function notOnRegistry(context: DocumentContext, registry: Registry, name: string, from: string | undefined, cause: PlinthError): Promise<PlinthError> {
  // A typo is in one word: the others find the names it was meant to be (`lint-gaurd`: `lint`).
  const words = [...new Set(name.split(/[@/._-]+/).filter((w) => w.length > 1))].slice(0, 3);
  const found = await Promise.all(
    words.map((word) =>
      fetchSearch({ ...context, notes: [] }, registry, word, 250).then(
        (result) => result.objects.map((o) => o.package.name),
        () => [],
      ),
    ),
  );
  const near = closestName(name, new Set(found.flat().filter((n) => n !== name)));
  const needed = from === undefined ? '' : ` (needed by ${from})`;
  return new PlinthError('PLN_E_MARKET_NOT_FOUND', `resolve: registry "${registry.name}" has no plugin "${name}"${needed}`, {
    plugin: name,
    cause,
    hint: near !== undefined ? `did you mean "${near}"? \`plinth ext install ${near}\`` : `check the name: \`plinth ext search <text>\` lists what the registries have`,
    details: { step: 'resolve', registry: registry.name, ...(near !== undefined && { suggestion: near }) },
  });
}

/** `name`, `name@range`, `name@tag`, `@scope/name@range`. */
export function parseSpec(spec: string): { name: string; range: string } {
  const at = spec.lastIndexOf('@');
  if (at > 0) return { name: spec.slice(0, at), range: spec.slice(at + 1) || 'latest' };
  return { name: spec, range: 'latest' };
}

/** A version chosen and staged: its plugin dependencies are read from what was staged (the tarball's manifest), never from the packument. */
export interface StagedPlugin {
  readonly manifest: { readonly dependencies: Readonly<Record<string, string>> };
}

/**
 * The versions to install for `name@range`, dependencies first, each one
 * staged (`stage`: downloaded, verified, extracted, its manifest checked)
 * as soon as it is chosen: a plugin's dependencies are those of the manifest
 * in its tarball, never the packument's `dependencies` (which `npm publish`
 * fills with the package's npm dependencies; plinth's own `registry publish`
 * writes the manifest's there, a hint at most). `present`: what is there
 * already, by name. `registries`: where each name is looked up. `parent`:
 * the plugin that needs `target` (a tarball installed from a file), whose
 * dependencies these are.
 */
export async function planInstall<T extends StagedPlugin>(
  context: DocumentContext & { trust: RegistryTrustKeeper },
  registries: readonly Registry[],
  target: { name: string; range: string },
  present: ReadonlyMap<string, Present>,
  stage: (planned: Planned) => Promise<T>,
  parent?: { readonly name: string; readonly version: string },
): Promise<T[]> {
  const planned = new Map<string, Planned>();
  const order: T[] = [];
  /** Signatures, keys, the index and the revocations before any packument is believed; with an index, the packument is asked for fresh, to match it. */
  const lookup = async (registry: Registry, name: string): Promise<{ trust: RegistryTrust; packument: AbbreviatedPackument }> => {
    const trust = await context.trust.forRegistry(context, registry);
    return { trust, packument: await fetchPackument(trust.index ? { ...context, revalidate: true } : context, registry, name) };
  };
  const visit = async (name: string, range: string, parent: Planned | undefined, from: string | undefined): Promise<void> => {
    const chosen = planned.get(name);
    if (chosen) {
      if (from !== undefined && !satisfiesRange(chosen.version, range)) throw conflict(name, range, from, `${chosen.version} is being installed (${chosen.dependency ? `needed by another plugin at ${chosen.range}` : `you asked for ${chosen.range}`})`);
      return;
    }
    const there = present.get(name);
    if (from !== undefined && there) {
      if (satisfiesRange(there.version, range)) return;
      const fix = there.source === 'builtin' ? `the builtin "${name}" is ${there.version}: use a version of ${from.split('@')[0]} written for it` : `run \`plinth ext update ${name} --latest\` first, or install another version of ${from.split('@')[0]}`;
      throw conflict(name, range, from, `${there.source} ${name}@${there.version} is there`, fix);
    }
    const registry = parent ? dependencyRegistry(registries, name, parent) : registryFor(registries, name);
    const { trust, packument } = await lookup(registry, name).catch(async (error: unknown) => {
      if (!isPlinthError(error) || error.code !== 'PLN_E_MARKET_NOT_FOUND') throw error;
      if (parent && registry === parent.registry) await refuseOtherRegistry(context, registries, name, range, parent);
      throw await notOnRegistry(context, registry, name, from, error);
    });
    const version = pickVersion(packument, range, registry, from, new Set(trust.revoked.filter((r) => r.name === name).map((r) => r.version)));
    const revoked = trust.revoked.find((r) => r.name === name && r.version === version.version);
    if (revoked) throw revokedError('resolve', registry, revoked, revoked.use ?? replacementFor(trust, registry, packument), `not installed${from ? ` (needed by ${from})` : ''}`);
    const dist = version.dist;
    const integrity = integrityOf(version);
    const signature = checkVersion(trust, registry, packument, version, context.notes);
    const entry: Planned = {
      name,
      version: version.version,
      registry,
      tarball: resolveTarballUrl(registry.url.href, dist.tarball),
      integrity,
      range,
      dependency: from !== undefined,
      // Not part of npm's dist; a registry that states the tarball's size gets it checked.
      ...(typeof (dist as Record<string, unknown>).size === 'number' && { size: (dist as Record<string, unknown>).size as number }),
      ...(signature && { signature }),
    };
    planned.set(name, entry);
    // Downloaded and checked now: what it depends on is in its manifest.
    const staged = await stage(entry);
    for (const [dep, depRange] of Object.entries(staged.manifest.dependencies)) await visit(dep, depRange, entry, `${entry.name}@${entry.version}`);
    order.push(staged);
  };
  await visit(target.name, target.range, undefined, parent && `${parent.name}@${parent.version}`);
  return order;
}

/**
 * `dist.integrity`. A version without one (an old npm packument lists only the sha1 `shasum`) is
 * refused here, before its signature or tarball is looked at: `PLN_E_INTEGRITY_WEAK` for a shasum
 * alone, `PLN_E_INTEGRITY_INVALID` for nothing at all.
 */
function integrityOf(version: AbbreviatedVersion): string {
  return version.dist.integrity ?? parseIntegrity(shasumIntegrity(version.dist.shasum)).integrity;
}

/** Where a dependency is looked up: the registry configured for its `@scope`, if any (the user chose it), else its dependent's registry. */
function dependencyRegistry(registries: readonly Registry[], name: string, parent: Planned): Registry {
  const scope = name.startsWith('@') ? name.slice(0, name.indexOf('/')) : undefined;
  return (scope && registries.find((r) => r.scope === scope)) || parent.registry;
}

/**
 * The dependent's registry does not have `name`: when the registry the name
 * would otherwise go to has it, that is refused (it may be a public plugin
 * squatting a private name), saying how to choose it on purpose.
 */
async function refuseOtherRegistry(context: DocumentContext, registries: readonly Registry[], name: string, range: string, parent: Planned): Promise<void> {
  let other: Registry;
  try {
    other = registryFor(registries, name);
  } catch {
    return;
  }
  if (other.url.href === parent.registry.url.href) return;
  // Only whether it is there: nothing of it is believed or installed.
  const there = await fetchPackument({ ...context, notes: [] }, other, name).then(
    () => true,
    () => false,
  );
  if (!there) return;
  const from = `${parent.name}@${parent.version}`;
  throw new PlinthError('PLN_E_MARKET_DEPENDENCY_REGISTRY', `resolve: ${from} (from registry "${parent.registry.name}") needs ${name}@${range}, which registry "${parent.registry.name}" does not have; registry "${other.name}" has a plugin of that name: refused, since a dependency comes from its dependent's registry (another registry's plugin of the same name may be someone else's)`, {
    plugin: name,
    hint: `nothing was installed; if ${name} of registry "${other.name}" is the one ${parent.name} means, install it yourself first (\`plinth ext install ${name}@${range}\`), then run this command again; otherwise ask the operator of registry "${parent.registry.name}" to publish ${name} there`,
    details: { step: 'resolve', plugin: name, range, neededBy: from, registry: parent.registry.name, other: other.name },
  });
}

/**
 * The version `range` (or the dist-tag of that name) selects among those this
 * kernel can run, passing over `revoked` versions within a range; a tag, or a
 * range only revoked versions match, gives the revoked version (the caller
 * refuses it, saying what to use instead).
 */
export function pickVersion(packument: AbbreviatedPackument, range: string, registry: Registry, from?: string, revoked: ReadonlySet<string> = new Set()): AbbreviatedVersion {
  const tagged = packument['dist-tags'][range];
  const versions = Object.values(packument.versions);
  const runnable = versions.filter((v) => v.kernel === undefined || semver.satisfies(KERNEL_API_VERSION, v.kernel, { includePrerelease: true }));
  if (tagged !== undefined) {
    const version = packument.versions[tagged];
    if (version && runnable.includes(version)) return version;
    if (version) throw noMatch(packument, range, registry, `its "${range}" tag is ${tagged}, which needs kernel ${version.kernel} (this plinth's kernel API is ${KERNEL_API_VERSION})`, from);
    throw noMatch(packument, range, registry, `its "${range}" tag names ${tagged}, which it does not list`, from);
  }
  if (semver.validRange(range) === null) throw noMatch(packument, range, registry, `"${range}" is neither a semver range nor one of its tags (${Object.keys(packument['dist-tags']).join(', ') || 'none'})`, from);
  const fit = (list: readonly AbbreviatedVersion[]) => semver.maxSatisfying(list.filter((v) => v.deprecated === undefined).map((v) => v.version), range) ?? semver.maxSatisfying(list.map((v) => v.version), range);
  const best = fit(runnable.filter((v) => !revoked.has(v.version))) ?? fit(runnable);
  if (best !== null) return packument.versions[best]!;
  const ignoringKernel = fit(versions);
  if (ignoringKernel !== null) {
    throw noMatch(packument, range, registry, `${ignoringKernel} matches but needs kernel ${packument.versions[ignoringKernel]!.kernel}, and this plinth's kernel API is ${KERNEL_API_VERSION}`, from);
  }
  throw noMatch(packument, range, registry, `no version matches (it has ${versions.map((v) => v.version).sort(semver.compare).join(', ') || 'none'})`, from);
}

function satisfiesRange(version: string, range: string): boolean {
  return semver.validRange(range) === null ? false : semver.satisfies(version, range, { includePrerelease: true });
}

function noMatch(packument: AbbreviatedPackument, range: string, registry: Registry, why: string, from?: string): PlinthError {
  return new PlinthError('PLN_E_MARKET_NO_MATCH', `resolve: ${packument.name}@${range}${from ? ` (needed by ${from})` : ''} on registry "${registry.name}": ${why}`, {
    hint: `\`plinth ext search ${packument.name}\` shows what the registries have; ask for another range`,
    details: { step: 'resolve', plugin: packument.name, range, registry: registry.name },
  });
}

function conflict(name: string, range: string, from: string, what: string, fix?: string): PlinthError {
  return new PlinthError('PLN_E_MARKET_CONFLICT', `resolve: ${from} needs ${name}@${range}, but ${what}`, {
    hint: fix ?? `install a version of ${from.split('@')[0]} that accepts the ${name} being installed`,
    details: { step: 'resolve', plugin: name, range, neededBy: from },
  });
}
