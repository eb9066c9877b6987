/**
 * Each failure printed once. The kernel and the plugins log a failure when it
 * happens (a plugin that did not load, a server that did not connect), and the
 * command often reports the same failure a moment later: in its error
 * (`plinth call`), or in its output (`plinth up`'s status, `plinth plugins
 * why`). Outside `-v`, the coded warnings of the log (`PLN_E_…: message`) are
 * held back until the command prints something or ends; one whose code and
 * message the command prints itself is dropped, the others are printed just
 * before it. `-v` shows the whole log as it happens, repeats included.
 */
import type { Streams } from './output.js';

/** A log line that reports a failure: `plinth[scope] warn: <code>: message`. */
const CODED = /^plinth\[[^\]]*\] (?:warn|error): (PLN_E_[A-Z0-9_]+): ([^\n]*)/;

interface Held {
  readonly line: string;
  readonly code: string;
  readonly message: string;
}

export class ProblemLog {
  readonly #write: (text: string) => void;
  readonly #holdBack: boolean;
  #held: Held[] = [];
  #live = false;

  /** `holdBack` false (`-v`): every line is written as it comes. */
  constructor(write: (text: string) => void, options: { holdBack: boolean }) {
    this.#write = write;
    this.#holdBack = options.holdBack;
  }

  /** The kernel's log sink: receives finished, redacted lines. */
  readonly sink = (line: string): void => {
    const coded = this.#holdBack && !this.#live ? CODED.exec(line) : null;
    if (!coded) return this.#write(`${line}\n`);
    // The same failure reported twice while held (two plugins asking for one that failed) is one line.
    if (this.#held.some((h) => h.line === line)) return;
    this.#held.push({ line, code: coded[1]!, message: coded[2]! });
  };

  /**
   * The command is about to print `text` (its output, or its error as a person
   * reads it): held problems that `text` shows with their code and message are
   * dropped, the rest printed first.
   */
  before(text: string): void {
    if (this.#held.length === 0) return;
    const held = this.#held;
    this.#held = [];
    const shown = squash(text);
    for (const problem of held) {
      if (shown.includes(problem.code) && shown.includes(squash(problem.message))) continue;
      this.#write(`${problem.line}\n`);
    }
  }

  /** Prints what is held; from now on lines are printed as they come (a command that stays up, or one that is done). */
  live(): void {
    this.before('');
    this.#live = true;
  }

  /** Streams that print held problems (those not in the text) before each write. */
  guard(streams: Streams): Streams {
    return {
      stdout: (text) => {
        this.before(text);
        streams.stdout(text);
      },
      stderr: (text) => {
        this.before(text);
        streams.stderr(text);
      },
    };
  }
}

/** Text for comparing: whitespace-insensitive (a table or an indented error pads), and `--json` output read as the text it holds. */
function squash(text: string): string {
  return text.replace(/\\[nrt]/g, ' ').replace(/\\"/g, '"').replace(/\s+/g, ' ');
}
