/**
 * One event's external hooks, end to end: select the hooks that match, plan
 * them, ask trust and the rate limiter, run them, combine their answers, and
 * record the runs in the trace.
 */
import { type EventName, isGateEvent, type Logger, type TrustService, type TrustSubject, type TrustVerdict } from 'plinth/sdk';
import { AsyncSeriesBailHook, SyncHook } from 'tapable';
import { mkdirSync } from 'node:fs';
import type { HookProgress, RewakeRequest } from 'plinth/sdk';
import { peerNameOf } from './dialects/events.js';
import { ENV_FILE_EVENTS, SessionEnvironment, envPrincipal, pluginDataDir } from './session-env.js';
import { type HookRefusal, type HookSkip, execute } from './execute.js';
import { matches } from './matcher.js';
import { plan } from './plan.js';
import { buildPeerInput } from './dialects/input.js';
import { buildInput, subscribedSpelling } from './protocol.js';
import type { RateLimiter } from './rate-limit.js';
import type { AskAgentRequest } from 'plinth/sdk';
import { renderTemplate, templateValues } from './template.js';
import type { Trace } from './trace.js';
import { hookLabel, preflightHint } from './runner/outcome.js';
import { type HandlerDeps, isHandlerHook, runHandler } from './handlers.js';
import type { HookDefinition, HookFailure, HookOutcome, HookRunner, PlanResult, PreflightFailure, RunEnvironment, RunInput, RunResult, Strategy } from './types.js';

type Context = Readonly<Record<string, unknown>>;

export interface EngineDeps {
  readonly runner: HookRunner;
  readonly limiter: RateLimiter;
  readonly trace: Trace;
  readonly trust: () => Promise<TrustService>;
  readonly strategy: Strategy;
  readonly workspace: string;
  readonly log: Logger;
  /** Masks sensitive setting values (`kernel.redact`) in what hooks wrote, before {@link HookEngine.lastRun} hands it out. */
  readonly redact?: (text: string) => string;
  /**
   * Asks the host to approve what a peer hook answered `permissionDecision: "ask"` for (the
   * plugin fires `approval_request`). Without it, or without an answer, the ask blocks.
   */
  readonly approve?: (request: ApprovalAsk) => Promise<{ readonly approved: boolean; readonly message?: string }>;
  /**
   * plinth's home: where a Claude Code hook's `CLAUDE_ENV_FILE` (`hook-env/`) and a plugin's
   * `CLAUDE_PLUGIN_DATA` (`plugin-data/`) live. Without it, neither is given.
   */
  readonly home?: string;
  /** What the `http`, `mcp_tool`, `prompt` and `agent` hooks need (handlers.ts); without it they cannot run. */
  readonly handlers?: HandlerDeps;
}

/** What a hook asks the host to approve. */
export interface ApprovalAsk {
  readonly hook: Pick<HookDefinition, 'id' | 'name' | 'source'>;
  readonly event: EventName;
  readonly context: Context;
  readonly reason?: string;
}

export class HookEngine {
  readonly askAgent = new AsyncSeriesBailHook<[AskAgentRequest], true | undefined>(['request']);
  /** Each command hook starting and ending (its `statusMessage`), for a host that shows them. */
  readonly progress = new SyncHook<[HookProgress]>(['progress']);
  /** `asyncRewake` hooks that exited with code 2; untaken, their message reaches the next event. */
  readonly rewake = new AsyncSeriesBailHook<[RewakeRequest], true | undefined>(['request']);
  /** What background hooks said for the model, delivered with the next event's decision. */
  private pending: string[] = [];
  /** Background runs not finished yet. */
  private readonly background = new Set<Promise<void>>();
  /** `once` hooks that ran, per session: `<id>\0<session>`. */
  private readonly ranOnce = new Set<string>();
  private readonly sessionEnv: SessionEnvironment | undefined;
  private closed = false;
  private readonly last = new Map<EventName, PlanResult>();
  private hooks: readonly HookDefinition[] = [];
  private unreadable: readonly UnreadableGuard[] = [];
  /** Each definition's trust subject, made once and frozen: the trust plugin recognises it from one check to the next. */
  private readonly subjects = new WeakMap<HookDefinition, TrustSubject>();
  /** The last plan of each event, and the hooks it was made of: the same hooks, in the same order, plan the same. */
  private readonly plans = new Map<EventName, { readonly selected: readonly HookDefinition[]; readonly planned: ReturnType<typeof plan> }>();

