/**
 * One event's external hooks, end to end: select the hooks that match, plan
 * them, ask trust and the rate limiter, run them, combine their answers, and
 * record the runs in the trace.
 */
import { AsyncSeriesBailHook } from 'tapable';
import type { EventName, Logger, TrustService, TrustSubject } from 'plinth/sdk';
import { type HookSkip, execute } from './execute.js';
import { matches } from './matcher.js';
import { plan } from './plan.js';
import { buildInput, subscribedSpelling } from './protocol.js';
import type { RateLimiter } from './rate-limit.js';
import type { AskAgentRequest } from './service.js';
import { renderTemplate, templateValues } from './template.js';
import type { Trace } from './trace.js';
import type { HookDefinition, HookRunner, PlanResult, RunResult, Strategy } from './types.js';

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
}

export class HookEngine {
  readonly askAgent = new AsyncSeriesBailHook<[AskAgentRequest], true | undefined>(['request']);
  private readonly last = new Map<EventName, PlanResult>();
  private hooks: readonly HookDefinition[] = [];

  constructor(private readonly deps: EngineDeps) {}

  /** Replaces the definitions (after reading settings, manifests and legacy files). */
  setHooks(hooks: readonly HookDefinition[]): void {
    this.hooks = hooks;
  }

  /** Canonical events at least one enabled hook runs on. */
  events(): Set<EventName> {
    return new Set(this.hooks.filter((h) => h.enabled).flatMap((h) => h.events));
  }

  /** The last run of `event`; with `deps.redact`, secrets are masked in the hooks' messages and stderr (the context stays the caller's). */
  lastRun(event: EventName): PlanResult | undefined {
    return this.last.get(event);
  }

  /** Runs the hooks of `event` that match `context`; undefined when none does. */
  async fire(event: EventName, context: Context): Promise<PlanResult | undefined> {
    const selected = this.hooks.filter((hook) => hook.enabled && matches(hook, event, context, { workspace: this.deps.workspace }));
    if (selected.length === 0) return undefined;
    const planned = plan(selected, this.deps.strategy);
    for (const note of planned.notes) this.deps.log.warn(note);
    const sessionId = sessionOf(context);
    const askAgentPrompts: string[] = [];
    const result = await execute(planned, context, (hook, current) => this.runOne(hook, event, current, sessionId, askAgentPrompts), {
      limiter: this.deps.limiter,
    });
    const combined = askAgentPrompts.length > 0 ? { ...result, systemMessages: [...result.systemMessages, ...askAgentPrompts] } : result;
    this.last.set(event, this.deps.redact ? redactTexts(combined, this.deps.redact) : combined);
    await this.deps.trace.record(event, combined.outcomes);
    for (const outcome of combined.outcomes) {
      if (outcome.status === 'failed') this.deps.log.warn(`hook ${outcome.hook.id} failed on ${event} (${outcome.failure}): ${outcome.message ?? ''}`);
    }
    return combined;
  }

  private async runOne(hook: HookDefinition, event: EventName, context: Context, sessionId: string | undefined, prompts: string[]): Promise<RunResult | HookSkip> {
    const trust = await this.deps.trust();
    const verdict = await trust.check(trustSubject(hook));
    if (!verdict.trusted) {
      return { status: 'skipped', failure: 'untrusted', message: `Hook "${hook.id}" did not run: ${verdict.reason ?? 'it is not approved'}` };
    }
    if (hook.action.type === 'askAgent') {
      const started = performance.now();
      const prompt = renderTemplate(hook.action.prompt, askAgentValues(event, context));
      const taken = await this.askAgent.promise({ hook: { id: hook.id, name: hook.name, source: hook.source }, event, prompt, context });
      if (taken !== true) prompts.push(prompt);
      return { ok: true, response: { allow: true }, durationMs: performance.now() - started, stderrTail: '' };
    }
    return this.deps.runner.run(hook, buildInput(hook, subscribedSpelling(hook, event), context, sessionId));
  }
}

/**
 * What the trust plugin fingerprints: the definition (not where in a file it
 * sits) and, for a command hook, what it runs (`runs`: the trust plugin
 * covers every file or folder its command and arguments name).
 */
export function trustSubject(hook: HookDefinition): TrustSubject {
  const { origin: _origin, action, cwd, ...rest } = hook;
  if (action.type !== 'command') {
    return { kind: 'hook', id: hook.id, source: hook.source, definition: { ...rest, action, cwd }, files: [], summary: `askAgent: ${action.prompt.slice(0, 200)} (from ${hook.origin})` };
  }
  return {
    kind: 'hook',
    id: hook.id,
    source: hook.source,
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
