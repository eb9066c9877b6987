#!/usr/bin/env node
/**
 * plinth's speed figures: `npm run bench` (builds first) or, after a build,
 * `node test/bench/kernel.bench.mjs [--json] [--quick]`.
 *
 * 1. `plinth --version` wall time (target < 150 ms), and as a ratio to `node -e 0`
 * 2. boot-to-ready with the builtin plugins, in-process and through `plinth up --once --json`
 * 3. resolve time for 1,000 synthetic manifests (target < 100 ms, checked against resolve alone)
 * 4. `kernel.emit` with 1, 10 and 100 handlers, synchronous and async, each against a bare
 *    tapable AsyncSeriesWaterfallHook with the same handler functions (target ratio ≤ 1.5)
 * 5. boot per loaded plugin at 150, 300 and 600 user plugins (TypeScript, through jiti), warm and
 *    cold jiti cache, against jiti alone importing the same files (target ≤ 1 ms per plugin warm);
 *    and, at the largest size, the builtin plugins with and without the trust plugin, per plugin
 *    added (the trust plugin's share is its own item)
 *
 * Targets are reported, not asserted (machines are noisy): the exit code is 0
 * unless the benchmark itself breaks. `--json` prints one JSON document on
 * stdout; progress goes to stderr. `--quick` runs fewer iterations (a smoke
 * test of the benchmark, not figures to quote).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeSyntheticPlugins } from './synthetic-plugins.mjs';
import { benchOptions, median, quantile } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = path.join(ROOT, 'dist');
const BIN = path.join(DIST, 'cli', 'bin.js');

const { json: JSON_OUT, quick: QUICK } = benchOptions('kernel.bench');

const N = QUICK
  ? { versionRuns: 5, bootRuns: 10, cliRuns: 3, resolveRuns: 5, discoverRuns: 3, emitRounds: 4, handlerCallsPerRound: 20_000, bootSizes: [150], pluginBootRuns: 1, bootCold: true }
  : { versionRuns: 20, bootRuns: 50, cliRuns: 10, resolveRuns: 30, discoverRuns: 15, emitRounds: 16, handlerCallsPerRound: 200_000, bootSizes: [150, 300, 600], pluginBootRuns: 3, bootCold: true };
N.pluginBootRuns ??= 1;

const TARGETS = { versionMs: 150, resolveMs: 100, emitRatio: 1.5, bootMsPerPlugin: 1 };

// ── helpers ────────────────────────────────────────────────────────────────

/** Oddities worth a look that do not make the figures meaningless. */
const notes = new Set();

const temps = [];
function tempDir(label) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `plinth-bench-${label}-`));
  temps.push(dir);
  return dir;
}
function cleanup() {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

function progress(text) {
  process.stderr.write(`${text}\n`);
}

const p90 = (values) => quantile(values, 0.9);
const stats = (values) => ({ median: round(median(values)), p90: round(p90(values)), min: round(Math.min(...values)), max: round(Math.max(...values)), n: values.length });

function round(x, digits = 2) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** The environment without PLINTH_* variables, so a developer's settings do not change the figures. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PLINTH_')));

function run(argv, { check = true } = {}) {
  const started = performance.now();
  const child = spawnSync(process.execPath, argv, { encoding: 'utf8', env: cleanEnv, cwd: os.tmpdir() });
  const ms = performance.now() - started;
  if (child.error) throw child.error;
  if (check && child.status !== 0) {
    throw new Error(`\`node ${argv.join(' ')}\` exited with ${child.status}:\n${child.stderr}${child.stdout}`);
  }
  return { ms, stdout: child.stdout, stderr: child.stderr, status: child.status };
}

// ── 1. plinth --version ────────────────────────────────────────────────────

