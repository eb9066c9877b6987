/**
 * The gateway seen from a host: the built `plinth serve` started in a
 * sandbox, an SDK `Client` connected to it over stdio or streamable HTTP, and
 * the real upstream servers it serves (server-everything, the fixture server
 * over stdio, HTTP and SSE).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { BIN, ROOT, type Sandbox, cleanEnv } from './cli.js';

export const EVERYTHING = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
export const SERVERS = join(ROOT, 'test', 'fixtures', 'mcp', 'servers');

/** server-everything over stdio, as an `mcpServers` entry. */
export const everything = (): Record<string, unknown> => ({ command: process.execPath, args: [EVERYTHING, 'stdio'] });
/** The fixture server over stdio; `flags` as its README lists. */
export const fixtureStdio = (...flags: string[]): Record<string, unknown> => ({ command: process.execPath, args: [join(SERVERS, 'stdio-server.mjs'), ...flags] });

/** Settings every gateway test starts from: no demo server, quick health checks. */
export function baseSettings(mcpServers: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { plugins, ...rest } = extra as { plugins?: Record<string, unknown> };
  return {
    mcpServers,
    plugins: {
      'mcp-demo': { enabled: false },
      health: { settings: { interval: 500, backoffBaseMs: 100, startRetryMs: 200 } },
      ...plugins,
    },
    ...rest,
  };
}

/** A child that prints one JSON line with a numeric `port` once listening. */
export async function listening(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; info: Record<string, unknown> }> {
  const child = spawn(process.execPath, [...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const info = await new Promise<Record<string, unknown>>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`exited with code ${code} before listening:\n${stderr}`)));
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (typeof parsed.port === 'number') resolve(parsed);
    });
  });
  child.stdout!.resume();
  return { child, info };
}

/** The fixture server over HTTP (streamable HTTP at `url`, legacy SSE at `sse`), with its `/stats`. */
export async function httpFixture(): Promise<{ url: string; sse: string; stats(): Promise<{ sessions: string[]; openSseSessions: number }>; close(): Promise<void> }> {
  const { child, info } = await listening([join(SERVERS, 'http-server.mjs'), '--port', '0']);
  const url = String(info.url);
  return {
    url,
    sse: String(info.sse),
    stats: async () => (await fetch(url.replace(/\/mcp$/, '/stats'))).json() as never,
    close: () => stop(child),
  };
}

/** SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** A connected downstream client of `plinth serve --stdio`, and what the gateway wrote to stderr. */
export async function stdioGateway(box: Sandbox, capabilities: ClientCapabilities = {}): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...box.dirs, 'serve', '--stdio'],
    cwd: box.workspace,
    env: cleanEnv({}, { ci: true }) as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'test-host', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** `plinth serve --http --port 0 --json` running in the sandbox: its URL, token and process. */
export async function httpGateway(box: Sandbox, extraArgs: readonly string[] = []): Promise<{ child: ChildProcess; url: string; token: string; tokenFrom: string; stderr: () => string }> {
  const child = spawn(process.execPath, [BIN, ...box.dirs, 'serve', '--http', '--port', '0', '--json', ...extraArgs], {
    cwd: box.workspace,
    env: cleanEnv({}, { ci: true }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = '';
  const info = await new Promise<Record<string, string>>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`plinth serve exited with ${code}:\n${stdout}\n${stderr}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      try {
        resolve(JSON.parse(stdout));
      } catch {
        // not the whole document yet
      }
    });
  });
  return { child, url: info.url!, token: info.token ?? '', tokenFrom: info.tokenFrom!, stderr: () => stderr };
}

/** An SDK client of the HTTP gateway with the token. */
export async function httpClient(url: string, token: string, capabilities: ClientCapabilities = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'test-host', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, transport };
}

/** Resolves once `check` holds (polled), or rejects naming `what` after `ms`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether a process is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
