/**
 * `plinth hooks validate`: everything a run would check, short of running.
 * Definitions that cannot be read (from the sources), then for each enabled
 * hook what the engine checks before it spawns anything: the trust state (an
 * approval or pin that no longer matches), the command against the whitelist,
 * the script and the working directory on disk; and per event, what the
 * planner refuses (dependency cycles) or ignores (a `dependsOn` naming no hook).
 */
import { type EventName, isGateEvent } from 'plinth/sdk';
import { trustSubject, unsupportedFix } from './engine.js';
import { plan } from './plan.js';
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
  /** Whether a host or plugin provides the `model` service: without it `prompt` and `agent` hooks cannot run. Unknown when absent. */
  readonly model?: boolean;
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
  // What a peer hook asks that plinth does not do yet: named, field by field.
  for (const hook of enabled) {
    for (const note of hook.notYet ?? []) warnings.push({ message: `${hook.origin}: hook "${hook.id}": ${note}`, hook: hook.id });
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