function benchVersion() {
  progress(`1/5 plinth --version: ${N.versionRuns} runs after 2 warm-ups…`);
  for (let i = 0; i < 2; i++) run([BIN, '--version']);
  const times = [];
  let output = '';
  for (let i = 0; i < N.versionRuns; i++) {
    const r = run([BIN, '--version']);
    times.push(r.ms);
    output = r.stdout.trim();
  }
  if (!/^plinth \d+\.\d+\.\d+/.test(output)) throw new Error(`plinth --version printed ${JSON.stringify(output)}`);
  // Node's own start-up, for scale: what no CLI can go below.
  for (let i = 0; i < 2; i++) run(['-e', '0']);
  const baseline = [];
  for (let i = 0; i < N.versionRuns; i++) baseline.push(run(['-e', '0']).ms);
  const s = stats(times);
  return { ...s, output, nodeBaselineMs: stats(baseline), target: `< ${TARGETS.versionMs} ms`, pass: s.median < TARGETS.versionMs };
}

// ── 2. boot-to-ready ───────────────────────────────────────────────────────

async function benchBoot() {
  progress(`2/5 boot-to-ready: in-process ${N.bootRuns} runs, CLI ${N.cliRuns} runs…`);
  const importStarted = performance.now();
  const { createKernel } = await import(pathToFileURL(path.join(DIST, 'kernel', 'index.js')).href);
  const importMs = performance.now() - importStarted;
  const home = tempDir('boot-home');
  const workspace = tempDir('boot-ws');

  const warnings = [];
  const bootOnce = async () => {
    const kernel = createKernel({ home, workspace, env: cleanEnv, logSink: (line) => warnings.push(line) });
    const started = performance.now();
    const report = await kernel.boot();
    const wall = performance.now() - started;
    const shutdown = await kernel.shutdown();
    return { wall, report, shutdown };
  };

  const first = await bootOnce();
  for (let i = 0; i < 3; i++) await bootOnce();
  const walls = [];
  const reported = [];
  let last = first;
  for (let i = 0; i < N.bootRuns; i++) {
    last = await bootOnce();
    walls.push(last.wall);
    reported.push(last.report.durationMs);
  }
  const plugins = last.report.plugins.map((p) => `${p.name}:${p.state}`);
  const problems = last.report.plugins.filter((p) => ['failed', 'skipped', 'excluded'].includes(p.state));
  if (last.report.plugins.length === 0) throw new Error('boot found no builtin plugins');
  if (problems.length > 0) throw new Error(`builtin plugins did not load: ${JSON.stringify(problems)}`);

  if (warnings.length > 0) notes.add(`in-process boot logged ${warnings.length} warning(s), e.g. ${warnings[0]}`);

  // Through the CLI: a fresh process each time, so this includes module loading.
  const cliArgs = [BIN, 'up', '--once', '--json', '--home', home, '--workspace', workspace];
  run(cliArgs);
  const cliWall = [];
  const cliDuration = [];
  for (let i = 0; i < N.cliRuns; i++) {
    const r = run(cliArgs);
    let doc;
    try {
      doc = JSON.parse(r.stdout);
    } catch {
      throw new Error(`plinth up --once --json printed no JSON:\n${r.stdout}\n${r.stderr}`);
    }
    if (doc.ready !== true || typeof doc.durationMs !== 'number') throw new Error(`unexpected plinth up output: ${r.stdout}`);
    cliWall.push(r.ms);
    cliDuration.push(doc.durationMs);
  }
  return {
    plugins,
    inProcess: {
      firstBootMs: round(first.wall),
      importMs: round(importMs),
      wallMs: stats(walls),
      reportedDurationMs: stats(reported),
      shutdownMs: round(last.shutdown.durationMs),
      warnings: warnings.length,
    },
    cli: { wallMs: stats(cliWall), reportedDurationMs: stats(cliDuration) },
  };
}

// ── 3. resolve 1,000 manifests ─────────────────────────────────────────────

