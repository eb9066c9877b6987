/**
 * The question on the terminal when a principal wants permissions it was not
 * granted: what it is, each item it adds, and four answers — once (this
 * launch), for the session (this host process), always (stored), or no.
 */
import { safeLine } from 'plinth/sdk';
import { type PromptIO, askChoice } from 'plinth/internal';
import { type PermissionItem, describeWidening } from './items.js';

export type GrantAnswer = 'once' | 'session' | 'always' | 'no';
export const GRANT_ANSWERS: readonly GrantAnswer[] = ['once', 'session', 'always', 'no'];

/** The last words of the question: what a terminal driver (and a test) waits for. */
export const GRANT_QUESTION = 'Allow? [o]nce, [s]ession, [a]lways, [N]o: ';
/** Asked by a command right after an enable, install or update: "once" and "session" would end with the command. */
export const REVIEW_QUESTION = 'Allow always? [a]lways, [N]o (asked again when it runs): ';

export interface GrantQuestion {
  /** `plugin "greeter" 1.2.0 (downloaded)`, `hook "lint" of the workspace settings`. */
  readonly who: string;
  /** The version that was granted before, when this is an update that widens. */
  readonly grantedVersion?: string;
  readonly items: readonly PermissionItem[];
  /** A review after enable/install/update: only always or no. */
  readonly review?: boolean;
}

/** The text of the question, one line per added item. */
export function grantQuestionText(q: GrantQuestion): string {
  const head = q.grantedVersion === undefined ? `${q.who} asks for these permissions:` : `${q.who} asks for more than you granted to version ${q.grantedVersion}:`;
  return [`plinth: ${safeLine(head)}`, ...q.items.map((item) => `  ${safeLine(describeWidening(item))}`), q.review ? REVIEW_QUESTION : GRANT_QUESTION].join('\n');
}

export function askGrant(q: GrantQuestion, io: PromptIO, signal?: AbortSignal): Promise<GrantAnswer> {
  return askChoice(grantQuestionText(q), q.review ? (['always', 'no'] as const) : GRANT_ANSWERS, 'no', io, signal);
}
