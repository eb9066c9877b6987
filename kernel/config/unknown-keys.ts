/**
 * Keys in a settings file that nothing reads: a misspelt `mcpServer`, a
 * top-level `timeout`, `plugins.hokks`, an undeclared plugin setting. They are
 * not errors (a key may belong to a plugin installed later), but each is said
 * once per command, with the file, the JSON path and the key probably meant.
 */
import { jsonPath, type Manifest } from '../../sdk/manifest.js';
import { closestName } from '../../internal/text/suggest.js';
import { PlinthError } from '../../sdk/errors.js';
import type { SettingsFile } from './load.js';
import type { ProfileSettings, Settings } from './schema.js';

/** The top-level keys the kernel reads itself. */
export const KERNEL_KEYS: readonly string[] = Object.freeze(['$schema', 'plugins', 'pluginDirs', 'links', 'services', 'timeouts', 'profiles']);

/** What counts as known, from the manifests found. */
export interface KnownKeys {
  /** The kernel's keys and every plugin's `configKeys`. */
  readonly topLevel: ReadonlySet<string>;
  /** Plugin name → the settings it declares (every version found). */
  readonly plugins: ReadonlyMap<string, ReadonlySet<string>>;
}

/** The known keys of a set of manifests (every version of every plugin found). */
export function knownKeys(manifests: Iterable<Pick<Manifest, 'name' | 'settings' | 'configKeys'>>): KnownKeys {
  const topLevel = new Set(KERNEL_KEYS);
  const plugins = new Map<string, Set<string>>();
  for (const manifest of manifests) {
    for (const key of manifest.configKeys) topLevel.add(key);
    const names = plugins.get(manifest.name) ?? new Set<string>();
    for (const decl of manifest.settings) names.add(decl.name);
    plugins.set(manifest.name, names);
  }
  return { topLevel, plugins };
}

/**
 * A `PLN_E_CONFIG_UNKNOWN_KEY` warning for each unknown key of each file, in
 * the file itself and in each of its profiles: top-level keys, plugin names
 * under `plugins`, and keys of a known plugin's `settings`.
 */
export function unknownKeys(files: readonly SettingsFile[], known: KnownKeys): PlinthError[] {
  const found: PlinthError[] = [];
  for (const { file, settings } of files) {
    if (!file.exists) continue;
    const report = (at: readonly string[], key: string, choices: Iterable<string>, what: string): void => {
      const suggestion = closestName(key, choices);
      const where = jsonPath(at);
      found.push(
        new PlinthError('PLN_E_CONFIG_UNKNOWN_KEY', `${file.file}: unknown ${what} ${where}${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`, {
          hint: suggestion === undefined ? 'remove the key, or check the spelling; `plinth config validate` lists every problem' : `rename it to "${suggestion}"`,
          details: { file: file.file, path: where, key, ...(suggestion !== undefined && { suggestion }) },
        }),
      );
    };
    const check = (layer: Settings | ProfileSettings, prefix: readonly string[], inProfile: boolean): void => {
      const topLevel = inProfile ? [...known.topLevel].filter((k) => k !== 'profiles') : [...known.topLevel];
      for (const key of Object.keys(layer)) {
        if (!topLevel.includes(key)) report([...prefix, key], key, topLevel, 'key');
      }
      for (const [name, entry] of Object.entries(layer.plugins ?? {})) {
        const declared = known.plugins.get(name);
        if (declared === undefined) {
          report([...prefix, 'plugins', name], name, known.plugins.keys(), 'plugin');
          continue;
        }
        for (const setting of Object.keys(entry.settings ?? {})) {
          if (!declared.has(setting)) report([...prefix, 'plugins', name, 'settings', setting], setting, declared, 'setting');
        }
      }
    };
    check(settings, [], false);
    for (const [name, profile] of Object.entries(settings.profiles ?? {})) check(profile, ['profiles', name], true);
  }
  return found;
}
