#!/usr/bin/env node
/**
 * Both protocol eras, in one run: `node test/bench/eras.bench.mjs [--json] [--quick]`
 * (after `npm run build`: the kernel and `plinth` run from dist/).
 *
 * The upstream is test/bench/eras-server.mjs (the SDK v2, dual-era, one `echo`
 * tool) over stdio and over streamable HTTP on 127.0.0.1. Every comparison is
 * made for the legacy era (2025 `initialize`) and the modern one (pinned to
 * 2026-07-28), over stdio and HTTP, its two sides in interleaved rounds
 * (A,B then B,A) in this one process, so that the shared machine's drift hits
 * both sides alike:
 *
 *   service   `mcp.callTool` of a kernel with the builtin plugins (what `plinth
 *             call` runs: before_tool/after_tool, argument validation, the
 *             per-call timeout) against the bare v2 `Client.callTool` to the
 *             same server; ratio of medians, target ≤ 1.10;
 *   gateway   a v2 `Client` → `plinth serve` → the server, against the same
 *             `Client` calling the server directly and against a bare relay
 *             (legacy: bare-relay.mjs; modern: eras-relay.mjs — a v2 Server
 *             forwarding to a v2 Client, nothing else): the gateway's added
 *             latency (median − direct median) over the relay's; target ≤ 1.15;
 *   one-shot  `plinth call e__echo` against eras-sdk-call.mjs (the plain v2
 *             script: connect, list, call, close), whole processes, wall time;
 *             target ≤ 1.25;
 *   connect   the stdio connect of the mcp service (`mcp.start`) with
 *             `protocol: "auto"` against `protocol: "legacy"`, to the dual-era
 *             server (auto ends modern) and to server-everything (v1, legacy
 *             only: auto falls back); target ≤ 1.05 (no second spawn).
 *
 * A row whose era could not be reached (the connection negotiated another
 * one) is printed as such, without figures. Targets are reported, not
 * asserted: the exit code is 0 unless the benchmark itself breaks. `--json`
 * prints one JSON document on stdout; progress goes to stderr. `--quick` is a
 * smoke test, not figures.
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
const HERE = path.join(ROOT, 'test', 'bench');
const SERVER = path.join(HERE, 'eras-server.mjs');
const SDK_CALL = path.join(HERE, 'eras-sdk-call.mjs');
const RELAY = { legacy: path.join(HERE, 'bare-relay.mjs'), modern: path.join(HERE, 'eras-relay.mjs') };
const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

const MODERN = '2026-07-28';
const ERAS = ['legacy', 'modern'];
const TRANSPORTS = ['stdio', 'http'];
const TARGET = { service: 1.1, gateway: 1.15, oneShot: 1.25, connect: 1.05 };

const { json: JSON_OUT, quick: QUICK } = benchOptions('eras.bench');
const N = QUICK
  ? { warmup: 10, rounds: 2, perRound: 20, oneShotRounds: 2, connectRounds: 2 }
  : { warmup: 100, rounds: 8, perRound: 100, oneShotRounds: 8, connectRounds: 12 };

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const stats = (values) => ({ median: round(median(values)), p99: round(quantile(values, 0.99)), n: values.length });
const protocolOf = (era) => (era === 'modern' ? MODERN : 'legacy');
const clientOptions = (era) => (era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {});

// Process warnings are counted, the first of each kind printed (as mcp.bench.mjs does).
const warnings = {};
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  warnings[warning.name] = (warnings[warning.name] ?? 0) + 1;
  if (warnings[warning.name] === 1) progress(`warning (first of its kind; counted below): ${warning.name}: ${warning.message}`);
});

const scratch = mkdtempSync(path.join(os.tmpdir(), 'plinth-eras-bench-'));
const children = [];
const clients = [];
let kernel;
async function cleanup() {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await kernel?.shutdown().catch(() => undefined);
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void cleanup().finally(() => process.exit(130)));

/** The environment without the machine's plinth settings. */
const cleanEnv = () => ({ ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_') && key !== 'NODE_OPTIONS')), CI: '1' });

/** A plinth home with these servers (and no demo server): `--home … --workspace …`. */
function home(name, mcpServers) {
  const dir = path.join(scratch, name);
  mkdirSync(path.join(dir, 'project'), { recursive: true });
  writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ mcpServers, plugins: PLUGINS }));
  return ['--home', dir, '--workspace', path.join(dir, 'project')];
}

