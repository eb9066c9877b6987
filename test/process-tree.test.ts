/**
 * internal/process/tree with real processes: a process group with a child that
 * left it, a zombie, pipes held by a process outside the group, and the
 * exit-time sweep of tracked groups. Every pid started here is killed after
 * each test.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { TREE_MARK, descendantsOf, groupMembers, isAlive, killGroup, markTableReads, markedProcesses, markedProcessesShared, pipeHolders, pipeNames, processTableReads, signalEach, treeMarkValue } from '../internal/process/tree.js';

const SDK_URL = pathToFileURL(fileURLToPath(new URL('../dist/internal/index.js', import.meta.url))).href;
const IDLE = 'setInterval(() => {}, 1000)';
const linux = process.platform === 'linux';

const started = new Set<number>();
afterEach(() => {
  for (const pid of started) {
    killGroup(pid);
    signalEach([pid], 'SIGKILL');
  }
  started.clear();
});

/** Runs `node -e script` in a group of its own; resolves with its pid and the first line it prints (JSON). */
async function run<T>(script: string, options: { args?: string[]; stdout?: 'pipe' } = {}): Promise<{ pid: number; first: T }> {
  const child = spawn(process.execPath, [...(options.args ?? []), '-e', script], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  started.add(child.pid!);
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('error', reject);
  });
  const first = JSON.parse(line) as T;
  for (const pid of Object.values(first as object)) if (typeof pid === 'number') started.add(pid);
  return { pid: child.pid!, first };
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(process.platform === 'win32')('process tree', () => {
  test('a group with a detached child: the group kill ends the group, the child that left it is found as a descendant', async () => {
    const { pid, first } = await run<{ inGroup: number; outside: number }>(`
      const { spawn } = require('node:child_process');
      const inGroup = spawn(process.execPath, ['-e', '${IDLE}'], { stdio: 'ignore' });
      const outside = spawn(process.execPath, ['-e', '${IDLE}'], { stdio: 'ignore', detached: true });
      console.log(JSON.stringify({ inGroup: inGroup.pid, outside: outside.pid }));
      ${IDLE};
    `);
    expect((await groupMembers(pid)).sort()).toEqual([pid, first.inGroup].sort());
    expect((await descendantsOf(pid)).sort()).toEqual([first.inGroup, first.outside].sort());
    expect(await descendantsOf(pid)).not.toContain(process.pid);

    killGroup(pid, 'SIGKILL');
    await until(() => !isAlive(pid) && !isAlive(first.inGroup));
    expect(await groupMembers(pid)).toEqual([]);
    expect(isAlive(first.outside)).toBe(true); // it left the group

    signalEach([first.outside], 'SIGKILL');
    await until(() => !isAlive(first.outside));
    killGroup(pid); // an empty group is fine
  });

  test.skipIf(!linux)('a zombie counts as dead', async () => {
    // `sh` forks a short sleep, then execs a long one, which never reaps it: the short one stays a
    // zombie. It must outlive the exec: a child that ends first may be reaped by `sh` itself.
    const sh = spawn('/bin/sh', ['-c', 'sleep 1 & echo $!; exec sleep 30'], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    started.add(sh.pid!);
    const zombie = Number(await new Promise<string>((resolve) => createInterface({ input: sh.stdout! }).once('line', resolve)));
    await until(() => readFileSync(`/proc/${zombie}/stat`, 'utf8').split(') ')[1]!.startsWith('Z'));

    expect(() => process.kill(zombie, 0)).not.toThrow(); // the pid still exists…
    expect(isAlive(zombie)).toBe(false); // …but the process is gone
    expect(isAlive(sh.pid!)).toBe(true);
    expect(await descendantsOf(sh.pid!)).toEqual([]);
    expect(await groupMembers(sh.pid!)).toEqual([sh.pid]);
  });

  test.skipIf(!linux)('pipe holders: a child that left the group and outlived its parent is found by the pipes it inherited', async () => {
    const leader = spawn(process.execPath, ['-e', `
      const { spawn } = require('node:child_process');
      const escapee = spawn(process.execPath, ['-e', '${IDLE}'], { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
      console.log(JSON.stringify({ escapee: escapee.pid }));
      process.stdin.once('data', () => process.exit(0));
    `], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    started.add(leader.pid!);
    const names = await pipeNames(leader.pid!, [1, 2]);
    expect(names).toHaveLength(2);
    expect(names.every((name) => /^(pipe|socket):\[\d+\]$/.test(name))).toBe(true); // node makes socketpairs
    expect(await pipeNames(leader.pid!, [0])).toHaveLength(1);

    const { escapee } = JSON.parse(await new Promise<string>((resolve) => createInterface({ input: leader.stdout! }).once('line', resolve))) as { escapee: number };
    started.add(escapee);
    leader.stdin!.write('go\n');
    await until(() => !isAlive(leader.pid!));

    expect(await pipeHolders(names)).toEqual([escapee]); // not this process, though it holds the read ends
    expect(await pipeHolders([])).toEqual([]);
    signalEach([escapee], 'SIGKILL');
    await until(() => !isAlive(escapee));
    expect(await pipeHolders(names)).toEqual([]);
    expect(await pipeNames(leader.pid!, [1, 2])).toEqual([]); // gone: nothing to read
  });

  test.skipIf(!linux)('marks: a process is found by any mark of the chain it inherited, wherever it runs; not by another', async () => {
    const value = treeMarkValue('inner', 'outer');
    expect(value).toBe('outer,inner');
    const marked = spawn(process.execPath, ['-e', IDLE], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, [TREE_MARK]: value, [`X${TREE_MARK}`]: 'decoy' } });
    const decoy = spawn(process.execPath, ['-e', IDLE], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, [`X${TREE_MARK}`]: 'outer' } });
    started.add(marked.pid!);
    started.add(decoy.pid!);
    await Promise.all([marked, decoy].map((child) => new Promise((resolve) => child.once('spawn', resolve))));
    expect(markedProcesses(['outer'])).toEqual([marked.pid]);
    expect(markedProcesses(['inner'])).toEqual([marked.pid]);
    expect(markedProcesses(['other', 'decoy'])).toEqual([]);
  });

  test('callers at the same time share reads of the process table, and none gets a read older than its call', async () => {
    const before = processTableReads();
    // A read begins; then a process is started (spawn has forked when it returns); then more callers ask.
    const first = groupMembers(process.pid);
    const child = spawn(process.execPath, ['-e', IDLE], { detached: true, stdio: 'ignore' });
    started.add(child.pid!);
    const later = [groupMembers(child.pid!), descendantsOf(process.pid), ...Array.from({ length: 8 }, () => groupMembers(child.pid!))];
    await first;
    const [members, descendants, ...rest] = await Promise.all(later);
    // The read begun before the spawn could miss the child: those asked after it see it.
    expect(members).toEqual([child.pid]);
    expect(descendants).toContain(child.pid);
    for (const other of rest) expect(other).toEqual([child.pid]);
    // Eleven callers, two reads: the one under way, and one after it for everyone who came later.
    expect(processTableReads() - before).toBe(2);
    // A caller alone reads afresh.
    expect(await groupMembers(child.pid!)).toEqual([child.pid]);
    expect(processTableReads() - before).toBe(3);
  });

  test.runIf(linux)('callers in the same turn share one read of every environment, made after they asked: a process marked before it is found by all', async () => {
    const mark = `share-${process.pid}-${Date.now()}`;
    const before = markTableReads();
    const asked = Array.from({ length: 20 }, (_, i) => markedProcessesShared([i % 2 === 0 ? mark : 'no-such-mark']));
    // Started after the calls, before the read (the next turn): every caller of the mark sees it.
    const child = spawn(process.execPath, ['-e', IDLE], { detached: true, stdio: 'ignore', env: { ...process.env, [TREE_MARK]: treeMarkValue(mark, undefined) } });
    started.add(child.pid!);
    const found = await Promise.all(asked);
    expect(found.filter((_, i) => i % 2 === 0)).toEqual(Array.from({ length: 10 }, () => [child.pid]));
    expect(found.filter((_, i) => i % 2 === 1)).toEqual(Array.from({ length: 10 }, () => []));
    expect(markTableReads() - before).toBe(1);
    // The synchronous form agrees; a later caller reads afresh.
    expect(markedProcesses([mark])).toEqual([child.pid]);
    signalEach([child.pid!], 'SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(await markedProcessesShared([mark])).toEqual([]);
    expect(markTableReads() - before).toBe(2);
  });

  test('tracked groups are killed when the host exits; untracked ones are not', async () => {
    const group = `require('node:child_process').spawn(process.execPath, ['-e', '${IDLE}'], { stdio: 'ignore' }); ${IDLE}`;
    const { first } = await run<{ tracked: number; untracked: number }>(
      `
      import { spawn } from 'node:child_process';
      import { groupMembers, trackGroup, untrackGroup } from ${JSON.stringify(SDK_URL)};
      const start = () => spawn(process.execPath, ['-e', ${JSON.stringify(group)}], { detached: true, stdio: 'ignore' }).pid;
      const tracked = start();
      const untracked = start();
      trackGroup(tracked);
      trackGroup(untracked)();
      const full = async (pgid) => (await groupMembers(pgid)).length === 2;
      while (!(await full(tracked)) || !(await full(untracked))) await new Promise((resolve) => setTimeout(resolve, 20));
      untrackGroup(untracked);
      console.log(JSON.stringify({ tracked, untracked }));
      process.exit(0);
    `,
      { args: ['--input-type=module'] },
    );
    await until(async () => (await groupMembers(first.tracked)).length === 0);
    expect(await groupMembers(first.untracked)).toHaveLength(2);
    killGroup(first.untracked);
    await until(async () => (await groupMembers(first.untracked)).length === 0);
  });
});
