/**
 * Fetching a git repository at a ref, with the system `git` run through the
 * launcher service (the one door for child processes). Shallow when the ref
 * is a branch or tag (or none: the default branch); for a commit (the ref, or
 * a `sha` pin) that one commit is fetched when the server allows it (git's
 * protocol v2 does), else the whole history is cloned and the commit checked
 * out; the commit checked out
 * is read back and returned, so that the lock file pins what was installed.
 *
 * git is run without the user's or the system's configuration (no URL
 * rewrites, no hooks, no credential helpers, no prompts) and never recurses
 * into submodules: the repository's content is data until approved.
 */
import { rm } from 'node:fs/promises';
import { type LaunchRunRequestInput, type Launcher, PlinthError, safeLine } from 'plinth/sdk';
import type { HostTokens } from './host-tokens.js';

/** What a clone needs. */
export interface GitOptions {
  readonly launcher: () => Promise<Launcher>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Tokens per host: an http(s) URL's host gets its own as an extra header (host-tokens.ts). */
  readonly tokens?: HostTokens;
}

/** A commit id: 40 hex digits (sha1) or 64 (sha256 repositories). */
export const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * Refuses a source URL that carries a password or token (`https://user:token@host/…`): it would be
 * written to the lock file and shown in every message about the source. Private sources get their
 * own credentials later (per host, never in the URL); an SSH URL is the way until then.
 * @throws PlinthError `PLN_E_MARKET_SOURCE`, with the URL's password masked.
 */
export function refuseCredentials(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return; // scp-like `git@host:owner/repo`: no password there.
  }
  if (parsed.password === '' && !(parsed.username !== '' && parsed.protocol.startsWith('http'))) return;
  parsed.password = parsed.password === '' ? '' : '***';
  if (parsed.protocol.startsWith('http')) parsed.username = '***';
  throw new PlinthError('PLN_E_MARKET_SOURCE', `the source URL ${safeLine(parsed.href)} carries credentials: plinth keeps a source's URL in the lock file and shows it in messages, so it does not take one with a password or token in it`, {
    hint: 'give the URL without credentials (a public repository), or an SSH URL (git@host:owner/repo.git) that your SSH agent can open',
    details: { step: 'resolve' },
  });
}

/** The config every git command runs with (before the subcommand). */
const SAFE_CONFIG = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'submodule.recurse=false', '-c', 'advice.detachedHead=false', '-c', 'credential.helper=', '-c', 'protocol.ext.allow=never'];

/**
 * Clones `url` into `dir` (which must not exist) at `ref` (a branch, tag or
 * commit; none: the default branch), checks out `sha` when given (it must be
 * reachable), and returns the commit checked out.
 * @throws PlinthError `PLN_E_MARKET_GIT` naming the step and git's last words.
 */
export async function cloneAt(url: string, dir: string, ref: string | undefined, sha: string | undefined, options: GitOptions): Promise<string> {
  refuseCredentials(url);
  if (ref !== undefined && (ref.startsWith('-') || /[\s\\]|\.\.|[\x00-\x1f]/.test(ref))) {
    throw new PlinthError('PLN_E_MARKET_SOURCE', `"${safeLine(ref)}" is not a git ref`, { hint: 'give a branch, a tag or a commit id', details: { step: 'resolve', ref } });
  }
  if (sha !== undefined && !COMMIT.test(sha)) {
    throw new PlinthError('PLN_E_MARKET_SOURCE', `"${safeLine(sha)}" is not a full commit id (40 hex digits)`, { hint: 'pin the full commit id that `git rev-parse HEAD` prints', details: { step: 'resolve', sha } });
  }
  const byCommit = ref !== undefined && COMMIT.test(ref);
  const pinned = sha ?? (byCommit ? ref : undefined);
  if (pinned === undefined) {
    // A branch, a tag, or the default branch: one commit is enough.
    await git(['clone', '--quiet', '--depth', '1', '--no-tags', '--single-branch', ...(ref ? ['--branch', ref] : []), '--', url, dir], undefined, url, options);
  } else if (!(await fetchCommit(url, dir, pinned, options))) {
    // The server does not hand out a commit by its id (protocol v0, or a config that forbids it): the whole history, then the commit.
    await git(['clone', '--quiet', '--no-checkout', ...(ref && !byCommit ? ['--branch', ref] : []), '--', url, dir], undefined, url, options);
    await git(['checkout', '--quiet', '--detach', pinned], dir, url, options);
  }
  const head = (await git(['rev-parse', 'HEAD'], dir, url, options)).trim();
  if (pinned !== undefined && head !== pinned) {
    throw new PlinthError('PLN_E_MARKET_GIT', `git: ${safeLine(url)} checked out ${head}, not the pinned commit ${pinned}`, { hint: 'nothing was installed; check the pinned sha', details: { step: 'download', url, commit: head, sha: pinned } });
  }
  return head;
}

