/**
 * Hot reload while `plinth up` runs: one watcher (the sdk's `watchFiles`) per
 * folder the kernel discovers plugins in — the user's and the workspace's
 * plugin folders, linked folders, `pluginDirs` — never the builtin one. A
 * debounced batch of changes becomes, per plugin whose folder it touched, one
 * `kernel.plugins.replace(name)` (manifest, scripts and code are read afresh;
 * a broken version is refused and the running one kept), and a `rescan()` when
 * something changed outside every known plugin's folder (a plugin folder added
 * or removed, a manifest created). Changes are applied one at a time, and
 * every outcome is one line: `reloaded x@1.2.1`, `kept x@1.2.0: PLN_E_…: …`.
 */
import { stat } from 'node:fs/promises';
import { basename, relative, resolve, sep } from 'node:path';
import { type FileChange, type FileWatcher, type LiveReport, type Logger, type PluginKernel, type PluginStatus, isPlinthError, watchFiles } from 'plinth/sdk';
import { PEER_MANIFEST_FILES } from 'plinth/internal';

export interface HotReloadOptions {
  readonly kernel: PluginKernel;
  readonly log: Logger;
  /** Quiet time after a change before it is applied, in ms. */
  readonly debounceMs: number;
  /** Where the one line per reload goes. */
  readonly print: (line: string) => void;
  /** Folders whose `settings.json` is watched too (the user home, the workspace's `.plinth`): an edit there is a rescan, which reads the settings again. */
  readonly settingsFolders?: readonly string[];
}

export interface HotReload {
  /** Settles when every folder is watched. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/** Editors' swap and backup files: saving through them is not a change of the plugin. */
const IGNORE = ['**/node_modules/**', '**/.git/**', '**/*.swp', '**/*.swx', '**/*~', '**/.#*', '**/#*#'];

/** The files whose removal may end a plugin (or turn it into another kind): plinth's manifest and the peers'. */
const MANIFEST_FILES = ['manifest.json', ...Object.values(PEER_MANIFEST_FILES)];

/** What one batch asks for. */
export interface ReloadPlan {
  /** Plugins to re-read, by name. */
  readonly replace: readonly string[];
  /** Something changed outside every known plugin's folder: read the folders again. */
  readonly rescan: boolean;
}

/**
 * Which plugins a batch of changes touches: the plugin whose folder holds a
 * changed file (the deepest folder, for plugins nested in others) is replaced;
 * a change outside every plugin's folder, or the removal of a manifest, asks
 * for a rescan. A dot-folder at the top of a plugins folder is an install's
 * staging area, never a plugin: ignored.
 */
export function planReload(root: string, changes: readonly FileChange[], plugins: readonly PluginStatus[]): ReloadPlan {
  const owners = plugins.filter((p) => p.dir !== '' && p.source !== 'builtin').sort((a, b) => b.dir.length - a.dir.length);
  const replace = new Set<string>();
  let rescan = false;
  for (const change of changes) {
    const file = resolve(change.absolutePath);
    const owner = owners.find((p) => file === p.dir || file.startsWith(p.dir + sep));
    if (owner) {
      if (change.kind === 'deleted' && MANIFEST_FILES.some((m) => file === resolve(owner.dir, m))) rescan = true;
      else replace.add(owner.name);
      continue;
    }
    const top = relative(root, file).split(sep)[0] ?? '';
    if (top.startsWith('.')) continue;
    rescan = true;
  }
  return { replace: [...replace], rescan };
}

/** One line per plugin the report names; `before` is each plugin's version before the change. */
export function reportLines(report: LiveReport, target: string | undefined, before: ReadonlyMap<string, string>, after: readonly PluginStatus[]): string[] {
  const version = (name: string) => after.find((p) => p.name === name)?.version ?? before.get(name) ?? '?';
  const lines: string[] = [];
  for (const name of report.replaced) lines.push(`reloaded ${name}@${version(name)}`);
  for (const name of report.added) lines.push(`added ${name}@${version(name)}`);
  for (const name of report.removed) lines.push(`removed ${name}@${before.get(name) ?? version(name)}`);
  for (const error of report.failed) {
    const name = error.plugin ?? target ?? '?';
    const running = after.find((p) => p.name === name && (p.state === 'active' || p.state === 'lazy'));
    const what = running ? `kept ${name}@${running.version}` : `could not load ${name}`;
    lines.push(`${what}: ${error.code}: ${firstLine(error.message)}`);
  }
  return lines;
}

/** Starts watching the kernel's plugin folders; see the module comment. Never throws. */
export function startHotReload({ kernel, log, debounceMs, print, settingsFolders = [] }: HotReloadOptions): HotReload {
  const watchers = new Map<string, FileWatcher>();
  let closed = false;
  let queue: Promise<void> = Promise.resolve();

  const apply = async (label: string | undefined, change: () => Promise<LiveReport>): Promise<void> => {
    const before = new Map(kernel.status().map((p) => [p.name, p.version]));
    let report: LiveReport;
    try {
      report = await change();
    } catch (error) {
      const code = isPlinthError(error) ? error.code : 'PLN_E_PLUGIN_SETUP';
      const message = error instanceof Error ? error.message : String(error);
      print(kernel.redact(`could not reload ${label ?? 'the plugin folders'}: ${code}: ${firstLine(message)}`));
      return;
    }
    for (const line of reportLines(report, label, before, kernel.status())) print(kernel.redact(line));
  };

  // `ext enable` in another terminal, or an edited settings file: enabled state, links and plugin settings apply without a restart.
  const onSettings = (): Promise<void> => {
    const run = queue.then(async () => {
      if (closed) return;
      await apply('the settings', () => kernel.plugins.rescan());
      await refresh();
    });
    queue = run.catch(() => undefined);
    return run;
  };
  const settingsWatchers: FileWatcher[] = [];
  const watchSettings = async (): Promise<void> => {
    for (const dir of settingsFolders) {
      if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) continue;
      // Only the folder's own settings.json: no subfolder is entered (one watch per folder).
      const watcher = watchFiles({ root: dir, include: ['settings.json'], ignore: ['*/**'], debounceMs, log, onChange: onSettings });
      settingsWatchers.push(watcher);
      await watcher.ready;
    }
  };

