/**
 * The launcher: checks a request, resolves its program, builds its
 * environment, starts it (child.ts), ties it to its owner's signal and its
 * timeout, captures output for `run`, and records it in the trace.
 */
import { PlinthError, describeError, launchRequestSchema, launchRunRequestSchema } from 'plinth/sdk';
import type { ChildEnd, LaunchOptions, LaunchRequest, LaunchRequestInput, LaunchRunRequestInput, LaunchRunResult, Launcher, LaunchTraceEntry, Sandbox } from 'plinth/sdk';
import type { ZodType } from 'zod';
import { type ApprovedCopy, approvedCopy } from './approved.js';
import { type InternalChild, type Spawn, startChild } from './child.js';
import { deferredChild } from './deferred.js';
import { childEnvironment } from './environment.js';
import { checkCwd, resolveProgram } from './program.js';
import { LaunchTrace, summarizeArgs } from './trace.js';

export interface LauncherOptions {
  /** How many launches the trace keeps (default 200). */
  readonly traceSize?: number;
  /** Masks sensitive values in what the trace keeps (the kernel's `redact`). */
  readonly redact?: (text: string) => string;
  /** The host environment the allowlist picks from (default `process.env`). */
  readonly hostEnv?: NodeJS.ProcessEnv;
  /**
   * The `sandbox` service, when one is installed (undefined when none): every
   * launch whose request names `actingFor` is decided and confined by it before
   * it starts. A sandbox that fails to load refuses the launch (fail closed).
   */
  readonly sandbox?: () => Promise<Sandbox | undefined>;
}

/** The launcher plus what only its plugin calls. */
export interface LauncherImpl extends Launcher {
  /** Kills every child still running (released ones aside; those being stopped finish their stop) and waits until they are gone. */
  close(): Promise<void>;
}

const DEFAULT_TRACE_SIZE = 200;

