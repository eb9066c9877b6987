/**
 * Many servers at once, each with its own state machine:
 *
 * ```
 * stopped ─start─▶ starting ─▶ connected ─(transport closed)─▶ disconnected
 *                     │                                            │
 *                     └──(untrusted, failed, timed out)─▶ error    └─start─▶ starting …
 * ```
 *
 * `start` checks trust (workspace and extension servers wait for approval),
 * then tries to connect: each attempt within the connection timeout, up to
 * `retries` more after the first (the setting, or the caller's own number),
 * waiting `retryBaseMs × 2^n` between them.
 * `stop` calls off a start in progress and closes the client and transport,
 * and resolves only when they are closed (a stdio process has exited). The
 * manager does not reconnect by itself: the health plugin decides that.
 */
import { type Disposer, type PinnedFile, PlinthError, type TrustService, type TrustVerdict, describeError, isPlinthError } from 'plinth/sdk';
import { type GrantsService } from 'plinth/internal';
import { type ConnectDeps, type Connected, connectOnce } from './connect.js';
import type { ServerRecord } from './definitions.js';
import { mcpError } from './errors.js';
import type { McpSettings } from './settings.js';
import { checkServerTrust, serverTrustSubject } from './trust-subject.js';
import type { McpServerDefinition, ServerState, ServerStatus, StartOptions, TransportConnection } from 'plinth/sdk';

/** What the manager needs from the plugin. */
export interface ManagerDeps extends ConnectDeps {
  readonly settings: Pick<McpSettings, 'retries' | 'retryBaseMs'>;
  readonly trust: () => Promise<TrustService>;
  /** The sandbox's grants, when a plugin provides them: an unapproved server's error also names what its start will need granted. */
  readonly grants?: () => Promise<GrantsService | undefined>;
  /** The servers, read once when first needed; undefined before `ready` (manifests are not all known yet). */
  readonly records: () => readonly ServerRecord[] | undefined;
  /** Aborted when the kernel shuts down: withdraws a trust question on the terminal. */
  readonly signal: AbortSignal;
  /** Tools of a server in the registry now, for statuses. */
  readonly toolCount: (server: string) => number;
  /**
   * Loads what every attempt needs (the SDK, the features module) before the
   * first attempt, so that importing plinth's own code does not count against
   * a server's connection timeout. Failures are the attempt's to report.
   */
  readonly warmUp?: () => Promise<unknown>;
}

/** Listener of state changes. */
export type StateListener = (status: ServerStatus, previous: ServerState) => void;

/** Codes retrying cannot help with: configuration, trust, the kernel. */
const RETRYABLE = new Set(['PLN_E_MCP_CONNECT_TIMEOUT', 'PLN_E_MCP_CONNECT_FAILED']);

/** The caller's exit grace for the transport (a whole number of ms, at least 0), if it gave one. */
function exitGrace(options: StartOptions | undefined): number | undefined {
  const asked = options?.exitGraceMs;
  return asked !== undefined && Number.isFinite(asked) ? Math.max(0, Math.floor(asked)) : undefined;
}

/** The reason a start is called off by `stop`; never shown. */
const STOPPED = Symbol('stopped');

interface Slot {
  readonly record: ServerRecord;
  state: ServerState;
  attempts: number;
  transport: string;
  connectedAt?: string;
  error?: { code: string; message: string; hint?: string };
  current?: Connected;
  /** The last connection, kept after it closed for its stderr tail. */
  last?: TransportConnection;
  /** Why the process went away, as the transport reported it. */
  downReason?: string;
  starting?: Promise<ServerStatus>;
  /** Settles once the current start's first connection attempt has (connected, failed, or gone on to retry with backoff). */
  firstAttempt?: Promise<void>;
  abort?: AbortController;
  /** Bumped by every start and stop: late callbacks of an older connection are ignored. */
  generation: number;
  closing?: Promise<void>;
}

/** The lifecycle half of the `mcp` service. */
export class ServerManager {
  readonly #deps: ManagerDeps;
  #slots: Map<string, Slot> | undefined;
  readonly #listeners = new Set<StateListener>();
  /** See {@link useExitGrace}; undefined: the transport's own setting. */
  #exitGraceMs: number | undefined;
  #closed = false;

