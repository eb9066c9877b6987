#!/usr/bin/env node
/**
 * `npm run build`: dist/ from an empty folder.
 *
 * Node's ESM loader is most of a command's start (resolving, reading and
 * compiling some 275 modules), so the JavaScript is bundled: one rolldown call
 * over every entry point, code-split, so that a command loads a handful of
 * chunks and every module shared between entries (the sdk above all: one
 * instance for the kernel, the builtin plugins and, through jiti, third-party
 * plugins) exists in exactly one chunk. Each entry keeps its path in dist/;
 * a chunk that stands for one dynamically imported module is named after it,
 * the rest are dist/chunks/<name>-<hash>.js. tsc writes only the .d.ts files
 * the package exports (type checking is `tsc -p tsconfig.json`).
 *
 * `node build.mjs --if-stale` (npm's `prepare`) builds only when dist/ is
 * missing or was built from other sources: npm runs `prepare` again whenever a
 * dependent installs or links this folder (a scaffolded plugin's `npm
 * install`, `npm link plinth`), and a rebuild under a running host broke every
 * `plinth` started meanwhile. A build happens in a folder of its own and
 * replaces dist/ by two renames, never by emptying it in place.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { build } from 'rolldown';

const ROOT = fileURLToPath(new URL('.', import.meta.url));
const DIST = join(ROOT, 'dist');
const require = createRequire(import.meta.url);

// Small, and loaded by the kernel at every start: bundled, and tree-shaken (zod's
// classic entry alone is 95 modules, every locale; kept external, `plinth ext
// list` took 1.25x as long). The sdk's zod schemas still compose with a
// third-party plugin's own node_modules zod (test/bundle-zod.test.ts).
const BUNDLED = new Set(['zod', 'semver', 'tapable']);

/** The modules that keep their path in dist/: what is run, imported or spawned by path. */
function entries() {
  const plugins = readdirSync(join(ROOT, 'plugins'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ dir: `plugins/${entry.name}`, main: JSON.parse(readFileSync(join(ROOT, 'plugins', entry.name, 'manifest.json'), 'utf8')).main }))
    .filter(({ main }) => typeof main === 'string' && main.endsWith('.ts'))
    .map(({ dir, main }) => join(dir, main));
  // registry/ is a set of tools: run (build-default) or imported by path (the registry commands, benches).
  const registry = readdirSync(join(ROOT, 'registry')).filter((name) => name.endsWith('.ts')).map((name) => `registry/${name}`);
  return [
    'cli/bin.ts',
    'kernel/index.ts',
    'sdk/index.ts',
    // Builtin plugins' shared internals: one module, given to builtin plugins only (kernel/loader.ts).
    'internal/index.ts',
    'testing/index.ts',
    ...plugins,
    ...registry,
    // Imported by path by the benches and test fixtures (the modules they measure or drive).
    'kernel/discovery.ts',
    'kernel/resolve/index.ts',
    'sdk/version.ts',
    'internal/registry/installed-tree.ts',
    'internal/registry/signatures.ts',
    'internal/registry/trust.ts',
    'plugins/marketplace/extract.ts',
    'plugins/trust/fingerprint.ts',
    'plugins/trust/plugin-files.ts',
    'plugins/trust/recorded-hashes.ts',
    'plugins/trust/snapshot.ts',
    'plugins/oauth/secrets/store.ts',
    'plugins/oauth/record.ts',
    'plugins/oauth/provider.ts',
    'plugins/sandbox/grants/index.ts',
  ];
}

/** dist/ path of a source module, without extension: `kernel/index.ts` → `kernel/index`. */
const distName = (file) => relative(ROOT, file).split(sep).join('/').replace(/\.[mc]?ts$/, '');

/** What dist/ is built from; a digest of their content decides whether `--if-stale` builds. */
const INPUT_DIRS = ['kernel', 'cli', 'sdk', 'internal', 'testing', 'registry', 'plugins'];
const INPUT_FILES = ['build.mjs', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
const STAMP = '.inputs';
/** dist/builtin-manifests.json: kernel/builtin-manifests.ts reads it. */
const BUILTIN_MANIFESTS = 'builtin-manifests.json';

function inputsDigest() {
  const hash = createHash('sha256');
  const add = (file) => {
    if (!existsSync(join(ROOT, file))) return;
    hash.update(`${file}\0`).update(readFileSync(join(ROOT, file))).update('\0');
  };
  const walk = (dir) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) add(path);
    }
  };
  INPUT_DIRS.forEach(walk);
  INPUT_FILES.forEach(add);
  return hash.digest('hex');
}

