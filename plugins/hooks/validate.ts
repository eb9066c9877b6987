/**
 * `plinth hooks validate`: everything a run would check, short of running.
 * Definitions that cannot be read (from the sources), then for each enabled
 * hook what the engine checks before it spawns anything: the trust state (an
 * approval or pin that no longer matches), the command against the whitelist,
 * the script and the working directory on disk; and per event, what the
 * planner refuses (dependency cycles) or ignores (a `dependsOn` naming no hook).
 */
import { type EventName, canonicalEvent, isGateEvent } from 'plinth/sdk';
import { peerEvent, peerNameOf } from './dialects/events.js';
import { trustSubject, unsupportedFix } from './engine.js';
import { plan } from './plan.js';
import { IF_EVENTS } from './matcher.js';
import { preflightHint } from './runner/outcome.js';
import type { TrustService } from 'plinth/sdk';
import type { HookDefinition, HookRunner, Strategy } from './types.js';

/** One finding: a problem (a run would fail or block) or a warning (a run goes on, without something). */
export interface ValidationIssue {
  /** Set on problems; warnings have none. */
  readonly code?: string;
  readonly message: string;
  readonly hint?: string;
  /** The hook's id, when the finding is about one hook. */
  readonly hook?: string;
  /** Why it cannot run, as a run would report it: `not_allowed`, `script_missing`, `untrusted`, … */
  readonly failure?: string;
  readonly event?: EventName;
}

export interface ValidationReport {
  readonly hooks: number;
  readonly problems: readonly ValidationIssue[];
  readonly warnings: readonly ValidationIssue[];
}

export interface ValidateInputs {
  readonly hooks: readonly HookDefinition[];
  /** What reading the definitions found. */
  readonly problems: readonly { readonly code: string; readonly message: string; readonly hint?: string | undefined }[];
  readonly runner: Pick<HookRunner, 'check'>;
  readonly trust: Pick<TrustService, 'inspect'>;
  readonly strategy: Strategy;
  /**
   * The events the host emits (setting `hostEvents`; `"plinth"` stands for {@link PLINTH_CLI_EVENTS}): each
   * enabled hook on none of them is a warning, since the host never fires it. Undefined: the host did not
   * say, and nothing is said.
   */
  readonly hostEvents?: readonly string[];
  /** Whether a host or plugin provides the `model` service: without it `prompt` and `agent` hooks cannot run. Unknown when absent. */
  readonly model?: boolean;
}

/**
 * The events plinth's own commands emit when plinth is the host: `plinth call` and the gateway
 * (`serve`) a tool call's `before_tool` and `after_tool` (and `approval_request` when a hook asks),
 * `plinth up` `file_change`, the git hook `git_commit`, the health plugin `notification`.
 * (`plinth hooks run <event>` fires any event by hand.)
 */
export const PLINTH_CLI_EVENTS: readonly EventName[] = ['before_tool', 'after_tool', 'approval_request', 'file_change', 'git_commit', 'notification'];

/** Warnings for the hooks a host that emits only `declared` never fires (and for names in `declared` that are no event). */
export function unfiredHooks(hooks: readonly HookDefinition[], declared: readonly string[]): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  const emitted = new Set<EventName>();
  for (const name of declared) {
    if (name === 'plinth') for (const event of PLINTH_CLI_EVENTS) emitted.add(event);
    else {
      const event = canonicalEvent(name) ?? peerAlias(name);
      if (event === undefined) warnings.push({ message: `plugins.hooks.settings.hostEvents: "${name}" is no event; it is ignored`, hint: 'use plinth\'s event names (before_tool, subagent_stop, …), a peer\'s (PreToolUse, …) or "plinth"' });
      else emitted.add(event);
    }
  }
  for (const hook of hooks) {
    const never = hook.events.filter((event) => !emitted.has(event));
    if (never.length === 0) continue;
    const names = never.map((event) => {
      const peer = hook.protocol === 'claude' || hook.protocol === 'gemini' ? peerNameOf(hook.protocol, event) : undefined;
      return peer === undefined ? event : `${event} (${peer})`;
    });
    warnings.push({
      message: `${hook.origin}: hook "${hook.id}" is on ${names.join(', ')}, which the host never emits (plugins.hooks.settings.hostEvents): it will never fire${never.length < hook.events.length ? ' there' : ''}`,
      hook: hook.id,
      event: never[0]!,
      hint: 'move it to an event the host emits, or remove it',
    });
  }
  return warnings;
}

/** plinth's event a peer's event name stands for (Claude Code's first: it names the most). */
function peerAlias(name: string): EventName | undefined {
  return peerEvent('claude', name) ?? peerEvent('gemini', name);
}

