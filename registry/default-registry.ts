/**
 * The embedded default registry (sdk `defaultRegistryFolder()`): the example
 * plugins of `registry/examples/` and the builtin transports, published into
 * a static registry folder with a fixed time, so that the same sources give
 * the same folder byte for byte. Built by `npm run build` and `prepare`
 * (`node dist/registry/build-default.js`); nothing here needs the network.
 */
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PACK_MTIME } from './pack.js';
import { type PublishResult, publishPlugin } from './publish.js';

/** What the embedded registry holds, as folders relative to plinth's package folder. */
export const DEFAULT_REGISTRY_PLUGINS = [
  'registry/examples/hello-guard',
  'registry/examples/hello-command',
  'plugins/transport-stdio',
  'plugins/transport-http',
  'plugins/transport-sse',
] as const;

/**
 * Builds the registry of `plugins` (folders relative to `packageFolder`) into
 * `out`, replacing what was there in one step: it is built beside `out` and
 * renamed into place, so a reader never sees half of it, and versions no
 * longer in the sources do not linger.
 */
export async function buildDefaultRegistry(packageFolder: string, out: string, plugins: readonly string[] = DEFAULT_REGISTRY_PLUGINS): Promise<PublishResult[]> {
  await mkdir(dirname(out), { recursive: true });
  const building = `${out}.building-${process.pid}`;
  const old = `${out}.old-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  try {
    const results: PublishResult[] = [];
    for (const plugin of plugins) results.push(await publishPlugin(building, join(packageFolder, ...plugin.split('/')), { now: PACK_MTIME }));
    await rename(out, old).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rename(building, out);
    await rm(old, { recursive: true, force: true });
    return results;
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}
