/**
 * What a peer's folder offers its host beside hooks and servers — slash commands, subagents,
 * skills, output styles and context files — listed with their files, so that nothing is dropped:
 * plinth runs none of them, a host that has these concepts offers them (the extensions service's
 * `contributions`). Only the peers' standard places are read; a plugin.json may name other folders
 * (`"commands": "./cmds"`), which are read the same way.
 */
import type { PeerContribution } from '../../sdk/manifest.js';
import type { PeerFiles } from './types.js';

/** The context files the peers load into the model's prompt, at a folder's root. */
export const CONTEXT_FILES = ['CLAUDE.md', 'GEMINI.md', 'AGENTS.md'] as const;

/** The folders a plugin.json names for each kind (its own fields), besides the standard ones. */
export interface ContributionPlaces {
  readonly commands?: readonly string[];
  readonly agents?: readonly string[];
  readonly skills?: readonly string[];
  readonly outputStyles?: readonly string[];
  /** Context files besides CLAUDE.md, GEMINI.md and AGENTS.md (Gemini's `contextFileName`). */
  readonly context?: readonly string[];
}

/** How deep a command folder is searched: Claude Code namespaces `commands/<ns>/<name>.md` as `ns:name`. */
const COMMAND_DEPTH = 3;

/**
 * The contributions of a folder, in a stable order (kind, then path). Needs {@link PeerFiles.list};
 * without it (a registry's tarball listing) none are listed.
 */
export async function readContributions(files: PeerFiles, places: ContributionPlaces = {}): Promise<PeerContribution[]> {
  const list = files.list;
  if (list === undefined) return [];
  const found: PeerContribution[] = [];
  const add = async (kind: PeerContribution['kind'], name: string, path: string) => {
    const text = await files.read(path).catch(() => undefined);
    const description = text === undefined ? undefined : path.endsWith('.toml') ? tomlDescription(text) : frontMatter(text).description;
    found.push({ kind, name, path, ...(description !== undefined && { description }) });
  };
  const markdownIn = async (folder: string, depth: number, prefix = ''): Promise<Array<[name: string, path: string]>> => {
    // plugin.json may name a file rather than a folder (`"commands": ["./commands/deploy.md"]`).
    if (/\.(md|toml)$/.test(folder)) return (await files.has(folder)) ? [[folder.split('/').pop()!.replace(/\.(md|toml)$/, ''), folder]] : [];
    const entries = (await list(folder)) ?? [];
    const out: Array<[string, string]> = [];
    for (const entry of entries) {
      if (entry.endsWith('/')) {
        if (depth > 1) out.push(...(await markdownIn(`${folder}/${entry.slice(0, -1)}`, depth - 1, `${prefix}${entry.slice(0, -1)}:`)));
      } else if (/\.(md|toml)$/.test(entry)) out.push([prefix + entry.replace(/\.(md|toml)$/, ''), `${folder}/${entry}`]);
    }
    return out;
  };
  const folders = (standard: string, named: readonly string[] | undefined) => [...new Set([standard, ...(named ?? []).map(clean)])];

  for (const folder of folders('commands', places.commands)) for (const [name, path] of await markdownIn(folder, COMMAND_DEPTH)) await add('command', name, path);
  for (const folder of folders('agents', places.agents)) for (const [name, path] of await markdownIn(folder, 1)) if (path.endsWith('.md')) await add('agent', name, path);
  for (const folder of folders('skills', places.skills)) {
    for (const entry of (await list(folder)) ?? []) {
      if (!entry.endsWith('/')) continue;
      const path = `${folder}/${entry}SKILL.md`;
      const text = await files.read(path).catch(() => undefined);
      if (text === undefined) continue;
      const meta = frontMatter(text);
      found.push({ kind: 'skill', name: meta.name ?? entry.slice(0, -1), path, ...(meta.description !== undefined && { description: meta.description }) });
    }
  }
  for (const folder of folders('output-styles', places.outputStyles)) for (const [name, path] of await markdownIn(folder, 1)) if (path.endsWith('.md')) await add('output-style', name, path);
  const root = new Set((await list('')) ?? []);
  for (const file of [...new Set([...CONTEXT_FILES, ...(places.context ?? []).map(clean)])]) {
    if (root.has(file) || (file.includes('/') && (await files.has(file)))) found.push({ kind: 'context', name: file, path: file });
  }
  const order = ['command', 'agent', 'skill', 'output-style', 'context'];
  return found.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** `./x/` → `x`. */
function clean(relative: string): string {
  return relative.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '');
}

/**
 * The `name` and `description` of a markdown file's YAML front matter (`---` lines): plain
 * one-line values, quoted or not, which is how the peers' docs write them. Anything richer
 * (a folded `>` block) is left out rather than guessed.
 */
export function frontMatter(text: string): { name?: string; description?: string } {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\s*(\r?\n|$)/.exec(text);
  if (!match) return {};
  const out: { name?: string; description?: string } = {};
  for (const line of match[1]!.split(/\r?\n/)) {
    const field = /^(name|description):\s*(.*?)\s*$/.exec(line);
    if (!field) continue;
    const value = unquote(field[2]!);
    if (value !== undefined && value !== '') out[field[1] as 'name' | 'description'] = value;
  }
  return out;
}

/** A Gemini CLI command's `description = "…"` (TOML basic or literal string on one line). */
function tomlDescription(text: string): string | undefined {
  const match = /^\s*description\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*$/m.exec(text);
  return match ? unquote(match[1]!) : undefined;
}

function unquote(value: string): string | undefined {
  if (/^[>|]/.test(value)) return undefined;
  if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
    try {
      return JSON.parse(value) as string;
    } catch {
      return value.slice(1, -1);
    }
  }
  if (value.startsWith("'") && value.endsWith("'") && value.length >= 2) return value.slice(1, -1).replaceAll("''", "'");
  return value;
}
