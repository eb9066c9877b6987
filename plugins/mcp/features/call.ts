/**
 * The tool wrapper: one call from arguments to a result the caller can show.
 *
 *   check arguments → before_tool (may block, may rewrite `args`: checked again)
 *   → tools/call with the per-call timeout, the caller's signal and progress
 *   → check the result (shape, output schema) → after_tool (sees the result;
 *   may withhold it) → ToolCallResult
 *
 * Every failure is a result with `ok: false` and a PLN_E_MCP_… code; nothing
 * here throws. The request goes through `client.callTool` with the tool as
 * listed for `toolDefinition` (so that, at 2026-07-28 over streamable HTTP,
 * the SDK sends `Mcp-Name` and the `Mcp-Param-*` headers of its
 * `x-mcp-header` annotations), but WITHOUT its `outputSchema`: the SDK then
 * checks only the result's shape, and this wrapper checks the output schema
 * itself, so that a result failing it is told apart from an error the server
 * sent (the SDK's `callTool` reports both as `ProtocolError`), and so that
 * output schemas of every page of a paginated `tools/list` are honoured (the
 * SDK's own cache keeps the last page).
 *
 * At 2026-07-28 a call may take several rounds (`input_required`,
 * ./input-required.ts): the hooks run once per logical call, `before_tool`
 * before the first round, `after_tool` on the final result.
 */
import type { Client, CallToolResult } from '@modelcontextprotocol/client';
import type { Decision, Logger } from 'plinth/sdk';
import type { CallOptions, ToolCallResult } from 'plinth/sdk';
import type { InputRequiredAnswer } from 'plinth/sdk';
import { withCallOrigin } from '../origin.js';
import { classifyError, mcpErrorCode } from './classify.js';
import { DEFAULT_INPUT_ROUNDS as DEFAULT_ROUNDS, InputFailure, requestInRounds } from './input-required.js';
import { requestMeta } from './request-meta.js';
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
  /** Rounds of `input_required` answered per call before it fails (default DEFAULT_INPUT_ROUNDS). */
  readonly inputRounds?: number;
  /** The log level asked of a 2026-07-28 server when the caller gives none (the plugin's `serverLogLevel`). */
  readonly serverLogLevel?: string;
  /** Lists the server's tools again and gives this one (by the server's name) as now listed: for a -32020 (header mismatch). */
  readonly relist?: (tool: string) => Promise<RegisteredTool | undefined>;
  /** Calls handed back with `inputRequired` and not finished yet (see `continuationKey`); one map per server. */
  readonly continuations?: Map<string, Continuation>;
}

/** What the first round of a call handed back with `inputRequired` decided, for its continuation. */
export interface Continuation {
  /** The arguments sent (after `before_tool`). */
  readonly args: Record<string, unknown>;
  /** The `_meta` sent (trace context, log level), sent again. */
  readonly meta: Record<string, unknown> | undefined;
  readonly expiresAt: number;
}

// JSON-RPC error of a 2026-07-28 server whose Mcp-* headers do not match the body (HEADER_MISMATCH_ERROR_CODE).
const HEADER_MISMATCH = -32020;

// A continuation comes within the server's own patience for a round (the SDK's server shim allows 10 minutes).
const CONTINUATION_TTL_MS = 600_000;
const CONTINUATIONS_MAX = 1_000;

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

  const invalid = await argumentProblems(entry, args, `invalid arguments for tool "${tool.name}"`, context);
  if (invalid) return fail(invalid);

  // A continuation of a call this process handed back: its before_tool has run, its arguments are decided.
  const continuing = options?.inputResponses !== undefined || options?.requestState !== undefined ? takeContinuation(context, tool.name, args, options.requestState) : undefined;
  if (continuing) return finishCall(entry, args as Record<string, unknown>, continuing.args, continuing.meta, options, context, startedAt);

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
    const problem = await argumentProblems(entry, rewritten, `the arguments a before_tool handler gave tool "${tool.name}" are invalid`, context);
    if (problem) return fail(problem);
    callArgs = rewritten as Record<string, unknown>;
  }

  if (entry.taskSupport === 'required') {
    return fail({ code: MCP_CODES.serverError, message: `tool "${tool.name}" runs only as an MCP task, which plinth does not support yet` });
  }
  const meta = requestMeta(context.client, options, decision.context as { traceparent?: unknown; tracestate?: unknown }, { logLevel: context.serverLogLevel });
  return finishCall(entry, args as Record<string, unknown>, callArgs, meta, options, context, startedAt);
}

