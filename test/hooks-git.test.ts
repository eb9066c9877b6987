/**
 * `git_commit` through a real git repository: the installed commit-msg hook
 * runs a stand-in for plinth (a script that records its arguments and exits
 * 0 or 5), and the commit goes through or is stopped accordingly. The
 * context builder is run on real staged files with hostile names.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isPlinthError } from 'plinth/sdk';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GIT_HOOK_MARKER, gitCommitContext, installGitHook, uninstallGitHook } from '../plugins/hooks/git.js';
import { createLauncher } from '../plugins/launcher/index.js';

/** Every child these tests start goes through a launcher, as in plinth. */
const launcher = createLauncher();

let root: string;
let repo: string;
let fake: { dir: string; script: string; command: string[] };
const savedEnv = { ...process.env };

beforeAll(async () => {
  // Keep the machine's git configuration (hooksPath, templates, signing) out of the tests.
  const config = path.join(os.tmpdir(), `plinth-gitconfig-${process.pid}`);
  await writeFile(config, '[user]\n\tname = Plinth Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n');
  Object.assign(process.env, { GIT_CONFIG_GLOBAL: config, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' });
});
afterAll(() => {
  for (const key of ['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_TERMINAL_PROMPT']) {
    if (savedEnv[key] === undefined) delete process.env[key];
    else process.env[key] = savedEnv[key];
  }
});

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'plinth-git-'));
  repo = path.join(root, 'repo');
  await mkdir(repo);
  git(['init', '-q'], repo);
  // The stand-in for plinth lives in a folder whose name a shell would trip on.
  const dir = path.join(root, `it's a "plinth" $(dir)`);
  await mkdir(dir);
  const script = path.join(dir, 'fake-plinth.mjs');
  await writeFile(
    script,
    `import { appendFileSync, readFileSync } from 'node:fs';
const dir = ${JSON.stringify(dir)};
const argv = process.argv.slice(2);
const msgFile = argv[argv.indexOf('--git-commit-msg') + 1];
appendFileSync(dir + '/calls.jsonl', JSON.stringify({ argv, cwd: process.cwd(), message: readFileSync(msgFile, 'utf8') }) + '\\n');
if (process.exitCode = Number(readFileSync(dir + '/exit-code', 'utf8'))) console.error('fake plinth: blocked by test');
`,
  );
  await writeFile(path.join(dir, 'exit-code'), '0');
  fake = { dir, script, command: [process.execPath, script] };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function git(args: string[], cwd: string): { status: number; stdout: string; stderr: string } {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

async function calls(): Promise<Array<{ argv: string[]; cwd: string; message: string }>> {
  const text = await readFile(path.join(fake.dir, 'calls.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { argv: string[]; cwd: string; message: string });
}

async function rejection(promise: Promise<unknown>): Promise<{ code: string; hint?: string | undefined }> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPlinthError(error)) throw new Error(`expected a PlinthError, got ${String(error)}`);
  return error;
}

const commitCount = (): number => Number(git(['rev-list', '--count', '--all'], repo).stdout.trim() || '0');

describe('installGitHook', () => {
  it('installs an executable commit-msg hook that lets the commit through when plinth allows', async () => {
    const installed = await installGitHook({ launcher, workspace: repo, plinthCommand: fake.command });
    expect(installed.replaced).toBe(false);
    expect(installed.path).toBe(path.join(await realRepo(), '.git', 'hooks', 'commit-msg'));
    expect(installed.message).toContain('commit-msg hook rather than pre-commit');
    expect((await stat(installed.path)).mode & 0o111).not.toBe(0);
    expect(await readFile(installed.path, 'utf8')).toContain(GIT_HOOK_MARKER);

    await writeFile(path.join(repo, 'a.txt'), 'a');
    git(['add', 'a.txt'], repo);
    const commit = git(['commit', '-q', '-m', 'first "quoted" $(touch pwned) message'], repo);
    expect(commit.stderr).toBe('');
    expect(commit.status).toBe(0);
    expect(commitCount()).toBe(1);

    const [call] = await calls();
    expect(call!.argv.slice(0, 6)).toEqual(['--workspace', await realRepo(), 'hooks', 'run', 'git_commit', '--git-commit-msg']);
    expect(path.isAbsolute(call!.argv[6]!)).toBe(true);
    expect(call!.message).toContain('first "quoted" $(touch pwned) message');
    await expect(stat(path.join(repo, 'pwned'))).rejects.toThrow();
  });

  it('stops the commit when plinth exits 5 (blocked), and when plinth fails', async () => {
    await installGitHook({ launcher, workspace: repo, plinthCommand: fake.command });
    await writeFile(path.join(repo, 'a.txt'), 'a');
    git(['add', 'a.txt'], repo);

    await writeFile(path.join(fake.dir, 'exit-code'), '5');
    const blocked = git(['commit', '-q', '-m', 'nope'], repo);
    expect(blocked.status).not.toBe(0);
    expect(blocked.stderr).toContain('blocked this commit');
    expect(commitCount()).toBe(0);

    await writeFile(path.join(fake.dir, 'exit-code'), '1');
    const failed = git(['commit', '-q', '-m', 'nope'], repo);
    expect(failed.status).not.toBe(0);
    expect(failed.stderr).toContain('could not run');
    expect(commitCount()).toBe(0);

    await writeFile(path.join(fake.dir, 'exit-code'), '0');
    expect(git(['commit', '-q', '-m', 'yes'], repo).status).toBe(0);
    expect(commitCount()).toBe(1);
    expect((await calls()).length).toBe(3);
  });

  it('replaces its own earlier hook and refuses a foreign one, leaving it untouched', async () => {
    await installGitHook({ launcher, workspace: repo, plinthCommand: fake.command });
    const again = await installGitHook({ launcher, workspace: repo, plinthCommand: [...fake.command, '--home', '/somewhere'] });
    expect(again.replaced).toBe(true);
    expect(await readFile(again.path, 'utf8')).toContain("'--home' '/somewhere'");

    const foreign = '#!/bin/sh\necho mine\n';
    await writeFile(again.path, foreign);
    const error = await rejection(installGitHook({ launcher, workspace: repo, plinthCommand: fake.command }));
    expect(error.code).toBe('PLN_E_GIT_HOOK_EXISTS');
    expect(error.hint).toContain('hooks run git_commit --git-commit-msg "$1"');
    expect(await readFile(again.path, 'utf8')).toBe(foreign);

    expect(await uninstallGitHook({ launcher, workspace: repo })).toEqual({ path: again.path, removed: false });
    await rm(again.path);
    await installGitHook({ launcher, workspace: repo, plinthCommand: fake.command });
    expect(await uninstallGitHook({ launcher, workspace: repo })).toEqual({ path: again.path, removed: true });
    await expect(stat(again.path)).rejects.toThrow();
  });

  it('refuses a folder that is not a git repository', async () => {
    const plain = path.join(root, 'plain');
    await mkdir(plain);
    expect((await rejection(installGitHook({ launcher, workspace: plain, plinthCommand: fake.command }))).code).toBe('PLN_E_GIT_NOT_A_REPO');
    expect((await rejection(installGitHook({ launcher, workspace: path.join(root, 'missing'), plinthCommand: fake.command }))).code).toBe('PLN_E_GIT_NOT_A_REPO');
    expect((await rejection(gitCommitContext({ launcher, workspace: plain, messageFile: 'x' }))).code).toBe('PLN_E_GIT_NOT_A_REPO');
  });

  it('installs where core.hooksPath points, and passes a sub-folder workspace relative to the top', async () => {
    git(['config', 'core.hooksPath', '.githooks'], repo);
    const sub = path.join(repo, 'packages', 'app');
    await mkdir(sub, { recursive: true });
    const installed = await installGitHook({ launcher, workspace: sub, plinthCommand: fake.command });
    expect(installed.path).toBe(path.join(await realRepo(), '.githooks', 'commit-msg'));
    await writeFile(path.join(sub, 'x.txt'), 'x');
    git(['add', '.'], repo);
    expect(git(['commit', '-q', '-m', 'sub'], repo).status).toBe(0);
    const [call] = await calls();
    expect(call!.argv[1]).toBe(path.join(await realRepo(), 'packages', 'app'));
  });
});

describe('gitCommitContext', () => {
  it('gathers staged files (hostile names included), branch and message without a shell', async () => {
    const names = ['$(touch pwned).ts', 'a "quoted" file.ts', "it's.ts", 'new\nline.ts', 'ünï côdé.ts', 'dir/-rf.ts'];
    await mkdir(path.join(repo, 'dir'));
    for (const name of names) await writeFile(path.join(repo, name), name);
    await writeFile(path.join(repo, 'unstaged.ts'), 'no');
    git(['add', '--', ...names], repo);
    const messageFile = path.join(root, 'COMMIT_EDITMSG');
    await writeFile(
      messageFile,
      'Fix "things"; $(rm -rf /)\n\nBody line\n# Please enter the commit message\n# On branch main\n# ------------------------ >8 ------------------------\ndiff --git a/x b/x\n',
    );

    const context = await gitCommitContext({ launcher, workspace: repo, messageFile });
    expect([...context.files].sort()).toEqual([...names].sort());
    expect(context.message).toBe('Fix "things"; $(rm -rf /)\n\nBody line');
    expect(context.branch).toBe('main');
    await expect(stat(path.join(repo, 'pwned'))).rejects.toThrow();
  });

  it('gives paths relative to a sub-folder workspace, a relative message file against cwd, and HEAD when detached', async () => {
    await mkdir(path.join(repo, 'app'));
    await writeFile(path.join(repo, 'app', 'in.ts'), '1');
    await writeFile(path.join(repo, 'top.ts'), '1');
    git(['add', '.'], repo);
    expect(git(['commit', '-q', '--no-verify', '-m', 'one'], repo).status).toBe(0);
    git(['checkout', '-q', '--detach'], repo);
    await writeFile(path.join(repo, 'app', 'in.ts'), '2');
    await writeFile(path.join(repo, 'top.ts'), '2');
    git(['add', '.'], repo);
    await writeFile(path.join(root, 'msg'), 'two\n');

    const context = await gitCommitContext({ launcher, workspace: path.join(repo, 'app'), messageFile: 'msg', cwd: root });
    expect(context).toEqual({ files: ['in.ts', '../top.ts'], message: 'two', branch: 'HEAD' });
  });
});

describe('git\'s environment', () => {
  it('is the launcher\'s allowlist plus GIT_*, not plinth\'s whole environment', async () => {
    const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
    const bin = await mkdtemp(path.join(root, 'bin-'));
    const dump = path.join(root, 'git-env.json');
    // A git in front of the real one that writes down the environment it was given.
    await writeFile(path.join(bin, 'git'), `#!${process.execPath}\nrequire('node:fs').writeFileSync(${JSON.stringify(dump)}, JSON.stringify(process.env));\nconst r = require('node:child_process').spawnSync(${JSON.stringify(realGit)}, process.argv.slice(2), { stdio: 'inherit' });\nprocess.exit(r.status ?? 1);\n`, { mode: 0o755 });
    const saved = { PATH: process.env.PATH, secret: process.env.PLINTH_TEST_GIT_SECRET };
    process.env.PATH = `${bin}${path.delimiter}${saved.PATH ?? ''}`;
    process.env.PLINTH_TEST_GIT_SECRET = 'sk-do-not-leak';
    try {
      await writeFile(path.join(root, 'msg-env'), 'env\n');
      await gitCommitContext({ launcher, workspace: repo, messageFile: path.join(root, 'msg-env') });
      const env = JSON.parse(await readFile(dump, 'utf8')) as Record<string, string>;
      expect(env.PLINTH_TEST_GIT_SECRET).toBeUndefined();
      expect(env.PATH).toBe(process.env.PATH);
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.secret === undefined) delete process.env.PLINTH_TEST_GIT_SECRET;
    }
  });
});

async function realRepo(): Promise<string> {
  return git(['rev-parse', '--show-toplevel'], repo).stdout.trim();
}
