/**
 * The protocol era of one server: which `protocol` setting applies (its
 * entry's, else the mcp plugin's), what the SDK `Client` is told
 * (`versionNegotiation`), and what a failed negotiation is reported as.
 *
 * `legacy`: the 2025 `initialize` handshake, nothing else. `auto`: the SDK
 * asks with `server/discover` first and falls back to `initialize` on any
 * answer that is not modern evidence (stdio: also on a timeout; HTTP: only when
 * the 4xx body is not a recognised modern error). A pinned revision
 * (`"2026-07-28"`): that revision through `server/discover`, or a coded failure.
 */
import type { PriorDiscovery, VersionNegotiationMode } from '@modelcontextprotocol/client';
import { type McpProtocolSetting, type McpServerDefinition, type PlinthError, describeError } from 'plinth/sdk';
import { mcpError } from './errors.js';
import { httpAnswer } from './http-answer.js';

/** The setting in force for `definition`, and where it was written (for messages). */
export function protocolOf(definition: McpServerDefinition, fallback: McpProtocolSetting | undefined): { protocol: McpProtocolSetting; where: string } {
  if (definition.protocol !== undefined) return { protocol: definition.protocol, where: `"protocol" in its mcpServers entry (${definition.origin})` };
  return { protocol: fallback ?? 'legacy', where: 'the mcp plugin\'s "protocol" setting (plugins.mcp.settings.protocol)' };
}

/** What the SDK `Client` is told for `protocol`. */
export function negotiationMode(protocol: McpProtocolSetting): VersionNegotiationMode {
  return protocol === 'auto' || protocol === 'legacy' ? protocol : { pin: protocol };
}

/** The SDK's `SdkError` code of `error` or one of its causes, if any. */
export function sdkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 4; depth++) {
    const { code, name } = current as { code?: unknown; name?: unknown };
    if (name === 'SdkError' && typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The SDK could not agree on an era with the server (`ERA_NEGOTIATION_FAILED`):
 * a pinned revision the server did not offer, or an `auto` probe the server
 * answered in a way that is neither era. Undefined for any other failure.
 */
export function negotiationFailure(definition: McpServerDefinition, fallback: McpProtocolSetting | undefined, tried: string, error: unknown, redact: (text: string) => string): PlinthError | undefined {
  if (sdkErrorCode(error) !== 'ERA_NEGOTIATION_FAILED') return undefined;
  const { protocol, where } = protocolOf(definition, fallback);
  const change = protocol === 'auto' ? 'set "protocol": "legacy" in its mcpServers entry if it is a 2025 server' : 'set "protocol": "auto" (or "legacy" for a 2025 server) in its mcpServers entry';
  const what = protocol === 'auto' || protocol === 'legacy' ? `could not agree on a protocol era (${protocol}, from ${where})` : `does not offer MCP ${protocol}, which ${where} pins`;
  return mcpError('PLN_E_MCP_PROTOCOL_MISMATCH', redact(`MCP server "${definition.name}" ${what} (${tried}): ${describeError(error)}`), {
    cause: error,
    hint: change,
    details: { server: definition.name, transport: tried, protocol },
  });
}

/**
 * Whether a connection made with a remembered verdict failed in a way that says
 * the server changed era: a legacy verdict whose `initialize` the server refused
 * with a JSON-RPC error of its own (not the stdio transport's -32000: the process
 * exited, which says nothing of its era); a modern verdict refused with -32022
 * (unsupported version), -32601 (no such method), -32020 (header mismatch), an
 * HTTP 400 or 404, or one the SDK could not adopt.
 */
export function staleVerdict(error: unknown, prior: PriorDiscovery): boolean {
  const { rpc, status } = httpAnswer(error);
  if (prior.kind === 'legacy') return rpc !== undefined && rpc.code !== -32000;
  if (sdkErrorCode(error) === 'ERA_NEGOTIATION_FAILED') return true;
  if (rpc !== undefined && [-32022, -32601, -32020].includes(rpc.code)) return true;
  return status === 400 || status === 404;
}
