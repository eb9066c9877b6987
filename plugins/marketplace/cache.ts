/**
 * Registry documents cached on disk (`$PLINTH_HOME/cache/registry/`) for 5
 * minutes, then revalidated with `If-None-Match`; when the registry does not
 * answer, the cache serves and a note says how old it is.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type MarketNote, isPlinthError, writeFileAtomic } from 'plinth/sdk';
import { z } from 'zod';
import { type RequestOptions, getDocument } from './fetcher.js';
import type { Registry } from './registries.js';

export const FRESH_MS = 5 * 60_000;

const entrySchema = z.object({ url: z.string(), etag: z.string().optional(), fetchedAt: z.number(), body: z.string() });
type Entry = z.infer<typeof entrySchema>;

export class DocumentCache {
  constructor(
    private readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The document at `url`: from the cache while fresh, else from the registry
   * (a 304 refreshes the cached copy). A registry that cannot be reached is
   * answered from the cache, however old, with a note in `notes`; without a
   * cached copy its error is thrown. `revalidate`: ask even while fresh (a 304
   * costs little), for `outdated` and `update`, which are about what is new.
   */
  async get(registry: Registry, url: URL, options: RequestOptions & { revalidate?: boolean }, notes: MarketNote[]): Promise<string> {
    const file = join(this.dir, `${createHash('sha256').update(`${options.accept ?? ''} ${url.href}`).digest('hex')}.json`);
    const cached = await readEntry(file);
    if (cached && options.revalidate !== true && this.now() - cached.fetchedAt < FRESH_MS) return cached.body;
    if (url.protocol === 'file:') return (await getDocument(registry, url, options)).body.toString('utf8');
    try {
      const fetched = await getDocument(registry, url, { ...options, ...(cached?.etag && { etag: cached.etag }) });
      const body = fetched.status === 304 && cached ? cached.body : fetched.body.toString('utf8');
      const etag = fetched.etag ?? cached?.etag;
      await this.put(file, { url: url.href, ...(etag && { etag }), fetchedAt: this.now(), body });
      return body;
    } catch (error) {
      if (!cached || !isPlinthError(error) || error.code !== 'PLN_E_MARKET_REGISTRY_UNREACHABLE') throw error;
      const ageMs = this.now() - cached.fetchedAt;
      const reason = String(error.details?.reason ?? 'no answer');
      const message = `registry ${registry.name} unreachable (${reason}); using its cache from ${age(ageMs)} ago`;
      if (!notes.some((n) => n.message === message)) notes.push({ registry: registry.name, kind: 'stale', message, ageMs });
      return cached.body;
    }
  }

  private async put(file: string, entry: Entry): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // A cache that cannot be written, or is lost in a crash, only costs a request next time: not worth two disk flushes.
    await writeFileAtomic(file, JSON.stringify(entry), { mode: 0o600, durable: false }).catch(() => undefined);
  }
}

async function readEntry(file: string): Promise<Entry | undefined> {
  try {
    const parsed = entrySchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** "40 s", "12 min", "3 h", "2 d". */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86_400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}
