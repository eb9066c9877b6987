/**
 * What went wrong with a request, from what the SDK rejected it with: the
 * SDK's own timeout, a closed connection, a JSON-RPC error from the server, a
 * result that does not parse. Recognised by shape (the SDK's error brands, a
 * numeric or string `code`), not `instanceof` of an imported class: the SDK
 * may be loaded twice (jiti, the test runner), and this file loads no SDK code.
 */
import type { SdkErrorCode } from '@modelcontextprotocol/client';
import { InputFailure } from './input-required.js';
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
  const localCode = sdkErrorCode(error);
  const detail = redact(serverMessage(error));
  if (localCode === SDK_TIMEOUT || rpcCode === RPC_TIMEOUT) {
    return { code: MCP_CODES.timeout, message: `${what} on server "${server}" timed out after ${situation.timeoutMs} ms (the request was cancelled)` };
  }
  if (localCode === SDK_CLOSED || localCode === SDK_NOT_CONNECTED || rpcCode === RPC_CLOSED || isGone(error)) {
    return { code: MCP_CODES.disconnected, message: `server "${server}" disconnected during ${what}${detail ? ` (${detail})` : ''}` };
  }
  if (rpcCode !== undefined) {
    return { code: MCP_CODES.serverError, message: `server "${server}" answered ${what} with error ${rpcCode}: ${detail}` };
  }
  if (localCode === SDK_INVALID_RESULT || isParseError(error)) {
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

// The SDK's local error codes this file tells apart (`SdkErrorCode` values: the enum itself would load the SDK).
const SDK_TIMEOUT: `${SdkErrorCode.RequestTimeout}` = 'REQUEST_TIMEOUT';
const SDK_CLOSED: `${SdkErrorCode.ConnectionClosed}` = 'CONNECTION_CLOSED';
const SDK_NOT_CONNECTED: `${SdkErrorCode.NotConnected}` = 'NOT_CONNECTED';
const SDK_INVALID_RESULT: `${SdkErrorCode.InvalidResult}` = 'INVALID_RESULT';

/**
 * The JSON-RPC codes v1 of the SDK used for these (`ErrorCode.ConnectionClosed`, `ErrorCode.RequestTimeout`);
 * plinth's transports still answer the requests a dead connection leaves with -32000 and its reason
 * (the transport contract), and a server or proxy on v1 may send either.
 */
const RPC_CLOSED = -32000;
const RPC_TIMEOUT = -32001;

/** The brands the SDK stamps on its errors, under a registered symbol: they survive a second copy of the SDK. */
const BRANDS = Symbol.for('mcp.sdk.errorBrands');

function branded(error: object, brand: string): boolean {
  const brands = (error as { [BRANDS]?: { has?: (b: string) => boolean } })[BRANDS];
  return typeof brands?.has === 'function' && brands.has(brand);
}

/** The JSON-RPC code of a `ProtocolError` (an error response the server sent), if `error` is one. */
export function mcpErrorCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { name, code } = error as { name?: unknown; code?: unknown };
  if (typeof code !== 'number') return undefined;
  return branded(error, 'mcp.ProtocolError') || name === 'ProtocolError' ? code : undefined;
}

/** The code of the SDK's own local error (`SdkError`: a timeout, a closed connection, an invalid result), if `error` is one. */
export function sdkErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { name, code } = error as { name?: unknown; code?: unknown };
  if (typeof code !== 'string') return undefined;
  return branded(error, 'mcp.SdkError') || name === 'SdkError' || name === 'SdkHttpError' ? code : undefined;
}

/** The message without a `MCP error -32603: ` prefix (servers or proxies may still send one), on one line. */
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
    if (error instanceof InputFailure) throw failureError({ code: error.code, message: situation.redact(error.message) }, situation.server);
    throw failureError(classifyError(error, { ...situation, callerAborted: false }), situation.server);
  }
}
