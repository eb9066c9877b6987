/**
 * Tool search: a full-text index (MiniSearch: BM25+ ranking, prefix and fuzzy
 * matching) over the tool registry, by tool name, title, description, server
 * and the input schema's property names and descriptions. Identifiers are
 * split at camelCase, snake_case, kebab-case and dots, so `search_issues`,
 * `searchIssues` and "search issues" meet.
 *
 * Nothing is indexed until the first search. After that the index follows the
 * registry's changes server by server (connect, `tools/list_changed`,
 * disconnect, a definition removed — every `setTools`/`detach`/`forget`): a
 * server whose tools changed is marked, and at the next search only its
 * documents are discarded and added again.
 */
import MiniSearch from 'minisearch';
import type { CompactTool, McpTool, ToolSearchHit, ToolSearchOptions } from 'plinth/sdk';
import type { ToolRegistry } from './types.js';

/** The registry's part the index reads. */
export type SearchableRegistry = Pick<ToolRegistry, 'tools' | 'onChange'>;

/** The index over one registry. */
export interface ToolSearch {
  search(query: string, options?: ToolSearchOptions): readonly ToolSearchHit[];
  compact(options?: { readonly servers?: readonly string[] }): readonly CompactTool[];
  /** Stops following the registry. */
  dispose(): void;
}

/** Hits returned when the caller gives no `limit`. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** The longest one-line description of {@link ToolSearch.compact}. */
export const COMPACT_DESCRIPTION_WIDTH = 120;

const FIELDS = ['tool', 'title', 'description', 'params', 'server'] as const;
const BOOST = { tool: 4, title: 2, description: 1, params: 0.6, server: 0.5 };
/** Schema text read per tool: a huge schema says little more than its first properties. */
const MAX_PARAMS_CHARS = 4000;

interface Doc {
  readonly id: string;
  readonly server: string;
  readonly tool: string;
  readonly title: string;
  readonly description: string;
  readonly params: string;
}

