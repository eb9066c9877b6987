/**
 * The `launcher` service: the one door through which plugins start child
 * processes (hook scripts, git, stdio MCP servers, the browser opener, the
 * keychain probe, a plugin's own commands through `ctx.exec`). It resolves the
 * program's real path, builds the environment from an allowlist plus what the
 * caller declares (never the host's whole environment), starts the child as
 * the leader of a process group of its own, kills the whole tree on timeout,
 * on close, when the owner is torn down and when the host exits, limits
 * captured output, and keeps a trace of what was started by whom.
 *
 * The builtin `launcher` plugin provides it; a deployment swaps it (a sandbox
 * that confines every child) with `"services": { "launcher": "<plugin>" }`.
 * Callers use only this interface.
 */
import type { Readable, Writable } from 'node:stream';
import { z } from 'zod';
import type { PlinthError } from '../errors.js';
import { type ConfinedSpawn, principalSchema } from './sandbox.js';

/**
 * Host variables every child gets when the host has them. A trailing `*`
 * matches a prefix (`LC_*`). Anything else must be declared by the caller:
 * by value (`env`) or by name (`passEnv`).
 */
export const BASE_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_*',
  'TZ',
  'TERM',
  'TMPDIR',
  'TEMP',
  'TMP',
  'SYSTEMROOT',
  'COMSPEC',
  'PATHEXT',
];

/** A host variable name, or a prefix ending in `*`. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'an environment variable name (a trailing * matches a prefix)');

/** What to start: the serialisable part of a launch, checked by the launcher. */
export const launchRequestSchema = z.object({
  /** The plugin the child belongs to (trace, teardown). `ctx.exec` fills it in. */
  owner: z.string().min(1),
  /** A program name looked up on the child's `PATH`, or a path (relative to `cwd`). */
  program: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** `argv[0]` as the child sees it (multi-call programs look at it); default: `program` as given. */
  argv0: z.string().optional(),
  /** Working directory; default: the host's. It must exist. */
  cwd: z.string().optional(),
  /** Variables set to these values, over the allowlist (a declared value wins). */
  env: z.record(z.string(), z.string()).default({}),
  /** Names of further host variables passed on (a trailing `*` matches a prefix), e.g. `GIT_*`. */
  passEnv: z.array(envName).default([]),
  /**
   * Names among `env` whose values plinth itself sets for the child (a hook's `PLINTH_HOOK_*`, the
   * `CLAUDE_PROJECT_DIR` a peer's hook reads), never a definition's: a confined child keeps them
   * without a grant, as it keeps `PLINTH_*` values.
   */
  ownEnv: z.array(z.string()).default([]),
  /** Program names are looked up on the child's `PATH` (the declared one, else the host's). */
  stdin: z.enum(['pipe', 'ignore']).default('pipe'),
  stdout: z.enum(['pipe', 'ignore']).default('pipe'),
  stderr: z.enum(['pipe', 'ignore']).default('pipe'),
  /** The whole tree is killed (SIGKILL) after this long. */
  timeoutMs: z.number().int().positive().optional(),
  /**
   * Released: the child is not killed with its owner, on close or at host exit
   * (a browser started by an opener must outlive the sign-in). Still traced.
   */
  detached: z.boolean().default(false),
  /** What the child is for, in the trace: `hook "lint"`, `MCP server "files"`. */
  purpose: z.string().optional(),
  /** Leave the arguments out of the trace (they may carry a secret); the program is still named. */
  secretArgs: z.boolean().default(false),
  /**
   * Whom the child acts for: the plugin that declared a hook or server, `settings:user` or
   * `settings:workspace` for those from settings, the calling plugin for `ctx.exec`. When a
   * `sandbox` service exists, the launch is decided and confined by it (sdk/contracts/sandbox.ts);
   * a refused launch starts nothing. Without `actingFor`, a plugin's own tooling (git, the
   * browser opener) runs as before.
   */
  actingFor: principalSchema.optional(),
  /**
   * Files whose content was approved (the trust verdict's `pinned`), by absolute path with their SHA-256.
   * The launcher copies each, checking it against its hash as it reads it, into a private folder that
   * mirrors their folders (other entries there are links to the originals), starts the program from that
   * copy where the program or an argument (`x.js`, `--flag=x.js`) names one of them, and refuses the
   * launch with `PLN_E_TRUST_CHANGED_AT_RUN` when one no longer holds what was approved.
   */
  pinned: z.array(z.object({ path: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/) })).default([]),
});

/** A launch request as written by a caller (defaults not yet applied). */
export type LaunchRequestInput = z.input<typeof launchRequestSchema>;
/** A launch request after the launcher's checks. */
export type LaunchRequest = z.output<typeof launchRequestSchema>;

/** A launch that runs to completion, its output captured. */
export const launchRunRequestSchema = launchRequestSchema.extend({
  /** Written to stdin, which is then closed. */
  input: z.string().optional(),
  /** Limit of captured stdout and of stderr, each; beyond it the tree is killed. Default 1 MiB. */
  maxOutputBytes: z.number().int().positive().default(1024 * 1024),
});
/** A {@link LaunchRunRequest} as written by a caller (defaults not yet applied). */
export type LaunchRunRequestInput = z.input<typeof launchRunRequestSchema>;
/** A launch that runs to completion, its output captured ({@link Launcher.run}), after the launcher's checks. */
export type LaunchRunRequest = z.output<typeof launchRunRequestSchema>;

