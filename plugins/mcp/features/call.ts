/**
 * The tool wrapper: one call from arguments to a result the caller can show.
 *
 *   check arguments → before_tool (may block, may rewrite `args`: checked again)
 *   → tools/call with the per-call timeout, the caller's signal and progress
 *   → check the result (shape, output schema) → after_tool (sees the result;
 *   may withhold it) → ToolCallResult
 *
 * Every failure is a result with `ok: false` and a PLN_E_MCP_… code; nothing
 * here throws. The request goes through `client.request` (the SDK checks the
 * result's shape against the spec's schema) rather than `client.callTool`, so
 * that a result failing the tool's output schema is told apart from an error
 * the server sent (the SDK's `callTool` reports both as `ProtocolError`), and
 * so that output schemas of every page of a paginated `tools/list` are
 * honoured. (At 2026-07-28, `callTool` also adds the `Mcp-Param-*` headers of
 * a tool's `x-mcp-header` annotations: plinth will have to add them itself.)
 */
import type { Client, CallToolResult } from '@modelcontextprotocol/client';
import type { Decision, Logger } from 'plinth/sdk';
import type { CallOptions, ToolCallResult } from 'plinth/sdk';
import { withCallOrigin } from '../origin.js';
import { classifyError } from './classify.js';
import { formatToolResult } from './format.js';
import { MCP_CODES, failedResult, type Failure } from './result.js';
import type { JsonSchema } from './schema.js';
import type { FeatureDeps, RegisteredTool } from './types.js';
import { compileSchema } from './validate.js';

/** What the wrapper needs from the server it calls. */
export interface CallContext {
  readonly client: Client;
  readonly server: string;
  readonly emit: FeatureDeps['emit'];
  readonly log: Logger;
  readonly redact: (text: string) => string;
  readonly defaultTimeoutMs: number;
  /** Why the server is gone, once it is. */
  readonly detachedReason: () => string | undefined;
}

// after_tool hooks get the result as text; a multi-megabyte tool output need not be copied into every hook's stdin.
const SUMMARY_TEXT_LIMIT = 100_000;

/** Calls one registered tool. Never throws. */
export async function callRegisteredTool(
  entry: RegisteredTool,
  args: unknown,
  options: CallOptions | undefined,
  context: CallContext,
): Promise<ToolCallResult> {
  const startedAt = Date.now();
  try {
    return await runCall(entry, args, options, context, startedAt);
  } catch (error) {
    // A bug of ours or of a caller's callback, not the server's: still a result.
    const message = context.redact(error instanceof Error ? error.message : String(error));
    context.log.error(`tool "${entry.tool.name}": unexpected failure: ${message}`);
    return failedResult({ code: MCP_CODES.serverError, message: `tool "${entry.tool.name}" failed inside plinth: ${message}` }, startedAt);
  }
}

async function runCall(entry: RegisteredTool, args: unknown, options: CallOptions | undefined, context: CallContext, startedAt: number): Promise<ToolCallResult> {
  const { tool } = entry;
  const fail = (failure: Failure, partial?: Pick<ToolCallResult, 'content' | 'structuredContent'>) =>
    failedResult({ code: failure.code, message: context.redact(failure.message) }, startedAt, partial);

  const invalid = await argumentProblems(entry, args, `invalid arguments for tool "${tool.name}"`);
  if (invalid) return fail(invalid);

  let decision: Decision;
  try {
    decision = await context.emit('before_tool', { tool: tool.name, server: tool.server, args });
  } catch (error) {
    return fail({ code: MCP_CODES.blocked, message: `tool "${tool.name}" was not called: before_tool could not be decided (${error instanceof Error ? error.message : String(error)})` });
  }
  if (!decision.allow) return fail({ code: MCP_CODES.blocked, message: `tool "${tool.name}" was blocked by ${describeBlock('before_tool', decision)}` });

  let callArgs = args as Record<string, unknown>;
  const rewritten = decision.context.args;
  if (rewritten !== undefined && rewritten !== args) {
    const problem = await argumentProblems(entry, rewritten, `the arguments a before_tool handler gave tool "${tool.name}" are invalid`);
    if (problem) return fail(problem);
    callArgs = rewritten as Record<string, unknown>;
  }

  if (entry.taskSupport === 'required') {
    return fail({ code: MCP_CODES.serverError, message: `tool "${tool.name}" runs only as an MCP task, which plinth does not support yet` });
  }
  const gone = context.detachedReason();
  if (gone !== undefined) return fail({ code: MCP_CODES.disconnected, message: `server "${tool.server}" is not connected (${gone}); tool "${tool.name}" was not called` });

  const outcome = await send(entry, callArgs, options, context);
  let result: ToolCallResult;
  if ('failure' in outcome) result = fail(outcome.failure);
  else {
    const resultProblem = await checkResult(entry, outcome.result);
    const structured = structuredObject(outcome.result.structuredContent);
    const partial = { content: outcome.result.content, ...(structured && { structuredContent: structured }) };
    result = resultProblem
      ? fail({ code: MCP_CODES.resultInvalid, message: `server "${tool.server}" sent an invalid result for tool "${tool.name}": ${resultProblem}` }, partial)
      : {
          ok: true,
          isError: outcome.result.isError === true,
          ...partial,
          text: formatToolResult(outcome.result),
          durationMs: Date.now() - startedAt,
        };
  }
  return afterTool(entry, callArgs, result, context, startedAt);
}

