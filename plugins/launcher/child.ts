/**
 * One child process: spawned without a shell, arguments as given, only the
 * environment it is handed, as the leader of a process group of its own
 * (`detached`), its group killed when the host exits (`trackGroup`). When it
 * exits, whatever is left in its group is killed; pipes still held after that
 * by a process that left the group are taken from it (Linux, /proc), so that
 * `ended` never waits on a child that outlives its parent. Every process of
 * the tree carries its mark (`PLINTH_TREE` in its environment): what still
 * carries it when the child ends, a daemon that left the group and lost its
 * parent included, is killed before `ended` resolves (Linux, /proc).
 *
 * `stop()` is the stdio specification's order for the whole tree: close stdin,
 * wait, SIGTERM, wait, SIGKILL. `kill()` is SIGKILL at once.
 *
 * Node's own `spawn`, not execa: the launcher owns the group, its kill, the
 * buffering and the output limits, which is everything execa would add (the
 * hook runner had switched all of it off: no cleanup, no reject, no buffer).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ChildEnd, ChildStopOptions, LaunchedChild } from 'plinth/sdk';
import { TREE_MARK, descendantsOf, groupMembers, isAlive, killGroup, markedProcessesShared, pipeHolders, pipeNames, signalEach, trackGroup, trackMark, treeMarkValue, untrackGroup, untrackMark } from 'plinth/internal';

/** After the child exits and its group is killed: how long its pipes may stay open before holders are looked for. */
const DRAIN_GRACE_MS = 100;
/** After holders are killed: how long before the pipes are closed on our side regardless. */
const DRAIN_LIMIT_MS = 500;
/** After a kill: how long `ended` waits for the exit before it resolves anyway. */
const KILL_LIMIT_MS = 2000;

const ignore = (): void => {};

/** What to spawn, after resolution. */
export interface Spawn {
  readonly file: string;
  readonly args: readonly string[];
  readonly argv0: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly stdio: readonly ['pipe' | 'ignore', 'pipe' | 'ignore', 'pipe' | 'ignore'];
  /** Released: not tracked, not killed at exit, unref'd. */
  readonly detached: boolean;
}

export interface ChildEvents {
  readonly onEscapees?: (pids: readonly number[]) => void;
  /** Once, when the child is gone: whether plinth killed it (and why). */
  readonly onEnded?: (end: ChildEnd, killedBy: string | undefined) => void;
}

/** A child plus the launcher's internal handle: kill with a reason. */
export interface InternalChild extends LaunchedChild {
  killFor(reason: string): void;
  /** True once stop() began: a polite close is under way, and bounded. */
  readonly stopping: boolean;
}

/** Waits until none of `pids` lives (zombies count as gone) or `timeoutMs` passes; resolves with those still alive. */
async function waitGone(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    alive = alive.filter(isAlive);
  }
  return alive;
}

/** Kills, with their groups, the processes outside the tree that hold one of `names`; returns their pids. */
async function killHolders(names: readonly string[]): Promise<number[]> {
  const holders = await pipeHolders(names);
  signalEach(holders, 'SIGKILL');
  for (const pid of holders) killGroup(pid, 'SIGKILL');
  return holders;
}

/** A child that never started (spawn refused its arguments, or the OS refused the program). */
function notStarted(file: string, spawnError: string, events: ChildEvents): InternalChild {
  const end: ChildEnd = { exitCode: null, signal: null, spawnError };
  // After start() has returned the child, as for one that ends later.
  queueMicrotask(() => events.onEnded?.(end, undefined));
  const done = Promise.resolve(end);
  return { pid: undefined, spawned: Promise.resolve(undefined), file, stdin: null, stdout: null, stderr: null, exited: true, stopping: false, exit: done, ended: done, kill: ignore, killFor: ignore, stop: () => done };
}

