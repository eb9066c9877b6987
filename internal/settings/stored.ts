/**
 * A sensitive setting kept in the `secrets` service rather than in a settings
 * file: the file holds `{ "$secret": "plugin-setting:<plugin>/<setting>" }` in
 * the value's place (`plinth ext config` writes it), and the kernel puts the
 * stored value there before the plugin is set up. The key is always the one
 * of that plugin and setting, so a file cannot point a setting at another
 * secret (an OAuth token, another plugin's key).
 */
export interface StoredSettingRef {
  readonly $secret: string;
}

/** The secret store key of a plugin's setting. */
export function storedSettingKey(plugin: string, setting: string): string {
  return `plugin-setting:${plugin}/${setting}`;
}

/** The reference a settings file holds for a stored setting. */
export function storedSettingRef(plugin: string, setting: string): StoredSettingRef {
  return { $secret: storedSettingKey(plugin, setting) };
}

/** `value` is a stored-setting reference (of any key: check it with {@link storedSettingKey}). */
export function isStoredSettingRef(value: unknown): value is StoredSettingRef {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && typeof (value as { $secret?: unknown }).$secret === 'string';
}
