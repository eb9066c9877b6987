/**
 * One downstream session: an SDK `Server` whose handlers serve the catalog
 * (tools, resources, templates, prompts, completions, the status resource)
 * and forward tool calls to the `mcp` service — so every call runs
 * `before_tool`, the call and `after_tool` — with the caller's cancellation
 * and progress. Each session has its own subscriptions and in-flight calls.
 */
import { Server, ProtocolError, ProtocolErrorCode, SdkErrorCode, SdkError } from '@modelcontextprotocol/server';
import type { CallToolResult, ClientCapabilities, InputRequiredResult, LoggingLevel, ServerContext } from '@modelcontextprotocol/server';
import { CLIENT_CAPABILITIES_META_KEY, inputRequired } from '@modelcontextprotocol/server';
import type { Disposer, Logger, McpService, ToolCallResult } from 'plinth/sdk';
import { STATUS_URI, servedTool, serverOfName } from './catalog.js';
import type { Catalog } from './gateway-catalog.js';
import { type RoundTrip, type RoundTrips, STATE_PREFIX } from './rounds.js';
import { unavailableText } from './status.js';
import { CALL_TOOL, LIST_ALL_META, SEARCH_TOOL, errorResult, searchModeList, searchToolsResult, unwrapCall } from './tool-mode.js';

/** The context of one downstream request: `ctx.mcpReq.send` sends along it. */
export type DownstreamContext = ServerContext;

/** A tool call in flight: its upstream server and the downstream request it answers (server-to-client requests go along it). */
export interface InFlightCall {
  readonly server: string;
  readonly ctx: DownstreamContext;
  /** A modern client's call: upstream requests go back to it as `input_required` (rounds.ts). */
  readonly round?: RoundTrip;
  /** What a modern client declared in its request's envelope. */
  readonly capabilities?: ClientCapabilities;
}

/** One served session. */
export interface GatewaySession {
  readonly server: Server;
  /**
   * `legacy`: a 2025-era session (initialize, a session id over HTTP, kept between requests).
   * `modern`: a 2026-07-28 instance, one per HTTP request (kept by nobody) or one per stdio connection.
   */
  readonly era: 'legacy' | 'modern';
  readonly calls: Set<InFlightCall>;
  /** When it was last asked anything (idle timeout). */
  lastActive: number;
  /** The level its client asked for with `logging/setLevel`; undefined until it does. */
  readonly logLevel: LoggingLevel | undefined;
  close(): Promise<void>;
  readonly closed: boolean;
}

export interface SessionDeps {
  readonly era?: 'legacy' | 'modern';
  readonly mcp: McpService;
  readonly catalog: Catalog;
  readonly log: Logger;
  readonly version: string;
  /** The status resource's JSON, now. */
  readonly status: () => Promise<string>;
  readonly onClose: (session: GatewaySession) => void;
  /** Its client set a log level: the gateway passes the levels on to the upstream servers. */
  readonly onLogLevel: () => void;
  /** Modern calls in flight (upstream requests during them come back as `input_required`). */
  readonly rounds: RoundTrips;
  /** How long a modern client has to retry a call that got `input_required`. */
  readonly clientTimeout: number;
  /** Search mode (setting `toolMode: "search"`): which served names are pinned; undefined in `all` mode. */
  readonly pinned?: (name: string) => boolean;
}

const CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: true, subscribe: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
} as const;

/**
 * The gateway's own cache hints for modern (2026-07-28) clients. `server/discover` is the same for
 * every caller and changes only with a new plinth (public, a minute). The lists and reads are built
 * from upstream connections that carry the user's own credentials, so they are `private`: a shared
 * cache must never hand them to another principal. Lists live a few seconds (a `list_changed` on
 * `subscriptions/listen` invalidates them sooner); a read is never cached (ttl 0), since the
 * gateway cannot vouch for an upstream resource's freshness.
 */
