/**
 * One stdio server: the SDK's `StdioClientTransport` behind a thin Transport
 * that adds what plinth needs around it: a bounded, redacted stderr tail, the
 * pid, `onDown` when the process dies on its own, and a close that leaves no
 * process behind. The protocol (framing, spawning) is the SDK's; the close
 * follows the stdio specification's order (close stdin, wait, SIGTERM, wait,
 * SIGKILL) with graces of plinth's (`exitGraceMs`, `killGraceMs`: the SDK's
 * fixed 2 s + 2 s kept every one-shot command waiting), for the whole tree.
 *
 * Loaded on the first `create()`: it imports the SDK.
 */
import type { ChildProcess } from 'node:child_process';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { descendantsOf, groupMembers, isAlive, pipeHolders, pipeNames, trackGroup, type Disposer } from 'plinth/sdk';
import type { McpServerDefinition, TransportConnection, TransportContext } from 'plinth/sdk';
import { checkLaunch, launchPlan, spawnError, type LaunchPlan } from './launch.js';
import { signal, waitGone } from './process-tree.js';
import type { StdioSettings } from './settings.js';
import { StderrTail } from './stderr-tail.js';

/** After everything is killed: how long the pipes may take to close before holders outside the tree are looked for. */
const PIPE_CLOSE_MS = 200;
/** How long a SIGKILLed process may take to be gone before close() gives up waiting (and says so). */
const KILL_WAIT_MS = 2000;
/** After the server exits: how long `onDown` waits for the rest of its stderr, which the reason quotes. */
const STDERR_SETTLE_MS = 100;

type State = 'new' | 'running' | 'closing' | 'closed';

/** "exited with code 1", "was killed by SIGKILL". */
function describeExit(code: number | null, sig: NodeJS.Signals | null): string {
  if (sig !== null) return `was killed by ${sig}`;
  return code === null ? 'exited' : `exited with code ${code}`;
}

/**
 * The SDK keeps its ChildProcess private; its `exit` event is the only way to
 * learn the exit code and to notice a death while a grandchild still holds the
 * pipes (the SDK itself waits for `close`). Read defensively: without it,
 * `onDown` still fires, from the transport's close.
 */
function childOf(transport: StdioClientTransport): ChildProcess | undefined {
  const child: unknown = (transport as unknown as { _process?: unknown })._process;
  return typeof child === 'object' && child !== null && typeof (child as ChildProcess).once === 'function' ? (child as ChildProcess) : undefined;
}