async function benchResolve() {
  progress(`3/5 resolve: writing 1,000 synthetic manifests, then discover+resolve ×${N.discoverRuns} and resolve ×${N.resolveRuns}…`);
  const { discoverPlugins } = await import(pathToFileURL(path.join(DIST, 'kernel', 'discovery.js')).href);
  const { resolve } = await import(pathToFileURL(path.join(DIST, 'kernel', 'resolve', 'index.js')).href);
  const { KERNEL_API_VERSION } = await import(pathToFileURL(path.join(DIST, 'sdk', 'version.js')).href);
  const dir = tempDir('resolve');
  const set = writeSyntheticPlugins(dir, { total: 1000 });
  const sources = [{ dir, source: 'user' }];
  const resolveInput = (found) => ({ candidates: found.candidates, invalid: found.invalid, kernelVersion: KERNEL_API_VERSION });

  const check = (found, resolution) => {
    if (found.invalid.length > 0) throw new Error(`synthetic manifests were invalid: ${found.invalid[0].message}`);
    if (found.candidates.length !== set.manifests) throw new Error(`discovered ${found.candidates.length} of ${set.manifests} manifests`);
    if (resolution.excluded.length > 0) {
      const e = resolution.excluded[0];
      throw new Error(`${resolution.excluded.length} synthetic plugins were excluded, e.g. ${e.name}: ${e.error.code}: ${e.error.message}`);
    }
    if (resolution.plugins.length !== set.names.length) throw new Error(`resolved ${resolution.plugins.length} of ${set.names.length} names`);
    if (resolution.rejected.length !== set.rejectedExpected) {
      notes.add(`resolve: ${resolution.rejected.length} candidates rejected where the synthetic set expects ${set.rejectedExpected} (old versions made for kernel ^0.9.0)`);
    }
    // Load order: every plugin after its dependencies.
    const seen = new Set();
    for (const c of resolution.plugins) {
      for (const dep of Object.keys(c.manifest.dependencies)) if (!seen.has(dep)) throw new Error(`${c.manifest.name} is ordered before its dependency ${dep}`);
      seen.add(c.manifest.name);
    }
  };

  // (a) discover + resolve, reading from disk (page cache warm after the first run).
  const coldStarted = performance.now();
  let found = await discoverPlugins(sources);
  let resolution = resolve(resolveInput(found));
  const firstMs = performance.now() - coldStarted;
  check(found, resolution);
  for (let i = 0; i < 2; i++) resolve(resolveInput(await discoverPlugins(sources)));
  const both = [];
  const discoverOnly = [];
  for (let i = 0; i < N.discoverRuns; i++) {
    const started = performance.now();
    found = await discoverPlugins(sources);
    const discovered = performance.now();
    resolution = resolve(resolveInput(found));
    const ended = performance.now();
    both.push(ended - started);
    discoverOnly.push(discovered - started);
  }
  check(found, resolution);

  // (b) resolve alone, on the candidates already discovered.
  const input = resolveInput(found);
  for (let i = 0; i < 3; i++) resolve(input);
  const alone = [];
  for (let i = 0; i < N.resolveRuns; i++) {
    const started = performance.now();
    resolution = resolve(input);
    alone.push(performance.now() - started);
  }
  check(found, resolution);

  const chosenBelowNewest = resolution.plugins.filter((c) => resolution.candidates.get(c.manifest.name)[0] !== c).length;
  const s = stats(alone);
  return {
    set: {
      manifests: set.manifests,
      names: set.names.length,
      multiVersionNames: set.multiVersionNames,
      dependencyEdges: set.edges,
      withProvides: set.provides,
      resolved: resolution.plugins.length,
      excluded: resolution.excluded.length,
      rejectedCandidates: resolution.rejected.length,
      chosenBelowNewest,
    },
    resolveOnlyMs: s,
    discoverAndResolveMs: { ...stats(both), first: round(firstMs) },
    discoverOnlyMs: stats(discoverOnly),
    target: `< ${TARGETS.resolveMs} ms (resolve alone, b)`,
    pass: s.median < TARGETS.resolveMs,
  };
}

// ── 4. kernel.emit against a bare tapable hook ─────────────────────────────

/**
 * One point of the emit matrix: `count` identical trivial handlers, synchronous
 * or async, the same function objects on both sides (`kernel.on` and the bare
 * hook's `tap`/`tapPromise`), on an event of its own; rounds interleaved
 * (A, B then B, A), the ratio the median of the rounds' ratios.
 */
