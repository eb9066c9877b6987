/** Asking a person on the terminal: one yes/no question, "no" unless they type yes. */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { safeText } from '../../sdk/format.js';

/** Where to ask: the question goes to `output`, the answer comes from `input`. */
export interface PromptIO {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly output: NodeJS.WritableStream & { isTTY?: boolean };
}

/** The process's terminal: stdin for answers, stderr for the question (stdout may be a pipe of data). */
export function processTerminal(): PromptIO {
  return { input: process.stdin, output: process.stderr };
}

/** Why plinth may not ask right now, or undefined when it may. */
export function whyNotAsk(io: PromptIO, env: Record<string, string | undefined> = process.env): string | undefined {
  const ci = env.CI;
  if (ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false') return 'CI is set';
  if (!io.input.isTTY || !io.output.isTTY) return 'there is no terminal to ask on';
  return undefined;
}

/**
 * Prints `question` and reads one line: `y` or `yes` (any case) is true;
 * anything else, end of input, Ctrl-C or `signal` is false. Ctrl-C is passed on
 * to the process afterwards, so that the host still sees the interrupt.
 */
export async function askYesNo(question: string, io: PromptIO, signal?: AbortSignal): Promise<boolean> {
  const typed = await askLine(question, io, signal);
  return typed !== undefined && /^y(es)?$/i.test(typed.trim());
}

/**
 * Prints `question` and reads one line: the choice whose name or first letter
 * was typed (any case). Anything else, an empty line, end of input, Ctrl-C or
 * `signal` is `fallback` — the cautious answer ("no"). Ctrl-C is passed on as
 * {@link askYesNo} does.
 *
 * @example
 * await askChoice('Allow? [o]nce, [s]ession, [a]lways, [N]o ', ['once', 'session', 'always', 'no'], 'no', io);
 */
export async function askChoice<C extends string>(question: string, choices: readonly C[], fallback: C, io: PromptIO, signal?: AbortSignal): Promise<C> {
  const word = (await askLine(question, io, signal))?.trim().toLowerCase();
  if (!word) return fallback;
  return choices.find((choice) => choice.toLowerCase() === word || choice[0]?.toLowerCase() === word) ?? fallback;
}

/**
 * One line typed after `question` (undefined on end of input, Ctrl-C or `signal`). `hidden`: what
 * is typed is not echoed (a secret), and a newline is written after it.
 */
export async function askText(question: string, io: PromptIO, options: { hidden?: boolean } = {}, signal?: AbortSignal): Promise<string | undefined> {
  if (!options.hidden) return askLine(question, io, signal);
  // Readline echoes to `mute`; the question goes out once the terminal is in raw mode (no echo of its own).
  const mute = new Writable({ write: (_chunk, _encoding, done) => done() });
  const typed = await askLine('', { input: io.input, output: Object.assign(mute, { isTTY: true }) }, signal, () => io.output.write(safeText(question)));
  io.output.write('\n');
  return typed;
}

/** One line typed after `question`; undefined on end of input, Ctrl-C (passed on afterwards) or `signal`. */
function askLine(question: string, io: PromptIO, signal?: AbortSignal, ready?: () => void): Promise<string | undefined> {
  if (signal?.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.input, output: io.output, terminal: Boolean(io.input.isTTY) });
    let done = false;
    let interrupted = false;
    const finish = (answer: string | undefined) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      rl.close();
      resolve(answer);
      if (interrupted) setImmediate(() => process.kill(process.pid, 'SIGINT'));
    };
    const onAbort = () => {
      io.output.write('\n');
      finish(undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    rl.on('SIGINT', () => {
      interrupted = true;
      io.output.write('^C\n');
      finish(undefined);
    });
    rl.on('close', () => finish(undefined)); // end of input (Ctrl-D)
    // The question quotes what asks for approval (a workspace server's command, a hook's script): shown, never sent to the terminal.
    rl.question(safeText(question), (typed) => finish(typed));
    ready?.();
  });
}
