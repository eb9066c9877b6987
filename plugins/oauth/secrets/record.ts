/**
 * `<home>/secrets/index.json`: which backend holds each secret. It holds no
 * secret, but it is what turns a keychain that stops answering into an error
 * instead of "no tokens": a key recorded here exists somewhere. Read without a
 * lock (written atomically); written only under the secrets lock.
 */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from 'plinth/sdk';
import { z } from 'zod';
import type { SecretBackendName } from 'plinth/sdk';
import { secretsError } from './errors.js';

export const RECORD_VERSION = 1;

const entrySchema = z.object({
  backend: z.enum(['keychain', 'file']),
  /** ISO time of the last write. */
  updatedAt: z.string(),
});

/** Entries are checked one by one, since a schema record would drop a key named `__proto__`. */
const fileSchema = z.object({
  version: z.literal(RECORD_VERSION),
  entries: z.record(z.string(), z.unknown()),
});

export interface RecordEntry {
  readonly backend: SecretBackendName;
  readonly updatedAt: string;
}

export class SecretsRecord {
  constructor(readonly file: string) {}

  /** Key → where it is; empty when the file does not exist yet. */
  async read(): Promise<Map<string, RecordEntry>> {
    let raw: string;
    try {
      raw = await readFile(this.file, 'utf8');
    } catch (error) {
      const errno = (error as NodeJS.ErrnoException).code;
      if (errno === 'ENOENT') return new Map();
      throw this.corrupt(`it cannot be read (${errno ?? 'unknown error'})`, error);
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw this.corrupt('it is not JSON');
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) throw this.corrupt(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'file'}: ${issue.message}`).join('; '));
    const entries = new Map<string, RecordEntry>();
    for (const [key, value] of Object.entries((json as { entries: Record<string, unknown> }).entries)) {
      const entry = entrySchema.safeParse(value);
      if (!entry.success) throw this.corrupt(`the entry ${JSON.stringify(key)} is not { backend, updatedAt }`);
      entries.set(key, entry.data);
    }
    return entries;
  }

  /** Replaces the file; the caller holds the secrets lock and read the entries under it. */
  async writeLocked(entries: ReadonlyMap<string, RecordEntry>): Promise<void> {
    const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const content = { version: RECORD_VERSION, entries: Object.fromEntries(sorted) };
    await writeFileAtomic(this.file, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  }

  private corrupt(what: string, cause?: unknown) {
    return secretsError('PLN_E_SECRETS_CORRUPT', `${this.file} cannot be understood: ${what}`, {
      hint: `fix or delete ${this.file}; once it is deleted, plinth no longer knows where each server's tokens are, so sign in again to each server`,
      details: { file: this.file },
      ...(cause !== undefined && { cause }),
    });
  }
}
