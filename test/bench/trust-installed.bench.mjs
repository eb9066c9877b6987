#!/usr/bin/env node
/**
 * Trust and an installed plugin: `node test/bench/trust-installed.bench.mjs [--json] [--quick]` (after `npm run build`).
 *
 * A plugin of 500 files / 5 MB is installed through the marketplace from a registry on 127.0.0.1. Then:
 *   fingerprint  trust's snapshot of its plugin subject (what the approval gate and `trust.approve` take),
 *                with the recorded hashes of plugins.lock.json (one lstat per unchanged file) against a full
 *                read of every file, alternating in this process: medians and the ratio.
 *   approve      `trust.approve(await trust.pluginSubject(…))` as an install does it, in the booted kernel.
 *   boot         a kernel booting with that plugin installed (the installed gate and the approval gate both
 *                run before its code loads), median of fresh kernels.
 *
 * `PLINTH_DIST=<a dist folder>` runs it against another build (main's, for a before figure); parts that
 * build lacks are left out. Nothing is asserted; the exit code is 0 unless the benchmark itself breaks.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchOptions, median, timed } from './support.mjs';

const { json: JSON_OUT, quick: QUICK } = benchOptions('trust-installed.bench');
const DIST = path.resolve(process.env.PLINTH_DIST ?? fileURLToPath(new URL('../../dist/', import.meta.url)));
const load = (rel) => import(pathToFileURL(path.join(DIST, rel)).href);
const ROUNDS = QUICK ? 2 : 15;
const BOOTS = QUICK ? 2 : 11;
const FILES = 500;
const round2 = (x) => Math.round(x * 100) / 100;
const quiet = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

const { Kernel } = await load('kernel/index.js');
const { publishPlugin } = await load('registry/publish.js');
const { serveRegistry } = await load('registry/server.js');
const { snapshot } = await load('plugins/trust/snapshot.js');
const { pluginSubject } = await load('plugins/trust/plugin-files.js');
const { manifestSchema } = await load('sdk/index.js');
const recordedModule = existsSync(path.join(DIST, 'plugins/trust/recorded-hashes.js')) ? await load('plugins/trust/recorded-hashes.js') : undefined;

const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-trust-installed-'));

function writeBigPlugin(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ name: 'big', version: '1.0.0', kernel: '^1.0.0', main: './index.js', provides: ['big'] }));
  writeFileSync(path.join(dir, 'index.js'), "export default { setup(kernel) { kernel.provide('big', {}); } };\n");
  for (let f = 0; f < FILES - 2; f++) {
    const sub = path.join(dir, `part-${f % 20}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `file-${f}.bin`), randomBytes(10_000));
  }
  return dir;
}

function kernelIn(home) {
  return new Kernel({ home, workspace: path.join(home, 'workspace'), builtin: true, env: {} });
}

try {
  const folder = path.join(base, 'registry');
  await publishPlugin(folder, writeBigPlugin(path.join(base, 'source')));
  const server = await serveRegistry(folder);
  const home = path.join(base, 'home');
  mkdirSync(path.join(home, 'workspace'), { recursive: true });
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ registries: [{ name: 'local', url: server.url }], plugins: quiet }));
  const result = { files: FILES, megabytes: 5 };
  try {
    const kernel = kernelIn(home);
    await kernel.boot();
    try {
      const installStart = performance.now();
      await (await kernel.get('marketplace')).install('big', { yes: true });
      result.installMs = round2(performance.now() - installStart);
      const info = kernel.status().find((p) => p.name === 'big');
      if (info?.state !== 'active') process.stderr.write(`note: big is ${info?.state} after install\n`);
      const manifest = manifestSchema.parse(JSON.parse(readFileSync(path.join(home, 'plugins', 'big', 'manifest.json'), 'utf8')));
      const plugin = { name: 'big', version: '1.0.0', dir: path.join(home, 'plugins', 'big'), manifest };
      const subject = await pluginSubject(plugin, 'user');
      const trust = await kernel.get('trust');
      result.approveMs = round2(await timed(async () => trust.approve(await trust.pluginSubject(plugin, 'user')), ROUNDS));
      const full = [];
      const fast = [];
      const warm = [];
      const shared = recordedModule?.installedLock(home);
      for (let r = 0; r < ROUNDS + 1; r++) {
        let start = performance.now();
        const a = await snapshot(subject, false);
        if (r > 0) full.push(performance.now() - start);
        if (recordedModule) {
          start = performance.now();
          const b = await snapshot(subject, false, undefined, recordedModule.recordedHashes(recordedModule.installedLock(home)));
          if (r > 0) fast.push(performance.now() - start);
          if (a.fingerprint !== b.fingerprint) throw new Error('the fast path gave another fingerprint');
          start = performance.now();
          const c = await snapshot(subject, false, undefined, recordedModule.recordedHashes(shared));
          if (r > 0) warm.push(performance.now() - start);
          if (a.fingerprint !== c.fingerprint) throw new Error('the fast path gave another fingerprint');
        }
      }
      result.fingerprintFullReadMs = round2(median(full));
      if (recordedModule) {
        result.fingerprintRecordedMs = round2(median(fast));
        result.fingerprintRecordedWarmMs = round2(median(warm));
        result.ratioFullOverRecorded = round2(median(full) / median(fast));
        result.ratioFullOverRecordedWarm = round2(median(full) / median(warm));
      }
    } finally {
      await kernel.shutdown();
    }
    const boots = [];
    for (let b = 0; b < BOOTS + 1; b++) {
      const start = performance.now();
      const again = kernelIn(home);
      await again.boot();
      const took = performance.now() - start;
      const state = again.status().find((p) => p.name === 'big')?.state;
      await again.shutdown();
      if (state !== 'active') throw new Error(`big did not load at boot (${state})`);
      if (b > 0) boots.push(took);
    }
    result.bootMs = round2(median(boots));
    result.boots = BOOTS;
  } finally {
    await server.close();
  }
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    const r = result;
    console.log(`trust-installed.bench (${DIST})`);
    console.log(`  plugin ${r.files} files / ${r.megabytes} MB, installed through the marketplace in ${r.installMs} ms`);
    console.log(`  fingerprint  full read ${r.fingerprintFullReadMs} ms${r.fingerprintRecordedMs !== undefined ? `, recorded hashes ${r.fingerprintRecordedMs} ms with the lock read and parsed, ${r.fingerprintRecordedWarmMs} ms with it cached (full/recorded ×${r.ratioFullOverRecorded}, ×${r.ratioFullOverRecordedWarm} cached)` : ''}, median of ${ROUNDS}`);
    console.log(`  approve      trust.approve(pluginSubject) ${r.approveMs} ms, median of ${ROUNDS}`);
    console.log(`  boot         kernel with it installed ${r.bootMs} ms, median of ${r.boots}`);
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
