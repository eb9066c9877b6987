/**
 * The recent hook runs, kept in a file in the user folder so that `plinth hooks
 * trace` and `hooks list` (a separate process) can show what `plinth up` or a
 * host did. One JSON line per run; trimmed to the newest `size` lines.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from 'plinth/sdk';
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
  record(event: string, outcomes: readonly HookOutcome[]): Promise<void>;
  /** The newest entries, oldest first. */
  recent(limit?: number): Promise<TraceEntry[]>;
}

/** A trace in `file`; `redact` masks secrets a hook may print on stderr. */
export function createTrace(file: string, size: number, redact: (text: string) => string): Trace {
  let lines = -1; // unknown until first read
  // Appends are serialised so that trimming never races an append.
  let queue: Promise<void> = Promise.resolve();

  const trim = async (): Promise<void> => {
    const text = await readFile(file, 'utf8').catch(() => '');
    const kept = text.split('\n').filter(Boolean).slice(-size);
    await writeFileAtomic(file, kept.map((line) => `${line}\n`).join(''), { mode: 0o600 });
    lines = kept.length;
  };

  return {
    record(event, outcomes) {
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
      if (text === '') return Promise.resolve();
      queue = queue
        .then(async () => {
          await mkdir(dirname(file), { recursive: true });
          if (lines === -1) lines = (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
          await appendFile(file, text, { mode: 0o600 });
          lines += outcomes.length;
          if (lines > size * 2) await trim();
        })
        // A trace that cannot be written must not fail the event.
        .catch(() => undefined);
      return queue;
    },
    async recent(limit = size) {
      await queue;
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
  };
}
