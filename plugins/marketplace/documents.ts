/** Reading a registry's documents: a plugin's packument and search results, checked against the sdk's schemas. */
import { type MarketNote, PlinthError, isPlinthError } from 'plinth/sdk';
import { ABBREVIATED_PACKUMENT_TYPE, type AbbreviatedPackument, REGISTRY_KEYS_PATH, type RegistryKeys, type SearchResponse, abbreviatedPackumentSchema, packumentUrl, registryKeysSchema, registryRoot, searchResponseSchema } from 'plinth/internal';
import type { z } from 'zod';
import type { DocumentCache } from './cache.js';
import type { RequestOptions } from './fetcher.js';
import type { Registry } from './registries.js';

/** npm's abbreviated form first, the full document otherwise. */
const PACKUMENT_ACCEPT = `${ABBREVIATED_PACKUMENT_TYPE}; q=1.0, application/json; q=0.8`;

/** What documents need from the caller. */
export interface DocumentContext {
  readonly cache: DocumentCache;
  readonly limits: Pick<RequestOptions, 'timeoutMs' | 'signal'>;
  readonly notes: MarketNote[];
  /** Revalidate cached documents even while fresh. */
  readonly revalidate?: boolean;
}

/** The packument of `name` on `registry`. */
export async function fetchPackument(context: DocumentContext, registry: Registry, name: string): Promise<AbbreviatedPackument> {
  const url = packumentUrl(registry.url.href, name);
  const text = await context.cache.get(registry, url, { ...context.limits, maxBytes: 32 * 1024 * 1024, accept: PACKUMENT_ACCEPT, step: 'resolve', ...(context.revalidate && { revalidate: true }) }, context.notes);
  const packument = parse(abbreviatedPackumentSchema, text, registry, `the packument of "${name}"`);
  if (packument.name !== name) {
    throw new PlinthError('PLN_E_MARKET_REGISTRY_RESPONSE', `resolve: registry "${registry.name}" answered the packument of "${packument.name}" when asked for "${name}"`, {
      hint: 'the registry is misconfigured; use another registry',
      details: { step: 'resolve', registry: registry.name, plugin: name },
    });
  }
  return packument;
}

/** The registry's search results for `text` (a static folder's whole index). */
export async function fetchSearch(context: DocumentContext, registry: Registry, text: string, size: number, from = 0): Promise<SearchResponse> {
  const url = new URL('-/v1/search', registryRoot(registry.url.href));
  if (url.protocol !== 'file:') {
    url.searchParams.set('text', text);
    url.searchParams.set('size', String(size));
    if (from > 0) url.searchParams.set('from', String(from));
  }
  const body = await context.cache.get(registry, url, { ...context.limits, maxBytes: 64 * 1024 * 1024, step: 'search' }, context.notes);
  return parse(searchResponseSchema, body, registry, 'the search results');
}

/** npm's registries answer at most this many objects a page. */
const SEARCH_PAGE = 250;
/** How far `ext search --page` reads a registry's results, page by page. */
const PAGING_BOUND = 2_000;
/** How much of a registry's listing a search with words reads besides its answer: one page, one request. */
const LISTING_BOUND = SEARCH_PAGE;

/**
 * Search objects of one registry for `text`, enough for `count` hits: the registry's own answer to
 * `text`, and, when `text` has words, the first page of its listing (the answer to an empty text,
 * {@link LISTING_BOUND}), for plinth to score itself: one request more, not a walk of a large registry. Verdaccio matches descriptions and
 * keywords letter case and all (`forecast` does not find "Forecast"); plinth matches as `npm search`
 * does, in any case, so it cannot leave the match to the registry alone. A static folder's index is
 * the whole listing already.
 */
export async function fetchSearchObjects(context: DocumentContext, registry: Registry, text: string, count: number): Promise<SearchResponse['objects']> {
  const pages = async (query: string, wanted: number) => {
    const objects: SearchResponse['objects'] = [];
    for (let from = 0; from < Math.min(wanted, PAGING_BOUND); from += SEARCH_PAGE) {
      const size = Math.min(SEARCH_PAGE, Math.max(wanted - from, 20));
      const page = await fetchSearch(context, registry, query, size, from);
      objects.push(...page.objects);
      if (registry.url.protocol === 'file:' || page.objects.length < size) break;
    }
    return objects;
  };
  if (text.trim() === '' || registry.url.protocol === 'file:') return pages(text, count);
  const answered = await pages(text, count);
  return [...answered, ...(await pages('', LISTING_BOUND))];
}

/**
 * The registry's signing keys (`/-/npm/v1/keys`, as npm's registry serves
 * them), or undefined when it has none (404): a registry that passes on
 * another's signatures (a proxy) may not list that registry's keys.
 */
export async function fetchKeys(context: DocumentContext, registry: Registry, revalidate = false): Promise<RegistryKeys | undefined> {
  const url = new URL(REGISTRY_KEYS_PATH, registryRoot(registry.url.href));
  try {
    const text = await context.cache.get(registry, url, { ...context.limits, maxBytes: 1024 * 1024, step: 'resolve', ...((revalidate || context.revalidate) && { revalidate: true }) }, context.notes);
    return parse(registryKeysSchema, text, registry, 'its signing keys');
  } catch (error) {
    if (isPlinthError(error) && error.code === 'PLN_E_MARKET_NOT_FOUND') return undefined;
    throw error;
  }
}

/**
 * One of the registry's signed documents (`-/plinth/…`), checked against
 * `schema`, or undefined when the registry has none (404). Always asked
 * again (a 304 costs little): they are what says whether the rest is current.
 */
export async function fetchSignedDocument<T extends z.ZodType>(context: DocumentContext, registry: Registry, path: string, schema: T, what: string): Promise<z.infer<T> | undefined> {
  const url = new URL(path, registryRoot(registry.url.href));
  try {
    const text = await context.cache.get(registry, url, { ...context.limits, maxBytes: 16 * 1024 * 1024, step: 'resolve', revalidate: true }, context.notes);
    return parse(schema, text, registry, what);
  } catch (error) {
    if (isPlinthError(error) && error.code === 'PLN_E_MARKET_NOT_FOUND') return undefined;
    throw error;
  }
}

function parse<T extends z.ZodType>(schema: T, text: string, registry: Registry, what: string): z.infer<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid(registry, what, 'it is not JSON');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(registry, what, `${issue.path.join('.') || 'the document'}: ${issue.message}`);
  }
  return parsed.data;
}

function invalid(registry: Registry, what: string, why: string): PlinthError {
  return new PlinthError('PLN_E_MARKET_REGISTRY_RESPONSE', `registry "${registry.name}" sent ${what} in a form plinth cannot use: ${why}`, {
    hint: 'the registry must speak the npm registry API (the subset plinth reads: plugins/marketplace/README.md, "Protocol", in plinth\'s folder); use another registry or tell its operator',
    details: { step: 'resolve', registry: registry.name },
  });
}
