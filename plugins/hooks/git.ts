/**
 * `git_commit`: `plinth hooks install-git` installs a git `commit-msg` hook
 * that fires the event for every commit and stops the commit when the
 * decision blocks.
 *
 * Why `commit-msg` and not `pre-commit`: only `commit-msg` is given the commit
 * message (git passes the file holding it as `$1`); the staged files and the
 * branch are as available there as in `pre-commit`, and a non-zero exit still
 * stops the commit.
 *
 * How the context is built: the installed script hands plinth only the path of
 * the message file — `plinth --workspace <ws> hooks run git_commit
 * --git-commit-msg <file>` — and plinth gathers the rest itself
 * ({@link gitCommitContext}: `git diff --cached --name-only -z`, `git
 * symbolic-ref`, the message through `git stripspace`), running git without a
 * shell. No file name or message text ever passes through the shell script or
 * a temporary JSON file, so neither can inject anything; it is also one plinth
 * process per commit rather than two. git runs through the `launcher`
 * service: the launcher's allowlisted environment plus git's own variables
 * (`GIT_*`: `GIT_INDEX_FILE` for `git commit <paths>`, so the files are those
 * of the commit being made), never the whole environment.
 */
import { chmod, lstat, mkdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { EXIT, PlinthError, isPlinthError, type Launcher } from 'plinth/sdk';

/** The line that marks a `commit-msg` hook as plinth's own (replaced on reinstall; anything else is refused). */
export const GIT_HOOK_MARKER = '# plinth-managed commit-msg hook';

/** Exit code of `plinth hooks run` when the decision blocks. */
export const BLOCKED_EXIT_CODE: number = EXIT.BLOCKED;

/** Where git starts: the `launcher` service. */
export interface GitRunner {
  readonly launcher: Launcher;
  /** Aborting it kills a git still running (the hooks plugin's teardown). */
  readonly signal?: AbortSignal;
}

export interface InstallGitHookOptions extends GitRunner {
  /** The workspace: a git work tree or a folder inside one. */
  readonly workspace: string;
  /** How the hook runs plinth, e.g. `[process.execPath, '/abs/dist/cli/bin.js']`, global options appended as wanted. */
  readonly plinthCommand: readonly string[];
}

export interface GitHookInstallation {
  /** The hook file written. */
  readonly path: string;
  /** An earlier plinth hook was replaced. */
  readonly replaced: boolean;
  /** What to print. */
  readonly message: string;
}

/** The `git_commit` context (hook protocol): staged files (relative to the workspace, `/` separators), message, branch. */
export interface GitCommitContext {
  files: string[];
  message: string;
  /** The branch name; `HEAD` when detached. */
  branch: string;
}

/**
 * Installs (or replaces plinth's earlier) `commit-msg` hook. Throws
 * `PLN_E_GIT_NOT_A_REPO` outside a work tree, `PLN_E_GIT_UNAVAILABLE` without
 * git, and `PLN_E_GIT_HOOK_EXISTS` when another `commit-msg` hook is there.
 */
export async function installGitHook(options: InstallGitHookOptions): Promise<GitHookInstallation> {
  if (options.plinthCommand.length === 0) throw new TypeError('plinthCommand must name at least the program to run');
  const workspace = await realpath(resolve(options.workspace)).catch(() => resolve(options.workspace));
  const top = await topLevel(options, workspace);
  const hooksDir = resolve(workspace, (await git(options, ['rev-parse', '--git-path', 'hooks'], workspace)).stdout.trim());
  const file = join(hooksDir, 'commit-msg');
  const script = gitHookScript({ plinthCommand: options.plinthCommand, top, workspace });

  const existing = await lstat(file).catch(() => undefined);
  let replaced = false;
  if (existing) {
    const content = existing.isFile() || existing.isSymbolicLink() ? await readFile(file, 'utf8').catch(() => '') : '';
    if (!content.includes(GIT_HOOK_MARKER)) {
      const line = `${commandLine(options.plinthCommand, shQuote(workspace), '"$1"')} || exit 1`;
      throw new PlinthError('PLN_E_GIT_HOOK_EXISTS', `${file} already exists and was not installed by plinth; it is left untouched`, {
        hint: `move it aside (e.g. to commit-msg.local) and run \`plinth hooks install-git\` again, or run plinth from it by adding this line: ${line}`,
        details: { path: file, line },
      });
    }
    replaced = true;
  }
  await mkdir(hooksDir, { recursive: true });
  const temporary = `${file}.plinth-${process.pid}-${Date.now()}`;
  try {
    await writeFile(temporary, script, { mode: 0o755 });
    await chmod(temporary, 0o755);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  const message =
    `${replaced ? 'updated' : 'installed'} ${file}: every git commit now fires git_commit, and a blocking decision stops the commit. ` +
    'It is a commit-msg hook rather than pre-commit because only commit-msg is given the commit message. ' +
    'Skip it for one commit with `git commit --no-verify`.';
  return { path: file, replaced, message };
}

/** Removes plinth's `commit-msg` hook; another hook there is left alone (`removed: false`). */
export async function uninstallGitHook(options: GitRunner & { readonly workspace: string }): Promise<{ path: string; removed: boolean }> {
  const workspace = resolve(options.workspace);
  await topLevel(options, workspace);
  const file = join(resolve(workspace, (await git(options, ['rev-parse', '--git-path', 'hooks'], workspace)).stdout.trim()), 'commit-msg');
  const content = await readFile(file, 'utf8').catch(() => '');
  if (!content.includes(GIT_HOOK_MARKER)) return { path: file, removed: false };
  await rm(file, { force: true });
  return { path: file, removed: true };
}

/**
 * The context of the commit being made, for `hooks run git_commit
 * --git-commit-msg <file>`: run inside the commit-msg hook (git's environment
 * inherited). `messageFile` is resolved against `cwd` (default the process's).
 */
export async function gitCommitContext(options: GitRunner & { readonly workspace: string; readonly messageFile: string; readonly cwd?: string }): Promise<GitCommitContext> {
  const workspace = await realpath(resolve(options.workspace)).catch(() => resolve(options.workspace));
  const top = await topLevel(options, workspace);
  const messageFile = resolve(options.cwd ?? process.cwd(), options.messageFile);

  const [staged, branch, raw] = await Promise.all([
    git(options, ['diff', '--cached', '--name-only', '--no-renames', '-z'], top),
    git(options, ['symbolic-ref', '--short', '-q', 'HEAD'], top, { allowFailure: true }),
    readFile(messageFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new PlinthError('PLN_E_GIT_FAILED', `cannot read the commit message file ${messageFile}: ${error.code ?? error.message}`, {
        hint: 'run this from the commit-msg hook, which passes the message file git wrote',
        details: { path: messageFile },
      });
    }),
  ]);
  // `git commit -v` appends the diff below a scissors line; git drops it, and so do we.
  const scissors = raw.search(/^\S ------------------------ >8 ------------------------$/m);
  const message = (await git(options, ['stripspace', '--strip-comments'], top, { input: scissors === -1 ? raw : raw.slice(0, scissors) })).stdout.replace(/\n$/, '');
  const files = staged.stdout
    .split('\0')
    .filter((f) => f !== '')
    .map((f) => relative(workspace, join(top, f)).split(sep).join('/'));
  return { files, message, branch: branch.code === 0 ? branch.stdout.trim() : 'HEAD' };
}

/** The `commit-msg` script: POSIX sh, every path single-quoted, only `$1` (a path git chose) passed on. */
export function gitHookScript(options: { readonly plinthCommand: readonly string[]; readonly top: string; readonly workspace: string }): string {
  return `#!/bin/sh
${GIT_HOOK_MARKER}: written by \`plinth hooks install-git\`; install again rather than edit.
#
# Fires plinth's git_commit event for this commit and stops the commit when it is
# blocked. A commit-msg hook rather than pre-commit, because only commit-msg is
# given the message. Only the message file's path is passed on: plinth reads the
# message, the staged files and the branch itself, so no file name or message
# text is ever interpreted by this shell. Skip once with: git commit --no-verify
top=$(git rev-parse --show-toplevel) || exit 1
case "$1" in
  /*) msg=$1 ;;
  *) msg=$PWD/$1 ;;
esac
${commandLine(options.plinthCommand, workspaceWord(options.top, options.workspace), '"$msg"')}
status=$?
[ "$status" -eq 0 ] && exit 0
if [ "$status" -eq ${BLOCKED_EXIT_CODE} ]; then
  echo "plinth: a git_commit hook blocked this commit (its message is above)." >&2
else
  echo "plinth: the git_commit hooks could not run (plinth exited $status), so the commit is stopped. Skip them once with: git commit --no-verify" >&2
fi
exit 1
`;
}

/** `<plinth> --workspace <ws> hooks run git_commit --git-commit-msg <msg>`, each word quoted for sh. */
function commandLine(plinthCommand: readonly string[], workspace: string, messageArg: string): string {
  return `${plinthCommand.map(shQuote).join(' ')} --workspace ${workspace} hooks run git_commit --git-commit-msg ${messageArg}`;
}

/** The workspace as the hook finds it: relative to the work tree's top, so that moving the repository keeps it working. */
function workspaceWord(top: string, workspace: string): string {
  const rel = relative(top, workspace);
  if (rel === '') return '"$top"';
  if (rel.startsWith('..') || isAbsolute(rel)) return shQuote(workspace);
  return `"$top"/${shQuote(rel.split(sep).join('/'))}`;
}

/** Single-quotes a word for sh: nothing inside is expanded. */
export function shQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

async function topLevel(runner: GitRunner, workspace: string): Promise<string> {
  const info = await lstat(workspace).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new PlinthError('PLN_E_GIT_NOT_A_REPO', `${workspace} is not a folder, so not a git repository`, {
      hint: 'run from a git work tree, or pass --workspace <folder of the repository>',
      details: { workspace },
    });
  }
  const result = await git(runner, ['rev-parse', '--show-toplevel'], workspace, { allowFailure: true });
  if (result.code !== 0) {
    throw new PlinthError('PLN_E_GIT_NOT_A_REPO', `${workspace} is not inside a git work tree: ${result.stderr.trim() || `git exited ${result.code}`}`, {
      hint: 'run `git init` there first, or pass --workspace <folder of the repository>',
      details: { workspace },
    });
  }
  return realpath(result.stdout.trim()).catch(() => result.stdout.trim());
}

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** git's own variables (the index, the repository, the author of the commit being made) and its configuration folder. */
const GIT_ENV = ['GIT_*', 'XDG_CONFIG_HOME'];

