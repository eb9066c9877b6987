/**
 * `plinth serve --http`: streamable HTTP on `/mcp`, one SDK transport and one
 * session per `initialize`. In this order, per request: Host and Origin (403,
 * see guard.ts), the path (404), the bearer token (401), the session (404 for
 * an unknown id; past `maxSessions` the session idle the longest ends, 503
 * when every one is busy), the body size (413). Sessions end on
 * DELETE and after `sessionIdleMs` without a request; a connection that leaves
 * more than `maxBufferedBytes` unread (a stream it never reads) is closed. An
 * error in one request answers 500 (or drops that connection), never more.
 * Each session keeps what its SSE streams carried (./event-store.ts): every
 * stream opens with a priming event (id and `retry:`), and a GET with
 * `Last-Event-ID` replays what came after it.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { PlinthError } from 'plinth/sdk';
import type { Disposer, GatewayHttpEndpoint, GatewayHttpOptions, Logger } from 'plinth/sdk';
import { readBody } from './body.js';
import { BoundedEventStore } from './event-store.js';
import { isLoopback, originPolicy, rebindingProblem } from './guard.js';
import { listenedUris } from './listen.js';
import type { GatewaySession } from './session.js';
import type { GatewaySettings } from './settings.js';
import { authorized, gatewayToken } from './token.js';

export interface HttpDeps {
  readonly settings: GatewaySettings;
  readonly home: string;
  readonly log: Logger;
  readonly newSession: () => GatewaySession;
  /** The SDK's strict modern (2026-07-28) entry: every request that carries the 2026 envelope goes there. */
  readonly modern: McpHttpHandler;
  /** A modern client listens to these resources (`subscriptions/listen`): subscribe upstream until the disposer runs. */
  readonly listenTo: (uris: readonly string[]) => { ready: Promise<void>; off: Disposer };
  readonly options: GatewayHttpOptions;
}

interface Entry {
  readonly session: GatewaySession;
  readonly transport: NodeStreamableHTTPServerTransport;
  /** Requests of this session being answered (their response, or its stream, still open); the standalone GET stream is not one. */
  active: number;
}

/**
 * The session to end for a new one when `maxSessions` are open: the one idle
 * the longest. Idle: no request being answered (no call in flight, no
 * response stream open) — a standalone GET stream that only listens does not
 * count — for the time since its last request began or ended. Undefined when
 * every session is busy.
 */
export function oldestIdle<K>(sessions: ReadonlyMap<K, Pick<Entry, 'active' | 'session'>>): K | undefined {
  let oldest: { id: K; since: number } | undefined;
  for (const [id, entry] of sessions) {
    if (entry.active > 0 || entry.session.calls.size > 0 || entry.session.closed) continue;
    if (!oldest || entry.session.lastActive < oldest.since) oldest = { id, since: entry.session.lastActive };
  }
  return oldest?.id;
}

const SWEEP_MS = 1000;
/** The `retry:` of each stream's priming event: how soon a client whose stream broke reconnects (ms). */
const RETRY_MS = 1000;