  constructor(private readonly deps: EngineDeps) {
    this.sessionEnv = deps.home === undefined ? undefined : new SessionEnvironment(deps.home, (message) => deps.log.warn(message));
  }

  /** Waits for the hooks running in the background to be done with (their results delivered or recorded). */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  /** No more background results are recorded (the plugin is torn down; the runner kills what still runs). */
  close(): void {
    this.closed = true;
  }

  /**
   * Replaces the definitions (after reading settings, manifests and legacy files), and the
   * user's definitions for gate events that could not be read: each blocks its event.
   */
  setHooks(hooks: readonly HookDefinition[], unreadable: readonly UnreadableGuard[] = []): void {
    this.hooks = hooks;
    this.plans.clear();
    this.unreadable = unreadable.filter((u) => isGateEvent(u.event));
  }

  /**
   * Canonical events at least one enabled hook runs on, or an unreadable guard blocks; and
   * `session_end` when a Claude Code hook may write a session's env file (its end forgets it).
   */
  events(): Set<EventName> {
    const events = new Set([...this.hooks.filter((h) => h.enabled).flatMap((h) => h.events), ...this.unreadable.map((u) => u.event)]);
    if (this.sessionEnv !== undefined && this.hooks.some((h) => h.enabled && h.protocol === 'claude' && h.events.some((e) => ENV_FILE_EVENTS.has(peerNameOf('claude', e) ?? '')))) events.add('session_end');
    return events;
  }

  /** The last run of `event`; with `deps.redact`, secrets are masked in the hooks' messages and stderr (the context stays the caller's). */
  lastRun(event: EventName): PlanResult | undefined {
    return this.last.get(event);
  }

  /** Runs the hooks of `event` that match `context`; undefined when none does. */
  async fire(event: EventName, context: Context): Promise<PlanResult | undefined> {
    const unreadable = this.unreadable.filter((u) => u.event === event);
    if (unreadable.length > 0) {
      const result = unreadableResult(event, unreadable, context);
      this.last.set(event, result);
      return result;
    }
    const sessionId = sessionOf(context);
    const selected = this.hooks.filter(
      (hook) => hook.enabled && !(hook.once === true && this.ranOnce.has(onceKey(hook, sessionId))) && matches(hook, event, context, { workspace: this.deps.workspace }),
    );
    if (selected.length === 0) {
      if (event === 'session_end' && sessionId !== undefined) this.sessionEnv?.drop(sessionId);
      return this.deliverOnly(event, context);
    }
    const planned = this.planOf(event, selected);
    for (const note of planned.notes) this.deps.log.warn(note);
    const askAgentPrompts: string[] = [];
    const result = await execute(planned, context, (hook, current) => this.runOne(hook, event, current, sessionId, askAgentPrompts), {
      limiter: this.deps.limiter,
    });
    const delivered = this.takePending();
    const combined =
      askAgentPrompts.length > 0 || delivered.length > 0 ? { ...result, systemMessages: [...delivered, ...result.systemMessages, ...askAgentPrompts] } : result;
    this.last.set(event, this.deps.redact ? redactTexts(combined, this.deps.redact) : combined);
    await this.deps.trace.record(event, combined.outcomes);
    if (event === 'session_end' && sessionId !== undefined) this.sessionEnv?.drop(sessionId);
    for (const outcome of combined.outcomes) {
      // Coded, with the message as the decision carries it, so that a command that prints the decision (`plinth call`'s
      // error) shows the failure once: the CLI drops a held warning whose code and message it prints itself.
      if (outcome.status === 'failed') {
        this.deps.log.warn(`${outcome.code ?? 'PLN_E_HOOK_RUN_FAILED'}: ${outcome.message ?? `hook ${outcome.hook.id} failed`}\n  hook ${outcome.hook.id} failed on ${event} (${outcome.failure})`);
      }
    }
    return combined;
  }

