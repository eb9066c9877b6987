/**
 * Whether a plugin is enabled by the settings files as they are now (read
 * again for every command, so a change made by another plinth counts), with
 * the kernel's rules: user, then workspace, then the profile's part of each
 * file; the last `enabled` set wins. A workspace file may tighten, never
 * loosen: its `false` for a guard plugin and every `true` it holds are ignored
 * (a `true` could only undo a user's `false`).
 */
import type { SettingsData } from './settings-file.js';

/** The two files' settings and the profile in use. */
export interface SettingsLayers {
  readonly user: SettingsData;
  readonly workspace: SettingsData;
  readonly profile: string | undefined;
}

/** Enabled, and the layer that decided (`user settings`, `workspace settings`, `profile <name>`) when one did. */
export interface EnabledState {
  readonly enabled: boolean;
  readonly from?: string;
}

/** The effective state of `name`; `guard`: a workspace file cannot disable it. */
export function enabledState(name: string, layers: SettingsLayers, guard: boolean): EnabledState {
  let state: EnabledState = { enabled: true };
  const apply = (settings: unknown, label: string, workspace: boolean): void => {
    const value = enabledIn(settings, name);
    if (value === undefined) return;
    if (workspace && (value === true || guard)) return;
    state = { enabled: value, from: label };
  };
  apply(layers.user, 'user settings', false);
  apply(layers.workspace, 'workspace settings', true);
  if (layers.profile !== undefined) {
    apply(profileOf(layers.user, layers.profile), `profile ${layers.profile}`, false);
    apply(profileOf(layers.workspace, layers.profile), `profile ${layers.profile}`, true);
  }
  return state;
}

/** The user's own settings (or their part of the profile) disable `name`. */
export function userDisables(name: string, layers: SettingsLayers): boolean {
  const inProfile = layers.profile === undefined ? undefined : enabledIn(profileOf(layers.user, layers.profile), name);
  return inProfile === false || (inProfile === undefined && enabledIn(layers.user, name) === false);
}

/** `settings.plugins[name].enabled` when it is a boolean. */
export function enabledIn(settings: unknown, name: string): boolean | undefined {
  const value = entryOf(settings, name)?.enabled;
  return typeof value === 'boolean' ? value : undefined;
}

/** `settings.plugins[name]` when it is an object. */
export function entryOf(settings: unknown, name: string): Record<string, unknown> | undefined {
  const plugins = objectOf(settings)?.plugins;
  const entry = objectOf(plugins) && Object.hasOwn(plugins as object, name) ? (plugins as Record<string, unknown>)[name] : undefined;
  return objectOf(entry);
}

/** `settings.profiles[profile]` when it is an object. */
export function profileOf(settings: unknown, profile: string): Record<string, unknown> | undefined {
  const profiles = objectOf(objectOf(settings)?.profiles);
  return profiles && Object.hasOwn(profiles, profile) ? objectOf(profiles[profile]) : undefined;
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
