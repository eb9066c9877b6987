/**
 * The peers' marketplace catalogues, read as they publish them:
 * Claude Code's `.claude-plugin/marketplace.json` and Codex's
 * `.agents/plugins/marketplace.json` (`name`, `owner`, `plugins[]` each with a
 * `name` and a `source`). A source is a relative path string (`./plugins/x`,
 * a folder of the marketplace's repository) or GitHub's `owner/repo`, or an
 * object whose `source` names its kind:
 *
 * | kind | fields | peers |
 * |---|---|---|
 * | `local` | `path` | Codex |
 * | `github` | `repo` (`owner/repo`), `ref?`, `sha?` | Claude Code |
 * | `url` | `url` (a git URL), `ref?`, `sha?`, `path?` (Codex) | both |
 * | `git-subdir` | `url` (a git URL or `owner/repo`), `path`, `ref?`, `sha?` | both |
 * | `npm` | `package`, `version?`, `registry?` | both |
 * | `archive` | `url` (a .tgz / .tar.gz), `sha256` (required) | plinth's own: no peer has an archive source |
 *
 * An entry whose source is not understood is skipped with a note naming it
 * (as Codex skips it), not a reason to refuse the whole catalogue; a
 * catalogue that is not one at all is `PLN_E_MARKETPLACE_INVALID`, naming the
 * field.
 */
import { PlinthError, safeLine } from 'plinth/sdk';
import { z } from 'zod';

const text = z.string().min(1);
const optionalRef = text.optional();

/** Each object source kind's fields, by the value of its `source`. */
const objectSources = {
  local: z.object({ source: z.literal('local'), path: text }),
  github: z.object({ source: z.literal('github'), repo: text, ref: optionalRef, sha: optionalRef }),
  url: z.object({ source: z.literal('url'), url: text, ref: optionalRef, sha: optionalRef, path: optionalRef }),
  'git-subdir': z.object({ source: z.literal('git-subdir'), url: text, path: text, ref: optionalRef, sha: optionalRef }),
  npm: z.object({ source: z.literal('npm'), package: text, version: optionalRef, registry: optionalRef }),
  archive: z.object({ source: z.literal('archive'), url: text, sha256: z.string().regex(/^[0-9a-f]{64}$/i, 'sha256 must be 64 hex digits') }),
} as const;

/** A plugin's source, as a catalogue entry gives it. */
export type PluginSource = string | z.infer<(typeof objectSources)[keyof typeof objectSources]>;

/** `raw` as a source, or why not (the field named, from the entry's `source`). */
export function parseSource(raw: unknown): { ok: true; source: PluginSource } | { ok: false; why: string } {
  if (typeof raw === 'string') return raw === '' ? { ok: false, why: 'source: an empty path' } : { ok: true, source: raw };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, why: 'source: a relative path or an object with "source" was expected' };
  const kind = (raw as { source?: unknown }).source;
  if (typeof kind !== 'string') return { ok: false, why: 'source.source: the kind of source is missing' };
  const schema = (objectSources as Record<string, z.ZodType<PluginSource>>)[kind];
  if (!schema) return { ok: false, why: `source.source: the source kind "${safeLine(kind)}" is not one plinth installs (${Object.keys(objectSources).join(', ')})` };
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, source: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, why: `source.${issue.path.join('.')}: ${issue.path.length === 1 && (raw as Record<string, unknown>)[String(issue.path[0])] === undefined ? `missing (a "${kind}" source needs it)` : issue.message}` };
}

const entrySchema = z.object({
  name: text,
  source: z.unknown(),
  description: z.string().optional(),
  version: z.string().optional(),
  keywords: z.array(z.string()).optional(),
  category: z.string().optional(),
});

const catalogueSchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/i, 'a marketplace name is letters, digits, ".", "_" or "-"').max(100),
  owner: z.object({ name: z.string().optional(), email: z.string().optional() }).passthrough().optional(),
  description: z.string().optional(),
  metadata: z.object({ description: z.string().optional(), version: z.string().optional(), pluginRoot: z.string().optional() }).passthrough().optional(),
  plugins: z.array(z.unknown()),
});