/** From the request on: the rounds, the result checks, after_tool (not for a call handed back unfinished). */
async function finishCall(
  entry: RegisteredTool,
  givenArgs: Record<string, unknown>,
  callArgs: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
  options: CallOptions | undefined,
  context: CallContext,
  startedAt: number,
): Promise<ToolCallResult> {
  const { tool } = entry;
  const fail = (failure: Failure, partial?: Pick<ToolCallResult, 'content' | 'structuredContent'>) =>
    failedResult({ code: failure.code, message: context.redact(failure.message) }, startedAt, partial);
  const gone = context.detachedReason();
  if (gone !== undefined) return fail({ code: MCP_CODES.disconnected, message: `server "${tool.server}" is not connected (${gone}); tool "${tool.name}" was not called` });

  const outcome = await send(entry, callArgs, meta, options, context);
  if ('inputRequired' in outcome) {
    keepContinuation(context, tool.name, givenArgs, outcome.inputRequired.requestState, { args: callArgs, meta, expiresAt: Date.now() + CONTINUATION_TTL_MS });
    const keys = Object.keys(outcome.inputRequired.inputRequests);
    return {
      ok: true,
      isError: false,
      content: [],
      text: `tool "${tool.name}" needs input first (${keys.length > 0 ? keys.join(', ') : 'no request, only state'}): answer and call again with inputResponses and requestState`,
      inputRequired: outcome.inputRequired,
      durationMs: Date.now() - startedAt,
    };
  }
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

/** Listed tools whose input schema could not be compiled and were said so (once per listing of the tool). */
const uncheckable = new WeakSet<RegisteredTool>();

/**
 * The argument problems as a failure, or undefined when the arguments are valid (or the schema cannot
 * be compiled: then the server judges, and the log says why once). The schema is compiled here, on the
 * tool's first call, not when its server connects (see ./validate.ts).
 */
async function argumentProblems(entry: RegisteredTool, args: unknown, lead: string, context: CallContext): Promise<Failure | undefined> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { code: MCP_CODES.argsInvalid, message: `${lead}: the arguments must be a JSON object` };
  }
  const compiled = await compileSchema(entry.tool.inputSchema as JsonSchema, entry.dialect);
  if (!('check' in compiled)) {
    if (!uncheckable.has(entry)) {
      uncheckable.add(entry);
      context.log.warn(`server "${context.server}": tool "${entry.tool.tool}" has an input schema plinth cannot check (${compiled.error}); its arguments go to the server unchecked`);
    }
    return undefined;
  }
  const problems = compiled.check(args);
  return problems.length === 0 ? undefined : { code: MCP_CODES.argsInvalid, message: `${lead}:\n  - ${problems.join('\n  - ')}` };
}

type Sent = { result: CallToolResult } | { failure: Failure } | { inputRequired: InputRequiredAnswer };

/**
 * tools/call with the timeout (for the whole call, every round included), the caller's signal and
 * progress; at 2026-07-28, each `input_required` answered and the call sent again (or handed back);
 * a rejection becomes a failure.
 */
