/**
 * The `trust` service: fingerprints a subject, compares it with the store,
 * pins user subjects on first use, and asks on the terminal when approval is
 * needed and asking is allowed.
 */
import { type Logger, PlinthError } from 'plinth/sdk';
import { type PromptIO, askYesNo, processTerminal, whyNotAsk } from 'plinth/internal';
import type { Coverage } from './covered.js';
import { TRUST_KINDS, validateSubject } from './fingerprint.js';
import { pluginSubject } from './plugin-files.js';
import type { FileHashCache } from './hash-cache.js';
import { type InstalledLock, recordedHashes } from './recorded-hashes.js';
import { type Shown, type Snapshot, changedLabels, changes, snapshot } from './snapshot.js';
import { SnapshotMemo } from './snapshot-memo.js';
import { type EntryKey, type TrustData, type TrustStore, findEntry, putEntry, recordOf, removeEntry } from './store.js';
import type { CheckOptions, TrustService, TrustSubject, TrustVerdict } from 'plinth/sdk';
import { type Assessment, type CommandContext, approveCommand, assess, describeSubject, needText, question, refusal, shortFingerprint } from './verdict.js';

export interface TrustServiceOptions {
  readonly store: TrustStore;
  readonly log: Logger;
  /** Aborts a question on the terminal (the kernel shutting down). */
  readonly signal?: AbortSignal;
  /** Home, workspace and profile, for the approve command in messages. */
  readonly where: () => CommandContext;
  /** Where to ask; default stdin (answers) and stderr (question). */
  readonly terminal?: () => PromptIO;
  /** Read for `CI`; default `process.env`. */
  readonly env?: () => Record<string, string | undefined>;
  /** Masks secrets the kernel knows of (`kernel.redact`) in what is shown of a subject. */
  readonly redact?: (text: string) => string;
  /**
   * The home's lock file of installed plugins: files of an installed version that are as recorded
   * at install are not read again (recorded-hashes.ts). Without it every file is read.
   */
  readonly installed?: InstalledLock;
  /** Hashes of large files kept between checks (hash-cache.ts); without it every file is read. */
  readonly hashCache?: FileHashCache;
  /** The installed plugin whose approval covers a subject its own record does not (covered.ts); none by default. */
  readonly coveredBy?: (subject: TrustSubject, data: TrustData) => Promise<Coverage | undefined>;
  /** Snapshots of hooks and servers kept by the identity of what they looked at (snapshot-memo.ts); a new one by default. */
  readonly memo?: SnapshotMemo;
}

type Pending = Extract<Assessment, { trusted: false }>;

/**
 * Subjects seen deeply frozen (plain data, every object frozen: the hooks plugin hands the same
 * one for a definition at every event), valid, with their part of a memo key (null: not JSON). A
 * frozen object cannot change, so neither its validity nor its key: neither is worked out again.
 */
const frozenSubjects = new WeakMap<TrustSubject, string | null>();

/** The subject's own part of a memo key: what it says, as JSON (null when it is not JSON). */
function ownKey(subject: TrustSubject): string | null {
  const known = frozenSubjects.get(subject);
  if (known !== undefined) return known;
  let key: string | null;
  try {
    key = JSON.stringify([subject.kind, subject.id, subject.source, subject.definition ?? null, subject.files, subject.runs ?? null]);
  } catch {
    key = null;
  }
  if (isFrozenData(subject)) frozenSubjects.set(subject, key);
  return key;
}

/** Whether `value` is plain data (no functions: no `toJSON`) whose every object and array is frozen. */
function isFrozenData(value: unknown): boolean {
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') return false;
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== Array.prototype && prototype !== null) return false;
  return Object.values(value).every(isFrozenData);
}

/** A trusted verdict with the files its snapshot pinned (workspace subjects): what the launch must run exactly. */
const withPins = (verdict: TrustVerdict, now: Snapshot): TrustVerdict => (verdict.trusted && now.pinned !== undefined && verdict.fingerprint === now.fingerprint ? { ...verdict, pinned: now.pinned } : verdict);