async function emitPoint(kernel, AsyncSeriesWaterfallHook, kind, count, event) {
  let calls = 0;
  const handlers = Array.from({ length: count }, () =>
    kind === 'sync'
      ? (context) => {
          calls++;
          if (context.tool === 'rm -rf /') return { allow: false, message: 'no' };
          return undefined;
        }
      : async (context) => {
          calls++;
          if (context.tool === 'rm -rf /') return { allow: false, message: 'no' };
          return undefined;
        },
  );
  const offs = handlers.map((handler) => kernel.on(event, handler));
  const hook = new AsyncSeriesWaterfallHook(['context']);
  handlers.forEach((handler, i) => (kind === 'sync' ? hook.tap(`handler-${i}`, handler) : hook.tapPromise(`handler-${i}`, handler)));
  const context = { tool: 'bash', input: { command: 'ls' } };

  const decision = await kernel.emit(event, context);
  if (decision.allow !== true || decision.context !== context) throw new Error(`unexpected decision ${JSON.stringify(decision)}`);
  const emits = Math.max(200, Math.round(N.handlerCallsPerRound / count));
  const sides = {
    kernel: async (n) => {
      for (let i = 0; i < n; i++) await kernel.emit(event, context);
    },
    bare: async (n) => {
      for (let i = 0; i < n; i++) await hook.promise(context);
    },
  };
  // No forced GC between rounds: a full gc() (via --expose-gc) before each side
  // made both sides slower and the bare hook about 2.5x slower, inverting the ratio.
  const time = async (side, n) => {
    calls = 0;
    const started = performance.now();
    await sides[side](n);
    const ns = ((performance.now() - started) * 1e6) / n;
    if (calls !== count * n) throw new Error(`${side}: ${calls} handler calls for ${n} emits of ${count} handlers`);
    return ns;
  };
  // Warm-up: let both sides reach optimised code before any round counts.
  for (let i = 0; i < 3; i++) {
    await time('kernel', emits);
    await time('bare', emits);
  }
  const kernelNs = [];
  const bareNs = [];
  const ratios = [];
  for (let r = 0; r < N.emitRounds; r++) {
    const order = r % 2 === 0 ? ['kernel', 'bare'] : ['bare', 'kernel'];
    const result = {};
    for (const side of order) result[side] = await time(side, emits);
    kernelNs.push(result.kernel);
    bareNs.push(result.bare);
    ratios.push(result.kernel / result.bare);
  }
  for (const off of offs) off();
  const ratio = median(ratios);
  return {
    kind,
    handlers: count,
    emitsPerRound: emits,
    kernelNsPerEmit: stats(kernelNs),
    bareNsPerEmit: stats(bareNs),
    ratio: { median: round(ratio, 3), p90: round(p90(ratios), 3), min: round(Math.min(...ratios), 3), max: round(Math.max(...ratios), 3) },
    target: `≤ ${TARGETS.emitRatio}`,
    pass: ratio <= TARGETS.emitRatio,
  };
}

async function benchEmit() {
  progress(`4/5 emit: 1, 10, 100 handlers, sync and async, ${N.emitRounds} interleaved rounds each…`);
  const { createKernel } = await import(pathToFileURL(path.join(DIST, 'kernel', 'index.js')).href);
  // node_modules' tapable: the same version the build bundles into the kernel, so the same code on both sides.
  const { AsyncSeriesWaterfallHook } = await import('tapable');
  const home = tempDir('emit-home');
  // The kernel alone (no builtin plugins): the builtins handle events of their own, which a bare hook would not run.
  const kernel = createKernel({ builtin: false, home, workspace: home, env: cleanEnv, logSink: () => {} });
  await kernel.boot();
  const points = [];
  // An event per point, so that each point's handlers are alone on their hook.
  const events = ['before_tool', 'after_tool', 'before_model', 'after_model', 'before_agent', 'after_agent'];
  for (const kind of ['sync', 'async']) {
    for (const count of [1, 10, 100]) points.push(await emitPoint(kernel, AsyncSeriesWaterfallHook, kind, count, events[points.length]));
  }
  await kernel.shutdown();
  return { rounds: N.emitRounds, points, pass: points.every((p) => p.pass) };
}

// ── 5. boot per plugin against jiti alone ──────────────────────────────────

/** Runs one boot-child.mjs job; its JSON line. */
function child(job, env = cleanEnv) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'test', 'bench', 'boot-child.mjs'), JSON.stringify({ dist: DIST, ...job })], { encoding: 'utf8', env, cwd: os.tmpdir(), maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`boot-child ${job.mode} exited with ${r.status}:\n${r.stderr}${r.stdout}`);
  const doc = JSON.parse(r.stdout.trim().split('\n').at(-1));
  if (doc.failed?.length) throw new Error(`boot-child: ${doc.failed.length} plugin(s) did not load, e.g. ${doc.failed[0]}`);
  return doc;
}