/** Checks every hook as a run would, without running any (and without asking or pinning anything). */
export async function validateHooks(inputs: ValidateInputs): Promise<ValidationReport> {
  const problems: ValidationIssue[] = inputs.problems.map((p) => ({ code: p.code, message: p.message, ...(p.hint && { hint: p.hint }) }));
  const warnings: ValidationIssue[] = [];
  const enabled = inputs.hooks.filter((hook) => hook.enabled);

  const checks = await Promise.all(enabled.map(async (hook) => ({ hook, ...(await checkHook(hook, inputs)) })));
  for (const { problem, warning } of checks) {
    if (problem) problems.push(problem);
    if (warning) warnings.push(warning);
  }
  if (inputs.hostEvents !== undefined) warnings.push(...unfiredHooks(enabled, inputs.hostEvents));
  // What a peer hook asks that plinth does not do yet: named, field by field.
  for (const hook of enabled) {
    for (const note of hook.notYet ?? []) warnings.push({ message: `${hook.origin}: hook "${hook.id}": ${note}`, hook: hook.id });
    // Honoured fields that make a hook do less than it seems to: said, never a problem.
    if (hook.if !== undefined && !hook.events.some((e) => IF_EVENTS.has(peerNameOf('claude', e) ?? ''))) {
      warnings.push({ message: `${hook.origin}: hook "${hook.id}" never runs: its "if" is tested only on tool events (PreToolUse, PostToolUse, …), as in Claude Code`, hook: hook.id, hint: 'remove "if", or move the hook to a tool event' });
    }
    if (hook.async !== undefined && hook.events.some(isGateEvent)) {
      warnings.push({ message: `${hook.origin}: hook "${hook.id}" runs in the background ("async"): it never blocks ${hook.events.filter(isGateEvent).join(', ')}; its answer only informs the next event`, hook: hook.id, hint: 'remove "async" for a hook that must guard the event' });
    }
  }

  for (const event of new Set(enabled.flatMap((hook) => hook.events))) {
    const planned = plan(
      enabled.filter((hook) => hook.events.includes(event)),
      inputs.strategy,
    );
    for (const failed of planned.failed) {
      problems.push({
        code: 'PLN_E_HOOK_UNRUNNABLE',
        message: `${failed.hook.origin}: ${failed.message}`,
        hook: failed.hook.id,
        failure: failed.failure,
        event,
        hint: 'break the cycle: remove one of the "dependsOn" entries named',
      });
    }
    for (const note of planned.notes) warnings.push({ message: `${event}: ${note}`, event });
  }
  return { hooks: inputs.hooks.length, problems, warnings };
}

async function checkHook(hook: HookDefinition, inputs: ValidateInputs): Promise<{ problem?: ValidationIssue; warning?: ValidationIssue }> {
  const unrunnable = (failure: string, detail: string, hint: string): ValidationIssue => ({
    code: 'PLN_E_HOOK_UNRUNNABLE',
    message: `${hook.origin}: hook "${hook.id}" cannot run: ${detail}`,
    hook: hook.id,
    failure,
    hint,
  });
  if (hook.unsupported !== undefined) {
    // Never runs: on a gate event it blocks every call it matches, so it is a problem there, a warning elsewhere.
    const finding = { message: `${hook.origin}: hook "${hook.id}" cannot run: ${hook.unsupported}`, hook: hook.id, failure: 'unsupported', hint: unsupportedFix(hook) };
    return hook.events.some(isGateEvent) ? { problem: { code: 'PLN_E_HOOK_UNRUNNABLE', ...finding } } : { warning: finding };
  }
  if ((hook.action.type === 'prompt' || hook.action.type === 'agent') && inputs.model === false) {
    // As a run would: a gate event is blocked, elsewhere the hook is skipped.
    const finding = {
      message: `${hook.origin}: hook "${hook.id}" cannot run: it is ${hook.action.type === 'agent' ? 'an "agent"' : 'a "prompt"'} hook and no host or plugin provides the \`model\` service`,
      hook: hook.id,
      failure: 'unsupported',
      hint: "the host provides the `model` service (sdk/contracts/model.ts: kernel.provide('model', { complete, agent })); or remove the hook, or set \"enabled\": false on it",
    };
    return hook.events.some(isGateEvent) ? { problem: { code: 'PLN_E_HOOK_UNRUNNABLE', ...finding } } : { warning: finding };
  }
  const cannot = hook.action.type === 'command' ? await inputs.runner.check(hook) : undefined;
  if (cannot) return { problem: unrunnable(cannot.failure, cannot.detail, preflightHint(cannot.failure)) };
  const verdict = await inputs.trust.inspect(trustSubject(hook));
  if (verdict.trusted) return {};
  const approve = verdict.approveCommand ?? `plinth hooks trust ${hook.id}`;
  if (verdict.level === 'pending' || (verdict.level === 'denied' && hook.source !== 'user')) {
    return {
      warning: {
        message: `${hook.origin}: hook "${hook.id}" (${hook.source}) has not been approved: it is skipped until it is`,
        hook: hook.id,
        failure: 'untrusted',
        hint: `review it, then: ${approve}`,
      },
    };
  }
  return { problem: unrunnable('untrusted', verdict.reason ?? 'its approval does not cover it as it is now', `review the change, then: ${approve}`) };
}
