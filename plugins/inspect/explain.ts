/**
 * Why a plugin name resolved the way it did, for `plinth plugins why <name>`.
 * Works from a `Resolution` alone (the kernel's `inspect().resolution`), so it
 * can explain one that was computed earlier.
 */
import type { Candidate, ErrorCode, PlinthError, Request, Resolution } from 'plinth/sdk';
import semver from 'semver';

/** Why one candidate was or was not chosen. */
export type CandidateStatus =
  | 'chosen'
  | 'lower'
  | 'shadowed'
  | 'unsatisfied'
  | 'kernel'
  | 'disabled'
  | 'cannot-load'
  | 'not-chosen';

/** One candidate of a plugin, and why it was or was not chosen. */
export interface CandidateExplanation {
  readonly candidate: Candidate;
  readonly status: CandidateStatus;
  /** One line for people, e.g. `does not satisfy "a@1.0.0" ^1.0.0`. */
  readonly reason: string;
  /** Why this candidate cannot load, for `kernel`, `disabled` and `cannot-load`. */
  readonly error?: PlinthError;
}

/** One dependency of a plugin and what it resolved to. */
export interface DependencyExplanation {
  readonly name: string;
  readonly range: string;
  /** The candidate that loads for it, if any. */
  readonly resolved: Candidate | undefined;
  /** Why it is not usable: its exclusion code, `PLN_E_DEP_MISSING` or `PLN_E_DEP_CONFLICT`. */
  readonly problem: ErrorCode | undefined;
}

/** Everything `plinth plugins why <name>` shows. */
export interface Explanation {
  readonly name: string;
  /** The candidate that loads, if the plugin loads. */
  readonly chosen: Candidate | undefined;
  /** Every candidate, highest version first. */
  readonly candidates: readonly CandidateExplanation[];
  /** Ranges asked of this plugin by the plugins that load. */
  readonly requestedBy: readonly Request[];
  /** Dependencies of the chosen candidate (or of the one that would have been chosen). */
  readonly dependencies: readonly DependencyExplanation[];
  /** Why the plugin does not load, if it does not. */
  readonly exclusion: PlinthError | undefined;
  /** Folders of this name that were not candidates at all: an invalid manifest, a workspace plugin shadowing a builtin or the user's (`PLN_E_PLUGIN_SHADOWS_…`). */
  readonly ignored: readonly PlinthError[];
}

/** Explains the resolution of one plugin name; `undefined` when the name was never seen or asked for. */
export function explain(resolution: Resolution, name: string): Explanation | undefined {
  const list = resolution.candidates.get(name) ?? [];
  const requestedBy = resolution.requests.get(name) ?? [];
  const ignored = resolution.invalid.filter((e) => e.plugin === name);
  if (list.length === 0 && requestedBy.length === 0 && ignored.length === 0) return undefined;
  const loaded = new Map(resolution.plugins.map((c) => [c.manifest.name, c]));
  const excluded = new Map(resolution.excluded.map((e) => [e.name, e]));
  const rejected = new Map(resolution.rejected.filter((r) => r.name === name).map((r) => [r.candidate, r.error]));
  const chosen = loaded.get(name);
  const exclusion = excluded.get(name);
  const reference = chosen ?? exclusion?.candidate;

  const status = (candidate: Candidate): CandidateExplanation => {
    const error = rejected.get(candidate);
    if (candidate === chosen) return { candidate, status: 'chosen', reason: 'chosen' };
    if (error?.code === 'PLN_E_KERNEL_INCOMPATIBLE') {
      return { candidate, status: 'kernel', reason: `does not accept kernel ${resolution.kernelVersion} (wants ${candidate.manifest.kernel})`, error };
    }
    if (error?.code === 'PLN_E_PLUGIN_DISABLED') return { candidate, status: 'disabled', reason: error.message, error };
    if (error !== undefined) return { candidate, status: 'cannot-load', reason: `cannot load (${error.code}): ${error.message}`, error };
    if (reference === undefined) return { candidate, status: 'not-chosen', reason: 'not chosen' };
    const refused = requestedBy.find((r) => !semver.satisfies(candidate.manifest.version, r.range));
    if (refused !== undefined) return { candidate, status: 'unsatisfied', reason: `does not satisfy "${refused.from}" ${refused.range}` };
    const chosenVersion = reference.manifest.version;
    if (semver.eq(candidate.manifest.version, chosenVersion)) {
      const reason =
        reference.source === candidate.source
          ? `same version, found first at ${reference.dir}`
          : `same version in a higher-precedence source (${reference.source})`;
      return { candidate, status: 'shadowed', reason };
    }
    if (semver.lt(candidate.manifest.version, chosenVersion)) {
      return { candidate, status: 'lower', reason: `lower than the chosen version ${chosenVersion}` };
    }
    return { candidate, status: 'not-chosen', reason: 'not chosen' };
  };

  const owner = reference ?? list[0];
  const dependencies = Object.entries(owner?.manifest.dependencies ?? {})
    // Code-point order: the same on every machine.
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([dep, range]): DependencyExplanation => {
      const resolved = loaded.get(dep);
      let problem: ErrorCode | undefined;
      if (resolved !== undefined) problem = semver.satisfies(resolved.manifest.version, range) ? undefined : 'PLN_E_DEP_CONFLICT';
      else problem = excluded.get(dep)?.error.code ?? 'PLN_E_DEP_MISSING';
      return { name: dep, range, resolved, problem };
    });

  return { name, chosen, candidates: list.map(status), requestedBy, dependencies, exclusion: exclusion?.error, ignored };
}
