/**
 * `<home>/trust.json`: approvals and pinned fingerprints, and the subjects
 * waiting for approval. Read without a lock (writes are atomic renames);
 * written under a lock file, re-reading first so that concurrent writers do
 * not lose each other's changes. A file that cannot be understood is an
 * error, never an empty store: approvals must not vanish.
 */
import { statSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type FileLockOptions, PlinthError, isPlinthError, withFileLock, writeFileAtomic } from 'plinth/sdk';
import { z } from 'zod';
import { TRUST_KINDS, TRUST_SOURCES, fileIdentity } from './fingerprint.js';
import type { TrustSubject } from 'plinth/sdk';

/** The format this code reads and writes. */
export const STORE_VERSION = 1;

const fingerprintSchema = z.string().regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 in hex');

/** Label → shown value (see snapshot.ts); never a secret. */
const shownSchema = z.record(z.string(), z.string());

const recordSchema = z.object({
  kind: z.enum(TRUST_KINDS),
  id: z.string().min(1),
  source: z.enum(TRUST_SOURCES),
  fingerprint: fingerprintSchema,
  /** `pinned`: a user subject trusted on first use; `approved`: a person said yes. */
  how: z.enum(['pinned', 'approved']),
  /** ISO time of the approval or pin. */
  at: z.string(),
  summary: z.string(),
  /** A workspace subject's workspace root: its approval does not carry over to another workspace that reuses the id. */
  workspace: z.string().optional(),
  /** What was shown of it (secrets masked), to say what changed when it is asked for again. Absent in records of plinth before 2. */
  shown: shownSchema.optional(),
});

const requestSchema = z.object({
  kind: z.enum(TRUST_KINDS),
  id: z.string().min(1),
  source: z.enum(TRUST_SOURCES),
  fingerprint: fingerprintSchema,
  /** `pending`: never approved; `changed`: approved or pinned once, different now. */
  state: z.enum(['pending', 'changed']),
  /** ISO time it was refused. */
  at: z.string(),
  summary: z.string(),
  workspace: z.string().optional(),
  shown: shownSchema.optional(),
});

const storeSchema = z.object({
  version: z.literal(STORE_VERSION),
  approvals: z.array(recordSchema).default([]),
  requests: z.array(requestSchema).default([]),
});

/** One approval or pin. */
export type TrustRecord = z.infer<typeof recordSchema>;
/** A subject that was refused for want of approval, as it was then: what `plinth trust approve` approves. */
export type TrustRequest = z.infer<typeof requestSchema>;
/** The whole file. */
export interface TrustData {
  version: typeof STORE_VERSION;
  approvals: TrustRecord[];
  requests: TrustRequest[];
}

export type TrustKind = TrustSubject['kind'];

/** What identifies an entry: the subject's kind and id, and for a workspace subject its workspace. */
export interface EntryKey {
  readonly kind: TrustKind;
  readonly id: string;
  readonly workspace?: string | undefined;
}

const sameKey = (entry: EntryKey, key: EntryKey): boolean => entry.kind === key.kind && entry.id === key.id && entry.workspace === key.workspace;

/** Finds the entry for `key` in a list of approvals or requests. */
export function findEntry<T extends EntryKey>(list: readonly T[], key: EntryKey): T | undefined {
  return list.find((entry) => sameKey(entry, key));
}

/** Removes the entries for `key` (a hand-edited file may repeat one); returns whether there was one. */
export function removeEntry<T extends EntryKey>(list: T[], key: EntryKey): boolean {
  let removed = false;
  for (let i = list.length - 1; i >= 0; i--) {
    if (sameKey(list[i]!, key)) {
      list.splice(i, 1);
      removed = true;
    }
  }
  return removed;
}

/** Sets the entry for its key, replacing any. */
export function putEntry<T extends EntryKey>(list: T[], entry: T): void {
  removeEntry(list, entry);
  list.push(entry);
}

export interface TrustStoreOptions {
  /** Lock waiting and staleness; see `FileLockOptions` in plinth/sdk. */
  lock?: FileLockOptions;
}