async function benchBootPerPlugin() {
  const { writeBootPlugins } = await import('./synthetic-plugins.mjs');
  const sizes = N.bootSizes;
  progress(`5/5 boot per plugin: ${sizes.join(', ')} plugins, warm${N.bootCold ? ' and cold' : ''} jiti cache, ${N.pluginBootRuns} run(s) per side, interleaved…`);
  // jiti keeps its cache in <tmpdir>/jiti here (JITI_FS_CACHE takes only true or false): a
  // TMPDIR of its own per side is a cache of its own, a fresh one a cold cache.
  const kernelEnv = (cache) => {
    mkdirSync(cache, { recursive: true });
    return { ...cleanEnv, TMPDIR: cache, JITI_FS_CACHE: 'true' };
  };
  const results = [];
  for (const size of sizes) {
    const base = tempDir(`boot-${size}`);
    const home = path.join(base, 'home');
    const workspace = path.join(base, 'ws');
    mkdirSync(workspace, { recursive: true });
    const set = writeBootPlugins(path.join(home, 'plugins'), { total: size });
    const kernelJob = { mode: 'kernel', home, workspace, env: cleanEnv, builtin: false };
    const jitiJob = { mode: 'jiti', files: set.eagerFiles };
    // Each side its own jiti cache folder, warmed by one untimed run of that side.
    const warm = { kernel: path.join(base, 'cache-kernel'), jiti: path.join(base, 'cache-jiti') };
    child(kernelJob, kernelEnv(warm.kernel));
    child(jitiJob, kernelEnv(warm.jiti));
    const point = { plugins: size, eager: set.eagerFiles.length };
    for (const cache of N.bootCold ? ['warm', 'cold'] : ['warm']) {
      const kernelMs = [];
      const jitiMs = [];
      const kernelCpu = [];
      const jitiCpu = [];
      const ratios = [];
      for (let r = 0; r < N.pluginBootRuns; r++) {
        const dir = (side) => (cache === 'warm' ? warm[side] : tempDir(`jiti-cold-${side}`));
        const order = r % 2 === 0 ? ['kernel', 'jiti'] : ['jiti', 'kernel'];
        const res = {};
        for (const side of order) res[side] = child(side === 'kernel' ? kernelJob : jitiJob, kernelEnv(dir(side)));
        kernelMs.push(res.kernel.ms);
        jitiMs.push(res.jiti.ms);
        kernelCpu.push(res.kernel.cpuMs);
        jitiCpu.push(res.jiti.cpuMs);
        ratios.push(res.kernel.ms / res.jiti.ms);
      }
      const perPlugin = median(kernelMs) / size;
      point[cache] = {
        kernelMs: stats(kernelMs),
        jitiMs: stats(jitiMs),
        kernelCpuMs: round(median(kernelCpu)),
        jitiCpuMs: round(median(jitiCpu)),
        msPerPlugin: round(perPlugin, 3),
        jitiMsPerPlugin: round(median(jitiMs) / size, 3),
        ratio: round(median(ratios), 3),
        ...(cache === 'warm' && { target: `≤ ${TARGETS.bootMsPerPlugin} ms per plugin`, pass: perPlugin <= TARGETS.bootMsPerPlugin }),
      };
    }
    results.push(point);
  }

  // The builtin plugins, with the trust plugin (approving each user plugin at load) and without it:
  // per plugin added, (boot with N user plugins − boot with none) / N, warm.
  const size = sizes.at(-1);
  const base = tempDir('boot-builtin');
  const withPlugins = path.join(base, 'home');
  const empty = path.join(base, 'empty');
  const workspace = path.join(base, 'ws');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(empty, { recursive: true });
  writeBootPlugins(path.join(withPlugins, 'plugins'), { total: size });
  const cache = path.join(base, 'cache');
  const builtins = {};
  for (const trust of [true, false]) {
    const settings = JSON.stringify(trust ? {} : { plugins: { trust: { enabled: false } } });
    writeFileSync(path.join(withPlugins, 'settings.json'), settings);
    writeFileSync(path.join(empty, 'settings.json'), settings);
    const job = (home) => ({ mode: 'kernel', home, workspace, env: cleanEnv, builtin: true });
    // Untimed: the first boot records the trust plugin's approvals (its own item) and warms the cache.
    child(job(withPlugins), kernelEnv(cache));
    child(job(empty), kernelEnv(cache));
    const perPlugin = [];
    for (let r = 0; r < N.pluginBootRuns; r++) {
      const full = child(job(withPlugins), kernelEnv(cache)).ms;
      const none = child(job(empty), kernelEnv(cache)).ms;
      perPlugin.push((full - none) / size);
    }
    builtins[trust ? 'withTrust' : 'withoutTrust'] = { plugins: size, msPerPlugin: round(median(perPlugin), 3) };
  }
  return { sizes: results, builtins, pass: results.every((p) => p.warm.pass) };
}

