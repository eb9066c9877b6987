/**
 * The live difference, the one step of every live change (live.ts queues them):
 * read the settings, discover and resolve again, then stop what went (dependents
 * first, `unload` hook), replace what changed (the new version set up staged
 * before the old one goes; a failure keeps the old one), and start what is new
 * (`manifest` hook).
 */
import { PlinthError, isPlinthError, wrapPluginError } from '../sdk/errors.js';
import type { LiveReport } from '../sdk/plugin.js';
import { redactError } from '../internal/text/redact.js';
import { activate, catchUp, setUp, startDependencies } from './activation.js';
import type { Config } from './config/load.js';
import { isRunning, sameCandidate } from './live.js';
import { type Found, discoverAll, learnDeclarations, loadSettings, readPlugins, resolveFound } from './prepare.js';
import { adopt, exclude, forgetEvents, indexEvents } from './records.js';
import { stopOne } from './shutdown.js';
import { type KernelState, type PluginRecord, configOf, reportError } from './state.js';
import type { Candidate } from './types.js';

/**
 * The one step of every live change: discover and resolve again, then stop
 * what no longer resolves (dependents first), replace what changed (or is in
 * `force`), and start what is new, in load order. A replacement that fails
 * leaves the running version in place; the report says what happened.
 */
export async function reconcile(state: KernelState, force: ReadonlySet<string>): Promise<LiveReport> {
  // The settings files are read again: enabled state, links and plugin settings as they are now.
  // An invalid file keeps the settings in force (and says so); `timeouts`, `services` and `pluginDirs` wait for a restart.
  const before = configOf(state);
  let settingsError: PlinthError | undefined;
  let found: Found;
  try {
    const read = await readPlugins(state, await loadSettings(state));
    state.config = read.config;
    found = read.found;
  } catch (error) {
    settingsError = isPlinthError(error) ? error : wrapPluginError('PLN_E_CONFIG_INVALID', 'kernel', 'settings', error);
    found = await discoverAll(state);
  }
  const resolution = resolveFound(state, found);
  const entry = (config: Config, name: string) => JSON.stringify(config.settings.plugins?.[name]?.settings ?? null);
  const changed = new Set([...force, ...[...state.records.keys()].filter((name) => entry(before, name) !== entry(configOf(state), name))]);
  const chosen = new Map(resolution.plugins.map((c) => [c.manifest.name, c]));
  const report = { added: [] as string[], removed: [] as string[], replaced: [] as string[], failed: settingsError ? [settingsError] : ([] as PlinthError[]) };
  const running = [...state.records.values()].filter(isRunning);
  const byLoadOrder = [...state.loadOrder].reverse();
  for (const record of [...byLoadOrder, ...running.filter((r) => !byLoadOrder.includes(r))]) {
    if (!isRunning(record) || chosen.has(record.info.name)) continue;
    await stop(state, record);
    report.removed.push(record.info.name);
  }
  state.resolution = resolution;
  learnDeclarations(state, resolution);
  for (const candidate of resolution.plugins) {
    const name = candidate.manifest.name;
    const record = state.records.get(name);
    if (record && isRunning(record)) {
      if (!changed.has(name) && sameCandidate(record.candidate, candidate)) continue;
      const error = await replace(state, record, candidate);
      if (error) report.failed.push(error);
      else report.replaced.push(name);
      continue;
    }
    record?.guardOff?.(); // a guard that is back stops blocking in its name
    const added = adopt(state, candidate);
    if (candidate.manifest.activation !== 'lazy') {
      const failed = await activate(state, name).then(() => undefined, (error: PlinthError) => error);
      if (failed) {
        report.failed.push(failed);
        continue;
      }
    }
    await state.hooks.manifest.promise(added.info);
    report.added.push(name);
  }
  for (const excluded of resolution.excluded) {
    const record = state.records.get(excluded.name);
    if (!record || !isRunning(record)) exclude(state, excluded);
  }
  for (const [name, record] of state.records) if (!isRunning(record) && !chosen.has(name) && !resolution.excluded.some((e) => e.name === name)) state.records.delete(name);
  return report;
}

/** Stops a running plugin for good: owners drop its declarations (`unload`), then its teardown runs and its registrations go. */
async function stop(state: KernelState, record: PluginRecord): Promise<void> {
  await state.hooks.unload.promise(record.info);
  const error = await release(state, record);
  if (error) reportError(state, error);
  state.services!.undeclare(record.info.name);
  forgetEvents(state, record.info.name);
}

/** Teardown and unregistration of one running (or lazy) plugin, under the teardown limit. */
function release(state: KernelState, record: PluginRecord): Promise<PlinthError | undefined> {
  const index = state.loadOrder.indexOf(record);
  if (index !== -1) state.loadOrder.splice(index, 1);
  return stopOne(
    {
      name: record.info.name,
      teardown: record.teardown,
      stop: () => record.abort.abort(new PlinthError('PLN_E_PLUGIN_STOPPED', `plugin "${record.info.name}" was stopped`, { plugin: record.info.name })),
      release: () => {
        record.api?.dispose();
        record.state = 'stopped';
      },
    },
    state.timeouts.teardown,
  );
}

/**
 * Swaps `old` for the plugin in `candidate`: the new version is checked, freshly
 * imported and set up with its registrations held back; only then does the old
 * one go and the new one's registrations apply. Returns the error that kept the old one.
 */
async function replace(state: KernelState, old: PluginRecord, candidate: Candidate): Promise<PlinthError | undefined> {
  const next = adopt(state, candidate, false);
  // A waiting eager plugin is set up by its replacement: that is what proves the new version loads.
  if (old.state !== 'lazy' || (old.deferred && candidate.manifest.activation !== 'lazy')) {
    next.state = 'loading';
    const started = performance.now();
    try {
      await startDependencies(state, next);
      await setUp(state, next, true);
    } catch (error) {
      const safe = redactError(isPlinthError(error) ? error : wrapPluginError('PLN_E_PLUGIN_SETUP', next.info.name, 'setup', error), state.redactor);
      next.abort.abort(safe);
      next.api?.dispose();
      reportError(state, safe);
      return safe;
    }
    const at = state.loadOrder.indexOf(old);
    const error = await release(state, old);
    if (error) reportError(state, error);
    next.api!.commit();
    next.loadMs = performance.now() - started;
    next.state = 'active';
    state.loadOrder.splice(at === -1 ? state.loadOrder.length : at, 0, next);
    next.activation = Promise.resolve();
  }
  state.records.set(next.info.name, next);
  forgetEvents(state, next.info.name);
  indexEvents(state, next);
  await catchUp(state, next);
  await state.hooks.manifest.promise(next.info);
  return undefined;
}
