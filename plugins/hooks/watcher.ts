/**
 * `file_change` while `plinth up` runs: the sdk's file watcher over the
 * workspace, with the hooks' defaults (the workspace's own `.plinth/` and
 * `.git/` are never reported; messages say `plinth hooks`). The patterns are
 * the union of the hooks' `matcher.files`, read by the sdk with exactly the
 * matcher's rules (both compile them with `globTest`).
 */
import { safeText, watchFiles, type FileChange, type FileWatcher, type Logger } from 'plinth/sdk';

export type { FileChange, FileChangeKind } from 'plinth/sdk';

export interface WatchOptions {
  readonly workspace: string;
  /** The union of every `file_change` hook's file patterns; an empty list starts no watcher. */
  readonly patterns: readonly string[];
  /** Paths never reported (and folders never entered). Default {@link DEFAULT_IGNORE}. */
  readonly ignore?: readonly string[];
  /** Quiet time before a batch is handed over; default 200 ms. */
  readonly debounceMs?: number;
  /** Called with each batch, one call at a time; a rejection is logged. */
  onChange(changes: FileChange[]): void | Promise<void>;
  /** Where failures go; default standard error. */
  readonly log?: Pick<Logger, 'warn' | 'debug'>;
  /** `native`: `fs.watch` recursive; `tree`: one watch per folder. Default: native on macOS and Windows, tree elsewhere. */
  readonly mode?: 'native' | 'tree';
}

export type WorkspaceWatcher = FileWatcher;

export const DEFAULT_IGNORE: readonly string[] = Object.freeze(['**/node_modules/**', '.git/**', '.plinth/**']);

/** Starts watching the workspace; never throws. */
export function watchWorkspace(options: WatchOptions): WorkspaceWatcher {
  return watchFiles({
    root: options.workspace,
    include: options.patterns,
    ignore: options.ignore ?? DEFAULT_IGNORE,
    onChange: options.onChange,
    log: options.log ?? { warn: (m: string) => process.stderr.write(safeText(`plinth hooks: ${m}\n`)), debug: () => {} },
    ...(options.debounceMs !== undefined && { debounceMs: options.debounceMs }),
    ...(options.mode && { mode: options.mode }),
  });
}
