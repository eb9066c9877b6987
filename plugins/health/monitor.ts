/**
 * The health monitor: watches the `mcp` service's servers and moves each one
 * between states. While monitoring runs (`watch()`, at `serve`), connected
 * servers are checked every `interval`, a dead process or a dropped connection
 * is noticed at once, and a server that is down is restarted with exponential
 * backoff until `maxRestarts`, then marked `failed`. Without monitoring,
 * `check` and `restart` still work, but nothing happens on its own.
 */
import type { Logger } from 'plinth/sdk';
import type { McpService, ServerStatus } from 'plinth/sdk';
import type { HealthBoard, HealthRecord } from './board.js';
import { probe } from './probe.js';
import { applyOutcome } from './verdict.js';
import { backoffDelay, type HealthSettings } from './settings.js';
import { givenUp, isRetryable, isRetryableError, reasonOf, reasonOfError } from './reasons.js';

/**
 * Each restart of ours is one connection attempt: the backoff between restarts
 * is this monitor's, and the mcp plugin's own retries (1 s, 2 s, 4 s) inside each
 * would stretch every restart to seconds and the schedule with it.
 */
const ONE_ATTEMPT = { retries: 0 } as const;

/** The part of the `mcp` service that health uses. */
export type HealthMcp = Pick<McpService, 'servers' | 'definition' | 'restart' | 'stop' | 'client' | 'connection' | 'onStateChange'>;

export interface MonitorOptions {
  readonly settings: HealthSettings;
  readonly board: HealthBoard;
  /** The `mcp` service; asked for on first use, so that booting does not wait for it. */
  readonly mcp: () => Promise<HealthMcp>;
  readonly log: Logger;
}

