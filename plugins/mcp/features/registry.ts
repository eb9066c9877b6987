/**
 * The tool registry: every attached server's tools under `<server>__<tool>`,
 * and the entry point for calls and for resource and prompt requests across
 * servers. One per mcp plugin; `attachFeatures` fills it, `detach` empties a
 * server's part. Imports nothing heavy, so the core may create it at setup.
 */
import type { Disposer, Logger } from 'plinth/sdk';
import type { CallOptions, McpTool, ServerLogMessage, ToolCallResult } from 'plinth/sdk';
import { MCP_CODES, failedResult, failureError, type Failure } from './result.js';
import type { RegisteredTool, ServerFeatures, ToolRegistry } from './types.js';

const NAMESPACE_SEPARATOR = '__';

/** A new, empty registry; `log` reports servers left out of cross-server lists. */
export function createToolRegistry(options: { log?: Logger } = {}): ToolRegistry {
  const servers = new Map<string, ServerFeatures>();
  const entries = new Map<string, readonly RegisteredTool[]>();
  const byName = new Map<string, RegisteredTool>();
  const down = new Map<string, string>();
  const listeners = new Set<(change: { server: string; tools: readonly McpTool[] }) => void>();
  const listListeners = new Set<(change: { server: string; list: 'tools' | 'resources' | 'prompts' }) => void>();
  const announce = (server: string, list: 'tools' | 'resources' | 'prompts') => {
    for (const listener of [...listListeners]) {
      try {
        listener({ server, list });
      } catch (error) {
        options.log?.warn(`a list listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  const logListeners = new Set<(message: ServerLogMessage) => void>();
  let all: readonly McpTool[] | undefined;

  const changed = (server: string) => {
    all = undefined;
    const tools = (entries.get(server) ?? []).map((e) => e.tool);
    for (const listener of [...listeners]) {
      try {
        listener({ server, tools });
      } catch (error) {
        options.log?.warn(`a tool registry listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    announce(server, 'tools');
  };

  /** Why `server` cannot be reached, as a failure. */
  const unreachable = (server: string, what: string): Failure => {
    const reason = down.get(server);
    if (reason !== undefined) return { code: MCP_CODES.disconnected, message: `server "${server}" is not connected (${reason}); ${what}` };
    const known = [...servers.keys()];
    return {
      code: MCP_CODES.disconnected,
      message: `no connected server is named "${server}"; ${what} (connected: ${known.length ? known.join(', ') : 'none'})`,
    };
  };

  const requireServer = (server: string, what: string): ServerFeatures => {
    const features = servers.get(server);
    if (!features) throw failureError(unreachable(server, what), server);
    return features;
  };

  /** One server's items, or every server's with failing servers logged and left out. */
  const gather = async <T>(server: string | undefined, what: string, get: (features: ServerFeatures) => Promise<readonly T[]>): Promise<readonly T[]> => {
    if (server !== undefined) return get(requireServer(server, `${what} cannot be listed`));
    const settled = await Promise.allSettled([...servers.values()].map((features) => get(features)));
    const items: T[] = [];
    settled.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') items.push(...outcome.value);
      else options.log?.warn(`${what} of server "${[...servers.keys()][i]}" left out: ${outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason)}`);
    });
    return items;
  };

  const registry: ToolRegistry = {
    tools() {
      all ??= [...entries.values()].flatMap((list) => list.map((e) => e.tool));
      return all;
    },
    get(name) {
      return byName.get(name)?.tool;
    },
    async callTool(name: string, args: Readonly<Record<string, unknown>>, callOptions?: CallOptions): Promise<ToolCallResult> {
      const startedAt = Date.now();
      const entry = byName.get(name);
      const features = entry && servers.get(entry.tool.server);
      if (entry && features) {
        try {
          return await features.callTool(name, args, callOptions);
        } catch (error) {
          // ServerFeatures.callTool does not throw; a replaced implementation might.
          return failedResult({ code: MCP_CODES.serverError, message: `tool "${name}" failed: ${error instanceof Error ? error.message : String(error)}` }, startedAt);
        }
      }
      const at = name.indexOf(NAMESPACE_SEPARATOR);
      const server = at > 0 ? name.slice(0, at) : undefined;
      // A server that was attached and went away: say so. One never attached: the tool is unknown.
      if (server !== undefined && down.has(server)) return failedResult(unreachable(server, `tool "${name}" cannot be called`), startedAt);
      if (server !== undefined && !servers.has(server)) {
        const known = [...servers.keys()];
        return failedResult(
          { code: MCP_CODES.toolUnknown, message: `no tool is named "${name}": no server "${server}" is connected (connected: ${known.length ? known.join(', ') : 'none'})` },
          startedAt,
        );
      }
      if (server !== undefined) {
        const names = (entries.get(server) ?? []).map((e) => e.tool.tool);
        const shown = names.slice(0, 20).join(', ') + (names.length > 20 ? ', …' : '');
        return failedResult(
          {
            code: MCP_CODES.toolUnknown,
            message: `server "${server}" has no tool "${name.slice(at + NAMESPACE_SEPARATOR.length)}" (its tools: ${shown || 'none'}; includeTools/excludeTools may hide some)`,
          },
          startedAt,
        );
      }
      return failedResult({ code: MCP_CODES.toolUnknown, message: `no tool is named "${name}": tool names are <server>__<tool>, e.g. ${registry.tools()[0]?.name ?? 'everything__echo'}` }, startedAt);
    },
    server(name) {
      return servers.get(name);
    },
    servers() {
      return [...servers.values()];
    },
    resources(server) {
      return gather(server, 'resources', (f) => f.resources());
    },
    resourceTemplates(server) {
      return gather(server, 'resource templates', (f) => f.resourceTemplates());
    },
    async readResource(server, uri) {
      return requireServer(server, `resource ${uri} cannot be read`).readResource(uri);
    },
    async subscribe(server, uri, listener) {
      return requireServer(server, `resource ${uri} cannot be subscribed to`).subscribe(uri, listener);
    },
    prompts(server) {
      return gather(server, 'prompts', (f) => f.prompts());
    },
    async getPrompt(server, name, args) {
      return requireServer(server, `prompt "${name}" cannot be got`).getPrompt(name, args);
    },
    async complete(server, ref, argument, context) {
      return requireServer(server, `argument "${argument.name}" cannot be completed`).complete(ref, argument, context);
    },
    listed(name) {
      return byName.get(name)?.listed;
    },
    onListChanged(listener): Disposer {
      listListeners.add(listener);
      return () => void listListeners.delete(listener);
    },
    listChanged(server, list) {
      announce(server, list);
    },
    onLogMessage(listener): Disposer {
      logListeners.add(listener);
      return () => void logListeners.delete(listener);
    },
    logMessage(message) {
      for (const listener of [...logListeners]) {
        try {
          listener(message);
        } catch (error) {
          options.log?.warn(`a log message listener failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    },
    onChange(listener): Disposer {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },

    attach(features) {
      const previous = servers.get(features.server);
      if (previous && previous !== features) previous.detach('replaced by a new connection');
      servers.set(features.server, features);
      down.delete(features.server);
    },
    setTools(server, tools) {
      for (const old of entries.get(server) ?? []) byName.delete(old.tool.name);
      entries.set(server, tools);
      for (const entry of tools) byName.set(entry.tool.name, entry);
      changed(server);
    },
    detach(server, reason, features) {
      // A handle of an earlier connection detaching late must not remove the current one's tools.
      if (features && servers.get(server) !== features) return;
      servers.delete(server);
      down.set(server, reason);
      const had = entries.get(server);
      for (const old of had ?? []) byName.delete(old.tool.name);
      entries.delete(server);
      if (had) changed(server);
    },
    forget(server) {
      servers.get(server)?.detach('its definition was removed');
      servers.delete(server);
      down.delete(server);
      const had = entries.get(server);
      for (const old of had ?? []) byName.delete(old.tool.name);
      entries.delete(server);
      if (had) changed(server);
    },
  };
  return registry;
}
