#!/usr/bin/env node
/**
 * Scale-out of the gateway: `node test/bench/gateway-scale.bench.mjs [--json] [--quick]`
 * (after `npm run build`; needs `haproxy`, which .ci/run installs).
 *
 * One upstream (test/bench/eras-server.mjs over streamable HTTP on
 * 127.0.0.1), two `plinth serve --http` processes in front of it with the same
 * settings (one home, one token), and two real HAProxy instances
 * (test/support/haproxy.ts: round-robin, no stickiness): one with the first
 * process only, one with both. A v2 `Client` pinned to 2026-07-28 (stateless:
 * any request may land on any process) per HAProxy calls `e__echo` with 16
 * and with 64 calls in flight; the 1-process and 2-process sides run in
 * interleaved rounds (A,B then B,A) in this one process.
 *
 * Per side and concurrency: calls per second (median of the rounds) and the
 * p99 latency of every call, and the ratio of calls per second 2/1. Nothing
 * is asserted, and there is no target: on a machine with 2 cores shared with
 * others, the upstream, HAProxy, both gateways and this client compete for
 * the same cores, so the ratio says how much the second process helps here,
 * not on a real deployment. `--json` prints one JSON document on stdout;
 * progress goes to stderr. `--quick` is a smoke test, not figures.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createJiti } from 'jiti';
import { benchOptions, median, quantile, jsonDocument, printed } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');
const SERVER = path.join(ROOT, 'test', 'bench', 'eras-server.mjs');
const MODERN = '2026-07-28';
const { startHaproxy } = await createJiti(import.meta.url).import(path.join(ROOT, 'test', 'support', 'haproxy.ts'));

const { json: JSON_OUT, quick: QUICK } = benchOptions('gateway-scale.bench');
const N = QUICK ? { warmup: 50, rounds: 2, calls: 200 } : { warmup: 500, rounds: 6, calls: 2000 };
const IN_FLIGHT = [16, 64];

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

const warnings = {};
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  warnings[warning.name] = (warnings[warning.name] ?? 0) + 1;
  if (warnings[warning.name] === 1) progress(`warning (first of its kind; counted below): ${warning.name}: ${warning.message}`);
});

const scratch = mkdtempSync(path.join(os.tmpdir(), 'plinth-scale-bench-'));
const children = [];
const clients = [];
const proxies = [];
async function cleanup() {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all(proxies.map((p) => p.stop().catch(() => undefined)));
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void cleanup().finally(() => process.exit(130)));

const cleanEnv = () => ({ ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_') && key !== 'NODE_OPTIONS')), CI: '1' });

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

async function start(args, what, pick, env) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const found = await printed(child, pick, what);
  found.pid = child.pid;
  child.stdout.resume();
  child.stderr.resume();
  return found;
}

/** Latencies of `calls` calls, `inFlight` at a time, and the calls per second of the whole. */
async function load(call, calls, inFlight) {
  const times = [];
  let next = 0;
  const began = performance.now();
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
  return { times, perSecond: (calls * 1000) / (performance.now() - began) };
}