/**
 * Fetches only `commit` (depth 1) into a new repository at `dir`, as servers speaking git's protocol v2
 * allow; false (and `dir` removed) when the server refuses it, so that the caller clones instead.
 */
async function fetchCommit(url: string, dir: string, commit: string, options: GitOptions): Promise<boolean> {
  try {
    await git(['init', '--quiet', '--', dir], undefined, url, options);
    await git(['fetch', '--quiet', '--depth', '1', '--no-tags', '--', url, commit], dir, url, options);
    await git(['checkout', '--quiet', '--detach', 'FETCH_HEAD'], dir, url, options);
    return true;
  } catch (error) {
    if (options.signal?.aborted) throw error;
    await rm(dir, { recursive: true, force: true });
    return false;
  }
}

/** The branches and tags of a remote (`git ls-remote`), each with its commit (an annotated tag's peeled). */
export interface RemoteRefs {
  /** The default branch's commit. */
  readonly head?: string;
  readonly heads: ReadonlyMap<string, string>;
  readonly tags: ReadonlyMap<string, string>;
}

/** Lists what `url` has (`git ls-remote`), through the launcher as a clone runs. */
export async function lsRemote(url: string, options: GitOptions): Promise<RemoteRefs> {
  const out = await git(['ls-remote', '--', url], undefined, url, options);
  const heads = new Map<string, string>();
  const tags = new Map<string, string>();
  let head: string | undefined;
  for (const line of out.split('\n')) {
    const [id, ref] = line.trim().split(/\s+/);
    if (!id || !ref || !COMMIT.test(id)) continue;
    if (ref === 'HEAD') head = id;
    else if (ref.startsWith('refs/heads/')) heads.set(ref.slice('refs/heads/'.length), id);
    else if (ref.startsWith('refs/tags/') && ref.endsWith('^{}')) tags.set(ref.slice('refs/tags/'.length, -3), id);
    else if (ref.startsWith('refs/tags/') && !tags.has(ref.slice('refs/tags/'.length))) tags.set(ref.slice('refs/tags/'.length), id);
  }
  return { ...(head && { head }), heads, tags };
}

/** What {@link probe} learnt of a commit. */
export interface Probe {
  readonly commit: string;
  /** Its committer date, ms since the epoch. */
  readonly date: number;
  /** Whether the recorded commit is an ancestor of it (a fast-forward), when one was given. */
  readonly descends?: boolean;
}

/**
 * Fetches `want` (a branch, a tag or a commit id) of `url` into a new repository at `dir` and tells its
 * commit and date; given `recorded`, the history is fetched too and whether `recorded` is an ancestor of
 * it said (a commit id the server will not hand out alone is looked for among all its branches and tags).
 */
export async function probe(url: string, dir: string, want: string, recorded: string | undefined, options: GitOptions): Promise<Probe> {
  await git(['init', '--quiet', '--', dir], undefined, url, options);
  try {
    await git(['fetch', '--quiet', '--no-tags', ...(recorded === undefined ? ['--depth', '1'] : []), '--', url, want], dir, url, options);
  } catch (error) {
    if (!COMMIT.test(want) || options.signal?.aborted) throw error;
    await git(['fetch', '--quiet', '--', url, '+refs/heads/*:refs/remotes/origin/*', '+refs/tags/*:refs/tags/*'], dir, url, options);
    await git(['update-ref', 'FETCH_HEAD', want], dir, url, options);
  }
  const commit = (await git(['rev-parse', 'FETCH_HEAD^{commit}'], dir, url, options)).trim();
  const date = Number((await git(['log', '-1', '--format=%ct', 'FETCH_HEAD'], dir, url, options)).trim()) * 1000;
  if (recorded === undefined) return { commit, date };
  const status = await gitExit(['merge-base', '--is-ancestor', recorded, commit], dir, url, options);
  return { commit, date, descends: status === 0 };
}