const digest = inputsDigest();
if (process.argv.includes('--if-stale') && existsSync(join(DIST, 'cli/bin.js')) && readIf(join(DIST, STAMP)) === digest) {
  process.stdout.write('plinth: dist/ is up to date with the sources: not rebuilt (`npm run build` rebuilds it)\n');
  process.exit(0);
}

function readIf(file) {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

// Built beside dist/, at the same depth (the source maps' relative paths hold after the rename).
const OUT = join(ROOT, `.dist-build-${process.pid}`);
rmSync(OUT, { recursive: true, force: true });

await build({
  input: Object.fromEntries(entries().map((file) => [distName(join(ROOT, file)), join(ROOT, file)])),
  platform: 'node',
  // Every other package is imported from node_modules at run time: jiti, keytar (native, optional),
  // and the heavy ones only some commands load (the MCP sdk, tar, ssri, ajv): bundling those made
  // neither `plinth ext install` nor `plinth ext list` faster, only dist/ larger.
  external: (id) => /^[@a-z]/.test(id) && !id.startsWith('plinth/') && !BUNDLED.has(id.split('/')[0]),
  resolve: {
    // The sources import './x.js' for './x.ts' (NodeNext); inside them `plinth/sdk` is the sdk itself.
    extensionAlias: { '.js': ['.ts', '.js'] },
    alias: { 'plinth/sdk': join(ROOT, 'sdk/index.ts'), 'plinth/internal': join(ROOT, 'internal/index.ts') },
  },
  // kernel/loader.ts and plugins/sandbox/confine.ts: their code now lives in a chunk, not beside
  // its source's place in dist/, so the build says so.
  transform: { define: { PLINTH_BUNDLE: 'true' } },
  output: {
    dir: OUT,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: (chunk) => {
      const facade = chunk.facadeModuleId;
      return facade?.startsWith(ROOT) && !facade.includes(`${sep}node_modules${sep}`) ? `${distName(facade)}.js` : 'chunks/[name]-[hash].js';
    },
    // Linked maps (`node --enable-source-maps` reads them); a plain start never opens them.
    sourcemap: true,
    // The maps point at the sources, which the package ships.
    sourcemapExcludeSources: true,
  },
});

// The declarations the package exports (package.json "exports" types), one per source module.
execFileSync(process.execPath, [join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', OUT], { cwd: ROOT, stdio: 'inherit' });
// Required by path (`node --require`) by the sandbox's confined children, and CommonJS: copied, not bundled.
cpSync(join(ROOT, 'plugins/sandbox/network/preload.cjs'), join(OUT, 'plugins/sandbox/network/preload.cjs'));
// The embedded default registry (dist/registry/default), built by the build's own registry tools.
execFileSync(process.execPath, [join(OUT, 'registry/build-default.js'), join(OUT, 'registry/default')], { cwd: ROOT, stdio: 'inherit' });
// The builtin plugins' manifests, validated now and shipped parsed (kernel/builtin-manifests.ts):
// discovery takes the parsed one for a manifest.json whose text is the same, and parses any other.
{
  const { parseManifest } = await import(pathToFileURL(join(OUT, 'sdk/index.js')).href);
  const table = {};
  for (const entry of readdirSync(join(ROOT, 'plugins'), { withFileTypes: true })) {
    if (!entry.isDirectory() || !existsSync(join(ROOT, 'plugins', entry.name, 'manifest.json'))) continue;
    const text = readFileSync(join(ROOT, 'plugins', entry.name, 'manifest.json'), 'utf8');
    const parsed = parseManifest(JSON.parse(text));
    if (!parsed.ok) throw new Error(`plugins/${entry.name}/manifest.json is invalid: ${JSON.stringify(parsed.issues)}`);
    const json = JSON.stringify(parsed.manifest);
    // Only what JSON gives back as it was (no undefined fields, no Map or Date) is shipped; the rest is parsed at run time.
    if (isDeepStrictEqual(JSON.parse(json), parsed.manifest)) table[entry.name] = { text, manifest: json };
  }
  writeFileSync(join(OUT, BUILTIN_MANIFESTS), `${JSON.stringify(table)}\n`);
}
writeFileSync(join(OUT, STAMP), `${digest}\n`);

// The swap: a `plinth` started before it runs the old files, one started after it the new ones.
const OLD = join(ROOT, `.dist-old-${process.pid}`);
if (existsSync(DIST)) renameSync(DIST, OLD);
renameSync(OUT, DIST);
rmSync(OLD, { recursive: true, force: true });
