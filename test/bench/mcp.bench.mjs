#!/usr/bin/env node
/**
 * The MCP tool-call pipeline's speed: `node test/bench/mcp.bench.mjs [--json] [--quick]`
 * (after `npm run build`: the kernel is imported from dist/, the plugins load
 * from source with jiti, as `plinth` loads them).
 *
 * One server-everything process, over streamable HTTP on 127.0.0.1 (HTTP, not
 * stdio, because a stdio server has one client: here the same process serves
 * both sides, each on its own session). Two clients of it:
 *
 *   pipeline  a kernel with the builtin plugins (mcp, transport-http, hooks with
 *             no hook defined, trust, …) and `mcp.callTool('everything__echo')`:
 *             what `plinth call` runs — before_tool and after_tool events (no
 *             handler attached), argument validation against the tool's schema,
 *             the per-call timeout, result formatting;
 *   sdk       the SDK's own `Client.callTool` on a second connection.
 *
 * 1. Latency of 2,000 sequential `echo` calls per side, in interleaved rounds
 *    (A,B then B,A) so that drift in the machine's load hits both: median and
 *    p99 per side, and the ratio pipeline/sdk. Target: ratio of medians ≤ 1.10.
 * 2. Throughput with 16 calls in flight per side (calls per second), interleaved
 *    rounds as well.
 *
 * Process warnings are counted (the first of each kind printed) and reported
 * with the figures. Targets are reported, not asserted: the exit code is 0
 * unless the benchmark itself breaks. `--json` prints one JSON document on stdout; progress goes to
 * stderr. `--quick` is a smoke test, not figures.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchOptions, median, quantile } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const LOOPBACK = path.join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'loopback-listen.mjs');

const { json: JSON_OUT, quick: QUICK } = benchOptions('mcp.bench');

const N = QUICK
  ? { warmup: 20, latencyRounds: 4, callsPerRound: 25, throughputRounds: 2, throughputCalls: 200, inFlight: 16 }
  : { warmup: 200, latencyRounds: 20, callsPerRound: 100, throughputRounds: 6, throughputCalls: 2000, inFlight: 16 };
const TARGET_RATIO = 1.1;

// ── helpers ────────────────────────────────────────────────────────────────

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const latencyStats = (values) => ({
  median: round(median(values)),
  p90: round(quantile(values, 0.9)),
  p99: round(quantile(values, 0.99)),
  min: round(Math.min(...values)),
  max: round(Math.max(...values)),
  n: values.length,
});

// Process warnings are counted and reported, the first of each kind printed: thousands of
// identical lines (undici's abort listeners on a transport's signal, say) would bury the figures.
const warnings = {};
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  warnings[warning.name] = (warnings[warning.name] ?? 0) + 1;
  if (warnings[warning.name] !== 1) return;
  progress(`warning (first of its kind; counted below): ${warning.name}: ${warning.message}`);
  // Which side raised it: BENCH_WARNING_STACK=1 prints where (the pipeline's fetch runs through plinth's request-signals).
  if (process.env.BENCH_WARNING_STACK) console.error(warning.stack);
});

const scratch = mkdtempSync(path.join(os.tmpdir(), 'plinth-mcp-bench-'));
let server;
let kernel;
let sdkClient;
async function cleanup() {
  await sdkClient?.close().catch(() => undefined);
  await kernel?.shutdown().catch(() => undefined);
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => {
      const timer = setTimeout(() => {
        server.kill('SIGKILL');
        resolve();
      }, 3000);
      server.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  rmSync(scratch, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void cleanup().finally(() => process.exit(130)));

// ── the server: server-everything over streamable HTTP, on 127.0.0.1 only ──

async function startEverything() {
  // server-everything listens on every interface; the preload binds it to 127.0.0.1 and prints the port it got.
  const child = spawn(process.execPath, ['--import', pathToFileURL(LOOPBACK).href, EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const port = await new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start in 20 s: ${stderr}`)), 20_000);
    child.stdout.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (const line of buffer.split('\n')) {
        if (!line.includes('"loopback"')) continue;
        clearTimeout(timer);
        resolve(JSON.parse(line).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${stderr}`));
    });
  });
  // Keep draining stdout: it logs each session, and a full pipe would stall it.
  child.stdout.resume();
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

// ── the two clients ────────────────────────────────────────────────────────

async function startPipeline(url) {
  const { createKernel } = await import(pathToFileURL(path.join(ROOT, 'dist', 'kernel', 'index.js')).href);
  const home = path.join(scratch, 'home');
  const workspace = path.join(scratch, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  // Only this server: the builtin demo server is switched off so that nothing else runs beside it.
  const settings = { mcpServers: { everything: { url, transport: 'http' } }, plugins: { 'mcp-demo': { enabled: false } } };
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify(settings));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_')));
  const k = createKernel({ home, workspace, env });
  const report = await k.boot();
  const broken = report.plugins.filter((p) => p.state === 'failed' || p.state === 'skipped');
  if (broken.length > 0) throw new Error(`plugins did not load: ${broken.map((p) => `${p.name}: ${p.error?.code} ${p.error?.message}`).join('; ')}`);
  const mcp = await k.get('mcp');
  const status = await mcp.start('everything');
  if (status.state !== 'connected') throw new Error(`the pipeline did not connect: ${JSON.stringify(status.error)}`);
  return { kernel: k, mcp };
}

async function startSdk(url) {
  const { Client } = await import('@modelcontextprotocol/client');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const client = new Client({ name: 'plinth-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  // As the pipeline does at connection: list the tools once (the SDK then knows output schemas).
  await client.listTools();
  return client;
}

// ── main ───────────────────────────────────────────────────────────────────

try {
  progress('starting server-everything (streamable HTTP, 127.0.0.1)…');
  const everything = await startEverything();
  server = everything.child;
  progress(`  ${everything.url}`);
  const pipeline = await startPipeline(everything.url);
  kernel = pipeline.kernel;
  sdkClient = await startSdk(everything.url);

  let counter = 0;
  const message = () => `bench ${++counter}`;
  const sides = {
    pipeline: async () => {
      const result = await pipeline.mcp.callTool('everything__echo', { message: message() });
      if (!result.ok || result.isError) throw new Error(`pipeline call failed: ${JSON.stringify(result.error ?? result.text)}`);
    },
    sdk: async () => {
      const result = await sdkClient.callTool({ name: 'echo', arguments: { message: message() } });
      if (result.isError) throw new Error(`SDK call failed: ${JSON.stringify(result.content)}`);
    },
  };

  progress(`warm-up: ${N.warmup} calls per side…`);
  for (let i = 0; i < N.warmup; i++) {
    await sides.pipeline();
    await sides.sdk();
  }

  // 1. sequential latency
  const total = N.latencyRounds * N.callsPerRound;
  progress(`1/2 latency: ${total} sequential calls per side in ${N.latencyRounds} interleaved rounds…`);
  const samples = { pipeline: [], sdk: [] };
  const roundRatios = [];
  for (let r = 0; r < N.latencyRounds; r++) {
    const order = r % 2 === 0 ? ['pipeline', 'sdk'] : ['sdk', 'pipeline'];
    const thisRound = { pipeline: [], sdk: [] };
    for (const side of order) {
      for (let i = 0; i < N.callsPerRound; i++) {
        const started = performance.now();
        await sides[side]();
        thisRound[side].push(performance.now() - started);
      }
    }
    samples.pipeline.push(...thisRound.pipeline);
    samples.sdk.push(...thisRound.sdk);
    roundRatios.push(median(thisRound.pipeline) / median(thisRound.sdk));
  }
  const ratio = median(samples.pipeline) / median(samples.sdk);
  const latency = {
    callsPerSide: total,
    pipelineMs: latencyStats(samples.pipeline),
    sdkMs: latencyStats(samples.sdk),
    ratio: {
      ofMedians: round(ratio),
      ofP99s: round(quantile(samples.pipeline, 0.99) / quantile(samples.sdk, 0.99)),
      roundsMin: round(Math.min(...roundRatios)),
      roundsMax: round(Math.max(...roundRatios)),
    },
    target: `≤ ${TARGET_RATIO}`,
    pass: ratio <= TARGET_RATIO,
  };

  // 2. throughput with calls in flight
  progress(`2/2 throughput: ${N.throughputRounds} interleaved rounds of ${N.throughputCalls} calls per side, ${N.inFlight} in flight…`);
  const callsPerSecond = async (call) => {
    let next = 0;
    const worker = async () => {
      while (next < N.throughputCalls) {
        next++;
        await call();
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: N.inFlight }, worker));
    return (N.throughputCalls * 1000) / (performance.now() - started);
  };
  const rates = { pipeline: [], sdk: [] };
  for (let r = 0; r < N.throughputRounds; r++) {
    const order = r % 2 === 0 ? ['pipeline', 'sdk'] : ['sdk', 'pipeline'];
    for (const side of order) rates[side].push(await callsPerSecond(sides[side]));
  }
  const rateStats = (values) => ({ median: Math.round(median(values)), min: Math.round(Math.min(...values)), max: Math.round(Math.max(...values)), rounds: values.length });
  const throughput = {
    inFlight: N.inFlight,
    callsPerRound: N.throughputCalls,
    pipelineCallsPerSecond: rateStats(rates.pipeline),
    sdkCallsPerSecond: rateStats(rates.sdk),
    ratio: round(median(rates.pipeline) / median(rates.sdk)),
  };

  const result = {
    benchmark: 'mcp tool calls: plinth pipeline (mcp.callTool) against the SDK Client.callTool',
    server: 'server-everything, streamable HTTP on 127.0.0.1 (one process, one session per client)',
    tool: 'echo',
    quick: QUICK,
    node: process.version,
    cpus: os.cpus().length,
    latency,
    throughput,
    warnings,
  };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    const l = latency;
    const lines = [
      `server: ${result.server}; tool: echo; node ${process.version}, ${result.cpus} cpus${QUICK ? ' (quick: not figures)' : ''}`,
      '',
      `latency, ${l.callsPerSide} sequential calls per side (ms):`,
      `  pipeline  median ${l.pipelineMs.median}  p90 ${l.pipelineMs.p90}  p99 ${l.pipelineMs.p99}  max ${l.pipelineMs.max}`,
      `  sdk       median ${l.sdkMs.median}  p90 ${l.sdkMs.p90}  p99 ${l.sdkMs.p99}  max ${l.sdkMs.max}`,
      `  ratio of medians ${l.ratio.ofMedians} (target ${l.target}: ${l.pass ? 'met' : 'NOT met'}), of p99s ${l.ratio.ofP99s}, per round ${l.ratio.roundsMin}–${l.ratio.roundsMax}`,
      '',
      `throughput, ${throughput.inFlight} calls in flight (calls/s, median of ${throughput.pipelineCallsPerSecond.rounds} rounds of ${throughput.callsPerRound}):`,
      `  pipeline  ${throughput.pipelineCallsPerSecond.median} (${throughput.pipelineCallsPerSecond.min}–${throughput.pipelineCallsPerSecond.max})`,
      `  sdk       ${throughput.sdkCallsPerSecond.median} (${throughput.sdkCallsPerSecond.min}–${throughput.sdkCallsPerSecond.max})`,
      `  ratio ${throughput.ratio}`,
      ...(Object.keys(warnings).length > 0 ? ['', `process warnings: ${Object.entries(warnings).map(([name, n]) => `${n} × ${name}`).join(', ')}`] : []),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
} catch (error) {
  process.stderr.write(`mcp.bench: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
