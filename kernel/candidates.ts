/** Candidates that do not come from discovery or must not load: inline plugins, project plugins shadowing the user's or builtin ones. */
import { type ManifestInput, manifestError, parseManifest } from '../sdk/manifest.js';
import type { PluginDefinition } from '../sdk/plugin.js';
import { PlinthError } from '../sdk/errors.js';
import { safeLine } from '../sdk/format.js';
import { type Candidate, PROJECT_SOURCES } from './types.js';

/** A plugin given in memory rather than as a folder: a manifest and its code. */
export interface InlinePlugin extends PluginDefinition {
  /** `version` defaults to 0.0.0 and `kernel` to `*`. */
  manifest: Omit<ManifestInput, 'version' | 'kernel'> & Partial<Pick<ManifestInput, 'version' | 'kernel'>>;
}

/**
 * Candidates that came with the project (workspace) may not replace a plugin
 * the user has: a builtin one (a cloned repository could otherwise swap the
 * trust plugin, which decides whether its own code may run, for one that says
 * yes), nor one of the user's own (`$PLINTH_HOME/plugins`, installed or not,
 * the user settings' `pluginDirs`, `--plugin-dir`, a link, an inline plugin):
 * a manifest of a higher version would otherwise push out the user's guard or
 * chosen service provider and be refused in its place. Such a candidate is
 * ignored whatever its version, with `PLN_E_PLUGIN_SHADOWS_BUILTIN` or
 * `PLN_E_PLUGIN_SHADOWS_USER`. The user can still replace a builtin from
 * `$PLINTH_HOME/plugins` or `--plugin-dir`.
 */
export function withoutShadowing(candidates: readonly Candidate[]): { kept: Candidate[]; shadowing: PlinthError[] } {
  const own = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    if (PROJECT_SOURCES.has(candidate.source)) continue;
    const list = own.get(candidate.manifest.name) ?? [];
    list.push(candidate);
    own.set(candidate.manifest.name, list);
  }
  const kept: Candidate[] = [];
  const shadowing: PlinthError[] = [];
  for (const candidate of candidates) {
    const mine = own.get(candidate.manifest.name);
    if (!PROJECT_SOURCES.has(candidate.source) || mine === undefined) kept.push(candidate);
    // The same folder named by the user too (`--plugin-dir` on a workspace plugin): it is theirs, nothing to report.
    else if (!mine.some((c) => c.dir === candidate.dir)) shadowing.push(shadowError(candidate, mine));
  }
  return { kept, shadowing };
}

function shadowError(candidate: Candidate, own: readonly Candidate[]): PlinthError {
  const { name, version } = candidate.manifest;
  const file = safeLine(candidate.file);
  const details = { file: candidate.file, source: candidate.source };
  if (own.some((c) => c.source === 'builtin')) {
    return new PlinthError('PLN_E_PLUGIN_SHADOWS_BUILTIN', `${file}: ${candidate.source} plugin "${name}@${version}" has the name of a builtin plugin and is ignored: a project cannot replace plinth's own plugins`, {
      plugin: name,
      hint: `rename it; to replace the builtin "${name}" yourself, put it in $PLINTH_HOME/plugins or pass --plugin-dir`,
      details,
    });
  }
  const where = own.map((c) => `${c.source}${c.dir ? ` ${safeLine(c.dir)}` : ' (in memory)'}`).join(', ');
  return new PlinthError('PLN_E_PLUGIN_SHADOWS_USER', `${file}: ${candidate.source} plugin "${name}@${version}" has the name of your own plugin "${name}" (${where}) and is ignored, whatever its version: a project cannot replace a plugin you installed or named`, {
    plugin: name,
    hint: `rename the project's plugin; to use the project's "${name}" instead of yours, remove yours (plinth ext uninstall ${name}, or its folder) and approve the project's`,
    details: { ...details, shadows: own.map((c) => ({ source: c.source, dir: c.dir })) },
  });
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
