/**
 * What an installed git source (a git URL, a marketplace's git entry or folder) would update to, for
 * `ext outdated` and `ext update`: the marketplace's entry as its last `ext marketplace update` read it,
 * else new commits on the recorded branch, else, for a plugin installed at a semver tag, the newest
 * semver tag (as Gemini CLI updates extensions from tags). A branch that moved to a commit that does not
 * descend from the one installed (a force-push, a rewritten history), or a tag that now points at
 * another commit, is `rewritten`: reported, never followed unless the user accepts it. A new version
 * younger than the policy's minimum release age is `held`.
 */
import { join } from 'node:path';
import semver from 'semver';
import { type LockEntry, PlinthError, safeLine } from 'plinth/sdk';
import { COMMIT, type GitOptions, headDate, lsRemote, probe } from './git.js';
import type { Marketplaces } from './marketplaces.js';
import { type Catalogue, type CatalogueEntry, gitUrlOf } from './peer-catalogue.js';
import type { MarketplacePolicy } from './policy.js';

/** Where a git-sourced plugin would go. */
export interface GitFollow {
  readonly status: 'current' | 'newer' | 'rewritten' | 'held' | 'pinned' | 'unfollowed';
  /** The git URL followed (the marketplace's, for one of its folders). */
  readonly url?: string;
  /** The ref to install at: the same branch, or the newer tag. */
  readonly ref?: string;
  /** The commit to install. */
  readonly commit?: string;
  /** Its commit date, ms. */
  readonly date?: number;
  /** The version the marketplace's entry names, when it names one. */
  readonly version?: string;
  /** What happened (rewritten, held, pinned). */
  readonly reason?: string;
  /** For a marketplace entry: it, its marketplace and catalogue. */
  readonly market?: { readonly name: string; readonly entry: CatalogueEntry; readonly catalogue: Catalogue };
}

export interface FollowContext {
  readonly marketplaces: Marketplaces;
  readonly policy: MarketplacePolicy;
  readonly git: GitOptions;
  /** A folder of its own for each fetch (removed by the caller). */
  readonly scratch: () => string;
}

