/**
 * A stdio server's process tree: this transport's policy over the mechanisms
 * of plinth/sdk's process-tree module. The SDK spawns the server in plinth's
 * own process group, so a server's children cannot be told apart from ours;
 * where util-linux `setsid` exists (Linux), the server is started through it
 * instead and leads a process group of its own that every child inherits, and
 * one signal to the group ends the whole tree, children orphaned by the server
 * included. Elsewhere, and for children that leave the group (a daemon calling
 * setsid), the tree is walked through parent pids while the server still lives.
 */
import { existsSync } from 'node:fs';
import { isAlive, killGroup, signalEach } from 'plinth/sdk';

/** util-linux `setsid`: `setsid <program> <args…>` execs the program as the leader of a new session and group. */
let setsidPath: string | null | undefined;

/** The path of `setsid` on Linux, undefined where there is none (then no process group is made). */
export function findSetsid(): string | undefined {
  if (setsidPath === undefined) {
    setsidPath = process.platform === 'linux' ? (['/usr/bin/setsid', '/bin/setsid'].find((path) => existsSync(path)) ?? null) : null;
  }
  return setsidPath ?? undefined;
}

/** Sends `sig` to the group `group` leads (if given), then to each pid; those already gone are ignored. */
export function signal(pids: readonly number[], sig: NodeJS.Signals, group?: number): void {
  if (group !== undefined) killGroup(group, sig);
  signalEach(pids, sig);
}

/** Waits until none of `pids` lives (zombies count as gone) or `timeoutMs` passes; resolves with those still alive. */
export async function waitGone(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    alive = alive.filter(isAlive);
  }
  return alive;
}
