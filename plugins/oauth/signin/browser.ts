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
import type { Launcher } from 'plinth/sdk';

export type BrowserVerdict = { readonly canOpen: true } | { readonly canOpen: false; readonly reason: string };

/** The program and arguments that open a URL. */
export interface BrowserCommand {
  readonly file: string;
  readonly args: readonly string[];
}

export interface OpenBrowserOptions {
  /** Where the opener starts: the `launcher` service. */
  readonly launcher: Launcher;
  /** For `BROWSER` and the variables a graphical session needs; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
}

/** What an opener needs of the session, on top of the launcher's allowlist: the display, D-Bus, XDG folders, Windows' and macOS's own. */
const OPENER_ENV = /^(?:BROWSER|DISPLAY|WAYLAND_DISPLAY|DBUS_SESSION_BUS_ADDRESS|XDG_[A-Z_]+|SystemRoot|APPDATA|LOCALAPPDATA|USERPROFILE|__CF_USER_TEXT_ENCODING)$/;

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
export async function openBrowser(url: string, options: OpenBrowserOptions): Promise<boolean> {
  const href = browsableUrl(url);
  if (href === undefined) return false;
  const env = options.env ?? process.env;
  const command = browserCommand(href, env, options.platform ?? process.platform);
  if (command === undefined) return false;
  try {
    const child = options.launcher.start({
      owner: 'oauth',
      purpose: 'browser',
      program: command.file,
      args: [...command.args],
      // The URL carries the sign-in's state: kept out of the trace.
      secretArgs: true,
      env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => OPENER_ENV.test(entry[0]) && entry[1] !== undefined)),
      stdin: 'ignore',
      stdout: 'ignore',
      stderr: 'ignore',
      // Released: the browser outlives the sign-in, and plinth.
      detached: true,
    });
    return (await child.ended).spawnError === undefined;
  } catch {
    // Not found, or a request the launcher refused.
    return false;
  }
}
