/**
 * What a Claude Code, Codex CLI or Gemini CLI hook's run means, read as its peer reads it, as
 * plinth's hook result (each event's rules in events.ts: ADVISORY, EXIT_2, CONTINUE_IGNORED,
 * PLAIN_TEXT_CONTEXT; Codex CLI reads Claude Code's answers, and refuses some: see `codexRefusal`):
 *
 * - exit 0: stdout is one JSON object (pretty-printed over several lines is fine) with the peer's
 *   fields; empty stdout is no decision; other text is added context where the peer adds it
 *   (Claude Code: `UserPromptSubmit`, `UserPromptExpansion`, `SessionStart`, `PostModelSwitch`), a
 *   message to the user in Gemini CLI, and nothing elsewhere. Claude Code's `WorktreeCreate`: the
 *   last line that is not empty is the path of the working copy the hook made.
 * - exit 2: a block, stderr the reason; on the events the peer never blocks a message, or nothing
 *   where the peer drops it (`Notification`, `PermissionRequest`, `PermissionDenied`, …); on
 *   Claude Code's PostToolUse and PostToolUseFailure (the tool already ran) context for the model;
 *   on `Elicitation`/`ElicitationResult` a decline.
 * - any other exit, a timeout, a crash: a failure of the hook, which its `onError` decides
 *   (`allow` unless the definition says `block`: the peers go on). Except Claude Code's
 *   `WorktreeCreate` (any non-zero exit fails the creation) and `PreModelSwitch` (a time-out
 *   blocks the switch).
 *
 * JSON fields → plinth: `decision` `block`/`deny` blocks with `reason`; `approve`/`allow` allows;
 * `hookSpecificOutput.permissionDecision` (which wins over `decision`) `deny` blocks with
 * `permissionDecisionReason`, `allow` allows, `ask` asks the host (`approval_request`), `defer`
 * allows and asks the host to pause (`host.defer`); on `PermissionRequest` only
 * `hookSpecificOutput.decision.behavior` decides (`allow`: context `approved: true`);
 * `continue: false` blocks, stops the hooks after it and asks the host to end the agent loop
 * (`host.stop`), `stopReason` the message; `systemMessage` is a message to the user;
 * `additionalContext` goes to the model (plinth's `systemMessage`); `updatedInput` (Claude Code:
 * replaces the tool input) and `tool_input` (Gemini CLI: merged over it) rewrite the context's
 * `args`; Gemini CLI's `llm_request` (merged), `llm_response` and `toolConfig` rewrite `request`,
 * `response` and `toolConfig`; the outputs only a host can act on (`updatedPermissions`, `retry`,
 * `updatedToolOutput`, `sessionTitle`, `worktreePath`, `tailToolCallRequest`, `clearContext`, …)
 * go to the result's `host` (see `directives`). `suppressOutput` changes nothing: plinth never
 * shows a hook's stdout.
 */
import { z } from 'zod';
import { dropPrototypeKeys, isPlainObject } from '../protocol.js';
import { type Outcome, hookLabel, toRunResult } from '../runner/outcome.js';
import { decodeUtf8 } from '../runner/output.js';
import type { HookDefinition, HookResponse, PeerHookInput, RunResult } from '../types.js';
import type { HostDirectives } from 'plinth/sdk';
import { ADVISORY, CONTINUE_IGNORED, EXIT_2, PLAIN_TEXT_CONTEXT, peerLabel } from './events.js';

const plainObject = z.custom<Record<string, unknown>>(isPlainObject, { error: 'expected an object' });

