#!/usr/bin/env node
/**
 * Installing from a git marketplace: `node test/bench/marketplace-git.bench.mjs [--json] [--quick]`
 * (after `npm run build`).
 *
 * A 5 MB plugin of many files (320 incompressible files of 16 KB, a manifest and its code) in the
 * folder `plugins/big` of a Claude Code marketplace repository on disk, whose entry is a `git-subdir`
 * source pointing at that same repository (`file://`): so the install clones it, as it would a
 * remote one. Timed in interleaved rounds (the order swapped each round), each a whole process tree
 * spawned to exit, in a fresh plinth home whose marketplace was added beforehand (not timed):
 *   - plinth: `plinth ext install big@bench-market --yes` (resolve the entry, `git clone --depth 1`
 *     through the launcher, pack and safely extract the subfolder with every file hashed, the
 *     approval, move, the lock entry, the switch, the trust record);
 *   - baseline: `git clone --quiet --depth 1 --no-tags file://<repo> <dir>` then `cp -r <dir>/plugins/big <dest>`.
 * Reported: the medians, their ratio plinth / baseline and the median of the per-round ratios.
 * No target is set: the ratio is reported. Nothing is asserted; the exit code is 0 unless the
 * benchmark itself breaks.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchOptions, median, timeProcess } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');
const { json: JSON_OUT, quick: QUICK } = benchOptions('marketplace-git.bench');
const ROUNDS = QUICK ? 1 : 7;
const FILES = 320;
const BYTES = 16 * 1024;
const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-market-git-'));
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const round1 = (x) => Math.round(x * 10) / 10;
const round2 = (x) => Math.round(x * 100) / 100;

const run = timeProcess;

/** The marketplace repository: the plugin under plugins/big, the catalogue naming it as a git-subdir of this repository. */
function makeMarketplace() {
  const repo = path.join(base, 'market');
  const plugin = path.join(repo, 'plugins', 'big');
  mkdirSync(path.join(plugin, 'assets'), { recursive: true });
  writeFileSync(path.join(plugin, 'manifest.json'), JSON.stringify({ name: 'big', version: '1.0.0', kernel: '^1.0.0', main: './index.js' }));
  writeFileSync(path.join(plugin, 'index.js'), 'export default { setup() {} };\n');
  for (let i = 0; i < FILES; i++) writeFileSync(path.join(plugin, 'assets', `part-${i}.bin`), randomBytes(BYTES));
  mkdirSync(path.join(repo, '.claude-plugin'));
  const url = `file://${repo}`;
  writeFileSync(path.join(repo, '.claude-plugin', 'marketplace.json'), JSON.stringify({ name: 'bench-market', owner: { name: 'Bench' }, plugins: [{ name: 'big', description: 'a 5 MB plugin', source: { source: 'git-subdir', url, path: 'plugins/big' } }] }));
  const git = (...args) => execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.test', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, env: GIT_ENV, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'bench');
  return url;
}

/** A fresh plinth home with the marketplace added (not timed). */
async function freshHome(url) {
  const home = mkdtempSync(path.join(base, 'home-'));
  mkdirSync(path.join(home, 'workspace'));
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } }));
  await run(process.execPath, [BIN, '--home', home, '--workspace', path.join(home, 'workspace'), 'ext', 'marketplace', 'add', url], { env: { ...process.env, CI: '1' } });
  return home;
}

const url = makeMarketplace();
const times = { plinth: [], baseline: [] };
try {
  for (let r = 0; r < ROUNDS; r++) {
    const home = await freshHome(url);
    const plinth = () => run(process.execPath, [BIN, '--home', home, '--workspace', path.join(home, 'workspace'), 'ext', 'install', 'big@bench-market', '--yes'], { cwd: home, env: { ...process.env, CI: '1' } });
    const baseline = async () => {
      const dir = mkdtempSync(path.join(base, 'clone-'));
      const clone = await run('git', ['clone', '--quiet', '--depth', '1', '--no-tags', '--', url, path.join(dir, 'repo')], { env: GIT_ENV });
      const copy = await run('cp', ['-r', path.join(dir, 'repo', 'plugins', 'big'), path.join(dir, 'big')]);
      return clone + copy;
    };
    // Interleaved, the order swapped each round: neither side always runs on a warmer cache.
    if (r % 2 === 0) {
      times.plinth.push(await plinth());
      times.baseline.push(await baseline());
    } else {
      times.baseline.push(await baseline());
      times.plinth.push(await plinth());
    }
  }
  const m = { plinth: median(times.plinth), baseline: median(times.baseline) };
  const result = {
    plugin: { files: FILES + 2, bytes: FILES * BYTES },
    rounds: ROUNDS,
    plinthInstallMs: round1(m.plinth),
    gitCloneAndCopyMs: round1(m.baseline),
    ratioPlinthOverBaseline: round2(m.plinth / m.baseline),
    medianOfRoundRatios: round2(median(times.plinth.map((t, i) => t / times.baseline[i]))),
  };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify({ bench: 'marketplace-git', quick: QUICK, ...result })}\n`);
  else {
    process.stdout.write(
      [
        `marketplace-git: install a ${(FILES * BYTES / 1024 / 1024).toFixed(0)} MB plugin (${FILES + 2} files) from a git marketplace (file://), ${ROUNDS} interleaved rounds${QUICK ? ' (--quick: figures mean nothing)' : ''}`,
        `  plinth ext install big@bench-market --yes: ${result.plinthInstallMs} ms (median)`,
        `  git clone --depth 1 + cp -r of the plugin folder: ${result.gitCloneAndCopyMs} ms (median)`,
        `  plinth / baseline: ${result.ratioPlinthOverBaseline}x (median of per-round ratios: ${result.medianOfRoundRatios}x); no target, reported`,
        '',
      ].join('\n'),
    );
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
