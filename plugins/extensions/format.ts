/** The text `plinth ext …` prints for people; `--json` prints the service's data instead. */
import { type Extension, type ExtensionDetails, type LiveOutcome, type SettingView, formatTable, safeLine } from 'plinth/sdk';

export function extensionTable(list: readonly Extension[]): string {
  const rows = list.map((e) => [e.name, e.version, e.source, e.enabled ? 'yes' : 'no', stateText(e), e.linked ? 'linked' : '', shorten(e.description, 60)]);
  return formatTable(['NAME', 'VERSION', 'SOURCE', 'ENABLED', 'STATE', 'LINKED', 'DESCRIPTION'], rows);
}

export function detailsText(d: ExtensionDetails): string {
  const lines = [`${d.name}@${d.version} (${d.source}${d.linked ? ', linked' : ''})`];
  // Each a line of its own, whatever a folder's name or a description holds: none can print a line of its own.
  if (d.description) lines.push(`  ${safeLine(d.description)}`);
  if (d.dir) lines.push(`  folder:      ${safeLine(d.dir)}`);
  lines.push(`  enabled:     ${d.enabled ? 'yes' : 'no'}${d.enabledFrom ? ` (${d.enabledFrom})` : ''}`);
  lines.push(`  state:       ${d.state}`);
  if (d.error) {
    lines.push(`  error:       ${d.error.code}: ${d.error.message}`);
    if (d.error.hint) lines.push(`  fix:         ${d.error.hint}`);
  }
  if (d.provides.length > 0) lines.push(`  provides:    ${d.provides.join(', ')}`);
  const deps = Object.entries(d.dependencies);
  if (deps.length > 0) lines.push(`  depends on:  ${deps.map(([n, r]) => `${n} ${r}`).join(', ')}`);
  if (d.dependents.length > 0) lines.push(`  needed by:   ${d.dependents.join(', ')} (they stop when it does)`);
  if (d.commands.length > 0) lines.push(`  commands:    ${d.commands.join(', ')}`);
  if (d.hooks.length > 0) lines.push(`  hooks on:    ${d.hooks.join(', ')}`);
  if (d.mcpServers.length > 0) lines.push(`  MCP servers: ${d.mcpServers.join(', ')}`);
  if (d.peer) lines.push(`  made from:   ${safeLine(d.peer.file)} (${d.peer.format === 'claude' ? 'a Claude Code plugin' : d.peer.format === 'codex' ? 'a Codex CLI plugin' : 'a Gemini CLI extension'})`);
  const others = d.candidates.filter((c) => c.dir !== d.dir || c.version !== d.version);
  if (others.length > 0) lines.push(`  also found:  ${others.map((c) => `${c.version} (${c.source}${c.linked ? ', linked' : ''}, ${c.dir ? safeLine(c.dir) : 'in memory'})`).join('; ')}`);
  lines.push('', d.settings.length === 0 ? 'Settings: none declared.' : `Settings:\n${settingsTable(d.settings)}`);
  if (d.peer && d.peer.ignored.length > 0) lines.push('', 'Ignored (plinth does not honour these):', ...d.peer.ignored.map((f) => `  ${f.field}: ${f.reason}`));
  if (d.peer && d.peer.notes.length > 0) lines.push('', 'Read differently:', ...d.peer.notes.map((f) => `  ${f.field}: ${f.reason}`));
  if (d.contributions.length > 0) {
    lines.push('', 'For the host to offer (plinth runs none of these):', ...d.contributions.map((c) => `  ${c.kind} ${safeLine(c.name)}: ${safeLine(c.path)}${c.description ? ` (${safeLine(shorten(c.description, 60))})` : ''}`));
  }
  return lines.join('\n');
}

export function settingsTable(settings: readonly SettingView[]): string {
  const rows = settings.map((s) => [s.name, s.type + (s.sensitive ? ', sensitive' : ''), valueText(s), originText(s), shorten(s.description, 60)]);
  return formatTable(['SETTING', 'TYPE', 'VALUE', 'FROM', 'DESCRIPTION'], rows);
}

/** `name = value (from …)` for one setting. */
export function settingLine(plugin: string, s: SettingView): string {
  return `${plugin}.${s.name} = ${safeLine(valueText(s))} (${originText(s)}${s.file ? `: ${safeLine(s.file)}` : ''})`;
}

export function valueText(s: SettingView): string {
  if (s.from === 'unset') return '-';
  return typeof s.value === 'string' ? s.value : JSON.stringify(s.value);
}

export function originText(s: SettingView): string {
  switch (s.from) {
    case 'user':
      return 'user settings';
    case 'workspace':
      return 'workspace settings';
    case 'secrets':
      return 'secret store';
    case 'env':
      return `env ${s.envVar ?? ''}`.trim();
    case 'default':
      return 'default';
    case 'unset':
      return s.required ? `unset, required${s.envVar ? ` (or env ${s.envVar})` : ''}` : 'unset';
  }
}

/** What the running kernel did, one line each; empty when it did nothing to say. */
export function liveLines(live: LiveOutcome | undefined): string[] {
  if (!live) return [];
  const lines: string[] = [];
  if (live.added.length > 0) lines.push(`Started: ${live.added.join(', ')}.`);
  if (live.removed.length > 0) lines.push(`Stopped: ${live.removed.join(', ')}.`);
  if (live.replaced.length > 0) lines.push(`Replaced (the new version runs now): ${live.replaced.join(', ')}.`);
  for (const f of live.failed) lines.push(`Could not apply${f.plugin ? ` to ${f.plugin}` : ''}: ${f.code}: ${f.message}${f.hint ? `\n  fix: ${f.hint}` : ''}`);
  return lines;
}

function stateText(e: Extension): string {
  return e.error ? `${e.state} (${e.error.code})` : e.state;
}

function shorten(text: string, max: number): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
