#!/usr/bin/env node
/**
 * The hook runner's speed figures: `node test/bench/hooks.bench.mjs [--json] [--quick]`
 * (no build needed: the plugin's TypeScript is loaded with jiti, as plinth loads it).
 *
 * 1. Per-event latency of a node hook through the runner (spawn mode) against
 *    spawning the same script with bare execa — same node binary, script,
 *    input line, cwd and environment; the runner adds the whitelist, the script
 *    check, the process group and its kill, bounded reading and validation.
 *    Target: ratio of medians ≤ 1.15.
 * 2. Events per second of the same hook in persistent mode against spawn mode,
 *    both through the runner, one event at a time. Target: ratio ≥ 20.
 * 3. What a user gets: one event through `kernel.emit` (the built kernel with
 *    every builtin plugin: the hook is a user hook in settings.json, so the
 *    trust check runs at every event, and the run is appended to
 *    hooks-trace.jsonl) to the same script in persistent mode, against a bare
 *    pipe round trip (one line written, one line read) to the same script
 *    spawned as a plain child process. Target: ratio ≤ 2 (issue 28).
 *    Needs the build (`npm run build`; `npm run bench` builds first).
 *
 * Rounds are interleaved (A,B then B,A) so that drift in the machine's load
 * hits both sides. Targets are reported, not asserted: the exit code is 0
 * unless the benchmark itself breaks. `--json` prints one JSON document on
 * stdout; progress goes to stderr. `--quick` is a smoke test, not figures.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { createJiti } from 'jiti';
import { benchOptions, median, quantile } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'hooks');
// One script for both modes: it answers each line of stdin, and exits when stdin ends.
const SCRIPT = path.join(FIXTURES, 'persistent.mjs');

const { json: JSON_OUT, quick: QUICK } = benchOptions('hooks.bench');

const N = QUICK
  ? { warmup: 2, latencyRounds: 3, eventsPerSide: 4, throughputRounds: 2, persistentEvents: 200, spawnEvents: 5, emitWarmup: 200, emitRounds: 6, emitsPerRound: 200 }
  : { warmup: 5, latencyRounds: 16, eventsPerSide: 10, throughputRounds: 5, persistentEvents: 2000, spawnEvents: 25, emitWarmup: 1000, emitRounds: 30, emitsPerRound: 500 };
const TARGETS = { latencyRatio: 1.15, throughputRatio: 20, emitRatio: 2 };

// ── helpers ────────────────────────────────────────────────────────────────

const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const stats = (values) => ({
  median: round(median(values)),
  p90: round(quantile(values, 0.9)),
  min: round(Math.min(...values)),
  max: round(Math.max(...values)),
  n: values.length,
});

const workspace = mkdtempSync(path.join(os.tmpdir(), 'plinth-hooks-bench-'));
let runnerToClose;
/** What section 3 leaves running: the kernel and the bare child. */
const toStop = [];
async function cleanup() {
  await runnerToClose?.close();
  runnerToClose = undefined;
  for (const stop of toStop.splice(0)) await stop();
  rmSync(workspace, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    void cleanup().finally(() => process.exit(130));
  });
}

// ── the plugin's modules, loaded as plinth loads plugins ──────────────────

// `plinth/internal` is not exported by the package (plugins get it from the kernel's loader): the sources, as the kernel's jiti maps them.
const jiti = createJiti(import.meta.url, { alias: { 'plinth/sdk': path.join(ROOT, 'sdk', 'index.ts'), 'plinth/internal': path.join(ROOT, 'internal', 'index.ts') } });
const { createRunner, DEFAULT_ALLOWED_COMMANDS, DEFAULT_MAX_OUTPUT_BYTES } = await jiti.import('../../plugins/hooks/runner/runner.ts');
const { hookEnvironment } = await jiti.import('../../plugins/hooks/runner/environment.ts');
const { createLauncher } = await jiti.import('../../plugins/launcher/launcher.ts');
const { childEnvironment } = await jiti.import('../../plugins/launcher/environment.ts');
const { buildInput, encodeInput, parseResponse } = await jiti.import('../../plugins/hooks/protocol.ts');