/** Where `entry` (installed from git or a marketplace's folder) would update to. */
export async function followGit(entry: LockEntry, context: FollowContext): Promise<GitFollow> {
  const source = entry.source;
  if (!source || (source.kind !== 'git' && source.kind !== 'local')) return { status: 'unfollowed' };
  const releasedBy = context.policy.releasedBy();
  if (source.marketplace !== undefined) {
    const record = await context.marketplaces.get(source.marketplace);
    context.policy.check({ name: record.name, url: record.source.kind === 'path' ? record.source.path : record.source.url }, `marketplace "${record.name}"`);
    const catalogue = await context.marketplaces.catalogue(record);
    const found = catalogue.plugins.find((p) => p.name === entry.name);
    if (!found) throw new PlinthError('PLN_E_MARKETPLACE_UNKNOWN', `${entry.name}: marketplace "${record.name}" no longer lists it`, { plugin: entry.name, hint: `\`plinth ext marketplace update ${record.name}\` reads its catalogue again; \`plinth ext uninstall ${entry.name}\` removes it`, details: { step: 'resolve', marketplace: record.name } });
    const market = { name: record.name, entry: found, catalogue };
    const src = found.source;
    if (source.kind === 'local') {
      // A folder of the marketplace: it moves with the marketplace's commit, as `ext marketplace update` read it.
      if (!record.commit || record.commit === source.commit) return { status: 'current', market };
      const root = context.marketplaces.rootOf(record);
      const date = root ? await headDate(root, context.git) : undefined;
      if (releasedBy !== undefined && date !== undefined && date > releasedBy) return { status: 'held', commit: record.commit, date, market, reason: held(date, context.policy) };
      return { status: 'newer', ...(record.source.kind === 'git' && { url: record.source.url }), commit: record.commit, ...(date !== undefined && { date }), ...(found.version && { version: found.version }), market };
    }
    if (typeof src === 'object' && (src.source === 'npm' || src.source === 'archive' || src.source === 'local')) return { status: 'unfollowed', market };
    const git = typeof src === 'string' ? { url: gitUrlOf(src), ref: undefined, sha: undefined } : src.source === 'github' ? { url: gitUrlOf(src.repo), ref: src.ref, sha: src.sha } : { url: gitUrlOf(src.url), ref: src.ref, sha: src.sha };
    context.policy.check({ url: git.url }, `git repository ${safeLine(git.url)}`);
    if (git.sha !== undefined) {
      // The entry pins a commit: its publisher's choice, followed as the catalogue says.
      if (git.sha === source.commit) return { status: 'current', market };
      const probed = await probe(git.url, context.scratch(), git.sha, undefined, context.git);
      if (releasedBy !== undefined && probed.date > releasedBy) return { status: 'held', url: git.url, commit: probed.commit, date: probed.date, market, reason: held(probed.date, context.policy) };
      return { status: 'newer', url: git.url, ...(git.ref && { ref: git.ref }), commit: probed.commit, date: probed.date, ...(found.version && { version: found.version }), market };
    }
    context.policy.checkPinned(false, `${entry.name}@${record.name}`, `ask the marketplace's publisher to pin a sha in its entry; the installed commit ${source.commit?.slice(0, 12) ?? '?'} stays`);
    // The catalogue's ref is followed as it says: no newer tag than the one it names.
    const followed = await followRef(git.url, git.ref, source, context, git.ref === source.ref, false);
    return { ...followed, ...(found.version && { version: found.version }), market };
  }
  if (source.kind !== 'git' || source.url === undefined) return { status: 'unfollowed' };
  context.policy.check({ url: source.url }, `git repository ${safeLine(source.url)}`);
  if (source.ref !== undefined && COMMIT.test(source.ref)) return { status: 'pinned', reason: `installed at the commit ${source.ref.slice(0, 12)}: nothing to follow` };
  context.policy.checkPinned(false, `${entry.name} (${safeLine(source.url)}${source.ref ? `#${source.ref}` : ''})`, `install a commit id: \`plinth ext install ${safeLine(source.url)}#<commit>\``);
  return followRef(source.url, source.ref, source, context, true, true);
}

/**
 * A branch (or the default one) or a tag of `url`: `sameRef` when it is the ref the plugin was installed at (then only a
 * fast-forward is followed); `newerTags`: a semver tag moves on to the newest semver tag (a git URL installed at a tag).
 */
async function followRef(url: string, ref: string | undefined, installed: NonNullable<LockEntry['source']>, context: FollowContext, sameRef: boolean, newerTags: boolean): Promise<GitFollow> {
  const recorded = installed.commit;
  const releasedBy = context.policy.releasedBy();
  const refs = await lsRemote(url, context.git);
  if (ref !== undefined && refs.tags.has(ref)) {
    const tagged = refs.tags.get(ref)!;
    const current = newerTags ? semver.clean(ref, { loose: true }) : null;
    if (current !== null) {
      // The newest semver tag above it (no pre-release unless the installed one is one), old enough for the policy.
      const newer = [...refs.tags.keys()]
        .map((tag) => ({ tag, version: semver.clean(tag, { loose: true }) }))
        .filter((t): t is { tag: string; version: string } => t.version !== null && semver.gt(t.version, current) && (semver.prerelease(t.version) === null || semver.prerelease(current) !== null))
        .sort((a, b) => semver.rcompare(a.version, b.version));
      let youngest: number | undefined;
      for (const { tag } of newer) {
        const probed = await probe(url, context.scratch(), `refs/tags/${tag}`, undefined, context.git);
        if (releasedBy !== undefined && probed.date > releasedBy) {
          youngest ??= probed.date;
          continue;
        }
        return { status: 'newer', url, ref: tag, commit: probed.commit, date: probed.date };
      }
      if (youngest !== undefined) return { status: 'held', url, ref: newer[0]!.tag, reason: `${held(youngest, context.policy)}; tag ${newer[0]!.tag} and any newer one` };
    }
    if (sameRef && tagged === recorded) return { status: 'current' };
    const probed = await probe(url, context.scratch(), `refs/tags/${ref}`, undefined, context.git);
    if (!sameRef) {
      // Another tag than the one installed (the marketplace's entry names it now).
      if (releasedBy !== undefined && probed.date > releasedBy) return { status: 'held', url, ref, commit: probed.commit, date: probed.date, reason: held(probed.date, context.policy) };
      return { status: 'newer', url, ref, commit: probed.commit, date: probed.date };
    }
    return { status: 'rewritten', url, ref, commit: probed.commit, date: probed.date, reason: `tag ${ref} now points at ${probed.commit.slice(0, 12)}, not at ${recorded?.slice(0, 12) ?? '?'} it was installed from (the tag was moved)` };
  }
  const target = ref === undefined ? refs.head : refs.heads.get(ref);
  if (target === undefined) {
    throw new PlinthError('PLN_E_MARKET_GIT', `git: ${safeLine(url)} has no ${ref === undefined ? 'default branch' : `branch or tag "${safeLine(ref)}"`} any more`, { hint: `\`git ls-remote ${safeLine(url)}\` lists what it has; install one of them: \`plinth ext install ${safeLine(url)}#<ref>\``, details: { step: 'resolve', url, ...(ref && { ref }) } });
  }
  if (sameRef && target === recorded) return { status: 'current' };
  const probed = await probe(url, context.scratch(), ref === undefined ? 'HEAD' : `refs/heads/${ref}`, sameRef ? recorded : undefined, context.git);
  const name = ref === undefined ? 'the default branch' : `branch ${ref}`;
  if (sameRef && probed.descends === false) {
    return { status: 'rewritten', url, ...(ref && { ref }), commit: probed.commit, date: probed.date, reason: `${name} moved to ${probed.commit.slice(0, 12)}, which does not descend from ${recorded?.slice(0, 12) ?? '?'} it was installed from (a force-push or a rewritten history)` };
  }
  if (releasedBy !== undefined && probed.date > releasedBy) return { status: 'held', url, ...(ref && { ref }), commit: probed.commit, date: probed.date, reason: held(probed.date, context.policy) };
  return { status: 'newer', url, ...(ref && { ref }), commit: probed.commit, date: probed.date };
}

function held(date: number, policy: MarketplacePolicy): string {
  return `its newest commit is from ${new Date(date).toISOString()}, younger than the ${policy.settings.minReleaseAgeDays} day(s) the setting plugins.marketplace.minReleaseAgeDays requires`;
}

/** A scratch folder name under `base`. */
export function scratchIn(base: string): () => string {
  let index = 0;
  return () => join(base, `probe-${index++}`);
}
