/**
 * The host-side network proxy of one principal: HTTP CONNECT (any TLS or
 * TCP stream) and plain HTTP with an absolute URI, on a Unix socket that is
 * bound into the principal's sandboxes (the namespace has no other way out).
 * A target is allowed only when the principal's granted `network` allows it
 * (policy.ts: deny over allow, IP literals only when declared as such); a
 * declared name that resolves to a loopback, link-local or unspecified
 * address is refused too, so DNS cannot turn an allowed name into the host's
 * own services or a cloud metadata endpoint. Every refusal is reported
 * (the sandbox writes it to the audit log) and answered with 403.
 */
import { lookup } from 'node:dns/promises';
import { type Server, createServer, request as httpRequest } from 'node:http';
import { isIP, type Socket, connect } from 'node:net';
import { rm } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import { isIpLiteral, normalizeHost } from '../policy.js';

export interface ProxyOptions {
  readonly socketPath: string;
  /** Why `host:port` is refused, or undefined when allowed (read at every connection: grants may change). */
  readonly refusal: (host: string, port: number) => string | undefined;
  /** Told about every refusal. */
  readonly onRefused: (target: string, reason: string) => void;
}

export interface NetworkProxy {
  readonly socketPath: string;
  close(): Promise<void>;
}

/** Addresses a name may not lead to unless declared as the literal itself. */
function isInternalAddress(address: string): boolean {
  if (address === '::1' || address === '::' || address.startsWith('fe80:') || address.startsWith('::ffff:127.')) return true;
  const v4 = /^(\d+)\.(\d+)\./.exec(address);
  if (v4 === null) return false;
  const [a, b] = [Number(v4[1]), Number(v4[2])];
  return a === 127 || a === 0 || (a === 169 && b === 254);
}

/** Decides a target; resolves to the address to connect to, or to a refusal. */
async function decide(options: ProxyOptions, rawHost: string, port: number): Promise<{ address: string } | { refused: string }> {
  const host = normalizeHost(rawHost);
  const refusal = options.refusal(host, port);
  if (refusal !== undefined) return { refused: refusal };
  if (isIpLiteral(host)) return { address: host };
  try {
    const found = await lookup(host, { all: true });
    const internal = found.find((entry) => isInternalAddress(entry.address));
    if (internal !== undefined && host !== 'localhost') return { refused: `${host} resolves to ${internal.address}, an address of this machine or its network; declare the address itself to allow it` };
    return { address: found[0]!.address };
  } catch {
    return { refused: `${host} could not be resolved` };
  }
}

function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^\[([^\]]+)\]:(\d+)$|^([^:]+):(\d+)$/.exec(authority);
  if (match === null) return undefined;
  const host = match[1] ?? match[3]!;
  const port = Number(match[2] ?? match[4]);
  return port > 0 && port < 65536 ? { host, port } : undefined;
}

function refuse(socket: Duplex, status: string, reason: string): void {
  const body = `plinth sandbox: ${reason}\n`;
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nX-Plinth-Sandbox: refused\r\n\r\n${body}`);
}

export async function startProxy(options: ProxyOptions): Promise<NetworkProxy> {
  const sockets = new Set<Duplex>();
  const server: Server = createServer({ requireHostHeader: false }, (req, res) => {
    // Plain HTTP through a proxy: an absolute URI.
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('plinth sandbox: a proxy request needs an absolute http:// URI\n');
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400).end('plinth sandbox: only http:// is proxied this way; use CONNECT for https\n');
      return;
    }
    const port = url.port === '' ? 80 : Number(url.port);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    void decide(options, host, port).then((verdict) => {
      if ('refused' in verdict) {
        options.onRefused(`${host}:${port}`, verdict.refused);
        res.writeHead(403, { 'content-type': 'text/plain', 'x-plinth-sandbox': 'refused' }).end(`plinth sandbox: ${host}:${port} refused: ${verdict.refused}\n`);
        return;
      }
      const headers = { ...req.headers };
      delete headers['proxy-connection'];
      delete headers['proxy-authorization'];
      const upstream = httpRequest({ host: verdict.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', (error) => {
        if (!res.headersSent) res.writeHead(502).end(`plinth sandbox: ${host}:${port}: ${error.message}\n`);
        else res.destroy();
      });
      req.pipe(upstream);
    });
  });
  server.on('connect', (req, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = parseAuthority(req.url ?? '');
    if (target === undefined) {
      refuse(client, '400 Bad Request', 'CONNECT needs host:port');
      return;
    }
    void decide(options, target.host, target.port).then((verdict) => {
      if ('refused' in verdict) {
        options.onRefused(`${target.host}:${target.port}`, verdict.refused);
        refuse(client, '403 Forbidden', `${target.host}:${target.port} refused: ${verdict.refused}`);
        return;
      }
      const upstream: Socket = connect({ host: verdict.address, port: target.port, family: isIP(verdict.address) || undefined });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.once('connect', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', (error) => {
        if (upstream.connecting) refuse(client, '502 Bad Gateway', `${target.host}:${target.port}: ${error.message}`);
        else client.destroy();
      });
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await rm(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.unref();
  return {
    socketPath: options.socketPath,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(options.socketPath, { force: true });
    },
  };
}
