/**
 * What plugin resolution decided, as data: the candidates found, the plugins
 * that load and why the others do not. The kernel computes it (`kernel.resolution`,
 * the `resolve` hook); inspection tools read it through `kernel.inspect()`.
 */
import type { PlinthError } from './errors.js';
import type { Manifest } from './manifest.js';
import type { PluginDefinition, PluginSource } from './plugin.js';

/** One plugin folder found on disk: a valid manifest and where it lives. */
export interface Candidate {
  readonly manifest: Manifest;
  /** Absolute path of the plugin folder. */
  readonly dir: string;
  /** Absolute path of its manifest.json. */
  readonly file: string;
  readonly source: PluginSource;
  /** Linked with `plinth ext link`: chosen over every other candidate of the same name. */
  readonly linked?: true;
  /** Code given in memory (the test kernel, a host) instead of a `main` module. */
  readonly definition?: PluginDefinition;
}

/** A plugin range asked for by another plugin. */
export interface Request {
  /** The asking plugin's `name@version`. */
  readonly from: string;
  readonly range: string;
}

/** Why one plugin is not in the load order. */
export interface Exclusion {
  readonly name: string;
  /** The candidate that would have been used, when there was one. */
  readonly candidate?: Candidate;
  readonly error: PlinthError;
}

/** The outcome of resolution: what loads, in which order, and why everything else does not. */
export interface Resolution {
  /**
   * Chosen plugins in load order: every plugin comes after its dependencies;
   * where dependencies leave the order open, by source (builtin, user,
   * workspace, path), then by name.
   */
  readonly plugins: readonly Candidate[];
  /** Plugins that cannot load (disabled, missing or conflicting dependency, kernel mismatch, cycle). */
  readonly excluded: readonly Exclusion[];
  /** Every candidate seen, by name, highest version first. */
  readonly candidates: ReadonlyMap<string, readonly Candidate[]>;
  /** Ranges asked of each plugin name by the chosen plugins. */
  readonly requests: ReadonlyMap<string, readonly Request[]>;
  /** Manifests that could not be read or validated, with file and JSON path. */
  readonly invalid: readonly PlinthError[];
  /**
   * Every candidate that cannot load, with the reason, including those of a
   * plugin that loads another version instead (e.g. its newest version needs a
   * missing dependency). The `error` of an excluded plugin is the one of its
   * `Exclusion`.
   */
  readonly rejected: readonly Exclusion[];
  /** The kernel version the plugins' `kernel` ranges were checked against. */
  readonly kernelVersion: string;
}
