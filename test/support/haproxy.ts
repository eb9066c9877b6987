/**
 * A real HAProxy (Debian's package; `.ci/run` installs it) in front of HTTP
 * backends on 127.0.0.1: `haproxy -f <config> -db` with a config written to a
 * temporary folder. HTTP mode, `balance roundrobin`, no stickiness (no cookie,
 * no stick table, no hash), so consecutive requests go to the backends in
 * turn. Every response carries `X-Served-By: <server name>` (set by HAProxy,
 * not by the backend) and every request is logged to HAProxy's stdout as
 * `served <backend>/<server> <status> <method> <uri>`, so a test can prove who
 * answered what.
 *
 * A backend that dies is skipped: health checks (`option httpchk`, every
 * 200 ms, two failures mark it down; a killed process refuses at once) and, for the requests already on their
 * way when it died, retries on a refused or empty connection redispatched to
 * another server (`retries`, `option redispatch 1`, `retry-on conn-failure
 * empty-response`). Timeouts suit long SSE streams (`subscriptions/listen`,
 * a call's stream): `timeout client`/`server`/`tunnel` of minutes, not seconds.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface HaproxyBackend {
  /** The server's name in HAProxy (the `X-Served-By` value). */
  readonly name: string;
  readonly port: number;
}

export interface HaproxyOptions {
  /**
   * The health check's request line path (default `/`). Any HTTP answer (2xx–4xx) counts as alive: a
   * backend that wants a token answers 401, and it is up all the same. Only no answer (or a 5xx) is down.
   */
  readonly checkPath?: string;
}

export interface Haproxy {
  /** `http://127.0.0.1:<port>` of the frontend, plus `path`. */
  url(path?: string): string;
  readonly port: number;
  readonly pid: number;
  /** Requests answered per server, from HAProxy's own log (complete lines only: a request still streaming is not in it yet). */
  served(): Map<string, number>;
  /** Everything HAProxy printed (its log and warnings). */
  output(): string;
  /** Stops it (SIGTERM, SIGKILL after 5 s) and removes its folder. */
  stop(): Promise<void>;
}

/** The haproxy binary: on PATH, else where Debian puts it (/usr/sbin is not on every PATH). */
export function haproxyBinary(): string {
  for (const dir of (process.env.PATH ?? '').split(':').filter(Boolean)) {
    if (existsSync(join(dir, 'haproxy'))) return join(dir, 'haproxy');
  }
  if (existsSync('/usr/sbin/haproxy')) return '/usr/sbin/haproxy';
  throw new Error('haproxy is not installed: `apt-get install haproxy` (.ci/run installs it)');
}

/** A port free on 127.0.0.1 right now (HAProxy cannot bind port 0 and say which it got). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The configuration: one frontend on `port`, one round-robin backend of `backends`. */
export function haproxyConfig(port: number, backends: readonly HaproxyBackend[], options: HaproxyOptions = {}): string {
  return [
    'global',
    '  log stdout format raw local0',
    '  maxconn 4096',
    '',
    'defaults',
    '  mode http',
    '  log global',
    '  log-format "served %b/%s %ST %HM %HU"',
    '  option dontlognull',
    '  timeout connect 2s',
    // Minutes: a subscriptions/listen stream or a call's SSE stream may be quiet for long.
    '  timeout client 5m',
    '  timeout server 5m',
    '  timeout tunnel 1h',
    '  timeout http-keep-alive 30s',
    '  timeout http-request 10s',
    // A check answered slowly by a busy backend is not a dead one; a dead one refuses at once.
    '  timeout check 3s',
    // A request that reached a dead server (refused, or its connection closed without an answer) is tried again elsewhere.
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    '',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend gateways',
    '',
    'backend gateways',
    '  balance roundrobin',
    '  option httpchk',
    `  http-check send meth GET uri ${options.checkPath ?? '/'} ver HTTP/1.1 hdr Host 127.0.0.1`,
    '  http-check expect rstatus ^[234]',
    '  http-response set-header X-Served-By %s',
    ...backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port} check inter 200ms fall 2 rise 1`),
    '',
  ].join('\n');
}

/** Starts HAProxy in front of `backends`; resolves once its frontend accepts connections. */
export async function startHaproxy(backends: readonly HaproxyBackend[], options: HaproxyOptions = {}): Promise<Haproxy> {
  const binary = haproxyBinary();
  const dir = await mkdtemp(join(tmpdir(), 'plinth-haproxy-'));
  const config = join(dir, 'haproxy.cfg');
  // A free port can be taken between the probe and HAProxy's bind: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    await writeFile(config, haproxyConfig(port, backends, options), { mode: 0o600 });
    execFileSync(binary, ['-c', '-q', '-f', config]);
    const child = spawn(binary, ['-f', config, '-db'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await accepting(child, port, () => output);
    } catch (error) {
      lastError = error;
      await stopChild(child);
      continue;
    }
    return {
      port,
      pid: child.pid!,
      url: (path = '') => `http://127.0.0.1:${port}${path}`,
      served: () => {
        const counts = new Map<string, number>();
        for (const match of output.matchAll(/^served [^/\s]+\/(\S+) /gm)) counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + 1);
        return counts;
      },
      output: () => output,
      stop: async () => {
        await stopChild(child);
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}

/** Resolves once `port` accepts a TCP connection; rejects when the child exits first or after 10 s. */
async function accepting(child: ChildProcess, port: number, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (!exited) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (open) return;
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`haproxy did not listen on 127.0.0.1:${port}${exited ? ` (it exited: ${child.exitCode ?? child.signalCode})` : ''}:\n${output()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
