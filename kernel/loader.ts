/**
 * Imports a plugin's `main` with jiti, so plugins may be TypeScript. Inside a
 * plugin, `plinth/sdk` is the host's own sdk module object, not a copy: types,
 * helpers and errors are the host's whatever folder the plugin lives in.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PluginDefinition } from '../sdk/plugin.js';
import { PlinthError, describeCause } from '../sdk/errors.js';
import { packageRoot } from './paths.js';
import type { Candidate } from './types.js';

type Jiti = { import(id: string, options?: { default?: boolean }): Promise<unknown> };

const jitis = new Map<string, Promise<Jiti>>();

// Created on first use: a command that loads no plugin code never pays for jiti.
// The fresh one keeps no module cache: a replacement (hot reload, update) re-reads
// the plugin's main and every module it imports, not what the old version saw.
// A builtin plugin (one of plinth's own plugins/ folder) also gets `plinth/internal`, what builtin plugins share and
// third parties must not rely on; any other plugin asking for it gets Node's
// answer (not exported by the package).
function getJiti(fresh: boolean, builtin: boolean): Promise<Jiti> {
  const key = `${fresh}:${builtin}`;
  let jiti = jitis.get(key);
  if (!jiti) {
    jiti = (async () => {
      const [{ createJiti }, sdk, internal] = await Promise.all([import('jiti'), import('../sdk/index.js'), builtin ? import('../internal/index.js') : undefined]);
      const virtualModules: Record<string, unknown> = { 'plinth/sdk': sdk };
      if (internal) virtualModules['plinth/internal'] = internal;
      return createJiti(import.meta.url, { virtualModules, interopDefault: true, moduleCache: !fresh }) as Jiti;
    })();
    jitis.set(key, jiti);
  }
  return jiti;
}

let generation = 0;

/** Imports `candidate`'s main module (`fresh`: bypassing every module cache) and checks that it exports a plugin definition. */
export async function loadPluginCode(candidate: Candidate, fresh = false): Promise<PluginDefinition> {
  if (candidate.definition) return candidate.definition;
  const { name, main } = candidate.manifest;
  if (main === undefined) throw new Error(`plugin "${name}" has no main`);
  const file = resolve(candidate.dir, main);
  let exported: unknown;
  try {
    const compiled = compiledBuiltin(candidate, file);
    // Node's ESM cache has no eviction; a query makes a new module (its own imports stay cached, fine for builtins).
    const compiledUrl = compiled && pathToFileURL(compiled).href + (fresh ? `?v=${++generation}` : '');
    exported = compiledUrl ? ((await import(compiledUrl)) as { default: unknown }).default : await (await getJiti(fresh, isPlinthsOwn(file))).import(file, { default: true });
  } catch (cause) {
    throw new PlinthError('PLN_E_PLUGIN_IMPORT', `plugin "${name}" could not be imported from ${file}: ${describeCause(cause)}`, {
      plugin: name,
      hook: 'import',
      cause,
      hint: reachesInside(cause)
        ? 'a plugin imports plinth as "plinth/sdk" only: "plinth/internal" and paths inside the package are plinth\'s own'
        : 'check that "main" in its manifest.json names a module that exists and compiles',
    });
  }
  if (!isDefinition(exported)) {
    throw new PlinthError('PLN_E_PLUGIN_EXPORT', `plugin "${name}" does not export a plugin: ${file} must default-export definePlugin({ setup })`, {
      plugin: name,
      hook: 'import',
      hint: 'export default definePlugin({ setup(kernel, ctx) { … } }) from "plinth/sdk"',
    });
  }
  return exported;
}

// Defined (true) by the build, which bundles this module into a chunk of dist/: where that chunk
// lies says nothing. Undeclared when the sources run (tests), whatever folder they are in.
declare const PLINTH_BUNDLE: true | undefined;
// Whether this kernel runs from the build, as the CLI and hosts do.
const fromBuild = typeof PLINTH_BUNDLE !== 'undefined';

/**
 * The build also bundles the builtin plugins (dist/plugins/<name>/index.js, in
 * the same code-split build as the kernel): the kernel running from the build
 * imports them natively, several times faster than transpiling their modules
 * on every boot. Their `plinth/sdk` is the sdk in the build's shared chunks, the
 * same modules the kernel uses. Running from source (tests), builtin plugins
 * load from source like any other.
 */
function compiledBuiltin(candidate: Candidate, file: string): string | undefined {
  if (candidate.source !== 'builtin' || !fromBuild) return undefined;
  const root = packageRoot();
  const inPlugins = relative(join(root, 'plugins'), file);
  if (inPlugins.startsWith('..')) return undefined;
  const compiled = join(root, 'dist', 'plugins', inPlugins.replace(/\.[mc]?tsx?$/, '.js'));
  return existsSync(compiled) ? compiled : undefined;
}

/**
 * Whether a plugin's main lies in plinth's own `plugins/` folder: a builtin
 * plugin, whatever source it was found as (a test or a host may name one by
 * path). Only those get `plinth/internal`.
 */
function isPlinthsOwn(file: string): boolean {
  const inPlugins = relative(join(packageRoot(), 'plugins'), file);
  return inPlugins !== '' && !inPlugins.startsWith('..') && !isAbsolute(inPlugins);
}

/** Whether an import failed because it named a part of plinth that the package does not export (`plinth/internal`, a deep path). */
function reachesInside(cause: unknown): boolean {
  const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' && typeof message === 'string' && message.includes(join(packageRoot(), 'package.json'));
}

function isDefinition(value: unknown): value is PluginDefinition {
  return typeof value === 'object' && value !== null && typeof (value as PluginDefinition).setup === 'function';
}