async function send(entry: RegisteredTool, args: Record<string, unknown>, meta: Record<string, unknown> | undefined, options: CallOptions | undefined, context: CallContext): Promise<Sent> {
  const { tool } = entry;
  const asked = options?.timeoutMs;
  const timeoutMs = asked !== undefined && Number.isFinite(asked) && asked > 0 ? asked : context.defaultTimeoutMs;
  const situation = { what: `tool "${tool.name}"`, server: tool.server, timeoutMs, redact: context.redact };
  const signal = options?.signal;
  if (signal?.aborted) return { failure: classifyError(signal.reason, { ...situation, callerAborted: true }) };
  // A signal of our own per call: the SDK never removes the listener it adds, so a long-lived
  // caller signal would collect one per call; the rounds' answers (a form on the terminal) stop with it.
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const origin = options?.origin;
  const onprogress = (progress: { progress: number; total?: number; message?: string }) => {
    const text = `${progress.progress}${progress.total !== undefined ? `/${progress.total}` : ''}${progress.message ? ` ${progress.message}` : ''}`;
    context.log.info(context.redact(`tool "${tool.name}" progress: ${text}`));
    try {
      options?.onProgress?.({ progress: progress.progress, ...(progress.total !== undefined && { total: progress.total }), ...(progress.message !== undefined && { message: progress.message }) });
    } catch (error) {
      context.log.warn(`tool "${tool.name}": the caller's onProgress failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  // The tool as listed, for the SDK's Mcp-Param-* headers; its output schema is ours to check (see the top).
  const { outputSchema: _checkedHere, ...definition } = (entry.listed ?? { name: tool.tool, inputSchema: tool.inputSchema }) as Record<string, unknown>;
  const first: Record<string, unknown> = {
    name: tool.tool,
    arguments: args,
    ...(meta && { _meta: meta }),
    ...(options?.inputResponses !== undefined && { inputResponses: options.inputResponses }),
    ...(options?.requestState !== undefined && { requestState: options.requestState }),
  };
  try {
    const rounds = { client: context.client, what: `tool "${tool.name}" of server "${tool.server}"`, rounds: context.inputRounds ?? DEFAULT_ROUNDS, timeoutMs, origin, signal: controller.signal, handBack: options?.inputRequired === 'return' };
    const attempt = (toolDefinition: Record<string, unknown>) =>
      requestInRounds(rounds, first, (params, remaining) => {
        // Sent inside the caller's origin: what a 2025 server sends along this call (its stream) carries it to the request handlers.
        const request = () =>
          context.client.callTool(params as never, {
            timeout: remaining,
            maxTotalTimeout: remaining,
            signal: controller.signal,
            onprogress,
            allowInputRequired: true,
            toolDefinition: toolDefinition as never,
          });
        return origin !== undefined ? withCallOrigin(origin, request) : request();
      });
    let outcome: Awaited<ReturnType<typeof attempt>>;
    try {
      outcome = await attempt(definition);
    } catch (error) {
      // -32020: the server checks Mcp-Param-* headers the tool as listed did not declare; the spec's answer is
      // to list the tools again and retry once with the definition the server has now (hooks do not run again).
      const relisted = mcpErrorCode(error) === HEADER_MISMATCH && !signal?.aborted ? await context.relist?.(tool.tool).catch(() => undefined) : undefined;
      if (!relisted?.listed) throw error;
      context.log.info(`tool "${tool.name}": server "${tool.server}" refused the call's headers (-32020); listed its tools again and retrying once`);
      const { outputSchema: _again, ...fresh } = relisted.listed as Record<string, unknown>;
      outcome = await attempt(fresh);
    }
    return 'inputRequired' in outcome ? outcome : { result: outcome.result as CallToolResult };
  } catch (error) {
    if (error instanceof InputFailure && !signal?.aborted) return { failure: { code: error.code, message: error.message } };
    return { failure: classifyError(error, { ...situation, callerAborted: signal?.aborted === true }) };
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The key of a call handed back unfinished: tool, the state to echo, the arguments as the caller gave them. */
function continuationKey(tool: string, args: unknown, requestState: string | undefined): string {
  return `${tool}\u0000${requestState ?? ''}\u0000${JSON.stringify(args)}`;
}

function keepContinuation(context: CallContext, tool: string, args: unknown, requestState: string | undefined, continuation: Continuation): void {
  const map = context.continuations;
  if (!map) return;
  const now = Date.now();
  for (const [key, kept] of map) if (kept.expiresAt <= now || map.size >= CONTINUATIONS_MAX) map.delete(key);
  map.set(continuationKey(tool, args, requestState), continuation);
}

/** The continuation this call continues, taken out (each continues once), or undefined: then it is a new call, hooks and all. */
function takeContinuation(context: CallContext, tool: string, args: unknown, requestState: string | undefined): Continuation | undefined {
  const map = context.continuations;
  if (!map) return undefined;
  const key = continuationKey(tool, args, requestState);
  const kept = map.get(key);
  map.delete(key);
  if (!kept || kept.expiresAt <= Date.now()) {
    context.log.debug(`tool "${tool}": a continuation (inputResponses/requestState) of a call this process did not hand back: before_tool runs as for a new call`);
    return undefined;
  }
  return kept;
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
