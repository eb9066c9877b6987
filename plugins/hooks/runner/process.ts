/**
 * One hook process, started through the `launcher` service: no shell,
 * arguments passed as given, the allowlisted environment plus the hook's
 * declared one, a process group of its own whose whole tree is killed when the
 * hook exits, on a kill and when the hooks plugin is torn down (its signal).
 * Its end is `ended`, which resolves once the process is gone and its pipes
 * are closed. The mechanisms are the launcher's; the policy (timeouts, limits,
 * the protocol) is the runner's.
 */
import type { Readable, Writable } from 'node:stream';
import { describeError, type Launcher, type PinnedFile, type Principal } from 'plinth/sdk';

/** What to run, after the whitelist: `file` is a real path. */
export interface Launch {
  readonly file: string;
  readonly args: readonly string[];
  /** `argv[0]` as the hook wrote its command (multi-call binaries look at it). */
  readonly argv0: string;
  readonly cwd: string;
  /** Names of host variables passed on top of the launcher's allowlist (the `env` setting). */
  readonly passEnv: readonly string[];
  /** plinth's own variables (`PLINTH_HOOK_*`), over a manifest hook's plugin settings. */
  readonly env: Readonly<Record<string, string>>;
  /** The names in `env` that plinth set itself (not the plugin's settings): a confined hook keeps them. */
  readonly ownEnv?: readonly string[];
  /** Names the hook in the launcher's trace. */
  readonly purpose: string;
  /** Whom the process acts for: the sandbox confines it with that principal's grants. */
  readonly actingFor?: Principal;
  /** What the hook's trust check approved: the launcher runs exactly these bytes (its approved copy). */
  readonly pinned?: readonly PinnedFile[];
}

export interface ProcessEnd {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Set when the process never started (ENOENT, EACCES, a missing cwd…). */
  readonly spawnError?: string;
}

export interface HookProcess {
  readonly pid: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** True once the process has exited (its pipes may still be draining). */
  readonly exited: boolean;
  /** Resolves once the process has exited (or never started) and its output pipes are closed. Never rejects. */
  readonly ended: Promise<ProcessEnd>;
  /** SIGKILL to the whole process tree; `ended` follows. */
  kill(): void;
  /** The launcher's reading of a confined child's failed exit (a path its sandbox hides), when it has one. */
  explainExit?(output: string): string | undefined;
}

/** Where processes start, and who they belong to. */
export interface ProcessOwner {
  readonly launcher: Launcher;
  /** The plugin named in the trace. */
  readonly owner: string;
  /** The owner's teardown: aborting it kills every hook process. */
  readonly signal?: AbortSignal;
}

export interface StartOptions {
  /** Written to stdin, which is then closed (spawn mode). Absent: stdin stays open for writes (persistent mode). */
  readonly input?: string;
  /** Told about processes killed for holding the hook's pipes after it exited. */
  readonly onEscapees?: (pids: readonly number[]) => void;
}

const ignore = (): void => {};

/** A process the launcher refused before starting it. */
function notStarted(error: unknown): HookProcess {
  return { pid: undefined, stdin: null, stdout: null, stderr: null, exited: true, ended: Promise.resolve({ exitCode: null, signal: null, spawnError: describeError(error) }), kill: ignore };
}

export function startProcess(owner: ProcessOwner, launch: Launch, options: StartOptions = {}): HookProcess {
  try {
    const child = owner.launcher.start(
      {
        owner: owner.owner,
        purpose: launch.purpose,
        program: launch.file,
        args: [...launch.args],
        argv0: launch.argv0,
        cwd: launch.cwd,
        passEnv: [...launch.passEnv],
        env: { ...launch.env },
        ...(launch.ownEnv !== undefined && { ownEnv: [...launch.ownEnv] }),
        ...(launch.actingFor !== undefined && { actingFor: launch.actingFor }),
        ...(launch.pinned !== undefined && { pinned: launch.pinned.map((pin) => ({ path: pin.path, sha256: pin.sha256 })) }),
      },
      { ...(owner.signal && { signal: owner.signal }), ...(options.onEscapees && { onEscapees: options.onEscapees }) },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    return child;
  } catch (error) {
    // A request the launcher refused (the program vanished since the check, the working directory too).
    return notStarted(error);
  }
}
