/**
 * The live lifecycle's bookkeeping: what was added, removed, linked, enabled
 * and disabled while the kernel runs, and the queue that applies one change at
 * a time. Every change ends in one step, the kernel's `reconcile`: discover
 * again, resolve again, and start, stop or replace what differs.
 */
import { resolve as resolvePath } from 'node:path';
import { PlinthError } from '../sdk/errors.js';
import type { LivePlugins, LiveReport, PluginSource } from '../sdk/plugin.js';
import type { Candidate } from './types.js';

/** A plugin folder added while running (or linked in settings). */
export interface ExtraSource {
  readonly dir: string;
  readonly source: PluginSource;
  readonly linked?: true;
}

/** What the live lifecycle needs of the kernel. */
export interface LiveHost {
  /** Discover, resolve and apply; `force` names plugins to replace even if their manifest is unchanged. */
  reconcile(force: ReadonlySet<string>): Promise<LiveReport>;
  /** The folders discovery reads besides the live ones. */
  folders(): ReadonlyArray<{ dir: string; source: PluginSource }>;
  /** Throws when the kernel is not booted or is shutting down. */
  assertRunning(): void;
  /** The folder a plugin came from, if the kernel knows it. */
  dirOf(name: string): string | undefined;
  /** The source of a plugin the kernel knows. */
  sourceOf(name: string): PluginSource | undefined;
}

/** Where `disable` is said to come from in a disabled plugin's error. */
const RUNTIME = 'the running host (kernel.plugins.disable)';

export class LiveSet {
  private readonly extra = new Map<string, ExtraSource>();
  private readonly removed = new Set<string>();
  private readonly disabledNow = new Set<string>();
  private readonly enabledNow = new Set<string>();
  private readonly revive = new Set<string>();
  private fromSettings = new Set<string>();
  /** Folders `replace(name, dir)` took a plugin from: chosen over the others of that name, as links are. */
  private readonly pinned = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();
  private host: LiveHost | undefined;

  /** Linked folders from the user's settings (`links`), as they are now: links gone from the file go. */
  link(dirs: readonly string[]): void {
    const now = new Set(dirs.map((dir) => resolvePath(dir)));
    for (const dir of this.fromSettings) if (!now.has(dir)) this.extra.delete(dir);
    for (const dir of now) this.extra.set(dir, { dir, source: 'path', linked: true });
    this.fromSettings = now;
  }

  /** Discovery sources added while running. */
  sources(): ExtraSource[] {
    return [...this.extra.values()];
  }

  /**
   * The candidates that take part: none of a removed plugin, and for a name with a
   * linked folder only that folder (a plugin under development beats the installed one).
   */
  select(candidates: readonly Candidate[]): Candidate[] {
    // Adding a folder back undoes the removal of the plugin in it.
    for (const c of candidates) if (this.revive.has(c.dir)) this.removed.delete(c.manifest.name);
    this.revive.clear();
    const first = (c: Candidate) => c.linked === true || this.pinned.has(c.dir);
    const preferred = new Set(candidates.filter(first).map((c) => c.manifest.name));
    return candidates.filter((c) => !this.removed.has(c.manifest.name) && (first(c) || !preferred.has(c.manifest.name)));
  }

  /** The settings' disabled plugins, with this run's `enable` and `disable` applied. */
  disabled(fromSettings: ReadonlyMap<string, string>): Map<string, string> {
    const out = new Map([...fromSettings].filter(([name]) => !this.enabledNow.has(name)));
    for (const name of this.disabledNow) out.set(name, RUNTIME);
    return out;
  }

  /** The `kernel.plugins` object, bound to `host`. */
  api(host: LiveHost): LivePlugins {
    this.host = host;
    return {
      add: (dir, options = {}) =>
        this.run(() => {
          const abs = resolvePath(dir);
          this.extra.set(abs, { dir: abs, source: options.source ?? 'path', ...(options.linked && { linked: true as const }) });
          this.revive.add(abs);
          return { force: new Set<string>() };
        }),
      // A folder that was added or linked is let go (an installed plugin of that name, if any, takes over again: unlink);
      // any other plugin is left out until a folder with it is added again.
      remove: (name) =>
        this.run(() => {
          const dir = host.dirOf(name);
          if (host.sourceOf(name) === undefined) throw unknownPlugin(name);
          if (dir !== undefined && this.extra.delete(dir)) this.pinned.delete(dir);
          else this.removed.add(name);
          return { force: new Set<string>() };
        }),
      replace: (name, dir) =>
        this.run(() => {
          const current = host.sourceOf(name);
          if (current === undefined) throw unknownPlugin(name);
          if (dir !== undefined) {
            const abs = resolvePath(dir);
            this.extra.set(abs, { dir: abs, source: current });
            this.pinned.add(abs);
          }
          return { force: new Set([name]) };
        }),
      disable: (name) =>
        this.run(() => {
          this.enabledNow.delete(name);
          this.disabledNow.add(name);
          return { force: new Set<string>() };
        }),
      enable: (name) =>
        this.run(() => {
          this.disabledNow.delete(name);
          this.enabledNow.add(name);
          return { force: new Set<string>() };
        }),
      rescan: () => this.run(() => ({ force: new Set<string>() })),
      folders: () => [...host.folders(), ...this.extra.values()],
    };
  }

  /** One change at a time: each waits for the one before, and a failure does not stop the queue. */
  private run(change: () => { force: Set<string> }): Promise<LiveReport> {
    const host = this.host!;
    const next = this.queue.then(async () => {
      host.assertRunning();
      return host.reconcile(change().force);
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** A plugin the kernel runs or will run on demand: what a live change stops or replaces. */
export function isRunning(record: { state: string }): boolean {
  return record.state === 'active' || record.state === 'lazy' || record.state === 'loading';
}

/** Whether a running plugin's candidate is the one resolution chose again: same folder, same manifest. */
export function sameCandidate(running: Candidate | undefined, chosen: Candidate): boolean {
  if (!running) return false;
  if (running.definition || chosen.definition) return running.definition === chosen.definition;
  return running.dir === chosen.dir && running.linked === chosen.linked && JSON.stringify(running.manifest) === JSON.stringify(chosen.manifest);
}

function unknownPlugin(name: string): PlinthError {
  return new PlinthError('PLN_E_PLUGIN_UNKNOWN', `no plugin named "${name}" is running`, { plugin: name, hint: 'run `plinth ext list` to see the plugins and their states' });
}
