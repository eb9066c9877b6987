/**
 * The hook runner: checks a hook against the whitelist and its script on disk,
 * then runs it in spawn mode (a process per run) or persistent mode (one
 * process per hook, a line per request), and turns however that ended into a
 * `RunResult`. Never throws.
 */
import { statSync } from 'node:fs';
import { encodeInput } from '../protocol.js';
import { scriptOf } from '../script.js';
import { type HookDefinition, type HookRunner, type PreflightFailure, type RunEnvironment, type RunInput, type RunResult, isPeerInput } from '../types.js';
import { peerRunResult } from '../dialects/output.js';
import { createCommandResolver } from './command.js';
import { hookEnvironment } from './environment.js';
import { type Outcome, cannotRunFix, hookLabel, toRunResult } from './outcome.js';
import { PersistentHook, type Reply } from './persistent.js';
import type { Launcher, PinnedFile, Principal } from 'plinth/sdk';
import { type HookProcess, type Launch, type ProcessOwner } from './process.js';
import { runOnce } from './spawn.js';

export { DEFAULT_ALLOWED_COMMANDS } from './command.js';

/** Default limit on what a hook may write to stdout, and to stderr. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

export interface RunnerOptions {
  /** Programs hooks may run: names looked up on PATH or absolute paths (default {@link DEFAULT_ALLOWED_COMMANDS}). */
  readonly allowedCommands: readonly string[];
  /** Limit on stdout (a persistent answer line) and on stderr, in bytes. */
  readonly maxOutputBytes: number;
  /** Names of host environment variables passed to hooks on top of the base allowlist. */
  readonly env: readonly string[];
  /** The workspace, passed to hooks as PLINTH_WORKSPACE. */
  readonly workspace: string;
  /** Told what no result carries: processes that misbehave between requests, escaped children killed, a bad whitelist entry. */
  readonly log?: { warn(msg: string): void };
  /** The `launcher` service (or how to get it, on the first run): every hook process starts through it. */
  readonly launcher: Launcher | (() => Promise<Launcher>);
  /** The plugin the processes belong to, in the launcher's trace (default `hooks`). */
  readonly owner?: string;
  /** The owner's teardown signal: aborting it kills every hook process. */
  readonly signal?: AbortSignal;
  /**
   * The declared settings of the plugin whose manifest declared a hook, as
   * variables (`kernel.settingsEnv`). Asked at every start, so a plugin
   * replaced with new settings gives its next run (and a new persistent
   * process) the new values. Hooks from settings and legacy files get none.
   */
  readonly settingsEnv?: (plugin: string) => Readonly<Record<string, string>>;
  /**
   * Whom a hook's process acts for (the plugin that declared it, or the settings
   * scope): the launcher hands it to the sandbox, which confines it. Asked at
   * every start, as `settingsEnv` is.
   */
  readonly principalOf?: (hook: HookDefinition) => Principal | undefined;
}

/** How long a successful `check` stands for the checks of the `run` after it (see `prechecked`). */
const PRECHECK_FRESH_MS = 100;

/** setTimeout's ceiling: a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const ignore = (): void => {};

const CLOSED: Reply = { outcome: { kind: 'cancelled', why: 'the hook runner is closed' }, stderrTail: '' };

const refused = (failure: 'not_allowed' | 'script_missing' | 'spawn_failed', detail: string): Reply => ({
  outcome: { kind: 'refused', failure, detail },
  stderrTail: '',
});

// The checks before each run are a `stat` or two, made synchronously: a metadata call costs a
// tenth of a round trip through the thread pool, and a persistent hook makes them at every event.

/** Each definition's script (see scriptOf): worked out once, definitions do not change. */
const scripts = new WeakMap<HookDefinition, { readonly path: string | undefined }>();

/** Whether the script a hook runs is missing (a path that exists, or none at all, is not). */
function missingScript(hook: HookDefinition): string | undefined {
  let known = scripts.get(hook);
  if (known === undefined) scripts.set(hook, (known = { path: scriptOf(hook) }));
  const script = known.path;
  if (script === undefined) return undefined;
  try {
    statSync(script);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? script : undefined;
  }
}

/** Whether `dir` is missing (or not a folder): a hook cannot start there. */
function missingFolder(dir: string): boolean {
  try {
    return !statSync(dir).isDirectory();
  } catch {
    return true;
  }
}