export async function serveHttp(deps: HttpDeps): Promise<GatewayHttpEndpoint> {
  const { settings, log } = deps;
  const host = deps.options.host ?? settings.host;
  const port = deps.options.port ?? settings.port;
  const token = await gatewayToken(settings.token, deps.home);
  const policy = originPolicy(host, settings.allowedHosts, settings.allowedOrigins);
  const sessions = new Map<string, Entry>();
  let pending = 0;
  const sockets = new Set<Socket>();
  const modern = toNodeHandler(deps.modern, { onerror: (error) => log.warn(`gateway: a modern request failed: ${error.message}`) });

  /**
   * A POST's body, read here (see body.ts): its parsed JSON for the SDK's transport, which also gets
   * the raw bytes (hono's `rawBody`) to answer a parse error or a wrong Content-Type itself.
   * `false` when the request has been answered (413) or its client has gone.
   */
  const readPost = async (req: IncomingMessage, res: ServerResponse): Promise<unknown> => {
    if (req.method !== 'POST') return undefined;
    const body = await readBody(req, settings.maxBodyBytes);
    if (body.kind === 'gone') return false;
    if (body.kind === 'too-large') {
      const size = body.atLeast ? `over ${body.bytes} bytes` : `${body.bytes} bytes`;
      refuse(res, 413, 'PLN_E_GATEWAY_BODY_TOO_LARGE', `the body is ${size}, more than ${settings.maxBodyBytes} (plugins.gateway.settings.maxBodyBytes)`, { close: !body.drained });
      return false;
    }
    (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body.raw;
    return body.json;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const forbidden = rebindingProblem({ host: req.headers.host, origin: req.headers.origin }, policy);
    if (forbidden) return refuse(res, 403, 'PLN_E_GATEWAY_FORBIDDEN', `${forbidden} (DNS rebinding protection; allow it in plugins.gateway.settings.allowedHosts / allowedOrigins)`);
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/mcp') return refuse(res, 404, 'PLN_E_GATEWAY_NOT_FOUND', `nothing is served at ${path}: the MCP endpoint is /mcp`);
    if (!authorized(req.headers.authorization, token.value)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="plinth"');
      return refuse(res, 401, 'PLN_E_GATEWAY_UNAUTHORIZED', `a bearer token is required: send "Authorization: Bearer <token>" (the token is in ${token.info.from})`);
    }
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string' && id !== '') {
      const entry = sessions.get(id);
      if (!entry) return refuse(res, 404, 'PLN_E_GATEWAY_SESSION_UNKNOWN', 'this session has ended (or never was): initialize a new one');
      entry.session.lastActive = Date.now();
      if (req.method !== 'GET') {
        // Busy until the answer (or its stream) is over; idle time counts from then.
        entry.active++;
        res.once('close', () => {
          entry.active--;
          entry.session.lastActive = Date.now();
        });
      }
      const body = await readPost(req, res);
      if (body === false) return;
      return entry.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST') return refuse(res, 400, 'PLN_E_GATEWAY_SESSION_UNKNOWN', 'no mcp-session-id: start a session with an initialize request (POST)');
    const body = await readPost(req, res);
    if (body === false) return;
    // The era of a request without a session: the SDK's own classification. A request that carries
    // the 2026 envelope (or a modern MCP-Protocol-Version) is modern, stateless, and answered by the
    // SDK's entry (its headers validated there: -32020 on a mismatch); anything else starts a session.
    if (body !== undefined && !(await isLegacyRequest(await toWebRequest(req, body), body, { maxRequestBodySize: settings.maxBodyBytes }))) {
      const uris = listenedUris(body);
      if (uris.length > 0) {
        // Acknowledged once subscribed upstream (an update after the ack is never lost); unsubscribed when the stream ends.
        const { ready, off } = deps.listenTo(uris);
        res.once('close', off);
        await ready;
      }
      return modern(req, res, body);
    }
    if (sessions.size + pending >= settings.maxSessions) {
      // Full: the session idle the longest makes room; only when every one is busy is the new one refused.
      const idle = oldestIdle(sessions);
      if (idle === undefined || sessions.size + pending - 1 >= settings.maxSessions) {
        res.setHeader('Retry-After', '5');
        return refuse(res, 503, 'PLN_E_GATEWAY_SESSION_LIMIT', `${settings.maxSessions} sessions are open and busy (a request in flight in each), the most plugins.gateway.settings.maxSessions allows: end one (DELETE) or try later`);
      }
      const entry = sessions.get(idle)!;
      sessions.delete(idle);
      log.warn(`gateway: session ${idle.slice(0, 8)}… ended, idle for ${Date.now() - entry.session.lastActive} ms, to make room for a new one (maxSessions ${settings.maxSessions} are open); its client gets 404 and may start another`);
      void entry.transport.close();
    }

    pending++;
    const session = deps.newSession();
    let sessionId: string | undefined;
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: settings.maxBodyBytes,
      // Every SSE stream opens with a priming event (an id, `retry:`); a client reconnecting with Last-Event-ID gets what it missed.
      eventStore: new BoundedEventStore(),
      retryInterval: RETRY_MS,
      onsessioninitialized: (sid) => {
        sessionId = sid;
        sessions.set(sid, { session, transport, active: 0 });
      },
    });
    transport.onclose = () => {
      if (sessionId !== undefined) sessions.delete(sessionId);
      void session.close();
    };
    try {
      await session.server.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      pending--;
      if (transport.sessionId === undefined) void session.close(); // not an initialize: nothing to keep
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.warn(`gateway: a request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) refuse(res, 500, 'PLN_E_GATEWAY_INTERNAL', 'the gateway could not handle this request');
      else res.destroy();
    });
  });
  // Headers must come quickly; bodies within the request timeout; streams (responses) may last.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.maxConnections = settings.maxSessions * 4 + 64;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, entry] of sessions) {
      if (entry.session.calls.size === 0 && now - entry.session.lastActive > settings.sessionIdleMs) {
        log.info(`gateway: session ${id.slice(0, 8)}… ended after ${settings.sessionIdleMs} ms without a request`);
        sessions.delete(id);
        void entry.transport.close();
      }
    }
    for (const socket of sockets) if (socket.writableLength > settings.maxBufferedBytes) socket.destroy();
  }, SWEEP_MS);
  sweep.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new PlinthError('PLN_E_GATEWAY_LISTEN', `cannot listen on ${host}:${port} (${error.code ?? error.message})`, {
          plugin: 'gateway',
          cause: error,
          hint: error.code === 'EADDRINUSE' ? `another program uses port ${port}: choose another with --port (0 picks a free one)` : 'check the --host address and that you may bind the port',
        }),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  server.on('error', (error) => log.warn(`gateway: ${error.message}`));
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;

  let done!: () => void;
  const closed = new Promise<void>((resolve) => (done = resolve));
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${bound}/mcp`,
    host,
    port: bound,
    token: token.info,
    ...(!isLoopback(host) && {
      warning: `the gateway listens on ${host}, reachable from other machines: anyone with the token can use every configured server. Prefer 127.0.0.1 (the default) unless you need this.`,
    }),
    closed,
    sessions: () => sessions.size,
    close() {
      closing ??= (async () => {
        clearInterval(sweep);
        await Promise.all([...sessions.values()].map((e) => e.transport.close().catch(() => undefined)));
        sessions.clear();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await stopped;
        done();
      })();
      return closing;
    },
  };
}

/** A JSON-RPC error body with plinth's code, and the HTTP status. */
function refuse(res: ServerResponse, status: number, code: string, message: string, options: { close?: boolean } = {}): void {
  if (res.headersSent) return void res.destroy();
  // `close`: the rest of a body was left unread, so the connection must not carry the client's next request.
  res.writeHead(status, { 'Content-Type': 'application/json', ...((status >= 500 || options.close) && { Connection: 'close' }) });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `${code}: ${message}` }, id: null }));
}