const peerOutputSchema = z.looseObject({
  continue: z.boolean({ error: 'expected true or false' }).optional(),
  stopReason: z.string({ error: 'expected a string' }).optional(),
  suppressOutput: z.boolean({ error: 'expected true or false' }).optional(),
  systemMessage: z.string({ error: 'expected a string' }).optional(),
  decision: z.enum(['approve', 'block', 'allow', 'deny', 'ask'], { error: 'expected "approve", "block", "allow", "deny" or "ask"' }).optional(),
  reason: z.string({ error: 'expected a string' }).optional(),
  hookSpecificOutput: z
    .looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: z.enum(['allow', 'deny', 'ask', 'defer'], { error: 'expected "allow", "deny", "ask" or "defer"' }).optional(),
      permissionDecisionReason: z.string({ error: 'expected a string' }).optional(),
      updatedInput: plainObject.optional(),
      tool_input: plainObject.optional(),
      additionalContext: z.string({ error: 'expected a string' }).optional(),
      llm_request: plainObject.optional(),
      llm_response: plainObject.optional(),
      toolConfig: plainObject.optional(),
      // Claude Code's PermissionRequest answers with an object here (its top-level `decision` is a word).
      decision: z
        .looseObject({
          behavior: z.enum(['allow', 'deny'], { error: 'expected "allow" or "deny"' }),
          updatedInput: plainObject.optional(),
          updatedPermissions: z.array(plainObject, { error: 'expected a list of permission update entries' }).optional(),
          message: z.string({ error: 'expected a string' }).optional(),
          interrupt: z.boolean({ error: 'expected true or false' }).optional(),
        })
        .optional(),
      retry: z.boolean({ error: 'expected true or false' }).optional(),
      updatedToolOutput: z.unknown().optional(),
      updatedMCPToolOutput: z.unknown().optional(),
      sessionTitle: z.string({ error: 'expected a string' }).optional(),
      worktreePath: z.string({ error: 'expected a string' }).optional(),
      tailToolCallRequest: z.looseObject({ name: z.string({ error: 'expected a string' }), args: plainObject.optional() }).optional(),
      clearContext: z.boolean({ error: 'expected true or false' }).optional(),
      action: z.enum(['accept', 'decline', 'cancel'], { error: 'expected "accept", "decline" or "cancel"' }).optional(),
      content: plainObject.optional(),
      displayContent: z.string({ error: 'expected a string' }).optional(),
      watchPaths: z.array(z.string(), { error: 'expected a list of paths' }).optional(),
    })
    .optional(),
});

type PeerOutput = z.infer<typeof peerOutputSchema>;

