/** Text for `plugins list`, `plugins why` and `config validate`. */
import { formatTable as table, type KernelInspection, safeLine, type PluginSource, type PluginStatus, type Resolution } from 'plinth/sdk';
import type { Explanation } from './explain.js';
import type { ConfigProblem } from './problems.js';

/** Every plugin folder found, including versions that were not chosen. */
export function candidateRows(resolution: Resolution): Array<{ name: string; version: string; source: PluginSource; dir: string; chosen: boolean }> {
  const chosen = new Set(resolution.plugins);
  return [...resolution.candidates.values()].flat().map((c) => ({ name: c.manifest.name, version: c.manifest.version, source: c.source, dir: c.dir, chosen: chosen.has(c) }));
}

export function formatPluginList(view: KernelInspection, all: boolean): string {
  const rows = view.plugins.map((p) => [p.name, p.version, p.source, p.state, p.error?.code ?? p.provides.join(', ')]);
  const parts = [rows.length > 0 ? table(['PLUGIN', 'VERSION', 'SOURCE', 'STATE', 'PROVIDES / REASON'], rows) : 'No plugins found.'];
  if (all) {
    const others = candidateRows(view.resolution).filter((c) => !c.chosen);
    if (others.length > 0) {
      parts.push('', 'Found but not chosen:', table(['PLUGIN', 'VERSION', 'SOURCE', 'FOLDER'], others.map((c) => [c.name, c.version, c.source, c.dir])));
    }
  }
  for (const invalid of view.invalid) parts.push('', `${invalid.code}: ${invalid.message}`);
  return parts.join('\n');
}

export function formatExplanation(e: Explanation, status: PluginStatus | undefined): string {
  const lines: string[] = [];
  if (e.chosen) {
    lines.push(`${safeLine(e.name)}@${e.chosen.manifest.version} from ${e.chosen.source} (${safeLine(e.chosen.dir)})${status ? `: ${status.state}` : ''}`);
  } else {
    lines.push(`${safeLine(e.name)} does not load.`);
  }
  const error = status?.error ?? (e.exclusion && { code: e.exclusion.code, message: e.exclusion.message });
  if (error) lines.push(`  ${error.code}: ${error.message}`);
  if (e.candidates.length > 0) {
    lines.push('', 'Candidates:');
    // A reason may quote a folder or an error message: one line each, whatever the folder's name holds.
    for (const c of e.candidates) lines.push(`  ${c.candidate.manifest.version.padEnd(10)} ${c.candidate.source.padEnd(9)} ${safeLine(c.reason)}`);
  }
  if (e.ignored.length > 0) {
    lines.push('', 'Ignored (not candidates):');
    for (const error of e.ignored) lines.push(`  ${error.code}: ${error.message}`);
  }
  if (e.requestedBy.length > 0) {
    lines.push('', 'Asked for by:');
    for (const r of e.requestedBy) lines.push(`  ${r.from} wants ${r.range}`);
  }
  if (e.dependencies.length > 0) {
    lines.push('', 'Depends on:');
    for (const d of e.dependencies) {
      const to = d.resolved ? `${d.resolved.manifest.version} (${d.resolved.source})` : 'nothing';
      lines.push(`  ${d.name} ${d.range} → ${to}${d.problem ? `  ${d.problem}` : ''}`);
    }
  }
  return lines.join('\n');
}

/** Text for `config validate`: the files read, then one line per problem (its message names the file and the JSON path). */
export function formatProblems(files: KernelInspection['config']['files'], problems: readonly ConfigProblem[]): string {
  const read = files.filter((f) => f.exists).map((f) => safeLine(f.file));
  const checked = read.length > 0 ? read.join(', ') : 'no settings files';
  if (problems.length === 0) return `Settings are valid (${checked}).`;
  const lines = problems.flatMap((p) => [`  ${p.code}: ${p.message}`, ...(p.hint ? [`    fix: ${p.hint}`] : [])]);
  return [`${problems.length} problem${problems.length === 1 ? '' : 's'} in the settings (${checked}):`, ...lines].join('\n');
}
