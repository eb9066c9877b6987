/**
 * Persistent mode: one long-lived process per hook, one JSON line per request
 * on its stdin, one JSON line per answer on its stdout, strictly in order (one
 * request in flight; the rest wait). A process that dies, times out, answers
 * out of turn or writes an oversized line fails the request in flight and is
 * replaced on the next request; one left without requests for `idleMs` is
 * closed (stdin closed, then its tree killed after a short grace).
 */
import { type Outcome, describeAbort } from './outcome.js';
import { Tail } from './output.js';
import { type HookProcess, type Launch, type ProcessEnd, type ProcessOwner, startProcess } from './process.js';

export interface Reply {
  readonly outcome: Outcome;
  readonly stderrTail: string;
  /** What the sandbox makes of a confined process's failed exit (see {@link cannotRunFix}). */
  readonly sandboxHint?: string;
}

export interface PersistentOptions {
  /** Where the process starts (the launcher) and whose it is. */
  readonly owner: ProcessOwner;
  readonly maxOutputBytes: number;
  readonly idleMs: number;
  /** Names the hook in log lines. */
  readonly label: string;
  readonly log?: { warn(msg: string): void };
}

interface Request {
  readonly line: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (reply: Reply) => void;
  onAbort?: () => void;
  timer?: NodeJS.Timeout;
}

/** One process and what it has written so far. */
interface Worker {
  readonly process: HookProcess;
  /** Bytes of the line being received. */
  partial: Buffer[];
  partialBytes: number;
  readonly stderr: Tail;
  /** Set when plinth ends it on purpose (idle, close, replaced): its exit is not news. */
  retiring: boolean;
}

/** How long a closing process may take to exit after its stdin is closed. */
const CLOSE_GRACE_MS = 500;

const isBlank = (bytes: Buffer): boolean => bytes.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0d);

export class PersistentHook {
  private worker: Worker | undefined;
  private current: Request | undefined;
  private readonly queue: Request[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly exiting = new Set<Promise<ProcessEnd>>();

  constructor(
    /** What the process runs; a definition that changes gets a new PersistentHook. */
    readonly launch: Launch,
    private readonly options: PersistentOptions,
  ) {}

  /** Whether a process is up and serving requests (not closed, not exited, not being retired). */
  get serving(): boolean {
    const worker = this.worker;
    return !this.closed && worker !== undefined && !worker.retiring && !worker.process.exited;
  }

  /** The pid serving requests now, if a process is up. */
  get pid(): number | undefined {
    return this.worker?.process.pid;
  }

  request(line: string, timeoutMs: number, signal?: AbortSignal): Promise<Reply> {
    return new Promise<Reply>((resolve) => {
      if (this.closed) {
        resolve({ outcome: { kind: 'cancelled', why: 'the hook runner is closed' }, stderrTail: '' });
        return;
      }
      if (signal?.aborted === true) {
        resolve({ outcome: { kind: 'cancelled', why: describeAbort(signal) }, stderrTail: '' });
        return;
      }
      const request: Request = { line, timeoutMs, signal, resolve };
      if (signal !== undefined) {
        request.onAbort = () => this.abort(request);
        signal.addEventListener('abort', request.onAbort, { once: true });
      }
      this.queue.push(request);
      this.pump();
    });
  }

  /** Fails what waits, closes the process and waits until its tree is gone. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    for (const request of this.queue.splice(0)) this.answer(request, { kind: 'cancelled', why: 'the hook runner is closed' });
    if (this.current !== undefined) this.finish({ kind: 'cancelled', why: 'the hook runner is closed' });
    if (this.worker !== undefined) this.retire(this.worker, true);
    await Promise.all(this.exiting);
  }

  private pump(): void {
    if (this.current !== undefined || this.closed) return;
    const next = this.queue.shift();
    if (next === undefined) {
      this.armIdle();
      return;
    }
    // Died since its last answer (its end may not be handled yet): start afresh, its exit is logged when handled.
    if (this.worker?.process.exited === true) this.worker = undefined;
    const worker = this.worker ?? this.spawn();
    worker.stderr.reset();
    this.current = next;
    next.timer = setTimeout(() => {
      if (this.current !== next) return;
      this.finish({ kind: 'timeout', afterMs: next.timeoutMs });
      this.retire(worker, false);
    }, next.timeoutMs);
    worker.process.stdin?.write(next.line);
  }

  /**
   * (Re)starts the idle countdown: one timer per hook, refreshed after each answer rather than made
   * anew (a request in flight when it fires keeps the process; the next answer starts it again).
   */
  private armIdle(): void {
    if (this.worker === undefined) return;
    if (this.idleTimer !== undefined) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => {
      const worker = this.worker;
      if (worker !== undefined && this.current === undefined && this.queue.length === 0) this.retire(worker, true);
    }, this.options.idleMs);
    this.idleTimer.unref();
  }