function hookDefinition(name, persistent) {
  return {
    id: `user:${name}`,
    name,
    events: ['before_tool'],
    subscribedAs: ['pre-tool-call'],
    matcher: {},
    action: { type: 'command', command: 'node', args: [SCRIPT] },
    cwd: FIXTURES,
    timeoutMs: 5000,
    priority: 0,
    dependsOn: [],
    parallel: false,
    rateLimit: {},
    onError: 'block',
    enabled: true,
    persistent: persistent ? { idleMs: 60_000 } : false,
    source: 'user',
    origin: 'bench',
  };
}

const spawnHook = hookDefinition('bench-spawn', false);
const persistentHook = hookDefinition('bench-persistent', true);
const context = { tool: 'read-file', args: { path: 'README.md' }, session: { id: 'bench' } };

const runner = createRunner({ allowedCommands: DEFAULT_ALLOWED_COMMANDS, maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES, env: [], workspace, launcher: createLauncher() });
runnerToClose = runner;

/** One event through the runner. */
async function viaRunner(hook) {
  const result = await runner.run(hook, buildInput(hook, 'pre-tool-call', context, 'bench'));
  if (!result.ok || result.response.allow !== true) throw new Error(`the runner failed: ${JSON.stringify(result)}`);
}

// The bare side: the same node (the real path the runner resolves and spawns), script, input, cwd and environment.
const nodeFile = realpathSync(process.execPath);
const declared = hookEnvironment(spawnHook, { extra: [], workspace, event: 'pre-tool-call' });
const bareEnv = childEnvironment(process.env, declared.passEnv, declared.env);
async function viaBareExeca() {
  const line = encodeInput(buildInput(spawnHook, 'pre-tool-call', context, 'bench'));
  const result = await execa(nodeFile, spawnHook.action.args, {
    cwd: spawnHook.cwd,
    env: bareEnv,
    extendEnv: false,
    input: line,
    timeout: spawnHook.timeoutMs,
    maxBuffer: DEFAULT_MAX_OUTPUT_BYTES,
    reject: false,
  });
  const parsed = parseResponse(result.stdout);
  if (result.exitCode !== 0 || !parsed.ok || parsed.response.allow !== true) {
    throw new Error(`bare execa failed: exit ${result.exitCode}, ${result.stderr || result.stdout}`);
  }
}

// ── 1. latency: runner against bare execa ──────────────────────────────────

async function benchLatency() {
  progress(`1/3 latency: ${N.latencyRounds} interleaved rounds of ${N.eventsPerSide} events per side, after ${N.warmup} warm-ups each…`);
  const sides = { runner: () => viaRunner(spawnHook), bare: viaBareExeca };
  for (let i = 0; i < N.warmup; i++) {
    await sides.runner();
    await sides.bare();
  }
  const samples = { runner: [], bare: [] };
  const roundRatios = [];
  for (let r = 0; r < N.latencyRounds; r++) {
    const order = r % 2 === 0 ? ['runner', 'bare'] : ['bare', 'runner'];
    const thisRound = { runner: [], bare: [] };
    for (const side of order) {
      for (let i = 0; i < N.eventsPerSide; i++) {
        const started = performance.now();
        await sides[side]();
        thisRound[side].push(performance.now() - started);
      }
    }
    samples.runner.push(...thisRound.runner);
    samples.bare.push(...thisRound.bare);
    roundRatios.push(median(thisRound.runner) / median(thisRound.bare));
  }
  const ratio = median(samples.runner) / median(samples.bare);
  return {
    runnerMs: stats(samples.runner),
    bareExecaMs: stats(samples.bare),
    ratio: { ofMedians: round(ratio, 3), ofP90s: round(quantile(samples.runner, 0.9) / quantile(samples.bare, 0.9), 3), roundsMin: round(Math.min(...roundRatios), 3), roundsMax: round(Math.max(...roundRatios), 3) },
    target: `≤ ${TARGETS.latencyRatio}`,
    pass: ratio <= TARGETS.latencyRatio,
  };
}

// ── 2. throughput: persistent against spawn mode ───────────────────────────

