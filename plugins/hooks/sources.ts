/**
 * Every hook definition, from every place one can be written: the settings
 * layers, plugin manifests and legacy files. A hook's source is decided here,
 * from where it was loaded — never from a path pattern, so a workspace (or a
 * cloned repository) inside the home folder is still `workspace`.
 *
 * Order and precedence:
 * 1. user settings, workspace settings (each file's own `hooks`);
 * 2. legacy files: `<home>/hooks/*.json` (user), `<workspace>/.plinth/hooks/*.json` (workspace);
 * 3. plugin manifests, in the order given;
 * 4. the selected profile's part of each settings file (`profiles.<name>.hooks`).
 *
 * Ids are unique: a second definition with an id already taken (say, `user:lint`
 * in user settings and in a user legacy file) is a `PLN_E_HOOK_DUPLICATE`
 * problem and is dropped; the first stays. Profile layers are the exception:
 * a profile's hook replaces, as a whole, the hook with the same id (keeping its
 * place in the list), or is added when there is none. Ids carry the source, so a
 * workspace profile can replace only workspace hooks, never a user hook.
 */
import { join, resolve } from 'node:path';
import { type ConfigLayerView, type PlinthError, type PluginInfo } from 'plinth/sdk';
import { entryFolder } from 'plinth/internal';
import { z } from 'zod';
import { normalizeSection, problem, type HookCollection, type HookDefaults } from './definition.js';
import { loadLegacyFolder } from './legacy.js';
import type { HookDefinition, HookSource } from './types.js';

/** What {@link collectHooks} reads: the kernel's `configLayers`, the plugins seen by the `manifest` hook, and the two folders. */
export interface HookSourceInputs {
  readonly layers: readonly ConfigLayerView[];
  readonly plugins: readonly PluginInfo[];
  /** The user folder (`PLINTH_HOME`). */
  readonly home: string;
  /** The workspace root. */
  readonly workspace: string;
}

/**
 * The source of a plugin's manifest hooks. The seam for the marketplace: it
 * will answer `downloaded` for plugins it installed; today every plugin that
 * is not builtin is an `extension`.
 */
export function pluginHookSource(plugin: Pick<PluginInfo, 'source' | 'name'>): HookSource {
  return plugin.source === 'builtin' ? 'builtin' : 'extension';
}

/** One plugin's manifest `hooks`: ids `<plugin>/<name>`, cwd the plugin folder (the workspace for in-memory plugins). */
export function manifestHooks(plugin: PluginInfo, defaults: HookDefaults, workspace: string, source: HookSource = pluginHookSource(plugin)): HookCollection {
  const peer = peerFolderOf(plugin.manifest);
  const manifestFile = peer?.file ?? (plugin.dir ? join(plugin.dir, 'manifest.json') : `plugin "${plugin.name}" (in memory)`);
  return normalizeSection(
    plugin.manifest.hooks,
    {
      source,
      origin: manifestFile,
      baseDir: plugin.dir || workspace,
      plugin: plugin.name,
      version: plugin.version,
      projectDir: workspace,
      ...(peer && { protocol: peer.format }),
    },
    defaults,
  );
}

const peerFolderSchema = z.object({ format: z.enum(['claude', 'gemini', 'codex']), file: z.string().optional() });

/**
 * A Claude Code plugin's or Gemini CLI extension's manifest, as the extensions plugin synthesises
 * it (`manifest.peer`): its `hooks` are in that peer's shape and dialect, and problems name its own file.
 */
function peerFolderOf(manifest: PluginInfo['manifest']): z.infer<typeof peerFolderSchema> | undefined {
  const parsed = peerFolderSchema.safeParse((manifest as { readonly peer?: unknown }).peer);
  return parsed.success ? parsed.data : undefined;
}

/** One settings layer's `hooks`: source the layer's scope, cwd defaulting to the workspace root or the user folder. */
export function layerHooks(layer: ConfigLayerView, defaults: HookDefaults, paths: { home: string; workspace: string }): HookCollection {
  return normalizeSection(
    layer.settings.hooks,
    {
      source: layer.scope,
      origin: layer.file,
      // The sdk's rule for the user's entries (hooks and MCP servers alike): the user folder, never the workspace.
      baseDir: entryFolder(layer.scope, paths),
      path: layer.profile !== undefined ? `profiles${pathKey(layer.profile)}.hooks` : 'hooks',
      projectDir: paths.workspace,
    },
    defaults,
  );
}

/** Collects and normalises every hook definition. Never throws for bad input: each problem names its file. */
export async function collectHooks(inputs: HookSourceInputs, defaults: HookDefaults): Promise<HookCollection> {
  return assembleHooks(inputs, await readLegacyHooks(inputs, defaults), defaults);
}

/** The legacy files of both folders (the only part of the sources read from disk): read once, then assembled as plugins come and go. */
export interface LegacyHooks {
  readonly user: HookCollection | undefined;
  readonly workspace: HookCollection;
}

export async function readLegacyHooks(inputs: Pick<HookSourceInputs, 'home' | 'workspace'>, defaults: HookDefaults): Promise<LegacyHooks> {
  const home = resolve(inputs.home);
  const workspace = resolve(inputs.workspace);
  const [user, workspaceLegacy] = await Promise.all([
    loadLegacyFolder(join(home, 'hooks'), { source: 'user', baseDir: home }, defaults),
    loadLegacyFolder(join(workspace, '.plinth', 'hooks'), { source: 'workspace', baseDir: workspace }, defaults),
  ]);
  // A workspace whose `.plinth` is the user folder itself (workspace = the
  // parent of PLINTH_HOME) would load the same files twice; they are loaded
  // once, as workspace hooks: the stricter of the two places they come from.
  return { user: join(workspace, '.plinth') !== home ? user : undefined, workspace: workspaceLegacy };
}

/** Every definition in precedence order (see the module comment), from the settings layers, `legacy` and the plugins; synchronous, so that a swap has no gap. */
export function assembleHooks(inputs: HookSourceInputs, legacy: LegacyHooks, defaults: HookDefaults): HookCollection {
  const home = resolve(inputs.home);
  const workspace = resolve(inputs.workspace);
  const problems: PlinthError[] = [];
  const byId = new Map<string, HookDefinition>();

  const add = (found: HookCollection): void => {
    problems.push(...found.problems);
    for (const hook of found.hooks) {
      const earlier = byId.get(hook.id);
      if (earlier) {
        const where = { origin: hook.origin, source: hook.source, ...(hook.plugin !== undefined && { plugin: hook.plugin }) };
        problems.push(problem('PLN_E_HOOK_DUPLICATE', where, '', `hook id "${hook.id}" is already defined in ${earlier.origin}; this one is ignored`, hook.name));
      } else {
        byId.set(hook.id, hook);
      }
    }
  };

  const baseLayers = inputs.layers.filter((l) => l.profile === undefined);
  const profileLayers = inputs.layers.filter((l) => l.profile !== undefined);
  for (const layer of baseLayers) add(layerHooks(layer, defaults, { home, workspace }));
  if (legacy.user) add(legacy.user);
  add(legacy.workspace);

  for (const plugin of inputs.plugins) add(manifestHooks(plugin, defaults, workspace));

  for (const layer of profileLayers) {
    const found = layerHooks(layer, defaults, { home, workspace });
    problems.push(...found.problems);
    for (const hook of found.hooks) byId.set(hook.id, hook); // replaces in place, or appends
  }

  return { hooks: [...byId.values()], problems };
}

function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
