/**
 * Running the built `plinth` command in a test: a sandbox (a home and a
 * workspace of its own), an environment without the machine's plinth settings,
 * and the exit code with both output streams.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'vitest';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'dist', 'cli', 'bin.js');

/** Builds plinth when `dist/` is missing: `npm test` builds before vitest, a file run on its own from a clean tree does not. Call in `beforeAll` with a long time limit. */
export function ensureBuilt(): void {
  if (!existsSync(BIN)) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * The plinth source modules (`sdk/version.ts`, …) in the files these module URLs name, by file.
 * dist/ is bundled, so one chunk holds several modules: its linked source map lists them. A dist
 * file without a map holds no module code (an entry that only re-exports from chunks); files
 * outside the package, and node_modules, are left out.
 */
export function modulesByFile(urls: readonly string[]): Map<string, string[]> {
  const inPackage = urls.filter((url) => url.startsWith(pathToFileURL(ROOT).href) && !url.includes('/node_modules/'));
  return new Map(
    [...new Set(inPackage)].map((url) => {
      const file = fileURLToPath(url);
      if (!file.startsWith(join(ROOT, 'dist'))) return [file, [relative(ROOT, file)]];
      if (!existsSync(`${file}.map`)) return [file, []];
      const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
      return [file, map.sources.map((source) => relative(ROOT, resolve(dirname(file), source)))];
    }),
  );
}

/** {@link modulesByFile}, as one sorted list. */
export function sourceModules(urls: readonly string[]): string[] {
  return [...new Set([...modulesByFile(urls).values()].flat())].sort();
}

/** Generous for a slow shared machine, but bounded. */
const RUN_TIMEOUT_MS = 60_000;

export interface Sandbox {
  readonly base: string;
  readonly home: string;
  readonly workspace: string;
  /** `--home <home> --workspace <workspace>`. */
  readonly dirs: readonly string[];
  /** Writes the user's settings.json. */
  settings(value: Record<string, unknown>): Promise<void>;
  /** Removes every folder. */
  remove(): Promise<void>;
}

export async function sandbox(prefix = 'plinth-cli-'): Promise<Sandbox> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  return {
    base,
    home,
    workspace,
    dirs: ['--home', home, '--workspace', workspace],
    settings: (value) => writeFile(join(home, 'settings.json'), JSON.stringify(value, null, 2)),
    remove: () => rm(base, { recursive: true, force: true }),
  };
}

/**
 * The environment without the machine's plinth settings, git's variables or
 * vitest's, plus `extra`. `ci`: true sets `CI=1` (plinth never asks on a
 * terminal), false removes `CI`, undefined leaves it as it is.
 */
export function cleanEnv(extra: Record<string, string> = {}, options: { ci?: boolean } = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('PLINTH_') || key.startsWith('GIT_') || key === 'NODE_OPTIONS' || key.startsWith('VITEST')) continue;
    if (key === 'CI' && options.ci === false) continue;
    env[key] = value;
  }
  return { ...env, NO_COLOR: '1', ...(options.ci === true && { CI: '1' }), ...extra };
}

export interface Result {
  readonly code: number | null;
  readonly signal?: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly env?: Record<string, string>;
  /** Default: the system's temporary folder. */
  readonly cwd?: string;
  /** Node options placed before the script, e.g. `--import`. */
  readonly nodeArgs?: readonly string[];
  /** See {@link cleanEnv}. */
  readonly ci?: boolean;
}

/** Runs `node [nodeArgs] dist/cli/bin.js ...args` and resolves when it exits. */
export function plinth(args: readonly string[], options: RunOptions = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...(options.nodeArgs ?? []), BIN, ...args],
      { cwd: options.cwd ?? tmpdir(), env: cleanEnv(options.env, { ...(options.ci !== undefined && { ci: options.ci }) }), timeout: RUN_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const failure = error as (NodeJS.ErrnoException & { code?: number | string; signal?: NodeJS.Signals }) | null;
        resolve({ code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0, signal: failure?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** Where a command runs: `--home`/`--workspace` and the working folder. */
export type Place = Pick<Sandbox, 'dirs' | 'workspace'>;

/** Runs `plinth <args>` in the sandbox (from its workspace, with `CI=1`) and resolves when it exits. */
export function run(box: Place, args: readonly string[], env: Record<string, string> = {}): Promise<Result> {
  return plinth([...box.dirs, ...args], { cwd: box.workspace, env, ci: true });
}

/** Starts `plinth <args>` and hands back the child, for commands a test talks to while they run. */
export function start(box: Place, args: readonly string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [BIN, ...box.dirs, ...args], { cwd: box.workspace, env: cleanEnv(env, { ci: true }), stdio: ['pipe', 'pipe', 'pipe'] });
}

/** The exit code and both streams, for an assertion's message. */
export function describeRun(result: Result): string {
  return `exit ${result.code}${result.signal ? ` (${result.signal})` : ''}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
}

/** Asserts the exit code, showing the whole run when it differs. */
export function expectExit(result: Result, code: number): void {
  expect(result.code, describeRun(result)).toBe(code);
}

/** stdout parsed as JSON, or an error that shows the whole run. */
export function json<T = any>(result: Result): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON:\n${describeRun(result)}`);
  }
}
