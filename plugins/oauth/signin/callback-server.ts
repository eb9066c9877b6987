/**
 * The loopback server that receives one OAuth redirect (RFC 8252 §7.3). It
 * listens on 127.0.0.1 only, so nothing off this machine can reach it, and only
 * `GET /callback` counts: the browser's other requests (a favicon) get a 404
 * and the server keeps waiting. The first callback settles it, then it stops
 * listening and drops every connection, so a replayed request finds nobody.
 *
 * Split with the caller: a URL this server resolves with always carried the
 * state sent and either a `code` or an `error` (with its page shown); a missing
 * or wrong state rejects (PLN_E_OAUTH_STATE_MISMATCH), neither code nor error
 * rejects (PLN_E_OAUTH_CALLBACK_INVALID). Turning `error=` into an error and
 * exchanging the code is the caller's job.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspectCallback } from './callback-params.js';
import { callbackPortError, callbackTimeoutError, invalidCallbackError, stateMismatchError } from './errors.js';
import { errorPage, invalidPage, PAGE_HEADERS, refusedPage, successPage } from './page.js';

/** The only address listened on: never 0.0.0.0 or ::, which other machines could reach. */
export const CALLBACK_HOST = '127.0.0.1';
export const CALLBACK_PATH = '/callback';

export interface CallbackServerOptions {
  /** The MCP server signing in: named on the pages and in errors. */
  readonly server: string;
  /** The state sent with the authorization request. */
  readonly state: string;
  /** 0 or undefined: any free port. */
  readonly port?: number;
  /** How long {@link CallbackServer.wait} waits, counted from its first call. */
  readonly timeoutMs: number;
  /** Aborting closes the server and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface CallbackServer {
  /** `http://127.0.0.1:<port>/callback` */
  readonly redirectUrl: string;
  readonly port: number;
  /** Where it listens, as node:http reports it. */
  readonly address: AddressInfo;
  /**
   * Resolves with the callback URL (the right state, and a code or an error).
   * Rejects with PLN_E_OAUTH_STATE_MISMATCH, PLN_E_OAUTH_CALLBACK_INVALID,
   * PLN_E_OAUTH_CALLBACK_TIMEOUT (the time limit starts at the first call), the
   * signal's reason, or an AbortError when closed first. Every call returns the same promise.
   */
  wait(): Promise<URL>;
  /** Stops listening and drops every connection; idempotent. */
  close(): Promise<void>;
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
  res.end(`${text}\n`);
}

function listenError(server: string, port: number, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason =
    code === 'EADDRINUSE'
      ? 'another program is using it'
      : code === 'EACCES'
        ? 'the system does not allow it (ports below 1024 need privileges)'
        : code === 'EADDRNOTAVAIL'
          ? 'this machine has no 127.0.0.1 address'
          : error instanceof Error
            ? error.message
            : String(error);
  return callbackPortError(server, port, reason, error);
}

export async function startCallbackServer(options: CallbackServerOptions): Promise<CallbackServer> {
  const { server: name, state, timeoutMs, signal } = options;
  const requestedPort = options.port ?? 0;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65_535) {
    throw callbackPortError(name, requestedPort, 'not a port number (0 to 65535)');
  }
  signal?.throwIfAborted();

  let resolveOutcome!: (url: URL) => void;
  let rejectOutcome!: (error: unknown) => void;
  const outcome = new Promise<URL>((resolve, reject) => {
    resolveOutcome = resolve;
    rejectOutcome = reject;
  });
  // Settled before anyone waits (a timeout, an early forged request): not an unhandled rejection.
  outcome.catch(() => {});

  let settled = false;
  let answered = false;
  let timer: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;
  let base = '';

  const http = createServer((req, res) => handle(req, res));

  const shutdown = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
    return closing;
  };

  const onAbort = (): void => settle(() => rejectOutcome(signal!.reason));

  function settle(apply: () => void): void {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    apply();
    void shutdown();
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', base);
    } catch {
      plain(res, 400, 'Bad request');
      return;
    }
    if (url.pathname !== CALLBACK_PATH) {
      plain(res, 404, 'Not found');
      return;
    }
    if (req.method !== 'GET') {
      plain(res, 405, 'Method not allowed', { Allow: 'GET' });
      return;
    }
    // A request on a connection opened before the first callback settled it.
    if (answered || settled) {
      plain(res, 410, 'This sign-in is already finished.', { Connection: 'close' });
      return;
    }
    answered = true;
    const verdict = inspectCallback(url, state);
    let status = 200;
    let html: string;
    let finish: () => void;
    switch (verdict.kind) {
      case 'code':
        html = successPage(name);
        finish = () => resolveOutcome(url);
        break;
      case 'error':
        html = errorPage(name, verdict.params);
        finish = () => resolveOutcome(url);
        break;
      case 'forged':
        status = 400;
        html = refusedPage(name);
        finish = () => rejectOutcome(stateMismatchError(name, 'browser', verdict.missing));
        break;
      case 'invalid':
        status = 400;
        html = invalidPage(name);
        finish = () => rejectOutcome(invalidCallbackError(name, 'browser'));
        break;
    }
    // Settled once the page is out, so closing the server cannot cut it off.
    res.once('close', () => settle(finish));
    res.writeHead(status, { ...PAGE_HEADERS, Connection: 'close' });
    res.end(html);
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen({ host: CALLBACK_HOST, port: requestedPort, exclusive: true }, () => {
      http.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    http.close();
    throw listenError(name, requestedPort, error);
  });

  const address = http.address() as AddressInfo;
  base = `http://${CALLBACK_HOST}:${address.port}`;
  http.on('error', (error) => settle(() => rejectOutcome(error)));

  if (signal?.aborted) {
    await shutdown();
    throw signal.reason;
  }
  signal?.addEventListener('abort', onAbort, { once: true });

  return {
    redirectUrl: `${base}${CALLBACK_PATH}`,
    port: address.port,
    address,
    wait(): Promise<URL> {
      if (!settled && timer === undefined) {
        timer = setTimeout(() => settle(() => rejectOutcome(callbackTimeoutError(name, timeoutMs))), timeoutMs);
      }
      return outcome;
    },
    close(): Promise<void> {
      settle(() => rejectOutcome(new DOMException('The sign-in callback server was closed', 'AbortError')));
      return shutdown();
    },
  };
}
