/**
 * Hashes of large files kept between checks and between processes. A server
 * or hook whose command names an interpreter by its path (`/usr/bin/node`,
 * some 100 MB, a quarter of a second to hash) would otherwise have it read
 * at every start, every restart and every hook run.
 *
 * A hash is kept with the file's identity: device, inode, size, and mtime and
 * ctime to the nanosecond. Any change to a file sets its ctime to now, and no
 * one but the system clock's owner can set it back, so a file whose identity
 * is the same was not changed: its kept hash stands for reading it (the
 * argument recorded-hashes.ts makes for installed plugins). Whoever can write
 * this cache can write trust.json beside it, which decides anyway.
 *
 * `$PLINTH_HOME/cache/trust-hashes.json`, mode 0600, at most
 * {@link KEPT_FILES} files (the most recently used), written without a flush
 * to disk: a cache lost in a crash only costs reading the file once more.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from 'plinth/sdk';
import { z } from 'zod';
import type { KnownHashes } from './fingerprint.js';

/** Smaller files are read every time: cheap, and scripts are what changes. */
export const CACHED_FROM_BYTES = 1024 * 1024;
export const KEPT_FILES = 256;

const cacheSchema = z.object({
  version: z.literal(1),
  files: z.record(z.string(), z.object({ identity: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
});
type Entry = { identity: string; sha256: string };

export class FileHashCache implements Required<Pick<KnownHashes, 'byIdentity' | 'remember'>> {
  #entries: Promise<Map<string, Entry>> | undefined;
  #dirty = false;

  constructor(private readonly file: string) {}

  async byIdentity(path: string, identity: string, size: bigint): Promise<string | undefined> {
    if (size < CACHED_FROM_BYTES) return undefined;
    const entries = await this.#load();
    const entry = entries.get(path);
    if (entry?.identity !== identity) return undefined;
    // Most recently used last: the first to go when the cache is full is the longest unused.
    entries.delete(path);
    entries.set(path, entry);
    return entry.sha256;
  }

  remember(path: string, identity: string, size: bigint, sha256: string): void {
    if (size < CACHED_FROM_BYTES) return;
    void this.#load().then((entries) => {
      entries.delete(path);
      entries.set(path, { identity, sha256 });
      while (entries.size > KEPT_FILES) entries.delete(entries.keys().next().value!);
      this.#dirty = true;
    });
  }

  /** Writes what was learnt since the last flush; a cache that cannot be written is only a slower next check. */
  async flush(): Promise<void> {
    const entries = await this.#load();
    if (!this.#dirty) return;
    this.#dirty = false;
    const data = { version: 1 as const, files: Object.fromEntries(entries) };
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 })
      .then(() => writeFileAtomic(this.file, JSON.stringify(data), { mode: 0o600, durable: false }))
      .catch(() => undefined);
  }

  #load(): Promise<Map<string, Entry>> {
    this.#entries ??= readFile(this.file, 'utf8').then(
      (text) => {
        const parsed = cacheSchema.safeParse(safeJson(text));
        return new Map(parsed.success ? Object.entries(parsed.data.files) : []);
      },
      () => new Map<string, Entry>(),
    );
    return this.#entries;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
