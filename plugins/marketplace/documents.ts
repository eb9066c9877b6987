/** Reading a registry's documents: a plugin's packument and search results, checked against the sdk's schemas. */
import {
  ABBREVIATED_PACKUMENT_TYPE,
  type AbbreviatedPackument,
  type MarketNote,
  PlinthError,
  REGISTRY_KEYS_PATH,
  type RegistryKeys,
  type SearchResponse,
  abbreviatedPackumentSchema,
  isPlinthError,
  packumentUrl,
  registryKeysSchema,
  registryRoot,
  searchResponseSchema,
} from 'plinth/sdk';
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
export async function fetchSearch(context: DocumentContext, registry: Registry, text: string, size: number): Promise<SearchResponse> {
  const url = new URL('-/v1/search', registryRoot(registry.url.href));
  if (url.protocol !== 'file:') {
    url.searchParams.set('text', text);
    url.searchParams.set('size', String(size));
  }
  const body = await context.cache.get(registry, url, { ...context.limits, maxBytes: 64 * 1024 * 1024, step: 'search' }, context.notes);
  return parse(searchResponseSchema, body, registry, 'the search results');
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
    hint: 'the registry must speak the npm registry API (DESIGN.md, "The marketplace protocol"); use another registry or tell its operator',
    details: { step: 'resolve', registry: registry.name },
  });
}
