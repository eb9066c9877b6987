/** Types shared by the kernel's modules: where plugins come from and what resolution decided (declared in the sdk). */
import type { PluginSource } from '../sdk/plugin.js';

export type { PluginSource };
export type { Candidate, Exclusion, Request, Resolution } from '../sdk/resolution.js';

export const SOURCE_PRECEDENCE: readonly PluginSource[] = ['builtin', 'user', 'workspace', 'path'];

/**
 * Sources whose plugins come with a project (a cloned repository) rather than
 * being chosen by the user: their code is imported only while some plugin
 * checks loading (taps `load`; the builtin trust plugin does), they cannot
 * replace a builtin plugin or one of the user's (any other source) of the same
 * name, a guard's events stay blocked while it is down whatever they declare,
 * and workspace settings cannot make them a service's provider.
 */
export const PROJECT_SOURCES: ReadonlySet<PluginSource> = new Set<PluginSource>(['workspace']);
