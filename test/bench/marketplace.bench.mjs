#!/usr/bin/env node
/**
 * The marketplace: `node test/bench/marketplace.bench.mjs [--json] [--quick]` (after `npm run build`).
 *
 *   install  a 5 MB plugin (320 incompressible files, then 5 of 1 MB) from the local registry
 *            server (registry/server.ts on 127.0.0.1), three ways, in turn:
 *            - plinth, in process: `marketplace.install(name, { yes })` in a
 *              booted kernel (resolve, download, verify, extract, move,
 *              record, trust, load live), into a fresh home each round;
 *            - plinth, whole command: `plinth ext install <name> --yes`, spawn
 *              to exit (a boot of the marketplace, its dependencies and the
 *              guards; a first install is not loaded by the one-shot command);
 *            - npm: `npm install <the same tarball> --offline` into an empty
 *              folder, spawn to exit (its cache is new for each run of the bench);
 *            - for scale, spawn to exit: `node -e 0`, and a bare script that
 *              does only download (node:http), verify (ssri) and extract
 *              (tar.x) of the same tarball, with no kernel and no safety steps.
 *            Reported: medians and the ratios npm / plinth (and npm / each yardstick).
 *   extract  the same tarball, in this process, in turn: `extractSafely` (plinth's
 *            checked one-pass extraction, which also records every file's hash)
 *            and tar's own `x` into a fresh folder; medians and the ratio tar / plinth.
 *   search   a registry of 10,000 generated plugins (its search index written
 *            as a static registry folder holds it, served by the same server):
 *            `marketplace.search(text)` in process, p50 and p95 of
 *            - cold: a query never asked before (the client's cache misses:
 *              one HTTP round trip, the server scores 10,000 documents),
 *            - warm: the same queries again (answered from the client's cache).
 *
 * Nothing is asserted; the exit code is 0 unless the benchmark itself breaks.
 */
import { x as tarExtract } from 'tar';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kernel } from '../../dist/kernel/index.js';
import { extractSafely } from '../../dist/plugins/marketplace/extract.js';
import { publishPlugin } from '../../dist/registry/publish.js';
import { serveRegistry } from '../../dist/registry/server.js';
import { benchOptions, median, quantile, timeProcess } from './support.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');
const { json: JSON_OUT, quick: QUICK } = benchOptions('marketplace.bench');
const ROUNDS = QUICK ? 1 : 5;
const QUERIES = QUICK ? 20 : 200;
const PLUGINS = 10_000;
const base = mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-market-'));
const round1 = (x) => Math.round(x * 10) / 10;
const round2 = (x) => Math.round(x * 100) / 100;
const quiet = { health: { enabled: false }, 'mcp-demo': { enabled: false } };
const moduleUrl = (name) => import.meta.resolve(name);
/** The yardstick: download, verify and extract, nothing else (argv: url, integrity, folder). */
const BARE = [
  "import http from 'node:http';",
  "import { createReadStream, createWriteStream } from 'node:fs';",
  "import { pipeline } from 'node:stream/promises';",
  `const [{ default: ssri }, tar] = await Promise.all([import('${moduleUrl('ssri')}'), import('${moduleUrl('tar')}')]);`,
  'const [url, integrity, dir] = process.argv.slice(1);',
  "const file = dir + '/t.tgz';",
  'await new Promise((resolve, reject) => http.get(url, (res) => pipeline(res, createWriteStream(file)).then(resolve, reject)).on("error", reject));',
  'await ssri.checkStream(createReadStream(file), ssri.parse(integrity));',
  'await tar.x({ file, cwd: dir, strip: 1 });',
].join('\n');

const run = timeProcess;

function freshHome(registryUrl) {
  const home = mkdtempSync(path.join(base, 'home-'));
  mkdirSync(path.join(home, 'workspace'));
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ registries: [{ name: 'local', url: registryUrl }], plugins: quiet }));
  return home;
}

async function bootIn(home) {
  const kernel = new Kernel({ home, workspace: path.join(home, 'workspace'), builtin: true, env: {} });
  await kernel.boot();
  return kernel;
}

