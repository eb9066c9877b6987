/** Asking a person on the terminal: one yes/no question, "no" unless they type yes. */
import { createInterface } from 'node:readline';
import { safeText } from './format.js';

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
export function askYesNo(question: string, io: PromptIO, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.input, output: io.output, terminal: Boolean(io.input.isTTY) });
    let done = false;
    let interrupted = false;
    const finish = (answer: boolean) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      rl.close();
      resolve(answer);
      if (interrupted) setImmediate(() => process.kill(process.pid, 'SIGINT'));
    };
    const onAbort = () => {
      io.output.write('\n');
      finish(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    rl.on('SIGINT', () => {
      interrupted = true;
      io.output.write('^C\n');
      finish(false);
    });
    rl.on('close', () => finish(false)); // end of input (Ctrl-D)
    // The question quotes what asks for approval (a workspace server's command, a hook's script): shown, never sent to the terminal.
    rl.question(safeText(question), (answer) => finish(/^y(es)?$/i.test(answer.trim())));
  });
}
