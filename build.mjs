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
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
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
    'testing/index.ts',
    ...plugins,
    ...registry,
    // Imported by path by the benches and test fixtures (the modules they measure or drive).
    'kernel/discovery.ts',
    'kernel/resolve/index.ts',
    'sdk/version.ts',
    'sdk/installed-tree.ts',
    'sdk/contracts/registry-signatures.ts',
    'sdk/contracts/registry-trust.ts',
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

rmSync(DIST, { recursive: true, force: true });

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
    alias: { 'plinth/sdk': join(ROOT, 'sdk/index.ts') },
  },
  // kernel/loader.ts and plugins/sandbox/confine.ts: their code now lives in a chunk, not beside
  // its source's place in dist/, so the build says so.
  transform: { define: { PLINTH_BUNDLE: 'true' } },
  output: {
    dir: DIST,
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
execFileSync(process.execPath, [join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
// Required by path (`node --require`) by the sandbox's confined children, and CommonJS: copied, not bundled.
cpSync(join(ROOT, 'plugins/sandbox/network/preload.cjs'), join(DIST, 'plugins/sandbox/network/preload.cjs'));
// The embedded default registry (dist/registry/default), built by the build's own registry tools.
execFileSync(process.execPath, [join(DIST, 'registry/build-default.js')], { cwd: ROOT, stdio: 'inherit' });
