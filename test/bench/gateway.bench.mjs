#!/usr/bin/env node
/**
 * The gateway's cost: `node test/bench/gateway.bench.mjs [--json] [--quick]`
 * (after `npm run build`: `plinth serve` runs from dist/).
 *
 * The same `echo` tool call of server-everything, from the SDK's `Client`:
 *
 *   gateway  client → `plinth serve` (the built CLI: before_tool, argument
 *            validation, the per-call timeout, after_tool) → server-everything
 *   direct   client → server-everything
 *   relay    (the yardstick) client → bare-relay.mjs (an SDK Server that
 *            forwards each call with an SDK Client, nothing else, over the
 *            same transport) → server-everything: the floor of one more
 *            process hop
 *
 * over stdio (the client spawns `plinth serve --stdio`, which spawns
 * server-everything over stdio; the direct client spawns its own) and over
 * streamable HTTP (`plinth serve --http` on 127.0.0.1 with its token, in
 * front of one server-everything on 127.0.0.1 that the direct client also
 * uses, each on its own session).
 *
 * Per transport: per-call latency, sequential and with 16 calls in flight, in
 * interleaved rounds (A,B then B,A) so that drift in the machine's load hits
 * both sides: median and p99 per side and the ratio of medians gateway/direct.
 * Target: ratio of medians ≤ 1.15. Targets are reported, not asserted.
 * `--json` prints one JSON document on stdout; progress goes to stderr.
 * `--quick` is a smoke test, not figures.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { benchOptions, median, quantile, jsonDocument, printed } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');
const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const RELAY = path.join(ROOT, 'test', 'bench', 'bare-relay.mjs');
const LOOPBACK = path.join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'loopback-listen.mjs');

const { json: JSON_OUT, quick: QUICK } = benchOptions('gateway.bench');
const N = QUICK ? { warmup: 20, rounds: 2, perRound: 25, parallelPerRound: 64, inFlight: 16 } : { warmup: 200, rounds: 8, perRound: 100, parallelPerRound: 160, inFlight: 16 };
const TARGET_RATIO = 1.15;

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const stats = (values) => ({ median: round(median(values)), p99: round(quantile(values, 0.99)), n: values.length });

const scratch = mkdtempSync(path.join(os.tmpdir(), 'plinth-gateway-bench-'));
const children = [];
const clients = [];
async function cleanup() {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void cleanup().finally(() => process.exit(130)));

/** The environment without the machine's plinth settings. */
const cleanEnv = () => ({ ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_'))), CI: '1' });

/** A plinth home whose only server is `everything` (as given). */
function home(name, everything) {
  const dir = path.join(scratch, name);
  mkdirSync(path.join(dir, 'project'), { recursive: true });
  writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ mcpServers: { everything }, plugins: { 'mcp-demo': { enabled: false } } }));
  return ['--home', dir, '--workspace', path.join(dir, 'project')];
}