export function createRunner(options: RunnerOptions): HookRunner {
  const log = options.log;
  /** Where hook processes start; set by the first prepare(), which every start follows. */
  let owner: ProcessOwner | undefined;
  const ownerReady = async (): Promise<ProcessOwner> => {
    const launcher = typeof options.launcher === 'function' ? await options.launcher() : options.launcher;
    owner ??= { launcher, owner: options.owner ?? 'hooks', ...(options.signal && { signal: options.signal }) };
    return owner;
  };
  const resolver = createCommandResolver({ allowed: options.allowedCommands, pathEnv: process.env.PATH, ...(log ? { log } : {}) });
  /** Spawn-mode processes now running, killed on close. */
  const active = new Set<HookProcess>();
  /** Per persistent hook: its process, and the definition it last served (see `check`). */
  const persistent = new Map<string, { idleMs: number; hook: PersistentHook; definition: HookDefinition }>();
  /**
   * What `check` found for a hook that could start, for the `run` that follows it (the engine checks,
   * asks trust, then runs): taken once, and only while fresh, so a run right after its check does not
   * make the same `stat`s again; any other run checks for itself.
   */
  const prechecked = new WeakMap<HookDefinition, { readonly file: string; readonly at: number }>();
  /** Per persistent hook: the last request's turn to be queued. */
  const lanes = new Map<string, Promise<void>>();
  let closed = false;

  const onEscapees = (hook: HookDefinition) => (pids: readonly number[]) =>
    log?.warn(`${hookLabel(hook)}: killed ${pids.length} process(es) that left its process group holding its output (pid ${pids.join(', ')})`);

  /** Everything that must hold before `hook` can start, short of starting it; the resolved program when it holds. */
  async function preflight(hook: HookDefinition): Promise<{ ok: true; file: string } | { ok: false; failure: PreflightFailure; detail: string }> {
    const action = hook.action;
    if (action.type !== 'command') return { ok: false, failure: 'spawn_failed', detail: 'it is an askAgent hook: there is no process to run' };
    const command = await resolver.resolve(action.command, hook.cwd);
    const script = missingScript(hook);
    const cwd = missingFolder(hook.cwd);
    if (!command.ok) return command;
    if (script !== undefined) return { ok: false, failure: 'script_missing', detail: `its script ${script} does not exist` };
    if (cwd) return { ok: false, failure: 'spawn_failed', detail: `its working directory ${hook.cwd} does not exist` };
    return command;
  }

  /** The checks before a run, then what to launch. */
  async function prepare(hook: HookDefinition, action: { command: string; args: readonly string[] }, event: string, pinned: readonly PinnedFile[] | undefined, sessionId?: string, runEnv?: RunEnvironment): Promise<Launch | Reply> {
    const before = prechecked.get(hook);
    prechecked.delete(hook);
    const fresh = before !== undefined && performance.now() - before.at < PRECHECK_FRESH_MS ? { ok: true as const, file: before.file } : undefined;
    const [checked] = await Promise.all([fresh ?? preflight(hook), owner ?? ownerReady()]);
    if (!checked.ok) return refused(checked.failure, checked.detail);
    const command = checked;
    const { passEnv, env, ownEnv } = hookEnvironment(hook, {
      extra: options.env,
      workspace: options.workspace,
      ...(hook.persistent === false ? { event } : { persistent: true }),
      ...(sessionId !== undefined && { sessionId }),
      ...(hook.plugin !== undefined && options.settingsEnv && { settings: options.settingsEnv(hook.plugin) }),
      ...(runEnv !== undefined && { run: runEnv }),
    });
    const actingFor = options.principalOf?.(hook);
    return { file: command.file, args: action.args, argv0: action.command, cwd: hook.cwd, passEnv, env, ownEnv, purpose: hookLabel(hook), ...(actingFor !== undefined && { actingFor }), ...(pinned !== undefined && pinned.length > 0 && { pinned }) };
  }

  /** The persistent process for `hook`, replaced when its launch or idle time changed. */
  function persistentFor(hook: HookDefinition, launch: Launch, idleMs: number): PersistentHook {
    let entry = persistent.get(hook.id);
    if (entry === undefined || entry.idleMs !== idleMs || !sameLaunch(entry.hook.launch, launch)) {
      void entry?.hook.close();
      entry = {
        idleMs,
        hook: new PersistentHook(launch, { owner: owner!, maxOutputBytes: options.maxOutputBytes, idleMs, label: hookLabel(hook), ...(log ? { log } : {}) }),
        definition: hook,
      };
      persistent.set(hook.id, entry);
    }
    entry.definition = hook;
    return entry.hook;
  }

  async function execute(hook: HookDefinition, input: RunInput, signal: AbortSignal | undefined, pinned?: readonly PinnedFile[], runEnv?: RunEnvironment): Promise<Reply> {
    if (closed) return CLOSED;
    const action = hook.action;
    if (action.type !== 'command') return refused('spawn_failed', 'it is an askAgent hook: there is no process to run');
    let line: string;
    try {
      line = encodeInput(input);
    } catch (error) {
      return refused('spawn_failed', `its input could not be encoded as JSON (${(error as Error).message})`);
    }
    const timeoutMs = Math.min(Math.max(hook.timeoutMs, 1), MAX_TIMER_MS);

    if (hook.persistent === false) {
      const launch = await prepare(hook, action, input.event, pinned, sessionOfInput(input), runEnv);
      if ('outcome' in launch) return launch;
      if (closed) return CLOSED;
      return runOnce(owner!, launch, line, { timeoutMs, maxOutputBytes: options.maxOutputBytes }, signal, {
        started: (child) => active.add(child),
        ended: (child) => active.delete(child),
        onEscapees: onEscapees(hook),
      });
    }

    // Persistent: requests reach the process in the order run() was called, although the checks before them
    // are asynchronous. A turn ends once its request is queued (an object, so that the answer is not awaited).
    const idleMs = Math.min(Math.max(hook.persistent.idleMs, 1), MAX_TIMER_MS);
    const turn = (lanes.get(hook.id) ?? Promise.resolve()).then(async () => {
      const launch = await prepare(hook, action, input.event, pinned, undefined, runEnv);
      if ('outcome' in launch) return { answer: Promise.resolve(launch) };
      if (closed) return { answer: Promise.resolve(CLOSED) };
      return { answer: persistentFor(hook, launch, idleMs).request(line, timeoutMs, signal) };
    });
    lanes.set(hook.id, turn.then(ignore, ignore));
    return (await turn).answer;
  }

  return {
    async check(hook) {
      // A persistent process that serves this very definition started from its script in its folder, and
      // both exist for it whatever happens to the paths since: there is nothing for the stats to find. (An
      // edit or removal of the script is the trust check's to see: the pin it checks next covers the file.)
      const live = hook.persistent === false ? undefined : persistent.get(hook.id);
      if (live !== undefined && live.definition === hook && live.hook.serving) {
        prechecked.set(hook, { file: live.hook.launch.file, at: performance.now() });
        return undefined;
      }
      const checked = await preflight(hook);
      if (checked.ok) prechecked.set(hook, { file: checked.file, at: performance.now() });
      else prechecked.delete(hook);
      return checked.ok ? undefined : { failure: checked.failure, detail: checked.detail };
    },

    async run(hook, input, signal, pinned, runEnv) {
      const started = performance.now();
      let reply: Reply;
      try {
        reply = await execute(hook, input, signal, pinned, runEnv);
      } catch (error) {
        const outcome: Outcome = { kind: 'spawn_error', detail: `internal error: ${(error as Error)?.message ?? String(error)}` };
        reply = { outcome, stderrTail: '' };
      }
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      const facts = { durationMs, stderrTail: reply.stderrTail };
      const result: RunResult = isPeerInput(input) ? peerRunResult(hook, input, reply.outcome, facts) : toRunResult(hook, reply.outcome, facts);
      const cannotRun = result.ok ? undefined : cannotRunFix(reply.outcome, reply.sandboxHint);
      return cannotRun === undefined || result.ok ? result : { ...result, cannotRun };
    },

    async release(hookIds) {
      const closing: Promise<void>[] = [];
      for (const id of hookIds) {
        const entry = persistent.get(id);
        if (entry === undefined) continue;
        persistent.delete(id);
        closing.push(entry.hook.close());
      }
      await Promise.all(closing);
    },

    async close() {
      closed = true;
      const ending = [...active].map((child) => {
        child.kill();
        return child.ended;
      });
      const closing = [...persistent.values()].map((entry) => entry.hook.close());
      persistent.clear();
      lanes.clear();
      await Promise.all([...ending, ...closing]);
    },
  };
}

/** Whether two launches start the same process: every field the same, as JSON would compare them (undefined fields left out). */
export function sameLaunch(a: Launch, b: Launch): boolean {
  return sameData(a, b);
}

function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key) || left[key] === undefined) continue;
    count++;
    if (!Object.hasOwn(right, key) || !sameData(left[key], right[key])) return false;
  }
  for (const key in right) if (Object.hasOwn(right, key) && right[key] !== undefined) count--;
  return count === 0;
}

/** The session of one run's input: a peer document's `session_id`, plinth's `metadata.sessionId`. */
function sessionOfInput(input: RunInput): string | undefined {
  const session = isPeerInput(input) ? input.document.session_id : input.metadata.sessionId;
  return typeof session === 'string' && session !== '' ? session : undefined;
}