export const CACHE_HINTS = {
  'server/discover': { ttlMs: 60_000, cacheScope: 'public' },
  'tools/list': { ttlMs: 5_000, cacheScope: 'private' },
  'prompts/list': { ttlMs: 5_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 5_000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 5_000, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
} as const;

/** A new session's server; connect it to a transport. */
export function createSession(deps: SessionDeps): GatewaySession {
  const { mcp, catalog } = deps;
  const era = deps.era ?? 'legacy';
  const modern = era === 'modern';
  // A modern client asks for a log level per request (and gets no logging/setLevel); resources/subscribe is 2025-only (modern: subscriptions/listen).
  const { logging: _logging, ...modernCapabilities } = CAPABILITIES;
  const server = new Server(
    { name: 'plinth', version: deps.version, title: 'plinth gateway' },
    {
      capabilities: modern ? modernCapabilities : CAPABILITIES,
      cacheHints: CACHE_HINTS,
      instructions: `Tools, resources and prompts of the MCP servers configured in plinth. Tools are named <server>__<tool>. Read ${STATUS_URI} to see which servers are connected and how to fix the others.`,
      // A burst of upstream changes (a restart, a plugin enabled) is one notification per list.
      debouncedNotificationMethods: ['notifications/tools/list_changed', 'notifications/resources/list_changed', 'notifications/prompts/list_changed'],
    },
  );
  const subscriptions = new Map<string, Promise<Disposer>>();
  let closed = false;
  let logLevel: LoggingLevel | undefined;
  const session: GatewaySession = {
    server,
    era,
    calls: new Set(),
    lastActive: Date.now(),
    get logLevel() {
      return logLevel;
    },
    get closed() {
      return closed;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const sub of subscriptions.values()) void sub.then((off) => off(), () => undefined);
      subscriptions.clear();
      await server.close().catch(() => undefined);
      deps.onClose(session);
    },
  };
  server.onclose = () => void session.close();
  const touch = () => {
    session.lastActive = Date.now();
  };

  // Which upstream messages this session gets (see logging.ts); the upstreams are told the most verbose level any session asked for.
  if (!modern) {
    server.setRequestHandler('logging/setLevel', (request) => {
      touch();
      logLevel = request.params.level;
      deps.onLogLevel();
      return {};
    });
  }

  server.setRequestHandler('tools/list', (request) => {
    touch();
    const { tools } = catalog.tools();
    if (deps.pinned) return { tools: searchModeList(mcp, tools, deps.pinned, request.params?._meta?.[LIST_ALL_META] === 'all') as never };
    return { tools: [...tools].map(([name, tool]) => servedTool(mcp, name, tool)) as never };
  });

  server.setRequestHandler('tools/call', async (request, ctx) => {
    touch();
    let params: { name: string; arguments?: Record<string, unknown> } = request.params;
    if (deps.pinned && params.name === SEARCH_TOOL) return searchToolsResult(mcp, catalog.tools().tools, params.arguments ?? {}) as CallToolResult;
    if (deps.pinned && params.name === CALL_TOOL) {
      // The tool it names is called exactly as a direct call is: the same path below.
      const unwrapped = unwrapCall(params.arguments);
      if ('error' in unwrapped) return errorResult(unwrapped.error) as CallToolResult;
      params = unwrapped;
    }
    const { name } = params;
    if (modern) return modernCall(params, ctx);
    const tool = catalog.tools().tools.get(name);
    if (!tool) return notServed(mcp, name);
    const call: InFlightCall = { server: tool.server, ctx };
    session.calls.add(call);
    try {
      const token = ctx.mcpReq._meta?.progressToken;
      const result = await mcp.callTool(tool.name, params.arguments ?? {}, {
        signal: ctx.mcpReq.signal,
        // What the server sends along this call comes back with it (forward.ts routes it to this session).
        origin: call,
        ...(token !== undefined && {
          onProgress: (progress) => {
            ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } }).catch(() => undefined);
          },
        }),
      });
      if (ctx.mcpReq.signal.aborted) throw new SdkError(SdkErrorCode.RequestTimeout, 'the call was cancelled');
      return toCallResult(result);
    } finally {
      session.calls.delete(call);
      touch();
    }
  });

  /**
   * A modern client's call: made once upstream; an upstream request during it comes back as
   * `input_required` with this process's `requestState`, and the retry carrying it goes on with
   * the same upstream call (rounds.ts).
   */
  const modernCall = async (params: { name: string; arguments?: Record<string, unknown> }, ctx: DownstreamContext): Promise<CallToolResult | InputRequiredResult> => {
    const state = ctx.mcpReq.requestState<string>();
    let round: RoundTrip | undefined;
    if (typeof state === 'string' && state.startsWith(STATE_PREFIX)) {
      round = deps.rounds.get(state);
      if (!round || round.tool !== params.name) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `PLN_E_GATEWAY_ROUND_TRIP_LOST: this retry's requestState names a call this gateway process does not have (another process made it, it was answered or cancelled, or nobody retried within plugins.gateway.settings.clientTimeout): call "${params.name}" again`,
        );
      }
      round.ctx = ctx;
      round.answer(ctx.mcpReq.inputResponses as Record<string, unknown> | undefined);
    } else {
      const tool = catalog.tools().tools.get(params.name);
      if (!tool) return notServed(mcp, params.name);
      const opened = deps.rounds.open(params.name, tool.server, ctx, (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined);
      round = opened;
      const token = ctx.mcpReq._meta?.progressToken;
      // A modern upstream's input_required comes back to this client as it was sent, requestState
      // untouched; its retry (another state than ours, or none) continues the upstream call.
      const responses = ctx.mcpReq.inputResponses as Record<string, unknown> | undefined;
      opened.start(() =>
        mcp.callTool(tool.name, params.arguments ?? {}, {
          signal: opened.controller.signal,
          origin: opened.call,
          inputRequired: 'return',
          ...(responses !== undefined && { inputResponses: responses }),
          ...(typeof state === 'string' && { requestState: state }),
          ...(token !== undefined && {
            onProgress: (progress) => {
              opened.ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } }).catch(() => undefined);
            },
          }),
        }),
      );
    }
    // The client gives up on this request (cancels it): the call is cancelled upstream.
    const current = round;
    const cancel = () => deps.rounds.close(current, new Error('the call was cancelled'));
    ctx.mcpReq.signal.addEventListener('abort', cancel, { once: true });
    try {
      const step = await current.next();
      if ('done' in step) {
        deps.rounds.close(current);
        const asked = step.done.inputRequired;
        if (asked) {
          return inputRequired({
            inputRequests: asked.inputRequests as InputRequiredResult['inputRequests'] & object,
            ...(asked.requestState !== undefined && { requestState: asked.requestState }),
          });
        }
        return toCallResult(step.done);
      }
      current.expireIn(deps.clientTimeout, () => deps.rounds.close(current));
      return inputRequired({ inputRequests: { ...step.ask }, requestState: current.id });
    } catch (error) {
      deps.rounds.close(current);
      if (ctx.mcpReq.signal.aborted) throw new SdkError(SdkErrorCode.RequestTimeout, 'the call was cancelled');
      throw error;
    } finally {
      ctx.mcpReq.signal.removeEventListener('abort', cancel);
      touch();
    }
  };

  server.setRequestHandler('resources/list', async () => {
    touch();
    const resources = await catalog.resources();
    return {
      resources: [
        { uri: STATUS_URI, name: 'status', title: 'plinth gateway status', mimeType: 'application/json', description: 'Each upstream server: state, tools, why it is not connected and the fix' },
        ...[...resources.values()].map((r) => r.entry),
      ] as never,
    };
  });

  server.setRequestHandler('resources/templates/list', async () => {
    touch();
    return { resourceTemplates: (await catalog.templates()).map((t) => t.entry) as never };
  });

  server.setRequestHandler('resources/read', async (request) => {
    touch();
    const { uri } = request.params;
    if (uri === STATUS_URI) return { contents: [{ uri, mimeType: 'application/json', text: await deps.status() }] };
    const target = await catalog.route(uri);
    const read = await upstream(() => mcp.readResource(target.server, target.uri));
    // The contents name the URI the host asked for (a shadowed URI stays shadowed).
    return { contents: read.contents.map((c) => (c.uri === target.uri ? { ...c, uri } : c)) as never };
  });

  if (!modern) {
  server.setRequestHandler('resources/subscribe', async (request) => {
    touch();
    const { uri } = request.params;
    if (subscriptions.has(uri) || uri === STATUS_URI) {
      if (uri === STATUS_URI) catalog.watchStatus(session);
      return {};
    }
    const target = await catalog.route(uri);
    const pending = upstream(() => mcp.subscribe(target.server, target.uri, () => void server.sendResourceUpdated({ uri }).catch(() => undefined)));
    subscriptions.set(uri, pending);
    try {
      await pending;
    } catch (error) {
      subscriptions.delete(uri);
      throw error;
    }
    if (closed) void pending.then((off) => off());
    return {};
  });

  server.setRequestHandler('resources/unsubscribe', async (request) => {
    touch();
    const { uri } = request.params;
    if (uri === STATUS_URI) catalog.unwatchStatus(session);
    const pending = subscriptions.get(uri);
    subscriptions.delete(uri);
    if (pending) await pending.then((off) => off(), () => undefined);
    return {};
  });
  }

  server.setRequestHandler('prompts/list', async () => {
    touch();
    const { prompts } = await catalog.prompts();
    return { prompts: [...prompts.values()].map((p) => ({ ...p.entry, name: p.name })) as never };
  });

  server.setRequestHandler('prompts/get', async (request) => {
    touch();
    const { prompts } = await catalog.prompts();
    const prompt = prompts.get(request.params.name);
    if (!prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `PLN_E_GATEWAY_UNKNOWN: no prompt is named "${request.params.name}" (prompts/list lists them)`);
    const got = await upstream(() => mcp.getPrompt(prompt.server, prompt.prompt, request.params.arguments));
    return { ...(got.description !== undefined && { description: got.description }), messages: got.messages as never };
  });

  server.setRequestHandler('completion/complete', async (request) => {
    touch();
    const { ref, argument } = request.params;
    let values: readonly string[];
    if (ref.type === 'ref/prompt') {
      const prompt = (await catalog.prompts()).prompts.get(ref.name);
      if (!prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `PLN_E_GATEWAY_UNKNOWN: no prompt is named "${ref.name}"`);
      values = await upstream(() => mcp.complete(prompt.server, { type: 'prompt', name: prompt.prompt }, argument));
    } else {
      const template = (await catalog.templates()).find((t) => t.uriTemplate === ref.uri);
      if (!template) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `PLN_E_GATEWAY_UNKNOWN: no resource template is "${ref.uri}" (resources/templates/list lists them)`);
      values = await upstream(() => mcp.complete(template.server, { type: 'resource', uri: ref.uri }, argument));
    }
    const shown = values.slice(0, 100);
    return { completion: { values: shown, total: values.length, hasMore: values.length > shown.length } };
  });

  // The host's roots changed (or a host with roots arrived, replacing plinth's answer): every upstream server that may ask for them hears it.
  const rootsChanged = async () => {
    for (const s of mcp.servers()) {
      if (s.state === 'connected') await mcp.client(s.name)?.sendRootsListChanged().catch(() => undefined);
    }
  };
  server.setNotificationHandler('notifications/roots/list_changed', rootsChanged);
  server.oninitialized = () => {
    if (server.getClientCapabilities()?.roots) void rootsChanged();
  };

  return session;
}

