#!/usr/bin/env node
/**
 * MCP through plinth against the plain SDK: `node test/bench/mcp.bench.mjs [--json] [--quick]`
 * (after `npm run build`: the kernel is imported from dist/, the plugins load
 * from source with jiti, as `plinth` loads them; the commands run dist/cli/bin.js).
 *
 * 1. Tool calls, in this process, over both transports plinth users have:
 *    - streamable HTTP: one server-everything process on 127.0.0.1, two
 *      clients of it (each on its own session);
 *    - stdio: a server has one client, so two server-everything processes,
 *      one per side.
 *    Per transport, two sides:
 *      pipeline  a kernel with the builtin plugins (mcp, the transports, hooks
 *                with no hook defined, trust, …) and `mcp.callTool('<server>__echo')`:
 *                what `plinth call` runs — before_tool and after_tool through
 *                `kernel.emit`, argument validation against the tool's schema,
 *                the per-call timeout, result formatting;
 *      sdk       the SDK's own `Client.callTool` on its own connection.
 *    Latency of sequential `echo` calls in interleaved rounds (A,B then B,A)
 *    so that drift in the machine's load hits both: median and p99 per side,
 *    and the ratio pipeline/sdk (target ≤ 1.10); throughput with 16 calls in
 *    flight, interleaved rounds as well.
 * 2. `plinth mcp status` as a command against test/bench/sdk-status.mjs (the
 *    plain SDK doing the same: start every server at once, agree on the era,
 *    list tools, print, close) at 1, 5 and 20 identical stdio servers
 *    (test/bench/tools-server.mjs: 16 tools, built with @modelcontextprotocol/server).
 *    Process against process, in turn (plinth, sdk, sdk, plinth, …); both sides
 *    speak 2026-07-28 without probing (plinth's default `auto` remembers each
 *    server's era after the uncounted first run; the script pins it with
 *    `--era 2026-07-28`: the SDK's `auto` would probe every time, and its
 *    default is the 2025 handshake). Per pair: the ratio of wall times (spawn to exit; and spawn to the status
 *    printed, since closing differs: the SDK's stdio transport waits longer for
 *    a 2026-07-28 server to exit than plinth's launcher), of the
 *    command's CPU (its own process plus the servers it started, each counted
 *    by the operating system through test/bench/rusage.mjs) and of the
 *    client process's own CPU and peak RSS; medians of the pairs. Target:
 *    ≤ 1.05 at 20 servers, CPU and wall.
 *
 * Process warnings are counted (the first of each kind printed) and reported
 * with the figures. Targets are reported, not asserted: the exit code is 0
 * unless the benchmark itself breaks. `--json` prints one JSON document on stdout; progress goes to
 * stderr. `--quick` is a smoke test, not figures.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  ? { warmup: 20, latencyRounds: 4, callsPerRound: 25, throughputRounds: 2, throughputCalls: 200, inFlight: 16, statusRounds: 1, statusCounts: [1, 5, 20] }
  : { warmup: 200, latencyRounds: 20, callsPerRound: 100, throughputRounds: 6, throughputCalls: 2000, inFlight: 16, statusRounds: 6, statusCounts: [1, 5, 20] };
const TARGET_RATIO = 1.1;
const STATUS_TARGET = 1.05;
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');
const TOOLS_SERVER = path.join(ROOT, 'test', 'bench', 'tools-server.mjs');
const SDK_STATUS = path.join(ROOT, 'test', 'bench', 'sdk-status.mjs');
const RUSAGE = pathToFileURL(path.join(ROOT, 'test', 'bench', 'rusage.mjs')).href;

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
const sdkClients = [];
async function cleanup() {
  await Promise.all(sdkClients.map((client) => client.close().catch(() => undefined)));
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

// ── the HTTP server: server-everything over streamable HTTP, on 127.0.0.1 only ──

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

// ── the clients of part 1 ──────────────────────────────────────────────────

/** One kernel with both servers: `http` (the shared HTTP process) and `stdio` (a server-everything process of its own). */
async function startPipeline(url) {
  const { createKernel } = await import(pathToFileURL(path.join(ROOT, 'dist', 'kernel', 'index.js')).href);
  const home = path.join(scratch, 'home');
  const workspace = path.join(scratch, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  // Only these servers: the builtin demo server is switched off so that nothing else runs beside them.
  const settings = {
    mcpServers: { http: { url, transport: 'http' }, stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    plugins: { 'mcp-demo': { enabled: false } },
  };
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify(settings));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_')));
  const k = createKernel({ home, workspace, env });
  const report = await k.boot();
  const broken = report.plugins.filter((p) => p.state === 'failed' || p.state === 'skipped');
  if (broken.length > 0) throw new Error(`plugins did not load: ${broken.map((p) => `${p.name}: ${p.error?.code} ${p.error?.message}`).join('; ')}`);
  const mcp = await k.get('mcp');
  for (const name of ['http', 'stdio']) {
    const status = await mcp.start(name);
    if (status.state !== 'connected') throw new Error(`the pipeline did not connect to ${name}: ${JSON.stringify(status.error)}`);
  }
  return { kernel: k, mcp };
}

async function startSdk(transport) {
  const { Client } = await import('@modelcontextprotocol/client');
  const client = new Client({ name: 'plinth-bench', version: '1.0.0' });
  sdkClients.push(client);
  await client.connect(transport);
  // As the pipeline does at connection: list the tools once (the SDK then knows output schemas).
  await client.listTools();
  return client;
}

// ── part 1: calls ──────────────────────────────────────────────────────────

let counter = 0;
const message = () => `bench ${++counter}`;

/** Latency and throughput of `sides.pipeline` against `sides.sdk`, in interleaved rounds. */
async function compareCalls(label, sides) {
  progress(`${label}: warm-up, ${N.warmup} calls per side…`);
  for (let i = 0; i < N.warmup; i++) {
    await sides.pipeline();
    await sides.sdk();
  }
  const total = N.latencyRounds * N.callsPerRound;
  progress(`${label}: latency, ${total} sequential calls per side in ${N.latencyRounds} interleaved rounds…`);
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

  progress(`${label}: throughput, ${N.throughputRounds} interleaved rounds of ${N.throughputCalls} calls per side, ${N.inFlight} in flight…`);
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
  return { latency, throughput };
}

function callSides(pipeline, server, sdkClient) {
  return {
    pipeline: async () => {
      const result = await pipeline.mcp.callTool(`${server}__echo`, { message: message() });
      if (!result.ok || result.isError) throw new Error(`pipeline call failed: ${JSON.stringify(result.error ?? result.text)}`);
    },
    sdk: async () => {
      const result = await sdkClient.callTool({ name: 'echo', arguments: { message: message() } });
      if (result.isError) throw new Error(`SDK call failed: ${JSON.stringify(result.content)}`);
    },
  };
}

// ── part 2: `plinth mcp status` against the SDK script, whole processes ────

/** A fresh home with `count` identical stdio servers (each server records its rusage into `log`). */
function statusHome(count, log) {
  const dir = path.join(scratch, `status-${count}`);
  const home = path.join(dir, 'home');
  const workspace = path.join(dir, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  const serverArgs = ['--import', `${RUSAGE}?out=${encodeURIComponent(log)}&role=server`, TOOLS_SERVER];
  const mcpServers = Object.fromEntries(Array.from({ length: count }, (_, i) => [`s${i + 1}`, { command: process.execPath, args: serverArgs }]));
  // The health plugin stays on (`mcp status` shows health as users see it); the demo server is off.
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ mcpServers, plugins: { 'mcp-demo': { enabled: false } } }));
  return { home, workspace, serverArgs };
}