/** The argument problems as a failure, or undefined when the arguments are valid (or the schema cannot be compiled). */
async function argumentProblems(entry: RegisteredTool, args: unknown, lead: string): Promise<Failure | undefined> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { code: MCP_CODES.argsInvalid, message: `${lead}: the arguments must be a JSON object` };
  }
  const compiled = await compileSchema(entry.tool.inputSchema as JsonSchema, entry.dialect);
  if (!('check' in compiled)) return undefined; // the server will judge; attachFeatures logged why
  const problems = compiled.check(args);
  return problems.length === 0 ? undefined : { code: MCP_CODES.argsInvalid, message: `${lead}:\n  - ${problems.join('\n  - ')}` };
}

type Sent = { result: CallToolResult } | { failure: Failure };

/** tools/call with the timeout, the caller's signal and progress; a rejection becomes a failure. */
async function send(entry: RegisteredTool, args: Record<string, unknown>, options: CallOptions | undefined, context: CallContext): Promise<Sent> {
  const { tool } = entry;
  const asked = options?.timeoutMs;
  const timeoutMs = asked !== undefined && Number.isFinite(asked) && asked > 0 ? asked : context.defaultTimeoutMs;
  const situation = { what: `tool "${tool.name}"`, server: tool.server, timeoutMs, redact: context.redact };
  const signal = options?.signal;
  if (signal?.aborted) return { failure: classifyError(signal.reason, { ...situation, callerAborted: true }) };
  // A signal of our own per call (only when the caller has one: each costs the SDK a listener): the SDK
  // never removes the listener it adds, so a long-lived caller signal would collect one per call.
  const controller = signal ? new AbortController() : undefined;
  const onAbort = () => controller?.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Sent inside the caller's origin: what the server sends along this call (its stream) carries it to the request handlers.
    const request = () => context.client.request({ method: 'tools/call', params: { name: tool.tool, arguments: args } }, {
      timeout: timeoutMs,
      maxTotalTimeout: timeoutMs,
      ...(controller && { signal: controller.signal }),
      onprogress: (progress) => {
        const text = `${progress.progress}${progress.total !== undefined ? `/${progress.total}` : ''}${progress.message ? ` ${progress.message}` : ''}`;
        context.log.info(context.redact(`tool "${tool.name}" progress: ${text}`));
        try {
          options?.onProgress?.({ progress: progress.progress, ...(progress.total !== undefined && { total: progress.total }), ...(progress.message !== undefined && { message: progress.message }) });
        } catch (error) {
          context.log.warn(`tool "${tool.name}": the caller's onProgress failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      },
    });
    const result = await (options?.origin !== undefined ? withCallOrigin(options.origin, request) : request());
    return { result };
  } catch (error) {
    return { failure: classifyError(error, { ...situation, callerAborted: signal?.aborted === true }) };
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The result's `structuredContent` when it is a JSON object, as the 2025-11-25 wire requires (the SDK
 * types it `unknown`: the 2026-07-28 revision allows any JSON value there, which ToolCallResult does not carry yet).
 */
function structuredObject(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** What is wrong with a parsed result: an output schema it does not meet. */
async function checkResult(entry: RegisteredTool, result: CallToolResult): Promise<string | undefined> {
  if (!entry.outputSchema || result.isError === true) return undefined;
  if (result.structuredContent === undefined) return 'the tool declares an output schema but the result has no structuredContent';
  const compiled = await compileSchema(entry.outputSchema as JsonSchema, entry.outputDialect);
  if (!('check' in compiled)) return undefined;
  const problems = compiled.check(result.structuredContent);
  return problems.length === 0 ? undefined : `structuredContent does not match the output schema: ${problems.join('; ')}`;
}

/** after_tool sees the result (as a summary); a block withholds it. */
async function afterTool(entry: RegisteredTool, args: Record<string, unknown>, result: ToolCallResult, context: CallContext, startedAt: number): Promise<ToolCallResult> {
  const { tool } = entry;
  const summary = {
    ok: result.ok,
    isError: result.isError,
    text: result.text.length > SUMMARY_TEXT_LIMIT ? `${result.text.slice(0, SUMMARY_TEXT_LIMIT)}…` : result.text,
    ...(result.structuredContent && { structuredContent: result.structuredContent }),
    ...(result.error && { error: result.error }),
    durationMs: result.durationMs,
  };
  try {
    const decision = await context.emit('after_tool', { tool: tool.name, server: tool.server, args, result: summary });
    if (!decision.allow) {
      return failedResult({ code: MCP_CODES.blocked, message: context.redact(`the result of tool "${tool.name}" was withheld by ${describeBlock('after_tool', decision)}`) }, startedAt);
    }
  } catch (error) {
    context.log.warn(`tool "${tool.name}": after_tool failed, the result stands: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { ...result, durationMs: Date.now() - startedAt };
}

/** `plugin "hooks" (user:no-rm): reason`. */
function describeBlock(event: string, decision: Decision): string {
  const { blockedBy, messages } = decision;
  if (!blockedBy) return `a ${event} handler${messages[0] ? `: ${messages[0]}` : ''}`;
  const reason = blockedBy.reason ?? messages[0];
  return `plugin "${blockedBy.plugin}"${blockedBy.by ? ` (${blockedBy.by})` : ''} on ${event}${reason ? `: ${reason}` : ''}${blockedBy.code ? ` [${blockedBy.code}]` : ''}`;
}
