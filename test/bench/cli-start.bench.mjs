#!/usr/bin/env node
/**
 * Command start: `node test/bench/cli-start.bench.mjs [--json] [--quick]` (after `npm run build`).
 *
 * Each read-only listing command and `--help`, as a whole process from spawn to
 * exit, against `node -e 0` run in the same round (process against process):
 *
 *   --version, --help, plugins list, ext list, hooks list, trust list, mcp list
 *
 * `--help` is answered from the command table a previous identical call kept
 * (cli/help-cache.ts) when nothing it was made from changed, as every call
 * after the first in a place is; `--help, nothing kept` is the first call: each
 * run with a temporary folder (TMPDIR) of its own, where nothing is kept (on
 * Node ≥ 22.1 no compiled code either).
 *
 * in a fresh home and workspace (no settings, no user plugins: what every
 * start pays). Rounds alternate the order (node first, then the command; then
 * the other way round) so that drift in the machine's load hits both alike;
 * per command, the median of the per-round ratios command / `node -e 0`, and
 * the median wall times. One warm-up run of each is not counted.
 *
 * The Node that runs this file runs both sides: `node test/bench/cli-start.bench.mjs`
 * measures the system Node; `PLINTH_BENCH_NODE=/path/to/node22 node …` another one
 * (Node ≥ 22.1 has the module compile cache plinth turns on: see cli/bin.ts).
 * Targets (issue 28): listing commands ≤ 2×, `--help` ≤ 1.5×.
 * Nothing is asserted; the exit code is 0 unless the benchmark itself breaks.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchOptions, median } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');
const NODE = process.env.PLINTH_BENCH_NODE || process.execPath;
const { json: JSON_OUT, quick: QUICK } = benchOptions('cli-start.bench');
const ROUNDS = QUICK ? 3 : 20;
const COMMANDS = [
  { label: '--version', args: ['--version'], target: undefined },
  { label: '--help', args: ['--help'], target: 1.5 },
  { label: '--help, nothing kept', args: ['--help'], fresh: true },
  { label: 'plugins list', args: ['plugins', 'list'], target: 2 },
  { label: 'ext list', args: ['ext', 'list'], target: 2 },
  { label: 'hooks list', args: ['hooks', 'list'], target: 2 },
  { label: 'trust list', args: ['trust', 'list'], target: 2 },
  { label: 'mcp list', args: ['mcp', 'list'], target: 2 },
];
const round2 = (x) => Math.round(x * 100) / 100;

/** ms from spawn to exit; rejects on a non-zero exit. */
function wall(args, env) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(NODE, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - start) : reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(0, 400)}`))));
  });
}

const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-cli-start-'));
const home = path.join(base, 'home');
const workspace = path.join(base, 'project');
mkdirSync(home);
mkdirSync(workspace);
// The user's own environment must not change what is measured (a PLINTH_HOME, NODE_OPTIONS, a compile cache folder of theirs).
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_') && key !== 'NODE_OPTIONS' && !key.startsWith('NODE_COMPILE_CACHE')));
const nodeVersion = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();

try {
  const results = [];
  for (const command of COMMANDS) {
    const args = [BIN, '--home', home, '--workspace', workspace, ...command.args];
    const envOf = () => (command.fresh ? { ...env, TMPDIR: mkdtempSync(path.join(base, 'tmp-')) } : env);
    await wall(args, envOf());
    await wall(['-e', '0'], env);
    const ratios = [];
    const times = { command: [], node: [] };
    for (let i = 0; i < ROUNDS; i++) {
      let c;
      let n;
      if (i % 2 === 0) {
        n = await wall(['-e', '0'], env);
        c = await wall(args, envOf());
      } else {
        c = await wall(args, envOf());
        n = await wall(['-e', '0'], env);
      }
      times.command.push(c);
      times.node.push(n);
      ratios.push(c / n);
    }
    results.push({ command: command.label, rounds: ROUNDS, commandMs: round2(median(times.command)), nodeMs: round2(median(times.node)), ratio: round2(median(ratios)), ...(command.target !== undefined && { target: command.target }) });
    if (!JSON_OUT) process.stderr.write(`${command.label}: done\n`);
  }
  if (JSON_OUT) process.stdout.write(`${JSON.stringify({ node: nodeVersion, results }, null, 2)}\n`);
  else {
    const width = Math.max(...results.map((r) => r.command.length));
    process.stdout.write(
      [
        `command start, ${nodeVersion} (${ROUNDS} rounds; medians; ratio = the median of command / \`node -e 0\` per round)`,
        ...results.map((r) => `  plinth ${r.command.padEnd(width)}  ${String(r.commandMs).padStart(7)} ms   node -e 0 ${String(r.nodeMs).padStart(6)} ms   ${r.ratio}x${r.target !== undefined ? `  (target <= ${r.target}x)` : ''}`),
        '',
      ].join('\n'),
    );
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
