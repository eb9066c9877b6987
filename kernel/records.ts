/**
 * The plugin table: a record for each resolved plugin (its settings resolved,
 * so that its secrets are known to the redactor before any code runs, and the
 * events that wake it while it waits) and for each plugin resolution left out
 * (blocking the events it guards, unless the user disabled it).
 */
import { setMaxListeners } from 'node:events';
import { PlinthError, isPlinthError, wrapPluginError } from '../sdk/errors.js';
import { canonicalEvent } from '../sdk/events.js';
import type { PluginInfo } from '../sdk/plugin.js';
import { redactError } from '../internal/text/redact.js';
import { isStoredSettingRef } from '../internal/settings/stored.js';
import { resolvePluginSettings, sensitiveValues } from './config/plugin-settings.js';
import { parseManifestOrThrow } from './candidates.js';
import { blockGuardedEvents, guardedEvents } from './guards.js';
import { isRunning } from './live.js';
import { type KernelState, type PluginRecord, configOf, reportError } from './state.js';
import type { Candidate, Resolution } from './types.js';

/**
 * A record for a resolved candidate, its settings resolved (secrets known to the
 * redactor before any code runs) and its events indexed; `keep: false` for a
 * replacement that is not in the table until it has set up.
 */
export function adopt(state: KernelState, candidate: Candidate, keep = true): PluginRecord {
  const { manifest } = candidate;
  const info: PluginInfo = { name: manifest.name, version: manifest.version, source: candidate.source, dir: candidate.dir, manifest, ...(candidate.linked && { linked: true as const }) };
  const record: PluginRecord = { info, candidate, state: manifest.activation === 'lazy' ? 'lazy' : 'loading', abort: lifetime() };
  resolveSettings(state, record);
  if (keep) {
    state.records.set(info.name, record);
    indexEvents(state, record);
  }
  return record;
}

/**
 * The controller of a plugin's lifetime (`ctx.signal`). Its signal has a listener per thing the plugin
 * keeps open until teardown (a connection per server, a watcher per file), each removed when that thing
 * closes: twenty servers are not a leak, so Node's warning past ten listeners is turned off for it.
 */
function lifetime(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** A record for a plugin resolution left out; it guards its events unless the user disabled it. */
export function exclude(state: KernelState, excluded: Resolution['excluded'][number]): void {
  const { candidate, name, error } = excluded;
  const manifest = candidate?.manifest ?? parseManifestOrThrow({ name, version: '0.0.0', kernel: '*' });
  // A linked folder stays linked while it is excluded (disabled): what `ext list` and `plugins list` show.
  const info: PluginInfo = { name, version: candidate ? manifest.version : '', source: candidate?.source ?? 'path', dir: candidate?.dir ?? '', manifest, ...(candidate?.linked && { linked: true as const }) };
  const previous = state.records.get(name);
  const record: PluginRecord = { info, candidate, state: 'excluded', error, abort: lifetime(), guardOff: previous?.guardOff };
  state.records.set(name, record);
  if (error.code !== 'PLN_E_PLUGIN_DISABLED') guardWhileDown(state, record, redactError(error, state.redactor));
  else {
    record.guardOff?.();
    record.guardOff = undefined;
  }
}

// Settings are checked for every resolved plugin at prepare time, so secrets are
// known to the redactor before any code (lazy or not) could log them.
function resolveSettings(state: KernelState, record: PluginRecord): void {
  const { name, manifest } = record.info;
  try {
    const settings = resolvePluginSettings(name, manifest.settings, configOf(state).settings.plugins?.[name]?.settings, state.env);
    for (const secret of sensitiveValues(manifest.settings, settings)) state.redactor.add(secret);
    record.settings = settings;
  } catch (error) {
    record.error = isPlinthError(error) ? error : wrapPluginError('PLN_E_SETTING_INVALID', name, 'settings', error);
  }
}

/**
 * Checks the events a manifest names (`events`, `guards`); for a lazy plugin,
 * remembers them as the events that activate it.
 */
export function indexEvents(state: KernelState, record: PluginRecord): void {
  const { events, guards, activation } = record.info.manifest;
  for (const event of new Set([...events, ...guards])) {
    const name = canonicalEvent(event);
    if (name === undefined) {
      reportError(state, new PlinthError('PLN_E_EVENT_UNKNOWN', `plugin "${record.info.name}" declares unknown event "${event}"`, { plugin: record.info.name, hook: 'manifest' }));
      continue;
    }
    if (activation === 'lazy') wakeOn(state, name, record.info.name);
  }
}

/** An eager plugin a scoped boot leaves waiting: from now on it starts as a lazy one does (its events were checked at adopt). */
export function defer(state: KernelState, record: PluginRecord): void {
  if (record.state !== 'loading') return;
  record.state = 'lazy';
  record.deferred = true;
  const { events, guards } = record.info.manifest;
  for (const event of new Set([...events, ...guards])) {
    const name = canonicalEvent(event);
    if (name !== undefined) wakeOn(state, name, record.info.name);
  }
}

function wakeOn(state: KernelState, event: string, plugin: string): void {
  const list = state.lazyByEvent.get(event) ?? [];
  list.push(plugin);
  state.lazyByEvent.set(event, list);
}

/** Drops `name` from the plugins that an event activates. */
export function forgetEvents(state: KernelState, name: string): void {
  for (const [event, names] of state.lazyByEvent) {
    const rest = names.filter((n) => n !== name);
    if (rest.length > 0) state.lazyByEvent.set(event, rest);
    else state.lazyByEvent.delete(event);
  }
}

/**
 * While `record` is not running, the events it guards are blocked in its name (see guards.ts):
 * those its manifest declares and those any of the user's candidates of its name declares.
 */
export function guardWhileDown(state: KernelState, record: PluginRecord, error: PlinthError): void {
  if (record.guardOff) return;
  const { name } = record.info;
  const events = guardedEvents(record.candidate ?? record.info, state.resolution?.candidates.get(name) ?? []);
  record.guardOff = blockGuardedEvents(state.events, name, events, record.state, error);
}

/** The running plugins (active, waiting or loading), as plugins see them. */
export function knownPlugins(state: KernelState): PluginInfo[] {
  return [...state.records.values()].filter(isRunning).map((record) => record.info);
}

/** The declared settings of `plugin` that name an `envVar`, as environment variables (see PluginKernel.settingsEnv). */
export function settingsEnv(state: KernelState, plugin: string): Readonly<Record<string, string>> {
  const record = state.records.get(plugin);
  const env: Record<string, string> = {};
  if (!record?.settings) return env;
  for (const decl of record.info.manifest.settings) {
    const value = record.settings[decl.name];
    if (decl.envVar === undefined || value === undefined || value === null || isStoredSettingRef(value)) continue;
    env[decl.envVar] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return env;
}
