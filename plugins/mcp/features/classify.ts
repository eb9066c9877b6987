/**
 * What went wrong with a request, from what the SDK rejected it with: the
 * SDK's own timeout, a closed connection, a JSON-RPC error from the server, a
 * result that does not parse. Recognised by shape (`name`, numeric `code`),
 * not `instanceof`: the SDK may be loaded twice (jiti, the test runner).
 */
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { MCP_CODES, failureError, type Failure } from './result.js';

/** What the request was, for the message. */
export interface RequestSituation {
  /** `tool "x__y"`, `resources/read demo://…`, … */
  readonly what: string;
  readonly server: string;
  readonly timeoutMs: number;
  /** The caller's own signal fired (not our timeout). */
  readonly callerAborted: boolean;
  readonly redact: (text: string) => string;
}

// Errors of the transport itself when the server is gone (stdio pipe closed, socket reset, fetch failed).
const GONE = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END', 'UND_ERR_SOCKET']);

/** The failure a rejected request stands for. */
export function classifyError(error: unknown, situation: RequestSituation): Failure {
  const { what, server, redact } = situation;
  if (situation.callerAborted) {
    return { code: MCP_CODES.cancelled, message: `${what} on server "${server}" was cancelled by the caller` };
  }
  // The auth provider's own errors (a sign-in needed, a step-up to more scope) keep their code: the host can act on it.
  const authCode = oauthCode(error);
  if (authCode !== undefined) return { code: authCode, message: redact((error as Error).message) };
  const rpcCode = mcpErrorCode(error);
  const detail = redact(serverMessage(error));
  if (rpcCode === ErrorCode.RequestTimeout) {
    return { code: MCP_CODES.timeout, message: `${what} on server "${server}" timed out after ${situation.timeoutMs} ms (the request was cancelled)` };
  }
  if (rpcCode === ErrorCode.ConnectionClosed || isGone(error)) {
    return { code: MCP_CODES.disconnected, message: `server "${server}" disconnected during ${what}${detail ? ` (${detail})` : ''}` };
  }
  if (rpcCode !== undefined) {
    return { code: MCP_CODES.serverError, message: `server "${server}" answered ${what} with error ${rpcCode}: ${detail}` };
  }
  if (isParseError(error)) {
    return { code: MCP_CODES.resultInvalid, message: `server "${server}" sent an invalid result for ${what}: ${detail}` };
  }
  return { code: MCP_CODES.serverError, message: `${what} on server "${server}" failed: ${detail}` };
}

/** The `PLN_E_OAUTH_…` code of an error the oauth plugin's auth provider threw inside the transport. */
function oauthCode(error: unknown): `PLN_E_OAUTH_${string}` | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('PLN_E_OAUTH_') ? (code as `PLN_E_OAUTH_${string}`) : undefined;
}

/** The JSON-RPC code of an `McpError`, if `error` is one. */
export function mcpErrorCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === 'McpError' && typeof code === 'number' ? code : undefined;
}

/** The message without the SDK's `MCP error -32603: ` prefix, on one line. */
function serverMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : typeof error === 'object' && error !== null ? String((error as { message?: unknown }).message ?? '') : String(error);
  return message.replace(/^MCP error -?\d+: /, '').replace(/\s+/g, ' ').trim().slice(0, 2000);
}

function isGone(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.message === 'Not connected') return true; // the SDK, when the transport is already gone
  const code = (error as { code?: unknown }).code ?? (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && GONE.has(code);
}

// A zod error (the SDK parses results with zod): `issues`, no JSON-RPC code.
function isParseError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && Array.isArray((error as { issues?: unknown }).issues);
}

/** Runs a request that returns data (resources, prompts, completion); a rejection is thrown as a coded PlinthError. */
export async function orThrow<T>(situation: Omit<RequestSituation, 'callerAborted'>, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw failureError(classifyError(error, { ...situation, callerAborted: false }), situation.server);
  }
}