/**
 * No demo server; health checks once in ten minutes: the bare sides have none, and a check is not
 * what this measures (nor may it restart a connection mid-run).
 */
const PLUGINS = { 'mcp-demo': { enabled: false }, health: { settings: { interval: 600_000 } } };

const stdioServer = (era) => ({ command: process.execPath, args: [SERVER, 'stdio'], protocol: protocolOf(era) });
const httpServer = (url, era) => ({ url, transport: 'http', protocol: protocolOf(era) });

/** A v2 Client of `era` over `transport`, connected, its tools listed once. Throws when it reached another era. */
async function connect(transport, era) {
  const client = new Client({ name: 'plinth-eras-bench', version: '1.0.0' }, clientOptions(era));
  await client.connect(transport);
  clients.push(client);
  const reached = client.getProtocolEra?.() ?? 'legacy';
  if (reached !== era) throw new Error(`a ${era} client negotiated the ${reached} era`);
  await client.listTools();
  return client;
}

/** eras-server.mjs over streamable HTTP on 127.0.0.1: its URL. */
async function erasHttp() {
  const child = spawn(process.execPath, [SERVER, 'http'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const { url } = await printed(child, (b) => jsonDocument(b.split('\n')[0]), 'eras-server.mjs http');
  child.stderr.resume();
  return url;
}

/** `plinth serve --http` on a port of its own in front of `servers`: a connected client of `era`. */
async function gatewayHttp(name, servers, era) {
  const child = spawn(process.execPath, [BIN, ...home(name, servers), 'serve', '--http', '--port', '0', '--json'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const info = await printed(child, jsonDocument, 'plinth serve --http');
  child.stderr.resume();
  const token = info.token ?? readFileSync(info.tokenFrom, 'utf8').trim();
  return connect(new StreamableHTTPClientTransport(new URL(info.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }), era);
}

/** The relay of `era` in front of `upstreamUrl` over streamable HTTP: its URL. */
async function relayHttp(era, upstreamUrl) {
  const child = spawn(process.execPath, [RELAY[era], '--http', upstreamUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const { url } = await printed(child, (b) => jsonDocument(b.split('\n')[0]), `${path.basename(RELAY[era])} --http`);
  child.stderr.resume();
  return url;
}

/** Interleaved rounds of sequential calls of every side: per side, every latency (ms). */
async function compare(sides, rounds = N.rounds, perRound = N.perRound) {
  const names = Object.keys(sides);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? names : [...names].reverse()) {
      for (let i = 0; i < perRound; i++) {
        const started = performance.now();
        await sides[side]();
        samples[side].push(performance.now() - started);
      }
    }
  }
  return samples;
}

let counter = 0;
const message = () => `bench ${++counter}`;
function bareCall(client, name = 'echo') {
  return async () => {
    const result = await client.callTool({ name, arguments: { message: message() } });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  };
}
async function warm(sides) {
  for (let i = 0; i < N.warmup; i++) for (const side of Object.values(sides)) await side();
}

// ── 1. the mcp service against the bare client ─────────────────────────────

async function bootKernel(servers) {
  const { createKernel } = await import(pathToFileURL(path.join(ROOT, 'dist', 'kernel', 'index.js')).href);
  const dir = path.join(scratch, 'kernel');
  mkdirSync(path.join(dir, 'project'), { recursive: true });
  writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ mcpServers: servers, plugins: PLUGINS }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_')));
  kernel = createKernel({ home: dir, workspace: path.join(dir, 'project'), env });
  const report = await kernel.boot();
  const broken = report.plugins.filter((p) => p.state === 'failed' || p.state === 'skipped');
  if (broken.length > 0) throw new Error(`plugins did not load: ${broken.map((p) => `${p.name}: ${p.error?.code} ${p.error?.message}`).join('; ')}`);
  return kernel.get('mcp');
}

/** The era a started server reached, as the mcp service says (before the `era` field existed: legacy). */
const eraOf = (status) => status.era ?? 'legacy';

async function serviceRows(mcp, url) {
  const rows = [];
  for (const era of ERAS) {
    for (const transport of TRANSPORTS) {
      const name = `${era}-${transport}`;
      const row = { what: 'service', era, transport };
      const status = await mcp.start(name);
      if (status.state !== 'connected' || eraOf(status) !== era) {
        rows.push({ ...row, skipped: `plinth reached ${status.state === 'connected' ? `the ${eraOf(status)} era` : status.state}${status.error ? `: ${status.error.message ?? status.error}` : ''}` });
        continue;
      }
      const bare = await connect(transport === 'stdio' ? new StdioClientTransport({ command: process.execPath, args: [SERVER, 'stdio'], stderr: 'ignore' }) : new StreamableHTTPClientTransport(new URL(url)), era);
      const sides = {
        plinth: async () => {
          const result = await mcp.callTool(`${name}__echo`, { message: message() });
          if (!result.ok || result.isError) throw new Error(`plinth call failed: ${JSON.stringify(result.error ?? result.text)}`);
        },
        bare: bareCall(bare),
      };
      progress(`service ${era} ${transport}: ${N.rounds} × ${N.perRound} calls per side…`);
      await warm(sides);
      const samples = await compare(sides);
      const plinth = stats(samples.plinth);
      const baseline = stats(samples.bare);
      rows.push({ ...row, plinth, baseline, ratio: round(plinth.median / baseline.median, 2), target: TARGET.service });
      await mcp.stop(name);
    }
  }
  return rows;
}

// ── 2. the gateway against direct and against a bare relay ─────────────────

async function gatewayRows(url) {
  const rows = [];
  for (const era of ERAS) {
    for (const transport of TRANSPORTS) {
      const row = { what: 'gateway', era, transport };
      try {
        let gateway;
        let direct;
        let relay;
        if (transport === 'stdio') {
          gateway = await connect(new StdioClientTransport({ command: process.execPath, args: [BIN, ...home(`gw-stdio-${era}`, { e: stdioServer(era) }), 'serve', '--stdio'], env: cleanEnv(), stderr: 'ignore' }), era);
          direct = await connect(new StdioClientTransport({ command: process.execPath, args: [SERVER, 'stdio'], stderr: 'ignore' }), era);
          relay = await connect(new StdioClientTransport({ command: process.execPath, args: [RELAY[era], SERVER], stderr: 'ignore' }), era);
        } else {
          gateway = await gatewayHttp(`gw-http-${era}`, { e: httpServer(url, era) }, era);
          direct = await connect(new StreamableHTTPClientTransport(new URL(url)), era);
          relay = await connect(new StreamableHTTPClientTransport(new URL(await relayHttp(era, url))), era);
        }
        const sides = { gateway: bareCall(gateway, 'e__echo'), direct: bareCall(direct), relay: bareCall(relay) };
        progress(`gateway ${era} ${transport}: ${N.rounds} × ${N.perRound} calls per side…`);
        await warm(sides);
        const samples = await compare(sides);
        const s = { gateway: stats(samples.gateway), direct: stats(samples.direct), relay: stats(samples.relay) };
        const gatewayAdded = round(s.gateway.median - s.direct.median);
        const relayAdded = round(s.relay.median - s.direct.median);
        rows.push({ ...row, ...s, gatewayAdded, relayAdded, ratio: relayAdded > 0 ? round(gatewayAdded / relayAdded, 2) : null, directRatio: round(s.gateway.median / s.direct.median, 2), target: TARGET.gateway });
        await Promise.all([gateway, direct, relay].map((c) => c.close().catch(() => undefined)));
      } catch (error) {
        rows.push({ ...row, skipped: String(error?.message ?? error).split('\n')[0].slice(0, 200) });
      }
    }
  }
  return rows;
}

// ── 3. one-shot `plinth call` against the plain v2 script ──────────────────

/** Runs one process: ms from spawn to exit; rejects unless it printed the echo. */
function wall(args, cwd) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let out = '';
    const child = spawn(process.execPath, args, { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 && out.includes('Echo: hi') ? resolve(performance.now() - start) : reject(new Error(`${path.basename(args[0])} ${args.at(-2) ?? ''} exited ${code}: ${out.slice(0, 200)}`))));
  });
}

