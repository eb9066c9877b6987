/** "Did you mean" for names a person typed: settings keys, event names, commands. */

/**
 * The name in `known` closest to `name`, when it is at most 2 edits away
 * (insertions, deletions, substitutions; case ignored); `undefined` when none
 * is. Ties go to the first in `known`.
 *
 * @example
 * closestName('comand', ['command', 'args', 'env']); // 'command'
 * closestName('befor_tool', EVENTS); // 'before_tool'
 * closestName('xyz', ['command']); // undefined
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  const typed = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = MAX_DISTANCE + 1;
  for (const candidate of known) {
    const d = distance(typed, candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Farther than this, a suggestion is more often wrong than helpful. */
const MAX_DISTANCE = 2;

/** Levenshtein distance, one row at a time. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