/** One run of a peer hook as plinth's run result. */
export function peerRunResult(
  hook: Pick<HookDefinition, 'id' | 'name'>,
  input: PeerHookInput,
  outcome: Outcome,
  facts: { readonly durationMs: number; readonly stderrTail: string },
): RunResult {
  const ok = (response: HookResponse, exitCode: number): RunResult => ({ ok: true, response, durationMs: facts.durationMs, stderrTail: facts.stderrTail, exitCode });
  const advisory = ADVISORY[input.protocol].has(input.canonical);
  const event = input.canonical;
  const claude = input.protocol === 'claude';
  if (claude && event === 'worktree_create' && outcome.kind === 'exit') {
    // WorktreeCreate: any non-zero exit fails the creation (the hook replaces the host's own way of making one).
    return ok({ allow: false, message: facts.stderrTail.trim() || `${hookLabel(hook)} exited with code ${outcome.code}: no working copy was made` }, outcome.code);
  }
  if (claude && event === 'before_model_switch' && outcome.kind === 'timeout') {
    // PreModelSwitch: a hook that reaches its time limit blocks the switch (Claude Code's reference).
    return { ok: true, response: { allow: false, message: `${hookLabel(hook)} did not answer within ${outcome.afterMs} ms: the model switch is blocked` }, durationMs: facts.durationMs, stderrTail: facts.stderrTail };
  }
  if (outcome.kind === 'exit' && outcome.code === 2) {
    // Codex CLI's PermissionRequest: exit 2 denies with stderr the reason; with nothing on stderr the run fails.
    if (input.protocol === 'codex' && event === 'approval_request' && facts.stderrTail.trim() === '') {
      return { ok: false, failure: 'exit_nonzero', message: `${hookLabel(hook)} exited with code 2 but wrote no denial reason to stderr (Codex CLI's PermissionRequest needs one)`, durationMs: facts.durationMs, stderrTail: facts.stderrTail, exitCode: 2 };
    }
    const reason = facts.stderrTail.trim() || `${hookLabel(hook)} exited with code 2`;
    // Kept for an asyncRewake hook, whose message is its stdout when stderr is empty (Claude Code's rule).
    const stdout = outcome.stdoutTail?.trim();
    if (stdout) {
      const ran = peerRunResult(hook, input, { kind: 'exit', code: 2 }, facts);
      return ran.ok ? { ...ran, response: { ...ran.response, metadata: { ...ran.response.metadata, stdout } } } : ran;
    }
    const rule = EXIT_2[input.protocol][event] ?? (advisory ? 'message' : 'block');
    if (rule === 'failure') return toRunResult(hook, outcome, facts);
    if (rule === 'ignored') return ok({ allow: true }, 2);
    if (rule === 'message') return ok({ allow: true, message: reason }, 2);
    if (rule === 'feedback') return ok({ allow: true, systemMessage: reason }, 2);
    // Elicitation: exit 2 declines the request; ElicitationResult: the answer becomes "decline".
    if (claude && (event === 'elicitation' || event === 'elicitation_result')) return ok({ allow: false, message: reason, host: { elicitation: { action: 'decline' } } }, 2);
    return ok({ allow: false, message: reason }, 2);
  }
  if (outcome.kind !== 'output') return toRunResult(hook, outcome, facts);
  const text = decodeUtf8(outcome.bytes);
  if (text === undefined) return toRunResult(hook, outcome, facts); // reports binary output as such
  const trimmed = text.trim();
  if (claude && event === 'worktree_create' && !trimmed.startsWith('{')) return ok(worktreePathOf(hook, trimmed), 0);
  if (trimmed === '') return ok({ allow: true }, 0);
  const parsed = parseObject(trimmed);
  if (parsed === undefined) {
    // Codex CLI fails a hook whose stdout is not JSON where it reads only JSON (SubagentStart), or looks like JSON but is not (PermissionRequest).
    const codexJsonOnly = input.protocol === 'codex' && (event === 'subagent_start' || (event === 'approval_request' && /^[{[]/.test(trimmed)));
    if (codexJsonOnly) return { ok: false, failure: 'invalid_output', message: `${hookLabel(hook)} answered with an invalid ${peerLabel(input.protocol)} ${input.event} hook output: not a JSON object`, durationMs: facts.durationMs, stderrTail: facts.stderrTail, exitCode: 0 };
    return ok(plainText(input, trimmed), 0);
  }
  const output = peerOutputSchema.safeParse(parsed);
  const problems = output.success ? (input.protocol === 'codex' ? codexRefusal(input, output.data) : undefined) : output.error.issues.map((i) => `"${i.path.join('.')}": ${i.message}`).join('; ');
  if (!output.success || problems !== undefined) {
    return { ok: false, failure: 'invalid_output', message: `${hookLabel(hook)} answered with an invalid ${peerLabel(input.protocol)} hook output: ${problems}`, durationMs: facts.durationMs, stderrTail: facts.stderrTail, exitCode: 0 };
  }
  return ok(interpret(input, output.data, advisory), 0);
}

/** Claude Code's PostToolUse and PostToolUseFailure: a block cannot undo the call; it is feedback for the model (Gemini CLI's AfterTool "deny" does withhold the result). */
function feedsBack(input: PeerHookInput): boolean {
  return EXIT_2[input.protocol][input.canonical] === 'feedback';
}

/** A command hook's answer to WorktreeCreate: the last line of stdout that is not empty (escape codes removed) is where it made the working copy. */
function worktreePathOf(hook: Pick<HookDefinition, 'id' | 'name'>, text: string): HookResponse {
  // eslint-disable-next-line no-control-regex
  const lines = text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
  const path = lines.at(-1);
  if (path === undefined) return { allow: false, message: `${hookLabel(hook)} printed no path: no working copy was made (a WorktreeCreate hook prints the path it made as its last line)` };
  return { allow: true, host: { worktreePath: path } };
}

/**
 * What Codex CLI refuses in an answer it otherwise reads as Claude Code's: it counts the hook as
 * failed (the peers go on: the hook's `onError`, `allow` by default), so plinth does too. On
 * PreToolUse: `continue: false`, `stopReason`, `suppressOutput`, `decision: "approve"`,
 * `permissionDecision: "ask"`, an `allow` without `updatedInput` (Codex lets its own approval
 * decide), `updatedInput` without `allow`, a deny or block without a reason, a reason without a
 * decision; on PostToolUse `suppressOutput`; on any event a `"block"` without a reason.
 */
function codexRefusal(input: PeerHookInput, out: PeerOutput): string | undefined {
  const specific = out.hookSpecificOutput;
  const blank = (text: string | undefined) => text === undefined || text.trim() === '';
  const event = input.event;
  if (input.canonical === 'before_tool') {
    if (out.continue === false) return `${event} hook returned unsupported continue:false`;
    if (out.stopReason !== undefined) return `${event} hook returned unsupported stopReason`;
    if (out.suppressOutput === true) return `${event} hook returned unsupported suppressOutput`;
    const modern = specific !== undefined && (specific.permissionDecision !== undefined || specific.permissionDecisionReason !== undefined || specific.updatedInput !== undefined);
    if (modern) {
      const decision = specific.permissionDecision;
      if (specific.updatedInput !== undefined && decision !== 'allow') return `${event} hook returned updatedInput without permissionDecision:allow`;
      if (decision === 'allow' && specific.updatedInput === undefined) return `${event} hook returned unsupported permissionDecision:allow`;
      if (decision === 'ask') return `${event} hook returned unsupported permissionDecision:ask`;
      if (decision === 'deny' && blank(specific.permissionDecisionReason)) return `${event} hook returned permissionDecision:deny without a non-empty permissionDecisionReason`;
      if (decision === undefined) return `${event} hook returned permissionDecisionReason without permissionDecision`;
      return undefined;
    }
    if (out.decision === 'approve' || out.decision === 'allow') return `${event} hook returned unsupported decision:${out.decision}`;
    if (out.decision === undefined && out.reason !== undefined) return `${event} hook returned reason without decision`;
  }
  if (input.canonical === 'approval_request') {
    // PermissionRequest: no flow control, and only `behavior` and `message` in the decision (the rest is reserved: Codex fails the hook).
    if (out.continue === false) return `${event} hook returned unsupported continue:false`;
    if (out.stopReason !== undefined) return `${event} hook returned unsupported stopReason`;
    if (out.suppressOutput === true) return `${event} hook returned unsupported suppressOutput`;
    const decision = specific?.decision;
    if (decision?.updatedInput !== undefined) return `${event} hook returned unsupported updatedInput`;
    if (decision?.updatedPermissions !== undefined) return `${event} hook returned unsupported updatedPermissions`;
    if (decision?.interrupt === true) return `${event} hook returned unsupported interrupt:true`;
    return undefined;
  }
  if (input.canonical === 'after_tool' && out.suppressOutput === true) return `${event} hook returned unsupported suppressOutput`;
  if ((out.decision === 'block' || out.decision === 'deny') && blank(out.reason)) return `${event} hook returned decision:block without a non-empty reason`;
  return undefined;
}

/** The JSON object `text` is, or undefined when it is not one (then it is plain text, as the peers read it). */
function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text, dropPrototypeKeys);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function plainText(input: PeerHookInput, text: string): HookResponse {
  if (input.protocol === 'gemini') return { allow: true, message: text };
  // Claude Code adds a hook's plain stdout to the context on a few events only (UserPromptSubmit, UserPromptExpansion, SessionStart, PostModelSwitch).
  if (PLAIN_TEXT_CONTEXT.has(input.canonical)) return { allow: true, systemMessage: text };
  return { allow: true };
}

function interpret(input: PeerHookInput, out: PeerOutput, advisory: boolean): HookResponse {
  const specific = out.hookSpecificOutput ?? {};
  const event = input.canonical;
  // Claude Code's and Codex CLI's PermissionRequest.
  const permissionEvent = input.protocol !== 'gemini' && event === 'approval_request';
  // The hook-specific permission decision wins over the older top-level `decision`; PermissionRequest's is an object.
  const permission = permissionEvent ? specific.decision : undefined;
  const [decision, why] =
    permissionEvent
      ? // PermissionRequest: only the decision object grants or denies (a top-level "block" is no answer); Codex's deny has a default message.
        [permission?.behavior, permission?.message ?? (input.protocol === 'codex' ? 'PermissionRequest hook denied approval' : out.reason)]
      : specific.permissionDecision !== undefined
        ? [specific.permissionDecision, specific.permissionDecisionReason ?? out.reason]
        : [out.decision, out.reason];
  const defer = decision === 'defer' && event === 'before_tool';
  // Elicitation: "decline" or "cancel" answers the server for the user; it is no block of the event.
  const blocks = decision === 'block' || decision === 'deny';
  let allow = !blocks;
  let reason = blocks ? (why ?? `the hook decided "${decision}"`) : undefined;
  let approval: { reason?: string } | undefined = decision === 'ask' ? (why === undefined ? {} : { reason: why }) : undefined;
  const stop = out.continue === false && !CONTINUE_IGNORED[input.protocol].has(event);
  if (stop) {
    allow = false;
    reason = out.stopReason ?? reason ?? 'the hook stopped the agent (continue: false)';
  }
  if (advisory) {
    // The peer ignores flow control here: what would have blocked is only said.
    allow = true;
    approval = undefined;
  }
  let feedback: string | undefined;
  if (!allow && !stop && feedsBack(input)) {
    // Claude Code's PostToolUse "block": the tool already ran and its result stays; the reason goes to the model.
    allow = true;
    feedback = reason;
    reason = undefined;
  }
  const messages = [...(reason !== undefined ? [reason] : []), ...(out.systemMessage !== undefined ? [out.systemMessage] : [])];
  const context = rewrites(input, specific, permission);
  const host = directives(input, out, { stop, defer, permission });
  return {
    allow,
    ...(messages.length > 0 && { message: messages.join('\n') }),
    ...((specific.additionalContext !== undefined || feedback !== undefined) && { systemMessage: [feedback, specific.additionalContext].filter((t) => t !== undefined).join('\n') }),
    ...(context && { context }),
    ...(stop && !advisory && { continue: false }),
    ...(approval && allow && { approval }),
    ...(host && { host }),
    metadata: { protocol: input.protocol, ...(out.suppressOutput !== undefined && { suppressOutput: out.suppressOutput }) },
  };
}

/** What the answer asks the host to do beyond allow or block (the decision's `host`), read on the events where the peer reads each field; undefined when nothing. */
function directives(input: PeerHookInput, out: PeerOutput, read: { stop: boolean; defer: boolean; permission: NonNullable<PeerOutput['hookSpecificOutput']>['decision'] }): HostDirectives | undefined {
  const specific = out.hookSpecificOutput ?? {};
  const event = input.canonical;
  const host: HostDirectives = {};
  if (read.stop) host.stop = out.stopReason === undefined ? {} : { reason: out.stopReason };
  if (read.defer) host.defer = specific.permissionDecisionReason === undefined ? {} : { reason: specific.permissionDecisionReason };
  const p = read.permission;
  if (p !== undefined) {
    host.permission = { behavior: p.behavior };
    // updatedPermissions is read with "allow" only, message and interrupt with "deny" (Claude Code's reference; Codex refuses updatedPermissions and interrupt).
    if (p.behavior === 'allow' && p.updatedPermissions !== undefined) host.permission.updatedPermissions = p.updatedPermissions;
    if (p.behavior === 'deny' && p.message !== undefined) host.permission.message = p.message;
    if (p.behavior === 'deny' && p.interrupt !== undefined) host.permission.interrupt = p.interrupt;
  }
  if (input.protocol === 'claude') {
    if (event === 'permission_denied' && specific.retry === true) host.retry = true;
    if (event === 'after_tool') {
      const replaced = specific.updatedToolOutput ?? specific.updatedMCPToolOutput;
      if (replaced !== undefined) host.toolOutput = replaced;
    }
    if ((event === 'session_start' || event === 'before_agent') && specific.sessionTitle !== undefined) host.sessionTitle = specific.sessionTitle;
    if (event === 'worktree_create' && specific.worktreePath !== undefined) host.worktreePath = specific.worktreePath;
    if ((event === 'elicitation' || event === 'elicitation_result') && specific.action !== undefined) {
      host.elicitation = { action: specific.action, ...(specific.content !== undefined && { content: specific.content }) };
    }
    if (event === 'message_display' && specific.displayContent !== undefined) host.displayContent = specific.displayContent;
    if ((event === 'session_start' || event === 'cwd_change' || event === 'file_change') && specific.watchPaths !== undefined) host.watchPaths = specific.watchPaths;
  } else if (input.protocol === 'gemini') {
    if (event === 'after_tool' && specific.tailToolCallRequest !== undefined) host.tailToolCall = { name: specific.tailToolCallRequest.name, args: specific.tailToolCallRequest.args ?? {} };
    if (event === 'after_agent' && specific.clearContext === true) host.clearContext = true;
  }
  return Object.keys(host).length > 0 ? host : undefined;
}

/** The context fields a peer's answer rewrites, or undefined when it rewrites none. */
function rewrites(input: PeerHookInput, specific: NonNullable<PeerOutput['hookSpecificOutput']>, permission: NonNullable<PeerOutput['hookSpecificOutput']>['decision']): Record<string, unknown> | undefined {
  const changes: Record<string, unknown> = {};
  const argsKey = input.context.args === undefined && input.context.input !== undefined ? 'input' : 'args';
  const current = isPlainObject(input.context[argsKey]) ? (input.context[argsKey] as Record<string, unknown>) : {};
  if (input.canonical === 'before_tool') {
    if (specific.updatedInput !== undefined) changes[argsKey] = specific.updatedInput;
    if (specific.tool_input !== undefined) changes[argsKey] = { ...current, ...specific.tool_input };
  }
  if (permission?.behavior === 'allow') {
    // PermissionRequest "allow" answers the prompt: `approved`, as a host answers approval_request; its updatedInput replaces the call's input.
    changes.approved = true;
    if (permission.updatedInput !== undefined) changes[argsKey] = permission.updatedInput;
  }
  if (input.protocol === 'gemini') {
    if (specific.llm_request !== undefined) {
      const request = isPlainObject(input.context.request) ? input.context.request : {};
      changes.request = { ...request, ...specific.llm_request };
    }
    if (specific.llm_response !== undefined) changes.response = specific.llm_response;
    if (specific.toolConfig !== undefined) changes.toolConfig = specific.toolConfig;
  }
  return Object.keys(changes).length > 0 ? changes : undefined;
}
