/** What a plugin declares, as shown before it is approved, and what changed between two versions. */
import { type Declarations, type Manifest, safeLine } from 'plinth/sdk';

/** `npm`: the lines of its npm dependencies (npm-deps.ts `describeNpm`). */
export function declarationsOf(manifest: Manifest, npm: readonly string[] = []): Declarations {
  const hooks = Object.entries(manifest.hooks).flatMap(([event, list]) =>
    (Array.isArray(list) ? list : [list]).flatMap((hook) => {
      const h = (hook ?? {}) as { name?: unknown; command?: unknown; args?: unknown; matcher?: unknown; hooks?: unknown };
      // A peer's group (a Claude Code plugin, a Gemini CLI extension): each command it runs, as written.
      if (Array.isArray(h.hooks)) {
        const matcher = typeof h.matcher === 'string' && h.matcher !== '' ? ` ${h.matcher}` : '';
        return h.hooks.map((inner: unknown) => {
          const command = (inner as { command?: unknown } | null)?.command;
          return `${event}${matcher}${typeof command === 'string' ? `: ${command}` : ''}`;
        });
      }
      const runs = [h.command, ...(Array.isArray(h.args) ? h.args : [])].filter((w) => typeof w === 'string').join(' ');
      return `${event}${typeof h.name === 'string' ? ` ${h.name}` : ''}${runs ? `: ${runs}` : ''}`;
    }),
  );
  const mcpServers = Object.entries(manifest.mcpServers).map(([name, server]) => {
    const s = (server ?? {}) as { command?: unknown; args?: unknown; url?: unknown };
    const runs = typeof s.url === 'string' ? s.url : [s.command, ...(Array.isArray(s.args) ? s.args : [])].filter((w) => typeof w === 'string').join(' ');
    return `${name}${runs ? `: ${runs}` : ''}`;
  });
  return {
    ...(manifest.main !== undefined && { code: manifest.main }),
    hooks,
    mcpServers,
    commands: Object.keys(manifest.commands),
    // Only what is declared: the schema fills every kind in, empty.
    permissions: Object.entries(manifest.permissions)
      .filter(([, value]) => (Array.isArray(value) ? value.length > 0 : Object.values(value).some((list) => list.length > 0)))
      .map(([kind, value]) => `${kind}: ${JSON.stringify(value)}`),
    provides: manifest.provides,
    dependencies: Object.entries(manifest.dependencies).map(([name, range]) => `${name}@${range}`),
    npm: [...npm],
  };
}

const LABELS: ReadonlyArray<[keyof Omit<Declarations, 'code'>, string]> = [
  ['hooks', 'hooks'],
  ['mcpServers', 'MCP servers'],
  ['commands', 'commands'],
  ['permissions', 'permissions'],
  ['provides', 'services'],
  ['dependencies', 'dependencies'],
  ['npm', 'npm packages'],
];

/** Lines for a person: one per kind of declaration. */
export function describeDeclarations(d: Declarations, indent = '  '): string[] {
  const lines = [`${indent}code: ${d.code ? `runs ${safeLine(d.code)} inside plinth` : 'none (declarations only)'}`];
  for (const [key, label] of LABELS) lines.push(`${indent}${label}: ${d[key].length === 0 ? 'none' : d[key].map(safeLine).join(', ')}`);
  return lines;
}

/** What `after` declares that `before` did not, and what it no longer declares. Empty when the same. */
export function declarationChanges(before: Declarations, after: Declarations): string[] {
  const out: string[] = [];
  if (before.code !== after.code) out.push(`code: ${before.code ?? 'none'} → ${after.code ?? 'none'}`);
  for (const [key, label] of LABELS) {
    for (const item of after[key]) if (!before[key].includes(item)) out.push(`+ ${label}: ${safeLine(item)}`);
    for (const item of before[key]) if (!after[key].includes(item)) out.push(`- ${label}: ${safeLine(item)}`);
  }
  return out;
}