/** One plugin shape: `files` incompressible files of `bytes` each (5 MB either way). */
async function installBench(label, files, bytes) {
  const source = path.join(base, `big-${files}`);
  mkdirSync(path.join(source, 'assets'), { recursive: true });
  writeFileSync(path.join(source, 'manifest.json'), JSON.stringify({ name: 'big', version: '1.0.0', kernel: '^1.0.0', main: './index.js' }));
  writeFileSync(path.join(source, 'package.json'), JSON.stringify({ name: 'big', version: '1.0.0' }));
  writeFileSync(path.join(source, 'index.js'), "export default { setup() {} };\n");
  for (let i = 0; i < files; i++) writeFileSync(path.join(source, 'assets', `part-${i}.bin`), randomBytes(bytes));
  const folder = path.join(base, `registry-big-${files}`);
  const published = await publishPlugin(folder, source);
  const tarball = path.join(folder, published.tarball);
  const server = await serveRegistry(folder);
  const times = { service: [], command: [], npm: [], bare: [], node: [], extract: [], tarX: [] };
  const packument = JSON.parse(readFileSync(path.join(folder, 'big'), 'utf8'));
  const { integrity } = packument.versions['1.0.0'].dist;
  const tarballUrl = new URL(packument.versions['1.0.0'].dist.tarball, server.url).href;
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const home = freshHome(server.url);
      const kernel = await bootIn(home);
      try {
        const market = await kernel.get('marketplace');
        const start = performance.now();
        await market.install('big', { yes: true });
        times.service.push(performance.now() - start);
      } finally {
        await kernel.shutdown();
      }
      const other = freshHome(server.url);
      times.command.push(await run(process.execPath, [BIN, '--home', other, '--workspace', path.join(other, 'workspace'), 'ext', 'install', 'big', '--yes'], { cwd: other, env: { ...process.env, CI: '1' } }));
      const empty = mkdtempSync(path.join(base, 'npm-'));
      writeFileSync(path.join(empty, 'package.json'), '{}');
      times.npm.push(await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: empty, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_cache: path.join(base, 'npm-cache') } }));
      times.bare.push(await run(process.execPath, ['--input-type=module', '-e', BARE, tarballUrl, integrity, mkdtempSync(path.join(base, 'bare-'))], {}));
      times.node.push(await run(process.execPath, ['-e', '0'], {}));
    }
    for (let r = 0; r < ROUNDS * 2; r++) {
      const staging = mkdtempSync(path.join(base, 'extract-'));
      let start = performance.now();
      await extractSafely(tarball, staging);
      times.extract.push(performance.now() - start);
      const plain = mkdtempSync(path.join(base, 'tar-x-'));
      start = performance.now();
      await tarExtract({ file: tarball, cwd: plain });
      times.tarX.push(performance.now() - start);
      rmSync(staging, { recursive: true, force: true });
      rmSync(plain, { recursive: true, force: true });
    }
  } finally {
    await server.close();
  }
  const m = { service: median(times.service), command: median(times.command), npm: median(times.npm), bare: median(times.bare), node: median(times.node), extract: median(times.extract), tarX: median(times.tarX) };
  return {
    label,
    rounds: ROUNDS,
    plinthServiceMs: round1(m.service),
    plinthCommandMs: round1(m.command),
    npmInstallMs: round1(m.npm),
    ratioNpmOverService: round1(m.npm / m.service),
    ratioNpmOverCommand: round1(m.npm / m.command),
    bareScriptMs: round1(m.bare),
    nodeStartMs: round1(m.node),
    ratioNpmOverBareScript: round1(m.npm / m.bare),
    ratioNpmOverNodeStart: round1(m.npm / m.node),
    // Command against command: plinth ext install / the bare script, both whole processes (target <= 1.15).
    ratioCommandOverBareScript: round2(median(times.command.map((c, i) => c / times.bare[i]))),
    extractSafelyMs: round1(m.extract),
    tarXMs: round1(m.tarX),
    ratioTarXOverExtract: round1(m.tarX / m.extract),
  };
}