/** One plugin a catalogue lists, its source understood. */
export interface CatalogueEntry {
  readonly name: string;
  readonly description: string;
  readonly version?: string;
  readonly keywords: readonly string[];
  readonly source: PluginSource;
}

/** A catalogue as plinth keeps it (cached under the plinth home). */
export interface Catalogue {
  readonly name: string;
  readonly format: 'claude' | 'codex';
  readonly description: string;
  readonly owner?: string;
  /** Claude Code's `metadata.pluginRoot`: the folder bare plugin names are relative to. */
  readonly pluginRoot?: string;
  readonly plugins: readonly CatalogueEntry[];
  /** Entries skipped, each with why. */
  readonly skipped: readonly string[];
}

/** Where a marketplace repository keeps its catalogue, first found wins. */
export const CATALOGUE_FILES = [
  { path: '.claude-plugin/marketplace.json', format: 'claude' },
  { path: '.agents/plugins/marketplace.json', format: 'codex' },
] as const;

/** Parses a catalogue's JSON text; `file` names it in errors. */
export function parseCatalogue(textIn: string, file: string, format: Catalogue['format']): Catalogue {
  let data: unknown;
  try {
    data = JSON.parse(textIn);
  } catch (error) {
    throw invalid(file, `it is not JSON: ${(error as Error).message}`);
  }
  const parsed = catalogueSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(file, `"${issue.path.join('.') || '(top level)'}": ${issue.message}`);
  }
  const plugins: CatalogueEntry[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  parsed.data.plugins.forEach((raw, index) => {
    const entry = entrySchema.safeParse(raw);
    if (!entry.success) {
      const issue = entry.error.issues[0]!;
      skipped.push(`plugins.${index}.${issue.path.join('.')}: ${issue.path.length === 1 && issue.code === 'invalid_type' && (raw as Record<string, unknown> | null)?.[String(issue.path[0])] === undefined ? 'missing' : issue.message}`);
      return;
    }
    const source = parseSource(entry.data.source);
    if (!source.ok) {
      skipped.push(`${safeLine(entry.data.name)}: plugins.${index}.${source.why}`);
      return;
    }
    if (seen.has(entry.data.name)) {
      skipped.push(`${safeLine(entry.data.name)}: plugins.${index}: a second entry of that name`);
      return;
    }
    seen.add(entry.data.name);
    plugins.push({ name: entry.data.name, description: entry.data.description ?? '', ...(entry.data.version && { version: entry.data.version }), keywords: entry.data.keywords ?? (entry.data.category ? [entry.data.category] : []), source: source.source });
  });
  const owner = parsed.data.owner?.name;
  const pluginRoot = parsed.data.metadata?.pluginRoot;
  return { name: parsed.data.name, format, description: parsed.data.description ?? parsed.data.metadata?.description ?? '', ...(owner && { owner }), ...(pluginRoot && { pluginRoot }), plugins, skipped };
}

function invalid(file: string, why: string): PlinthError {
  return new PlinthError('PLN_E_MARKETPLACE_INVALID', `${file} is not a marketplace catalogue: ${why}`, {
    hint: 'a catalogue has "name", "owner" and "plugins" (Claude Code\'s .claude-plugin/marketplace.json, Codex\'s .agents/plugins/marketplace.json); ask its publisher to fix it',
    details: { step: 'resolve', file },
  });
}

/** GitHub's `owner/repo` form. */
export const GITHUB_REPO = /^[\w.-]+\/[\w.-]+$/;

/** `owner/repo` → its https clone URL; a URL as it is. */
export function gitUrlOf(urlOrRepo: string): string {
  return GITHUB_REPO.test(urlOrRepo) && !urlOrRepo.startsWith('.') ? `https://github.com/${urlOrRepo.replace(/\.git$/, '')}.git` : urlOrRepo;
}

/**
 * A path inside a repository or marketplace (`./plugins/x`, `plugins/x`):
 * relative, without `..`, backslashes or a drive; the normalised form
 * (`plugins/x`, `` for the root), or undefined when it would lead outside.
 */
export function insidePath(path: string): string | undefined {
  if (path.includes('\\') || path.includes('\0') || /^[a-z]:/i.test(path) || path.startsWith('/')) return undefined;
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) return undefined;
  return parts.join('/');
}