  /** No hook of `event` runs: the decision carries only what background hooks said since the last event, if anything. */
  private deliverOnly(event: EventName, context: Context): PlanResult | undefined {
    const delivered = this.takePending();
    if (delivered.length === 0) return undefined;
    const result: PlanResult = { allow: true, messages: [], systemMessages: delivered, context, outcomes: [] };
    this.last.set(event, this.deps.redact ? redactTexts(result, this.deps.redact) : result);
    return result;
  }

  private takePending(): string[] {
    const taken = this.pending;
    this.pending = [];
    return taken;
  }

  /** `plan(selected)`, made again only when the selection differs from the last one of `event` (plans are pure). */
  private planOf(event: EventName, selected: readonly HookDefinition[]): ReturnType<typeof plan> {
    const last = this.plans.get(event);
    if (last !== undefined && last.selected.length === selected.length && last.selected.every((hook, i) => hook === selected[i])) return last.planned;
    const planned = plan(selected, this.deps.strategy);
    this.plans.set(event, { selected, planned });
    return planned;
  }

  /** The trust subject of `hook` (see {@link trustSubject}), deeply frozen, the same object for the same definition. */
  private subjectOf(hook: HookDefinition): TrustSubject {
    let subject = this.subjects.get(hook);
    if (subject === undefined) {
      // A copy: trustSubject shares the definition's parts, which stay the definition's to change.
      subject = deepFreeze(structuredClone(trustSubject(hook)));
      this.subjects.set(hook, subject);
    }
    return subject;
  }

  private async runOne(hook: HookDefinition, event: EventName, context: Context, sessionId: string | undefined, prompts: string[]): Promise<RunResult | HookSkip | HookRefusal> {
    try {
      return await this.decide(hook, event, context, sessionId, prompts);
    } catch (error) {
      // Outside gate events a throw is the hook's failure (its onError decides); a gate fails closed.
      if (!isGateEvent(event)) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      return refusal(hook, event, 'spawn_failed', `Hook "${hook.id}" could not be checked: ${reason}`, `see \`plinth hooks validate\`; the hook is defined at ${hook.origin}`);
    }
  }

