/**
 * Process trees. Every hook process is spawned detached, so it leads a process
 * group of its own that its children inherit; SIGKILL to the group ends the
 * whole tree at once, including children that outlive the hook. Groups still
 * alive when the host exits are killed then (execa's own cleanup does not
 * apply to detached processes).
 *
 * A child that leaves the group (setsid) escapes that; if it still holds the
 * hook's stdout or stderr, `killHolders` finds it through /proc (Linux) and
 * kills it too. A child that leaves the group and closes its inherited
 * pipes (a daemon) is out of reach without cgroups.
 */
import { spawn } from 'node:child_process';
import { readdir, readlink } from 'node:fs/promises';

const live = new Set<number>();
let exitHandlerInstalled = false;

function killAllOnExit(): void {
  for (const pgid of live) killGroup(pgid);
}

/** Remembers a group so that it is killed if the host exits first. */
export function trackGroup(pgid: number): void {
  if (!exitHandlerInstalled) {
    process.on('exit', killAllOnExit);
    exitHandlerInstalled = true;
  }
  live.add(pgid);
}

/** SIGKILL to every process of the group led by `pgid` (ESRCH — already gone — is fine). */
export function killGroup(pgid: number): void {
  live.delete(pgid);
  if (process.platform === 'win32') {
    // No process groups: taskkill walks the tree from the hook.
    try {
      spawn('taskkill', ['/pid', String(pgid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => {});
    } catch {
      /* nothing more to do */
    }
    return;
  }
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    /* ESRCH: the group is empty */
  }
}

/**
 * What `pid`'s stdout and stderr are (`socket:[inode]` or `pipe:[inode]`), read
 * right after it starts: its children inherit the same objects, which is how
 * `killHolders` recognises them later. Linux only; elsewhere (or when the
 * process is already gone) fewer names or none.
 */
export async function outputNames(pid: number): Promise<string[]> {
  if (process.platform !== 'linux') return [];
  const names = await Promise.all([1, 2].map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => undefined)));
  return names.filter((name): name is string => name !== undefined && /^(socket|pipe):\[\d+\]$/.test(name));
}

/**
 * Kills (with their groups) the processes that hold one of the objects named
 * by `names` (from {@link outputNames}), and returns their pids. Linux only.
 */
export async function killHolders(names: readonly string[]): Promise<number[]> {
  if (process.platform !== 'linux' || names.length === 0) return [];
  const wanted = new Set(names);
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid);
  const holders: number[] = [];
  await Promise.all(
    pids.map(async (pid) => {
      const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      for (const fd of fds) {
        const name = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => undefined);
        if (name !== undefined && wanted.has(name)) {
          holders.push(Number(pid));
          return;
        }
      }
    }),
  );
  for (const pid of holders) {
    for (const target of [pid, -pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        /* gone, or not a group leader */
      }
    }
  }
  return holders;
}
