#!/usr/bin/env node
/**
 * What speaking a peer's dialect costs: `node test/bench/hooks-dialects.bench.mjs [--json] [--quick]`
 * (no build needed: the plugin's TypeScript is loaded with jiti, as plinth loads it).
 *
 * 1. Per-event latency of one node script run through the runner as a Claude Code hook (the
 *    peer's input document, its environment variables, its output read with its semantics)
 *    against the same script as a plinth hook (protocol v1.0.0). Same node, script, cwd.
 *    Target: ratio of medians ≤ 1.05 (the translation is small next to a process start).
 * 2. Reading definitions: a settings section of peer-shaped groups (`{ matcher, hooks: [{ type,
 *    command }] }`, the command string split and expanded) against the same number of plinth
 *    definitions. Reported per hook, with the ratio; target ≤ 3.
 *
 * Rounds are interleaved (A,B then B,A). Targets are reported, not asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';
import { benchOptions, median, quantile } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'hooks-dialects', 'bench-answer.mjs');
const { json: JSON_OUT, quick: QUICK } = benchOptions('hooks-dialects.bench');
const N = QUICK ? { warmup: 2, rounds: 3, perSide: 4, sectionHooks: 50, readRounds: 3 } : { warmup: 5, rounds: 12, perSide: 10, sectionHooks: 500, readRounds: 15 };
const TARGETS = { latencyRatio: 1.05, readRatio: 3 };

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const stats = (values) => ({ median: round(median(values), 3), p90: round(quantile(values, 0.9), 3), n: values.length });

const workspace = mkdtempSync(path.join(os.tmpdir(), 'plinth-dialects-bench-'));
const jiti = createJiti(import.meta.url);
const { createRunner, DEFAULT_ALLOWED_COMMANDS, DEFAULT_MAX_OUTPUT_BYTES } = await jiti.import('../../plugins/hooks/runner/runner.ts');
const { createLauncher } = await jiti.import('../../plugins/launcher/launcher.ts');
const { buildInput } = await jiti.import('../../plugins/hooks/protocol.ts');
const { buildPeerInput } = await jiti.import('../../plugins/hooks/dialects/input.ts');
const { normalizeSection } = await jiti.import('../../plugins/hooks/definition.ts');

const base = {
  events: ['before_tool'],
  matcher: {},
  action: { type: 'command', command: 'node', args: [SCRIPT] },
  cwd: workspace,
  timeoutMs: 5000,
  priority: 0,
  dependsOn: [],
  parallel: false,
  rateLimit: {},
  onError: 'block',
  enabled: true,
  persistent: false,
  source: 'user',
  origin: 'bench',
};
const plinthHook = { ...base, id: 'user:plinth', name: 'plinth', subscribedAs: ['before_tool'] };
const claudeHook = { ...base, id: 'user:PreToolUse.0.0', name: 'PreToolUse.0.0', subscribedAs: ['PreToolUse'], protocol: 'claude', onError: 'allow' };
const context = { tool: 'Bash', args: { command: 'ls -la' }, sessionId: 'bench' };
const runner = createRunner({ allowedCommands: DEFAULT_ALLOWED_COMMANDS, maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES, env: [], workspace, launcher: createLauncher() });

const sides = {
  claude: async () => {
    const result = await runner.run(claudeHook, buildPeerInput(claudeHook, 'before_tool', context, { sessionId: 'bench', workspace }));
    if (!result.ok || result.response.allow !== true) throw new Error(`the Claude Code hook failed: ${JSON.stringify(result)}`);
  },
  plinth: async () => {
    const result = await runner.run(plinthHook, buildInput(plinthHook, 'before_tool', context, 'bench'));
    if (!result.ok || result.response.allow !== true) throw new Error(`the plinth hook failed: ${JSON.stringify(result)}`);
  },
};

async function benchLatency() {
  progress(`1/2 latency: ${N.rounds} interleaved rounds of ${N.perSide} events per side…`);
  for (let i = 0; i < N.warmup; i++) {
    await sides.claude();
    await sides.plinth();
  }
  const samples = { claude: [], plinth: [] };
  for (let r = 0; r < N.rounds; r++) {
    for (const side of r % 2 === 0 ? ['claude', 'plinth'] : ['plinth', 'claude']) {
      for (let i = 0; i < N.perSide; i++) {
        const started = performance.now();
        await sides[side]();
        samples[side].push(performance.now() - started);
      }
    }
  }
  const ratio = median(samples.claude) / median(samples.plinth);
  return { claudeMs: stats(samples.claude), plinthMs: stats(samples.plinth), ratio: round(ratio, 3), target: `≤ ${TARGETS.latencyRatio}`, pass: ratio <= TARGETS.latencyRatio };
}

function benchRead() {
  progress(`2/2 reading ${N.sectionHooks} definitions, ${N.readRounds} interleaved rounds…`);
  const peer = { PreToolUse: Array.from({ length: N.sectionHooks }, (_, i) => ({ matcher: `Tool${i}|Edit`, hooks: [{ type: 'command', command: `node "$CLAUDE_PROJECT_DIR/hooks/h${i}.js" --flag 'a b'`, timeout: 30 }] })) };
  const own = { before_tool: Array.from({ length: N.sectionHooks }, (_, i) => ({ name: `h${i}`, command: 'node', args: [`hooks/h${i}.js`, '--flag', 'a b'], matcher: [`Tool${i}`, 'Edit'], timeout: 30_000 })) };
  const where = { source: 'user', origin: 'bench.json', baseDir: workspace, projectDir: workspace };
  const defaults = { timeoutMs: 5000, idleMs: 60_000 };
  const read = (section) => {
    const started = performance.now();
    const { hooks, problems } = normalizeSection(section, where, defaults);
    const ms = performance.now() - started;
    if (hooks.length !== N.sectionHooks || problems.length > 0) throw new Error(`read ${hooks.length} hooks, ${problems.length} problems`);
    return (ms * 1000) / N.sectionHooks;
  };
  read(peer);
  read(own);
  const samples = { peer: [], own: [] };
  for (let r = 0; r < N.readRounds; r++) {
    for (const side of r % 2 === 0 ? ['peer', 'own'] : ['own', 'peer']) samples[side].push(read(side === 'peer' ? peer : own));
  }
  const ratio = median(samples.peer) / median(samples.own);
  return { peerMicrosPerHook: stats(samples.peer), plinthMicrosPerHook: stats(samples.own), ratio: round(ratio, 3), target: `≤ ${TARGETS.readRatio}`, pass: ratio <= TARGETS.readRatio };
}

try {
  const latency = await benchLatency();
  const reading = benchRead();
  const results = { node: process.version, platform: `${process.platform} ${process.arch}`, cpus: os.cpus().length, quick: QUICK, latency, reading };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else {
    const verdict = (pass) => (pass ? 'PASS' : 'MISS');
    process.stdout.write(
      [
        `plinth hook dialects benchmark — node ${process.version}, ${process.platform} ${process.arch}, ${os.cpus().length} CPU(s), load ${os.loadavg()[0].toFixed(2)}${QUICK ? ', --quick (smoke test, do not quote)' : ''}`,
        '',
        `1. Claude Code hook through the runner   median ${latency.claudeMs.median.toFixed(1)} ms, p90 ${latency.claudeMs.p90.toFixed(1)} ms`,
        `   same script as a plinth hook           median ${latency.plinthMs.median.toFixed(1)} ms, p90 ${latency.plinthMs.p90.toFixed(1)} ms`,
        `   ratio claude / plinth                  ${latency.ratio.toFixed(3)}   target ${latency.target}   ${verdict(latency.pass)}`,
        `2. reading a peer-shaped definition       median ${reading.peerMicrosPerHook.median.toFixed(1)} µs per hook`,
        `   reading a plinth definition            median ${reading.plinthMicrosPerHook.median.toFixed(1)} µs per hook`,
        `   ratio peer / plinth                    ${reading.ratio.toFixed(3)}   target ${reading.target}   ${verdict(reading.pass)}`,
        '',
        `Latency: ${latency.claudeMs.n} events per side in ${N.rounds} interleaved rounds. Reading: ${N.sectionHooks} definitions per section, ${N.readRounds} rounds.`,
      ].join('\n') + '\n',
    );
  }
} finally {
  await runner.close();
  rmSync(workspace, { recursive: true, force: true });
}