async function benchThroughput() {
  progress(`2/3 throughput: ${N.throughputRounds} interleaved rounds of ${N.persistentEvents} persistent and ${N.spawnEvents} spawn-mode events…`);
  const eventsPerSecond = async (hook, n) => {
    const started = performance.now();
    for (let i = 0; i < n; i++) await viaRunner(hook);
    return (n * 1000) / (performance.now() - started);
  };
  // Warm-up: starts the persistent process, which is then reused.
  await eventsPerSecond(persistentHook, 50);
  await eventsPerSecond(spawnHook, 2);
  const persistent = [];
  const spawn = [];
  for (let r = 0; r < N.throughputRounds; r++) {
    const order = r % 2 === 0 ? ['persistent', 'spawn'] : ['spawn', 'persistent'];
    for (const side of order) {
      if (side === 'persistent') persistent.push(await eventsPerSecond(persistentHook, N.persistentEvents));
      else spawn.push(await eventsPerSecond(spawnHook, N.spawnEvents));
    }
  }
  const ratio = median(persistent) / median(spawn);
  return {
    persistentEventsPerSecond: stats(persistent),
    spawnEventsPerSecond: stats(spawn),
    ratio: round(ratio, 1),
    target: `≥ ${TARGETS.throughputRatio}`,
    pass: ratio >= TARGETS.throughputRatio,
  };
}

// ── 3. through kernel.emit, trust and trace on, against a bare pipe round trip ──

/** A child running `SCRIPT` with plain pipes: one line written, one line read, is one round trip. */
function bareChild() {
  const child = spawn(nodeFile, [SCRIPT], { cwd: FIXTURES, env: bareEnv, stdio: ['pipe', 'pipe', 'ignore'] });
  let buffered = '';
  let waiting;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      const done = waiting;
      waiting = undefined;
      done?.(line);
    }
  });
  const line = encodeInput(buildInput(persistentHook, 'pre-tool-call', context, 'bench'));
  return {
    roundTrip: () =>
      new Promise((resolve, reject) => {
        waiting = (answer) => (JSON.parse(answer).allow === true ? resolve() : reject(new Error(`the bare child answered ${answer}`)));
        child.stdin.write(line);
      }),
    stop: () => {
      child.stdin.end();
      return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    },
  };
}

async function benchEmit() {
  const dist = path.join(ROOT, 'dist');
  if (!existsSync(path.join(dist, 'kernel', 'index.js'))) throw new Error('section 3 needs the build: run `npm run build` first (`npm run bench` does)');
  const { Kernel } = await import(pathToFileURL(path.join(dist, 'kernel', 'index.js')).href);
  progress(`3/3 kernel.emit: ${N.emitRounds} interleaved rounds of ${N.emitsPerRound} events per side, after ${N.emitWarmup} warm-ups each…`);
  const home = path.join(workspace, 'home');
  const project = path.join(workspace, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  // A user hook: trusted on first use, then its pin checked at every event; every run traced. Nothing else runs.
  const hooks = { before_tool: [{ name: 'bench-emit', command: 'node', args: [SCRIPT], cwd: FIXTURES, persistent: { idleMs: 600_000 } }] };
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } }, hooks }));
  const kernel = new Kernel({ home, workspace: project, builtin: true, env: {} });
  await kernel.boot();
  toStop.push(() => kernel.shutdown());
  const bare = bareChild();
  toStop.push(() => bare.stop());
  const viaEmit = async () => {
    const decision = await kernel.emit('before_tool', context);
    if (decision.allow !== true) throw new Error(`kernel.emit did not allow: ${JSON.stringify(decision)}`);
  };
  for (let i = 0; i < N.emitWarmup; i++) {
    await viaEmit();
    await bare.roundTrip();
  }
  const sides = { emit: viaEmit, bare: bare.roundTrip };
  const perEvent = { emit: [], bare: [] };
  const roundRatios = [];
  for (let r = 0; r < N.emitRounds; r++) {
    const order = r % 2 === 0 ? ['emit', 'bare'] : ['bare', 'emit'];
    const thisRound = {};
    for (const side of order) {
      const started = performance.now();
      for (let i = 0; i < N.emitsPerRound; i++) await sides[side]();
      thisRound[side] = ((performance.now() - started) * 1000) / N.emitsPerRound;
    }
    perEvent.emit.push(thisRound.emit);
    perEvent.bare.push(thisRound.bare);
    roundRatios.push(thisRound.emit / thisRound.bare);
  }
  // The run really was checked and traced: the pin is in trust.json, the runs in the trace.
  const trust = JSON.parse(readFileSync(path.join(home, 'trust.json'), 'utf8'));
  if (!trust.approvals.some((a) => a.id === 'user:bench-emit' && a.how === 'pinned')) throw new Error('the hook was not pinned by trust');
  const traced = readFileSync(path.join(home, 'hooks-trace.jsonl'), 'utf8').split('\n').filter(Boolean);
  if (!traced.at(-1)?.includes('"hook":"user:bench-emit"')) throw new Error('the last run is not in hooks-trace.jsonl');
  const ratio = median(roundRatios);
  return {
    emitUs: stats(perEvent.emit),
    barePipeUs: stats(perEvent.bare),
    ratio: { ofRounds: round(ratio, 3), roundsMin: round(Math.min(...roundRatios), 3), roundsMax: round(Math.max(...roundRatios), 3), ofMedians: round(median(perEvent.emit) / median(perEvent.bare), 3) },
    target: `≤ ${TARGETS.emitRatio}`,
    pass: ratio <= TARGETS.emitRatio,
  };
}

