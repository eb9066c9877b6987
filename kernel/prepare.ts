/**
 * Preparation, before any plugin code runs: the settings read and merged, every
 * plugin folder discovered, what the workspace may not set dropped, unknown keys
 * warned, the resolution, and from it the plugin table (records.ts), the
 * services' declarations and the settings as plugins see them. A live change
 * reads, discovers and resolves again through the same steps (reconcile.ts).
 */
import { resolve as resolvePath } from 'node:path';
import type { PlinthError } from '../sdk/errors.js';
import { KERNEL_API_VERSION } from '../sdk/version.js';
import { activate } from './activation.js';
import { inlineCandidate, withoutShadowing } from './candidates.js';
import { disabledPlugins, loadConfig, pluginDirScopes, settingsFiles, timeouts } from './config/load.js';
import { redactSettings } from './config/plugin-settings.js';
import { knownKeys, unknownKeys } from './config/unknown-keys.js';
import { restrictWorkspace, workspacePolicy } from './config/workspace-policy.js';
import { discoverPlugins } from './discovery.js';
import { builtinPluginsDir } from './paths.js';
import { adopt, exclude } from './records.js';
import { resolve } from './resolve/index.js';
import { ServiceRegistry, serviceChoices } from './services.js';
import { type KernelState, configOf, reportError } from './state.js';
import type { Candidate, PluginSource, Resolution } from './types.js';

/** What discovery found: the candidates that take part, the coded errors, and every manifest read (for the workspace policy and known keys). */
export interface Found {
  candidates: Candidate[];
  invalid: PlinthError[];
  manifests: Candidate['manifest'][];
}

/**
 * Reads settings and every manifest and resolves them; imports no plugin code.
 * Throws PLN_E_CONFIG_* when settings are invalid.
 */
export async function prepare(state: KernelState): Promise<Resolution> {
  state.started = performance.now();
  const loaded = await loadSettings(state);

  const sources: Array<{ dir: string; source: PluginSource }> = [];
  if (state.options.builtin !== false) sources.push({ dir: builtinPluginsDir(), source: 'builtin' });
  sources.push({ dir: resolvePath(state.home, 'plugins'), source: 'user' });
  sources.push({ dir: resolvePath(state.workspace, '.plinth', 'plugins'), source: 'workspace' });
  // A folder named in a settings file counts as that file's source; only the
  // command line (or the host's own `pluginDirs`) names `path` folders.
  for (const { dir, scope } of pluginDirScopes(loaded)) sources.push({ dir: resolvePath(dir), source: scope });
  for (const dir of state.options.pluginDirs ?? []) sources.push({ dir: resolvePath(dir), source: 'path' });
  state.sources = sources;
  state.inline = (state.options.plugins ?? []).map((plugin) => inlineCandidate(plugin));
  const { found, config, ignored } = await readPlugins(state, loaded);
  state.config = config;
  state.timeouts = timeouts(config);
  state.events.timeoutMs = state.timeouts.event;
  const files = settingsFiles(loaded);
  state.configProblems.push(...ignored, ...(files ? unknownKeys([files.user, files.workspace], knownKeys(found.manifests)) : []));
  for (const warning of state.configProblems) reportError(state, warning);
  const resolution = resolveFound(state, found);
  state.resolution = resolution;

  const sourceOf = new Map(resolution.plugins.map((c) => [c.manifest.name, c.source]));
  // For choices, a plugin that does not load counts by its best candidate: a workspace
  // choice of a workspace plugin that is excluded is ignored too, not an error for all.
  const choiceSource = (name: string) => sourceOf.get(name) ?? resolution.candidates.get(name)?.[0]?.source;
  state.services = new ServiceRegistry({
    choices: serviceChoices(config, choiceSource, (error) => reportError(state, error)),
    activate: (name) => activate(state, name),
    sourceOf: (name) => state.records.get(name)?.info.source ?? sourceOf.get(name),
    note: (text) => state.log.info(text),
  });
  for (const candidate of resolution.plugins) adopt(state, candidate);
  learnDeclarations(state, resolution);
  for (const excluded of resolution.excluded) if (!state.records.has(excluded.name)) exclude(state, excluded);
  for (const error of resolution.invalid) reportError(state, error);
  for (const excluded of resolution.excluded) {
    if (excluded.error.code !== 'PLN_E_PLUGIN_DISABLED') reportError(state, excluded.error);
  }
  await state.hooks.resolve.promise(resolution);
  return resolution;
}

/** The user and workspace settings files, merged, with the kernel's profile. */
export function loadSettings(state: KernelState): ReturnType<typeof loadConfig> {
  return loadConfig({ home: state.home, workspace: state.workspace, ...(state.options.profile !== undefined && { profile: state.options.profile }), env: state.env });
}

/** The links the settings name, every plugin folder, and the settings restricted by what the manifests say the workspace may not set. */
export async function readPlugins(state: KernelState, loaded: Awaited<ReturnType<typeof loadConfig>>) {
  // Only the user's own file links folders: a linked plugin loads unchecked, as the user's.
  state.live.link((loaded.layers ?? []).filter((l) => l.scope === 'user').flatMap((l) => l.settings.links ?? []));
  const found = await discoverAll(state);
  return { found, ...restrictWorkspace(loaded, workspacePolicy(found.manifests)) };
}

/** Candidates from every folder (builtin, user, workspace, settings, command line, live), then the inline ones; linked and removed applied. */
export async function discoverAll(state: KernelState): Promise<Found> {
  const found = await discoverPlugins([...state.sources, ...state.live.sources()], { workspace: state.workspace });
  const { kept, shadowing } = withoutShadowing([...found.candidates, ...state.inline]);
  return {
    candidates: state.live.select(kept),
    invalid: [...found.invalid, ...shadowing],
    manifests: [...found.candidates, ...state.inline].map((c) => c.manifest),
  };
}

/** The resolution of what was found, with the settings' and this run's disabled plugins. */
export function resolveFound(state: KernelState, found: { candidates: Candidate[]; invalid: PlinthError[] }): Resolution {
  return resolve({ candidates: found.candidates, invalid: found.invalid, kernelVersion: KERNEL_API_VERSION, disabled: state.live.disabled(disabledPlugins(configOf(state))) });
}

/** What every resolved plugin declares: the services it may provide, and its settings as other plugins see them. */
export function learnDeclarations(state: KernelState, resolution: Resolution): void {
  for (const { manifest } of resolution.plugins) {
    state.services!.undeclare(manifest.name);
    state.services!.declare(manifest.name, manifest.provides);
  }
  const decls = new Map([...resolution.candidates].map(([name, list]) => [name, list.flatMap((c) => c.manifest.settings)]));
  state.pluginConfig = redactSettings(configOf(state).settings, decls);
  state.pluginLayers = (configOf(state).layers ?? []).map((layer) => ({ ...layer, settings: redactSettings(layer.settings, decls) }));
}
