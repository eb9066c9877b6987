/**
 * One gateway: the catalog its sessions share, the forwarding handlers, the
 * propagation of upstream changes (a list changed, a server connected or
 * gone, a plugin added or removed) to every session as `list_changed`, and
 * the stdio and HTTP endpoints. Loaded when `plinth serve` asks for it: it
 * brings the SDK's server side.
 */
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { PlinthError } from 'plinth/sdk';
import type { Disposer, Gateway, GatewayEndpoint, GatewayHttpEndpoint, GatewayHttpOptions, Logger, McpService } from 'plinth/sdk';
import { type Collision, STATUS_URI, describeCollisions } from './catalog.js';
import { forwardingHandlers } from './forward.js';
import { Catalog } from './gateway-catalog.js';
import { serveHttp } from './http.js';
import { applyLevel, forwardLog } from './logging.js';
import { type GatewaySession, createSession } from './session.js';
import type { GatewaySettings } from './settings.js';
import { listenedUris } from './listen.js';
import { RoundTrips } from './rounds.js';
import { statusDocument } from './status.js';
import { pinnedNames, pinnedTest } from './tool-mode.js';

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
  // Search mode: hosts list the pinned tools and the gateway's two (tool-mode.ts); a tools
  // list_changed goes out only when the pinned set changes.
  const pinned = settings.toolMode === 'search' ? pinnedTest(settings.pinnedTools) : undefined;
  let pinnedNow = '';
  const pinnedChanged = (): boolean => {
    if (!pinned) return true;
    const now = JSON.stringify(pinnedNames(catalog.tools().tools, pinned));
    const changed = now !== pinnedNow;
    pinnedNow = now;
    return changed;
  };
  const sessions = new Set<GatewaySession>();
  const rounds = new RoundTrips(settings.instance);
  const endpoints = new Set<GatewayEndpoint>();
  const warned = new Set<string>();
  // While ready() waits for the first start, collisions are its error's to report, all at once.
  let starting = false;
  let closing: Promise<void> | undefined;

  /**
   * A new session. Legacy sessions and a stdio connection's instance are kept (list changes and
   * upstream requests reach them); a modern HTTP request's instance is not (`kept: false`): it
   * serves one request and holds nothing after it.
   */
  const newSession = (era: 'legacy' | 'modern' = 'legacy', kept = true) => {
    const session = createSession({
      era,
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
      rounds,
      clientTimeout: settings.clientTimeout,
      ...(pinned && { pinned }),
    });
    if (kept) sessions.add(session);
    return session;
  };

  // Modern (2026-07-28) HTTP traffic: the SDK's per-request entry, strict (legacy traffic never
  // reaches it: http.ts routes it to the sessions). Created with the first HTTP endpoint; its
  // `notify` carries list changes and resource updates onto `subscriptions/listen` streams.
  let modernHttp: McpHttpHandler | undefined;
  const modernHandler = () =>
    (modernHttp ??= createMcpHandler(() => newSession('modern', false).server, {
      legacy: 'reject',
      maxRequestBodySize: settings.maxBodyBytes,
      onerror: (error) => log.debug(`gateway: modern request: ${error.message}`),
    }));

  // Resources modern clients listen to (`resourceSubscriptions` of their subscriptions/listen):
  // one upstream subscription per URI however many streams want it, ended with the last one.
  const interest = new Map<string, { count: number; off: Promise<Disposer | undefined> }>();
  const resourceUpdated = (uri: string) => {
    modernHttp?.notify.resourceUpdated(uri);
    for (const session of sessions) if (session.era === 'modern' && !session.closed) void session.server.sendResourceUpdated({ uri }).catch(() => undefined);
  };
  const listenTo = (uris: readonly string[]): { ready: Promise<void>; off: Disposer } => {
    const mine = [...new Set(uris)].filter((uri) => uri !== STATUS_URI);
    for (const uri of mine) {
      const entry = interest.get(uri);
      if (entry) {
        entry.count++;
        continue;
      }
      const off = catalog
        .route(uri)
        .then((target) => mcp.subscribe(target.server, target.uri, () => resourceUpdated(uri)))
        .catch((error: unknown) => {
          log.debug(`gateway: cannot subscribe to ${uri} for a listening client: ${(error as Error).message}`);
          return undefined;
        });
      interest.set(uri, { count: 1, off });
    }
    let done = false;
    // The listen is acknowledged once the upstreams have subscribed: an update after the ack is never lost.
    const ready = Promise.all(mine.map((uri) => interest.get(uri)!.off)).then(() => undefined);
    const off = () => {
      if (done) return;
      done = true;
      for (const uri of mine) {
        const entry = interest.get(uri);
        if (!entry || --entry.count > 0) continue;
        interest.delete(uri);
        void entry.off.then((off) => off?.());
      }
    };
    return { ready, off };
  };

  const announce = (all: ReadonlyArray<'tools' | 'resources' | 'prompts'>) => {
    for (const list of all) catalog.invalidate(list);
    if (all.includes('tools')) warnCollisions();
    const lists = all.includes('tools') && !pinnedChanged() ? all.filter((l) => l !== 'tools') : all;
    if (modernHttp) {
      if (lists.includes('tools')) modernHttp.notify.toolsChanged();
      if (lists.includes('resources')) modernHttp.notify.resourcesChanged();
      if (lists.includes('prompts')) modernHttp.notify.promptsChanged();
    }
    for (const session of sessions) {
      // A legacy session not initialized yet gets nothing; a modern stdio instance's notifications go onto its listen streams.
      if (session.closed || (session.era === 'legacy' && !session.server.getClientCapabilities())) continue;
      const send = (run: () => Promise<void>) => void run().catch(() => undefined);
      if (lists.includes('tools')) send(() => session.server.sendToolListChanged());
      if (lists.includes('resources')) send(() => session.server.sendResourceListChanged());
      if (lists.includes('prompts')) send(() => session.server.sendPromptListChanged());
    }
  };
  const statusChanged = () => {
    for (const session of catalog.statusWatchers) void session.server.sendResourceUpdated({ uri: STATUS_URI }).catch(() => undefined);
    resourceUpdated(STATUS_URI);
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
    handlers: forwardingHandlers(() => [...sessions, ...rounds.callers()], settings.clientTimeout),

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
        pinnedChanged();
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
      // The client's first message picks the era (initialize: legacy; a request with the 2026
      // envelope: modern); one instance serves the connection from then on.
      const mine = new Set<GatewaySession>();
      const listening: Disposer[] = [];
      const transport = new StdioServerTransport(input, output);
      let done!: () => void;
      const closed = new Promise<void>((resolve) => (done = resolve));
      const handle = serveStdio(
        ({ era }) => {
          const session = newSession(era);
          mine.add(session);
          return session.server;
        },
        {
          transport: peekListen(transport, (uris) => {
            const { ready, off } = listenTo(uris);
            listening.push(off);
            return ready;
          }),
          onerror: (error) => log.debug(`gateway: stdio: ${error.message}`) },
      );
      let ending: Promise<void> | undefined;
      const end = () =>
        (ending ??= (async () => {
          for (const off of listening.splice(0)) off();
          await handle.close().catch(() => undefined);
          await Promise.all([...mine].map((s) => s.close()));
          done();
        })());
      input.once('end', () => void end());
      input.once('close', () => void end());
      const endpoint: GatewayEndpoint = {
        closed,
        sessions: () => [...mine].filter((s) => !s.closed).length,
        close: end,
      };
      endpoints.add(endpoint);
      return endpoint;
    },

    async serveHttp(options: GatewayHttpOptions = {}): Promise<GatewayHttpEndpoint> {
      const endpoint = await serveHttp({ settings, home: deps.home, log, newSession: () => newSession('legacy'), modern: modernHandler(), listenTo, options });
      endpoints.add(endpoint);
      return endpoint;
    },

    close() {
      closing ??= (async () => {
        for (const dispose of disposers) dispose();
        await Promise.all([...endpoints].map((e) => e.close().catch(() => undefined)));
        rounds.closeAll();
        await modernHttp?.close().catch(() => undefined);
        for (const entry of interest.values()) void entry.off.then((off) => off?.());
        interest.clear();
        await Promise.all([...sessions].map((s) => s.close()));
      })();
      return closing;
    },
  };
  return gateway;
}

/**
 * The stdio transport, with a look at each `subscriptions/listen` the client sends: its
 * `resourceSubscriptions` are subscribed upstream (for the connection's life), so that their
 * updates reach the listen stream.
 */
function peekListen(transport: StdioServerTransport, onListen: (uris: readonly string[]) => Promise<void>): StdioServerTransport {
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    const deliver = transport.onmessage;
    if (!deliver) return;
    transport.onmessage = (message, ...rest) => {
      const uris = listenedUris(message);
      // The listen goes on (and is acknowledged) once its resources are subscribed upstream.
      if (uris.length > 0) void onListen(uris).then(() => deliver.call(transport, message, ...(rest as [])));
      else deliver.call(transport, message, ...(rest as []));
    };
  };
  return transport;
}
