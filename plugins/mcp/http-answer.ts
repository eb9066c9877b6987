/**
 * What a server answered a streamable HTTP `initialize` with, read from the
 * error the SDK's client transport threw: the HTTP status (its
 * `StreamableHTTPError` carries it as `code`) and, when the body was a
 * JSON-RPC error (the SDK puts the body text in the message), that error's
 * code and message. A JSON-RPC error answered with HTTP 200 reaches the
 * client as an `McpError` with the code.
 *
 * `auto` needs the difference: a server that answers with a JSON-RPC error
 * speaks streamable HTTP (or a newer revision) and said why it refused; only a
 * bare 404 or 405 on the POST is the signature of a 2024-11-05 HTTP+SSE server.
 */
import { isPlinthError, type PlinthError } from 'plinth/sdk';

/** What the HTTP attempt got back. */
export interface HttpAnswer {
  /** The HTTP status, when the server answered with one other than 2xx. */
  readonly status?: number;
  /** The JSON-RPC error the server answered with, if any. */
  readonly rpc?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** JSON-RPC reserves -32768..-32000 for protocol errors; anything else is not a server's answer. */
const isRpcCode = (code: unknown): code is number => typeof code === 'number' && Number.isInteger(code) && code >= -32768 && code <= -32000;

/** Reads the status and the JSON-RPC error out of `error` or one of its causes. */
export function httpAnswer(error: unknown): HttpAnswer {
  let status: number | undefined;
  let rpc: HttpAnswer['rpc'];
  let current: unknown = error;
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 4; depth++) {
    const { code, status: statusField, message, data, name } = current as { code?: unknown; status?: unknown; message?: unknown; data?: unknown; name?: unknown };
    if (!isPlinthError(current)) {
      if (status === undefined && typeof statusField === 'number') status = statusField;
      if (status === undefined && typeof code === 'number' && code >= 100 && code < 600) status = code;
      if (rpc === undefined && (name === 'ProtocolError' || name === 'McpError') && isRpcCode(code)) rpc = { code, message: String(message ?? '').replace(/^MCP error -?\d+: /, ''), data };
      if (rpc === undefined && typeof message === 'string') rpc = rpcInBody(message);
    }
    current = (current as PlinthError | { cause?: unknown }).cause;
  }
  return { ...(status !== undefined && { status }), ...(rpc !== undefined && { rpc }) };
}

/** The JSON-RPC error in a body the SDK quoted in its message (`Error POSTing to endpoint: {…}`). */
function rpcInBody(message: string): HttpAnswer['rpc'] {
  const start = message.indexOf('{');
  if (start < 0) return undefined;
  try {
    const body = JSON.parse(message.slice(start)) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    const code = body?.error?.code;
    if (body?.jsonrpc !== '2.0' || !isRpcCode(code)) return undefined;
    return { code, message: typeof body.error?.message === 'string' ? body.error.message : '', ...(body.error?.data !== undefined && { data: body.error.data }) };
  } catch {
    return undefined;
  }
}

/**
 * The answer of a 2024-11-05 HTTP+SSE server to a POST at its SSE endpoint:
 * 404 or 405 with no JSON-RPC error (a streamable HTTP server explains its
 * refusals with one). Only then is SSE worth a try.
 */
export function looksLikeSseServer(answer: HttpAnswer): boolean {
  return answer.rpc === undefined && (answer.status === 404 || answer.status === 405);
}

/** The revisions a `-32022` answer says the server supports (`data.supported`), if it says. */
export function supportedVersions(data: unknown): string[] {
  const supported = (data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) ? supported.filter((v): v is string => typeof v === 'string').slice(0, 8) : [];
}