  /**
   * Whether and how `hook` runs. A hook nobody approved (a workspace or extension hook
   * waiting for approval) is skipped, and the decision's system messages say so. A hook
   * that should guard a gate event but cannot run — its approval or pin no longer matches,
   * its command is not allowed, its script or folder is missing — blocks the event, naming
   * the fix; on other events it is skipped or fails as its `onError` says.
   */
  private async decide(hook: HookDefinition, event: EventName, context: Context, sessionId: string | undefined, prompts: string[]): Promise<RunResult | HookSkip | HookRefusal> {
    const gate = isGateEvent(event);
    const trust = await this.deps.trust();
    const subject = this.subjectOf(hook);
    if (hook.unsupported !== undefined) {
      // A hook plinth cannot run yet (a peer's prompt or agent hook): never run, never a silent allow on a gate event.
      const verdict = await trust.inspect(subject);
      if (!verdict.trusted && neverApproved(hook, verdict)) return notApproved(hook, event, verdict);
      const why = `${hookLabel(hook)} was not run: ${hook.unsupported}`;
      if (!gate) return { status: 'skipped', failure: 'unsupported', message: why, systemMessage: why };
      return refusal(hook, event, 'unsupported', `Hook "${hook.id}" cannot run: ${hook.unsupported}`, unsupportedFix(hook));
    }
    if (hook.action.type === 'command') {
      // Before trust.check: a user hook must not be pinned (nor anyone asked) as it is while it cannot run.
      const cannot = await this.deps.runner.check(hook);
      if (cannot) {
        const verdict = await trust.inspect(subject);
        if (!verdict.trusted && neverApproved(hook, verdict)) return notApproved(hook, event, verdict);
        if (!gate) return { ok: false, failure: cannot.failure, message: `${hookLabel(hook)} was not run: ${cannot.detail}`, durationMs: 0, stderrTail: '' };
        return refusal(hook, event, cannot.failure, `Hook "${hook.id}" cannot run: ${cannot.detail}`, preflightFix(hook, cannot.failure));
      }
    }
    const verdict = await trust.check(subject);
    if (!verdict.trusted) {
      if (neverApproved(hook, verdict)) return notApproved(hook, event, verdict);
      const message = `Hook "${hook.id}" did not run: ${verdict.reason ?? 'its approval does not cover it as it is now'}`;
      if (!gate) return { status: 'skipped', failure: 'untrusted', message };
      const fix = verdict.approveCommand ? `review the change, then approve it: ${verdict.approveCommand}` : `approve it again with \`plinth hooks trust ${hook.id}\``;
      return refusal(hook, event, 'untrusted', message, fix);
    }
    if (hook.action.type === 'askAgent') {
      const started = performance.now();
      const prompt = renderTemplate(hook.action.prompt, askAgentValues(event, context));
      const taken = await this.askAgent.promise({ hook: { id: hook.id, name: hook.name, source: hook.source }, event, prompt, context });
      if (taken !== true) prompts.push(prompt);
      return { ok: true, response: { allow: true }, durationMs: performance.now() - started, stderrTail: '' };
    }
    const input: RunInput =
      hook.protocol === 'claude' || hook.protocol === 'gemini' || hook.protocol === 'codex'
        ? buildPeerInput(hook, event, context, { ...(sessionId !== undefined && { sessionId }), workspace: this.deps.workspace })
        : buildInput(hook, subscribedSpelling(hook, event), context, sessionId);
    if (hook.once === true) this.ranOnce.add(onceKey(hook, sessionId));
    const ref = { id: hook.id, name: hook.name, source: hook.source };
    const progress = (phase: HookProgress['phase']): void => {
      if (!this.progress.isUsed()) return;
      try {
        this.progress.call({ hook: ref, event, phase, ...(hook.statusMessage !== undefined && { statusMessage: hook.statusMessage }), ...(hook.async !== undefined && { background: true }) });
      } catch (error) {
        this.deps.log.warn(`a hooks progress tap failed: ${(error as Error)?.message ?? String(error)}`);
      }
    };
    progress('started');
    if (isHandlerHook(hook)) {
      const handlers = this.deps.handlers;
      const handling = handlers
        ? runHandler(hook, event, input, handlers)
        : Promise.resolve({ ok: false, failure: 'unsupported', message: `${hookLabel(hook)} was not run: this engine runs no "${hook.action.type}" hooks`, durationMs: 0, stderrTail: '' } as const);
      if (hook.async !== undefined) {
        // In the background, as a command hook: a handler that cannot run (no server, no grant) is its failure there, never a block of this event.
        const running = handling.then((handled): RunResult => ('ok' in handled ? handled : { ok: false, failure: handled.failure ?? 'unsupported', message: handled.message ?? `${hookLabel(hook)} was not run`, durationMs: 0, stderrTail: '' }));
        this.inBackground(hook, event, running, sessionId, () => progress('ended'));
        return { ok: true, response: { allow: true, metadata: { background: true } }, durationMs: 0, stderrTail: '' };
      }
      const handled = await handling;
      progress('ended');
      return 'ok' in handled && handled.ok && handled.response.approval ? this.askHost(hook, event, context, handled) : handled;
    }
    const env = this.runEnvironment(hook, event, sessionId);
    const running = this.deps.runner.run(hook, input, undefined, verdict.pinned, env.run).then((result) => {
      env.after();
      return result;
    });
    if (hook.async !== undefined) {
      // Claude Code's `async`: the event does not wait, the decision does not count; what the hook says reaches the next event.
      this.inBackground(hook, event, running, sessionId, () => progress('ended'));
      return { ok: true, response: { allow: true, metadata: { background: true } }, durationMs: 0, stderrTail: '' };
    }
    const result = await running;
    progress('ended');
    // A guard that never got to decide (not found, killed, stopped by its sandbox) fails closed, whatever its onError.
    if (!result.ok && result.cannotRun !== undefined && gate) return refusal(hook, event, result.failure, result.message.replace(/\.$/, ''), result.cannotRun);
    return result.ok && result.response.approval ? this.askHost(hook, event, context, result) : result;
  }