/** The era `plinth` reaches with the server `e` of these folders, as `plinth mcp get e --json` says (before the `era` field existed: legacy). */
function eraOfCall(dirs) {
  return new Promise((resolve, reject) => {
    let out = '';
    const child = spawn(process.execPath, [BIN, ...dirs, 'mcp', 'get', 'e', '--json'], { cwd: scratch, env: cleanEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', () => {
      const status = jsonDocument(out)?.status;
      resolve(status?.state === 'connected' ? eraOf(status) : `no (${status?.state ?? 'no answer'})`);
    });
  });
}

async function oneShotRows(url) {
  const rows = [];
  for (const era of ERAS) {
    for (const transport of TRANSPORTS) {
      const row = { what: 'one-shot', era, transport };
      const dirs = home(`call-${transport}-${era}`, { e: transport === 'stdio' ? stdioServer(era) : httpServer(url, era) });
      const sides = {
        plinth: () => wall([BIN, ...dirs, 'call', 'e__echo', '--args', '{"message":"hi"}'], scratch),
        bare: () => wall([SDK_CALL, era, transport === 'stdio' ? 'stdio' : url], scratch),
      };
      try {
        const reached = await eraOfCall(dirs);
        if (reached !== era) throw new Error(`plinth reached the ${reached} era`);
        progress(`one-shot ${era} ${transport}: ${N.oneShotRounds} rounds…`);
        await sides.plinth();
        await sides.bare();
        const times = { plinth: [], bare: [] };
        for (let r = 0; r < N.oneShotRounds; r++) for (const side of r % 2 === 0 ? ['plinth', 'bare'] : ['bare', 'plinth']) times[side].push(await sides[side]());
        const plinth = stats(times.plinth);
        const baseline = stats(times.bare);
        rows.push({ ...row, plinth, baseline, ratio: round(plinth.median / baseline.median, 2), target: TARGET.oneShot });
      } catch (error) {
        rows.push({ ...row, skipped: String(error?.message ?? error).split('\n')[0].slice(0, 200) });
      }
    }
  }
  return rows;
}