function parse<T>(schema: ZodType<T>, request: unknown): T {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  const owner = typeof (request as { owner?: unknown })?.owner === 'string' ? (request as { owner: string }).owner : undefined;
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'request'}: ${issue.message}`).join('; ');
  throw new PlinthError('PLN_E_LAUNCH_INVALID', `a launch request is not valid: ${issues}`, {
    ...(owner && { plugin: owner }),
    hint: 'see launchRequestSchema in plinth/sdk for what a launch request holds',
  });
}

/** Appends `data` to `chunks` unless that passes `limit`; false when it would. */
function capture(chunks: Buffer[], total: { bytes: number }, data: Buffer, limit: number): boolean {
  total.bytes += data.length;
  if (total.bytes > limit) {
    const room = limit - (total.bytes - data.length);
    if (room > 0) chunks.push(data.subarray(0, room));
    return false;
  }
  chunks.push(data);
  return true;
}

/** What the sandbox made of a launch: the spawn to run instead, and what to release when it ends. Rejects with the refusal. */
async function confined(getSandbox: () => Promise<Sandbox | undefined>, request: LaunchRequest, plan: Spawn, approvedRoot: string | undefined): Promise<{ spawn: Spawn; release: () => void; explain?: (output: string) => string | undefined }> {
  const principal = request.actingFor!;
  let sandbox: Sandbox | undefined;
  try {
    sandbox = await getSandbox();
  } catch (error) {
    throw new PlinthError('PLN_E_SANDBOX_SETUP', `${principal.label} was not started: the sandbox could not be loaded (${describeError(error)})`, {
      plugin: principal.id,
      hint: 'run `plinth doctor` or `plinth up` to see why the sandbox plugin failed; the launch was refused rather than run unconfined',
      cause: error,
    });
  }
  if (sandbox === undefined) return { spawn: plan, release: () => {} };
  const result = await sandbox.confine(
    { file: plan.file, args: plan.args, argv0: plan.argv0, cwd: plan.cwd, env: plan.env, owner: request.owner, ...(request.purpose !== undefined && { purpose: request.purpose }), requestedEnv: [...Object.keys(request.env), ...request.passEnv], ...(request.ownEnv.length > 0 && { ownEnv: [...request.ownEnv] }), ...(approvedRoot !== undefined && { approvedCopy: approvedRoot }) },
    principal,
  );
  return {
    spawn: { ...plan, file: result.file, args: result.args, argv0: result.argv0, cwd: result.cwd, env: result.env },
    release: result.release,
    ...(result.explain !== undefined && { explain: (output: string) => result.explain!(output) }),
  };
}

export function createLauncher(options: LauncherOptions = {}): LauncherImpl {
  const redact = options.redact ?? ((text: string) => text);
  const host = options.hostEnv ?? process.env;
  const trace = new LaunchTrace(options.traceSize ?? DEFAULT_TRACE_SIZE);
  const running = new Set<InternalChild>();
  let closed = false;

  function launch(request: LaunchRequest, launchOptions: LaunchOptions): InternalChild {
    if (closed) throw new PlinthError('PLN_E_LAUNCH_CLOSED', `plugin "${request.owner}" asked to start ${request.program} after the launcher closed`, { plugin: request.owner });
    const cwd = request.cwd ?? process.cwd();
    const env = childEnvironment(host, request.passEnv, request.env);
    const args = request.secretArgs ? '[hidden]' : summarizeArgs(request.args, redact);
    const started = performance.now();
    const record = (file: string) =>
      trace.add({ owner: request.owner, ...(request.purpose !== undefined && { purpose: redact(request.purpose) }), program: file, args, startedAt: new Date().toISOString(), state: 'running' });
    let file: string;
    try {
      checkCwd(cwd, request.owner);
      file = resolveProgram(request.program, cwd, env.PATH, request.owner);
    } catch (error) {
      Object.assign(record(request.program), { state: 'failed', reason: redact(describeError(error)) });
      throw error;
    }
    const entry = record(file);
    const signal = launchOptions.signal;
    let timer: NodeJS.Timeout | undefined;
    let release = (): void => {};
    /** The sandbox's reading of a confined child's stderr, once it is confined. */
    let explain: ((output: string) => string | undefined) | undefined;
    const onAbort = (): void => child.killFor('its owner stopped it');
    const onEnded = (end: ChildEnd, killedBy: string | undefined): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      running.delete(child);
      release();
      entry.durationMs = Math.round((performance.now() - started) * 100) / 100;
      entry.exitCode = end.exitCode;
      entry.signal = end.signal;
      if (end.spawnError !== undefined) Object.assign(entry, { state: 'failed', reason: redact(end.spawnError) });
      else if (request.detached) entry.state = 'released';
      else if (killedBy !== undefined) Object.assign(entry, { state: 'killed', reason: killedBy });
      else entry.state = 'exited';
    };
    const plan: Spawn = {
      file,
      args: request.args,
      argv0: request.argv0 ?? request.program,
      cwd,
      env,
      stdio: [request.stdin, request.stdout, request.stderr],
      detached: request.detached,
    };
    const events = { ...(launchOptions.onEscapees && { onEscapees: launchOptions.onEscapees }), onEnded };
    const principal = request.actingFor;
    const sandboxed = principal !== undefined && options.sandbox !== undefined;
    let copy: ApprovedCopy | undefined;
    /** The approved copy first (the request's `pinned`), then the sandbox: what to spawn, once both are ready. */
    const prepared = async (): Promise<() => InternalChild> => {
      let spawn = plan;
      if (request.pinned.length > 0) {
        copy = await approvedCopy(request.pinned, { file, args: plan.args, cwd, label: request.purpose ?? request.program, owner: request.owner });
        spawn = { ...plan, file: copy.file, args: copy.args };
      }
      if (sandboxed) {
        const confinedPlan = await confined(options.sandbox!, request, spawn, copy?.root);
        release = confinedPlan.release;
        explain = confinedPlan.explain;
        spawn = confinedPlan.spawn;
      }
      return () => {
        const real = startChild(spawn, events);
        if (real.pid !== undefined) entry.pid = real.pid;
        return real;
      };
    };
    const child: InternalChild =
      !sandboxed && request.pinned.length === 0 ? startChild(plan, events) : deferredChild(file, plan.stdio, prepared(), (end) => onEnded(end, undefined));
    // The copy goes once the child is gone, however it ended (refused, cancelled before it started, exited).
    void child.ended.then(() => copy?.release());
    if (child.pid !== undefined) entry.pid = child.pid;
    child.explainExit = (output) => explain?.(output);
    if (request.detached || child.exited) return child;
    running.add(child);
    if (request.timeoutMs !== undefined) timer = setTimeout(() => child.killFor(`timed out after ${request.timeoutMs} ms`), request.timeoutMs);
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    return child;
  }

  return {
    start(request: LaunchRequestInput, launchOptions: LaunchOptions = {}) {
      return launch(parse(launchRequestSchema, request), launchOptions);
    },

    async run(input: LaunchRunRequestInput, launchOptions: LaunchOptions = {}): Promise<LaunchRunResult> {
      const request = parse(launchRunRequestSchema, input);
      const started = performance.now();
      // The timeout and the signal are watched here, so that the result says which one ended it.
      const { timeoutMs, input: stdinText, maxOutputBytes } = request;
      const child = launch({ ...request, timeoutMs: undefined, stdin: stdinText === undefined ? 'ignore' : 'pipe' }, { ...(launchOptions.onEscapees && { onEscapees: launchOptions.onEscapees }) });
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      const outBytes = { bytes: 0 };
      const errBytes = { bytes: 0 };
      let tooLarge: 'stdout' | 'stderr' | undefined;
      let timedOut = false;
      let cancelled = false;
      child.stdout?.on('data', (data: Buffer) => {
        if (tooLarge === undefined && !capture(stdout, outBytes, data, maxOutputBytes)) {
          tooLarge = 'stdout';
          child.killFor(`wrote more than ${maxOutputBytes} bytes to stdout`);
        }
      });
      child.stderr?.on('data', (data: Buffer) => {
        if (tooLarge === undefined && !capture(stderr, errBytes, data, maxOutputBytes)) {
          tooLarge = 'stderr';
          child.killFor(`wrote more than ${maxOutputBytes} bytes to stderr`);
        }
      });
      // A child that never reads its input, or closes stdin at once, is fine: EPIPE is ignored.
      if (stdinText !== undefined) child.stdin?.end(stdinText);
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              timedOut = !child.exited;
              child.killFor(`timed out after ${timeoutMs} ms`);
            }, timeoutMs);
      const signal = launchOptions.signal;
      const onAbort = (): void => {
        cancelled = !child.exited;
        child.killFor('its owner stopped it');
      };
      if (signal?.aborted === true) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      const end = await child.ended;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (end.refused !== undefined) throw end.refused;
      const hint = end.exitCode !== 0 && end.exitCode !== null ? child.explainExit?.(Buffer.concat(stderr).toString('utf8')) : undefined;
      return {
        ...end,
        ...(hint !== undefined && { hint }),
        pid: child.pid,
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr),
        timedOut,
        cancelled,
        ...(tooLarge !== undefined && { tooLarge }),
        durationMs: Math.round((performance.now() - started) * 100) / 100,
      };
    },

    trace(): readonly LaunchTraceEntry[] {
      return trace.entries();
    },

    async close() {
      closed = true;
      const ending = [...running].map((child) => {
        // One being stopped politely (a stdio server closing) finishes its bounded close; the rest are killed.
        if (!child.stopping) child.killFor('the launcher closed');
        return child.ended;
      });
      await Promise.all(ending);
    },
  };
}
