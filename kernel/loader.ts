/**
 * Imports a plugin's `main` with jiti, so plugins may be TypeScript. Inside a
 * plugin, `plinth/sdk` is the host's own sdk module object, not a copy: types,
 * helpers and errors are the host's whatever folder the plugin lives in.
 */
import { resolve } from 'node:path';
import type { PluginDefinition } from '../sdk/plugin.js';
import { PlinthError, describeCause } from './errors.js';
import type { Candidate } from './types.js';

type Jiti = { import(id: string, options?: { default?: boolean }): Promise<unknown> };

let jiti: Promise<Jiti> | undefined;

// Created on first use: a command that loads no plugin code never pays for jiti.
function getJiti(): Promise<Jiti> {
  jiti ??= (async () => {
    const [{ createJiti }, sdk] = await Promise.all([import('jiti'), import('../sdk/index.js')]);
    return createJiti(import.meta.url, {
      virtualModules: { 'plinth/sdk': sdk },
      interopDefault: true,
    }) as Jiti;
  })();
  return jiti;
}

/** Imports `candidate`'s main module and checks that it exports a plugin definition. */
export async function loadPluginCode(candidate: Candidate): Promise<PluginDefinition> {
  if (candidate.definition) return candidate.definition;
  const { name, main } = candidate.manifest;
  if (main === undefined) throw new Error(`plugin "${name}" has no main`);
  const file = resolve(candidate.dir, main);
  let exported: unknown;
  try {
    exported = await (await getJiti()).import(file, { default: true });
  } catch (cause) {
    throw new PlinthError('PLN_E_PLUGIN_IMPORT', `plugin "${name}" could not be imported from ${file}: ${describeCause(cause)}`, {
      plugin: name,
      hook: 'import',
      cause,
      hint: 'check that "main" in its manifest.json names a module that exists and compiles',
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

function isDefinition(value: unknown): value is PluginDefinition {
  return typeof value === 'object' && value !== null && typeof (value as PluginDefinition).setup === 'function';
}
