/** The mcp core's error codes and the hints that go with them (each code is a row of docs/errors.md). */
import { PlinthError } from 'plinth/sdk';

/** Codes a server's status (or a call of the lifecycle API) can carry. */
export type LifecycleCode =
  | 'PLN_E_MCP_CONNECT_TIMEOUT'
  | 'PLN_E_MCP_CONNECT_FAILED'
  | 'PLN_E_MCP_PROTOCOL_UNSUPPORTED'
  | 'PLN_E_MCP_PROTOCOL_MISMATCH'
  | 'PLN_E_MCP_TRANSPORT_UNKNOWN'
  | 'PLN_E_MCP_UNTRUSTED'
  | 'PLN_E_MCP_DISCONNECTED'
  | 'PLN_E_MCP_SERVER_UNKNOWN'
  | 'PLN_E_MCP_SERVER_DISABLED';

const HINTS: Readonly<Record<LifecycleCode, string>> = {
  PLN_E_MCP_CONNECT_TIMEOUT: 'check that the server starts and answers `initialize`; raise its `timeout` (or the mcp plugin\'s connectTimeout) if it is only slow',
  PLN_E_MCP_CONNECT_FAILED: 'check the command or URL; for a local server, the stderr tail in `plinth mcp status` usually says why',
  PLN_E_MCP_PROTOCOL_UNSUPPORTED:
    'the server speaks only the 2026-07-28 era: set "protocol": "auto" in its mcpServers entry (or the mcp plugin\'s protocol setting)',
  PLN_E_MCP_PROTOCOL_MISMATCH: 'set "protocol": "auto" in its mcpServers entry, or the revision the server offers',
  PLN_E_MCP_TRANSPORT_UNKNOWN: 'install or enable the transport plugin named, or change the server\'s "transport"',
  PLN_E_MCP_UNTRUSTED: 'review the server, then run the approve command given',
  PLN_E_MCP_DISCONNECTED: 'the server went away; `plinth mcp restart <name>` starts it again (the health plugin does so by itself)',
  PLN_E_MCP_SERVER_UNKNOWN: 'run `plinth mcp list` for the configured servers',
  PLN_E_MCP_SERVER_DISABLED: 'set "enabled": true on the server (or remove "enabled": false) in the file named',
};

/** A PlinthError of the mcp plugin. */
export function mcpError(code: LifecycleCode, message: string, options: { cause?: unknown; hint?: string; details?: Record<string, unknown> } = {}): PlinthError {
  return new PlinthError(code, message, {
    plugin: 'mcp',
    hint: options.hint ?? HINTS[code],
    ...(options.cause !== undefined && { cause: options.cause }),
    ...(options.details !== undefined && { details: options.details }),
  });
}
