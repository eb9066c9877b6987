/**
 * The `mcp` service: the lifecycle half from the {@link ServerManager}, the
 * tool, resource and prompt half delegated to the features' registry, which
 * is loaded with the first server (see features-host.ts).
 */
import type { PlinthError } from 'plinth/sdk';
import type { FeatureHost } from './features-host.js';
import type { ServerManager } from './manager.js';
import type { McpService, ToolCallResult } from 'plinth/sdk';

/** Composes the service. `problems` are the definition problems found in settings and manifests. */
export function createMcpService(manager: ServerManager, features: FeatureHost, problems: () => readonly PlinthError[]): McpService {
  const registry = async () => (await features.load()).deps.registry;
  return {
    servers: () => manager.servers(),
    definition: (name) => manager.definition(name),
    start: (name, options) => manager.start(name, options),
    startAll: (options) => manager.startAll(options),
    stop: (name) => manager.stop(name),
    restart: (name, options) => manager.restart(name, options),
    ensureTrusted: (name, options) => manager.ensureTrusted(name, options),
    trust: (name) => manager.trust(name),
    client: (name) => manager.client(name),
    connection: (name) => manager.connection(name),
    onStateChange: (listener) => manager.onStateChange(listener),
    problems: () => problems().map((p) => ({ code: p.code, message: p.message })),

    tools: () => features.registry?.tools() ?? [],
    listedTool: (name) => features.registry?.listed(name),
    searchTools: (query, options) => features.search?.search(query, options) ?? [],
    compactTools: (options) => features.search?.compact(options) ?? [],
    onListChanged(listener) {
      // The registry comes with the features module; a listener subscribed before it loads is attached once it has.
      let off: (() => void) | undefined;
      let gone = false;
      features.load().then(
        ({ deps }) => {
          if (!gone) off = deps.registry.onListChanged(listener);
        },
        () => undefined, // the module cannot load: no server has lists to change
      );
      return () => {
        gone = true;
        off?.();
      };
    },
    onLogMessage(listener) {
      let off: (() => void) | undefined;
      let gone = false;
      features.load().then(
        ({ deps }) => {
          if (!gone) off = deps.registry.onLogMessage(listener);
        },
        () => undefined,
      );
      return () => {
        gone = true;
        off?.();
      };
    },
    async callTool(name, args, options) {
      const started = performance.now();
      let loaded;
      try {
        loaded = await registry();
      } catch (error) {
        // A tool call never throws: the caller gets a result it can show.
        const { code, message } = error as PlinthError;
        return unavailable(code, message, performance.now() - started);
      }
      return loaded.callTool(name, args, options);
    },
    resources: async (server) => (await registry()).resources(server),
    resourceTemplates: async (server) => (await registry()).resourceTemplates(server),
    readResource: async (server, uri) => (await registry()).readResource(server, uri),
    subscribe: async (server, uri, listener) => (await registry()).subscribe(server, uri, listener),
    prompts: async (server) => (await registry()).prompts(server),
    getPrompt: async (server, name, args) => (await registry()).getPrompt(server, name, args),
    complete: async (server, ref, argument) => (await registry()).complete(server, ref, argument),
  };
}

function unavailable(code: string, message: string, durationMs: number): ToolCallResult {
  return { ok: false, isError: true, content: [{ type: 'text', text: message }], text: message, error: { code, message }, durationMs };
}
