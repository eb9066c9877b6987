/**
 * The paths a piece of work read from the file system, for a cache that must
 * know every input of what it keeps (cli/help-cache.ts: the command table is
 * made from the settings files and every plugin folder and manifest discovery
 * read). Readers note each file they read, each folder they list, each path
 * they stat, resolve or follow, found or not: a path that was missing is an
 * input too (creating it changes the result).
 *
 * One recording at a time, for the whole process (a CLI command); readers that
 * run meanwhile for other work only add paths, which makes a cache miss more
 * often, never serve stale results.
 */

let recording: Set<string> | undefined;

/** Notes that `path` was read (or listed, stat'ed, resolved), when a recording is on. */
export function noteRead(path: string): void {
  recording?.add(path);
}

/** Starts a recording; the set fills until {@link stopReadRecording}. */
export function startReadRecording(): Set<string> {
  recording = new Set();
  return recording;
}

/** Ends the recording. */
export function stopReadRecording(): void {
  recording = undefined;
}