/** The Transport handed to the SDK `Client`, wrapping the SDK's stdio transport. */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #server: McpServerDefinition;
  readonly #context: TransportContext;
  readonly #settings: StdioSettings;
  readonly #plan: LaunchPlan;
  readonly #inner: StdioClientTransport;
  readonly #tail: StderrTail;
  #state: State = 'new';
  #pid: number | undefined;
  #exited = false;
  #untrack: (() => void) | undefined;
  #pipes: Promise<string[]> = Promise.resolve([]);
  #closing: Promise<void> | undefined;
  #closeFired = false;
  #pipesClosed: Promise<void>;
  readonly #exitSeen: Promise<void>;
  #markExited: () => void = () => {};
  #markPipesClosed: () => void = () => {};
  #downReason: string | undefined;
  readonly #stderrEnded: Promise<void>;
  /** Set when the process died on its own; resolves once `onDown` listeners were called. */
  #downReported: Promise<void> | undefined;
  readonly #downListeners = new Set<(reason: string) => void>();

  constructor(server: McpServerDefinition, context: TransportContext, settings: StdioSettings) {
    this.#server = server;
    this.#context = context;
    this.#settings = settings;
    this.#plan = launchPlan(server, getDefaultEnvironment(), settings.processGroup);
    this.#tail = new StderrTail(settings.stderrTailBytes);
    this.#pipesClosed = new Promise((resolve) => (this.#markPipesClosed = resolve));
    this.#exitSeen = new Promise((resolve) => (this.#markExited = resolve));
    this.#inner = new StdioClientTransport({ command: this.#plan.command, args: this.#plan.args, env: this.#plan.env, cwd: this.#plan.cwd, stderr: 'pipe' });
    // Read from the start (the SDK hands out the stream before spawning), and always: an unread pipe would stall the server.
    const stderr = this.#inner.stderr;
    this.#stderrEnded = new Promise((resolve) => (stderr ? stderr.once('end', () => resolve()) : resolve()));
    stderr?.on('data', (chunk: Buffer) => {
      this.#tail.push(chunk);
      context.log.debug(`${server.name} stderr: ${context.redact(chunk.toString('utf8').trimEnd().slice(0, 500))}`);
    });
    this.#inner.onmessage = (message) => this.onmessage?.(message);
    this.#inner.onerror = (error) => this.onerror?.(error);
    // The SDK reports `close` once the process has exited and its pipes are closed.
    this.#inner.onclose = () => {
      this.#markPipesClosed();
      if (!this.#exited && this.#state === 'running') this.#processExited(null, null);
      // onDown first, so that whoever hears of the close already knows why.
      if (this.#downReported) void this.#downReported.then(() => this.#fireClose());
      else this.#fireClose();
    };
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`MCP server "${this.#server.name}": stdio transport already started`);
    checkLaunch(this.#server, this.#plan, this.#context);
    try {
      await this.#inner.start();
    } catch (error) {
      this.#state = 'closed';
      throw spawnError(this.#server, error, this.#context);
    }
    this.#state = 'running';
    const pid = this.#inner.pid ?? undefined;
    this.#pid = pid;
    if (pid === undefined) return;
    if (this.#plan.grouped) this.#untrack = trackGroup(pid);
    this.#pipes = pipeNames(pid, [0, 1, 2]);
    const child = childOf(this.#inner);
    if (child?.exitCode !== null && child?.exitCode !== undefined) this.#processExited(child.exitCode, null);
    else child?.once('exit', (code, sig) => this.#processExited(code, sig));
    this.#context.log.debug(`${this.#server.name}: started, pid ${pid}${this.#plan.grouped ? ' (own process group)' : ''}`);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#inner.send(message);
  }

  /** Ends the server and everything it started; resolves once they are gone. Safe to call more than once. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** The server's pid while its process runs. */
  get pid(): number | undefined {
    return this.#exited ? undefined : this.#pid;
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

  #processExited(code: number | null, sig: NodeJS.Signals | null): void {
    if (this.#exited) return;
    this.#exited = true;
    this.#markExited();
    if (this.#state !== 'running') return; // our own close
    // What the server left running in its group goes with it; that also closes the pipes, so the client learns of it.
    if (this.#plan.grouped && this.#pid !== undefined) {
      signal([], 'SIGKILL', this.#pid);
      this.#untrack?.();
    }
    // `exit` can come before the last of stderr has been read: give it a moment, for the reason's sake.
    this.#downReported = Promise.race([this.#stderrEnded, new Promise((resolve) => setTimeout(resolve, STDERR_SETTLE_MS))]).then(() => this.#reportDown(code, sig));
  }

  #reportDown(code: number | null, sig: NodeJS.Signals | null): void {
    const last = this.#tail.lastLine();
    const reason = this.#context.redact(`the server process ${describeExit(code, sig)}${last === '' ? '' : `: ${last.slice(0, 200)}`}`);
    this.#downReason = reason;
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
    const pid = this.#pid;
    try {
      if (!running || pid === undefined) await this.#inner.close();
      else if (this.#exited) {
        // Already dead: clean up first, or the SDK would wait for pipes that what is left may hold.
        await this.#reap(pid, []);
        await this.#inner.close();
      } else {
        // Children that might leave the group are found through their parent, so before it goes.
        const tree = await descendantsOf(pid).catch(() => []);
        const input = childOf(this.#inner)?.stdin;
        if (input) {
          // The stdio specification's order, with our grace: close its input, let it exit by itself for a
          // moment, then SIGTERM and SIGKILL (#reap), the whole tree. The SDK's own close would wait 2 s, then 2 s more.
          input.end();
          await this.#exitWithin(this.#context.exitGraceMs ?? this.#settings.exitGraceMs);
          await this.#reap(pid, tree);
          // Gone by now: the SDK's close only lets go of what it holds.
          await this.#inner.close();
        } else {
          // The SDK's process is not reachable (its internals changed): its close, then what is left.
          await this.#inner.close();
          await this.#reap(pid, tree);
        }
      }
    } finally {
      this.#state = 'closed';
      this.#untrack?.();
      await this.#downReported;
      this.#fireClose();
    }
  }

  /** After the SDK's close: ends whatever of the tree is left, politely (SIGTERM) then not. */
  async #reap(pid: number, tree: readonly number[]): Promise<void> {
    const members = this.#plan.grouped ? await groupMembers(pid) : [];
    // The group is signalled only while it has members: its id is a pid, and a free pid can be reused.
    const group = members.length > 0 ? pid : undefined;
    let left = [...new Set([pid, ...members, ...tree])].filter(isAlive);
    if (left.length > 0) {
      signal(left, 'SIGTERM', group);
      left = await waitGone(left, this.#settings.killGraceMs);
      // Whatever is still there, and anything the group forked meanwhile.
      const now = group === undefined ? [] : await groupMembers(group);
      left = [...new Set([...left, ...now])];
      if (left.length > 0) {
        signal(left, 'SIGKILL', now.length > 0 ? group : undefined);
        left = await waitGone(left, KILL_WAIT_MS);
      }
    }
    // Pipes still open once the tree is gone: a process that left the group and the tree holds them.
    const closed = await Promise.race([this.#pipesClosed.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, PIPE_CLOSE_MS, false))]);
    if (!closed) {
      const holders = await pipeHolders(await this.#pipes);
      if (holders.length > 0) {
        this.#context.log.warn(`${this.#server.name}: killed ${holders.length} process(es) outside its process tree that held its pipes (pid ${holders.join(', ')})`);
        signal(holders, 'SIGKILL');
        left.push(...(await waitGone(holders, KILL_WAIT_MS)));
      }
    }
    if (left.length > 0) this.#context.log.warn(`${this.#server.name}: process(es) ${left.join(', ')} still alive after SIGKILL`);
  }

  /** Resolves when the process has exited or after `ms`, whichever comes first (no timer is left behind). */
  async #exitWithin(ms: number): Promise<void> {
    if (this.#exited || ms <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#exitSeen, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  #fireClose(): void {
    if (this.#closeFired) return;
    this.#closeFired = true;
    this.onclose?.();
  }
}

/** Opens (without starting) a stdio connection to `server`. */
export function openStdioConnection(server: McpServerDefinition, context: TransportContext, settings: StdioSettings): TransportConnection {
  const transport = new StdioProcessTransport(server, context, settings);
  return {
    transport,
    pid: () => transport.pid,
    stderrTail: () => transport.stderrTail(),
    onDown: (listener) => transport.onDown(listener),
  };
}
