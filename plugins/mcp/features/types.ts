/**
 * The features' own contracts: what the mcp core hands to `attachFeatures`
 * (`FeatureDeps`), what it gets back per server (`ServerFeatures`), and the
 * registry shared by every server (`ToolRegistry`), whose methods match the
 * `mcp` service's so the core can delegate one to one.
 */
import type { Client } from '@modelcontextprotocol/client';
import type { Decision, Disposer, Logger, ServiceType } from 'plinth/sdk';
import type { CallOptions, McpTool, ServerLogMessage, ToolCallResult } from 'plinth/sdk';

/** The host services the features ask for, each optional. */
export type HostServiceName = 'mcp:sampling' | 'mcp:elicitation' | 'mcp:roots';

/** Where an elicitation form is asked: questions on `output`, answers from `input`. */
export interface Terminal {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly output: NodeJS.WritableStream & { isTTY?: boolean };
}

/** What `attachFeatures` (and `prepareClient`) need from the mcp core. */
export interface FeatureDeps {
  /** The one registry of the mcp plugin (`createToolRegistry()`), shared by every server. */
  readonly registry: ToolRegistry;
  /** `kernel.emit`: `before_tool` and `after_tool` go through it. */
  readonly emit: (event: 'before_tool' | 'after_tool', context: Record<string, unknown>) => Promise<Decision>;
  /** `kernel.get`, wrapped to resolve `undefined` when no plugin provides the service (PLN_E_SERVICE_MISSING). */
  readonly getService: <K extends HostServiceName>(name: K) => Promise<ServiceType<K> | undefined>;
  /** The mcp plugin's logger: server log messages, progress, declined requests. */
  readonly log: Logger;
  /** `kernel.redact`; the server's own `secrets` are masked as well. */
  readonly redact?: (text: string) => string;
  /** The workspace root (absolute): the default `roots/list` answer. */
  readonly workspace: string;
  /** Default per-call timeout in ms, also used for list/read/get requests (the plugin's `callTimeout`; default 60000). */
  readonly callTimeoutMs?: number;
  /** Rounds of `input_required` (2026-07-28) answered per request before it fails with PLN_E_MCP_INPUT_ROUNDS (the plugin's `inputRounds`; default 10). */
  readonly inputRounds?: number;
  /** The log level asked of 2026-07-28 servers per request when a caller gives none (the plugin's `serverLogLevel`); none: no server logs there. */
  readonly serverLogLevel?: string;
  /**
   * Where elicitation forms are asked. Default: stdin and stderr when both are
   * terminals and `CI` is not set; `null`: never ask (decline).
   */
  readonly terminal?: Terminal | null;
  /**
   * Whether a modern (2026-07-28) server's change stream (`subscriptions/listen`) is opened as it
   * connects; asked at each connection. False in a one-shot command: nothing stays to follow a
   * change, and the stream is a request and a held response per server. A resource subscription
   * still opens one. Default: true.
   */
  readonly followChanges?: () => boolean;
}

/** A resource of a server, as listed. */
export interface ResourceInfo {
  readonly server: string;
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly mimeType?: string;
  readonly description?: string;
  readonly size?: number;
}

/** A resource template of a server, as listed. */
export interface ResourceTemplateInfo {
  readonly server: string;
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly mimeType?: string;
  readonly description?: string;
}

/** A prompt of a server, as listed. */
export interface PromptInfo {
  readonly server: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: ReadonlyArray<{ name: string; description?: string; required?: boolean }>;
}

/** A resource's contents, and the same formatted for a terminal. */
export interface ResourceRead {
  readonly contents: ReadonlyArray<Record<string, unknown>>;
  readonly text: string;
}

/** A prompt's messages, and the same rendered as text (`role: content` per message). */
export interface PromptRendered {
  readonly description?: string;
  readonly messages: ReadonlyArray<Record<string, unknown>>;
  readonly text: string;
}

/** What argument completion refers to: a prompt, or a resource template. */
export type CompletionRef = { type: 'prompt'; name: string } | { type: 'resource'; uri: string };

