/**
 * Process trees, for plugins that run child processes (hooks, stdio servers):
 * the mechanisms to find and end everything a child started. Policy — when to
 * signal, which signal, how long to wait, which descriptors to watch — stays
 * with the plugin.
 *
 * A child spawned as the leader of a process group of its own (`detached`, or
 * through `setsid`) passes the group on to its children, and one signal to the
 * group ({@link killGroup}) reaches them all, orphans included. A child that
 * leaves the group (a daemon calling setsid) escapes that; while the tree
 * lives it can be found through parent pids ({@link descendantsOf}), and if it
 * still holds the pipes it inherited, through /proc afterwards
 * ({@link pipeNames}, {@link pipeHolders}). A process that left the group,
 * lost its parent (a daemon's double fork) and closed its inherited pipes is
 * found by its mark ({@link TREE_MARK}, {@link markedProcesses}): a variable
 * every process of the tree inherits in its environment, as Jenkins finds what
 * a build left behind. Only one that also cleared or replaced its environment
 * (`env -i`, an `execve` with a new one) is out of reach without cgroups.
 *
 * Groups registered with {@link trackGroup} are killed when the host exits
 * (a crash, `process.exit`), so no child outlives plinth.
 *
 * Liveness reads /proc on Linux and treats zombies as gone: in containers whose
 * init does not reap, an orphan killed here stays a zombie forever.
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';

/** One process as the tree walk needs it. */
interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  /** The state letter; `Z` (zombie) and `X` (dead) count as gone. */
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

const gone = (entry: ProcEntry): boolean => entry.state === 'Z' || entry.state === 'X';

/** The numeric entries of /proc: every pid (Linux). */
async function procPids(): Promise<string[]> {
  return (await readdir('/proc').catch(() => [] as string[])).filter((entry) => /^\d+$/.test(entry));
}

/** Every process: /proc on Linux, `ps` elsewhere, empty on Windows. */
async function readProcessTable(): Promise<ProcEntry[]> {
  scans++;
  if (process.platform === 'win32') return [];
  if (process.platform === 'linux') {
    const entries = await Promise.all((await procPids()).map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').then(parseStat, () => undefined)));
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

let scans = 0;
let running: Promise<ProcEntry[]> | undefined;
let waiting: Promise<ProcEntry[]> | undefined;

/**
 * The process table, read at least once after this call began. Callers at the
 * same time share reads: while one is under way (begun before them, so too old
 * for them) they wait for the next, one read for all of them. Twenty servers
 * stopped together thus read /proc a few times, not sixty.
 */
function processTable(): Promise<ProcEntry[]> {
  if (running === undefined) return startRead();
  waiting ??= running.then(next, next);
  return waiting;
}

function next(): Promise<ProcEntry[]> {
  waiting = undefined;
  return startRead();
}

function startRead(): Promise<ProcEntry[]> {
  const read = readProcessTable().finally(() => {
    if (running === read) running = undefined;
  });
  running = read;
  return read;
}

/** How many times this process has read the whole process table: for tests of the sharing above. */
export function processTableReads(): number {
  return scans;
}

/**
 * Whether `pid` is a living process. A zombie (exited, not yet reaped) is not:
 * on Linux the state is read from /proc/<pid>/stat; elsewhere signal 0 probes
 * the pid (EPERM — someone else's process — counts as alive).
 */
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

/**
 * Living descendants of `pid` (children, their children, …), found through
 * parent pids; this process is never among them. Read it while `pid` lives:
 * once a parent dies its children are re-parented and no longer found. Reads
 * /proc on Linux, `ps` elsewhere; empty on Windows.
 */
export async function descendantsOf(pid: number): Promise<number[]> {
  const byParent = new Map<number, number[]>();
  for (const entry of await processTable()) {
    if (!gone(entry)) byParent.set(entry.ppid, [...(byParent.get(entry.ppid) ?? []), entry.pid]);
  }
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

/** Living members of the process group `pgid` (zombies left out). Empty on Windows. */
export async function groupMembers(pgid: number): Promise<number[]> {
  return (await processTable()).filter((entry) => entry.pgid === pgid && !gone(entry)).map((entry) => entry.pid);
}

/**
 * Sends `signal` (SIGKILL unless told) to every process of the group led by
 * `pgid`; an empty group (ESRCH) is fine. On Windows, which has no process
 * groups, `taskkill /T /F` ends the tree under `pgid` whatever the signal.
 *
 * A group id is its leader's pid, and a free pid can be reused: signal a group
 * only while it is known to have members (see {@link groupMembers}).
 */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (process.platform === 'win32') {
    try {
      spawn('taskkill', ['/pid', String(pgid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => {});
    } catch {
      /* nothing more to do */
    }
    return;
  }
  try {
    process.kill(-pgid, signal);
  } catch {
    /* ESRCH: the group is empty */
  }
}

/**
 * Sends `signal` to each of `pids`, ignoring those already gone. On Windows,
 * `taskkill /T /F` ends each one's tree whatever the signal.
 */
export function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    if (process.platform === 'win32') {
      killGroup(pid);
      continue;
    }
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
  }
}

/**
 * What `pid` holds at the descriptors `fds` (e.g. `[1, 2]` for stdout and
 * stderr), as `pipe:[inode]` or `socket:[inode]`; other kinds (files, ttys)
 * are left out. Read it right after the process starts: its children inherit
 * the same objects, which is how {@link pipeHolders} recognises them later.
 * Linux only; elsewhere, or once the process is gone, fewer names or none.
 */
export async function pipeNames(pid: number, fds: readonly number[]): Promise<string[]> {
  if (process.platform !== 'linux') return [];
  const names = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => undefined)));
  return names.filter((name): name is string => name !== undefined && /^(socket|pipe):\[\d+\]$/.test(name));
}