// ── 4. the stdio connect: auto against legacy ──────────────────────────────

async function connectRows(mcp) {
  const rows = [];
  for (const [server, label] of [['dual', 'dual-era server'], ['v1', 'server-everything (v1)']]) {
    const row = { what: 'connect', era: `auto vs legacy`, transport: 'stdio', server: label };
    const names = { auto: `auto-${server}`, legacy: `legacy-${server}` };
    const times = { auto: [], legacy: [] };
    const reached = {};
    progress(`connect ${label}: ${N.connectRounds} rounds…`);
    try {
      for (let r = -1; r < N.connectRounds; r++) {
        for (const side of r % 2 === 0 ? ['auto', 'legacy'] : ['legacy', 'auto']) {
          const started = performance.now();
          const status = await mcp.start(names[side]);
          const took = performance.now() - started;
          if (status.state !== 'connected') throw new Error(`${names[side]}: ${status.state} ${status.error?.message ?? ''}`);
          reached[side] = eraOf(status);
          if (r >= 0) times[side].push(took); // round -1 is the warm-up
          await mcp.stop(names[side]);
        }
      }
      const auto = stats(times.auto);
      const legacy = stats(times.legacy);
      rows.push({ ...row, plinth: auto, baseline: legacy, autoReached: reached.auto, ratio: round(auto.median / legacy.median, 2), target: TARGET.connect });
    } catch (error) {
      rows.push({ ...row, skipped: String(error?.message ?? error).split('\n')[0].slice(0, 200) });
    }
  }
  return rows;
}

