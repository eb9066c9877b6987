/**
 * The search index of a static registry folder: the file `-/v1/search`, a
 * search response listing every package once (its latest version), so that a
 * plain static web server answering `/-/v1/search?text=…` with it gives a
 * client everything to score itself. `plinth registry serve` loads it once
 * per change and answers queries ranked by the sdk's `searchScore`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PlinthError } from '../sdk/errors.js';
import {
  type Packument,
  type PreparedSearchDoc,
  REGISTRY_SEARCH_INDEX,
  type SearchObject,
  type SearchResponse,
  compareSearchResults,
  prepareQuery,
  prepareSearchDoc,
  searchResponseSchema,
  searchScore,
} from '../internal/registry/packument.js';

/** The index entry of a package: its `dist-tags.latest` version's searchable fields. */
export function searchEntry(packument: Packument): SearchObject {
  const latest = packument['dist-tags'].latest;
  const version = latest === undefined ? undefined : packument.versions[latest];
  const date = (latest !== undefined && packument.time?.[latest]) || packument.time?.modified;
  return {
    package: {
      name: packument.name,
      version: version?.version ?? latest ?? '0.0.0',
      description: version?.description ?? packument.description ?? '',
      keywords: version?.keywords ?? packument.keywords ?? [],
      maintainers: [],
      ...(date && { date }),
    },
    score: { final: 1, detail: { quality: 1, popularity: 1, maintenance: 1 } },
    searchScore: 1,
  };
}

/** Reads a folder's index; an empty one when there is none yet. */
export async function readSearchIndex(folder: string): Promise<SearchResponse> {
  const file = join(folder, REGISTRY_SEARCH_INDEX);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return { objects: [], total: 0 };
    throw cause;
  }
  const parsed = searchResponseSchema.safeParse(safeJsonParse(text));
  if (!parsed.success) {
    throw new PlinthError('PLN_E_REGISTRY_DOCUMENT_INVALID', `${file} is not a search index`, {
      hint: 'publish any plugin again to rebuild it, or remove the file',
      details: { file },
    });
  }
  return parsed.data;
}

/** The index with `entry` in place of its package's previous one, sorted by name. */
export function withEntry(index: SearchResponse, entry: SearchObject): SearchResponse {
  const objects = index.objects.filter((o) => o.package.name !== entry.package.name);
  objects.push(entry);
  objects.sort((a, b) => (a.package.name < b.package.name ? -1 : a.package.name > b.package.name ? 1 : 0));
  return { objects, total: objects.length, time: entry.package.date ?? index.time ?? new Date(0).toISOString() };
}

/** One result of {@link SearchIndex.search}. */
export interface RankedResult {
  readonly object: SearchObject;
  readonly score: number;
}

/** How many recent queries an index remembers (an index never changes; a changed file makes a new one). */
const REMEMBERED_QUERIES = 128;

/** An index prepared for queries: every document lowercased once, recent answers remembered. */
export class SearchIndex {
  private readonly docs: ReadonlyArray<{ object: SearchObject; prepared: PreparedSearchDoc }>;
  private readonly recent = new Map<string, { results: RankedResult[]; total: number }>();

  constructor(index: SearchResponse) {
    this.docs = index.objects.map((object) => ({ object, prepared: prepareSearchDoc(object.package) }));
  }

  get size(): number {
    return this.docs.length;
  }

  /** The matches of `text`, best first, `from` skipped and at most `size`; `total` counts every match. */
  search(text: string, size: number, from = 0): { results: RankedResult[]; total: number } {
    const key = `${from}:${size}:${text}`;
    const remembered = this.recent.get(key);
    if (remembered) {
      // Most recent last, so that the oldest is the first to go.
      this.recent.delete(key);
      this.recent.set(key, remembered);
      return remembered;
    }
    const answer = this.rank(text, size, from);
    this.recent.set(key, answer);
    if (this.recent.size > REMEMBERED_QUERIES) this.recent.delete(this.recent.keys().next().value!);
    return answer;
  }

  private rank(text: string, size: number, from: number): { results: RankedResult[]; total: number } {
    const query = prepareQuery(text);
    // Only the best `from + size` are kept, in order: a query that matches every document sorts no more than a page.
    const keep = from + size;
    const best: Hit[] = [];
    let total = 0;
    for (const doc of this.docs) {
      const score = searchScore(query, doc.prepared);
      if (score === 0) continue;
      total += 1;
      const hit: Hit = { object: doc.object, score, name: doc.prepared.name };
      if (best.length === keep && compareSearchResults(hit, best[keep - 1]!) >= 0) continue;
      best.splice(insertionPoint(best, hit), 0, hit);
      if (best.length > keep) best.pop();
    }
    return { results: best.slice(from).map(({ object, score }) => ({ object, score })), total };
  }
}

interface Hit {
  readonly object: SearchObject;
  readonly score: number;
  readonly name: string;
}

/** Where `hit` goes in `sorted` (binary search, after its equals). */
function insertionPoint(sorted: readonly Hit[], hit: Hit): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareSearchResults(sorted[mid]!, hit) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

function safeJsonParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