async function searchBench() {
  const folder = path.join(base, 'registry-10k');
  mkdirSync(path.join(folder, '-', 'v1'), { recursive: true });
  const words = ['lint', 'format', 'git', 'docker', 'test', 'cloud', 'shell', 'notes', 'search', 'sql', 'http', 'auth', 'image', 'audio', 'mail', 'chat'];
  const objects = Array.from({ length: PLUGINS }, (_, i) => {
    const a = words[i % words.length];
    const b = words[(i * 7) % words.length];
    return { package: { name: `${a}-${b}-${i}`, version: '1.0.0', description: `a ${a} plugin that talks to ${b} (number ${i})`, keywords: [a, b] } };
  });
  writeFileSync(path.join(folder, '-', 'v1', 'search'), JSON.stringify({ objects, total: objects.length }));
  const server = await serveRegistry(folder);
  const home = freshHome(server.url);
  const kernel = await bootIn(home);
  try {
    const market = await kernel.get('marketplace');
    const queries = Array.from({ length: QUERIES }, (_, i) => `${words[i % words.length]} ${i}`);
    const first = performance.now();
    await market.search('warmup query');
    const firstMs = performance.now() - first;
    const cold = [];
    for (const q of queries) {
      const start = performance.now();
      await market.search(q);
      cold.push(performance.now() - start);
    }
    const warm = [];
    for (const q of queries) {
      const start = performance.now();
      await market.search(q);
      warm.push(performance.now() - start);
    }
    return { plugins: PLUGINS, queries: QUERIES, firstQueryMs: round1(firstMs), coldP50Ms: round1(median(cold)), coldP95Ms: round1(quantile(cold, 0.95)), warmP50Ms: round1(median(warm)), warmP95Ms: round1(quantile(warm, 0.95)) };
  } finally {
    await kernel.shutdown();
    await server.close();
  }
}

try {
  // Two shapes of the same 5 MB: many small files (extraction dominates) and a few large ones (a bundled plugin).
  const installs = [await installBench('320 files of 16 kB', 320, 16 * 1024), await installBench('5 files of 1 MB', 5, 1024 * 1024)];
  const search = await searchBench();
  if (JSON_OUT) process.stdout.write(`${JSON.stringify({ installs, search }, null, 2)}\n`);
  else {
    process.stdout.write(
      [
        ...installs.flatMap((install) => [
          `marketplace install of a 5 MB plugin, ${install.label} (${install.rounds} rounds, medians):`,
          `  plinth (service, in process)   ${install.plinthServiceMs} ms`,
          `  plinth ext install (command)   ${install.plinthCommandMs} ms`,
          `  npm install <tarball>          ${install.npmInstallMs} ms`,
          `  npm / plinth: ${install.ratioNpmOverService}x (service), ${install.ratioNpmOverCommand}x (command); target >= 5x`,
          `  plinth ext install / a bare download+verify+extract script (both commands): ${install.ratioCommandOverBareScript}x (median of per-round ratios); target <= 1.15x`,
          `  for scale: a bare download+verify+extract script ${install.bareScriptMs} ms (npm / it: ${install.ratioNpmOverBareScript}x), node -e 0 ${install.nodeStartMs} ms (npm / it: ${install.ratioNpmOverNodeStart}x)`,
          `  extraction alone, in process: extractSafely ${install.extractSafelyMs} ms, tar.x ${install.tarXMs} ms (tar.x / extractSafely: ${install.ratioTarXOverExtract}x)`,
        ]),
        `marketplace search over ${search.plugins} plugins (${search.queries} queries):`,
        `  first query (server builds its index)  ${search.firstQueryMs} ms`,
        `  cold p50 ${search.coldP50Ms} ms, p95 ${search.coldP95Ms} ms`,
        `  warm p50 ${search.warmP50Ms} ms, p95 ${search.warmP95Ms} ms; target p50 < 5 ms`,
        '',
      ].join('\n'),
    );
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
