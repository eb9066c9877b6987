/**
 * The codes of the tool wrapper and the result it gives when a call produced
 * no (usable) server result. No SDK import here: the registry uses it before
 * any server is connected.
 */
import { PlinthError } from 'plinth/sdk';
import type { ToolCallResult } from 'plinth/sdk';

/** Every code a tool call (or a resource/prompt request) can end with. */
export const MCP_CODES = {
  toolUnknown: 'PLN_E_MCP_TOOL_UNKNOWN',
  argsInvalid: 'PLN_E_MCP_ARGS_INVALID',
  timeout: 'PLN_E_MCP_CALL_TIMEOUT',
  cancelled: 'PLN_E_MCP_CALL_CANCELLED',
  disconnected: 'PLN_E_MCP_DISCONNECTED',
  serverError: 'PLN_E_MCP_SERVER_ERROR',
  resultInvalid: 'PLN_E_MCP_RESULT_INVALID',
  blocked: 'PLN_E_MCP_BLOCKED',
  inputRounds: 'PLN_E_MCP_INPUT_ROUNDS',
  inputUnanswered: 'PLN_E_MCP_INPUT_UNANSWERED',
} as const;

/** A call's own codes, and the auth provider's (`PLN_E_OAUTH_SIGNIN_REQUIRED`, …) passed through. */
export type McpCallCode = (typeof MCP_CODES)[keyof typeof MCP_CODES] | `PLN_E_OAUTH_${string}`;

/** A problem with a code, before it becomes a result or an error. */
export interface Failure {
  readonly code: McpCallCode;
  readonly message: string;
}

/** The result of a call that did not produce a server result: `ok` false, the message as its text. */
export function failedResult(failure: Failure, startedAt: number, partial?: Pick<ToolCallResult, 'content' | 'structuredContent'>): ToolCallResult {
  return {
    ok: false,
    isError: true,
    content: partial?.content ?? [],
    ...(partial?.structuredContent && { structuredContent: partial.structuredContent }),
    text: failure.message,
    error: { code: failure.code, message: failure.message },
    durationMs: Math.max(0, Date.now() - startedAt),
  };
}

/** The same failure as a thrown error, for the requests that return data (resources, prompts, completion). */
export function failureError(failure: Failure, server: string): PlinthError {
  return new PlinthError(failure.code, failure.message, { plugin: 'mcp', details: { server } });
}
