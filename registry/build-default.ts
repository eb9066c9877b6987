/**
 * `node dist/registry/build-default.js [out]`: builds the embedded default
 * registry (run by `npm run build` and `prepare`); `out` defaults to the sdk's
 * `defaultRegistryFolder()`.
 */
import { resolve } from 'node:path';
import { defaultRegistryFolder, plinthPackageFolder } from '../internal/registry/default.js';
import { describeError } from '../sdk/errors.js';
import { buildDefaultRegistry } from './default-registry.js';

const out = process.argv[2] === undefined ? defaultRegistryFolder() : resolve(process.argv[2]);
try {
  const results = await buildDefaultRegistry(plinthPackageFolder(), out);
  process.stdout.write(`embedded registry: ${results.map((r) => `${r.name}@${r.version}`).join(', ')} in ${out}\n`);
} catch (error) {
  process.stderr.write(`plinth: cannot build the embedded registry: ${describeError(error)}\n`);
  process.exitCode = 1;
}
