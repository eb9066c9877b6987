/**
 * Activation: one plugin set up, after its dependencies (the workspace gate,
 * the `load` hook, its settings kept in the secret store, its code imported,
 * `setup` under a time limit), a failure recorded with its code; the eager
 * plugins of a boot in resolution order; and a lazy plugin woken by an event.
 */
import { PlinthError, describeCause, isPlinthError, wrapPluginError } from '../sdk/errors.js';
import { canonicalEvent, type Decision } from '../sdk/events.js';
import { redactError } from '../internal/text/redact.js';
import { fillStoredSettings, hasStoredSettings, sensitiveValues } from './config/plugin-settings.js';
import { createCapabilities, optionalChecker } from './capabilities.js';
import { rejectUnknown } from './events.js';
import { status } from './inspection.js';
import { loadPluginCode } from './loader.js';
import { createPluginApi } from './plugin-api.js';
import { defer, guardWhileDown, knownPlugins } from './records.js';
import { runSetup } from './setup.js';
import { type KernelState, type PluginRecord, reportError } from './state.js';
import { callTapsOf } from './taps.js';
import { withTimeout } from './timeout.js';
import { PROJECT_SOURCES, type Resolution } from './types.js';

/**
 * Imports and sets up one plugin, after its dependencies. Resolves when it is
 * active; rejects with its error (also kept in its status) otherwise.
 */
export function activate(state: KernelState, name: string): Promise<void> {
  const record = state.records.get(name);
  if (!record) {
    return Promise.reject(new PlinthError('PLN_E_PLUGIN_UNKNOWN', `no plugin named "${name}" is installed`, { hint: 'run `plinth plugins list`' }));
  }
  if (record.state === 'excluded') return Promise.reject(record.error);
  record.activation ??= runActivation(state, record);
  return record.activation;
}

/** Boot's step: each eager plugin in resolution order, or with `only`, just those and the guards (the others wait, as lazy ones do). */
export async function activateEager(state: KernelState, resolution: Resolution, only: ReadonlySet<string> | undefined): Promise<void> {
  for (const candidate of resolution.plugins) {
    const { name, activation, guard } = candidate.manifest;
    if (activation === 'lazy') continue;
    // Guards are set up whatever the command: they check what every other plugin does.
    if (only && !only.has(name) && !guard) {
      defer(state, state.records.get(name)!);
      continue;
    }
    await activate(state, name).catch(() => undefined);
  }
}

/** Fires an agent event (name or alias), first activating the waiting plugins it wakes. */
export function emitWaking(state: KernelState, event: string, context: Record<string, unknown>): Promise<Decision> {
  // Not async: on the hot path (no lazy plugin waiting) this adds no promise.
  if (state.lazyByEvent.size > 0) {
    const name = canonicalEvent(event);
    if (name === undefined) return rejectUnknown(event);
    const waiting = state.lazyByEvent.get(name);
    if (waiting) {
      // Forgotten only once activated: an emit that arrives meanwhile waits too,
      // rather than passing a lazy guard that is still setting up.
      return Promise.all(waiting.map((plugin) => activate(state, plugin).catch(() => undefined))).then(() => {
        state.lazyByEvent.delete(name);
        return state.events.emit(name, context);
      });
    }
  }
  return state.events.emit(event, context);
}

async function runActivation(state: KernelState, record: PluginRecord): Promise<void> {
  if (state.closing) throw new PlinthError('PLN_E_KERNEL_CLOSED', 'the kernel is shutting down', { plugin: record.info.name });
  record.state = 'loading';
  const started = performance.now();
  try {
    await startDependencies(state, record);
    await setUp(state, record, false);
  } catch (error) {
    const coded = isPlinthError(error) ? error : wrapPluginError('PLN_E_PLUGIN_SETUP', record.info.name, 'setup', error);
    return fail(state, record, coded, coded.code === 'PLN_E_DEP_FAILED' ? 'skipped' : 'failed');
  }
  record.loadMs = performance.now() - started;
  record.state = 'active';
  state.loadOrder.push(record);
  state.log.debug(`loaded ${record.info.name}@${record.info.version} in ${record.loadMs.toFixed(1)} ms`);
  await catchUp(state, record);
}

/** Activates each dependency of `record`; throws PLN_E_DEP_FAILED naming the first that does not load. */
export async function startDependencies(state: KernelState, record: PluginRecord): Promise<void> {
  const { name, manifest } = record.info;
  for (const dependency of Object.keys(manifest.dependencies)) {
    try {
      await activate(state, dependency);
    } catch (cause) {
      const chain = isPlinthError(cause) && cause.plugin && cause.plugin !== dependency ? ` (via "${cause.plugin}")` : '';
      throw new PlinthError('PLN_E_DEP_FAILED', `plugin "${name}" was skipped: its dependency "${dependency}" did not load${chain}: ${describeCause(cause)}`, {
        plugin: name,
        hook: 'setup',
        cause,
        hint: `fix "${dependency}" first; \`plinth plugins why ${dependency}\` explains it`,
      });
    }
  }
}

