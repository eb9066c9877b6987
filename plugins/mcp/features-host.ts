/**
 * The core's side of the seam with the features module (`./features/`: tool
 * registry, tool wrapper, resources, prompts, answers to server requests).
 * The core owns clients and their states; the features own everything said
 * over a connected client. Per client, in this order:
 *
 * 1. `prepareClient(client, definition, deps)`: before `connect`, so that the
 *    roots, sampling and elicitation handlers answer the server's first request;
 * 2. `attachFeatures(client, definition, deps)`: after `initialize`, within the
 *    connection timeout (tool discovery, `list_changed`); the server counts as
 *    `connected` once it resolves;
 * 3. `ServerFeatures.detach(reason)`: on stop, disconnect or a failed attempt.
 *
 * The module pulls in the SDK, so it is imported on first use, not at boot.
 * Until then (no server has started) the registry is empty anyway.
 */
import type { Client } from '@modelcontextprotocol/client';
import { PlinthError, describeError } from 'plinth/sdk';
import type { FeatureSession } from './connect.js';

import type { FeatureDeps, ServerFeatures, ToolRegistry } from './features/types.js';
import type { ToolSearch } from './features/search.js';
import type { McpServerDefinition } from 'plinth/sdk';

/** What the core calls in `./features/index.ts`. */
export interface FeaturesModule {
  createToolRegistry(): ToolRegistry;
  /** The search index over a registry (absent in a test's stand-in module). */
  createToolSearch?(registry: ToolRegistry): ToolSearch;
  prepareClient(client: Client, definition: McpServerDefinition, deps: Omit<FeatureDeps, 'registry' | 'emit'>): void;
  attachFeatures(client: Client, definition: McpServerDefinition, deps: FeatureDeps): ServerFeatures | Promise<ServerFeatures>;
}

/** Loads the features module once per kernel and adapts it to the connection steps. */
export class FeatureHost {
  readonly #deps: Omit<FeatureDeps, 'registry'>;
  readonly #load: () => Promise<FeaturesModule>;
  #loading: Promise<{ module: FeaturesModule; deps: FeatureDeps }> | undefined;
  #registry: ToolRegistry | undefined;
  #search: ToolSearch | undefined;

  /** `load` is the module import; tests may pass another. */
  constructor(deps: Omit<FeatureDeps, 'registry'>, load: () => Promise<FeaturesModule> = loadFeatures) {
    this.#deps = deps;
    this.#load = load;
  }

  /** The registry, once the module is loaded (undefined before: nothing has connected yet). */
  get registry(): ToolRegistry | undefined {
    return this.#registry;
  }

  /** The tool search index, once the module is loaded; it indexes nothing before its first search. */
  get search(): ToolSearch | undefined {
    return this.#search;
  }

  /**
   * The module and the deps it is given, loading it on first use.
   * @throws PlinthError PLN_E_MCP_FEATURES_UNAVAILABLE when the module cannot be imported.
   */
  load(): Promise<{ module: FeaturesModule; deps: FeatureDeps }> {
    this.#loading ??= this.#load().then(
      (module) => {
        this.#registry = module.createToolRegistry();
        this.#search = module.createToolSearch?.(this.#registry);
        return { module, deps: { ...this.#deps, registry: this.#registry } };
      },
      (error: unknown) => {
        throw new PlinthError('PLN_E_MCP_FEATURES_UNAVAILABLE', `the mcp plugin's tool, resource and prompt module could not be loaded: ${describeError(error)}`, {
          plugin: 'mcp',
          hint: 'reinstall plinth (`npm ci`); servers still start, but their tools, resources and prompts are not available',
          cause: error,
        });
      },
    );
    return this.#loading;
  }

  /** The features of one new client; undefined (and logged once) when the module cannot load: the server still connects. */
  async session(client: Client, definition: McpServerDefinition): Promise<FeatureSession | undefined> {
    let loaded: { module: FeaturesModule; deps: FeatureDeps };
    try {
      loaded = await this.load();
    } catch (error) {
      this.#deps.log.error((error as Error).message);
      return undefined;
    }
    const { module, deps } = loaded;
    module.prepareClient(client, definition, deps);
    let features: ServerFeatures | undefined;
    let closedReason: string | undefined;
    return {
      connected: async () => {
        features = await module.attachFeatures(client, definition, deps);
        // Closed while discovery ran: the tools it registered must go again.
        if (closedReason !== undefined) features.detach(closedReason);
      },
      closed: (reason) => {
        closedReason = reason;
        features?.detach(reason);
      },
    };
  }
}

/** Imports the features module (and with it the SDK's schemas). */
async function loadFeatures(): Promise<FeaturesModule> {
  const module: FeaturesModule = await import('./features/index.js');
  return module;
}