  /**
   * The variables of one run of `hook`: for a Claude Code hook on `SessionStart` (`Setup`,
   * `CwdChanged`, `FileChanged`), `CLAUDE_ENV_FILE`, read back once it ran (`after`); for a Claude
   * Code plugin's hook, its `CLAUDE_PLUGIN_DATA` folder (created); for every hook, what its
   * principal's env file set in this session.
   */
  private runEnvironment(hook: HookDefinition, event: EventName, sessionId: string | undefined): { readonly run: RunEnvironment; after(): void } {
    const store = this.sessionEnv;
    const home = this.deps.home;
    if (store === undefined || home === undefined) return { run: {}, after: () => undefined };
    const principal = envPrincipal(hook);
    const session = sessionId ?? '';
    const own: Record<string, string> = {};
    if (hook.protocol === 'claude' && hook.plugin !== undefined) {
      const data = pluginDataDir(home, hook.plugin);
      mkdirSync(data, { recursive: true });
      own.CLAUDE_PLUGIN_DATA = data;
    }
    const vars = store.varsFor(session, principal);
    const writes = hook.protocol === 'claude' && ENV_FILE_EVENTS.has(peerNameOf('claude', event) ?? '');
    const file = writes ? store.fileFor(session, principal) : undefined;
    if (file !== undefined) own.CLAUDE_ENV_FILE = file;
    const run: RunEnvironment = { ...(Object.keys(own).length > 0 && { own }), ...(Object.keys(vars).length > 0 && { vars }) };
    const after = (): void => {
      if (file === undefined) return;
      const base: Record<string, string> = {};
      for (const name of ['PATH', 'HOME', 'USER', 'LANG', 'TMPDIR']) if (process.env[name] !== undefined) base[name] = process.env[name]!;
      Object.assign(base, { CLAUDE_PROJECT_DIR: this.deps.workspace }, hook.pluginRoot !== undefined && { CLAUDE_PLUGIN_ROOT: hook.pluginRoot }, own, vars);
      store.absorb(session, principal, file, base, hookLabel(hook));
    };
    return { run, after };
  }

  /**
   * A background run (`async`): when it ends, what it said for the model (`additionalContext`, its
   * `systemMessage`) waits for the next event; an `asyncRewake` hook that exited with code 2 wakes
   * the host (`rewake`), or, untaken, its message waits too. Its outcome goes to the trace.
   */
  private inBackground(hook: HookDefinition, event: EventName, running: Promise<RunResult>, sessionId: string | undefined, ended: () => void): void {
    const ref = { id: hook.id, name: hook.name, source: hook.source };
    const done = running
      .then(async (result) => {
        if (this.closed) return;
        const said: string[] = [];
        let outcome: HookOutcome;
        if (result.ok) {
          const rewoken = hook.async?.rewake === true && result.exitCode === 2;
          if (rewoken) {
            const stdout = typeof result.response.metadata?.stdout === 'string' ? result.response.metadata.stdout : undefined;
            // Claude Code: stderr, or stdout when stderr is empty.
            const message = hook.async?.rewakeMessage ?? (result.stderrTail.trim() || stdout || result.response.message || `${hookLabel(hook)} exited with code 2`);
            const request: RewakeRequest = { hook: ref, event, message, ...(hook.async?.rewakeSummary !== undefined && { summary: hook.async.rewakeSummary }), ...(sessionId !== undefined && { sessionId }) };
            const taken = await this.rewake.promise(request).catch((error: unknown) => {
              this.deps.log.warn(`a hooks rewake tap failed: ${(error as Error)?.message ?? String(error)}`);
              return undefined;
            });
            if (taken !== true) said.push(message);
          } else if (result.exitCode !== 2) {
            // Decisions of a background hook count for nothing: only what it says for the model is kept.
            if (result.response.systemMessage) said.push(result.response.systemMessage);
            if (result.response.message && result.response.allow) said.push(result.response.message);
          }
          outcome = { hook: ref, status: 'ran', allow: true, ...(said.length > 0 && { systemMessage: said.join('\n') }), durationMs: result.durationMs, ...(result.exitCode !== undefined && { exitCode: result.exitCode }), ...(result.stderrTail && { stderrTail: result.stderrTail }) };
        } else {
          this.deps.log.warn(`${hookLabel(hook)} failed in the background on ${event} (${result.failure}): ${result.message}`);
          outcome = { hook: ref, status: 'failed', allow: true, failure: result.failure, message: result.message, durationMs: result.durationMs, ...(result.exitCode !== undefined && { exitCode: result.exitCode }), ...(result.stderrTail && { stderrTail: result.stderrTail }) };
        }
        this.pending.push(...said);
        await this.deps.trace.record(event, [outcome]);
      })
      .catch((error: unknown) => this.deps.log.warn(`${hookLabel(hook)} in the background: ${(error as Error)?.message ?? String(error)}`))
      // Once what it said is waiting for the next event (and traced): a host that watches `progress` can fire it.
      .finally(ended);
    this.background.add(done);
    void done.finally(() => this.background.delete(done));
  }

