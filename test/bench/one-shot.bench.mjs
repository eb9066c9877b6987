#!/usr/bin/env node
/**
 * A one-shot command against a plain SDK script doing the same work:
 * `node test/bench/one-shot.bench.mjs [--json] [--quick]` (after `npm run build`).
 *
 *   plinth  `plinth call everything__echo --args '{"message":"hi"}'`, with
 *           server-everything over stdio as the only server of a fresh home;
 *   sdk     test/bench/sdk-call.mjs: Client + StdioClientTransport starting the
 *           same server, listing its tools, calling echo, closing.
 *
 * Both are whole processes, run in turn (plinth, sdk, sdk, plinth, …) in this
 * one process so that drift in the machine's load hits both alike. Per side:
 * the median wall time from spawn to exit, and the median time until the
 * result line was printed (the rest is shutdown: closing the server and
 * exiting). Reported: both medians and the ratio plinth/sdk of the wall times.
 * Nothing is asserted; the exit code is 0 unless the benchmark itself breaks.
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
function timed(command, args, options) {
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
      if (code !== 0 || !out.includes('Echo: hi')) reject(new Error(`${path.basename(args[0])} exited ${code}: ${out.slice(0, 200)}`));
      else resolve({ wall, result: firstLine ?? wall });
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

try {
  // One of each first: jiti's cache, the file cache.
  await plinth();
  await sdk();
  const runs = { plinth: [], sdk: [] };
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? ['plinth', 'sdk'] : ['sdk', 'plinth'];
    for (const side of order) runs[side].push(await (side === 'plinth' ? plinth() : sdk()));
    process.stderr.write(`round ${i + 1}/${ROUNDS}\n`);
  }
  const summary = (list) => ({ wallMs: round(median(list.map((r) => r.wall))), resultMs: round(median(list.map((r) => r.result))), n: list.length });
  const report = { plinth: summary(runs.plinth), sdk: summary(runs.sdk) };
  report.ratio = Math.round((report.plinth.wallMs / report.sdk.wallMs) * 100) / 100;
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    process.stdout.write(`one-shot call (median of ${ROUNDS}, wall from spawn to exit; result = first line printed)\n`);
    process.stdout.write(`  plinth call  wall ${report.plinth.wallMs} ms  result at ${report.plinth.resultMs} ms\n`);
    process.stdout.write(`  plain sdk    wall ${report.sdk.wallMs} ms  result at ${report.sdk.resultMs} ms\n`);
    process.stdout.write(`  ratio plinth/sdk (wall) ${report.ratio}\n`);
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