/** What is not data: where the launcher reports back. */
export interface LaunchOptions {
  /** Aborting it kills the child's whole tree (an owner's `ctx.signal`, a request's cancellation). */
  readonly signal?: AbortSignal;
  /** Told about processes killed because they left the child's group yet held its output pipes. */
  readonly onEscapees?: (pids: readonly number[]) => void;
}

/** How a child ended. */
export interface ChildEnd {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Set when the process never started (ENOENT, EACCES, arguments the OS refused…). */
  readonly spawnError?: string;
  /** Set when the sandbox refused the launch (`actingFor`): the error says why and the fix; `spawnError` holds its message. */
  readonly refused?: PlinthError;
}

/** The graces of a polite stop, as the MCP stdio specification orders it. */
export interface ChildStopOptions {
  /** After stdin is closed: how long the child may take to exit by itself before SIGTERM. */
  readonly exitGraceMs: number;
  /** After SIGTERM to the tree: how long before SIGKILL. */
  readonly killGraceMs: number;
}

/** A started child process. */
export interface LaunchedChild {
  /** Undefined until the process has started: a confined launch (`actingFor`) starts once its sandbox is ready; see `spawned`. */
  readonly pid: number | undefined;
  /** Resolves with the pid once the process started, or undefined when it never did (then `ended` says why). Never rejects. */
  readonly spawned: Promise<number | undefined>;
  /** The real path that was started. */
  readonly file: string;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** True once the process has exited (its pipes may still be draining). */
  readonly exited: boolean;
  /** Resolves once the process exited (its group is killed then); before `ended` when something holds the pipes. */
  readonly exit: Promise<ChildEnd>;
  /** Resolves once the process is gone and its output pipes are closed. Never rejects. */
  readonly ended: Promise<ChildEnd>;
  /** SIGKILL to the whole tree at once; `ended` follows. */
  kill(): void;
  /** Closes stdin, waits `exitGraceMs`, SIGTERM to the tree, waits `killGraceMs`, SIGKILL; resolves once all is gone. */
  stop(options: ChildStopOptions): Promise<ChildEnd>;
  /**
   * For a child that ended early: a hint from what it wrote on stderr
   * (`output`) when it ran confined and failed on a path its sandbox does not
   * expose (the sandbox's {@link ConfinedSpawn.explain}); undefined otherwise,
   * and for every child that did not run confined.
   */
  explainExit?(output: string): string | undefined;
}

/** The result of {@link Launcher.run}. */
export interface LaunchRunResult extends ChildEnd {
  readonly pid: number | undefined;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  /** The tree was killed at `timeoutMs`. */
  readonly timedOut: boolean;
  /** The tree was killed because this stream passed `maxOutputBytes` (what came before is kept). */
  readonly tooLarge?: 'stdout' | 'stderr';
  /** The tree was killed because the signal was aborted. */
  readonly cancelled: boolean;
  /** A child that ran confined and exited with an error: what {@link LaunchedChild.explainExit} made of its stderr, when anything. */
  readonly hint?: string;
  readonly durationMs: number;
}

/** One line of the launcher's trace: what was started, by whom, and how it ended. Sensitive values are redacted. */
export interface LaunchTraceEntry {
  readonly id: number;
  /** The plugin that asked. */
  readonly owner: string;
  readonly purpose?: string;
  /** The real path started (or the program as asked, when it was not found). */
  readonly program: string;
  /** The arguments, shortened and redacted; `[hidden]` for `secretArgs`. */
  readonly args: string;
  readonly pid?: number;
  readonly startedAt: string;
  /** `running`, `exited`, `killed` (by plinth: timeout, close, teardown), `failed` (never started), `released` (detached). */
  readonly state: 'running' | 'exited' | 'killed' | 'failed' | 'released';
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  readonly durationMs?: number;
  /** Why it failed or was killed. */
  readonly reason?: string;
}

/**
 * The launcher service. `start` and `run` throw a PlinthError before anything
 * runs: `PLN_E_LAUNCH_INVALID` (the request does not fit the schema),
 * `PLN_E_LAUNCH_NOT_FOUND` (the program is not an executable file, nor on
 * `PATH`), `PLN_E_LAUNCH_CWD` (the working directory does not exist). A
 * failure the OS reports when spawning arrives as `spawnError`. A launch with
 * `actingFor`, when a `sandbox` service exists, is decided and confined by it
 * first: `run` then rejects with the sandbox's `PLN_E_SANDBOX_…` error when it
 * is refused, `start` returns at once and the refusal arrives as `refused`.
 */
export interface Launcher {
  /** Starts a child, its streams for the caller to read and write. */
  start(request: LaunchRequestInput, options?: LaunchOptions): LaunchedChild;
  /** Runs a child to its end, with `input` on stdin and stdout/stderr captured up to `maxOutputBytes`. */
  run(request: LaunchRunRequestInput, options?: LaunchOptions): Promise<LaunchRunResult>;
  /** The most recent launches, oldest first (bounded). */
  trace(): readonly LaunchTraceEntry[];
}

/** What a plugin's `ctx.exec` takes: a run request without `owner`, which is the calling plugin. */
export type ExecRequest = Omit<LaunchRunRequestInput, 'owner'>;

declare module '../index.js' {
  interface Services {
    /** The one door for child processes: see sdk/contracts/launcher.ts. */
    launcher: Launcher;
  }
}
