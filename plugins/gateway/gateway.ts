/**
 * One gateway: the catalog its sessions share, the forwarding handlers, the
 * propagation of upstream changes (a list changed, a server connected or
 * gone, a plugin added or removed) to every session as `list_changed`, and
 * the stdio and HTTP endpoints. Loaded when `plinth serve` asks for it: it
 * brings the SDK's server side.
 */
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { PlinthError } from 'plinth/sdk';
import type { Disposer, Gateway, GatewayEndpoint, GatewayHttpEndpoint, GatewayHttpOptions, Logger, McpService } from 'plinth/sdk';
import { type Collision, STATUS_URI, describeCollisions } from './catalog.js';
import { forwardingHandlers } from './forward.js';
import { Catalog } from './gateway-catalog.js';
import { serveHttp } from './http.js';
import { applyLevel, forwardLog } from './logging.js';
import { type GatewaySession, createSession } from './session.js';
import type { GatewaySettings } from './settings.js';
import { statusDocument } from './status.js';

export interface GatewayDeps {
  readonly mcp: McpService;
  /** The health plugin's states, when it runs. */
  readonly health: () => Promise<ReadonlyMap<string, string> | undefined>;
  readonly settings: GatewaySettings;
  readonly home: string;
  readonly log: Logger;
  readonly version: string;
  /** Registers the gateway for plugin changes (`manifest`, `unload`); returns the disposer. */
  readonly followPlugins: (changed: () => void) => Disposer;
}

/** What to change, for the first pair of servers that collide. */
function collisionFix(collisions: readonly Collision[]): string {
  const [first, second] = collisions[0]!.servers;
  // excludeTools hides tools only: a shared prompt name goes away with the prefix alone.
  const onlyTools = collisions.every((c) => c.kind === 'tool');
  return `remove "prefix": false from "${second}" or "${first}" in mcpServers (that server's names become <server>__<name>)${onlyTools ? ', or hide the shared tools from one of them with its "excludeTools"' : ''}`;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const { mcp, settings, log } = deps;
  const catalog = new Catalog(mcp);
  const sessions = new Set<GatewaySession>();
  const endpoints = new Set<GatewayEndpoint>();
  const warned = new Set<string>();
  // While ready() waits for the first start, collisions are its error's to report, all at once.
  let starting = false;
  let closing: Promise<void> | undefined;

  const newSession = () => {
    const session = createSession({
      mcp,
      catalog,
      log,
      version: deps.version,
      status: async () => statusDocument(mcp, catalog.collisions(), await deps.health(), { sessions: [...sessions].filter((s) => !s.closed).length }),
      onClose: (s) => {
        sessions.delete(s);
        catalog.unwatchStatus(s);
      },
      onLogLevel: () => void applyLevel(mcp, sessions, log),
    });
    sessions.add(session);
    return session;
  };

  const announce = (lists: ReadonlyArray<'tools' | 'resources' | 'prompts'>) => {
    for (const list of lists) catalog.invalidate(list);
    if (lists.includes('tools')) warnCollisions();
    for (const session of sessions) {
      if (session.closed || !session.server.getClientCapabilities()) continue; // not initialized yet
      const send = (run: () => Promise<void>) => void run().catch(() => undefined);
      if (lists.includes('tools')) send(() => session.server.sendToolListChanged());
      if (lists.includes('resources')) send(() => session.server.sendResourceListChanged());
      if (lists.includes('prompts')) send(() => session.server.sendPromptListChanged());
    }
  };
  const statusChanged = () => {
    for (const session of catalog.statusWatchers) void session.server.sendResourceUpdated({ uri: STATUS_URI }).catch(() => undefined);
  };
  const warnCollisions = () => {
    if (starting) return;
    const fresh = catalog.tools().collisions.filter((c) => !warned.has(`${c.kind}\0${c.name}`));
    if (fresh.length === 0) return;
    for (const c of fresh) warned.add(`${c.kind}\0${c.name}`);
    // One line for what a change brought, however many names: the first server in definition order keeps each.
    log.warn(`PLN_E_GATEWAY_NAME_COLLISION: ${describeCollisions(fresh)}; the first of each pair serves them, the other's are hidden (${collisionFix(fresh)})`);
  };

  const disposers: Disposer[] = [
    mcp.onListChanged?.((change) => {
      announce([change.list]);
      statusChanged();
    }) ?? (() => undefined),
    mcp.onStateChange((status) => {
      announce(['tools', 'resources', 'prompts']);
      statusChanged();
      // A server that (re)connects starts at its own level: tell it the one the sessions asked for.
      if (status.state === 'connected') void applyLevel(mcp, sessions, log, status.name);
    }),
    mcp.onLogMessage?.((message) => forwardLog([...sessions], message)) ?? (() => undefined),
    deps.followPlugins(() => {
      announce(['tools', 'resources', 'prompts']);
      statusChanged();
    }),
  ];

  const gateway: Gateway = {
    handlers: forwardingHandlers(() => [...sessions], settings.clientTimeout),

    async ready() {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, settings.startWait);
      });
      starting = true;
      try {
        await Promise.race([mcp.startAll().catch(() => undefined), waited]);
        clearTimeout(timer);
        catalog.invalidate('tools');
        catalog.invalidate('prompts');
        const collisions = [...catalog.tools().collisions, ...(await catalog.prompts().then((t) => t.collisions, () => []))];
        if (collisions.length > 0) {
          throw new PlinthError('PLN_E_GATEWAY_NAME_COLLISION', `the gateway cannot serve every name: ${describeCollisions(collisions)}`, {
            plugin: 'gateway',
            hint: collisionFix(collisions),
            details: { collisions },
          });
        }
      } finally {
        starting = false;
      }
    },

    async serveStdio(io = {}) {
      const input = (io.input ?? process.stdin) as NodeJS.ReadStream;
      const output = (io.output ?? process.stdout) as NodeJS.WriteStream;
      const session = newSession();
      const transport = new StdioServerTransport(input, output);
      let done!: () => void;
      const closed = new Promise<void>((resolve) => (done = resolve));
      const end = () => void session.close().finally(done);
      const previous = session.server.onclose;
      session.server.onclose = () => {
        previous?.();
        done();
      };
      input.once('end', end);
      input.once('close', end);
      await session.server.connect(transport);
      const endpoint: GatewayEndpoint = {
        closed,
        sessions: () => (session.closed ? 0 : 1),
        close: async () => {
          await session.close();
          done();
        },
      };
      endpoints.add(endpoint);
      return endpoint;
    },

    async serveHttp(options: GatewayHttpOptions = {}): Promise<GatewayHttpEndpoint> {
      const endpoint = await serveHttp({ settings, home: deps.home, log, newSession, options });
      endpoints.add(endpoint);
      return endpoint;
    },

    close() {
      closing ??= (async () => {
        for (const dispose of disposers) dispose();
        await Promise.all([...endpoints].map((e) => e.close().catch(() => undefined)));
        await Promise.all([...sessions].map((s) => s.close()));
      })();
      return closing;
    },
  };
  return gateway;
}
