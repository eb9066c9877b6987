/**
 * The `transport:<name>` contract: what a transport plugin (stdio, http, sse,
 * or a third party's) provides, and what the mcp plugin hands it. The mcp
 * plugin asks the kernel for `transport:<the server's transport>`; nothing in
 * plinth lists the transports it knows. The protocol itself is the SDK's.
 */
import type { OAuthClientProvider, Transport } from '@modelcontextprotocol/client';
import type { Disposer, Logger } from '../plugin.js';
import type { McpServerDefinition } from './mcp-server.js';

/** What a transport plugin provides as `transport:<name>`. */
export interface TransportFactory {
  /** Opens a transport to `server`, not yet started (the SDK `Client` starts it). */
  create(server: McpServerDefinition, context: TransportContext): TransportConnection | Promise<TransportConnection>;
}

/** What the mcp plugin hands a transport for one server: its log, OAuth, redaction. */
export interface TransportContext {
  readonly log: Logger;
  /** For remote transports, when the server uses OAuth (the oauth plugin provides it). */
  readonly authProvider?: OAuthClientProvider;
  /** Masks secrets in anything the transport reports (stderr tails, errors). */
  readonly redact: (text: string) => string;
  /**
   * When the connection is closed: how long a local server gets to exit by
   * itself once its input is closed, before it is signalled (ms). Set by the
   * caller that started it (see {@link StartOptions.exitGraceMs}); undefined:
   * the transport's own setting.
   */
  readonly exitGraceMs?: number;
}

/**
 * One connection's transport, plus what only the transport can tell about the server.
 *
 * `transport` is an SDK v2 `Transport`, started by the SDK `Client`. For servers of the
 * 2026-07-28 era (`protocol` `auto` or pinned) the client also relies on, when present
 * (plugins/mcp/README.md, "What a third-party transport must do", says it in full):
 * - `send(message, options)`: an HTTP-like transport derives `MCP-Protocol-Version`, `Mcp-Method`
 *   and `Mcp-Name` from the request's `params._meta` envelope and adds `options.headers` (the
 *   `Mcp-Param-*` of a `tools/call`) to that request only; a request-per-message transport honours
 *   `options.requestSignal` and `options.onRequestStreamEnd`, a single-channel one ignores them;
 * - `hasPerRequestStream`: `true` where aborting a request's `requestSignal` cancels it;
 * - `setProtocolVersion(version)`: called once the era is known;
 * - a modern JSON-RPC error in a 4xx body reaches the client with the body (`auto` falls back
 *   to `initialize` only when it is not a recognised modern error);
 * - a local process's transport has `pid` and `stderr` properties: the SDK then probes it as
 *   stdio (a silent `server/discover` means a legacy server; probed in place, one spawn), and its
 *   `send` rejects once the process exited.
 */
export interface TransportConnection {
  readonly transport: Transport;
  /** stdio: the server process id once started. */
  pid?(): number | undefined;
  /** stdio: the last of what the server wrote to stderr (bounded, redacted), for diagnosis. */
  stderrTail?(): string;
  /** Called when the server goes away outside the protocol (its process exited): health reacts at once. */
  onDown?(listener: (reason: string) => void): Disposer;
}

declare module '../index.js' {
  interface Services {
    'transport:stdio': TransportFactory;
    'transport:sse': TransportFactory;
    'transport:http': TransportFactory;
  }
}