/** Splits identifiers and text into lowercase words: `getIssueByID` → get, issue, by, id; `list_pull-requests` → list, pull, requests. */
export function tokenizeTool(text: string): string[] {
  const words: string[] = [];
  for (const part of text.split(/[^\p{L}\p{N}]+/u)) {
    if (part === '') continue;
    // camelCase and acronyms: "getHTTPResponse2" → get, HTTP, Response2.
    for (const word of part.split(/(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u)) words.push(word);
  }
  return words;
}

/** Words too common to tell tools apart; as query prefixes they would also match hundreds of words (`to` → `topic`, `token`…). */
const STOP_WORDS = new Set(
  'a an and are as at be by can do for from how i in into is it me my of on or our so that the this to use using via we what when which with you your'.split(' '),
);

/** Lowercases and strips a plural (issues → issue, repositories → repository); drops one-letter words and {@link STOP_WORDS}. */
export function normalizeTerm(term: string): string | null {
  const word = term.toLowerCase();
  if (word.length < 2 || STOP_WORDS.has(word)) return null;
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** The words of an input schema: its property names and descriptions, one level of nesting included. */
function schemaText(schema: Readonly<Record<string, unknown>>): string {
  const parts: string[] = [];
  const visit = (node: unknown, depth: number) => {
    if (depth > 2 || node === null || typeof node !== 'object') return;
    const properties = (node as { properties?: unknown }).properties;
    if (properties === null || typeof properties !== 'object') return;
    for (const [name, value] of Object.entries(properties as Record<string, unknown>)) {
      parts.push(name);
      if (value !== null && typeof value === 'object') {
        const description = (value as { description?: unknown }).description;
        if (typeof description === 'string') parts.push(description);
        visit(value, depth + 1);
        visit((value as { items?: unknown }).items, depth + 1);
      }
    }
  };
  visit(schema, 0);
  const text = parts.join(' ');
  return text.length > MAX_PARAMS_CHARS ? text.slice(0, MAX_PARAMS_CHARS) : text;
}

function docOf(tool: McpTool): Doc {
  return {
    id: tool.name,
    server: tool.server,
    tool: tool.tool,
    title: tool.title ?? '',
    description: tool.description ?? '',
    params: schemaText(tool.inputSchema),
  };
}

/** The first sentence (or line) of a description, at most `width` characters. */
export function oneLineDescription(text: string | undefined, width = COMPACT_DESCRIPTION_WIDTH): string {
  if (!text) return '';
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentence = /^(.+?[.!?])(?:\s|$)/.exec(flat)?.[1] ?? flat;
  return sentence.length > width ? `${sentence.slice(0, width - 1).trimEnd()}…` : sentence;
}

/** The tools with the first of each name: one document per id. */
function unique(tools: readonly McpTool[]): McpTool[] {
  const seen = new Set<string>();
  return tools.filter((t) => !seen.has(t.name) && (seen.add(t.name), true));
}

/** A search index following `registry`. */
export function createToolSearch(registry: SearchableRegistry): ToolSearch {
  let index: MiniSearch<Doc> | undefined;
  /** The ids indexed per server. */
  const indexed = new Map<string, string[]>();
  /** Servers whose tools changed since the index last looked. */
  const dirty = new Set<string>();
  /** The tools by name, as of the last look. */
  const byName = new Map<string, McpTool>();

  const off = registry.onChange(({ server }) => {
    if (index) dirty.add(server);
  });

  const build = (): MiniSearch<Doc> => {
    const fresh = new MiniSearch<Doc>({
      fields: [...FIELDS],
      storeFields: [],
      tokenize: tokenizeTool,
      processTerm: normalizeTerm,
      searchOptions: { tokenize: tokenizeTool, processTerm: normalizeTerm },
      autoVacuum: { minDirtCount: 50, minDirtFactor: 0.2, batchSize: 1000, batchWait: 10 },
    });
    const tools = unique(registry.tools());
    for (const tool of tools) {
      byName.set(tool.name, tool);
      const ids = indexed.get(tool.server) ?? [];
      ids.push(tool.name);
      indexed.set(tool.server, ids);
    }
    fresh.addAll(tools.map(docOf));
    return fresh;
  };

  /** Brings the index up to date: the servers marked dirty only. */
  const current = (): MiniSearch<Doc> => {
    if (!index) {
      index = build();
      return index;
    }
    if (dirty.size === 0) return index;
    const servers = [...dirty];
    dirty.clear();
    const now = registry.tools();
    for (const server of servers) {
      for (const id of indexed.get(server) ?? []) {
        index.discard(id);
        byName.delete(id);
      }
      indexed.delete(server);
      const tools = unique(now.filter((t) => t.server === server));
      for (const tool of tools) byName.set(tool.name, tool);
      if (tools.length > 0) indexed.set(server, tools.map((t) => t.name));
      index.addAll(tools.map(docOf));
    }
    return index;
  };

  return {
    search(query, options = {}) {
      const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
      if (query.trim() === '' || limit <= 0) return [];
      const only = options.servers && options.servers.length > 0 ? new Set(options.servers) : undefined;
      const results = current().search(query, {
        boost: BOOST,
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : term.length >= 4 ? 1 : false),
        combineWith: 'OR',
        ...(only && { filter: (result) => only.has(byName.get(result.id as string)?.server ?? '') }),
      });
      const hits: ToolSearchHit[] = [];
      for (const result of results) {
        const tool = byName.get(result.id as string);
        if (!tool) continue;
        hits.push({ tool, score: result.score, terms: result.terms });
        if (hits.length >= limit) break;
      }
      return hits;
    },
    compact(options = {}) {
      const only = options.servers && options.servers.length > 0 ? new Set(options.servers) : undefined;
      return registry
        .tools()
        .filter((t) => !only || only.has(t.server))
        .map((t) => ({ name: t.name, server: t.server, description: oneLineDescription(t.description ?? t.title) }));
    },
    dispose() {
      off();
    },
  };
}
