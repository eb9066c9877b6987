/**
 * The rule for entries the user wrote (the user settings' hooks and MCP
 * servers): they never run what the workspace holds, because the workspace is
 * a cloned repository until proven otherwise.
 *
 * - A relative path in a user entry (its cwd, its command, an argument) is
 *   relative to the user folder (`$PLINTH_HOME`), and a user entry without a
 *   cwd runs there: {@link entryFolder}. A program that looks in its working
 *   folder for what to run (`npx`, `uvx`, `pnpm dlx`, `bunx`, `yarn dlx`, which
 *   prefer a project's `node_modules/.bin` or read its `.npmrc`, `uv.toml`,
 *   `.python-version`) then looks in the user folder, not the project.
 * - The project reaches such an entry as data, by its absolute path: the
 *   placeholder `${workspace}` ({@link expandWorkspace}) and MCP roots.
 * - Whatever an entry still names inside the workspace (a cwd there, a program
 *   or argument below its root, a `PATH` entry in it: {@link workspaceWords})
 *   is workspace content: the caller treats the entry as the workspace's
 *   (approved per workspace, confined), or does not run it.
 *
 * Paths are compared as written (resolved, not real paths): a caller compares
 * against the workspace's real path too when it may differ; a symbolic link
 * elsewhere that points into the workspace is not seen here.
 */
import { delimiter, isAbsolute, relative, resolve } from 'node:path';

/** The placeholder for the workspace root in an entry's arguments and cwd. */
export const WORKSPACE_PLACEHOLDER = '${workspace}';

/** Where a settings entry of `scope` runs and its relative paths resolve: the user folder for the user's, the workspace root for the workspace's. */
export function entryFolder(scope: 'user' | 'workspace', places: { readonly home: string; readonly workspace: string }): string {
  return resolve(scope === 'user' ? places.home : places.workspace);
}

/** `text` with every `${workspace}` replaced by the workspace root. */
export function expandWorkspace(text: string, workspace: string): string {
  return text.includes(WORKSPACE_PLACEHOLDER) ? text.replaceAll(WORKSPACE_PLACEHOLDER, resolve(workspace)) : text;
}

/** Whether `path` (absolute) is `folder` or lies inside it; `strictly`: inside it only. */
export function isInside(path: string, folder: string, strictly = false): boolean {
  const rel = relative(resolve(folder), resolve(path));
  if (rel === '') return !strictly;
  return !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * The absolute paths named in `text` (the whole text, what follows an `=`, each
 * word of a text with spaces, each entry of a search path) that lie below
 * `workspace`. The workspace root itself is not one: naming the project as the
 * folder to work on is data; naming a file or folder in it is running it, as far
 * as plinth can tell.
 */
export function workspaceWords(text: string, workspace: string): string[] {
  const found = new Set<string>();
  const words = [text, ...text.split(/[\s;&|()<>`'"=,]+/), ...text.split(delimiter)];
  for (const word of words) {
    if (word !== '' && isAbsolute(word) && isInside(word, workspace, true)) found.add(word);
  }
  return [...found];
}

/** A search path (`PATH`) without its entries in `workspace` (the root included); undefined when it has none there. */
export function pathOutside(searchPath: string | undefined, workspace: string): string | undefined {
  if (searchPath === undefined) return undefined;
  const entries = searchPath.split(delimiter);
  const kept = entries.filter((entry) => !(isAbsolute(entry) && isInside(entry, workspace)));
  return kept.length === entries.length ? undefined : kept.join(delimiter);
}
