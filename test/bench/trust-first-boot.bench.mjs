#!/usr/bin/env node
/**
 * The first boot with many user plugins against the next one:
 * `node test/bench/trust-first-boot.bench.mjs [--json] [--quick]` (after `npm run build`;
 * `npm run bench` builds first).
 *
 * A home holds N user plugins (`$PLINTH_HOME/plugins/<name>/`, a manifest and a one-line
 * `index.js` each). The first boot finds no trust.json: the trust plugin pins each plugin on
 * first use (trust on first use), before its code is imported. The second boot finds every pin
 * and only compares. Each boot is a process of its own (`boot-once.mjs`: node, the built kernel
 * with every builtin plugin, boot, shutdown), timed from outside, process against process; a
 * first boot again is the same home with trust.json removed (the module caches stay as warm as
 * for the second, so what differs is trust's work).
 *
 * Figures, at N = 150, 300 and 600: first / second boot (median of interleaved rounds; issue 28's
 * target: ≤ 1.3 at 600), and the cost per plugin of each (the slope between the smallest and the
 * largest N: a first boot that is linear has a slope near the second's, not growing with N).
 * Also how many times trust.json was written by the first boot (one, since the pins of a boot
 * are written together). Targets are reported, not asserted.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchOptions, median } from './support.mjs';

const { json: JSON_OUT, quick: QUICK } = benchOptions('trust-first-boot.bench');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BOOT_ONCE = fileURLToPath(new URL('./boot-once.mjs', import.meta.url));
const SIZES = QUICK ? [50, 100] : [150, 300, 600];
const ROUNDS = QUICK ? 2 : 5;
const TARGET = 1.3;

if (!existsSync(path.join(ROOT, 'dist', 'kernel', 'index.js'))) {
  process.stderr.write('trust-first-boot.bench: run `npm run build` first (`npm run bench` does)\n');
  process.exit(1);
}

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-first-boot-'));
process.on('exit', () => rmSync(base, { recursive: true, force: true }));

/** A home with `n` user plugins, and a workspace beside it. */
function homeWith(n) {
  const home = path.join(base, `home-${n}`);
  const workspace = path.join(base, `workspace-${n}`);
  mkdirSync(workspace, { recursive: true });
  for (let i = 0; i < n; i++) {
    const name = `user-plugin-${String(i).padStart(4, '0')}`;
    const dir = path.join(home, 'plugins', name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ name, version: '1.0.0', description: `user plugin ${i} for the first-boot benchmark`, kernel: '^1.0.0', main: './index.js' }));
    writeFileSync(path.join(dir, 'index.js'), 'export default { setup() {} };\n');
  }
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } }));
  return { home, workspace };
}

/** One boot in a process of its own: its wall time (ms) and what it reported. */
function boot({ home, workspace }, n) {
  const started = performance.now();
  const child = spawnSync(process.execPath, [BOOT_ONCE, home, workspace], { encoding: 'utf8', cwd: workspace, env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_'))) });
  const ms = performance.now() - started;
  if (child.status !== 0) throw new Error(`boot-once exited with ${child.status}: ${child.stderr}`);
  const report = JSON.parse(child.stdout);
  if (report.active < n) throw new Error(`only ${report.active} of ${n} user plugins loaded: ${child.stderr}`);
  return { ms, report };
}

const pins = (home) => JSON.parse(readFileSync(path.join(home, 'trust.json'), 'utf8')).approvals.filter((a) => a.how === 'pinned').length;

const rows = [];
for (const n of SIZES) {
  progress(`${n} user plugins: ${ROUNDS} interleaved rounds of a first and a second boot…`);
  const where = homeWith(n);
  const trustFile = path.join(where.home, 'trust.json');
  boot(where, n); // warms the module caches the way a second boot finds them
  const first = [];
  const second = [];
  const ratios = [];
  let writes;
  for (let r = 0; r < ROUNDS; r++) {
    const once = () => {
      rmSync(trustFile, { force: true });
      const result = boot(where, n);
      if (pins(where.home) < n) throw new Error(`the first boot pinned ${pins(where.home)} of ${n} plugins`);
      writes = result.report.trustWrites;
      return result.ms;
    };
    const again = () => boot(where, n).ms;
    let a;
    let b;
    if (r % 2 === 0) {
      a = once();
      b = again();
    } else {
      b = again();
      a = once();
    }
    first.push(a);
    second.push(b);
    ratios.push(a / b);
  }
  rows.push({ plugins: n, firstMs: round(median(first)), secondMs: round(median(second)), ratio: round(median(ratios), 3), trustWritesFirstBoot: writes });
}

const [small, large] = [rows[0], rows.at(-1)];
const slope = (key) => round((large[key] - small[key]) / (large.plugins - small.plugins), 3);
const result = {
  node: process.version,
  quick: QUICK,
  rounds: ROUNDS,
  rows,
  perPluginMs: { first: slope('firstMs'), second: slope('secondMs'), ratio: round(slope('firstMs') / slope('secondMs'), 3) },
  target: `first / second ≤ ${TARGET} at ${large.plugins} plugins`,
  pass: large.ratio <= TARGET,
};

if (JSON_OUT) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
else {
  const out = [`trust first boot — node ${process.version}, ${os.cpus().length} CPU(s), load ${os.loadavg()[0].toFixed(2)}${QUICK ? ', --quick (smoke test, do not quote)' : ''}`, ''];
  out.push('PLUGINS  FIRST BOOT  SECOND BOOT  FIRST/SECOND  trust.json WRITES (FIRST)');
  for (const row of rows) out.push(`${String(row.plugins).padEnd(8)} ${`${Math.round(row.firstMs)} ms`.padEnd(11)} ${`${Math.round(row.secondMs)} ms`.padEnd(12)} ${row.ratio.toFixed(2).padEnd(13)} ${row.trustWritesFirstBoot}`);
  out.push('');
  out.push(`per plugin (slope ${small.plugins}→${large.plugins}): first ${result.perPluginMs.first} ms, second ${result.perPluginMs.second} ms, ratio ${result.perPluginMs.ratio}`);
  out.push(`target: ${result.target}: ${result.pass ? 'PASS' : 'MISS'} (median of ${ROUNDS} interleaved rounds; each boot a process: node, the built kernel, every builtin plugin, boot, shutdown)`);
  process.stdout.write(`${out.join('\n')}\n`);
}
