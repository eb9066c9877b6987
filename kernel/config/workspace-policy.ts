/**
 * What a workspace settings file may not do. The workspace file comes with the
 * project (a cloned repository): it may tighten what the user allows, never
 * loosen it. So it cannot set a setting a plugin marks `scope: "user"` (one that
 * names code to load or run, or loosens a guard), cannot disable a plugin whose
 * manifest says `guard: true`, cannot enable a plugin the user disabled, and
 * cannot set the kernel's time limits. Such values are dropped from the
 * workspace file (and from its profiles) before the files are merged, each with
 * a `PLN_E_WORKSPACE_SETTING_IGNORED` warning naming the file and the key.
 */
import { jsonPath, type Manifest } from '../../sdk/manifest.js';
import { PlinthError } from '../../sdk/errors.js';
import { type Config, type SettingsFile, combineFiles, settingsFiles } from './load.js';
import type { PluginEntry, ProfileSettings, Settings } from './schema.js';

/** What the manifests say a workspace file may not set. */
export interface WorkspacePolicy {
  /** Plugins a workspace file cannot disable. */
  readonly guards: ReadonlySet<string>;
  /** Plugin name → the settings only the user may set. */
  readonly userOnly: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * Kernel-owned top-level keys only the user may set, and why. `timeouts`
 * decide whether a guard plugin gets to load (`setup`) and a guard handler to
 * answer (`event`) before plinth moves on.
 */
export const USER_ONLY_KEYS: Readonly<Record<string, string>> = Object.freeze({
  timeouts: 'the time limits decide whether guard plugins get to load and answer',
  links: 'a linked folder loads as the user\'s own plugin, which trust does not check',
  registries: 'a cloned repository must not choose where plugins are downloaded from',
  mcpRegistries: 'a cloned repository must not choose where MCP servers are installed from',
});

/**
 * The policy of a set of manifests. Every version of a plugin counts: a mark
 * in any of them holds, so a newer version without the mark cannot lift it.
 */
export function workspacePolicy(manifests: Iterable<Pick<Manifest, 'name' | 'guard' | 'guards' | 'settings'>>): WorkspacePolicy {
  const guards = new Set<string>();
  const userOnly = new Map<string, Set<string>>();
  for (const manifest of manifests) {
    // A plugin that guards events is a guard whether or not it says `guard: true`.
    if (manifest.guard || manifest.guards.length > 0) guards.add(manifest.name);
    for (const decl of manifest.settings) {
      if (decl.scope !== 'user') continue;
      const names = userOnly.get(manifest.name) ?? new Set<string>();
      names.add(decl.name);
      userOnly.set(manifest.name, names);
    }
  }
  return { guards, userOnly };
}

/**
 * `config` with the workspace file's forbidden values dropped and the files
 * merged again, and a warning per value dropped (for the workspace file itself
 * and for the profile in use). A config built by hand (no layers) is returned
 * as it is.
 */
export function restrictWorkspace(config: Config, policy: WorkspacePolicy): { config: Config; ignored: PlinthError[] } {
  const files = settingsFiles(config);
  if (!files) return { config, ignored: [] };
  const ignored: PlinthError[] = [];
  const { user, workspace } = files;
  const userDisables = (plugin: string): boolean =>
    [user.settings, config.profile !== undefined ? ownProfile(user.settings, config.profile) : undefined].some((s) => s?.plugins?.[plugin]?.enabled === false);

  const restrictLayer = <T extends Settings | ProfileSettings>(layer: T, prefix: readonly string[], report: boolean): T => {
    const warn = (keyPath: readonly string[], reason: string, hint: string): void => {
      if (!report) return;
      const at = jsonPath([...prefix, ...keyPath]);
      ignored.push(
        new PlinthError('PLN_E_WORKSPACE_SETTING_IGNORED', `${workspace.file.file}: ${at} is ignored: ${reason}; a project's settings may tighten yours, never loosen them`, {
          hint,
          details: { file: workspace.file.file, path: at },
        }),
      );
    };
    const out: Record<string, unknown> = { ...layer };
    for (const [key, reason] of Object.entries(USER_ONLY_KEYS)) {
      if (!Object.hasOwn(out, key)) continue;
      delete out[key];
      warn([key], reason, `set "${key}" in your user settings ($PLINTH_HOME/settings.json) if you want it`);
    }
    if (layer.plugins) {
      const plugins: Record<string, PluginEntry> = {};
      for (const [name, entry] of Object.entries(layer.plugins)) {
        const kept: PluginEntry = { ...entry };
        if (entry.enabled === false && policy.guards.has(name)) {
          delete kept.enabled;
          warn(['plugins', name, 'enabled'], `"${name}" is a guard plugin, which only your user settings can disable`, `to disable it, set plugins.${name}.enabled to false in your user settings ($PLINTH_HOME/settings.json)`);
        }
        if (entry.enabled === true) {
          // `true` can only undo a user's `false`: said only when it would have.
          delete kept.enabled;
          if (userDisables(name)) {
            warn(['plugins', name, 'enabled'], `your user settings disable "${name}"`, `to enable it, change plugins.${name}.enabled in your user settings ($PLINTH_HOME/settings.json)`);
          }
        }
        const userOnly = policy.userOnly.get(name);
        if (entry.settings && userOnly) {
          const values: Record<string, unknown> = { ...entry.settings };
          for (const setting of userOnly) {
            if (!Object.hasOwn(values, setting)) continue;
            delete values[setting];
            warn(
              ['plugins', name, 'settings', setting],
              `plugin "${name}" marks "${setting}" as a user setting (it names code to load or run, or loosens a guard)`,
              `set plugins.${name}.settings.${setting} in your user settings ($PLINTH_HOME/settings.json) if you want it, or remove it from the project's file`,
            );
          }
          kept.settings = values;
        }
        define(plugins, name, kept);
      }
      out.plugins = plugins;
    }
    return out as T;
  };

  const settings = restrictLayer(workspace.settings, [], true);
  if (workspace.settings.profiles) {
    const profiles: Record<string, ProfileSettings> = {};
    for (const [name, profile] of Object.entries(workspace.settings.profiles)) {
      define(profiles, name, restrictLayer(profile, ['profiles', name], name === config.profile));
    }
    settings.profiles = profiles;
  }
  if (ignored.length === 0 && !changed(workspace.settings, settings)) return { config, ignored };
  const restricted: SettingsFile = { file: workspace.file, settings };
  return { config: combineFiles(user, restricted, config.profile), ignored };
}

function ownProfile(settings: Settings, profile: string): ProfileSettings | undefined {
  return settings.profiles && Object.hasOwn(settings.profiles, profile) ? settings.profiles[profile] : undefined;
}

function changed(before: unknown, after: unknown): boolean {
  return JSON.stringify(before) !== JSON.stringify(after);
}

/** Own-property assignment, so a `"__proto__"` name from a JSON file stays data. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
