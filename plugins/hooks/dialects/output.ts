/**
 * What a Claude Code, Codex CLI or Gemini CLI hook's run means, read as its peer reads it, as
 * plinth's hook result (Codex CLI reads Claude Code's answers, and refuses some: see `codexRefusal`):
 *
 * - exit 0: stdout is one JSON object (pretty-printed over several lines is fine) with the peer's
 *   fields; empty stdout is no decision; other text is added context where the peer adds it
 *   (Claude Code: `UserPromptSubmit`, `SessionStart`), a message to the user in Gemini CLI, and
 *   nothing elsewhere.
 * - exit 2: a block, stderr the reason; on the events the peer never blocks (session start and
 *   end, compression, notifications) a message; on Claude Code's PostToolUse (the tool already
 *   ran) context for the model.
 * - any other exit, a timeout, a crash: a failure of the hook, which its `onError` decides
 *   (`allow` unless the definition says `block`: the peers go on).
 *
 * JSON fields → plinth: `decision` `block`/`deny` blocks with `reason`; `approve`/`allow` allows;
 * `hookSpecificOutput.permissionDecision` (which wins over `decision`) `deny` blocks with
 * `permissionDecisionReason`, `allow` allows, `ask` asks the host (`approval_request`);
 * `continue: false` blocks and stops the hooks after it, `stopReason` the message; `systemMessage`
 * is a message to the user; `additionalContext` goes to the model (plinth's `systemMessage`);
 * `updatedInput` (Claude Code: replaces the tool input) and `tool_input` (Gemini CLI: merged over
 * it) rewrite the context's `args`; Gemini CLI's `llm_request` (merged), `llm_response` and
 * `toolConfig` rewrite `request`, `response` and `toolConfig`. `suppressOutput` changes nothing:
 * plinth never shows a hook's stdout.
 */
import { z } from 'zod';
import { dropPrototypeKeys, isPlainObject } from '../protocol.js';
import { type Outcome, hookLabel, toRunResult } from '../runner/outcome.js';
import { decodeUtf8 } from '../runner/output.js';
import type { HookDefinition, HookResponse, PeerHookInput, RunResult } from '../types.js';
import { ADVISORY, peerLabel } from './events.js';

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
      permissionDecision: z.enum(['allow', 'deny', 'ask'], { error: 'expected "allow", "deny" or "ask"' }).optional(),
      permissionDecisionReason: z.string({ error: 'expected a string' }).optional(),
      updatedInput: plainObject.optional(),
      tool_input: plainObject.optional(),
      additionalContext: z.string({ error: 'expected a string' }).optional(),
      llm_request: plainObject.optional(),
      llm_response: plainObject.optional(),
      toolConfig: plainObject.optional(),
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
  if (outcome.kind === 'exit' && outcome.code === 2) {
    const reason = facts.stderrTail.trim() || `${hookLabel(hook)} exited with code 2`;
    if (advisory) return ok({ allow: true, message: reason }, 2);
    if (feedsBack(input)) return ok({ allow: true, systemMessage: reason }, 2);
    return ok({ allow: false, message: reason }, 2);
  }
  if (outcome.kind !== 'output') return toRunResult(hook, outcome, facts);
  const text = decodeUtf8(outcome.bytes);
  if (text === undefined) return toRunResult(hook, outcome, facts); // reports binary output as such
  const trimmed = text.trim();
  if (trimmed === '') return ok({ allow: true }, 0);
  const parsed = parseObject(trimmed);
  if (parsed === undefined) return ok(plainText(input, trimmed), 0);
  const output = peerOutputSchema.safeParse(parsed);
  const problems = output.success ? (input.protocol === 'codex' ? codexRefusal(input, output.data) : undefined) : output.error.issues.map((i) => `"${i.path.join('.')}": ${i.message}`).join('; ');
  if (!output.success || problems !== undefined) {
    return { ok: false, failure: 'invalid_output', message: `${hookLabel(hook)} answered with an invalid ${peerLabel(input.protocol)} hook output: ${problems}`, durationMs: facts.durationMs, stderrTail: facts.stderrTail, exitCode: 0 };
  }
  return ok(interpret(input, output.data, advisory), 0);
}

/** Claude Code's and Codex CLI's PostToolUse: a block cannot undo the call; it is feedback for the model (Gemini CLI's AfterTool "deny" does withhold the result). */
function feedsBack(input: PeerHookInput): boolean {
  return input.protocol !== 'gemini' && input.canonical === 'after_tool';
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
  // Claude Code adds a hook's plain stdout to the context on these two events only.
  if (input.canonical === 'before_agent' || input.canonical === 'session_start') return { allow: true, systemMessage: text };
  return { allow: true };
}

function interpret(input: PeerHookInput, out: PeerOutput, advisory: boolean): HookResponse {
  const specific = out.hookSpecificOutput ?? {};
  // The hook-specific permission decision wins over the older top-level `decision`.
  const [decision, why] = specific.permissionDecision !== undefined ? [specific.permissionDecision, specific.permissionDecisionReason ?? out.reason] : [out.decision, out.reason];
  const blocks = decision === 'block' || decision === 'deny';
  let allow = !blocks;
  let reason = blocks ? (why ?? `the hook decided "${decision}"`) : undefined;
  let approval: { reason?: string } | undefined = decision === 'ask' ? (why === undefined ? {} : { reason: why }) : undefined;
  const stop = out.continue === false;
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
  const context = rewrites(input, specific);
  return {
    allow,
    ...(messages.length > 0 && { message: messages.join('\n') }),
    ...((specific.additionalContext !== undefined || feedback !== undefined) && { systemMessage: [feedback, specific.additionalContext].filter((t) => t !== undefined).join('\n') }),
    ...(context && { context }),
    ...(stop && !advisory && { continue: false }),
    ...(approval && allow && { approval }),
    metadata: { protocol: input.protocol, ...(out.suppressOutput !== undefined && { suppressOutput: out.suppressOutput }) },
  };
}

/** The context fields a peer's answer rewrites, or undefined when it rewrites none. */
function rewrites(input: PeerHookInput, specific: NonNullable<PeerOutput['hookSpecificOutput']>): Record<string, unknown> | undefined {
  const changes: Record<string, unknown> = {};
  const argsKey = input.context.args === undefined && input.context.input !== undefined ? 'input' : 'args';
  const current = isPlainObject(input.context[argsKey]) ? (input.context[argsKey] as Record<string, unknown>) : {};
  if (input.canonical === 'before_tool') {
    if (specific.updatedInput !== undefined) changes[argsKey] = specific.updatedInput;
    if (specific.tool_input !== undefined) changes[argsKey] = { ...current, ...specific.tool_input };
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
