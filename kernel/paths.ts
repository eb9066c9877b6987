/** Where plinth's own files and a user's folders are. */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The plinth package folder, whether running from source (kernel/) or from dist/kernel/. */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    dir = dirname(dir);
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'plugins'))) return (root = dir);
  }
  throw new Error('plinth: cannot find its package folder');
}

/** plinth's package version. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** The builtin plugins' folder. */
export function builtinPluginsDir(): string {
  return join(packageRoot(), 'plugins');
}

/** The user folder: `PLINTH_HOME`, else `~/.plinth`. */
export function defaultHome(env: Record<string, string | undefined>): string {
  return resolve(env.PLINTH_HOME || join(homedir(), '.plinth'));
}
