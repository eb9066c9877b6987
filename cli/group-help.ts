/**
 * The help of a command group: `plinth mcp --help` (or `plinth mcp`) lists the
 * commands whose names start with `mcp `, each with its usage and summary, as
 * the manifests declare them (no plugin code is loaded for it).
 */

/** A command as the help shows it. */
export interface CommandSummary {
  readonly name: string;
  readonly summary: string;
  readonly usage?: string;
  readonly plugin?: string;
}

/** The commands of the group `words` names (`['mcp']` → `mcp add`, `mcp list`, …); empty when it names none. */
export function groupCommands<T extends CommandSummary>(commands: readonly T[], words: readonly string[]): T[] {
  if (words.length === 0) return [];
  const prefix = `${words.join(' ')} `;
  return commands.filter((c) => c.name.startsWith(prefix));
}

/** The group's help text: usage, then each command's usage line and summary. */
export function groupHelpText(group: string, commands: readonly CommandSummary[]): string {
  const plugins = [...new Set(commands.flatMap((c) => (c.plugin ? [c.plugin] : [])))];
  return [
    `Usage: plinth ${group} <command> [options]`,
    '',
    `Commands of "plinth ${group}"${plugins.length > 0 ? ` (from plugin ${plugins.join(', ')})` : ''}:`,
    ...commands.flatMap((c) => [`  plinth ${c.usage ?? c.name}`, `      ${c.summary}`]),
    '',
    `\`plinth ${group} <command> --help\` shows one command's arguments and options; \`plinth --help\` the global options and every command.`,
  ].join('\n');
}
