/**
 * `attachFeatures`: the seam between the mcp core and the features. The core
 * connects a `Client` (after `prepareClient`), then attaches it here: the
 * server's tools are listed into the registry and followed through
 * `tools/list_changed`, resource updates and log messages are routed, and the
 * returned handle serves tools, resources, prompts and completion until
 * `detach` (the core calls it on disconnect; a closing client detaches too).
 */
import type { Client } from '@modelcontextprotocol/client';
import type { McpServerDefinition, McpTool } from 'plinth/sdk';
import { callRegisteredTool, type CallContext } from './call.js';
import { callOrigin } from '../origin.js';
import { createChangeStream } from './listen.js';
import { logServerMessage } from './notifications.js';
import { keepNotificationsBeforeResponses } from './ordering.js';
import { complete, getPrompt, listPrompts } from './prompts.js';
import { isModern } from './request-meta.js';
import { prepareClient, redactFor } from './requests.js';
import { createSubscriptions, listResourceTemplates, listResources, readResource, type CatalogContext } from './resources.js';
import { MCP_CODES, failedResult } from './result.js';
import { listServerTools } from './tools.js';
import type { FeatureDeps, RegisteredTool, ServerFeatures } from './types.js';

/** The default per-call (and per-request) timeout, when the core gives none. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

/** Logged (never thrown) when a server lists a tool name plinth refuses: empty, `__proto__`, `constructor`, `prototype`. */
const TOOL_NAME_INVALID = 'PLN_E_MCP_TOOL_NAME_INVALID';

/** Logged (never thrown) when a 2026-07-28 server over HTTP lists a tool whose `x-mcp-header` annotations break the rules: the tool is left out. */
const TOOL_HEADER_INVALID = 'PLN_E_MCP_TOOL_HEADER_INVALID';

/**
 * Attaches a connected client's features to the registry and returns the
 * server's handle. Resolves once the tools are listed; a server whose tools
 * cannot be listed is attached with none (logged) and listed again on its
 * next `tools/list_changed`. Rejects only when listing needs an OAuth sign-in
 * (a server that lets `initialize` through without a token): the server is
 * not usable then, and the core says so.
 */
