#!/usr/bin/env node
/**
 * What reading peer folders costs discovery: `npm run bench` (builds first) or, after a build,
 * `node test/bench/peers.bench.mjs [--json] [--quick]`.
 *
 * One plugins folder of N plugins each, discovered whole (the built `discoverPlugins`), in the
 * same process, runs interleaved:
 *
 * 1. baseline: N plinth plugins (a `manifest.json` each);
 * 2. N Claude Code plugins (`.claude-plugin/plugin.json`, `.mcp.json`, `hooks/hooks.json`);
 * 3. N Gemini CLI extensions (`gemini-extension.json`, `hooks/hooks.json`);
 * 4. N plinth plugins each one folder down (`vendor-i/plugin-i/manifest.json`): every group folder
 *    is now also tried as a peer folder before it is searched, the cost plinth's own plugins pay.
 *
 * p50 over the runs, and each ratio to the baseline. Figures are reported, not asserted.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchOptions, median } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const { json: JSON_OUT, quick: QUICK } = benchOptions('peers.bench');
const N = QUICK ? 50 : 500;
const RUNS = QUICK ? 3 : 15;

const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-peers-'));
process.on('exit', () => rmSync(base, { recursive: true, force: true }));
const progress = (text) => process.stderr.write(`${text}\n`);
const write = (file, value) => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value));
};
const server = (i) => ({ [`s${i}`]: { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/server.js'], env: { TOKEN: '${TOKEN}' } } });
const hooks = (event) => ({ hooks: { [event]: [{ matcher: 'Write|Edit', hooks: [{ type: 'command', command: 'node guard.js', timeout: 10 }] }] } });

const folders = { plinth: path.join(base, 'plinth'), claude: path.join(base, 'claude'), gemini: path.join(base, 'gemini'), nested: path.join(base, 'nested') };
for (let i = 0; i < N; i++) {
  write(path.join(folders.plinth, `p${i}`, 'manifest.json'), { name: `p${i}`, version: '1.0.0', mcpServers: { [`s${i}`]: { command: 'node', args: ['server.js'] } } });
  write(path.join(folders.claude, `c${i}`, '.claude-plugin', 'plugin.json'), { name: `c${i}`, version: '1.0.0', description: 'a Claude Code plugin' });
  write(path.join(folders.claude, `c${i}`, '.mcp.json'), { mcpServers: server(i) });
  write(path.join(folders.claude, `c${i}`, 'hooks', 'hooks.json'), hooks('PreToolUse'));
  write(path.join(folders.gemini, `g${i}`, 'gemini-extension.json'), { name: `g${i}`, version: '1.0.0', mcpServers: { [`s${i}`]: { command: 'node', args: ['${extensionPath}${/}server.js'] } }, settings: [{ name: 'Key', envVar: 'KEY' }] });
  write(path.join(folders.gemini, `g${i}`, 'hooks', 'hooks.json'), hooks('BeforeTool'));
  write(path.join(folders.nested, `vendor-${i}`, `n${i}`, 'manifest.json'), { name: `n${i}`, version: '1.0.0' });
}

const { discoverPlugins } = await import(pathToFileURL(path.join(ROOT, 'dist', 'kernel', 'discovery.js')).href);
const times = { plinth: [], claude: [], gemini: [], nested: [] };
progress(`peers: discovering ${N} plugins of each kind, ${RUNS} runs interleaved…`);
for (let run = 0; run < RUNS + 1; run++) {
  for (const kind of Object.keys(folders)) {
    const started = performance.now();
    const found = await discoverPlugins([{ dir: folders[kind], source: 'user' }], { workspace: base });
    const ms = performance.now() - started;
    if (found.candidates.length !== N || found.invalid.length > 0) throw new Error(`${kind}: found ${found.candidates.length} of ${N} (${found.invalid.length} invalid)`);
    if (run > 0) times[kind].push(ms); // the first run warms the caches and the modules
  }
}

const round = (ms) => Math.round(ms * 10) / 10;
const p50 = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, round(median(v))]));
const ratio = (kind) => Math.round((p50[kind] / p50.plinth) * 100) / 100;
const figures = { plugins: N, runs: RUNS, p50Ms: p50, ratioToPlinth: { claude: ratio('claude'), gemini: ratio('gemini'), nested: ratio('nested') }, quick: QUICK };
if (JSON_OUT) process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
else {
  process.stdout.write(`peers: discovery of ${N} plinth plugins (baseline): p50 ${p50.plinth} ms\n`);
  process.stdout.write(`peers: ${N} Claude Code plugins (plugin.json, .mcp.json, hooks.json): p50 ${p50.claude} ms (${figures.ratioToPlinth.claude}x)\n`);
  process.stdout.write(`peers: ${N} Gemini CLI extensions (gemini-extension.json, hooks.json): p50 ${p50.gemini} ms (${figures.ratioToPlinth.gemini}x)\n`);
  process.stdout.write(`peers: ${N} plinth plugins one group folder down (each group folder also tried as a peer): p50 ${p50.nested} ms (${figures.ratioToPlinth.nested}x)\n`);
}
