/**
 * The `mcp` service's contract: the state of a configured server, its tools
 * and what a call gives back, and the service the CLI, the health and oauth
 * plugins and hosts use; plus the handlers a host may provide for requests
 * servers send (`mcp:sampling`, `mcp:elicitation`, `mcp:roots`).
 */
import type { Client, ContentBlock } from '@modelcontextprotocol/client';
import type { Disposer } from '../plugin.js';
import type { McpServerDefinition } from './mcp-server.js';
import type { TransportConnection } from './transport.js';
import type { TrustSource, TrustVerdict } from './trust.js';

/** A server's connection state. */
export type ServerState = 'stopped' | 'starting' | 'connected' | 'disconnected' | 'error';

/** One configured MCP server as the `mcp` service sees it now: what `plinth mcp list` shows. */
export interface ServerStatus {
  readonly name: string;
  readonly state: ServerState;
  /** The transport in use (after an `auto` choice: `http` or `sse`). */
  readonly transport: string;
  readonly source: TrustSource;
  readonly pid?: number;
  readonly tools: number;
  /** Connection attempts since the last success. */
  readonly attempts: number;
  readonly connectedAt?: string;
  /** Why it is `error` or `disconnected`, and (when known) what to do about it. */
  readonly error?: { readonly code: string; readonly message: string; readonly hint?: string };
  readonly stderrTail?: string;
  /** The server's name and version from `initialize`. */
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /** While connected: the protocol era spoken (`modern`: 2026-07-28 and later, stateless; `legacy`: the `initialize` handshake). */
  readonly era?: 'legacy' | 'modern';
  /** While connected: the protocol revision negotiated, e.g. `2025-11-25` or `2026-07-28`. */
  readonly protocolVersion?: string;
}

