/**
 * What granted permissions mean on this machine: placeholders expanded to
 * real paths (symlinks resolved, so that a grant names what it reaches); the
 * host matching the network proxy uses is the sdk's (re-exported here).
 */
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Permissions } from 'plinth/sdk';

/** What the placeholders stand for, for one principal. */
export interface PlaceholderValues {
  readonly workspace: string;
  /** The user's home folder (not the private HOME the child gets). */
  readonly home: string;
  /** The plugin's folder; absent for settings hooks and servers. */
  readonly pluginDir?: string;
  /** The principal's private temporary folder. */
  readonly tmp: string;
}

/** The real path of `path`, or of its nearest existing parent with the rest appended (a grant may name what does not exist yet). */
export function realPath(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  if (parent === absolute) return absolute;
  return join(realPath(parent), basename(absolute));
}

/**
 * `${workspace}/src` → `/home/me/project/src` (real path). Undefined when the
 * path names `${pluginDir}` and there is none (a settings hook): the grant
 * does not apply.
 */
export function expandPath(pattern: string, values: PlaceholderValues): string | undefined {
  const match = /^\$\{(workspace|home|pluginDir|tmp)\}(.*)$/.exec(pattern);
  if (match === null) return realPath(pattern);
  const [, name, rest] = match as unknown as [string, keyof PlaceholderValues, string];
  const base = values[name];
  if (base === undefined) return undefined;
  return realPath(base + rest);
}

/** The granted read and write paths, expanded, without duplicates; write implies read. */
export function expandFilesystem(filesystem: Permissions['filesystem'], values: PlaceholderValues): { readonly read: string[]; readonly write: string[] } {
  const write = [...new Set(filesystem.write.map((p) => expandPath(p, values)).filter((p): p is string => p !== undefined))];
  const read = [...new Set(filesystem.read.map((p) => expandPath(p, values)).filter((p): p is string => p !== undefined))].filter((p) => !write.includes(p));
  return { read, write };
}

// The one host matcher, shared with `ctx.fetch` (which must work without this plugin): internal/permissions/match.ts.
export { hostRefusal, isIpLiteral, normalizeHost, parseHostPattern } from 'plinth/internal';