/**
 * Checks, imports and sets up `record` (its settings, the `load` gate, its code, `setup`);
 * throws its coded error. `staged`: its registrations wait for `api.commit()` (a replacement).
 */
export async function setUp(state: KernelState, record: PluginRecord, staged: boolean): Promise<void> {
  const { name, manifest } = record.info;
  if (record.error) throw record.error; // its settings were invalid
  if (PROJECT_SOURCES.has(record.info.source) && state.hooks.load.taps.length === 0) {
    // Fail closed: code that came with the project runs only if something checks it first.
    throw new PlinthError('PLN_E_PLUGIN_REFUSED', `plugin "${name}" was refused: it is a ${record.info.source} plugin and no plugin checks ${record.info.source} plugins before their code runs`, {
      plugin: name,
      hook: 'load',
      hint: 'enable the builtin trust plugin (it asks for approval of workspace plugins), or load the plugin with --plugin-dir if you trust it',
    });
  }
  try {
    const veto = await state.hooks.load.promise(record.info);
    if (typeof veto === 'string') throw new PlinthError('PLN_E_PLUGIN_REFUSED', `plugin "${name}" was refused: ${veto}`, { plugin: name, hook: 'load' });
  } catch (error) {
    throw isPlinthError(error) && error.code === 'PLN_E_PLUGIN_REFUSED' ? error : wrapPluginError('PLN_E_PLUGIN_REFUSED', name, 'load', error);
  }
  if (record.settings && hasStoredSettings(record.settings)) {
    // Sensitive values kept in the secret store (`plinth ext config`): read once the plugin may load, before its code sees them.
    const stored = fillStoredSettings(name, manifest.settings, record.settings, state.env, () => state.kernel.get('secrets'));
    record.settings = await withTimeout(stored, state.timeouts.setup, () => new PlinthError('PLN_E_HOOK_TIMEOUT', `plugin "${name}": the secret store did not answer in time`, { plugin: name, hook: 'settings' }));
    for (const secret of sensitiveValues(manifest.settings, record.settings)) state.redactor.add(secret);
  }
  const api = createPluginApi(
    {
      info: record.info,
      hooks: state.hooks,
      events: state.events,
      services: state.services!,
      config: state.pluginConfig,
      configLayers: state.pluginLayers,
      hookTimeoutMs: state.timeouts.setup,
      report: (error) => reportError(state, error),
      knownPlugins: () => knownPlugins(state),
      kernel: state.kernel,
    },
    { staged },
  );
  record.api = api;
  // After boot every import is fresh: an enabled, reloaded or updated plugin runs the code on disk now.
  const definition = record.candidate && (manifest.main !== undefined || record.candidate.definition) ? await loadPluginCode(record.candidate, state.readyInfo !== undefined) : undefined;
  if (definition) {
    const context = {
      ...record.info,
      settings: record.settings ?? {},
      log: state.log.child(name),
      paths: { home: state.home, workspace: state.workspace },
      signal: record.abort.signal,
      ...createCapabilities({
        info: record.info,
        home: state.home,
        workspace: state.workspace,
        owner: record.abort.signal,
        launcher: () => state.kernel.get('launcher'),
        mcp: () => state.kernel.get('mcp'),
        checker: () => optionalChecker(() => state.kernel.get('capabilities')),
      }),
    };
    const teardown = await runSetup(definition, api.kernel, context, state.timeouts.setup);
    if (teardown) record.teardown = teardown;
  }
  const replay = api.settled();
  if (replay) await withTimeout(replay, state.timeouts.setup, () => new PlinthError('PLN_E_HOOK_TIMEOUT', `plugin "${name}" did not finish reading manifests in time`, { plugin: name, hook: 'manifest' }));
}

/** A plugin that starts after `ready` gets its own `ready` and `serve` taps called, as if it had been there. */
export async function catchUp(state: KernelState, record: PluginRecord): Promise<void> {
  if (!state.readyInfo) return;
  await callTapsOf(state.hooks.ready, record.info.name, { ...state.readyInfo, plugins: status(state) });
  if (state.served) await callTapsOf(state.hooks.serve, record.info.name);
}

function fail(state: KernelState, record: PluginRecord, error: PlinthError, to: 'failed' | 'skipped' = 'failed'): never {
  const safe = redactError(error, state.redactor);
  record.state = to;
  record.error = safe;
  record.abort.abort(safe);
  record.api?.dispose();
  guardWhileDown(state, record, safe);
  reportError(state, safe);
  throw safe;
}