/** The store of a home without trust.json. */
const EMPTY: TrustData = deepFreeze({ version: STORE_VERSION, approvals: [], requests: [] });

/** A change to the store: edits `data` in place, and says whether it changed anything. */
export type StoreChange = (data: TrustData) => boolean;

export class TrustStore {
  readonly file: string;
  readonly lockFile: string;
  private readonly options: TrustStoreOptions;
  private cache: { key: string; data: TrustData } | undefined;
  /** While batching (see {@link startBatch}): the changes not written yet, in order. */
  private batch: StoreChange[] | undefined;
  /** The file's data with the batch applied, and the file data it was made from: what `read` returns while batching. */
  private overlay: { base: TrustData; data: TrustData } | undefined;
  /** Writes made (each under the lock, atomically): for tests and benchmarks. */
  writes = 0;
  /** Serialises this instance's writers, so that only one of them polls the lock file. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(file: string, options: TrustStoreOptions = {}) {
    this.file = file;
    this.lockFile = `${file}.lock`;
    this.options = options;
  }

  /**
   * The store as it is on disk; empty when the file does not exist. Parsed
   * again only when the file changed (another inode, time or size): checks run
   * before every hook, so that `stat` is synchronous (a metadata call, a tenth
   * of a round trip through the thread pool). The result is frozen; `update`
   * hands out a copy to change.
   */
  async read(): Promise<TrustData> {
    let info;
    try {
      info = statSync(this.file, { bigint: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw this.readError(error);
      this.cache = undefined;
      return this.withBatch(EMPTY);
    }
    const key = fileIdentity(info);
    if (this.cache?.key !== key) this.cache = { key, data: deepFreeze(await this.readFresh()) };
    return this.withBatch(this.cache.data);
  }

  /**
   * From now on, changes made with {@link defer} are kept in memory and written together, in one
   * write, by {@link endBatch} (or by the next {@link update}, which writes them first); `read`
   * shows them at once. The trust plugin batches a boot: the pins of many user plugins, trusted on
   * first use one after another, cost one write instead of a locked rewrite with two flushes each.
   */
  startBatch(): void {
    this.batch ??= [];
  }

  /** Whether changes are being batched. */
  get batching(): boolean {
    return this.batch !== undefined;
  }

  /** Writes what the batch holds, if anything, in one write under the lock, and stops batching. */
  async endBatch(): Promise<void> {
    if (this.batch === undefined) return;
    if (this.batch.length === 0) {
      this.batch = undefined;
      this.overlay = undefined;
      return;
    }
    await this.update(() => ({ changed: false, result: undefined }));
    this.batch = undefined;
    this.overlay = undefined;
  }

  /**
   * A change that may wait: written at once (as {@link update}) unless batching; then applied to
   * what `read` returns now and written with the batch. At the write it is applied again to the
   * store as it is then (re-read under the lock, another process's changes in it), so it must
   * decide from `data` alone, as an `update` does.
   */
  async defer(change: StoreChange): Promise<void> {
    if (this.batch === undefined) {
      await this.update((data) => ({ changed: change(data), result: undefined }));
      return;
    }
    this.batch.push(change);
    if (this.overlay !== undefined) change(this.overlay.data);
  }

  /** `data` with the batch applied (a copy, made again only when the file changed under it). Not to be changed by callers. */
  private withBatch(data: TrustData): TrustData {
    if (this.batch === undefined || this.batch.length === 0) return data;
    if (this.overlay?.base !== data) {
      const copy = structuredClone(data) as TrustData;
      for (const change of this.batch) change(copy);
      this.overlay = { base: data, data: copy };
    }
    return this.overlay.data;
  }

  /** Reads and parses the file, whatever the cache holds. */
  private async readFresh(): Promise<TrustData> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: STORE_VERSION, approvals: [], requests: [] };
      throw this.readError(error);
    }
    return this.parse(text);
  }

  private readError(error: unknown): PlinthError {
    const code = (error as NodeJS.ErrnoException).code;
    return new PlinthError('PLN_E_TRUST_STORE_READ', `cannot read the trust store ${this.file} (${code ?? 'unknown error'})`, {
      plugin: 'trust',
      cause: error,
      hint: `make ${this.file} a file readable by you`,
    });
  }

  /**
   * Changes the store: under the lock, re-reads it, lets `change` edit the data
   * (returning whether it changed anything and a result), and writes it back
   * atomically when it did.
   */
  update<T>(change: (data: TrustData) => { changed: boolean; result: T }): Promise<T> {
    const run = this.queue.then(() => this.locked(change));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Under the lock. A lock held by another process for the whole wait is the
   * sdk's `PLN_E_FILE_LOCKED`; a lock file that cannot be created is a write error.
   */
  private async locked<T>(change: (data: TrustData) => { changed: boolean; result: T }): Promise<T> {
    await this.ensureFolder();
    const run = async () => {
      const data = await this.readFresh();
      // What the batch holds goes with this write, before this change.
      const pending = this.batch?.splice(0) ?? [];
      let batched = false;
      for (const earlier of pending) batched = earlier(data) || batched;
      this.overlay = undefined;
      try {
        const { changed, result } = change(data);
        if (changed || batched) await this.write(data);
        return result;
      } catch (error) {
        // Not written: the batch waits for the next write.
        this.batch?.unshift(...pending);
        throw error;
      }
    };
    try {
      return await withFileLock(this.lockFile, run, this.options.lock);
    } catch (error) {
      // Only the lock itself throws this code: `write` wraps its own.
      if (isPlinthError(error) && error.code === 'PLN_E_FILE_WRITE') throw this.writeError(error);
      throw error;
    }
  }

  private parse(text: string): TrustData {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw this.corrupt(`it is not valid JSON (${(error as Error).message})`, error);
    }
    const version = (json as { version?: unknown } | null)?.version;
    if (typeof version === 'number' && version > STORE_VERSION) {
      throw new PlinthError('PLN_E_TRUST_STORE_VERSION', `the trust store ${this.file} has format ${version}, newer than this plinth reads (${STORE_VERSION})`, {
        plugin: 'trust',
        hint: 'upgrade plinth; this version leaves the file untouched',
        details: { file: this.file, version },
      });
    }
    const parsed = storeSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      throw this.corrupt(`${where}: ${issue?.message ?? 'unexpected content'}`, parsed.error);
    }
    return parsed.data;
  }

  private corrupt(problem: string, cause: unknown): PlinthError {
    return new PlinthError('PLN_E_TRUST_STORE_CORRUPT', `the trust store ${this.file} is corrupt: ${problem}`, {
      plugin: 'trust',
      cause,
      hint: `fix the file by hand, or move it away (approvals in it will be asked for again); plinth will not overwrite it`,
      details: { file: this.file },
    });
  }

  private async ensureFolder(): Promise<void> {
    try {
      await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw this.writeError(error);
    }
  }

  /** Atomically (temp file in the same folder, fsync, rename, fsync of the folder), mode 0600. */
  private async write(data: TrustData): Promise<void> {
    try {
      await writeFileAtomic(this.file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      this.writes++;
    } catch (error) {
      throw this.writeError(error);
    }
  }

  /** The trust store's own code and hint; an sdk file error stays as the cause. */
  private writeError(cause: unknown): PlinthError {
    const problem = isPlinthError(cause) ? cause.message : `cannot write the trust store ${this.file} (${(cause as NodeJS.ErrnoException).code ?? 'unknown error'})`;
    return new PlinthError('PLN_E_TRUST_STORE_WRITE', problem, {
      plugin: 'trust',
      cause,
      hint: 'make the plinth home folder (PLINTH_HOME, default ~/.plinth) writable by you, and check free space',
    });
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/** A record of `subject` as it is now. */
export function recordOf(subject: TrustSubject, fingerprint: string, how: TrustRecord['how'], workspace: string | undefined, shown: Readonly<Record<string, string>>): TrustRecord {
  return { kind: subject.kind, id: subject.id, source: subject.source, fingerprint, how, at: new Date().toISOString(), summary: subject.summary, ...(workspace !== undefined && { workspace }), shown: { ...shown } };
}