/**
 * The processes, other than this one, that hold any of `names` (from
 * {@link pipeNames}) open: after the tree is gone, those that left it but
 * still keep its pipes open. Zombies hold no descriptors and are not found.
 * Linux only; empty elsewhere.
 */
export async function pipeHolders(names: readonly string[]): Promise<number[]> {
  if (process.platform !== 'linux' || names.length === 0) return [];
  const wanted = new Set(names);
  const pids = (await procPids()).filter((entry) => Number(entry) !== process.pid);
  const holders: number[] = [];
  await Promise.all(
    pids.map(async (pid) => {
      for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
        const name = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => undefined);
        if (name !== undefined && wanted.has(name)) {
          holders.push(Number(pid));
          return;
        }
      }
    }),
  );
  return holders;
}

/**
 * The environment variable a tree is marked with: `PLINTH_TREE=<mark>[,<mark>…]`,
 * one mark per launch the process descends from (a plinth started by a hook
 * appends its own children's marks to the one it inherited), so that a
 * process is found by the mark of any launch above it.
 */
export const TREE_MARK = 'PLINTH_TREE';

/** `PLINTH_TREE` for a new child of this process: the marks this process inherited, then `mark`. */
export function treeMarkValue(mark: string, inherited: string | undefined = process.env[TREE_MARK]): string {
  return inherited === undefined || inherited === '' ? mark : `${inherited},${mark}`;
}

const MARK_PREFIX = Buffer.from(`${TREE_MARK}=`);

/** The marks in one /proc/<pid>/environ, or none. */
function marksIn(environ: Buffer): string[] {
  let at = environ.indexOf(MARK_PREFIX);
  while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(MARK_PREFIX, at + 1);
  if (at < 0) return [];
  const end = environ.indexOf(0, at);
  return environ.subarray(at + MARK_PREFIX.length, end < 0 ? undefined : end).toString('latin1').split(',');
}

/**
 * The processes, other than this one, whose environment carries one of `marks`
 * (see {@link TREE_MARK}): what a marked tree still has running, wherever it
 * went (another group, another session, re-parented to init). Reads
 * /proc/<pid>/environ, synchronously (a few milliseconds for a few hundred
 * processes: its thread-pool form took ten times as long); a zombie's is
 * empty, another user's unreadable, so neither is found. Linux only; empty elsewhere.
 */