// ── main ───────────────────────────────────────────────────────────────────

function table(rows) {
  const lines = [`both eras (legacy = 2025 initialize; modern = pinned ${MODERN}), ms; node ${process.version}, ${os.cpus().length} cpus${QUICK ? ' [--quick: not figures]' : ''}`];
  lines.push('what      era     transport  plinth med   p99      base med   p99      ratio   target  met    (gateway: ms added over direct, gateway vs relay)');
  for (const r of rows) {
    const head = `${r.what.padEnd(9)} ${r.era.padEnd(7)} ${r.transport.padEnd(10)}`;
    if (r.skipped) {
      lines.push(`${head} not measured: ${r.skipped}`);
      continue;
    }
    const met = r.ratio === null ? '?' : r.ratio <= r.target ? 'yes' : 'NO';
    if (r.what === 'gateway') {
      lines.push(
        `${head} ${String(r.gateway.median).padStart(10)} ${String(r.gateway.p99).padStart(8)} ${String(r.direct.median).padStart(10)} ${String(r.direct.p99).padStart(8)} ${String(r.ratio ?? '-').padStart(6)}  ≤${r.target.toFixed(2)}   ${met.padEnd(5)}  added ${r.gatewayAdded} vs relay ${r.relayAdded} (relay med ${r.relay.median}); gateway/direct ${r.directRatio}`,
      );
    } else {
      const note = r.what === 'connect' ? `  ${r.server}: auto reached ${r.autoReached}` : '';
      lines.push(`${head} ${String(r.plinth.median).padStart(10)} ${String(r.plinth.p99).padStart(8)} ${String(r.baseline.median).padStart(10)} ${String(r.baseline.p99).padStart(8)} ${String(r.ratio).padStart(6)}  ≤${r.target.toFixed(2)}   ${met}${note}`);
    }
  }
  lines.push('service: mcp.callTool vs bare v2 Client.callTool; one-shot: `plinth call` vs eras-sdk-call.mjs (wall); connect: mcp.start auto vs legacy (stdio)');
  if (Object.keys(warnings).length > 0) lines.push(`process warnings: ${Object.entries(warnings).map(([name, n]) => `${n} × ${name}`).join(', ')}`);
  return lines.join('\n');
}

try {
  progress('starting eras-server.mjs over streamable HTTP (127.0.0.1)…');
  const url = await erasHttp();
  const servers = {};
  for (const era of ERAS) {
    servers[`${era}-stdio`] = stdioServer(era);
    servers[`${era}-http`] = httpServer(url, era);
  }
  servers['auto-dual'] = { command: process.execPath, args: [SERVER, 'stdio'], protocol: 'auto' };
  servers['legacy-dual'] = { command: process.execPath, args: [SERVER, 'stdio'], protocol: 'legacy' };
  servers['auto-v1'] = { command: process.execPath, args: [EVERYTHING, 'stdio'], protocol: 'auto' };
  servers['legacy-v1'] = { command: process.execPath, args: [EVERYTHING, 'stdio'], protocol: 'legacy' };
  const mcp = await bootKernel(servers);

  const rows = [...(await serviceRows(mcp, url)), ...(await gatewayRows(url)), ...(await oneShotRows(url)), ...(await connectRows(mcp))];
  if (JSON_OUT) process.stdout.write(`${JSON.stringify({ quick: QUICK, node: process.version, cpus: os.cpus().length, targets: TARGET, rows, warnings }, null, 2)}\n`);
  else process.stdout.write(`${table(rows)}\n`);
} catch (error) {
  process.stderr.write(`eras.bench: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
