/**
 * A preload for whole-process benchmarks: `node --import <this file's URL>?out=<file>&role=<name> …`
 * appends one JSON line to <file> when the process exits: its role, its own CPU
 * time (user + system, ms) and its peak resident memory (KiB), as the operating
 * system counts them for this process alone (not its children). Given in the
 * URL, not the environment, so that it reaches a server's process through its
 * arguments whatever environment the client passes on.
 */
import { appendFileSync } from 'node:fs';

const query = new URL(import.meta.url).searchParams;
const out = query.get('out');
const role = query.get('role') ?? 'process';
if (out) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    appendFileSync(out, `${JSON.stringify({ role, pid: process.pid, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, maxRssKiB: usage.maxRSS })}\n`);
  });
}