// ── report ─────────────────────────────────────────────────────────────────

function printTable({ latency, throughput, emit }) {
  const verdict = (pass) => (pass ? 'PASS' : 'MISS');
  const ms = (s) => `median ${s.median.toFixed(1)} ms, p90 ${s.p90.toFixed(1)} ms`;
  const eps = (s) => `median ${Math.round(s.median).toLocaleString('en-US')} events/s (${Math.round(s.min).toLocaleString('en-US')}–${Math.round(s.max).toLocaleString('en-US')})`;
  const rows = [
    ['1. node hook through the runner', ms(latency.runnerMs), '', ''],
    ['   same script, bare execa', ms(latency.bareExecaMs), '', ''],
    ['   ratio runner / bare', `${latency.ratio.ofMedians.toFixed(3)} (p90s ${latency.ratio.ofP90s.toFixed(3)}; rounds ${latency.ratio.roundsMin.toFixed(2)}–${latency.ratio.roundsMax.toFixed(2)})`, latency.target, verdict(latency.pass)],
    ['2. persistent mode', eps(throughput.persistentEventsPerSecond), '', ''],
    ['   spawn mode', eps(throughput.spawnEventsPerSecond), '', ''],
    ['   ratio persistent / spawn', `${throughput.ratio.toFixed(1)}×`, throughput.target, verdict(throughput.pass)],
    ['3. persistent hook through kernel.emit', `median ${Math.round(emit.emitUs.median)} µs per event (rounds ${Math.round(emit.emitUs.min)}–${Math.round(emit.emitUs.max)})`, '', ''],
    ['   same script, bare pipe round trip', `median ${Math.round(emit.barePipeUs.median)} µs (rounds ${Math.round(emit.barePipeUs.min)}–${Math.round(emit.barePipeUs.max)})`, '', ''],
    ['   ratio emit / bare pipe', `${emit.ratio.ofRounds.toFixed(2)} (median of rounds; ${emit.ratio.roundsMin.toFixed(2)}–${emit.ratio.roundsMax.toFixed(2)})`, emit.target, verdict(emit.pass)],
  ];
  const header = ['FIGURE', 'RESULT', 'TARGET', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd();
  const cpus = os.cpus();
  const out = [
    `plinth hook runner benchmark — node ${process.version}, ${process.platform} ${process.arch}, ${cpus.length} CPU(s) ${cpus[0]?.model ?? ''}, load ${os.loadavg()[0].toFixed(2)}${QUICK ? ', --quick (smoke test, do not quote)' : ''}`,
    '',
    line(header),
    ...rows.map(line),
    '',
    `Latency: ${latency.runnerMs.n} events per side, one at a time, in ${N.latencyRounds} interleaved rounds (A,B then B,A). Throughput: sequential awaited events, ${N.throughputRounds} interleaved rounds.`,
    `Hook: node ${path.relative(ROOT, SCRIPT)} (answers each stdin line; exits at EOF). PASS/MISS compares the median with the target; targets are reported, not asserted.`,
    `kernel.emit: a user hook in settings.json (trust checks its pin at every event; each run appended to hooks-trace.jsonl), the builtin plugins as a user has them; ${N.emitRounds} interleaved rounds of ${N.emitsPerRound} sequential events per side.`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

try {
  const startedAt = new Date().toISOString();
  const latency = await benchLatency();
  const throughput = await benchThroughput();
  await runnerToClose?.close();
  runnerToClose = undefined;
  const emit = await benchEmit();
  const results = {
    startedAt,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: os.cpus().length,
    quick: QUICK,
    latency,
    throughput,
    emit,
  };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else printTable(results);
} finally {
  await cleanup();
}
