/**
 * The trace: the most recent launches in memory, oldest first, bounded. The
 * arguments are shortened and redacted before they are kept; environment
 * values are never kept.
 */
import type { LaunchTraceEntry } from 'plinth/sdk';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type TraceRecord = Mutable<LaunchTraceEntry>;

const MAX_ARGS = 8;
const MAX_ARG_CHARS = 80;
/** A flag whose value is a credential (`--token x`, `--api-key=x`). */
const SECRET_FLAG = /^-{1,2}[\w-]*(token|secret|password|passwd|key|auth|credential)[\w-]*$/i;
const SECRET_ASSIGNMENT = /^(-{0,2}[\w-]*(token|secret|password|passwd|key|auth|credential)[\w-]*=).+$/i;

/** The arguments as the trace shows them: at most 8, each at most 80 characters, credential-looking values masked. */
export function summarizeArgs(args: readonly string[], redact: (text: string) => string): string {
  const shown: string[] = [];
  for (let i = 0; i < Math.min(args.length, MAX_ARGS); i++) {
    const arg = args[i]!;
    let word = SECRET_ASSIGNMENT.test(arg) ? arg.replace(SECRET_ASSIGNMENT, '$1[redacted]') : i > 0 && SECRET_FLAG.test(args[i - 1]!) ? '[redacted]' : arg;
    if (word.length > MAX_ARG_CHARS) word = `${word.slice(0, MAX_ARG_CHARS)}…`;
    shown.push(JSON.stringify(word));
  }
  if (args.length > MAX_ARGS) shown.push(`… (+${args.length - MAX_ARGS})`);
  return redact(shown.join(' '));
}

export class LaunchTrace {
  readonly #entries: TraceRecord[] = [];
  #next = 1;

  constructor(private readonly size: number) {}

  add(entry: Omit<TraceRecord, 'id'>): TraceRecord {
    const record: TraceRecord = { id: this.#next++, ...entry };
    this.#entries.push(record);
    if (this.#entries.length > this.size) this.#entries.splice(0, this.#entries.length - this.size);
    return record;
  }

  entries(): readonly LaunchTraceEntry[] {
    return this.#entries.map((entry) => ({ ...entry }));
  }
}