export async function attachFeatures(client: Client, definition: McpServerDefinition, deps: FeatureDeps): Promise<ServerFeatures> {
  prepareClient(client, definition, deps);
  keepNotificationsBeforeResponses(client);
  const server = definition.name;
  const { log, registry } = deps;
  const redact = redactFor(deps, definition);
  const timeoutMs = deps.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const catalog: CatalogContext = {
    client,
    server,
    timeoutMs,
    redact,
    log,
    ...(deps.inputRounds !== undefined && { inputRounds: deps.inputRounds }),
    ...(deps.serverLogLevel !== undefined && { serverLogLevel: deps.serverLogLevel }),
  };
  // Modern servers carry changes on a subscriptions/listen stream; after a gap in it, list again and tell every subscriber.
  const stream = createChangeStream(catalog, () => void catchUp());
  const catchUp = async () => {
    refreshTools({ cacheMode: 'refresh' }).catch((error: unknown) => log.warn(redact(`server "${server}": listing tools after a gap in its change stream failed: ${message(error)}`)));
    // What the SDK's cache holds may be what changed unseen: fetch it again before anyone is told to read it.
    const offered = client.getServerCapabilities() ?? {};
    const fresh = { cacheMode: 'refresh' as const, timeout: timeoutMs };
    await Promise.allSettled([
      offered.resources ? client.listResources(undefined, fresh) : undefined,
      offered.prompts ? client.listPrompts(undefined, fresh) : undefined,
      ...subscriptions.uris().map((uri) => client.readResource({ uri }, fresh)),
    ]);
    if (detachedReason !== undefined) return;
    registry.listChanged(server, 'resources');
    registry.listChanged(server, 'prompts');
    for (const uri of subscriptions.uris()) subscriptions.updated(uri);
  };
  const subscriptions = createSubscriptions(catalog, stream);
  let detachedReason: string | undefined;
  let current = new Map<string, RegisteredTool>();
  let listed: readonly RegisteredTool[] = [];
  const warned = new Set<string>();
  // Mcp-Param-* headers exist over HTTP only; a client elsewhere (stdio) may ignore the annotations (the spec says so).
  const headerRules = isModern(client) && definition.url !== undefined;

  const callContext: CallContext = {
    client,
    server,
    emit: deps.emit,
    log,
    redact,
    defaultTimeoutMs: timeoutMs,
    detachedReason: () => detachedReason,
    ...(deps.inputRounds !== undefined && { inputRounds: deps.inputRounds }),
    ...(deps.serverLogLevel !== undefined && { serverLogLevel: deps.serverLogLevel }),
    continuations: new Map(),
    relist: async (tool) => {
      await refreshTools();
      return current.get(tool);
    },
  };

  // One listing at a time; a change notified while one runs makes it list once more.
  let running: Promise<readonly McpTool[]> | undefined;
  let dirty = false;
  // 'refresh' when the SDK's cached list cannot be trusted (a gap in the change stream); sticks until a listing ran with it.
  let cacheMode: 'use' | 'refresh' = 'use';
  const refreshTools = (options?: { cacheMode?: 'use' | 'refresh' }): Promise<readonly McpTool[]> => {
    if (detachedReason !== undefined) return Promise.resolve([]);
    dirty = true;
    if (options?.cacheMode === 'refresh') cacheMode = 'refresh';
    running ??= (async () => {
      try {
        while (dirty && detachedReason === undefined) {
          dirty = false;
          const mode = cacheMode;
          cacheMode = 'use';
          const { tools, skipped, refused, badHeaders } = await listServerTools(client, definition, timeoutMs, { cacheMode: mode, headerRules });
          if (detachedReason !== undefined) break;
          for (const note of skipped) log.warn(`server "${server}": tool ${note}`);
          for (const { tool, problem } of badHeaders) {
            const what = `header:${tool}:${problem}`;
            if (warned.has(what)) continue;
            warned.add(what);
            log.warn(redact(`${TOOL_HEADER_INVALID}: MCP server "${server}" lists tool "${tool}" with an invalid x-mcp-header annotation (${problem}); it is left out, its other tools register`));
          }
          for (const what of refused) {
            // Once per connection: the list is read again on each list_changed.
            if (warned.has(what)) continue;
            warned.add(what);
            log.warn(`${TOOL_NAME_INVALID}: MCP server "${server}" lists ${what}; it is left out, its other tools register`);
          }
          // By the server's own name too; a namespaced name wins where the two spellings collide.
          current = new Map([...tools.map((entry) => [entry.tool.tool, entry] as const), ...tools.map((entry) => [entry.tool.name, entry] as const)]);
          listed = tools;
          registry.setTools(server, tools);
        }
        return features.tools();
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const features: ServerFeatures = {
    server,
    client,
    get detached() {
      return detachedReason !== undefined;
    },
    tools() {
      return listed.map((entry) => entry.tool);
    },
    refreshTools: () => refreshTools(),
    async callTool(name, args, options) {
      const entry = current.get(name);
      if (!entry) {
        return failedResult({ code: MCP_CODES.toolUnknown, message: `server "${server}" has no tool "${name}"` }, Date.now());
      }
      return callRegisteredTool(entry, args, options, callContext);
    },
    resources: () => listResources(catalog),
    resourceTemplates: () => listResourceTemplates(catalog),
    readResource: (uri) => readResource(catalog, uri),
    subscribe: (uri, listener) => subscriptions.subscribe(uri, listener),
    prompts: () => listPrompts(catalog),
    getPrompt: (name, args) => getPrompt(catalog, name, args),
    complete: (ref, argument, context) => complete(catalog, ref, argument, context),
    async notifyRootsChanged() {
      try {
        await client.sendRootsListChanged();
      } catch (error) {
        log.warn(`server "${server}": could not notify a roots change: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    detach(reason = 'detached') {
      if (detachedReason !== undefined) return;
      detachedReason = reason;
      stream.close();
      subscriptions.clear();
      current = new Map();
      listed = [];
      registry.detach(server, reason, features);
    },
  };

  client.setNotificationHandler('notifications/tools/list_changed', () => {
    if (detachedReason !== undefined) return;
    refreshTools().catch((error: unknown) => log.warn(redact(`server "${server}": listing tools after tools/list_changed failed, keeping the previous list: ${message(error)}`)));
  });
  client.setNotificationHandler('notifications/resources/updated', (notification) => subscriptions.updated(notification.params.uri));
  client.setNotificationHandler('notifications/resources/list_changed', () => {
    if (detachedReason === undefined) registry.listChanged(server, 'resources');
  });
  client.setNotificationHandler('notifications/prompts/list_changed', () => {
    if (detachedReason === undefined) registry.listChanged(server, 'prompts');
  });
  client.setNotificationHandler('notifications/message', (notification) => {
    logServerMessage(log, server, notification.params, redact);
    const { level, logger, data } = notification.params;
    const origin = callOrigin();
    registry.logMessage({ server, level, data, ...(logger !== undefined && { logger }), ...(origin !== undefined && { origin }) });
  });

  // A closing client takes its tools along, whoever notices first (the core's own handler keeps running).
  const previousOnClose = client.onclose;
  client.onclose = () => {
    previousOnClose?.();
    features.detach('the connection closed');
  };

  registry.attach(features);
  try {
    await refreshTools();
  } catch (error) {
    if (needsAuthorization(error)) {
      features.detach('the server needs a sign-in');
      throw error;
    }
    log.warn(redact(`server "${server}": its tools could not be listed (${message(error)}); it is attached without tools until it sends tools/list_changed`));
  }
  // Before the server counts as connected: a change right after the connection is not missed.
  if (deps.followChanges?.() !== false) await stream.open();
  return features;
}

/** An OAuth error of the auth provider (the oauth plugin's `PLN_E_OAUTH_…`): a sign-in is needed, not a server fault. */
export function needsAuthorization(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('PLN_E_OAUTH_');
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