export function markedProcesses(marks: Iterable<string>): number[] {
  const wanted = new Set(marks);
  if (process.platform !== 'linux' || wanted.size === 0) return [];
  return carrying(readMarks(), wanted);
}

/**
 * {@link markedProcesses}, read at least once after this call began, and shared: every call made in
 * the same turn of the event loop waits for one read, made in the next. Twenty servers stopped
 * together read every environment a few times, not twenty.
 */
export async function markedProcessesShared(marks: Iterable<string>): Promise<number[]> {
  const wanted = new Set(marks);
  if (process.platform !== 'linux' || wanted.size === 0) return [];
  markScan ??= new Promise((resolve) =>
    setImmediate(() => {
      markScan = undefined;
      markScans++;
      resolve(readMarks());
    }),
  );
  return carrying(await markScan, wanted);
}

let markScan: Promise<ReadonlyMap<number, readonly string[]>> | undefined;
let markScans = 0;

/** How many shared reads of every environment this process has made: for tests of the sharing above. */
export function markTableReads(): number {
  return markScans;
}

function carrying(table: ReadonlyMap<number, readonly string[]>, wanted: ReadonlySet<string>): number[] {
  const found: number[] = [];
  for (const [pid, marks] of table) if (marks.some((mark) => wanted.has(mark))) found.push(pid);
  return found;
}

/** One buffer for every environ read: most are a few KiB; a longer one is read on into a larger copy. */
let environBuffer = Buffer.allocUnsafe(64 * 1024);

/** The marks of every process (other than this one) that carries any. */
function readMarks(): Map<number, string[]> {
  const table = new Map<number, string[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const environ = readEnviron(`/proc/${entry}/environ`);
    if (environ === undefined) continue; // gone, or not ours to read
    const marks = marksIn(environ);
    if (marks.length > 0) table.set(Number(entry), marks);
  }
  return table;
}

/** The bytes of `file` (valid until the next call), or `undefined` when it cannot be read. */
function readEnviron(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === environBuffer.length) {
        const larger = Buffer.allocUnsafe(environBuffer.length * 2);
        environBuffer.copy(larger, 0, 0, length);
        environBuffer = larger;
      }
      const read = readSync(fd, environBuffer, length, environBuffer.length - length, null);
      if (read === 0) return environBuffer.subarray(0, length);
      length += read;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const tracked = new Set<number>();
const trackedMarks = new Set<string>();
let exitSweepInstalled = false;

/** The exit-time sweep: SIGKILL to every group still tracked, and to every process carrying a tracked mark. */
function killTrackedGroups(): void {
  for (const pgid of tracked) killGroup(pgid, 'SIGKILL');
  tracked.clear();
  if (trackedMarks.size > 0) signalEach(markedProcesses(trackedMarks), 'SIGKILL');
  trackedMarks.clear();
}

function installExitSweep(): void {
  if (exitSweepInstalled) return;
  exitSweepInstalled = true;
  process.on('exit', killTrackedGroups);
}

/**
 * Remembers a tree's mark until {@link untrackMark}: if the host exits first,
 * every process carrying it is killed with SIGKILL then (Linux).
 */
export function trackMark(mark: string): void {
  installExitSweep();
  trackedMarks.add(mark);
}

/** Forgets a mark registered with {@link trackMark}. */
export function untrackMark(mark: string): void {
  trackedMarks.delete(mark);
}

/**
 * Remembers the process group `pgid` until {@link untrackGroup} (or the
 * returned function) forgets it: if the host exits first (a crash,
 * `process.exit`), the group is killed with SIGKILL then. Untrack a group once
 * it is known to be empty, so that a reused pid is not killed by mistake.
 */
export function trackGroup(pgid: number): () => void {
  installExitSweep();
  tracked.add(pgid);
  return () => untrackGroup(pgid);
}

/** Forgets a group registered with {@link trackGroup}; it is no longer killed when the host exits. */
export function untrackGroup(pgid: number): void {
  tracked.delete(pgid);
}
