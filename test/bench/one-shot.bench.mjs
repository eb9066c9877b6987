#!/usr/bin/env node
/**
 * One-shot commands as processes against their baselines:
 * `node test/bench/one-shot.bench.mjs [--json] [--quick]` (after `npm run build`).
 *
 * 1. `plinth call` against a plain SDK script doing the same work:
 *      plinth  `plinth call everything__echo --args '{"message":"hi"}'`, with
 *              server-everything over stdio as the only server of a home;
 *      sdk     test/bench/sdk-call.mjs: Client + StdioClientTransport starting the
 *              same server, listing its tools, calling echo, closing.
 *    Per side: the median wall time from spawn to exit, and the median time
 *    until the result line was printed (the rest is shutdown: closing the
 *    server and exiting); the ratio plinth/sdk of the wall times.
 * 2. `plinth up --once --json` on a fresh home (a new, empty home and
 *    workspace each run: the embedded default, its demo MCP server) against
 *    `node -e 0`: the ratio of wall times, and from plinth's own `timings`
 *    the whole time until the status was ready (`wallMs`) and the MCP
 *    section's share of it (`sections.mcpServers`: the wait for the demo
 *    server's first connection), so that the ratio can be read as "node's
 *    start, plinth's start and boot, and the wait for the server".
 *
 * Every side is a whole process, run in turn (A, B, B, A, …) in this one
 * process so that drift in the machine's load hits both alike. Nothing is
 * asserted; the exit code is 0 unless the benchmark itself breaks.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchOptions, median } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');
const SDK_CALL = path.join(ROOT, 'test', 'bench', 'sdk-call.mjs');
const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

const { json: JSON_OUT, quick: QUICK } = benchOptions('one-shot.bench');
const ROUNDS = QUICK ? 2 : 10;
const round = (x) => Math.round(x);

/** Runs one process; resolves with ms until its first stdout line and until it exited. */
function timed(command, args, options, expected = 'Echo: hi') {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let firstLine;
    let out = '';
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (firstLine === undefined && out.includes('\n')) firstLine = performance.now() - start;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const wall = performance.now() - start;
      if (code !== 0 || !out.includes(expected)) reject(new Error(`${path.basename(args[0] ?? command)} exited ${code}: ${out.slice(0, 200)}`));
      else resolve({ wall, result: firstLine ?? wall, out });
    });
  });
}

const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-one-shot-'));
const home = path.join(base, 'home');
const workspace = path.join(base, 'project');
mkdirSync(home);
mkdirSync(workspace);
writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_') && key !== 'NODE_OPTIONS'));
const plinth = () => timed(process.execPath, [BIN, '--home', home, '--workspace', workspace, 'call', 'everything__echo', '--args', '{"message":"hi"}'], { cwd: workspace, env });
const sdk = () => timed(process.execPath, [SDK_CALL], { cwd: workspace, env });

let freshCount = 0;
/** `plinth up --once --json` on a home and workspace nobody used before. */
const upOnce = async () => {
  const dir = path.join(base, `fresh-${++freshCount}`);
  mkdirSync(path.join(dir, 'home'), { recursive: true });
  mkdirSync(path.join(dir, 'project'), { recursive: true });
  const run = await timed(process.execPath, [BIN, '--home', path.join(dir, 'home'), '--workspace', path.join(dir, 'project'), 'up', '--once', '--json'], { cwd: path.join(dir, 'project'), env }, '"mcpServers"');
  const body = JSON.parse(run.out);
  const demo = body.mcpServers.find((s) => s.name === 'demo');
  if (demo?.state !== 'connected') throw new Error(`up --once: the demo server is ${demo?.state}: ${JSON.stringify(demo?.error)}`);
  rmSync(dir, { recursive: true, force: true });
  return { ...run, timings: body.timings, bootMs: body.durationMs };
};
const nodeZero = () => timed(process.execPath, ['-e', '0'], { env }, '');

/** `rounds` pairs of a, b in turn (a, b, then b, a); one of each first, not counted. */
async function pairs(a, b, label) {
  await a();
  await b();
  const runs = { a: [], b: [] };
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    for (const side of order) runs[side].push(await (side === 'a' ? a() : b()));
    process.stderr.write(`${label}: round ${i + 1}/${ROUNDS}\n`);
  }
  return runs;
}

try {
  const call = await pairs(plinth, sdk, 'plinth call vs sdk');
  const summary = (list) => ({ wallMs: round(median(list.map((r) => r.wall))), resultMs: round(median(list.map((r) => r.result))), n: list.length });
  const report = { call: { plinth: summary(call.a), sdk: summary(call.b) } };
  report.call.ratio = Math.round((report.call.plinth.wallMs / report.call.sdk.wallMs) * 100) / 100;

  const up = await pairs(upOnce, nodeZero, 'up --once vs node -e 0');
  const upWall = median(up.a.map((r) => r.wall));
  const nodeWall = median(up.b.map((r) => r.wall));
  const mcpMs = median(up.a.map((r) => r.timings.sections.mcpServers ?? 0));
  const statusWall = median(up.a.map((r) => r.timings.wallMs));
  report.upOnce = {
    plinth: {
      wallMs: round(upWall),
      statusReadyMs: round(statusWall),
      bootMs: round(median(up.a.map((r) => r.bootMs))),
      startMs: round(median(up.a.map((r) => r.timings.startMs))),
      mcpWaitMs: round(mcpMs),
      mcpShareOfStatus: Math.round((mcpMs / statusWall) * 100) / 100,
      n: up.a.length,
    },
    nodeZero: { wallMs: round(nodeWall), n: up.b.length },
    ratio: Math.round((upWall / nodeWall) * 100) / 100,
    ratioWithoutMcpWait: Math.round(((upWall - mcpMs) / nodeWall) * 100) / 100,
  };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    const c = report.call;
    const u = report.upOnce;
    process.stdout.write(`one-shot call (median of ${ROUNDS}, wall from spawn to exit; result = first line printed)\n`);
    process.stdout.write(`  plinth call  wall ${c.plinth.wallMs} ms  result at ${c.plinth.resultMs} ms\n`);
    process.stdout.write(`  plain sdk    wall ${c.sdk.wallMs} ms  result at ${c.sdk.resultMs} ms\n`);
    process.stdout.write(`  ratio plinth/sdk (wall) ${c.ratio}\n`);
    process.stdout.write(`\nup --once --json on a fresh home (the embedded default and its demo server), median of ${ROUNDS}\n`);
    process.stdout.write(`  plinth up --once  wall ${u.plinth.wallMs} ms; its own timings: status ready at ${u.plinth.statusReadyMs} ms (start ${u.plinth.startMs}, boot ${u.plinth.bootMs}, waiting for MCP servers ${u.plinth.mcpWaitMs} ms = ${Math.round(u.plinth.mcpShareOfStatus * 100)}%)\n`);
    process.stdout.write(`  node -e 0         wall ${u.nodeZero.wallMs} ms\n`);
    process.stdout.write(`  ratio up --once / node -e 0 (wall) ${u.ratio}; without the MCP wait ${u.ratioWithoutMcpWait}\n`);
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