  const onChange = (root: string) => (changes: FileChange[]): Promise<void> => {
    // Applied in order, one at a time, also across folders: the kernel's changes must not interleave.
    const run = queue.then(async () => {
      if (closed) return;
      const plan = planReload(root, changes, kernel.status());
      log.debug(`changes in ${root}: ${changes.map((c) => `${c.kind} ${c.path}`).join(', ')}`);
      for (const name of plan.replace) await apply(name, () => kernel.plugins.replace(name));
      if (plan.rescan) await apply(undefined, () => kernel.plugins.rescan());
      await refresh();
    });
    queue = run.catch(() => undefined);
    return run;
  };

  /** Watches every folder the kernel now discovers plugins in, and stops watching those it no longer does. */
  const refresh = async (): Promise<void> => {
    const wanted = new Set<string>();
    for (const folder of kernel.plugins.folders()) {
      if (folder.source === 'builtin') continue;
      const dir = resolve(folder.dir);
      if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) continue;
      wanted.add(dir);
    }
    for (const [dir, watcher] of watchers) {
      if (wanted.has(dir)) continue;
      watchers.delete(dir);
      // Not awaited: the batch that got here may be this watcher's own, which its close waits for.
      void watcher.close();
    }
    const starting: Promise<void>[] = [];
    for (const dir of wanted) {
      if (watchers.has(dir) || closed) continue;
      const watcher = watchFiles({ root: dir, ignore: IGNORE, debounceMs, log, onChange: onChange(dir) });
      watchers.set(dir, watcher);
      starting.push(watcher.ready);
      log.debug(`watching ${dir} (${basename(dir)}) for plugin changes`);
    }
    await Promise.all(starting);
  };

  const ready = Promise.all([refresh(), watchSettings()]).then(() => undefined).catch((error: unknown) => log.warn(`PLN_E_WATCH_FAILED cannot watch the plugin folders: ${error instanceof Error ? error.message : String(error)}`));
  return {
    ready,
    async close() {
      closed = true;
      await ready;
      await Promise.all([...watchers.values(), ...settingsWatchers].map((w) => w.close()));
      watchers.clear();
    },
  };
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