  /** A peer hook's `ask`: the host's answer to `approval_request` is the hook's decision; no answer blocks. */
  private async askHost(hook: HookDefinition, event: EventName, context: Context, result: Extract<RunResult, { ok: true }>): Promise<RunResult> {
    const reason = result.response.approval?.reason;
    const asked = `${hookLabel(hook)} asks for approval${reason ? `: ${reason}` : ''}`;
    const answer = this.deps.approve
      ? await this.deps.approve({ hook: { id: hook.id, name: hook.name, source: hook.source }, event, context, ...(reason !== undefined && { reason }) })
      : { approved: false };
    const { approval: _asked, ...response } = result.response;
    if (answer.approved) return { ...result, response: { ...response, allow: true, message: [asked, 'approved', answer.message].filter(Boolean).join('; ') } };
    const why = answer.message ?? 'nobody approved it (the host answers approval_request with context.approved: true)';
    return { ...result, response: { ...response, allow: false, message: `${asked}; not approved: ${why}` } };
  }
}

/**
 * A hook definition the user wrote for a gate event that could not be read (a wrong type, an
 * unknown key, a bad pattern): the guard it was meant to be does not exist, so the event is blocked.
 */
export interface UnreadableGuard {
  readonly event: EventName;
  /** `<file>#<JSON path>`. */
  readonly where: string;
  /** The problem, as `plinth hooks validate` reports it. */
  readonly message: string;
}

function unreadableResult(event: EventName, unreadable: readonly UnreadableGuard[], context: Context): PlanResult {
  const first = unreadable[0]!;
  const fix = `correct the definition at ${first.where} (\`plinth hooks validate\` lists every problem), or remove it`;
  return {
    allow: false,
    blockedBy: first.where,
    code: 'PLN_E_HOOK_INVALID',
    fix,
    messages: unreadable.map((u, i) => `A hook definition for ${event} cannot be read, so ${event} is blocked until it is corrected: ${u.message}${i === 0 ? `. Fix: ${fix}` : ''}`),
    systemMessages: [],
    context,
    outcomes: [],
  };
}

/** Never approved: waiting for a first approval, or declined at the prompt (a user hook is trusted on first use, so it is never this). */
function neverApproved(hook: HookDefinition, verdict: TrustVerdict): boolean {
  return verdict.level === 'pending' || (verdict.level === 'denied' && hook.source !== 'user');
}

function notApproved(hook: HookDefinition, event: EventName, verdict: TrustVerdict): HookSkip {
  const how = verdict.approveCommand ? ` Approve it with: ${verdict.approveCommand}` : '';
  return {
    status: 'skipped',
    failure: 'untrusted',
    message: `Hook "${hook.id}" did not run: ${verdict.reason ?? 'it is not approved'}`,
    systemMessage: `The ${hook.source} hook "${hook.id}" was skipped on ${event}: it has not been approved.${how}`,
  };
}

/** A hook that guards `event` (a gate event) and cannot run: the event is blocked, the message says until what. */
function refusal(hook: HookDefinition, event: EventName, failure: HookFailure, why: string, fix: string): HookRefusal {
  return {
    status: 'blocked',
    failure,
    code: 'PLN_E_HOOK_UNRUNNABLE',
    message: `${why}. ${event} is blocked until it can run (it guards this event). Fix: ${fix}`,
    fix,
  };
}

/** What unblocks an event guarded by a hook plinth cannot run yet. */
export function unsupportedFix(hook: HookDefinition): string {
  const where = hook.plugin !== undefined && hook.source !== 'user' && hook.source !== 'workspace' ? `disable plugin "${hook.plugin}" (\`plinth ext disable ${hook.plugin}\`) or remove the hook from ${hook.origin}` : `remove the hook at ${hook.origin}, or set "enabled": false on it`;
  return `${where}; a "command" hook that does the same check runs`;
}