async function connect(transport) {
  const client = new Client({ name: 'plinth-bench', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  clients.push(client);
  return client;
}

async function everythingOverHttp() {
  const child = spawn(process.execPath, ['--import', pathToFileURL(LOOPBACK).href, EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const port = await printed(child, (buffer) => buffer.split('\n').map((l) => (l.includes('"loopback"') ? JSON.parse(l).port : undefined)).find((p) => p !== undefined), 'server-everything');
  child.stdout.resume();
  return `http://127.0.0.1:${port}/mcp`;
}

async function gatewayOverHttp(upstreamUrl) {
  const args = home('http', { url: upstreamUrl, transport: 'http' });
  const child = spawn(process.execPath, [BIN, ...args, 'serve', '--http', '--port', '0', '--json'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const info = await printed(child, jsonDocument, 'plinth serve --http');
  child.stderr.resume();
  const token = info.token ?? readFileSync(info.tokenFrom, 'utf8').trim();
  return connect(new StreamableHTTPClientTransport(new URL(info.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
}

/** bare-relay.mjs in front of `upstreamUrl`, over streamable HTTP: its URL. */
async function relayOverHttp(upstreamUrl) {
  const child = spawn(process.execPath, [RELAY, '--http', upstreamUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const { url } = await printed(child, jsonDocument, 'bare-relay.mjs --http');
  child.stderr.resume();
  return url;
}

/** Per-call latencies of `calls` calls, `inFlight` at a time. */
async function measure(call, calls, inFlight) {
  const times = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < calls) {
        next++;
        const started = performance.now();
        await call();
        times.push(performance.now() - started);
      }
    }),
  );
  return times;
}

/** Interleaved rounds of every side (in order, then reversed): per side, every latency. */
async function compare(sides, inFlight) {
  const names = Object.keys(sides);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let r = 0; r < N.rounds; r++) {
    for (const side of r % 2 === 0 ? names : [...names].reverse()) samples[side].push(...(await measure(sides[side], inFlight > 1 ? N.parallelPerRound : N.perRound, inFlight)));
  }
  const gateway = stats(samples.gateway);
  const direct = stats(samples.direct);
  const relay = samples.relay ? stats(samples.relay) : undefined;
  return { gateway, direct, ratio: round(gateway.median / direct.median, 2), ...(relay && { relay, relayRatio: round(relay.median / direct.median, 2) }) };
}

async function bench(transport, gatewayClient, directClient, relayClient) {
  let counter = 0;
  const check = (result, side) => {
    if (result.isError) throw new Error(`${side} call failed: ${JSON.stringify(result.content)}`);
  };
  const sides = {
    gateway: async () => check(await gatewayClient.callTool({ name: 'everything__echo', arguments: { message: `bench ${++counter}` } }), 'gateway'),
    direct: async () => check(await directClient.callTool({ name: 'echo', arguments: { message: `bench ${++counter}` } }), 'direct'),
    ...(relayClient && { relay: async () => check(await relayClient.callTool({ name: 'echo', arguments: { message: `bench ${++counter}` } }), 'relay') }),
  };
  progress(`${transport}: warm-up, ${N.warmup} calls per side…`);
  for (let i = 0; i < N.warmup; i++) {
    await sides.gateway();
    await sides.direct();
    await sides.relay?.();
  }
  progress(`${transport}: sequential…`);
  const sequential = await compare(sides, 1);
  progress(`${transport}: ${N.inFlight} in flight…`);
  const parallel = await compare(sides, N.inFlight);
  return { sequential, [`inFlight${N.inFlight}`]: parallel };
}

try {
  const results = {};

  progress('stdio: starting plinth serve --stdio and server-everything…');
  const viaGateway = await connect(
    new StdioClientTransport({ command: process.execPath, args: [BIN, ...home('stdio', { command: process.execPath, args: [EVERYTHING, 'stdio'] }), 'serve', '--stdio'], env: cleanEnv(), stderr: 'ignore' }),
  );
  const direct = await connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));
  const relay = await connect(new StdioClientTransport({ command: process.execPath, args: [RELAY, EVERYTHING], stderr: 'ignore' }));
  results.stdio = await bench('stdio', viaGateway, direct, relay);

  progress('http: starting server-everything (127.0.0.1) and plinth serve --http in front of it…');
  const url = await everythingOverHttp();
  const httpGateway = await gatewayOverHttp(url);
  const httpDirect = await connect(new StreamableHTTPClientTransport(new URL(url)));
  const httpRelay = await connect(new StreamableHTTPClientTransport(new URL(await relayOverHttp(url))));
  results.http = await bench('http', httpGateway, httpDirect, httpRelay);

  const rows = [];
  for (const [transport, modes] of Object.entries(results)) {
    for (const [mode, r] of Object.entries(modes)) {
      rows.push({ transport, mode, gatewayMedian: r.gateway.median, gatewayP99: r.gateway.p99, directMedian: r.direct.median, directP99: r.direct.p99, ratio: r.ratio, relayMedian: r.relay?.median ?? null, relayRatio: r.relayRatio ?? null, gatewayAddedMs: round(r.gateway.median - r.direct.median), relayAddedMs: r.relay ? round(r.relay.median - r.direct.median) : null, meetsTarget: r.ratio <= TARGET_RATIO });
    }
  }
  if (JSON_OUT) process.stdout.write(`${JSON.stringify({ quick: QUICK, targetRatio: TARGET_RATIO, results: rows }, null, 2)}\n`);
  else {
    console.log(`gateway (client → plinth serve → server-everything) against direct (client → server-everything), echo, ms per call${QUICK ? ' [--quick: not figures]' : ''}`);
    console.log('transport  mode         gateway median  p99      direct median  p99      ratio  (target ≤ 1.15)   added ms  relay median  relay ratio  relay added ms');
    for (const r of rows) {
      console.log(
        `${r.transport.padEnd(10)} ${r.mode.padEnd(12)} ${String(r.gatewayMedian).padStart(14)} ${String(r.gatewayP99).padStart(8)} ${String(r.directMedian).padStart(14)} ${String(r.directP99).padStart(8)} ${String(r.ratio).padStart(6)}  ${(r.meetsTarget ? 'meets' : 'misses').padEnd(16)} ${String(r.gatewayAddedMs).padStart(8)}  ${String(r.relayMedian ?? '-').padStart(12)}  ${String(r.relayRatio ?? '-').padStart(11)}  ${String(r.relayAddedMs ?? '-').padStart(14)}`,
      );
    }
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanup();
}