try {
  progress('starting the upstream, two plinth serve --http and two HAProxy…');
  const upstream = await start([SERVER, 'http'], 'eras-server.mjs http', (b) => jsonDocument(b.split('\n')[0]));
  const { url } = upstream;
  const home = path.join(scratch, 'home');
  mkdirSync(path.join(home, 'project'), { recursive: true });
  const token = randomBytes(24).toString('base64url');
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ mcpServers: { e: { url, transport: 'http', protocol: MODERN } }, plugins: { 'mcp-demo': { enabled: false }, gateway: { settings: { token } }, health: { settings: { interval: 600_000 } } } }));
  const serve = ['--home', home, '--workspace', path.join(home, 'project'), 'serve', '--http', '--port', '0', '--json'];
  const gateways = [];
  for (const name of ['gw1', 'gw2']) {
    const info = await start([BIN, ...serve], `plinth serve --http (${name})`, jsonDocument, cleanEnv());
    gateways.push({ name, port: Number(new URL(info.url).port), pid: info.pid });
  }
  const sides = { one: await startHaproxy(gateways.slice(0, 1), { checkPath: '/mcp' }), two: await startHaproxy(gateways, { checkPath: '/mcp' }) };
  proxies.push(...Object.values(sides));

  const callers = {};
  for (const [side, proxy] of Object.entries(sides)) {
    const client = new Client({ name: 'plinth-scale-bench', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url('/mcp')), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(client);
    await client.listTools();
    let counter = 0;
    callers[side] = async () => {
      const result = await client.callTool({ name: 'e__echo', arguments: { message: `bench ${++counter}` } });
      if (result.isError) throw new Error(`${side}: ${JSON.stringify(result.content)}`);
    };
  }
  progress(`warm-up: ${N.warmup} calls per side…`);
  for (const side of Object.keys(callers)) await load(callers[side], N.warmup, 16);

  // Where the CPU went while measuring: each process's CPU seconds over the measured part.
  const processes = { 'this client': process.pid, upstream: upstream.pid, gw1: gateways[0].pid, gw2: gateways[1].pid, 'haproxy (1)': sides.one.pid, 'haproxy (2)': sides.two.pid };
  const cpuBefore = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const wallBefore = performance.now();
  const rows = [];
  for (const inFlight of IN_FLIGHT) {
    progress(`${inFlight} in flight: ${N.rounds} interleaved rounds of ${N.calls} calls per side…`);
    const samples = { one: { times: [], rates: [] }, two: { times: [], rates: [] } };
    for (let r = 0; r < N.rounds; r++) {
      for (const side of r % 2 === 0 ? ['one', 'two'] : ['two', 'one']) {
        const { times, perSecond } = await load(callers[side], N.calls, inFlight);
        samples[side].times.push(...times);
        samples[side].rates.push(perSecond);
      }
    }
    const summary = (s) => ({ callsPerSecond: Math.round(median(s.rates)), p99: round(quantile(s.times, 0.99)), median: round(median(s.times)) });
    const one = summary(samples.one);
    const two = summary(samples.two);
    rows.push({ inFlight, one, two, ratio: round(two.callsPerSecond / one.callsPerSecond) });
  }
  const wallSeconds = (performance.now() - wallBefore) / 1000;
  const cpu = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, round(cpuSeconds(pid) - cpuBefore[name], 1)]));
  const served = Object.fromEntries(Object.entries(sides).map(([side, proxy]) => [side, Object.fromEntries(proxy.served())]));

  if (JSON_OUT) process.stdout.write(`${JSON.stringify({ quick: QUICK, node: process.version, cpus: os.cpus().length, rows, served, cpuSeconds: cpu, wallSeconds: round(wallSeconds, 1), warnings }, null, 2)}\n`);
  else {
    const lines = [
      `plinth serve --http behind HAProxy (round-robin), modern client pinned to ${MODERN}, e__echo; node ${process.version}, ${os.cpus().length} cpus${QUICK ? ' [--quick: not figures]' : ''}`,
      'in flight  1 process: calls/s  median ms  p99 ms   2 processes: calls/s  median ms  p99 ms   calls/s 2/1',
      ...rows.map((r) => `${String(r.inFlight).padStart(9)}  ${String(r.one.callsPerSecond).padStart(18)} ${String(r.one.median).padStart(10)} ${String(r.one.p99).padStart(7)}  ${String(r.two.callsPerSecond).padStart(22)} ${String(r.two.median).padStart(10)} ${String(r.two.p99).padStart(7)}  ${String(r.ratio).padStart(12)}`),
      `requests per process (HAProxy's log): 1 process ${JSON.stringify(served.one)}; 2 processes ${JSON.stringify(served.two)}`,
      `CPU seconds while measuring (${round(wallSeconds, 1)} s of wall time, ${os.cpus().length} cpus): ${Object.entries(cpu).map(([name, s]) => `${name} ${s}`).join(', ')}`,
      ...(Object.keys(warnings).length > 0 ? [`process warnings: ${Object.entries(warnings).map(([name, n]) => `${n} × ${name}`).join(', ')}`] : []),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
} catch (error) {
  process.stderr.write(`gateway-scale.bench: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
