/**
 * The recent hook runs, kept in a file in the user folder so that `plinth hooks
 * trace` and `hooks list` (a separate process) can show what `plinth up` or a
 * host did. One JSON line per run; trimmed to the newest `size` lines once
 * it holds more than `size` + max(`size`, 1,000) (`recent` reads the newest).
 *
 * The file stays open between events (opened on the first, with its folder if
 * need be), and each event's lines are appended with one synchronous `write`
 * before `record` returns: no `mkdir`, `open` or `close` per event, no round
 * trip through the thread pool. Durability: once an event's decision is
 * returned, its lines are in the file as far as the system is concerned, so a
 * crash of plinth, a kill or a close loses none; they are not flushed to the
 * disk (`fsync`), so a crash of the machine may lose the last ones.
 *
 * Other processes append to the same file and trim it (by an atomic rename):
 * before each write the path is `stat`ed, and when it names another file than
 * the one open (trimmed, moved or removed by someone else) it is opened again.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { HookFailure, HookOutcome } from './types.js';

/** One hook's run in one event, as `hooks trace` shows it. */
export interface TraceEntry {
  readonly at: string;
  readonly event: string;
  readonly hook: string;
  readonly source: string;
  readonly status: HookOutcome['status'];
  readonly allow: boolean;
  readonly failure?: HookFailure;
  readonly message?: string;
  readonly durationMs: number;
  readonly exitCode?: number;
  readonly stderrTail?: string;
}

export interface Trace {
  /** Appends the runs of one event; they are in the file when it returns. Never fails: a trace that cannot be written is skipped. */
  record(event: string, outcomes: readonly HookOutcome[]): Promise<void>;
  /** The newest entries, oldest first. */
  recent(limit?: number): Promise<TraceEntry[]>;
  /** Closes the file (it is opened again by the next `record`). */
  close(): void;
}

/** The file as opened: its descriptor and which file it is. */
interface Open {
  readonly fd: number;
  readonly dev: number;
  readonly ino: number;
}

/** A trace in `file`; `redact` masks secrets a hook may print on stderr. */
export function createTrace(file: string, size: number, redact: (text: string) => string): Trace {
  let open: Open | undefined;
  let lines = 0;
  // Lines past `size` before a trim (which reads and rewrites the file): at least 1,000, so that its cost is spread thin.
  const slack = Math.max(size, 1000);

  const close = (): void => {
    if (open === undefined) return;
    const { fd } = open;
    open = undefined;
    try {
      closeSync(fd);
    } catch {
      // Already gone: nothing to release.
    }
  };

  /** How many lines the file holds, when known without reading it (after a trim of ours). */
  let known: number | undefined;

  /** The file open for appending, opened again when the path names another file now. */
  const ready = (): Open => {
    if (open !== undefined) {
      const now = statSync(file, { throwIfNoEntry: false });
      if (now !== undefined && now.ino === open.ino && now.dev === open.dev) return open;
      close();
    }
    let fd: number;
    try {
      fd = openSync(file, 'a', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      fd = openSync(file, 'a', 0o600);
    }
    const info = fstatSync(fd);
    open = { fd, dev: info.dev, ino: info.ino };
    lines = info.size === 0 ? 0 : (known ?? countLines(readFileSync(file, 'utf8')));
    known = undefined;
    return open;
  };

  /** Keeps the newest `size` lines: a new file renamed over the old one (the next write opens it). */
  const trim = (): void => {
    const kept = readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-size);
    const temporary = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
    // Synchronous, unlike the sdk's writeFileAtomic: no append of this process may land in between.
    try {
      writeFileSync(temporary, kept.map((line) => `${line}\n`).join(''), { mode: 0o600 });
      renameSync(temporary, file);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
    close();
    known = kept.length;
  };

  return {
    record(event, outcomes) {
      if (outcomes.length === 0) return Promise.resolve();
      const at = new Date().toISOString();
      const text = outcomes
        .map((outcome) => {
          const entry: TraceEntry = {
            at,
            event,
            hook: outcome.hook.id,
            source: outcome.hook.source,
            status: outcome.status,
            allow: outcome.allow,
            durationMs: Math.round(outcome.durationMs * 10) / 10,
            ...(outcome.failure && { failure: outcome.failure }),
            ...(outcome.message && { message: outcome.message }),
            ...(outcome.exitCode !== undefined && { exitCode: outcome.exitCode }),
            ...(outcome.stderrTail && { stderrTail: outcome.stderrTail.slice(-500) }),
          };
          return `${redact(JSON.stringify(entry))}\n`;
        })
        .join('');
      try {
        const { fd } = ready();
        const bytes = Buffer.from(text, 'utf8');
        for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
        lines += outcomes.length;
        if (lines > size + slack) trim();
      } catch {
        // A trace that cannot be written must not fail the event.
        close();
      }
      return Promise.resolve();
    },
    async recent(limit = size) {
      const text = await readFile(file, 'utf8').catch(() => '');
      const entries: TraceEntry[] = [];
      for (const line of text.split('\n').filter(Boolean).slice(-limit)) {
        try {
          entries.push(JSON.parse(line) as TraceEntry);
        } catch {
          // A line cut by a crash mid-append: skip it.
        }
      }
      return entries;
    },
    close,
  };
}

function countLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}
