/**
 * One hook process, started with execa: no shell, arguments passed as given,
 * only the environment it is handed, detached into its own process group. Its
 * end is `ended`, which resolves once the process is gone and its pipes are
 * closed — and never waits on a child that outlives it: when the hook exits,
 * its group is killed, and pipes still held after that by a process that left
 * the group are taken from it.
 *
 * The mechanisms (groups, the exit-time sweep, /proc pipe holders) are
 * plinth/sdk's process-tree functions; the policy is here: SIGKILL only, the
 * hook's stdout and stderr watched, holders killed with their groups.
 */
import { existsSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import type { execa as Execa } from 'execa';
import { OWN_GROUP_CHILD, killGroup, pipeHolders, pipeNames, signalEach, trackGroup, untrackGroup } from 'plinth/sdk';

/** SIGKILL to the hook's group; it is empty then, so it is no longer killed when plinth exits. */
function endGroup(pgid: number): void {
  killGroup(pgid, 'SIGKILL');
  untrackGroup(pgid);
}

/**
 * Kills, with their groups, the processes that left the hook's group but hold
 * one of its output pipes (`names`, from `pipeNames`); returns their pids.
 * Linux only. A child that left the group and closed its inherited pipes (a
 * daemon) is out of reach without cgroups.
 */
async function killHolders(names: readonly string[]): Promise<number[]> {
  const holders = await pipeHolders(names);
  signalEach(holders, 'SIGKILL');
  for (const pid of holders) killGroup(pid, 'SIGKILL');
  return holders;
}

/** What to run, after the whitelist: `file` is a real path. */
export interface Launch {
  readonly file: string;
  readonly args: readonly string[];
  /** `argv[0]` as the hook wrote its command (multi-call binaries look at it). */
  readonly argv0: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface ProcessEnd {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Set when the process never started (ENOENT, EACCES, a missing cwd…). */
  readonly spawnError?: string;
}

export interface HookProcess {
  readonly pid: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** True once the process has exited (its pipes may still be draining). */
  readonly exited: boolean;
  /** Resolves once the process has exited (or never started) and its output pipes are closed. Never rejects. */
  readonly ended: Promise<ProcessEnd>;
  /** SIGKILL to the whole process tree; `ended` follows. */
  kill(): void;
}

/** After the hook exits and its group is killed: how long its pipes may stay open before holders are looked for. */
const DRAIN_GRACE_MS = 100;
/** After holders are killed: how long before the pipes are closed on our side regardless. */
const DRAIN_LIMIT_MS = 500;
/** After a kill: how long `ended` waits for the exit before it resolves anyway. */
const KILL_LIMIT_MS = 2000;

const ignore = (): void => {};

let execa: typeof Execa | undefined;

/**
 * Loads execa; the runner awaits it before its first launch. Loading it on
 * first use keeps it (about 70 ms of module loading) off every boot and every
 * command that runs no hook.
 */
export async function loadExeca(): Promise<void> {
  execa ??= (await import('execa')).execa;
}

export interface StartOptions {
  /** Written to stdin, which is then closed (spawn mode). Absent: stdin stays open for writes (persistent mode). */
  readonly input?: string;
  /** Told about processes killed for holding the hook's pipes after it exited. */
  readonly onEscapees?: (pids: readonly number[]) => void;
}

/** Why a spawn failed, in the user's terms: ENOENT may be the program or the working directory. */
function describeSpawnError(cause: unknown, launch: Launch): string | undefined {
  if (!(cause instanceof Error)) return undefined;
  if ((cause as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(launch.cwd)) return `its working directory ${launch.cwd} does not exist`;
  return cause.message;
}

/** A process that could not even be spawned (execa refused its arguments). */
function notStarted(error: unknown): HookProcess {
  const spawnError = error instanceof Error ? error.message : String(error);
  return { pid: undefined, stdin: null, stdout: null, stderr: null, exited: true, ended: Promise.resolve({ exitCode: null, signal: null, spawnError }), kill: ignore };
}

export function startProcess(launch: Launch, options: StartOptions = {}): HookProcess {
  try {
    return start(launch, options);
  } catch (error) {
    // Arguments or environment execa cannot pass (a NUL byte, for one).
    return notStarted(error);
  }
}

function start(launch: Launch, options: StartOptions): HookProcess {
  if (!execa) throw new Error('loadExeca() must be awaited before starting a hook process');
  const subprocess = execa(launch.file, [...launch.args], {
    cwd: launch.cwd,
    env: launch.env,
    extendEnv: false,
    argv0: launch.argv0,
    ...(options.input === undefined ? { stdin: 'pipe' as const } : { input: options.input }),
    stdout: 'pipe',
    stderr: 'pipe',
    encoding: 'buffer',
    stripFinalNewline: false,
    ...OWN_GROUP_CHILD,
  });
  const pid = subprocess.pid;
  if (pid !== undefined) trackGroup(pid);
  // Read now, while the hook lives: what its children would hold if they outlived it and left its group.
  const names = pid === undefined ? Promise.resolve([]) : pipeNames(pid, [1, 2]);
  for (const stream of [subprocess.stdin, subprocess.stdout, subprocess.stderr]) stream?.on('error', ignore);

  let exit: { code: number | null; signal: string | null } | undefined;
  let settled = false;
  let drainTimer: NodeJS.Timeout | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let settle: (end: ProcessEnd) => void = ignore;

  const ended = new Promise<ProcessEnd>((resolve) => {
    settle = (end) => {
      if (settled) return;
      settled = true;
      clearTimeout(drainTimer);
      clearTimeout(killTimer);
      // Gave up waiting for the exit (see kill): one more try at the tree.
      if (pid !== undefined && exit === undefined) endGroup(pid);
      resolve(end);
    };
  });

  /** Makes sure the pipes close even when something outside the group holds them. */
  const drain = (): void => {
    if (drainTimer !== undefined || settled) return;
    drainTimer = setTimeout(() => {
      void names.then(killHolders).then((pids) => {
        if (pids.length > 0) options.onEscapees?.(pids);
        if (settled) return;
        drainTimer = setTimeout(() => {
          subprocess.stdout?.destroy();
          subprocess.stderr?.destroy();
          subprocess.stdin?.destroy();
        }, DRAIN_LIMIT_MS);
      });
    }, DRAIN_GRACE_MS);
  };

  subprocess.once('exit', (code: number | null, signal: string | null) => {
    exit = { code, signal };
    // Children that outlive the hook die with it, so they never hold its pipes open.
    if (pid !== undefined) endGroup(pid);
    drain();
  });

  subprocess.then(
    (result) => {
      if (exit === undefined && result.exitCode === undefined && result.signal === undefined) {
        settle({ exitCode: null, signal: null, spawnError: describeSpawnError(result.cause, launch) ?? result.shortMessage });
        return;
      }
      settle({ exitCode: exit?.code ?? result.exitCode ?? null, signal: exit?.signal ?? result.signal ?? null });
    },
    (error: unknown) => {
      // reject: false — only an internal execa error gets here.
      settle({ exitCode: exit?.code ?? null, signal: exit?.signal ?? null, spawnError: error instanceof Error ? error.message : String(error) });
    },
  );

  return {
    pid,
    stdin: subprocess.stdin,
    stdout: subprocess.stdout,
    stderr: subprocess.stderr,
    ended,
    get exited() {
      return exit !== undefined || settled;
    },
    kill() {
      if (settled || killTimer !== undefined) return;
      if (pid !== undefined && exit === undefined) endGroup(pid);
      drain();
      killTimer = setTimeout(() => settle({ exitCode: exit?.code ?? null, signal: exit?.signal ?? 'SIGKILL' }), KILL_LIMIT_MS);
    },
  };
}