export function startChild(plan: Spawn, events: ChildEvents = {}): InternalChild {
  // A released child (a browser) is not ours to end, so it carries no mark.
  const mark = plan.detached ? undefined : randomBytes(12).toString('base64url');
  let subprocess: ChildProcess;
  try {
    subprocess = spawn(plan.file, [...plan.args], {
      cwd: plan.cwd,
      env: mark === undefined ? plan.env : { ...plan.env, [TREE_MARK]: treeMarkValue(mark) },
      argv0: plan.argv0,
      stdio: [...plan.stdio],
      detached: true,
      windowsHide: true,
    });
  } catch (error) {
    // Arguments or environment the system cannot pass (a NUL byte, for one).
    return notStarted(plan.file, error instanceof Error ? error.message : String(error), events);
  }
  const pid = subprocess.pid;
  const grouped = pid !== undefined && !plan.detached;
  if (grouped) trackGroup(pid);
  if (pid !== undefined && mark !== undefined) trackMark(mark);
  if (plan.detached) subprocess.unref();
  // Read now, while the child lives: what its children would hold if they outlived it and left its group.
  const names = pid === undefined || plan.detached ? Promise.resolve([]) : pipeNames(pid, [0, 1, 2]);
  for (const stream of [subprocess.stdin, subprocess.stdout, subprocess.stderr]) stream?.on('error', ignore);

  let exitInfo: { code: number | null; signal: string | null } | undefined;
  let settled = false;
  let killedBy: string | undefined;
  /** Set by stop(): the exit is part of a polite close, whose own order ends the rest of the group. */
  let stopping = false;
  let drainTimer: NodeJS.Timeout | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let settle: (end: ChildEnd) => void = ignore;
  let markExit: (end: ChildEnd) => void = ignore;

  const endGroup = (): void => {
    if (!grouped) return;
    killGroup(pid, 'SIGKILL');
    untrackGroup(pid);
  };
  /**
   * Set once a read made after the child was gone found nothing carrying its mark: nothing ever
   * will (a mark is only inherited), so the sweep when it settles has nothing to look for.
   */
  let markSwept = false;
  /**
   * What still carries the tree's mark once the child is gone (a daemon that left the group and its
   * parent): killed. The read is shared with every child that settles in the same turn (twenty servers
   * closed together), at the cost of `ended` resolving a turn later.
   */
  const endMarked = async (): Promise<void> => {
    if (mark === undefined || pid === undefined) return;
    if (!markSwept) signalEach(await markedProcessesShared([mark]), 'SIGKILL');
    untrackMark(mark);
  };

  const exit = new Promise<ChildEnd>((resolve) => (markExit = resolve));
  const ended = new Promise<ChildEnd>((resolve) => {
    settle = (end) => {
      if (settled) return;
      settled = true;
      clearTimeout(drainTimer);
      clearTimeout(killTimer);
      // Gave up waiting for the exit (see kill): one more try at the tree.
      if (exitInfo === undefined) endGroup();
      void endMarked().then(() => {
        markExit(end);
        events.onEnded?.(end, killedBy);
        resolve(end);
      });
    };
  });

  /** Makes sure the pipes close even when something outside the group holds them. */
  const drain = (): void => {
    if (drainTimer !== undefined || settled || plan.detached) return;
    drainTimer = setTimeout(() => {
      void names.then(killHolders).then((pids) => {
        if (pids.length > 0) events.onEscapees?.(pids);
        if (settled) return;
        drainTimer = setTimeout(() => {
          subprocess.stdout?.destroy();
          subprocess.stderr?.destroy();
          subprocess.stdin?.destroy();
          // Destroyed pipes close; if the exit was never seen either, give up on it.
          setTimeout(() => settle({ exitCode: exitInfo?.code ?? null, signal: exitInfo?.signal ?? null }), 50).unref();
        }, DRAIN_LIMIT_MS);
      });
    }, DRAIN_GRACE_MS);
  };

  subprocess.once('exit', (code: number | null, signal: string | null) => {
    exitInfo = { code, signal };
    markExit({ exitCode: code, signal });
    // Children that outlive it die with it, so they never hold its pipes open (stop() ends them in its own order).
    if (!stopping) endGroup();
    drain();
  });
  subprocess.once('close', (code: number | null, signal: string | null) => {
    settle({ exitCode: exitInfo?.code ?? code, signal: exitInfo?.signal ?? signal });
  });
  subprocess.once('error', (error: NodeJS.ErrnoException) => {
    // Before a pid: the spawn failed (ENOENT, EACCES…). After: a failed kill or write, nothing to settle.
    if (pid === undefined) settle({ exitCode: null, signal: null, spawnError: error.message });
  });
  if (plan.detached) {
    // Released: nobody waits for it; it is "ended" for the launcher once it has started.
    subprocess.once('spawn', () => settle({ exitCode: null, signal: null }));
  }

  const killFor = (reason: string): void => {
    if (settled || killTimer !== undefined) return;
    killedBy ??= reason;
    if (exitInfo === undefined) {
      endGroup();
      if (!grouped) subprocess.kill('SIGKILL');
    }
    drain();
    killTimer = setTimeout(() => settle({ exitCode: exitInfo?.code ?? null, signal: exitInfo?.signal ?? 'SIGKILL' }), KILL_LIMIT_MS);
  };

  let stopped: Promise<ChildEnd> | undefined;
  /** The polite close of the whole tree, once; see ChildStopOptions. */
  const stop = (graces: ChildStopOptions): Promise<ChildEnd> => {
    if (settled || plan.detached || pid === undefined || exitInfo !== undefined) return stopped ?? ended;
    stopping = true;
    stopped ??= politely(pid, graces);
    return stopped;
  };
  const politely = async (pid: number, graces: ChildStopOptions): Promise<ChildEnd> => {
    // Children that might leave the group are found through their parent, so before it goes.
    const tree = exitInfo === undefined ? await descendantsOf(pid).catch(() => [] as number[]) : [];
    subprocess.stdin?.end();
    if (exitInfo === undefined && graces.exitGraceMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exit, new Promise<void>((resolve) => (timer = setTimeout(resolve, graces.exitGraceMs)))]);
      clearTimeout(timer);
    }
    const members = grouped ? await groupMembers(pid) : [];
    // The group is signalled only while it has members: its id is a pid, and a free pid can be reused.
    const group = members.length > 0 ? pid : undefined;
    let left = [...new Set([pid, ...members, ...tree])].filter(isAlive);
    if (left.length > 0) {
      killedBy ??= 'stopped';
      if (group !== undefined) killGroup(group, 'SIGTERM');
      signalEach(left, 'SIGTERM');
      left = await waitGone(left, graces.killGraceMs);
      const now = group === undefined ? [] : await groupMembers(group);
      left = [...new Set([...left, ...now])];
      if (left.length > 0) {
        if (now.length > 0) killGroup(pid, 'SIGKILL');
        signalEach(left, 'SIGKILL');
        await waitGone(left, KILL_LIMIT_MS);
      }
    }
    // Then what carries the mark elsewhere (a daemon that left the group and its parent), asked politely too,
    // not only swept with SIGKILL when the child settles. One read for every child stopped at once.
    if (mark !== undefined) await stopMarked(mark, pid, graces);
    if (grouped) untrackGroup(pid);
    drain();
    return ended;
  };

  const stopMarked = async (mark: string, pid: number, graces: ChildStopOptions): Promise<void> => {
    const marked = await markedProcessesShared([mark]);
    if (marked.length === 0) {
      // Read after the child was gone: conclusive (see markSwept).
      if (!isAlive(pid)) markSwept = true;
      return;
    }
    killedBy ??= 'stopped';
    signalEach(marked, 'SIGTERM');
    const left = await waitGone(marked, graces.killGraceMs);
    if (left.length > 0) {
      signalEach(left, 'SIGKILL');
      await waitGone(left, KILL_LIMIT_MS);
    }
  };

  return {
    pid,
    spawned: Promise.resolve(pid),
    file: plan.file,
    stdin: subprocess.stdin,
    stdout: subprocess.stdout,
    stderr: subprocess.stderr,
    exit,
    ended,
    get exited() {
      return exitInfo !== undefined || settled;
    },
    get stopping() {
      return stopping;
    },
    kill: () => killFor('killed'),
    killFor,
    stop,
  };
}
