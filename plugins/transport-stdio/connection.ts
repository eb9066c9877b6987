/**
 * One stdio server: started through the `launcher` service (program
 * resolution, the allowlisted environment plus the server's `env`, a process
 * group of its own, the kill of the whole tree) and spoken to with the SDK's
 * own framing (`ReadBuffer`, `serializeMessage`) over its stdin and stdout.
 * Around that, what plinth needs: a bounded, redacted stderr tail, the pid,
 * `onDown` when the process dies on its own, and a close in the stdio
 * specification's order (close stdin, `exitGraceMs`, SIGTERM to the tree,
 * `killGraceMs`, SIGKILL) that leaves no process behind.
 *
 * Loaded on the first `create()`: it imports the SDK.
 */
import { serializeMessage } from '@modelcontextprotocol/client';
import type { Transport, JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/client';
import { PlinthError, isPlinthError, type Disposer, type LaunchedChild, type Launcher } from 'plinth/sdk';
import type { McpServerDefinition, TransportConnection, TransportContext } from 'plinth/sdk';
import type { StdioSettings } from './settings.js';
import { StderrTail } from './stderr-tail.js';
import { NOISE_HINT, StdoutLines, describeNoise } from './stdout-lines.js';

const PLUGIN = 'transport-stdio';
/** After the server exits: how long `onDown` waits for the rest of its stderr, which the reason quotes. */
const STDERR_SETTLE_MS = 100;
/** The SDK's own code for "the connection closed under the request" (ErrorCode.ConnectionClosed). */
const CONNECTION_CLOSED = -32000;

type State = 'new' | 'running' | 'closing' | 'closed';

/** Where servers start, and whose they are. */
export interface StdioLaunch {
  readonly launcher: () => Launcher | Promise<Launcher>;
  /** The transport plugin's teardown: aborting it closes every server it started (in the close order, with each connection's graces). */
  readonly signal?: AbortSignal;
}

/** "exited with code 1", "was killed by SIGKILL". */
function describeExit(code: number | null, sig: string | null): string {
  if (sig !== null) return `was killed by ${sig}`;
  return code === null ? 'exited' : `exited with code ${code}`;
}

/** The Transport handed to the SDK `Client`: a launched child, framed as the SDK frames stdio. */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #server: McpServerDefinition;
  readonly #context: TransportContext;
  readonly #settings: StdioSettings;
  readonly #launch: StdioLaunch;
  readonly #tail: StderrTail;
  readonly #stdout = new StdoutLines();
  /** Requests sent that the server has not answered: answered with the reason if it dies. */
  readonly #pending = new Set<RequestId>();
  /** The server's stdin is full: one wait for its `drain`, shared by every message sent meanwhile (not a listener each). */
  #draining: Promise<void> | undefined;
  #noiseSaid = false;
  #child: LaunchedChild | undefined;
  #state: State = 'new';
  #exited = false;
  #closing: Promise<void> | undefined;
  #closeFired = false;
  #downReason: string | undefined;
  #stderrEnded: Promise<void> = Promise.resolve();
  /** Set when the process died on its own; resolves once `onDown` listeners were called. */
  #downReported: Promise<void> | undefined;
  readonly #downListeners = new Set<(reason: string) => void>();
  /** Removes this connection's listener from the plugin's teardown signal. */
  #offAbort: (() => void) | undefined;

  constructor(server: McpServerDefinition, context: TransportContext, settings: StdioSettings, launch: StdioLaunch) {
    this.#server = server;
    this.#context = context;
    this.#settings = settings;
    this.#launch = launch;
    this.#tail = new StderrTail(settings.stderrTailBytes);
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`MCP server "${this.#server.name}": stdio transport already started`);
    const launcher = await this.#launch.launcher();
    let child: LaunchedChild;
    try {
      child = launcher.start(
        {
          owner: PLUGIN,
          purpose: `MCP server "${this.#server.name}"`,
          program: this.#server.command!,
          args: [...this.#server.args],
          cwd: this.#server.cwd,
          env: { ...this.#server.env },
          // Confined by the sandbox, when one is installed, with the permissions of whom it acts for.
          ...(this.#server.actingFor !== undefined && { actingFor: this.#server.actingFor }),
          // What the trust check approved: the launcher runs exactly these bytes, or refuses (PLN_E_TRUST_CHANGED_AT_RUN).
          ...(this.#server.pinned !== undefined && this.#server.pinned.length > 0 && { pinned: this.#server.pinned.map((pin) => ({ path: pin.path, sha256: pin.sha256 })) }),
        },
        // No owner signal for the launcher, which would SIGKILL: the teardown closes politely (below).
      );
    } catch (error) {
      this.#state = 'closed';
      throw this.#startError(error);
    }
    this.#child = child;
    // Read from the first byte, and always: an unread pipe would stall the server.
    const stderr = child.stderr;
    this.#stderrEnded = new Promise((resolve) => (stderr ? stderr.once('end', () => resolve()).once('close', () => resolve()) : resolve()));
    stderr?.on('data', (chunk: Buffer) => {
      this.#tail.push(chunk);
      this.#context.log.debug(`${this.#server.name} stderr: ${this.#context.redact(chunk.toString('utf8').trimEnd().slice(0, 500))}`);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      try {
        this.#stdout.append(chunk);
      } catch (error) {
        // A line longer than the SDK's buffer allows: the stream cannot be trusted any more (as the SDK does).
        this.onerror?.(error as Error);
        void this.close();
        return;
      }
      this.#readMessages();
    });
    // A confined launch starts once its sandbox is ready.
    if ((await child.spawned) === undefined) {
      const end = await child.ended;
      this.#state = 'closed';
      if (end.refused !== undefined) throw end.refused;
      throw this.#startError(new Error(end.spawnError ?? 'the process did not start'));
    }
    this.#state = 'running';
    const signal = this.#launch.signal;
    if (signal?.aborted === true) void this.close();
    else if (signal) {
      // The plugin's signal outlives this connection: the listener leaves with it (see #fireClose), or every restart would add one for good.
      const onAbort = () => void this.close();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#offAbort = () => signal.removeEventListener('abort', onAbort);
    }
    void child.exit.then((end) => this.#processExited(end.exitCode, end.signal));
    // The process is gone and its pipes are closed: the connection is closed (onDown first, so that whoever hears of the close already knows why).
    void child.ended.then(() => {
      if (this.#state !== 'running') return;
      if (this.#downReported) void this.#downReported.then(() => this.#fireClose());
      else this.#fireClose();
    });
    this.#context.log.debug(`${this.#server.name}: started, pid ${child.pid}`);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#child?.stdin;
      // Exited: its stdin may still take a write, which nobody would ever answer (and the close was already said).
      if (this.#state !== 'running' || this.#exited || !stdin || stdin.writableEnded) {
        reject(new Error('Not connected'));
        return;
      }
      if ('method' in message && 'id' in message) this.#pending.add(message.id);
      if (stdin.write(serializeMessage(message))) resolve();
      else void this.#drained(stdin).then(resolve);
    });
  }

  /** Resolves when `stdin` drains (or closes: then nothing more is waited for). */
  #drained(stdin: NodeJS.WritableStream): Promise<void> {
    this.#draining ??= new Promise<void>((resolve) => {
      const done = () => {
        stdin.off('drain', done);
        stdin.off('close', done);
        this.#draining = undefined;
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
    });
    return this.#draining;
  }

  /** Ends the server and everything it started; resolves once they are gone. Safe to call more than once. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** The server's pid while its process runs. */
  get pid(): number | undefined {
    return this.#exited ? undefined : this.#child?.pid;
  }

  /**
   * The server's stderr stream while it runs (read by this transport for its tail; never null once
   * started). Its presence, with `pid`, is how the SDK knows a stdio-shaped transport: `auto`
   * negotiation then takes a silent `server/discover` probe for a legacy server and falls back
   * to `initialize` on this same process (the SDK probes a custom transport in place).
   */
  get stderr(): NodeJS.ReadableStream | null {
    return this.#child?.stderr ?? null;
  }

  /** The redacted tail of the server's stderr. */
  stderrTail(): string {
    return this.#context.redact(this.#tail.text());
  }

  /** Calls `listener` once if the process dies on its own (not through close); at once if it already has. */
  onDown(listener: (reason: string) => void): Disposer {
    const reason = this.#downReason;
    if (reason !== undefined) {
      queueMicrotask(() => listener(reason));
      return () => {};
    }
    this.#downListeners.add(listener);
    return () => void this.#downListeners.delete(listener);
  }

  /** Each complete line of stdout is a message; a line that is not one is reported and skipped, as the SDK does (and counted, for the reason). */
  #readMessages(): void {
    for (;;) {
      const line = this.#stdout.next();
      if (line === null) return;
      if ('notJsonRpc' in line) {
        this.onerror?.(line.notJsonRpc);
        continue;
      }
      const { message } = line;
      if (!('method' in message) && 'id' in message && message.id !== undefined) this.#pending.delete(message.id);
      this.onmessage?.(message);
    }
  }

  /** `wrote 2 lines on stdout that are not JSON-RPC…`, when the server wrote only such lines (then they are why it did not answer). */
  #noise(): string | undefined {
    const noise = this.#stdout.messages === 0 ? this.#stdout.noise() : undefined;
    return noise === undefined ? undefined : `it ${describeNoise(noise, this.#context.redact)}: ${NOISE_HINT}`;
  }

  /**
   * Said once, as a coded warning, when a server that wrote only lines that
   * are not JSON-RPC is closed (a connect timeout closes it): the timeout's
   * own message cannot know why.
   */
  #sayNoise(): void {
    const noise = this.#noise();
    if (noise === undefined || this.#noiseSaid) return;
    this.#noiseSaid = true;
    this.#context.log.warn(this.#context.redact(`PLN_E_MCP_STDIO_NOT_JSONRPC: MCP server "${this.#server.name}" ${noise.slice('it '.length)}`));
  }

  /** Requests still waiting when the process died: answered as the SDK answers them ("connection closed"), but with why. */
  #answerPending(reason: string): void {
    const pending = [...this.#pending];
    this.#pending.clear();
    for (const id of pending) this.onmessage?.({ jsonrpc: '2.0', id, error: { code: CONNECTION_CLOSED, message: reason } });
  }

  /** A launcher refusal (program, cwd) or a spawn failure, as `PLN_E_MCP_STDIO_SPAWN`. */
  #startError(cause: unknown): PlinthError {
    const server = this.#server;
    const code = isPlinthError(cause) ? cause.code : undefined;
    const [problem, hint] =
      code === 'PLN_E_LAUNCH_CWD'
        ? [`its working directory ${server.cwd} does not exist`, 'Fix "cwd" in its mcpServers entry (relative paths are resolved from the file that defines it)']
        : code === 'PLN_E_LAUNCH_NOT_FOUND'
          ? [`"${server.command}" is not an executable file, nor found on PATH`, 'Install the program, or give its full path in "command"']
          : [cause instanceof Error ? cause.message : String(cause), 'Check "command", "args" and "cwd" in its mcpServers entry'];
    return new PlinthError('PLN_E_MCP_STDIO_SPAWN', this.#context.redact(`MCP server "${server.name}" cannot be started: ${problem}`), {
      plugin: PLUGIN,
      hint,
      cause,
      details: { server: server.name },
    });
  }

  #processExited(code: number | null, sig: string | null): void {
    if (this.#exited) return;
    this.#exited = true;
    if (this.#state !== 'running') return; // our own close
    // The launcher has killed what the server left in its group; `exit` can come before the last of stderr has been read: give it a moment, for the reason's sake.
    this.#downReported = Promise.race([this.#stderrEnded, new Promise((resolve) => setTimeout(resolve, STDERR_SETTLE_MS))]).then(() => this.#reportDown(code, sig));
  }

  #reportDown(code: number | null, sig: string | null): void {
    const last = this.#tail.lastLine();
    const noise = this.#noise();
    if (noise !== undefined) this.#noiseSaid = true; // the reason says it
    // Confined: the sandbox may recognise a path it hides in what the server wrote (a script or node_modules outside the grants).
    const hidden = this.#child?.explainExit?.(this.#tail.text());
    const reason = this.#context.redact(`the server process ${describeExit(code, sig)}${last === '' ? '' : `: ${last.slice(0, 200)}`}${noise === undefined ? '' : `; ${noise}`}${hidden === undefined ? '' : `. ${hidden}`}`);
    this.#downReason = reason;
    this.#answerPending(reason);
    this.#context.log.debug(`${this.#server.name}: ${reason}`);
    for (const listener of [...this.#downListeners]) {
      try {
        listener(reason);
      } catch (error) {
        this.#context.log.warn(`${this.#server.name}: an onDown listener threw: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.#downListeners.clear();
  }

  async #close(): Promise<void> {
    const running = this.#state === 'running';
    this.#state = 'closing';
    if (running) this.#sayNoise();
    try {
      // The stdio specification's order, with our graces, for the whole tree (the launcher's stop()).
      if (running && this.#child) await this.#child.stop({ exitGraceMs: this.#context.exitGraceMs ?? this.#settings.exitGraceMs, killGraceMs: this.#settings.killGraceMs });
      else if (this.#child) await this.#child.ended;
    } finally {
      this.#state = 'closed';
      this.#stdout.clear();
      await this.#downReported;
      this.#fireClose();
    }
  }

  #fireClose(): void {
    if (this.#closeFired) return;
    this.#closeFired = true;
    this.#offAbort?.();
    this.#offAbort = undefined;
    this.onclose?.();
  }
}

/** Opens (without starting) a stdio connection to `server`. */
export function openStdioConnection(server: McpServerDefinition, context: TransportContext, settings: StdioSettings, launch: StdioLaunch): TransportConnection {
  const transport = new StdioProcessTransport(server, context, settings, launch);
  return {
    transport,
    pid: () => transport.pid,
    stderrTail: () => transport.stderrTail(),
    onDown: (listener) => transport.onDown(listener),
  };
}