  constructor(deps: ManagerDeps) {
    this.#deps = deps;
  }

  /** Every configured server, in definition order. */
  servers(): ServerStatus[] {
    return [...this.#all().values()].map((slot) => this.#status(slot));
  }

  definition(name: string): McpServerDefinition | undefined {
    return this.#all().get(name)?.record.definition;
  }

  /** The current status of one server. */
  status(name: string): ServerStatus | undefined {
    const slot = this.#all().get(name);
    return slot && this.#status(slot);
  }

  /**
   * Starts one server; resolves with the status reached. A start in progress is
   * joined (with its own retries), a connected server is left as it is.
   * @throws PlinthError PLN_E_MCP_SERVER_UNKNOWN, PLN_E_MCP_SERVER_DISABLED, PLN_E_KERNEL_CLOSED
   */
  start(name: string, options?: StartOptions): Promise<ServerStatus> {
    let slot: Slot;
    try {
      slot = this.#slot(name);
      if (this.#closed) throw new PlinthError('PLN_E_KERNEL_CLOSED', `MCP server "${name}" cannot start: plinth is shutting down`, { plugin: 'mcp' });
      if (!slot.record.definition.enabled) {
        throw mcpError('PLN_E_MCP_SERVER_DISABLED', `MCP server "${name}" is disabled ("enabled": false in ${slot.record.definition.origin})`, { details: { server: name } });
      }
    } catch (error) {
      return Promise.reject(error as Error);
    }
    if (slot.state === 'connected') return Promise.resolve(this.#status(slot));
    if (slot.starting === undefined) {
      let attempted: () => void = () => undefined;
      slot.firstAttempt = new Promise<void>((resolve) => (attempted = resolve));
      slot.starting = this.#run(slot, this.#retries(options), exitGrace(options) ?? this.#exitGraceMs, attempted).finally(() => {
        attempted();
        slot.starting = undefined;
      });
    }
    return slot.starting;
  }

  /**
   * Resolves once every server starting now has had its first connection
   * attempt: connected, failed, or failed once and waiting to retry (then its
   * status is `starting` with the attempt's error). What a status shows
   * without waiting through retries and their backoff.
   */
  async firstAttempts(): Promise<void> {
    await Promise.all([...this.#all().values()].map((slot) => slot.firstAttempt));
  }

  /** Starts every enabled server, all at once. */
  startAll(options?: StartOptions): Promise<ServerStatus[]> {
    const enabled = [...this.#all().values()].filter((slot) => slot.record.definition.enabled);
    return Promise.all(enabled.map((slot) => this.start(slot.record.definition.name, options)));
  }

  /**
   * From now on, servers started without an `exitGraceMs` of their own get this
   * one: a one-shot command says so when it begins, so that every server it
   * starts (also through the health plugin's restart) stops promptly when it is done.
   */
  useExitGrace(ms: number): void {
    this.#exitGraceMs = Math.max(0, Math.floor(ms));
  }

  /**
   * Resolves when `name` may be contacted now (as `start` checks: workspace and
   * extension servers need approval, asked for on a terminal), else rejects with
   * the error that says why, naming the command that approves it.
   * @throws PlinthError PLN_E_MCP_SERVER_UNKNOWN, PLN_E_MCP_UNTRUSTED, or the trust store's own code
   */
  async ensureTrusted(name: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    const slot = this.#slot(name);
    const signal = options.signal === undefined ? this.#deps.signal : AbortSignal.any([options.signal, this.#deps.signal]);
    const refusal = await checkServerTrust(slot.record, this.#deps.trust, this.#deps.redact, signal, undefined, this.#deps.grants);
    if (refusal) throw refusal;
  }

  /** The verdict on `name` as it is now, without asking or recording (the trust plugin's `inspect`); undefined when it cannot be read. */
  async trust(name: string): Promise<TrustVerdict | undefined> {
    const slot = this.#slot(name);
    try {
      return await (await this.#deps.trust()).inspect(serverTrustSubject(slot.record, this.#deps.redact));
    } catch {
      return undefined;
    }
  }

  /** Calls off a start in progress, closes the connection; resolves once closed. */
  async stop(name: string): Promise<void> {
    await this.#stop(this.#slot(name));
  }

  /** Stops, then starts. */
  async restart(name: string, options?: StartOptions): Promise<ServerStatus> {
    await this.stop(name);
    return this.start(name, options);
  }

  client(name: string): Connected['client'] | undefined {
    return this.#all().get(name)?.current?.client;
  }

  connection(name: string): TransportConnection | undefined {
    return this.#all().get(name)?.current?.connection;
  }

  onStateChange(listener: StateListener): Disposer {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /**
   * Swaps in the servers as they are defined now (a plugin came, went or changed while running).
   * A server whose record is unchanged, and that `renew` does not name, keeps its slot and its
   * process: other plugins' servers and the settings' servers are never restarted. A server no
   * longer defined is stopped; a new, changed or renewed one gets a fresh slot and, after the old
   * one is stopped, starts if it was up before or `start` says so (the host is serving).
   * `stopped` settles once what went or was renewed is stopped; `started` once the new starts settled.
   */
  update(records: readonly ServerRecord[], options: { renew(record: ServerRecord): boolean; start(record: ServerRecord): boolean }): ServerUpdate {
    const old = this.#slots;
    // Never read yet: the servers are read as they are when first needed.
    if (old === undefined) return { removed: [], renewed: [], stopped: Promise.resolve(), started: Promise.resolve() };
    const next = new Map<string, Slot>();
    const stops: Promise<void>[] = [];
    const starts: Promise<unknown>[] = [];
    const renewed: string[] = [];
    for (const record of records) {
      const name = record.definition.name;
      const was = old.get(name);
      if (was && !options.renew(was.record) && !options.renew(record) && sameRecord(was.record, record)) {
        next.set(name, was);
        continue;
      }
      const slot = newSlot(record);
      next.set(name, slot);
      const wasUp = was !== undefined && (was.state === 'connected' || was.starting !== undefined);
      const stopping = was ? this.#stop(was) : Promise.resolve();
      if (was) {
        renewed.push(name);
        stops.push(stopping);
      }
      if (!record.definition.enabled || !(wasUp || options.start(record))) continue;
      // After the old process is gone (one process per server), and only if nothing replaced the slot meanwhile.
      starts.push(stopping.then(() => (this.#closed || this.#slots?.get(name) !== slot ? undefined : this.start(name))).catch(() => undefined));
    }
    const removed = [...old.keys()].filter((name) => !next.has(name));
    for (const name of removed) stops.push(this.#stop(old.get(name)!));
    this.#slots = next;
    return { removed, renewed, stopped: Promise.all(stops).then(() => undefined), started: Promise.all(starts).then(() => undefined) };
  }

  /** Stops every server and refuses new starts: the plugin's teardown. Resolves once every transport is closed. */
  async close(): Promise<void> {
    this.#closed = true;
    if (!this.#slots) return;
    await Promise.all([...this.#slots.values()].map((slot) => this.#stop(slot)));
  }

  #all(): Map<string, Slot> {
    if (this.#slots) return this.#slots;
    const records = this.#deps.records();
    if (records === undefined) return new Map();
    this.#slots = new Map(records.map((record) => [record.definition.name, newSlot(record)]));
    return this.#slots;
  }

  #slot(name: string): Slot {
    const slot = this.#all().get(name);
    if (!slot) {
      const known = [...this.#all().keys()];
      throw mcpError('PLN_E_MCP_SERVER_UNKNOWN', `no MCP server is named "${name}"${known.length > 0 ? ` (configured: ${known.join(', ')})` : ' (none is configured)'}`, {
        details: { server: name },
      });
    }
    return slot;
  }

  /** The caller's retries (a whole number, at least 0), or the setting's. */
  #retries(options: StartOptions | undefined): number {
    const asked = options?.retries;
    return asked !== undefined && Number.isFinite(asked) ? Math.max(0, Math.floor(asked)) : this.#deps.settings.retries;
  }

  /** `attempted` is called when the first attempt failed and a retry waits (its other outcomes end the run). */
  async #run(slot: Slot, retries: number, exitGraceMs: number | undefined, attempted: () => void = () => undefined): Promise<ServerStatus> {
    const { definition } = slot.record;
    const generation = ++slot.generation;
    const abort = new AbortController();
    slot.abort = abort;
    slot.attempts = 0;
    slot.downReason = undefined;
    slot.transport = definition.transport;
    this.#set(slot, 'starting', undefined);
    const current = () => slot.generation === generation && !abort.signal.aborted;

    if (slot.record.unresolved) return this.#fail(slot, slot.record.unresolved);
    let pinned: readonly PinnedFile[] = [];
    const refusal = await checkServerTrust(slot.record, this.#deps.trust, this.#deps.redact, AbortSignal.any([abort.signal, this.#deps.signal]), (files) => (pinned = files), this.#deps.grants);
    if (!current()) return this.#calledOff(slot);
    if (refusal) return this.#fail(slot, refusal);
    // Started from what was just approved, not from whatever the files hold by then (the launcher's approved copy).
    const approved = pinned.length > 0 ? { ...definition, pinned } : definition;

    await this.#deps.warmUp?.().catch(() => undefined);
    if (!current()) return this.#calledOff(slot);
    const { retryBaseMs } = this.#deps.settings;
    for (let n = 0; ; n++) {
      slot.attempts++;
      try {
        const deps = exitGraceMs === undefined ? this.#deps : { ...this.#deps, exitGraceMs };
        const connected = await connectOnce(approved, deps, abort.signal, (connection) => {
          if (slot.generation === generation) slot.last = connection;
        });
        if (!current()) {
          connected.session?.closed?.(`MCP server "${definition.name}" was stopped`);
          await connected.client.close().catch(() => undefined);
          return this.#calledOff(slot);
        }
        return this.#connected(slot, connected, generation);
      } catch (error) {
        if (!current()) return this.#calledOff(slot);
        const failure = isPlinthError(error) ? error : mcpError('PLN_E_MCP_CONNECT_FAILED', this.#deps.redact(describeError(error)), { cause: error });
        if (!RETRYABLE.has(failure.code) || n >= retries) {
          const tries = slot.attempts > 1 ? ` (after ${slot.attempts} attempts)` : '';
          return this.#fail(slot, failure, tries);
        }
        const delay = retryBaseMs * 2 ** n;
        this.#deps.log.info(this.#deps.redact(`${failure.message}; attempt ${slot.attempts} of ${retries + 1}, retrying in ${delay} ms`));
        slot.error = { code: failure.code, message: this.#deps.redact(failure.message) };
        attempted();
        if (!(await sleep(delay, abort.signal)) || !current()) return this.#calledOff(slot);
      }
    }
  }

  #connected(slot: Slot, connected: Connected, generation: number): ServerStatus {
    const name = slot.record.definition.name;
    slot.current = connected;
    slot.last = connected.connection;
    slot.transport = connected.transport;
    slot.attempts = 0;
    slot.connectedAt = new Date().toISOString();
    connected.connection.onDown?.((reason) => {
      if (slot.generation !== generation) return;
      slot.downReason = this.#deps.redact(reason);
      // The process may be reported gone after the stream closed: complete the message already shown.
      if (slot.state === 'disconnected' && slot.error && !slot.error.message.includes(slot.downReason)) {
        slot.error = { ...slot.error, message: `${slot.error.message}: ${slot.downReason}` };
      }
    });
    // The client closes when its transport does: the process exited, the stream ended.
    connected.client.onclose = () => {
      if (slot.generation !== generation || slot.current !== connected) return;
      slot.current = undefined;
      const why = slot.downReason ? `: ${slot.downReason}` : '';
      const error = mcpError('PLN_E_MCP_DISCONNECTED', `MCP server "${name}" closed the connection${why}`);
      connected.session?.closed?.(this.#deps.redact(error.message));
      this.#deps.log.warn(this.#deps.redact(error.message));
      this.#set(slot, 'disconnected', { code: error.code, message: this.#deps.redact(error.message) });
    };
    this.#deps.log.info(`MCP server "${name}" connected (${connected.transport})`);
    this.#set(slot, 'connected', undefined);
    return this.#status(slot);
  }

  /** A start called off by `stop`: the server is stopped, whatever the attempt was doing. */
  #calledOff(slot: Slot): ServerStatus {
    this.#set(slot, 'stopped', undefined);
    return this.#status(slot);
  }

  #fail(slot: Slot, error: PlinthError, suffix = ''): ServerStatus {
    const message = this.#deps.redact(`${error.message}${suffix}`);
    this.#deps.log.warn(`${error.code}: ${message}`);
    this.#set(slot, 'error', { code: error.code, message, ...(error.hint !== undefined && { hint: this.#deps.redact(error.hint) }) });
    return this.#status(slot);
  }

  #stop(slot: Slot): Promise<void> {
    slot.generation++;
    slot.abort?.abort(STOPPED);
    const closing = (async () => {
      await slot.starting?.catch(() => undefined);
      const connected = slot.current;
      slot.current = undefined;
      if (connected) {
        connected.session?.closed?.(`MCP server "${slot.record.definition.name}" was stopped`);
        await connected.client.close().catch((error: unknown) => {
          this.#deps.log.warn(this.#deps.redact(`MCP server "${slot.record.definition.name}" did not close cleanly: ${describeError(error)}`));
        });
      }
      if (slot.state !== 'stopped') this.#set(slot, 'stopped', undefined);
    })();
    // Concurrent stops (a `stop` racing the teardown) all wait for the same close.
    const all = Promise.all([slot.closing, closing]).then(() => undefined);
    slot.closing = all;
    return all;
  }

  #set(slot: Slot, state: ServerState, error: Slot['error']): void {
    const previous = slot.state;
    slot.state = state;
    if (error === undefined) delete slot.error;
    else slot.error = error;
    if (state !== 'connected') delete slot.connectedAt;
    if (previous === state) return;
    const status = this.#status(slot);
    for (const listener of [...this.#listeners]) {
      try {
        listener(status, previous);
      } catch (listenerError) {
        this.#deps.log.warn(this.#deps.redact(`a listener of MCP state changes failed: ${describeError(listenerError)}`));
      }
    }
  }

  #status(slot: Slot): ServerStatus {
    const { definition } = slot.record;
    const connection = slot.current?.connection;
    const pid = connection?.pid?.();
    const tail = (connection ?? slot.last)?.stderrTail?.();
    const serverInfo = slot.current?.client.getServerVersion();
    return {
      name: definition.name,
      state: slot.state,
      transport: slot.transport,
      source: definition.source,
      ...(pid !== undefined && { pid }),
      tools: slot.state === 'connected' ? this.#deps.toolCount(definition.name) : 0,
      attempts: slot.attempts,
      ...(slot.connectedAt !== undefined && { connectedAt: slot.connectedAt }),
      ...(slot.error !== undefined && { error: { ...slot.error } }),
      ...(tail ? { stderrTail: this.#deps.redact(tail) } : {}),
      ...(serverInfo && { serverInfo: { name: serverInfo.name, version: serverInfo.version } }),
      ...(slot.current?.era !== undefined && { era: slot.current.era }),
      ...(slot.current?.protocolVersion !== undefined && { protocolVersion: slot.current.protocolVersion }),
    };
  }
}

/** What {@link ServerManager.update} did. */
export interface ServerUpdate {
  /** Servers no longer defined. */
  readonly removed: readonly string[];
  /** Servers stopped to start again with their new definition (or their plugin's new version). */
  readonly renewed: readonly string[];
  readonly stopped: Promise<void>;
  readonly started: Promise<void>;
}

function newSlot(record: ServerRecord): Slot {
  return { record, state: 'stopped', attempts: 0, transport: record.definition.transport, generation: 0 };
}

/** Whether two records define the same server (what runs, how it is trusted, what failed to resolve). */
function sameRecord(a: ServerRecord, b: ServerRecord): boolean {
  const key = (r: ServerRecord) => JSON.stringify([r.definition, r.trustId, r.written, r.unresolved?.message ?? null]);
  return key(a) === key(b);
}

/** Waits `ms`; false when `signal` aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (finished: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(finished);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
