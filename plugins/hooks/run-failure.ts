/**
 * What fixes a hook that ran and failed. A failed run whose `onError` blocks
 * the event is reported like a guard that could not run, with a code and a
 * fix (`blockedBy.code`, `blockedBy.fix`), not like a hook that decided no:
 * the person reading the block needs to know it is the hook that is broken,
 * and how to mend it.
 */
import type { HookFailure } from 'plinth/sdk';

/** The code of a block caused by a hook's failed run (docs/errors.md). */
export const RUN_FAILED_CODE = 'PLN_E_HOOK_RUN_FAILED';

const TRACE = '`plinth hooks trace` shows its recent runs with their stderr';

/** What to do about `failure` of hook `id`; undefined for what is not a failed run (a skip, a decision). */
export function runFailureFix(id: string, failure: HookFailure | undefined): string | undefined {
  switch (failure) {
    case 'timeout':
      return `make hook ${id} answer sooner, or give it a longer "timeout" (ms) in its definition; ${TRACE}`;
    case 'invalid_json':
    case 'invalid_output':
      return `make hook ${id} print one JSON response on stdout and nothing else, such as {"allow": true} or {"allow": false, "message": "why"} (logs go to stderr); ${TRACE}`;
    case 'exit_nonzero':
      return `hook ${id} exited with an error (the message has its exit code and stderr): fix the script; to block on purpose it answers {"allow": false, "message": "why"}; ${TRACE}`;
    case 'crashed':
      return `hook ${id} was killed by a signal it did not get from plinth: check the script and what it runs; ${TRACE}`;
    case 'output_too_large':
      return `make hook ${id} print less on stdout and stderr than the hooks setting maxOutputBytes allows (user settings), or raise it`;
    case 'spawn_failed':
      return `check the "command", "args" and "cwd" of hook ${id}; ${TRACE}`;
    case 'request_failed':
      return `hook ${id}'s request failed (the message has the status or the error): fix the server, the tool or the model service it asks; to block on purpose it answers a block in its body; ${TRACE}`;
    case 'rate_limited':
    case 'cooldown':
      return `hook ${id} ran more often than its "rateLimit" (or the hooks setting perMinute) allows: wait, or raise the limit`;
    case 'conflict':
      return `make the hooks that run in parallel with ${id} change different context fields, or run them one after the other (without "parallel")`;
    default:
      return undefined;
  }
}
