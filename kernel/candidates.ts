/** Candidates that do not come from discovery or must not load: inline plugins, project plugins shadowing builtins. */
import { type ManifestInput, manifestError, parseManifest } from '../sdk/manifest.js';
import type { PluginDefinition } from '../sdk/plugin.js';
import { PlinthError } from '../sdk/errors.js';
import { type Candidate, PROJECT_SOURCES } from './types.js';

/** A plugin given in memory rather than as a folder: a manifest and its code. */
export interface InlinePlugin extends PluginDefinition {
  /** `version` defaults to 0.0.0 and `kernel` to `*`. */
  manifest: Omit<ManifestInput, 'version' | 'kernel'> & Partial<Pick<ManifestInput, 'version' | 'kernel'>>;
}

/**
 * Candidates that came with the project (workspace) may not replace a builtin
 * plugin of the same name: a cloned repository could otherwise swap the trust
 * plugin, which decides whether its own code may run, for one that says yes.
 * The user can still do so from `$PLINTH_HOME/plugins` or `--plugin-dir`.
 */
export function withoutShadowing(candidates: readonly Candidate[]): { kept: Candidate[]; shadowing: PlinthError[] } {
  const builtin = new Set(candidates.filter((c) => c.source === 'builtin').map((c) => c.manifest.name));
  const kept: Candidate[] = [];
  const shadowing: PlinthError[] = [];
  for (const candidate of candidates) {
    const { name, version } = candidate.manifest;
    if (!PROJECT_SOURCES.has(candidate.source) || !builtin.has(name)) {
      kept.push(candidate);
      continue;
    }
    shadowing.push(
      new PlinthError('PLN_E_PLUGIN_SHADOWS_BUILTIN', `${candidate.file}: ${candidate.source} plugin "${name}@${version}" has the name of a builtin plugin and is ignored: a project cannot replace plinth's own plugins`, {
        plugin: name,
        hint: `rename it; to replace the builtin "${name}" yourself, put it in $PLINTH_HOME/plugins or pass --plugin-dir`,
        details: { file: candidate.file, source: candidate.source },
      }),
    );
  }
  return { kept, shadowing };
}

export function inlineCandidate(plugin: InlinePlugin): Candidate {
  const manifest = parseManifestOrThrow({ version: '0.0.0', kernel: '*', ...plugin.manifest, main: undefined });
  return { manifest, dir: '', file: '', source: 'path', definition: { setup: plugin.setup.bind(plugin) } };
}

export function parseManifestOrThrow(data: unknown) {
  const parsed = parseManifest(data);
  if (parsed.ok) return parsed.manifest;
  throw manifestError(data, parsed.issues);
}
