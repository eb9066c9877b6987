/**
 * A stdio server's process tree. The SDK spawns the server in plinth's own
 * process group, so a server's children cannot be told apart from ours; where
 * util-linux `setsid` exists (Linux), the server is started through it instead
 * and leads a process group of its own that every child inherits, and one
 * signal to the group ends the whole tree, children orphaned by the server
 * included. Elsewhere, and for children that leave the group (a daemon calling
 * setsid), the tree is walked through parent pids while the server still lives.
 *
 * Liveness reads /proc on Linux and treats zombies as gone: in containers whose
 * init does not reap, an orphan killed here stays a zombie forever.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';

/** util-linux `setsid`: `setsid <program> <args…>` execs the program as the leader of a new session and group. */
let setsidPath: string | null | undefined;

/** The path of `setsid` on Linux, undefined where there is none (then no process group is made). */
export function findSetsid(): string | undefined {
  if (setsidPath === undefined) {
    setsidPath = process.platform === 'linux' ? (['/usr/bin/setsid', '/bin/setsid'].find((path) => existsSync(path)) ?? null) : null;
  }
  return setsidPath ?? undefined;
}

/** One process as the tree walk needs it. */
interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  /** `Z` (zombie) and `X` (dead) count as gone. */
  readonly state: string;
}

/** Parses a /proc/<pid>/stat line; `comm` may hold spaces and parentheses, so fields are read after the last `)`. */
function parseStat(line: string): ProcEntry | undefined {
  const close = line.lastIndexOf(')');
  if (close < 0) return undefined;
  const pid = Number.parseInt(line, 10);
  const [state = '', ppid = '', pgid = ''] = line.slice(close + 2).split(' ');
  return { pid, ppid: Number(ppid), pgid: Number(pgid), state };
}

/** Every process: /proc on Linux, `ps` elsewhere, empty on Windows. */
async function processTable(): Promise<ProcEntry[]> {
  if (process.platform === 'win32') return [];
  if (process.platform === 'linux') {
    const pids = (await readdir('/proc').catch(() => [] as string[])).filter((entry) => /^\d+$/.test(entry));
    const entries = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').then(parseStat, () => undefined)));
    return entries.filter((entry): entry is ProcEntry => entry !== undefined);
  }
  const output = await new Promise<string>((resolve) => {
    execFile('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat='], (error, stdout) => resolve(error ? '' : stdout));
  });
  return output
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 4)
    .map(([pid, ppid, pgid, stat]) => ({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), state: (stat ?? '').slice(0, 1) }));
}

const gone = (entry: ProcEntry): boolean => entry.state === 'Z' || entry.state === 'X';

/** Living descendants of `pid` (children, their children, …), found through parent pids. */
export async function descendants(pid: number): Promise<number[]> {
  const table = (await processTable()).filter((entry) => !gone(entry));
  const byParent = new Map<number, number[]>();
  for (const entry of table) byParent.set(entry.ppid, [...(byParent.get(entry.ppid) ?? []), entry.pid]);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.shift()!) ?? []) {
      if (child === process.pid || found.includes(child)) continue;
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Living members of the process group `pgid`. */
export async function groupMembers(pgid: number): Promise<number[]> {
  return (await processTable()).filter((entry) => entry.pgid === pgid && !gone(entry)).map((entry) => entry.pid);
}

/** Whether `pid` is a living process (a zombie is not). */
export function isAlive(pid: number): boolean {
  if (process.platform === 'linux') {
    try {
      const entry = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      return entry !== undefined && !gone(entry);
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends `signal` to each pid and, with `group`, to the group it leads; errors (already gone) are ignored. */
export function signal(pids: readonly number[], sig: NodeJS.Signals, group?: number): void {
  if (process.platform === 'win32') {
    // No process groups or signals: taskkill ends each tree.
    for (const pid of group === undefined ? pids : [group, ...pids]) {
      spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => {});
    }
    return;
  }
  if (group !== undefined) {
    try {
      process.kill(-group, sig);
    } catch {
      /* ESRCH: the group is empty */
    }
  }
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      /* gone */
    }
  }
}

/** Waits until none of `pids` lives or `timeoutMs` passes; resolves with those still alive. */
export async function waitGone(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    alive = alive.filter(isAlive);
  }
  return alive;
}

/**
 * The pipes `pid` holds as stdin, stdout and stderr (`pipe:[inode]`), read
 * while it lives: children inherit the same pipes, which is how
 * {@link pipeHolders} recognises those that left the group. Linux only.
 */
export async function pipeNames(pid: number): Promise<string[]> {
  if (process.platform !== 'linux') return [];
  const names = await Promise.all([0, 1, 2].map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => undefined)));
  return names.filter((name): name is string => name !== undefined && /^(pipe|socket):\[\d+\]$/.test(name));
}

/** Processes other than this one that hold any of `names` open. Linux only. */
export async function pipeHolders(names: readonly string[]): Promise<number[]> {
  if (process.platform !== 'linux' || names.length === 0) return [];
  const wanted = new Set(names);
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid);
  const holders: number[] = [];
  await Promise.all(
    pids.map(async (pid) => {
      for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
        if (wanted.has((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) ?? '')) {
          holders.push(Number(pid));
          return;
        }
      }
    }),
  );
  return holders;
}

const liveGroups = new Set<number>();
let exitHook = false;

/**
 * Remembers a server's process group until it is closed: if plinth exits
 * without closing it (a crash, `process.exit`), the group is killed then, so
 * no server outlives the host.
 */
export function trackGroup(pgid: number): () => void {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const group of liveGroups) signal([], 'SIGKILL', group);
    });
  }
  liveGroups.add(pgid);
  return () => void liveGroups.delete(pgid);
}
