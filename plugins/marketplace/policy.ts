/**
 * The policy a user (or an organisation, through the user's settings file) sets on sources outside
 * the registries: the marketplaces and git repositories allowed and blocked, whether a git source must
 * be pinned to a commit, and how old a new version must be before `ext update` takes it. These are
 * the marketplace plugin's settings of `"scope": "user"`: a workspace's settings cannot set them.
 */
import { PlinthError, safeLine } from 'plinth/sdk';

export interface PolicySettings {
  /** Patterns (`owner/*`, `github.com/acme/*`, `acme-*`): when any is given, a source must match one. */
  readonly allowedMarketplaces: readonly string[];
  /** Patterns refused; blocked wins over allowed. */
  readonly blockedMarketplaces: readonly string[];
  /** Git sources must name a commit (a marketplace entry's `sha`, a commit id as the ref). */
  readonly requirePinnedCommit: boolean;
  /** A new version (a commit's or tag's commit date, an npm version's publish time) younger than this many days is not updated to. */
  readonly minReleaseAgeDays: number;
}

/** What a source is matched by: a marketplace's name, and the host and path of its URL (or its folder). */
export interface PolicySubject {
  readonly name?: string;
  readonly url?: string;
}

/**
 * The strings a pattern is compared with: the name, and the URL as `host[:port]/path` without `.git`
 * (`github.com/acme/tools`), or a folder's path. A pattern matches one of them whole, or its end from a
 * `/` on: `acme/*` matches `github.com/acme/tools` and `/srv/git/acme/tools`.
 */
export function subjectsOf(subject: PolicySubject): string[] {
  const out: string[] = [];
  if (subject.name) out.push(subject.name);
  if (subject.url) {
    const url = subject.url.replace(/^git\+/, '');
    const scp = /^[\w.-]+@([\w.-]+):(.+)$/.exec(url);
    let where: string;
    if (scp) where = `${scp[1]}/${scp[2]}`;
    else {
      try {
        const parsed = new URL(url);
        where = parsed.protocol === 'file:' ? decodeURIComponent(parsed.pathname) : `${parsed.host}${parsed.pathname}`;
      } catch {
        where = url;
      }
    }
    out.push(where.replace(/\/+$/, '').replace(/\.git$/, ''));
  }
  return out;
}

/** Whether `pattern` (`*`: any text but `/`; `**`: any text) matches `subject` whole or a `/`-aligned end of it. */
export function matches(pattern: string, subject: string): boolean {
  const body = pattern
    .split('**')
    .map((part) => part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*'))
    .join('.*');
  return new RegExp(`^(?:${body}|.*/${body.replace(/^\//, '')})$`, 'i').test(subject);
}

export class MarketplacePolicy {
  constructor(readonly settings: PolicySettings) {}

  /**
   * Refuses a marketplace or git source the policy blocks, or one no allowed pattern matches (when some are set).
   * `what` names it in the message (`marketplace "x"`, `git repository <url>`).
   */
  check(subject: PolicySubject, what: string): void {
    const subjects = subjectsOf(subject);
    const blocked = this.settings.blockedMarketplaces.find((p) => subjects.some((s) => matches(p, s)));
    if (blocked !== undefined) {
      throw new PlinthError('PLN_E_MARKET_POLICY', `${what} is blocked by the setting plugins.marketplace.blockedMarketplaces ("${safeLine(blocked)}"): nothing was fetched or installed`, {
        hint: 'the user settings (settings.json in your plinth home) block it; remove the pattern there if this source is meant to be used',
        details: { step: 'resolve', setting: 'blockedMarketplaces', pattern: blocked, source: subjects },
      });
    }
    const allowed = this.settings.allowedMarketplaces;
    if (allowed.length > 0 && !allowed.some((p) => subjects.some((s) => matches(p, s)))) {
      throw new PlinthError('PLN_E_MARKET_POLICY', `${what} is not among the sources the setting plugins.marketplace.allowedMarketplaces allows (${allowed.map((p) => `"${safeLine(p)}"`).join(', ')}): nothing was fetched or installed`, {
        hint: 'add a pattern that matches it (its name, owner/repo or host/owner/*) to allowedMarketplaces in the user settings',
        details: { step: 'resolve', setting: 'allowedMarketplaces', source: subjects },
      });
    }
  }

  /** Under `requirePinnedCommit`, refuses a git source not pinned to a commit. */
  checkPinned(pinned: boolean, what: string, fix: string): void {
    if (!this.settings.requirePinnedCommit || pinned) return;
    throw new PlinthError('PLN_E_MARKET_POLICY', `${what} is not pinned to a commit, and the setting plugins.marketplace.requirePinnedCommit requires one: nothing was fetched or installed`, {
      hint: fix,
      details: { step: 'resolve', setting: 'requirePinnedCommit' },
    });
  }

  /** The newest release time (ms since the epoch) a new version may have, or undefined without a minimum age. */
  releasedBy(now = Date.now()): number | undefined {
    return this.settings.minReleaseAgeDays > 0 ? now - this.settings.minReleaseAgeDays * 86_400_000 : undefined;
  }
}
