#!/usr/bin/env node
/**
 * The extensions plugin's figures: `npm run bench` (builds first) or, after a
 * build, `node test/bench/extensions.bench.mjs [--json] [--quick]`.
 *
 * 1. save → answer: a serving kernel (the builtin plugins, as `plinth up`) with a linked plugin
 *    folder whose main imports a module; the module is rewritten, and the time runs until the
 *    new version answers `before_tool` (the watcher's debounce, the kernel's replace with a fresh
 *    import, the swap). p50 and p90 over 20 saves.
 * 2. a disable/enable cycle through the `extensions` service (`plinth ext disable` then `enable`):
 *    the settings file written twice under its lock, the plugin stopped and started again live.
 *    p50 and p90 over 20 cycles.
 *
 * Figures are reported, not asserted. `--json` prints one JSON document on stdout.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchOptions, quantile } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = path.join(ROOT, 'dist');
const { json: JSON_OUT, quick: QUICK } = benchOptions('extensions.bench');
const N = QUICK ? { saves: 3, cycles: 3 } : { saves: 20, cycles: 20 };
const DEBOUNCE_MS = 150; // the plugin's default reloadDebounceMs

const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-ext-'));
process.on('exit', () => rmSync(base, { recursive: true, force: true }));

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (ms) => Math.round(ms * 10) / 10;
const stats = (values) => ({ p50: round(quantile(values, 0.5)), p90: round(quantile(values, 0.9)), runs: values.length });

function writePlugin(dir, answer) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ name: 'devtool', version: '1.0.0', kernel: '^1.0.0', main: './index.ts', events: ['before_tool'] }));
  writeFileSync(path.join(dir, 'answer.ts'), `export const answer = ${JSON.stringify(answer)};\n`);
  writeFileSync(
    path.join(dir, 'index.ts'),
    "import { definePlugin } from 'plinth/sdk';\nimport { answer } from './answer.ts';\nexport default definePlugin({ setup(kernel) { kernel.on('before_tool', () => ({ message: answer })); } });\n",
  );
}

const home = path.join(base, 'home');
const workspace = path.join(base, 'project');
const dir = path.join(base, 'dev', 'devtool');
mkdirSync(home, { recursive: true });
mkdirSync(workspace, { recursive: true });
writePlugin(dir, 'start');
writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ links: [dir], plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } } }));

const { createKernel } = await import(pathToFileURL(path.join(DIST, 'kernel', 'index.js')).href);
const kernel = createKernel({ home, workspace, env: { PATH: process.env.PATH ?? '' }, logSink: () => {} });
const quiet = process.stderr.write.bind(process.stderr);
// The plugin prints one line per reload on stderr: not what this benchmark reports.
process.stderr.write = (chunk, ...rest) => (String(chunk).startsWith('plinth: reloaded') ? true : quiet(chunk, ...rest));
await kernel.boot();
await kernel.serve();
const answers = async () => (await kernel.emit('before_tool', { tool: 'ls' })).messages;

async function answered(expected, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if ((await answers()).includes(expected)) return;
    if (performance.now() > deadline) throw new Error(`the plugin never answered "${expected}"`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

progress(`save → answer: ${N.saves} saves (debounce ${DEBOUNCE_MS} ms)…`);
await answered('start');
const saves = [];
for (let i = 0; i < N.saves; i++) {
  const started = performance.now();
  writeFileSync(path.join(dir, 'answer.ts'), `export const answer = ${JSON.stringify(`v${i}`)};\n`);
  await answered(`v${i}`);
  saves.push(performance.now() - started);
  await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS)); // let the watcher settle between saves
}

progress(`disable/enable: ${N.cycles} cycles…`);
const ext = await kernel.get('extensions');
const cycles = [];
for (let i = 0; i < N.cycles; i++) {
  const started = performance.now();
  await ext.disable('devtool');
  await ext.enable('devtool');
  cycles.push(performance.now() - started);
}
if (!(await answers()).includes(`v${N.saves - 1}`)) throw new Error('the plugin does not answer after the cycles');
await kernel.shutdown();
process.stderr.write = quiet;

const figures = { saveToAnswerMs: { ...stats(saves), debounceMs: DEBOUNCE_MS }, disableEnableCycleMs: stats(cycles), quick: QUICK };
if (JSON_OUT) process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
else {
  process.stdout.write(`extensions: save → new version answering: p50 ${figures.saveToAnswerMs.p50} ms, p90 ${figures.saveToAnswerMs.p90} ms over ${saves.length} saves (debounce ${DEBOUNCE_MS} ms included)\n`);
  process.stdout.write(`extensions: disable + enable cycle (settings written, plugin stopped and started live): p50 ${figures.disableEnableCycleMs.p50} ms, p90 ${figures.disableEnableCycleMs.p90} ms over ${cycles.length} cycles\n`);
}