/** Runs one command with the rusage preload; resolves with its wall time and what it and its servers used. */
function runMeasured(args, { cwd, env, log, expect }) {
  writeFileSync(log, '');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', `${RUSAGE}?out=${encodeURIComponent(log)}&role=client`, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let printedMs;
    child.stdout.on('data', (chunk) => {
      printedMs ??= performance.now() - started;
      out += chunk;
    });
    child.stderr.on('data', (chunk) => (err = (err + chunk).slice(-4000)));
    child.on('error', reject);
    child.on('exit', async (code) => {
      const wallMs = performance.now() - started;
      const connected = out.split('\n').filter((line) => /\bconnected\b/.test(line)).length;
      if (code !== 0 || connected !== expect) return reject(new Error(`${path.basename(args[0])} exited ${code} with ${connected}/${expect} servers connected: ${out.slice(0, 400)} ${err}`));
      // The servers write their line as they exit, which may be just after the client.
      let lines = [];
      for (let i = 0; i < 100; i++) {
        lines = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
        if (lines.filter((l) => l.role === 'server').length >= expect) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const client = lines.find((l) => l.role === 'client');
      const servers = lines.filter((l) => l.role === 'server');
      resolve({ wallMs, printedMs: printedMs ?? wallMs, clientCpuMs: client.cpuMs, clientRssKiB: client.maxRssKiB, totalCpuMs: client.cpuMs + servers.reduce((sum, s) => sum + s.cpuMs, 0), servers: servers.length });
    });
  });
}