/** A call result as MCP has it; a call plinth could not make is an error result that says why and what to do. */
export function toCallResult(result: ToolCallResult): CallToolResult {
  if (result.ok) {
    return {
      content: [...result.content] as CallToolResult['content'],
      ...(result.structuredContent && { structuredContent: { ...result.structuredContent } }),
      ...(result.isError && { isError: true }),
    };
  }
  const code = result.error?.code ?? 'PLN_E_GATEWAY_INTERNAL';
  const message = result.error?.message ?? result.text;
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] };
}

/** A call to a name the gateway does not serve: the server is down (say why and the fix), or no such tool. */
function notServed(mcp: McpService, name: string): CallToolResult {
  const server = serverOfName(mcp, name);
  const status = server === undefined ? undefined : mcp.servers().find((s) => s.name === server);
  if (status && status.state !== 'connected') return { isError: true, content: [{ type: 'text', text: unavailableText(status, name) }] };
  return { isError: true, content: [{ type: 'text', text: `PLN_E_GATEWAY_UNKNOWN: no tool is named "${name}" (tools/list lists them; ${STATUS_URI} shows servers that are not connected)` }] };
}

/** An upstream failure as an MCP error the host can show, with plinth's code in the message. */
async function upstream<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    const code = (error as { code?: unknown }).code;
    const hint = (error as { hint?: unknown }).hint;
    const text = `${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}${typeof hint === 'string' ? `. Fix: ${hint}` : ''}`;
    throw new ProtocolError(ProtocolErrorCode.InternalError, text);
  }
}
