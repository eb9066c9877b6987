/** Types of plugin resolution: what `resolve` is given, and its working model of candidates. */
import type { Range, SemVer } from 'semver';
import type { PlinthError } from '../../sdk/errors.js';
import type { Candidate } from '../types.js';

/** What `resolve` works from. */
export interface ResolveInput {
  readonly candidates: readonly Candidate[];
  /** Manifests discovery could not use; passed through, and named when a plugin needs one. */
  readonly invalid?: readonly PlinthError[];
  /** The kernel API version every `kernel` range is checked against. */
  readonly kernelVersion: string;
  /** Disabled plugin names, each with where it was disabled (e.g. `user settings`). */
  readonly disabled?: ReadonlyMap<string, string>;
}

/** A candidate during resolution. */
export interface Node {
  readonly candidate: Candidate;
  readonly name: string;
  readonly version: SemVer;
  /** Dependencies, sorted by name so that every walk is deterministic. */
  readonly deps: readonly Dep[];
  death: Death | undefined;
  /** Kept once built, so that every report of this node shares one error; see `errorOf`. */
  error: PlinthError | undefined;
}

export interface Dep {
  readonly name: string;
  readonly range: string;
  readonly test: Range;
}

/** A range one chosen plugin asks of another name. */
export interface Ask {
  readonly from: Node;
  readonly dep: Dep;
}

/** Why a candidate cannot load. `via`: a dependency cannot load, see that node. */
export type Death =
  | { readonly kind: 'kernel' }
  | { readonly kind: 'disabled'; readonly where: string }
  | { readonly kind: 'missing'; readonly dep: Dep }
  | { readonly kind: 'via'; readonly dep: Dep; readonly node: Node }
  | { readonly kind: 'conflict'; readonly dep: Dep; readonly asks: readonly Ask[]; readonly chosen: Node | undefined }
  | { readonly kind: 'cycle'; readonly cycle: readonly string[]; readonly members: readonly string[] };
