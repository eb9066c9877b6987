/**
 * Where plinth's embedded default registry is: a static registry folder built
 * from the example plugins and the transports by `npm run build` (and by
 * `prepare`, so a fresh `npm ci` has it, offline), at `dist/registry/default`
 * in plinth's package folder. The marketplace uses it when no registry is
 * configured, so search and install work on a fresh clone.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder, relative to plinth's package folder. */
export const DEFAULT_REGISTRY_PATH = 'dist/registry/default';

/**
 * The embedded registry's folder (absolute), found from this module's place
 * (`internal/registry/` in the sources, a chunk of `dist/` once built). It exists once plinth is
 * built; check before use (`npm run build` makes it).
 */
export function defaultRegistryFolder(): string {
  return join(plinthPackageFolder(), ...DEFAULT_REGISTRY_PATH.split('/'));
}

/** plinth's package folder: the nearest folder above this module holding `package.json` and `plugins/`. */
export function plinthPackageFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    dir = dirname(dir);
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'plugins'))) return dir;
  }
  throw new Error('plinth: cannot find its package folder');
}