/** Runs git without a shell; throws `PLN_E_GIT_UNAVAILABLE` when git cannot start, `PLN_E_GIT_FAILED` on a non-zero exit unless allowed. */
async function git(runner: GitRunner, args: readonly string[], cwd: string, options: { input?: string; allowFailure?: boolean } = {}): Promise<GitResult> {
  const unavailable = (cause: unknown, why: string): PlinthError =>
    new PlinthError('PLN_E_GIT_UNAVAILABLE', `cannot run git: ${why}`, { plugin: 'hooks', hint: 'install git and make sure it is on PATH', cause });
  let run;
  try {
    run = await runner.launcher.run(
      { owner: 'hooks', purpose: 'git', program: 'git', args: [...args], cwd, passEnv: GIT_ENV, input: options.input ?? '', maxOutputBytes: 64 * 1024 * 1024 },
      { ...(runner.signal && { signal: runner.signal }) },
    );
  } catch (error) {
    if (isPlinthError(error) && error.code === 'PLN_E_LAUNCH_NOT_FOUND') throw unavailable(error, 'it was not found on PATH');
    throw error;
  }
  if (run.spawnError !== undefined) throw unavailable(undefined, run.spawnError);
  const result = { code: run.exitCode ?? 1, stdout: run.stdout.toString('utf8'), stderr: run.stderr.toString('utf8') };
  if (result.code !== 0 && !options.allowFailure) {
    throw new PlinthError('PLN_E_GIT_FAILED', `git ${args.join(' ')} failed in ${cwd}: ${result.stderr.trim() || `exit ${result.code}`}`, {
      hint: 'check that the folder is a git work tree and that git works there (`git status`)',
      details: { cwd, args: [...args] },
    });
  }
  return result;
}