/** What fixes a hook that cannot start, and where it is defined. */
function preflightFix(hook: HookDefinition, failure: PreflightFailure): string {
  const disable = hook.source === 'user' ? '; or set "enabled": false on it' : '';
  return `${preflightHint(failure)}; the hook is defined at ${hook.origin}${disable}`;
}

/**
 * What the trust plugin fingerprints: the definition (not where in a file it
 * sits) and, for a command hook, what it runs (`runs`: the trust plugin
 * covers every file or folder its command and arguments name).
 */
export function trustSubject(hook: HookDefinition): TrustSubject {
  const { origin: _origin, action, cwd, ...rest } = hook;
  // A plugin's hook: covered by the approval of an installed plugin (the trust plugin decides when).
  const declaredBy = hook.plugin !== undefined && hook.source !== 'builtin' ? { declaredBy: hook.plugin } : {};
  if (action.type === 'http') {
    // The URL and the headers as written (their variables unfilled: a rotated secret needs no approval) are what
    // is approved; the trust plugin shows header names only, never their values.
    const { url, headers, ...shape } = action;
    return { kind: 'hook', id: hook.id, source: hook.source, ...declaredBy, definition: { ...rest, action: shape, cwd }, files: [], runs: { url, headers }, summary: `http POST ${url} (from ${hook.origin})` };
  }
  if (action.type === 'mcp_tool' || action.type === 'prompt' || action.type === 'agent') {
    const what = action.type === 'mcp_tool' ? `mcp_tool ${action.server}/${action.tool}` : `${action.type}: ${action.prompt.slice(0, 200)}`;
    // Nothing local runs (`runs` is empty), but a subject with `runs` is one the trust plugin keeps between checks, as a hook is checked at every run.
    return { kind: 'hook', id: hook.id, source: hook.source, ...declaredBy, definition: { ...rest, action, cwd }, files: [], runs: {}, summary: `${what} (from ${hook.origin})` };
  }
  if (action.type !== 'command') {
    const what = hook.unsupported !== undefined ? 'never runs (not supported yet)' : 'askAgent';
    return { kind: 'hook', id: hook.id, source: hook.source, definition: { ...rest, action, cwd }, files: [], summary: `${what}: ${action.prompt.slice(0, 200)} (from ${hook.origin})`, ...declaredBy };
  }
  return {
    kind: 'hook',
    id: hook.id,
    source: hook.source,
    ...declaredBy,
    definition: { ...rest, action: { type: action.type } },
    files: [],
    runs: { command: action.command, args: action.args, cwd },
    summary: `${[action.command, ...action.args].join(' ')} (from ${hook.origin})`,
  };
}

/** `result` with `redact` applied to every text a hook wrote: messages, system messages, stderr tails. */
function redactTexts(result: PlanResult, redact: (text: string) => string): PlanResult {
  const some = (text: string | undefined) => (text === undefined ? undefined : redact(text));
  return {
    ...result,
    messages: result.messages.map(redact),
    systemMessages: result.systemMessages.map(redact),
    outcomes: result.outcomes.map((o) => ({
      ...o,
      ...(o.message !== undefined && { message: some(o.message) }),
      ...(o.systemMessage !== undefined && { systemMessage: some(o.systemMessage) }),
      ...(o.stderrTail !== undefined && { stderrTail: some(o.stderrTail) }),
    })),
  };
}

/** `value`, with every object and array in it frozen. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

function onceKey(hook: HookDefinition, sessionId: string | undefined): string {
  return `${hook.id}\0${sessionId ?? ''}`;
}

function sessionOf(context: Context): string | undefined {
  const session = context.session;
  if (typeof context.sessionId === 'string') return context.sessionId;
  if (typeof session === 'object' && session !== null && typeof (session as { id?: unknown }).id === 'string') return (session as { id: string }).id;
  return undefined;
}

// The protocol sends `file` as a path; legacy templates say `{{file.path}}`: offer both.
function askAgentValues(event: EventName, context: Context): Record<string, unknown> {
  const values = templateValues(event, context);
  if (typeof context.file === 'string') values.file = { path: context.file };
  return values;
}