async function compareStatus(count) {
  const log = path.join(scratch, `rusage-${count}.jsonl`);
  const { home, workspace, serverArgs } = statusHome(count, log);
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_') && key !== 'NODE_OPTIONS'));
  const options = { cwd: workspace, env, log, expect: count };
  const sides = {
    plinth: () => runMeasured([BIN, '--home', home, '--workspace', workspace, 'mcp', 'status'], options),
    sdk: () => runMeasured([SDK_STATUS, '--era', '2026-07-28', String(count), process.execPath, ...serverArgs], options),
  };
  // One of each first, not counted: a fresh home's first approvals and era verdicts, the file cache.
  await sides.plinth();
  await sides.sdk();
  const pairs = [];
  for (let r = 0; r < N.statusRounds; r++) {
    const order = r % 2 === 0 ? ['plinth', 'sdk'] : ['sdk', 'plinth'];
    const pair = {};
    for (const side of order) pair[side] = await sides[side]();
    pairs.push(pair);
    progress(`mcp status, ${count} server(s): round ${r + 1}/${N.statusRounds}`);
  }
  const med = (side, key) => round(median(pairs.map((p) => p[side][key])), 1);
  const ratio = (key) => round(median(pairs.map((p) => p.plinth[key] / p.sdk[key])));
  const ratios = { wall: ratio('wallMs'), printed: ratio('printedMs'), cpu: ratio('totalCpuMs'), clientCpu: ratio('clientCpuMs'), clientRss: ratio('clientRssKiB') };
  return {
    servers: count,
    rounds: pairs.length,
    plinth: { wallMs: med('plinth', 'wallMs'), printedMs: med('plinth', 'printedMs'), cpuMs: med('plinth', 'totalCpuMs'), clientCpuMs: med('plinth', 'clientCpuMs'), clientRssMiB: round(med('plinth', 'clientRssKiB') / 1024, 1) },
    sdk: { wallMs: med('sdk', 'wallMs'), printedMs: med('sdk', 'printedMs'), cpuMs: med('sdk', 'totalCpuMs'), clientCpuMs: med('sdk', 'clientCpuMs'), clientRssMiB: round(med('sdk', 'clientRssKiB') / 1024, 1) },
    ratio: ratios,
    ...(count === 20 && { target: `≤ ${STATUS_TARGET} (CPU and wall)`, pass: ratios.wall <= STATUS_TARGET && ratios.cpu <= STATUS_TARGET }),
  };
}

// ── main ───────────────────────────────────────────────────────────────────