// ── report ─────────────────────────────────────────────────────────────────

const ms = (x) => `${x.toFixed(1)} ms`;
const ns = (x) => `${Math.round(x).toLocaleString('en-US')} ns`;
const verdict = (pass) => (pass === undefined ? '—' : pass ? 'PASS' : 'MISS');

function printTable(results) {
  const { version, boot, resolve, emit, bootPerPlugin } = results;
  const rows = [
    ['1. plinth --version (wall)', `median ${ms(version.median)}, p90 ${ms(version.p90)}`, version.target, verdict(version.pass)],
    ['   node -e 0 (start-up baseline)', `median ${ms(version.nodeBaselineMs.median)}, p90 ${ms(version.nodeBaselineMs.p90)}; ratio ${(version.median / version.nodeBaselineMs.median).toFixed(2)}`, '', ''],
    ['2. boot-to-ready, in-process', `median ${ms(boot.inProcess.wallMs.median)}, p90 ${ms(boot.inProcess.wallMs.p90)}`, 'none', '—'],
    ['   first boot in the process', `${ms(boot.inProcess.firstBootMs)} (+ ${ms(boot.inProcess.importMs)} to import the kernel)`, '', ''],
    ['   plinth up --once --json (wall)', `median ${ms(boot.cli.wallMs.median)}, p90 ${ms(boot.cli.wallMs.p90)}`, 'none', '—'],
    ['   its reported durationMs', `median ${ms(boot.cli.reportedDurationMs.median)}, p90 ${ms(boot.cli.reportedDurationMs.p90)}`, '', ''],
    ['3. resolve 1,000 manifests (b) alone', `median ${ms(resolve.resolveOnlyMs.median)}, p90 ${ms(resolve.resolveOnlyMs.p90)}`, `< ${TARGETS.resolveMs} ms`, verdict(resolve.pass)],
    ['   (a) discover + resolve from disk', `median ${ms(resolve.discoverAndResolveMs.median)}, p90 ${ms(resolve.discoverAndResolveMs.p90)}`, '(info)', ''],
    ['       of which discover', `median ${ms(resolve.discoverOnlyMs.median)}; first run ${ms(resolve.discoverAndResolveMs.first)} (a)`, '', ''],
    ...emit.points.flatMap((p, i) => [
      [`${i === 0 ? '4.' : '  '} kernel.emit, ${p.handlers} ${p.kind} handler${p.handlers > 1 ? 's' : ''}`, `ratio ${p.ratio.median.toFixed(2)} (rounds ${p.ratio.min.toFixed(2)}–${p.ratio.max.toFixed(2)}): ${ns(p.kernelNsPerEmit.median)} against ${ns(p.bareNsPerEmit.median)} / emit`, p.target, verdict(p.pass)],
    ]),
    ...bootPerPlugin.sizes.flatMap((p, i) => [
      [`${i === 0 ? '5.' : '  '} boot, ${p.plugins} plugins, warm jiti cache`, `${p.warm.msPerPlugin.toFixed(2)} ms / plugin (${ms(p.warm.kernelMs.median)}); jiti alone ${p.warm.jitiMsPerPlugin.toFixed(2)} ms; ratio ${p.warm.ratio.toFixed(2)}`, p.warm.target, verdict(p.warm.pass)],
      ...(p.cold ? [[`   boot, ${p.plugins} plugins, cold jiti cache`, `${p.cold.msPerPlugin.toFixed(2)} ms / plugin (${ms(p.cold.kernelMs.median)}); jiti alone ${p.cold.jitiMsPerPlugin.toFixed(2)} ms; ratio ${p.cold.ratio.toFixed(2)}`, '(info)', '']] : []),
    ]),
    [`   builtins + trust, per plugin added (${bootPerPlugin.builtins.withTrust.plugins})`, `${bootPerPlugin.builtins.withTrust.msPerPlugin.toFixed(2)} ms; without the trust plugin ${bootPerPlugin.builtins.withoutTrust.msPerPlugin.toFixed(2)} ms`, '(info)', ''],
  ];
  const header = ['FIGURE', 'RESULT', 'TARGET', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const out = [
    `plinth benchmarks — node ${process.version}, ${process.platform} ${process.arch}, ${os.cpus().length} CPU(s) ${os.cpus()[0]?.model ?? ''}, load ${os.loadavg()[0].toFixed(2)}${QUICK ? ', --quick (smoke test, do not quote)' : ''}`,
    '',
    line(header),
    ...rows.map(line),
    '',
    `Resolve set: ${resolve.set.manifests} manifests, ${resolve.set.names} names (${resolve.set.multiVersionNames} with several versions), ${resolve.set.dependencyEdges} dependency ranges, ${resolve.set.withProvides} with provides; ` +
      `resolved ${resolve.set.resolved}, excluded ${resolve.set.excluded}, ${resolve.set.rejectedCandidates} old candidates rejected (kernel), ${resolve.set.chosenBelowNewest} names resolved below their newest version.`,
    `Builtin plugins at boot: ${boot.plugins.join(', ')}.`,
    `Emit: the kernel alone (no builtin plugins), ${emit.rounds} rounds of sequential awaited emits per side and point, interleaved (A,B then B,A), same handler functions on both sides.`,
    'Boot: user plugins in TypeScript through jiti (a tenth with settings, a tenth with a dependency, a tenth lazy), each boot a fresh process, timed inside it from createKernel to the end of boot (kernel alone) against jiti importing the same eager entry files; each side its own jiti cache folder (warm: filled by an untimed run; cold: empty).',
    'PASS/MISS compares the median with the target; targets are reported, not asserted.',
    ...results.notes.map((note) => `Note: ${note}`),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

async function main() {
  if (!existsSync(BIN) || !existsSync(path.join(DIST, 'kernel', 'index.js'))) {
    throw new Error(`no build in ${DIST}: run \`npm run build\` (or \`npm run bench\`, which builds first)`);
  }
  const startedAt = new Date().toISOString();
  const version = benchVersion();
  const boot = await benchBoot();
  const resolve = await benchResolve();
  const emit = await benchEmit();
  const bootPerPlugin = await benchBootPerPlugin();
  const results = {
    startedAt,
    environment: { node: process.version, platform: process.platform, arch: process.arch, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? null, loadavg: os.loadavg().map((x) => round(x)), quick: QUICK },
    version,
    boot,
    resolve,
    emit,
    bootPerPlugin,
    summary: {
      versionMs: { value: version.median, target: TARGETS.versionMs, pass: version.pass },
      resolveMs: { value: resolve.resolveOnlyMs.median, target: TARGETS.resolveMs, pass: resolve.pass, measures: 'resolve alone (b)' },
      emitRatio: { value: Math.max(...emit.points.map((p) => p.ratio.median)), target: TARGETS.emitRatio, pass: emit.pass, measures: 'the worst of 1, 10, 100 handlers, sync and async' },
      bootMsPerPluginWarm: { value: Math.max(...bootPerPlugin.sizes.map((p) => p.warm.msPerPlugin)), target: TARGETS.bootMsPerPlugin, pass: bootPerPlugin.pass, measures: 'the worst size, kernel alone, warm jiti cache' },
    },
    notes: [...notes],
  };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else printTable(results);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`kernel.bench: the benchmark broke: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  cleanup();
}
