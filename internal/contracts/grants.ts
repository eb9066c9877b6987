/**
 * The `grants` service: the user's grants of the permissions plugins declare
 * (provided by the sandbox plugin). The extensions and marketplace commands
 * ask it to review a plugin right after it is enabled, installed or updated,
 * so that the question comes when the user acted, not at its first launch.
 */
import type { Principal } from '../../sdk/contracts/sandbox.js';

/** What a review found, and did. */
export interface GrantReview {
  readonly plugin: string;
  /**
   * `granted`: nothing is missing (already, or answered "always" now);
   * `waiting`: permissions are not granted yet — asked again at its first launch
   * (refused there without a terminal), `command` grants them;
   * `declined`: the user answered no now; `open`: it runs unconfined, nothing to grant.
   */
  readonly state: 'granted' | 'waiting' | 'declined' | 'open';
  /** The permissions not granted, as `<kind> <value>`. */
  readonly missing: readonly string[];
  /** `plinth perms grant <plugin>`. */
  readonly command: string;
  /** Set when this review granted everything declared on the person's word (`grant: true`). */
  readonly grantedNow?: true;
}

/** The `--grant` option of the commands that review (ext install, update, enable). */
export const GRANT_OPTION = {
  grant: { type: 'boolean', description: 'Also grant every permission the plugin declares, as plinth perms grant <name> does' },
} as const;

export interface GrantsService {
  /**
   * Asks on the terminal, now, for what `plugin` declares beyond its grant
   * ("always" or no: the asking process is a command, not the host), and
   * stores an "always". Never asks without a terminal: says what waits.
   * `grant: true` asks nothing and grants everything it declares, as
   * `plinth perms grant <plugin>` does: for a person who said so on the
   * command line (`plinth ext install --grant`). Undefined when no plugin of
   * that name is known.
   */
  review(plugin: string, options?: { readonly signal?: AbortSignal; readonly grant?: boolean }): Promise<GrantReview | undefined>;
  /**
   * What `principal` (a plugin, or the hooks and servers of `settings:workspace`) would
   * be refused for now, asking nobody: the permissions it declares beyond its grant (as
   * `<kind> <value>`) and the `plinth perms grant …` command that grants exactly them.
   * Undefined when nothing is missing (or it runs open). For an approval that shows,
   * before a first start, what the start will also need granted.
   */
  needs?(principal: Principal): Promise<{ readonly missing: readonly string[]; readonly command: string } | undefined>;
}

/** What a command prints after a review (on stderr): nothing when nothing waits. */
export function grantReviewLines(review: GrantReview | undefined): string[] {
  if (review?.grantedNow) return [`plinth: granted ${review.plugin} the permissions it declares (\`plinth perms list ${review.plugin}\` shows them)`];
  if (!review || review.state === 'granted' || review.state === 'open') return [];
  const what = review.missing.length > 0 ? ` (${review.missing.join(', ')})` : '';
  return review.state === 'declined'
    ? [`plinth: ${review.plugin}'s permissions are not granted${what}: it is refused when it runs, until \`${review.command}\``]
    : [`plinth: ${review.plugin} asks for permissions you have not granted${what}: grant them with \`${review.command}\`, or answer when it first runs on a terminal`];
}

declare module '../../sdk/index.js' {
  interface Services {
    /** The user's grants of declared permissions: see internal/contracts/grants.ts. */
    grants: GrantsService;
  }
}