  private spawn(): Worker {
    const child = startProcess(this.options.owner, this.launch, {
      onEscapees: (pids) => this.options.log?.warn(`${this.options.label}: killed ${pids.length} process(es) that left its process group holding its output`),
    });
    const worker: Worker = { process: child, partial: [], partialBytes: 0, stderr: new Tail(), retiring: false };
    this.worker = worker;
    child.stdout?.on('data', (chunk: Buffer) => this.onStdout(worker, chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.onStderr(worker, chunk));
    const ended = child.ended.then((end) => {
      this.exiting.delete(ended);
      this.onEnded(worker, end);
      return end;
    });
    this.exiting.add(ended);
    return worker;
  }

  private onStdout(worker: Worker, chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1 && worker === this.worker; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      const bytes = worker.partialBytes + piece.length;
      if (bytes > this.options.maxOutputBytes) {
        this.overflow(worker, 'stdout');
        return;
      }
      const line = worker.partial.length === 0 ? piece : Buffer.concat([...worker.partial, piece]);
      worker.partial = [];
      worker.partialBytes = 0;
      if (!isBlank(line)) this.onLine(worker, line);
    }
    if (worker !== this.worker || start >= chunk.length) return;
    const rest = chunk.subarray(start);
    worker.partial.push(rest);
    worker.partialBytes += rest.length;
    if (worker.partialBytes > this.options.maxOutputBytes) this.overflow(worker, 'stdout');
  }

  private onLine(worker: Worker, line: Buffer): void {
    if (this.current === undefined) {
      this.options.log?.warn(`${this.options.label} wrote a line nobody asked for; its process is restarted on the next request`);
      this.retire(worker, false);
      return;
    }
    this.finish({ kind: 'output', bytes: line });
  }

  private onStderr(worker: Worker, chunk: Buffer): void {
    worker.stderr.push(chunk);
    // Only what is written while a request is in flight counts against the limit; the tail is bounded anyway.
    if (this.current !== undefined && worker === this.worker && worker.stderr.total > this.options.maxOutputBytes) this.overflow(worker, 'stderr');
  }

  private overflow(worker: Worker, stream: 'stdout' | 'stderr'): void {
    if (this.current !== undefined) this.finish({ kind: 'too_large', stream, limit: this.options.maxOutputBytes });
    else this.options.log?.warn(`${this.options.label} wrote more than ${this.options.maxOutputBytes} bytes to ${stream} between requests; it was killed`);
    this.retire(worker, false);
  }

  private onEnded(worker: Worker, end: ProcessEnd): void {
    const wasCurrent = this.worker === worker;
    if (wasCurrent) this.worker = undefined;
    if (wasCurrent && this.current !== undefined) {
      this.finish(
        end.spawnError !== undefined
          ? { kind: 'spawn_error', detail: end.spawnError }
          : end.signal !== null
            ? { kind: 'signal', signal: end.signal, beforeAnswer: true }
            : { kind: 'exit', code: end.exitCode ?? -1, beforeAnswer: true },
        worker,
      );
    } else if (!worker.retiring) {
      const how = end.spawnError ?? (end.signal !== null ? `killed by ${end.signal}` : `exited with code ${end.exitCode}`);
      this.options.log?.warn(`${this.options.label}: its persistent process ${how} between requests; it restarts on the next request`);
    }
  }

  /** Ends a worker on purpose: gracefully (stdin closed, then killed after a grace) or at once. */
  private retire(worker: Worker, graceful: boolean): void {
    if (this.worker === worker) this.worker = undefined;
    if (worker.retiring && graceful) return;
    worker.retiring = true;
    if (!graceful) {
      worker.process.kill();
      return;
    }
    worker.process.stdin?.end();
    const timer = setTimeout(() => worker.process.kill(), CLOSE_GRACE_MS);
    void worker.process.ended.then(() => clearTimeout(timer));
  }

  /** Answers the request in flight and moves on to the next. */
  private finish(outcome: Outcome, worker: Worker | undefined = this.worker): void {
    const request = this.current;
    if (request === undefined) return;
    this.current = undefined;
    this.answer(request, outcome, worker?.stderr.text() ?? '');
    // After the current chunk of output is handled: a second line in it is then seen as unsolicited.
    queueMicrotask(() => this.pump());
  }

  private answer(request: Request, outcome: Outcome, stderrTail = ''): void {
    clearTimeout(request.timer);
    if (request.onAbort !== undefined) request.signal?.removeEventListener('abort', request.onAbort);
    request.resolve({ outcome, stderrTail });
  }

  private abort(request: Request): void {
    const why = describeAbort(request.signal);
    if (this.current === request) {
      const worker = this.worker;
      this.finish({ kind: 'cancelled', why });
      if (worker !== undefined) this.retire(worker, false);
      return;
    }
    const at = this.queue.indexOf(request);
    if (at >= 0) {
      this.queue.splice(at, 1);
      this.answer(request, { kind: 'cancelled', why });
    }
  }
}
