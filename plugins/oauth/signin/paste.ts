/**
 * Reads the callback URL pasted into the terminal: where the browser runs on
 * another machine (SSH), its redirect to 127.0.0.1 reaches nobody, but the
 * address bar still holds the URL with the code. Lines are read in the
 * terminal's own line mode (readline without `terminal`), so Ctrl-C still
 * interrupts plinth. Nothing pasted is ever echoed back: it holds a code.
 */
import { createInterface } from 'node:readline';

export type PasteInput = NodeJS.ReadableStream & { isTTY?: boolean };

export interface PasteOptions {
  readonly input: PasteInput;
  /** Where the one-line hints about an unusable line go. */
  readonly progress: (line: string) => void;
  /** Stops reading; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Called with each parsed URL: a hint to print and keep reading, or undefined to accept it. */
  readonly check?: (url: URL) => string | undefined;
}

/** `input` (default: stdin) when a person can paste into it, i.e. it is a terminal; else undefined. */
export function pasteInput(input: PasteInput = process.stdin): PasteInput | undefined {
  return input.isTTY === true ? input : undefined;
}

const NOT_A_URL = 'That is not a URL: paste the whole address from the browser\'s address bar (it starts with http://127.0.0.1:…/callback?) and press Enter.';

/**
 * The first line of `input` that is an absolute URL passing `check`. Empty lines
 * are skipped; other lines get one hint line each. Resolves undefined when the
 * input ends first (nothing will be pasted). Either way the readline interface
 * is closed and the input paused, so it no longer keeps the process alive.
 */
export function readPastedUrl(options: PasteOptions): Promise<URL | undefined> {
  const { input, progress, signal, check } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<URL | undefined>((resolve, reject) => {
    const lines = createInterface({ input, terminal: false, crlfDelay: Infinity });
    let done = false;
    const finish = (apply: () => void): void => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      lines.close();
      // readline pauses the input on close; pausing again is harmless and covers streams it resumed itself.
      input.pause();
      apply();
    };
    const onAbort = (): void => finish(() => reject(signal!.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    lines.on('line', (raw) => {
      if (done) return;
      const line = raw.trim();
      if (line === '') return;
      let url: URL;
      try {
        url = new URL(line);
      } catch {
        progress(NOT_A_URL);
        return;
      }
      const hint = check?.(url);
      if (hint !== undefined) {
        progress(hint);
        return;
      }
      finish(() => resolve(url));
    });
    lines.once('close', () => finish(() => resolve(undefined)));
  });
}