/** Creates the service for one kernel. Declined subjects are remembered for the life of the service. */
export function createTrustService(options: TrustServiceOptions): TrustService {
  const { store, log } = options;
  const terminal = options.terminal ?? processTerminal;
  const env = options.env ?? (() => process.env);
  /** `kind \0 id \0 fingerprint` answered "no" at the prompt. */
  const declined = new Set<string>();
  /** One question at a time: the terminal is shared. */
  let asking: Promise<unknown> = Promise.resolve();

  /**
   * Where a subject's approval is kept: a workspace subject's in its workspace,
   * since another repository may reuse the id for something else.
   */
  const keyOf = (subject: Pick<TrustSubject, 'kind' | 'id' | 'source'>): EntryKey => ({
    kind: subject.kind,
    id: subject.id,
    ...(subject.source === 'workspace' && { workspace: options.where().workspace }),
  });
  const declinedKey = (key: EntryKey, fp: string) => `${key.kind}\0${key.id}\0${key.workspace ?? ''}\0${fp}`;
  const forgetDeclined = (kind: string, id: string) => {
    for (const key of declined) if (key.startsWith(`${kind}\0${id}\0`)) declined.delete(key);
  };
  const memo = options.memo ?? new SnapshotMemo();
  /**
   * Where a subject's snapshot is kept (snapshot-memo.ts): hooks and servers, which are checked
   * at every run; not plugins (checked once per load). Undefined for a subject not kept, or one
   * whose definition is not JSON (taking its snapshot says so).
   */
  const memoKey = (subject: TrustSubject): string | undefined => {
    if (subject.runs === undefined) return undefined;
    const own = ownKey(subject);
    // What a snapshot depends on besides the subject and the files: where it is looked up, the host's PATH (runs-files.ts).
    return own === null ? undefined : `${own}\0${options.where().workspace}\0${process.env.PATH ?? ''}`;
  };
  /** The subject's fingerprint and what is shown of it, as it is now; kept under `key` when given. */
  const take = async (subject: TrustSubject, key?: string): Promise<Snapshot> => {
    const recorded = options.installed && recordedHashes(options.installed);
    const cache = options.hashCache;
    const known = cache ? { ...(recorded && { sha256Of: (path: string) => recorded.sha256Of(path) }), byIdentity: cache.byIdentity.bind(cache), remember: cache.remember.bind(cache) } : recorded;
    const startedAt = Date.now();
    const touched = key === undefined ? undefined : new Set<string>();
    try {
      const taken = await snapshot(subject, subject.source === 'workspace', options.redact, known, options.where().workspace, touched);
      if (key !== undefined) memo.put(key, taken, touched!, startedAt);
      return taken;
    } finally {
      await cache?.flush();
    }
  };
  /**
   * The verdict from a kept snapshot when it is trusted with nothing to record (no pin, no
   * request to drop); undefined otherwise: then the snapshot is taken again and the full path
   * decides (and says what is shown, with what the redactor knows now).
   */
  const keptVerdict = async (subject: TrustSubject, key: string | undefined): Promise<TrustVerdict | undefined> => {
    const kept = key === undefined ? undefined : memo.get(key);
    if (kept === undefined) return undefined;
    const fp = kept.fingerprint;
    if (subject.source === 'builtin') return { trusted: true, level: 'builtin', fingerprint: fp };
    const data = await store.read();
    const assessment = assess(subject, fp, findEntry(data.approvals, keyOf(subject)));
    if (!assessment.trusted || assessment.pin || findEntry(data.requests, keyOf(subject))) return undefined;
    return withPins({ trusted: true, level: assessment.level, fingerprint: fp }, kept);
  };
  /** Why it needs approval, naming what changed since `record` when that is known. */
  const needOf = (subject: TrustSubject, assessment: Pending, shown: Shown) =>
    needText(subject, assessment.state, assessment.record, assessment.state === 'changed' ? changedLabels(assessment.record?.shown, shown) : []);
  /** The verdict for a subject an installed plugin's approval covers (covered.ts), or undefined when none does. */
  const byPlugin = async (subject: TrustSubject, fp: string, data: TrustData): Promise<TrustVerdict | undefined> => {
    const coverage = await options.coveredBy?.(subject, data);
    if (coverage === undefined) return undefined;
    if (coverage.covered) {
      log.debug(`${describeSubject(subject)} is covered by the approval of installed plugin "${coverage.plugin}"`);
      return { trusted: true, level: 'approved', fingerprint: fp };
    }
    const id = `${coverage.plugin}@${coverage.version}`;
    const need = `${describeSubject(subject)} is declared by installed plugin "${coverage.plugin}", whose folder changed since it was approved at install (\`plinth ext verify ${coverage.plugin}\` lists what changed; \`plinth ext install --force ${id}\` restores it)`;
    return refusal(subject, fp, 'changed', need, undefined, commandFor(subject));
  };
  const commandFor = (subject: Pick<TrustSubject, 'kind' | 'id' | 'source'>) => approveCommand(subject.kind, subject.id, options.where(), env(), keyOf(subject).workspace);

  async function approveAs(subject: TrustSubject, { fingerprint: fp, shown }: Snapshot): Promise<TrustVerdict> {
    const key = keyOf(subject);
    await store.update((data) => {
      putEntry(data.approvals, recordOf(subject, fp, 'approved', key.workspace, shown));
      removeEntry(data.requests, key);
      return { changed: true, result: undefined };
    });
    forgetDeclined(subject.kind, subject.id);
    log.info(`approved ${describeSubject(subject)} (fingerprint ${shortFingerprint(fp)})`);
    return { trusted: true, level: 'approved', fingerprint: fp };
  }

  /**
   * Trust on first use: records the pin, unless another writer recorded something first. While the
   * store batches (a boot), the pin is written with the boot's others: the verdict stands from now,
   * and if another process pinned the subject otherwise in between, its record is kept (the first
   * writer's, as without a batch) and this one is said to be dropped.
   */
  async function pin(subject: TrustSubject, { fingerprint: fp, shown }: Snapshot): Promise<Assessment> {
    if (store.batching) {
      const key = keyOf(subject);
      const record = recordOf(subject, fp, 'pinned', key.workspace, shown);
      const assessment = assess(subject, fp, findEntry((await store.read()).approvals, key));
      if (!(assessment.trusted && assessment.pin)) return assessment;
      await store.defer((data) => {
        const now = assess(subject, fp, findEntry(data.approvals, key));
        if (now.trusted && now.pin) {
          putEntry(data.approvals, record);
          return true;
        }
        if (!now.trusted) log.warn(`${describeSubject(subject)} was pinned on first use (fingerprint ${shortFingerprint(fp)}), but another plinth process pinned it first as it was then; that record is kept, and the next check compares with it`);
        return false;
      });
      log.info(`pinned ${describeSubject(subject)} on first use (fingerprint ${shortFingerprint(fp)})`);
      return assessment;
    }
    const assessment = await store.update((data) => {
      const now = assess(subject, fp, findEntry(data.approvals, keyOf(subject)));
      if (now.trusted && now.pin) putEntry(data.approvals, recordOf(subject, fp, 'pinned', keyOf(subject).workspace, shown));
      return { changed: now.trusted && now.pin, result: now };
    });
    if (assessment.trusted && assessment.pin) log.info(`pinned ${describeSubject(subject)} on first use (fingerprint ${shortFingerprint(fp)})`);
    return assessment;
  }

  /** Remembers a refused subject as it is now, for `plinth trust approve` and `plinth trust list`. Best effort. */
  async function recordRequest(subject: TrustSubject, { fingerprint: fp, shown }: Snapshot, state: Pending['state'], data: TrustData): Promise<void> {
    const same = (r: TrustData['requests'][number] | undefined) => r?.fingerprint === fp && r.state === state && r.source === subject.source;
    const key = keyOf(subject);
    if (same(findEntry(data.requests, key))) return;
    const { kind, id, source, summary } = subject;
    const request = { kind, id, source, fingerprint: fp, state, at: new Date().toISOString(), summary, ...(key.workspace !== undefined && { workspace: key.workspace }), shown: { ...shown } };
    try {
      // With a boot's others when the store batches.
      await store.defer((fresh) => {
        if (same(findEntry(fresh.requests, key))) return false;
        putEntry(fresh.requests, { ...request, shown: { ...request.shown } });
        return true;
      });
    } catch (error) {
      log.warn(`could not record that ${describeSubject(subject)} waits for approval: ${(error as Error).message}`);
    }
  }

  /** Drops a request left from an earlier refusal once the subject is trusted. Best effort. */
  async function dropRequest(subject: TrustSubject, data: TrustData): Promise<void> {
    const key = keyOf(subject);
    if (!findEntry(data.requests, key)) return;
    await store
      .defer((fresh) => removeEntry(fresh.requests, key))
      .catch((error: unknown) => log.debug(`could not drop the approval request of ${describeSubject(subject)}: ${(error as Error).message}`));
  }

  async function needApproval(subject: TrustSubject, now: Snapshot, assessment: Pending, data: TrustData, checkOptions: CheckOptions | undefined): Promise<TrustVerdict> {
    const fp = now.fingerprint;
    const interactive = checkOptions?.interactive;
    const need = needOf(subject, assessment, now.shown);
    const command = commandFor(subject);
    if (declined.has(declinedKey(keyOf(subject), fp))) return refusal(subject, fp, 'denied', need, undefined, command);
    const why = interactive === false ? 'the caller asked it not to (interactive: false)' : whyNotAsk(terminal(), env());
    if (why !== undefined) {
      await recordRequest(subject, now, assessment.state, data);
      log.info(`refused ${describeSubject(subject)}: ${need}; not asked because ${why}`);
      return refusal(subject, fp, assessment.state, need, why, command);
    }
    const turn = asking.then(() => ask(subject, now, command, checkOptions?.signal));
    asking = turn.catch(() => undefined);
    return turn;
  }

  /** Asks on the terminal, after re-reading: an earlier question (or another process) may have settled it. */
  async function ask(subject: TrustSubject, now: Snapshot, command: string, callerSignal: AbortSignal | undefined): Promise<TrustVerdict> {
    const fp = now.fingerprint;
    const data = await store.read();
    const assessment = assess(subject, fp, findEntry(data.approvals, keyOf(subject)));
    if (assessment.trusted) return { trusted: true, level: assessment.level, fingerprint: fp };
    const need = needOf(subject, assessment, now.shown);
    if (declined.has(declinedKey(keyOf(subject), fp))) return refusal(subject, fp, 'denied', need, undefined, command);
    const signals = [options.signal, callerSignal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const changeLines = assessment.state === 'changed' ? changes(assessment.record?.shown, now.shown) : [];
    const yes = await askYesNo(question(subject, fp, need, assessment.state, now.shown, changeLines), terminal(), signal);
    if (yes) return approveAs(subject, now);
    if (options.signal?.aborted) return refusal(subject, fp, assessment.state, need, 'plinth is shutting down', command);
    if (callerSignal?.aborted) {
      // Withdrawn by the caller (no answer in time): not a "no", so it may be asked again.
      await recordRequest(subject, now, assessment.state, data);
      return refusal(subject, fp, assessment.state, `${need}, and the question was not answered in time`, undefined, command);
    }
    declined.add(declinedKey(keyOf(subject), fp));
    await recordRequest(subject, now, assessment.state, data);
    log.info(`${describeSubject(subject)} was declined at the prompt`);
    return refusal(subject, fp, 'denied', need, undefined, command);
  }

  const validate = (subject: TrustSubject): void => {
    if (frozenSubjects.has(subject)) return;
    validateSubject(subject);
    ownKey(subject);
  };

  return {
    async check(subject, checkOptions) {
      validate(subject);
      const key = memoKey(subject);
      const kept = await keptVerdict(subject, key);
      if (kept !== undefined) return kept;
      const now = await take(subject, key);
      const fp = now.fingerprint;
      if (subject.source === 'builtin') return { trusted: true, level: 'builtin', fingerprint: fp };
      const data = await store.read();
      let assessment = assess(subject, fp, findEntry(data.approvals, keyOf(subject)));
      if (assessment.trusted && assessment.pin) assessment = await pin(subject, now);
      if (assessment.trusted) {
        await dropRequest(subject, data);
        return withPins({ trusted: true, level: assessment.level, fingerprint: fp }, now);
      }
      const covered = await byPlugin(subject, fp, data);
      if (covered?.trusted) await dropRequest(subject, data);
      if (covered) return covered;
      return withPins(await needApproval(subject, now, assessment, data, checkOptions), now);
    },

    async approve(subject) {
      validateSubject(subject);
      const now = await take(subject);
      if (subject.source === 'builtin') return { trusted: true, level: 'builtin', fingerprint: now.fingerprint };
      return approveAs(subject, now);
    },

    async revoke(kind, id) {
      if (!(TRUST_KINDS as readonly unknown[]).includes(kind) || typeof id !== 'string' || id === '') {
        throw new PlinthError('PLN_E_TRUST_SUBJECT_INVALID', `cannot revoke ${JSON.stringify(kind)} ${JSON.stringify(id)}: kind must be one of ${TRUST_KINDS.join(', ')} and id a non-empty string`, {
          plugin: 'trust',
          hint: 'see `plinth trust list` for what is recorded',
        });
      }
      // What this workspace sees under that id: its own entry, or one that holds everywhere (a user subject).
      const keys: EntryKey[] = [{ kind, id }, { kind, id, workspace: options.where().workspace }];
      const had = await store.update((data) => {
        let approval = false;
        let request = false;
        for (const key of keys) {
          approval = removeEntry(data.approvals, key) || approval;
          request = removeEntry(data.requests, key) || request;
        }
        return { changed: approval || request, result: approval };
      });
      forgetDeclined(kind, id);
      if (had) log.info(`revoked ${kind} "${id}"`);
      return had;
    },

    async inspect(subject) {
      validate(subject);
      const key = memoKey(subject);
      const kept = await keptVerdict(subject, key);
      if (kept !== undefined) return { trusted: kept.trusted, level: kept.level, fingerprint: kept.fingerprint };
      const now = await take(subject, key);
      const fp = now.fingerprint;
      if (subject.source === 'builtin') return { trusted: true, level: 'builtin', fingerprint: fp };
      const data = await store.read();
      const assessment = assess(subject, fp, findEntry(data.approvals, keyOf(subject)));
      if (assessment.trusted) return { trusted: true, level: assessment.level, fingerprint: fp };
      const covered = await byPlugin(subject, fp, data);
      if (covered) return covered;
      const need = needOf(subject, assessment, now.shown);
      const level = declined.has(declinedKey(keyOf(subject), fp)) ? 'denied' : assessment.state;
      // `trust approve` approves a server as it was refused: until a refusal of it as it is now is recorded, that command would fail.
      if (subject.kind === 'mcp-server' && findEntry(data.requests, keyOf(subject))?.fingerprint !== fp) {
        return { trusted: false, level, fingerprint: fp, reason: `${need}: start it once (plinth asks on a terminal, or records it for approval), then approve it with: ${commandFor(subject)}` };
      }
      return refusal(subject, fp, level, need, undefined, commandFor(subject));
    },

    pluginSubject: (plugin, source) => pluginSubject(plugin, source),
  };
}
