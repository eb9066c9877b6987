/**
 * Glob lists as plinth reads them everywhere (the hooks' `matcher.tools` and
 * `matcher.files`, the file watcher's include and ignore lists):
 *
 * - picomatch globs, `dot: true`, case-sensitive;
 * - several patterns: at least one positive pattern matches (or there are only
 *   `!negative` ones) and no negative pattern matches;
 * - with `basename: true` (file lists), a pattern without a slash matches the
 *   base name anywhere (`*.ts` matches `src/a.ts`), as lint-staged does;
 * - a pattern picomatch refuses matches nothing (validators report it).
 *
 * picomatch is required on the first compile, not when the sdk is imported:
 * a host that matches nothing never loads it.
 */
import { createRequire } from 'node:module';
import type picomatchModule from 'picomatch';

/** A compiled glob list: whether a value (a tool name, a `/`-separated relative path) matches. */
export type GlobTest = (value: string) => boolean;

/** Options of {@link globTest}. */
export interface GlobOptions {
  /** A pattern without a slash matches the last path segment (file lists); default false. */
  readonly basename?: boolean;
}

const NEVER: GlobTest = () => false;

let loaded: typeof picomatchModule | undefined;
function picomatch(): typeof picomatchModule {
  loaded ??= createRequire(import.meta.url)('picomatch') as typeof picomatchModule;
  return loaded;
}

/** Compiles `patterns` with the rules above; an empty list matches everything. */
export function globTest(patterns: readonly string[], options: GlobOptions = {}): GlobTest {
  if (patterns.length === 0) return () => true;
  const positive: GlobTest[] = [];
  const negative: GlobTest[] = [];
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!') && pattern.length > 1;
    const body = negated ? pattern.slice(1) : pattern;
    let test: GlobTest;
    try {
      test = picomatch()(body, { dot: true, basename: options.basename === true && !body.includes('/') });
    } catch {
      test = NEVER;
    }
    (negated ? negative : positive).push(test);
  }
  return (value) => (positive.length === 0 || positive.some((t) => t(value))) && !negative.some((t) => t(value));
}