/** A tool of a connected server, under its namespaced name. */
export interface McpTool {
  /** `<server>__<tool>`. */
  readonly name: string;
  readonly server: string;
  readonly tool: string;
  readonly title?: string;
  readonly description?: string;
  /** JSON Schema of the arguments, converted faithfully from the server's. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** Options of {@link McpService.searchTools}. */
export interface ToolSearchOptions {
  /** The most hits returned (default 10). */
  readonly limit?: number;
  /** Only these servers' tools (all connected servers when absent or empty). */
  readonly servers?: readonly string[];
}

/** One tool {@link McpService.searchTools} found, best first. */
export interface ToolSearchHit {
  readonly tool: McpTool;
  /** The relevance (BM25+ with field boosts); only comparable within one search. */
  readonly score: number;
  /** The indexed words that matched (after camelCase/snake_case splitting, prefix and fuzzy matching). */
  readonly terms: readonly string[];
}

/** A tool in one line, for hosts that build their own prompts: {@link McpService.compactTools}. */
export interface CompactTool {
  /** `<server>__<tool>`. */
  readonly name: string;
  readonly server: string;
  /** The description's first sentence, at most 120 characters (the title when there is no description; `''` when neither). */
  readonly description: string;
}

/** What a tool call gives the caller: never an exception. */
export interface ToolCallResult {
  /** False when the call did not produce a server result (invalid arguments, timeout, disconnect, blocked by a hook). */
  readonly ok: boolean;
  /** The server says the tool failed (`isError`), or plinth could not call it. */
  readonly isError: boolean;
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  /** The content formatted for a terminal: text, and a line for each image, audio or embedded resource. */
  readonly text: string;
  /** When `ok` is false: a stable code (PLN_E_MCP_…) and a message a person can act on. */
  readonly error?: { readonly code: string; readonly message: string };
  readonly durationMs: number;
  /**
   * Only with `CallOptions.inputRequired: 'return'`: the server (at 2026-07-28)
   * answered `input_required`, and the call is not finished. `ok` is true,
   * `content` empty, `text` says so, and `after_tool` has not run. Call again
   * with the same name and arguments, `inputResponses` (one answer per key of
   * `inputRequests`) and this `requestState`, to go on.
   */
  readonly inputRequired?: InputRequiredAnswer;
}

/**
 * What a 2026-07-28 server asks before it can finish a call (`resultType:
 * "input_required"`), as it sent it: a caller that takes over the round trip
 * (a gateway passing it to its own client) answers each request and retries.
 */
export interface InputRequiredAnswer {
  /**
   * The embedded requests by the server's keys, each `{ method, params }` with
   * `method` one of `elicitation/create`, `sampling/createMessage`, `roots/list`.
   */
  readonly inputRequests: Readonly<Record<string, Readonly<{ method: string; params?: Readonly<Record<string, unknown>> }>>>;
  /** Opaque server state: echo it byte for byte (never parse or re-encode it). Absent when the server sent none. */
  readonly requestState?: string;
}

/** Options of one {@link McpService.callTool} call. */
export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Per-call timeout in ms (default: the plugin's `callTimeout` setting). */
  readonly timeoutMs?: number;
  /** Progress notifications of this call. */
  readonly onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * Any value: handed back as `origin` to the host's `mcp:elicitation`,
   * `mcp:sampling` and `mcp:roots` for the requests the server sends along this
   * call, when the transport tells (streamable HTTP: the server sent them on the
   * call's own stream, the SDK's `relatedRequestId`). Over stdio and legacy SSE
   * a request's call cannot be known: such requests come without `origin`.
   */
  readonly origin?: unknown;
  /**
   * What to do when a 2026-07-28 server answers `input_required`:
   * `'fulfil'` (default) answers its requests through the host's `mcp:elicitation`,
   * `mcp:sampling` and `mcp:roots` (or the terminal form, or the declines) and retries,
   * up to the mcp plugin's `inputRounds` rounds; `'return'` hands the first such
   * answer back as `ToolCallResult.inputRequired` (a gateway passes it downstream).
   * `before_tool` runs once per logical call, `after_tool` on its final result only.
   * No effect on a 2025 server, whose requests arrive as requests.
   */
  readonly inputRequired?: 'fulfil' | 'return';
  /**
   * Continues a call that returned `inputRequired`: the answers by the keys of its
   * `inputRequests` (each a bare result: `{ action, content? }`, a sampling result,
   * `{ roots }`), sent with `requestState`. Pass the same tool name and arguments as
   * the first call: `before_tool` is not run again for a continuation of a call this
   * plinth process handed back (it is, as for a new call, for one it does not know),
   * and the arguments a `before_tool` handler gave the first round are sent again.
   */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** The `requestState` of the `inputRequired` answer being continued, byte for byte. */
  readonly requestState?: string;
  /**
   * W3C trace context for the call (`traceparent`, and `tracestate` if any), sent in
   * the request's `_meta` to a 2026-07-28 server. Default: a `traceparent` a
   * `before_tool` handler put in the event context, else a new trace.
   */
  readonly traceparent?: string;
  readonly tracestate?: string;
  /**
   * The server log level wanted for this call (`debug` … `emergency`): at
   * 2026-07-28, where `logging/setLevel` is gone, it goes in the request's `_meta`
   * and the server sends the call's log messages at that level and above (none
   * without it). Default: the mcp plugin's `serverLogLevel` setting, if set.
   */
  readonly logLevel?: string;
}

/** How `start`, `restart` and `startAll` try. */
export interface StartOptions {
  /**
   * Connection attempts after the first fails (default: the mcp plugin's
   * `retries` setting); 0 for one attempt. For a caller that keeps a schedule
   * of its own (the health plugin) or reports at once (a one-shot command).
   * A start already in progress is joined as it is.
   */
  readonly retries?: number;
  /**
   * When the server is stopped later: how long a local (stdio) server gets to
   * exit by itself after its input is closed, before SIGTERM (default: the
   * transport's `exitGraceMs` setting). A one-shot command, whose work is done
   * when it stops servers, asks for a short one.
   */
  readonly exitGraceMs?: number;
}

/** The `mcp` service. */
/** One log message a server sent (`notifications/message`), as it sent it. */
export interface ServerLogMessage {
  readonly server: string;
  /** The MCP (syslog) level: debug, info, notice, warning, error, critical, alert, emergency. */
  readonly level: string;
  readonly logger?: string;
  readonly data: unknown;
  /** The origin of the call it came along with, when the transport tells (streamable HTTP). */
  readonly origin?: unknown;
}

/**
 * The `mcp` service: the MCP servers of the settings and of plugins, their
 * connections, and their tools, resources and prompts under one namespace.
 *
 * @example
 * const mcp = await kernel.get('mcp');
 * const result = await mcp.callTool('github__search_issues', { query: 'is:open label:bug' });
 */
export interface McpService {
  /** Every configured server (enabled or not), in definition order. */
  servers(): readonly ServerStatus[];
  /** A server's definition as the settings (or its plugin) gave it; undefined for an unknown name. */
  definition(name: string): McpServerDefinition | undefined;
  /** Connects (with the connection timeout and retries with backoff); resolves with the status reached. Never throws for server trouble. */
  start(name: string, options?: StartOptions): Promise<ServerStatus>;
  /** Starts every enabled (and, for workspace servers, trusted) server. */
  startAll(options?: StartOptions): Promise<readonly ServerStatus[]>;
  /** Disconnects the server (and stops its process); it stays configured. */
  stop(name: string): Promise<void>;
  /** Stops, then starts (with `options`). */
  restart(name: string, options?: StartOptions): Promise<ServerStatus>;
  /**
   * Resolves when the server may be contacted now — the trust check `start` makes
   * (workspace and extension servers need approval; on a terminal the user may be
   * asked) — else rejects with `PLN_E_MCP_UNTRUSTED` (`details.approveCommand`), or
   * the trust store's own code: it fails closed. For whoever sends the server
   * anything outside a connection (the oauth plugin's sign-in).
   */
  ensureTrusted(name: string, options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** The trust verdict of a server as it is now, without asking or recording anything (what `plinth mcp get` and `mcp list --json` show); undefined when trust cannot be read. */
  trust?(name: string): Promise<TrustVerdict | undefined>;
  /** The SDK client of a connected server (for `ping` and direct requests). */
  client(name: string): Client | undefined;
  /** The transport of a connected server, with its process id and stderr tail for stdio. */
  connection(name: string): TransportConnection | undefined;
  /** Calls `listener` on each change of a server's state, with the state it left. */
  onStateChange(listener: (status: ServerStatus, previous: ServerState) => void): Disposer;
  /**
   * Problems found in the `mcpServers` sections (an invalid entry, a duplicate
   * name, a reference that cannot be resolved), each naming the file and JSON
   * path. Optional so that test doubles need not implement it.
   */
  problems?(): ReadonlyArray<{ readonly code: string; readonly message: string }>;

  /** The tools of every connected server, under their namespaced names (`<server>__<tool>`). */
  tools(): readonly McpTool[];
  /**
   * The connected servers' tools that best match `query`, best first: a
   * full-text search (BM25+ ranking, prefix and fuzzy matching) over each
   * tool's name, title, description, server and input-schema property names
   * and descriptions, with identifiers split at camelCase and snake_case
   * (`search_issues`, `searchIssues` and "search issues" meet). The index is
   * built at the first search and then follows the servers' tool lists
   * (connect, `tools/list_changed`, disconnect) server by server. An empty
   * query finds nothing. Optional so that test doubles need not implement it.
   *
   * @example
   * const hits = mcp.searchTools?.('open pull request', { limit: 5, servers: ['github'] }) ?? [];
   * for (const { tool } of hits) console.log(tool.name, tool.description);
   */
  searchTools?(query: string, options?: ToolSearchOptions): readonly ToolSearchHit[];
  /**
   * Every connected server's tool in one line (namespaced name, server, the
   * description's first sentence): a listing far smaller than the tools'
   * definitions, for hosts that build their own prompts and fetch a
   * definition (`tools()`, `listedTool`) only for the tools the model picks.
   * Optional so that test doubles need not implement it.
   *
   * @example
   * const lines = (mcp.compactTools?.() ?? []).map((t) => `${t.name}: ${t.description}`);
   */
  compactTools?(options?: { readonly servers?: readonly string[] }): readonly CompactTool[];
  /** Runs one call through `before_tool`/`after_tool`, argument validation and the per-call timeout. */
  callTool(name: string, args: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<ToolCallResult>;
  /** The resources of connected servers (of `server` only, when given). */
  resources(server?: string): Promise<ReadonlyArray<{ server: string; uri: string; name: string; mimeType?: string; description?: string }>>;
  /** The resource templates of connected servers (of `server` only, when given). */
  resourceTemplates(server?: string): Promise<ReadonlyArray<{ server: string; uriTemplate: string; name: string; description?: string }>>;
  /** Reads a resource: its contents as the server sent them, and their text. */
  readResource(server: string, uri: string): Promise<{ contents: ReadonlyArray<Record<string, unknown>>; text: string }>;
  /** Calls `listener` on each `resources/updated` for `uri`; resolves once subscribed. */
  subscribe(server: string, uri: string, listener: () => void): Promise<Disposer>;
  /** The prompts of connected servers (of `server` only, when given), with their arguments. */
  prompts(server?: string): Promise<ReadonlyArray<{ server: string; name: string; description?: string; arguments?: ReadonlyArray<{ name: string; description?: string; required?: boolean }> }>>;
  /** Renders a prompt with `args`: its messages, and their text. */
  getPrompt(server: string, name: string, args?: Readonly<Record<string, string>>): Promise<{ description?: string; messages: ReadonlyArray<Record<string, unknown>>; text: string }>;
  /**
   * The tool exactly as its server listed it (`inputSchema`, `outputSchema`,
   * `annotations`, `_meta` unchanged), by namespaced name: what a gateway serves
   * again. Optional so that test doubles need not implement it.
   */
  listedTool?(name: string): Readonly<Record<string, unknown>> | undefined;
  /**
   * Calls `listener` when a server's list changes: its tools (listed again,
   * connected, gone), or its resources or prompts (the server sent
   * `list_changed`). Optional so that test doubles need not implement it.
   */
  onListChanged?(listener: (change: { readonly server: string; readonly list: 'tools' | 'resources' | 'prompts' }) => void): Disposer;
  /**
   * Called for each log message a server sends (`notifications/message`), after
   * the plugin's own log has it. `origin` is the caller's origin of the call
   * it came along with (see {@link CallOptions}), when known. Optional so that
   * test doubles need not implement it.
   */
  onLogMessage?(listener: (message: ServerLogMessage) => void): Disposer;
  /** Argument completion for a prompt argument (or a resource template variable). */
  complete(server: string, ref: { type: 'prompt'; name: string } | { type: 'resource'; uri: string }, argument: { name: string; value: string }): Promise<readonly string[]>;
}

/**
 * Handlers a host may provide for requests servers send to the client, as services
 * (`kernel.provide('mcp:sampling', …)`); without one, plinth answers itself:
 * roots = the workspace, elicitation = a form on the terminal (declined without one),
 * sampling = declined. A handler that resolves `undefined` leaves that one request
 * to plinth's own answer (the gateway does so when its client cannot answer).
 * `origin` is the {@link CallOptions.origin} of the call the request came along
 * with, when that is known; a handler that throws answers the server an error
 * with its message.
 */
export interface SamplingHandler {
  (request: { server: string; params: Record<string, unknown>; origin?: unknown }): Promise<Record<string, unknown> | undefined>;
}
/** The values an accepted elicitation carries, by field: what the specification allows (and the SDK checks). */
export type ElicitationContent = Record<string, string | number | boolean | string[]>;
/** The `mcp:elicitation` service: answers a server's request for input from the user (see {@link SamplingHandler}). */
export interface ElicitationHandler {
  (request: {
    server: string;
    message: string;
    requestedSchema: Record<string, unknown>;
    origin?: unknown;
    /** `url`: the server asks the user to open `url` (a sign-in, a payment…); the answer is `accept` (they did), `decline` or `cancel`, with no `content`. Absent: a form. */
    mode?: 'url';
    url?: string;
  }): Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: ElicitationContent } | undefined>;
}
/** The `mcp:roots` service: the folders a server may work in (see {@link SamplingHandler}). */
export interface RootsHandler {
  (request: { server: string; origin?: unknown }): Promise<ReadonlyArray<{ uri: string; name?: string }> | undefined>;
}

declare module '../index.js' {
  interface Services {
    mcp: McpService;
    'mcp:sampling': SamplingHandler;
    'mcp:elicitation': ElicitationHandler;
    'mcp:roots': RootsHandler;
  }
}
