/**
 * Opens a URL in the user's browser without a shell: the URL is one argument of
 * the platform's opener (`open`, `rundll32 url.dll,FileProtocolHandler`,
 * `xdg-open`) or of the program named by `BROWSER`, so `&`, `;` or `$(…)` in it
 * mean nothing. Only http: and https: URLs are opened: an authorization server
 * controls the URL, and `file:` or an argument-looking value must not reach an
 * opener. Whether a browser is there at all is guessed first (SSH, CI,
 * containers, no display), so the user is told why none opened.
 */
import { existsSync } from 'node:fs';

export type BrowserVerdict = { readonly canOpen: true } | { readonly canOpen: false; readonly reason: string };

/** The program and arguments that open a URL. */
export interface BrowserCommand {
  readonly file: string;
  readonly args: readonly string[];
}

export interface OpenBrowserOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
}

const FALSY = new Set(['', '0', 'false', 'no', 'off']);

function isSet(value: string | undefined): boolean {
  return value !== undefined && !FALSY.has(value.trim().toLowerCase());
}

/** `BROWSER` split on whitespace (no shell, so no quoting); undefined when unset, [] when it disables opening. */
function browserVariable(env: NodeJS.ProcessEnv): string[] | undefined {
  const value = env.BROWSER;
  if (value === undefined) return undefined;
  const words = value.trim().split(/\s+/).filter(Boolean);
  return words.length === 0 || (words.length === 1 && words[0]!.toLowerCase() === 'none') ? [] : words;
}

/**
 * Whether a browser can be opened here, and if not, why (shown to the user:
 * `no browser: this is an SSH session`). A `BROWSER` program is trusted over
 * the SSH, container and display guesses: remote editors set it to a helper
 * that opens the browser on the user's own machine.
 */
export function canOpenBrowser(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  fileExists: (path: string) => boolean = existsSync,
): BrowserVerdict {
  const browser = browserVariable(env);
  if (browser?.length === 0) return { canOpen: false, reason: 'no browser: BROWSER is set to none' };
  if (isSet(env.CI)) return { canOpen: false, reason: 'no browser: this is a CI run' };
  if (browser !== undefined) return { canOpen: true };
  if (env.SSH_CONNECTION || env.SSH_TTY || env.SSH_CLIENT) return { canOpen: false, reason: 'no browser: this is an SSH session' };
  if (env.container || fileExists('/.dockerenv') || fileExists('/run/.containerenv')) {
    return { canOpen: false, reason: 'no browser: this is a container' };
  }
  if (platform !== 'darwin' && platform !== 'win32' && !env.DISPLAY && !env.WAYLAND_DISPLAY) {
    return { canOpen: false, reason: 'no browser: no graphical display (neither DISPLAY nor WAYLAND_DISPLAY is set)' };
  }
  return { canOpen: true };
}

/** `url` when it is an http: or https: URL, in its normalised form (spaces and quotes percent-encoded); else undefined. */
export function browsableUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
}

/**
 * The command that opens `url` (already checked by {@link browsableUrl}). A
 * `%s` in a `BROWSER` word is replaced by the URL, as other tools do; without
 * one the URL is the last argument.
 */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): BrowserCommand | undefined {
  const browser = browserVariable(env);
  if (browser !== undefined) {
    if (browser.length === 0) return undefined;
    const [file, ...rest] = browser as [string, ...string[]];
    // split/join rather than replace(): a `$&` in the URL must stay as it is.
    const args = rest.some((word) => word.includes('%s')) ? rest.map((word) => word.split('%s').join(url)) : [...rest, url];
    return { file, args };
  }
  if (platform === 'darwin') return { file: 'open', args: [url] };
  // Not `cmd /c start`: that is a shell, and `&` in the URL would end the command.
  if (platform === 'win32') return { file: 'rundll32', args: ['url.dll,FileProtocolHandler', url] };
  return { file: 'xdg-open', args: [url] };
}

/**
 * Starts the browser on `url` and resolves once the opener has started: true,
 * or false when the URL is not http(s), no opener is configured or it could
 * not be started (not installed). Never throws, never waits for the opener to
 * exit (it is detached and may outlive plinth, as a browser does).
 */
export async function openBrowser(url: string, options: OpenBrowserOptions = {}): Promise<boolean> {
  const href = browsableUrl(url);
  if (href === undefined) return false;
  const command = browserCommand(href, options.env ?? process.env, options.platform ?? process.platform);
  if (command === undefined) return false;
  try {
    const { execa } = await import('execa');
    const subprocess = execa(command.file, [...command.args], {
      detached: true,
      stdio: 'ignore',
      cleanup: false,
      windowsHide: true,
      ...(options.env !== undefined && { env: options.env, extendEnv: false }),
    });
    // The outcome is not awaited: a failed spawn rejects it, which must not be unhandled.
    subprocess.catch(() => {});
    const started = await new Promise<boolean>((resolve) => {
      subprocess.once('spawn', () => resolve(true));
      subprocess.once('error', () => resolve(false));
    });
    subprocess.unref();
    return started;
  } catch {
    // execa refuses arguments it cannot pass before spawning.
    return false;
  }
}