/** The committer date (ms) of HEAD in the checkout `dir`. */
export async function headDate(dir: string, options: GitOptions): Promise<number> {
  return Number((await git(['log', '-1', '--format=%ct', 'HEAD'], dir, dir, options)).trim()) * 1000;
}

/** Runs `git <args>` and gives its exit code (for the commands that answer with it). */
async function gitExit(args: readonly string[], cwd: string, url: string, options: GitOptions): Promise<number | null> {
  const launcher = await options.launcher();
  const result = await launcher.run(gitRequest(args, cwd, url, options), options.signal ? { signal: options.signal } : {});
  return result.exitCode;
}

/** One git command as the launcher runs it. */
function gitRequest(args: readonly string[], cwd: string | undefined, url: string, options: GitOptions): LaunchRunRequestInput {
  const token = options.tokens?.for(url);
  // The token reaches git through its environment (never its arguments, which a process list shows), for this URL's origin
  // only; a redirect is not followed, so that it cannot lead the header to another host.
  const auth: Record<string, string> = token === undefined ? {} : { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: `http.${new URL(url).origin}/.extraHeader`, GIT_CONFIG_VALUE_0: `Authorization: Bearer ${token}`, GIT_CONFIG_KEY_1: 'http.followRedirects', GIT_CONFIG_VALUE_1: 'false' };
  return {
    owner: 'marketplace',
    purpose: `git ${args[0]} of ${url}`,
    program: 'git',
    args: [...SAFE_CONFIG, ...args],
    ...(cwd !== undefined && { cwd }),
    // No prompt of any kind (ssh included: BatchMode), none of the user's or the system's git configuration;
    // the user's SSH agent, so that an SSH URL of a private repository opens as it does for git itself.
    passEnv: ['SSH_AUTH_SOCK'],
    env: { GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_ASKPASS: '', SSH_ASKPASS: '', GIT_SSH_COMMAND: 'ssh -o BatchMode=yes', GIT_LFS_SKIP_SMUDGE: '1', ...auth },
    timeoutMs: options.timeoutMs,
    stdin: 'ignore',
  };
}

/** Runs `git <args>` in `cwd` through the launcher; its stdout, or `PLN_E_MARKET_GIT`. */
async function git(args: readonly string[], cwd: string | undefined, url: string, options: GitOptions): Promise<string> {
  const launcher = await options.launcher();
  const result = await launcher.run(
    gitRequest(args, cwd, url, options),
    options.signal ? { signal: options.signal } : {},
  ).catch((error: unknown) => {
    throw new PlinthError('PLN_E_MARKET_GIT', `git could not be started to fetch ${safeLine(url)}: ${safeLine((error as Error).message ?? String(error))}`, {
      cause: error,
      hint: 'install git (plinth runs the system git to fetch git sources), then run the command again',
      details: { step: 'download', url },
    });
  });
  if (result.exitCode !== 0) {
    const why = result.cancelled ? 'interrupted' : result.timedOut ? `timed out after ${Math.round(options.timeoutMs / 1000)} s` : `exit ${result.exitCode ?? result.signal ?? '?'}`;
    const said = safeLine(result.stderr.toString('utf8').trim().split('\n').slice(-3).join(' '));
    throw new PlinthError('PLN_E_MARKET_GIT', `git ${args[0]} of ${safeLine(url)} failed (${why})${said ? `: ${said}` : ''}`, {
      hint: 'nothing was installed; check the URL and the ref (`git ls-remote <url>` lists them), and that the repository is reachable',
      details: { step: 'download', url, command: args[0] },
    });
  }
  return result.stdout.toString('utf8');
}