export class HealthMonitor {
  private service: HealthMcp | undefined;
  private watching: Promise<void> | undefined;
  private offState: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: MonitorOptions) {}

  /** Whether monitoring runs (started and not closed). */
  get running(): boolean {
    return this.offState !== undefined && !this.closed;
  }

  /** Starts monitoring every server of the `mcp` service; idempotent. */
  watch(): Promise<void> {
    this.watching ??= this.mcp().then((mcp) => {
      if (this.closed) return;
      this.offState = mcp.onStateChange((status) => this.onState(status));
      for (const status of mcp.servers()) {
        if (mcp.definition(status.name)?.enabled === false) continue;
        this.onState(status);
      }
    });
    return this.watching;
  }

  /** Stops everything: timers, watches, the state listener. Records stay readable. */
  close(): void {
    this.closed = true;
    this.offState?.();
    for (const record of this.options.board.all()) this.quiet(record);
  }

  /** The servers of the `mcp` service, once it has been fetched. */
  known(): readonly ServerStatus[] | undefined {
    return this.service?.servers();
  }

  /** The `mcp` service, fetched once. */
  async mcp(): Promise<HealthMcp> {
    this.service ??= await this.options.mcp();
    return this.service;
  }

  /**
   * The record of `status`'s server, brought up to date first when monitoring does
   * not run (nothing else tells the board then): a connected server gets a record,
   * a monitored one that went away is `failed`.
   */
  sync(status: ServerStatus): HealthRecord | undefined {
    const record = this.options.board.get(status.name);
    if (this.running || record?.action) return record;
    if (status.state === 'connected') {
      if (record?.state !== 'healthy' && record?.state !== 'degraded') this.up(status.name, record, record ? 'connected again' : 'connected', true);
    } else if (record?.state === 'healthy' || record?.state === 'degraded') {
      this.down(status.name, record, reasonOf(status), isRetryable(status));
    }
    return this.options.board.get(status.name);
  }

  /** Checks `record` now (a check already in flight is shared); only healthy and degraded servers are checked. */
  check(record: HealthRecord): Promise<void> {
    record.checking ??= this.probeOnce(record).finally(() => (record.checking = undefined));
    return record.checking;
  }

  /**
   * A restart asked for by a person: counters reset, then `mcp.restart`. When it
   * fails, automatic restarts take over while monitoring runs; otherwise the server is `failed`.
   */
  async restartByHand(name: string): Promise<HealthRecord> {
    const { board } = this.options;
    await board.get(name)?.action; // one restart at a time: let ours finish first
    let record = board.get(name);
    if (record) {
      this.quiet(record);
      record.restarts = 0;
      record.failures = 0;
      board.move(record, 'restarting', 'manual restart', { attempt: 0 });
    } else {
      record = board.add(name, 'restarting', 'manual restart');
    }
    const thrown = await this.act(record, (mcp) => mcp.restart(name, ONE_ATTEMPT));
    if (!this.closed) this.judge(record, 'manual restart', thrown);
    // The mcp service refused (disabled, shutting down): the person who asked should see its error.
    if (thrown !== undefined) throw thrown;
    return record;
  }

  // ---- reactions -------------------------------------------------------------

  private onState(status: ServerStatus): void {
    if (this.closed) return;
    const record = this.options.board.get(status.name);
    if (record?.action) return; // our own restart or stop: judged when it returns
    switch (status.state) {
      case 'connected':
        this.up(status.name, record, record ? 'connected again' : 'connected', record?.state === 'failed');
        break;
      case 'disconnected':
      case 'error':
        if (record && (record.state === 'restarting' || record.state === 'failed')) return;
        if (!record && !isRetryable(status)) {
          // Configuration or trust problems: a health matter only once the server has run.
          this.options.log.debug(`not monitoring "${status.name}": ${reasonOf(status)}`);
          return;
        }
        this.down(status.name, record, reasonOf(status), isRetryable(status));
        break;
      case 'stopped':
        // Stopped on purpose (our own stops carry `action`): no longer monitored.
        if (record) {
          this.quiet(record);
          this.options.board.remove(status.name);
        }
        break;
      case 'starting':
        break; // someone else is starting it: wait for the outcome
    }
  }

  /** The server is connected: healthy, checked from now on, its process watched. */
  private up(name: string, record: HealthRecord | undefined, reason: string, resetRestarts: boolean): void {
    const { board } = this.options;
    if (record) {
      this.quiet(record);
      record.failures = 0;
      if (resetRestarts) record.restarts = 0;
      board.move(record, 'healthy', reason);
    } else {
      record = board.add(name, 'healthy', reason);
    }
    record.everConnected = true;
    record.upSince = Date.now();
    record.generation++;
    record.probe = 'ping'; // a new process may be a new version: ask again whether it has ping
    if (this.running) {
      this.watchProcess(record);
      this.scheduleCheck(record);
    }
  }

  /** The server is down or unusable: restart it with backoff (monitoring), or mark it failed. */
  private down(name: string, record: HealthRecord | undefined, reason: string, retryable = true): void {
    const { board, settings } = this.options;
    if (record) this.quiet(record);
    const restarts = record?.restarts ?? 0;
    if (!this.running || !retryable || restarts >= settings.maxRestarts) {
      const why = givenUp(reason, { monitored: this.running, retryable, restarts });
      if (record) board.move(record, 'failed', why);
      else board.add(name, 'failed', why);
      this.stopIfHung(board.get(name)!);
      return;
    }
    const attempt = restarts + 1;
    const delay = backoffDelay(record?.everConnected ? settings.backoffBaseMs : settings.startRetryMs, attempt);
    const extra = { attempt, retryInMs: delay, detail: `attempt ${attempt} of ${settings.maxRestarts} in ${delay} ms` };
    if (record) board.move(record, 'restarting', reason, extra);
    else record = board.add(name, 'restarting', reason, extra);
    const target = record;
    target.retryTimer = setTimeout(() => void this.restartAutomatically(target, attempt), delay);
    target.retryTimer.unref();
  }

  private async restartAutomatically(record: HealthRecord, attempt: number): Promise<void> {
    record.retryTimer = undefined;
    if (this.closed || this.options.board.get(record.name) !== record) return;
    if (this.forgetIfGone(record)) return;
    record.restarts = attempt;
    record.nextRetryAt = undefined;
    const thrown = await this.act(record, (mcp) => mcp.restart(record.name, ONE_ATTEMPT));
    if (!this.closed && this.options.board.get(record.name) === record) {
      this.judge(record, `restart ${attempt} of ${this.options.settings.maxRestarts}`, thrown);
    }
  }

  /**
   * After a restart of ours: up again, or down once more. Reads the state now,
   * not what restart returned (the server may have died since).
   */
  private judge(record: HealthRecord, what: string, thrown: unknown): void {
    if (this.forgetIfGone(record)) return;
    const status = this.service?.servers().find((s) => s.name === record.name);
    if (thrown === undefined && status?.state === 'connected' && this.service?.client(record.name)) {
      this.up(record.name, record, `${what} succeeded`, false);
      return;
    }
    if (thrown !== undefined) {
      this.down(record.name, record, `${what} was refused: ${reasonOfError(thrown)}`, isRetryableError(thrown));
      return;
    }
    // `stopped` after a restart: someone stopped it meanwhile; no retry is wanted.
    const reason = status ? reasonOf(status) : 'the mcp service no longer knows it';
    const retryable = status !== undefined && status.state !== 'stopped' && isRetryable(status);
    this.down(record.name, record, `${what} failed: ${reason}`, retryable);
  }

  // ---- checks ----------------------------------------------------------------

  private scheduleCheck(record: HealthRecord): void {
    clearTimeout(record.checkTimer);
    const generation = record.generation;
    record.checkTimer = setTimeout(() => {
      record.checkTimer = undefined;
      void this.check(record).then(() => {
        const current = this.options.board.get(record.name) === record && record.generation === generation;
        if (current && this.running && (record.state === 'healthy' || record.state === 'degraded')) this.scheduleCheck(record);
      });
    }, this.options.settings.interval);
    record.checkTimer.unref();
  }

  private async probeOnce(record: HealthRecord): Promise<void> {
    if (record.state !== 'healthy' && record.state !== 'degraded') return;
    const { board, settings } = this.options;
    const mcp = await this.mcp();
    const generation = record.generation;
    const client = mcp.client(record.name);
    if (!client) {
      this.down(record.name, record, 'the server is no longer connected');
      return;
    }
    const outcome = await probe(client, record.probe, settings.timeout);
    // Dropped when the server was restarted, stopped or replaced meanwhile, or found down by other news (its connection closed).
    if (this.closed || record.action || board.get(record.name) !== record || record.generation !== generation) return;
    if (record.state !== 'healthy' && record.state !== 'degraded') return;
    const restart = applyOutcome(record, outcome, settings, board);
    if (restart !== undefined) this.down(record.name, record, restart);
  }

  // ---- helpers ---------------------------------------------------------------

  /** Watches the connection's process, when the transport can tell: a death is news at once. */
  private watchProcess(record: HealthRecord): void {
    record.offDown?.();
    const generation = record.generation;
    record.offDown = this.service?.connection(record.name)?.onDown?.((reason) => {
      // Let the mcp service record a stop on purpose first (its state says `stopped` then).
      setImmediate(() => {
        if (this.closed || record.action || record.generation !== generation || this.options.board.get(record.name) !== record) return;
        const state = this.service?.servers().find((s) => s.name === record.name)?.state;
        if (state === 'stopped' || state === 'starting') return;
        if (record.state === 'healthy' || record.state === 'degraded') this.down(record.name, record, reason);
      });
    });
  }

  /** A server given up on while still connected is hung: stop it, so calls fail fast and its process is freed. */
  private stopIfHung(record: HealthRecord): void {
    const status = this.service?.servers().find((s) => s.name === record.name);
    if (status?.state !== 'connected') return;
    void this.act(record, (mcp) => mcp.stop(record.name));
  }

  /**
   * Runs a restart or stop of ours; the state changes it causes are ignored while
   * it runs. Resolves with what it threw, if anything: restart throws only when
   * the mcp service refuses (unknown or disabled server, shutting down), never
   * for the server's own trouble.
   */
  private async act(record: HealthRecord, action: (mcp: HealthMcp) => Promise<unknown>): Promise<unknown> {
    record.generation++;
    const running = this.mcp()
      .then(action)
      .then(
        () => undefined,
        (error: unknown) => error ?? new Error('unknown failure'),
      );
    record.action = running;
    try {
      return await running;
    } finally {
      if (record.action === running) record.action = undefined;
    }
  }

  /**
   * A server the mcp service no longer defines (its plugin left while running) is not
   * monitored any more: its record goes, and nothing restarts it. True when it went.
   */
  private forgetIfGone(record: HealthRecord): boolean {
    const known = this.service?.servers();
    if (known === undefined || known.some((s) => s.name === record.name)) return false;
    this.quiet(record);
    if (this.options.board.get(record.name) === record) this.options.board.remove(record.name);
    return true;
  }

  /** Clears `record`'s timers and its process watch. */
  private quiet(record: HealthRecord): void {
    clearTimeout(record.checkTimer);
    clearTimeout(record.retryTimer);
    record.checkTimer = undefined;
    record.retryTimer = undefined;
    record.offDown?.();
    record.offDown = undefined;
  }
}
