/**
 * The default sign-in channel: a callback server on 127.0.0.1, the
 * authorization URL always printed and opened in a browser where one can be,
 * and, on a terminal, the callback URL accepted pasted instead (over SSH the
 * browser's 127.0.0.1 is another machine). Whichever of the two brings a URL
 * first wins; a pasted URL is checked exactly as the server checks a request.
 */
import type { Launcher, SignInChannel, SignInRequest } from 'plinth/sdk';
import { canOpenBrowser, browsableUrl, openBrowser } from './browser.js';
import { inspectCallback, looksLikeCallback } from './callback-params.js';
import { startCallbackServer } from './callback-server.js';
import { formatDuration, invalidCallbackError, stateMismatchError } from './errors.js';
import { pasteInput, readPastedUrl, type PasteInput } from './paste.js';

export interface LoopbackChannelOptions {
  /** How long `callback()` waits for the browser or a paste, in ms. */
  readonly timeoutMs: number;
  /** The `openBrowser` setting: false prints the URL only. */
  readonly openBrowser: boolean;
  /** Where the lines for the user go (the URL, why no browser opened, the paste prompt). */
  readonly progress: (line: string) => void;
  /** Where a callback URL may be pasted; default stdin. Used only when it is a terminal (`isTTY`). */
  readonly input?: PasteInput;
  /** For the browser guess and `BROWSER`; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
  /** For the container guess (`/.dockerenv`); default existsSync. */
  readonly fileExists?: (path: string) => boolean;
  /** Opens a URL; default {@link openBrowser} through `launcher`. Resolves false when nothing was started. */
  readonly open?: (url: string) => Promise<boolean>;
  /** The `launcher` service, for the default opener; without it (and without `open`) the URL is only printed. */
  readonly launcher?: () => Promise<Launcher>;
}

// setTimeout fires at once for delays above 2^31-1 ms, which would end every sign-in immediately.
const MAX_TIMEOUT_MS = 2_147_483_647;

function ignore(): void {}

export async function createLoopbackChannel(request: SignInRequest, options: LoopbackChannelOptions): Promise<SignInChannel> {
  const { timeoutMs } = options;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new RangeError(`timeoutMs must be a whole number of ms from 1 to ${MAX_TIMEOUT_MS}, not ${timeoutMs}`);
  }
  const { server: name, state, signal } = request;
  const { progress } = options;
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const launcher = options.launcher;
  const open = options.open ?? ((url: string) => (launcher === undefined ? Promise.resolve(false) : launcher().then((service) => openBrowser(url, { launcher: service, env, platform }), () => false)));
  const input = pasteInput(options.input ?? process.stdin);

  const server = await startCallbackServer({ server: name, state, timeoutMs, signal, ...(request.port !== undefined && { port: request.port }) });
  // Stops the paste reader once the race is decided or the channel closes.
  const stopPaste = new AbortController();
  let waiting: Promise<URL> | undefined;
  let closing: Promise<void> | undefined;

  /** A pasted URL that is no callback at all (the authorization URL, say) gets a hint; one with a bad state ends the sign-in. */
  const checkPasted = (url: URL): string | undefined =>
    looksLikeCallback(url) ? undefined : `That URL carries no sign-in result: paste the address the browser ends on after you approve (${server.redirectUrl}?…).`;

  function verifyPasted(url: URL): URL {
    const verdict = inspectCallback(url, state);
    if (verdict.kind === 'forged') throw stateMismatchError(name, 'pasted', verdict.missing);
    if (verdict.kind === 'invalid') throw invalidCallbackError(name, 'pasted');
    return url;
  }

  async function race(): Promise<URL> {
    const fromServer = server.wait();
    if (!input) return fromServer;
    const pasteSignal = AbortSignal.any([stopPaste.signal, signal]);
    const fromPaste = readPastedUrl({ input, progress, signal: pasteSignal, check: checkPasted }).then((url) =>
      // The input ended (Ctrl-D): only the browser can still bring the callback.
      url === undefined ? fromServer : verifyPasted(url),
    );
    try {
      return await Promise.race([fromServer, fromPaste]);
    } finally {
      stopPaste.abort();
      fromPaste.catch(ignore);
      // A pasted URL won: the server must not take a later request for this sign-in.
      void server.close();
    }
  }

  return {
    redirectUrl: server.redirectUrl,

    async open(authorizationUrl: URL): Promise<void> {
      progress(`Open this URL to sign in to ${name}:`);
      progress(authorizationUrl.href);
      if (browsableUrl(authorizationUrl.href) === undefined) {
        progress(`Not opening it in a browser: it is a ${authorizationUrl.protocol} URL, and only http: and https: URLs are opened.`);
      } else if (!options.openBrowser) {
        progress('Not opening a browser: the openBrowser setting is off.');
      } else {
        const verdict = canOpenBrowser(env, platform, options.fileExists);
        if (!verdict.canOpen) progress(verdict.reason);
        else if (!(await open(authorizationUrl.href))) progress('Could not start a browser: open the URL above yourself.');
      }
      if (input) {
        progress(`If the browser runs on another machine, it cannot reach ${server.redirectUrl}: copy the address it ends on (starting with that) and paste it here, then press Enter.`);
      }
      progress(`Waiting for the sign-in to finish (${formatDuration(timeoutMs)} at most)…`);
    },

    callback(): Promise<URL> {
      waiting ??= race();
      return waiting;
    },

    close(): Promise<void> {
      closing ??= (async () => {
        stopPaste.abort();
        await server.close();
      })();
      return closing;
    },
  };
}