try {
  progress('starting server-everything (streamable HTTP, 127.0.0.1)…');
  const everything = await startEverything();
  server = everything.child;
  progress(`  ${everything.url}`);
  const pipeline = await startPipeline(everything.url);
  kernel = pipeline.kernel;
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const sdkHttp = await startSdk(new StreamableHTTPClientTransport(new URL(everything.url)));
  const sdkStdio = await startSdk(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));

  const calls = {
    http: await compareCalls('1/2 calls over streamable HTTP', callSides(pipeline, 'http', sdkHttp)),
    stdio: await compareCalls('1/2 calls over stdio', callSides(pipeline, 'stdio', sdkStdio)),
  };
  await Promise.all(sdkClients.splice(0).map((client) => client.close().catch(() => undefined)));
  await kernel.shutdown();
  kernel = undefined;

  const status = [];
  for (const count of N.statusCounts) {
    progress(`2/2 \`plinth mcp status\` against the SDK script, ${count} stdio server(s), ${N.statusRounds} pair(s)…`);
    status.push(await compareStatus(count));
  }

  const result = {
    benchmark: 'mcp: tool calls through plinth (mcp.callTool) against the SDK Client.callTool, over HTTP and stdio; `plinth mcp status` against a plain SDK script',
    servers: {
      calls: 'server-everything: over streamable HTTP on 127.0.0.1 (one process, one session per client); over stdio (one process per client)',
      status: 'test/bench/tools-server.mjs over stdio (16 tools), N identical copies; both sides speak 2026-07-28 without probing',
    },
    tool: 'echo',
    quick: QUICK,
    node: process.version,
    cpus: os.cpus().length,
    calls,
    status,
    warnings,
  };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    const lines = [`node ${process.version}, ${result.cpus} cpus${QUICK ? ' (quick: not figures)' : ''}`];
    for (const [transport, { latency: l, throughput: t }] of Object.entries(calls)) {
      lines.push(
        '',
        `calls over ${transport} (${transport === 'http' ? 'streamable HTTP, one server-everything' : 'stdio, one server-everything per side'}), ${l.callsPerSide} sequential calls per side (ms):`,
        `  pipeline  median ${l.pipelineMs.median}  p90 ${l.pipelineMs.p90}  p99 ${l.pipelineMs.p99}  max ${l.pipelineMs.max}`,
        `  sdk       median ${l.sdkMs.median}  p90 ${l.sdkMs.p90}  p99 ${l.sdkMs.p99}  max ${l.sdkMs.max}`,
        `  ratio of medians ${l.ratio.ofMedians} (target ${l.target}: ${l.pass ? 'met' : 'NOT met'}), of p99s ${l.ratio.ofP99s}, per round ${l.ratio.roundsMin}–${l.ratio.roundsMax}`,
        `  throughput, ${t.inFlight} in flight (calls/s, median of ${t.pipelineCallsPerSecond.rounds} rounds): pipeline ${t.pipelineCallsPerSecond.median}, sdk ${t.sdkCallsPerSecond.median}, ratio ${t.ratio}`,
      );
    }
    lines.push('', `\`plinth mcp status\` against test/bench/sdk-status.mjs, N stdio servers of 16 tools (median of the pairs; CPU = client + its servers):`);
    lines.push('  (wall: spawn to exit, closing the servers included; printed: spawn to the status on stdout)');
    lines.push('  servers  wall ms plinth/sdk   CPU ms plinth/sdk   client CPU ms   client RSS MiB   ratios: wall  printed  CPU  client CPU  client RSS');
    for (const s of status) {
      lines.push(
        `  ${String(s.servers).padStart(7)}  ${`${s.plinth.wallMs}/${s.sdk.wallMs}`.padEnd(19)}  ${`${s.plinth.cpuMs}/${s.sdk.cpuMs}`.padEnd(18)}  ${`${s.plinth.clientCpuMs}/${s.sdk.clientCpuMs}`.padEnd(14)}  ${`${s.plinth.clientRssMiB}/${s.sdk.clientRssMiB}`.padEnd(15)}          ${s.ratio.wall}  ${s.ratio.printed}  ${s.ratio.cpu}  ${s.ratio.clientCpu}  ${s.ratio.clientRss}${s.target ? `   (target ${s.target}: ${s.pass ? 'met' : 'NOT met'})` : ''}`,
      );
    }
    if (Object.keys(warnings).length > 0) lines.push('', `process warnings: ${Object.entries(warnings).map(([name, n]) => `${n} × ${name}`).join(', ')}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
} catch (error) {
  process.stderr.write(`mcp.bench: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