/** One connected server's features, returned by `attachFeatures`. */
export interface ServerFeatures {
  readonly server: string;
  readonly client: Client;
  /** This server's tools in the registry (after `includeTools`/`excludeTools`). */
  tools(): readonly McpTool[];
  /** Lists the tools again (what a `tools/list_changed` notification does). */
  refreshTools(): Promise<readonly McpTool[]>;
  /** One call through the whole pipeline; `name` is the namespaced name or the server's own tool name. */
  callTool(name: string, args: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<ToolCallResult>;
  resources(): Promise<readonly ResourceInfo[]>;
  resourceTemplates(): Promise<readonly ResourceTemplateInfo[]>;
  readResource(uri: string): Promise<ResourceRead>;
  /** `listener` runs on each `notifications/resources/updated` for `uri`; the disposer unsubscribes (the last one sends `resources/unsubscribe`, or, on a modern server, leaves the URI out of the `subscriptions/listen` filter). */
  subscribe(uri: string, listener: () => void): Promise<Disposer>;
  prompts(): Promise<readonly PromptInfo[]>;
  getPrompt(name: string, args?: Readonly<Record<string, string>>): Promise<PromptRendered>;
  /** Completion values; `context` carries already chosen arguments (for dependent completions). */
  complete(ref: CompletionRef, argument: { name: string; value: string }, context?: Readonly<Record<string, string>>): Promise<readonly string[]>;
  /** Tells the server the roots changed (after the host's `mcp:roots` answer changes). */
  notifyRootsChanged(): Promise<void>;
  /** Removes this server's tools and subscriptions; idempotent. The core calls it on disconnect and stop. */
  detach(reason?: string): void;
  readonly detached: boolean;
}

/**
 * Every attached server's tools, under `<server>__<tool>`, and the way to call
 * them. The mcp service delegates `tools`, `callTool`, `resources`, … here.
 * Methods other than `callTool` throw `PlinthError`s (`PLN_E_MCP_…`) for server trouble.
 */
export interface ToolRegistry {
  tools(): readonly McpTool[];
  get(name: string): McpTool | undefined;
  /** Never throws: an unknown tool, a disconnected server, a block… are results with `ok: false`. */
  callTool(name: string, args: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<ToolCallResult>;
  /** The attached server of that name. */
  server(name: string): ServerFeatures | undefined;
  servers(): readonly ServerFeatures[];
  /** One server's, or every attached server's (a failing server is left out and logged). */
  resources(server?: string): Promise<readonly ResourceInfo[]>;
  resourceTemplates(server?: string): Promise<readonly ResourceTemplateInfo[]>;
  readResource(server: string, uri: string): Promise<ResourceRead>;
  subscribe(server: string, uri: string, listener: () => void): Promise<Disposer>;
  prompts(server?: string): Promise<readonly PromptInfo[]>;
  getPrompt(server: string, name: string, args?: Readonly<Record<string, string>>): Promise<PromptRendered>;
  complete(server: string, ref: CompletionRef, argument: { name: string; value: string }, context?: Readonly<Record<string, string>>): Promise<readonly string[]>;
  /** The tool as its server listed it, by namespaced name. */
  listed(name: string): Readonly<Record<string, unknown>> | undefined;
  /** Called when a server's tools change (as `onChange`) and when it announces new resources or prompts. */
  onListChanged(listener: (change: { server: string; list: 'tools' | 'resources' | 'prompts' }) => void): Disposer;
  /** For `attachFeatures`: the server sent `resources/list_changed` or `prompts/list_changed`. */
  listChanged(server: string, list: 'resources' | 'prompts'): void;
  /** Called for each log message a server sends (see McpService.onLogMessage). */
  onLogMessage(listener: (message: ServerLogMessage) => void): Disposer;
  /** For `attachFeatures`: the server sent `notifications/message`. */
  logMessage(message: ServerLogMessage): void;
  /** Called after a server's tools change (listed, re-listed, removed). */
  onChange(listener: (change: { server: string; tools: readonly McpTool[] }) => void): Disposer;

  /** For `attachFeatures`: registers a server (replacing an earlier attachment of the same name). */
  attach(features: ServerFeatures, log?: Logger): void;
  /** For `attachFeatures`: sets a server's tools. */
  setTools(server: string, tools: readonly RegisteredTool[]): void;
  /** For `ServerFeatures.detach`: drops a server's tools; calls to them answer PLN_E_MCP_DISCONNECTED with `reason`. */
  detach(server: string, reason: string, features?: ServerFeatures): void;
  /** For the core, once a server is no longer defined (its plugin left): its tools go and calls to them are unknown, not disconnected. */
  forget(server: string): void;
}

/** A registry entry: the public tool and what the wrapper needs to call it. */
export interface RegisteredTool {
  readonly tool: McpTool;
  /** The tool as the server listed it. */
  readonly listed?: Readonly<Record<string, unknown>>;
  /** The server's output schema, when it declares one. */
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  /** The JSON Schema dialect the server declared (`$schema`) for the input, for validation. */
  readonly dialect?: string;
  readonly outputDialect?: string;
  /** `execution.taskSupport`: `required` tools can only run as MCP tasks, which plinth does not drive. */
  readonly taskSupport?: string;
}
