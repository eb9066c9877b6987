/**
 * The shape of a `settings.json` file. The kernel validates only the keys it
 * owns; sections owned by plugins (`hooks`, `mcpServers`, …) pass through
 * untouched for those plugins to read and check.
 */
import { z } from 'zod';
import { pluginName } from '../../sdk/manifest.js';

// setTimeout fires at once (with only a warning) for delays above 2^31-1 ms,
// so a larger timeout would mean "no time at all" rather than "a long time".
const MAX_TIMER_MS = 2_147_483_647;

const milliseconds = z
  .int({ error: 'expected a whole number of milliseconds' })
  .positive({ error: 'expected a positive number of milliseconds' })
  .max(MAX_TIMER_MS, { error: `expected at most ${MAX_TIMER_MS} milliseconds (about 24.8 days)` });

/** Per-phase time limits in milliseconds. */
export const timeoutsSchema = z.strictObject({
  /** Time one plugin's setup may take before boot fails naming it. */
  setup: milliseconds.optional(),
  /** Time one plugin's teardown may take before shutdown moves on. */
  teardown: milliseconds.optional(),
  /** Time the whole shutdown may take. */
  shutdown: milliseconds.optional(),
  /** Time one event may wait for its in-process handlers before the hung one is named and the event blocked. */
  event: milliseconds.optional(),
});

/** One plugin's entry under `plugins`: whether it loads and its settings values. */
export const pluginEntrySchema = z.strictObject({
  enabled: z.boolean({ error: 'expected true or false' }).optional(),
  /** Values for the settings the plugin declares in its manifest; checked against those declarations at load. */
  settings: z.record(z.string(), z.unknown(), { error: 'expected an object of setting values' }).optional(),
});

const overlayShape = {
  plugins: z.record(pluginName, pluginEntrySchema).optional(),
  /** Extra plugin folders; relative paths are relative to the folder of the settings file naming them. */
  pluginDirs: z.array(z.string().min(1, { error: 'expected a folder path' })).optional(),
  /** Plugin folders under development (`plinth ext link`): each is chosen over any other plugin of its name. User settings only. */
  links: z.array(z.string().min(1, { error: 'expected a plugin folder path' })).optional(),
  /** Service name → the plugin that provides it, when several plugins could. */
  services: z.record(z.string().min(1), pluginName).optional(),
  timeouts: timeoutsSchema.optional(),
};

/** A profile: the same keys as a settings file, without `profiles`. Overlaid on the merged settings. */
export const profileSchema = z.looseObject(overlayShape);

/** A whole `settings.json` file. */
export const settingsSchema = z.looseObject({
  ...overlayShape,
  /** Named deployments, selected with `--profile` or `PLINTH_PROFILE`. */
  profiles: z.record(z.string().min(1), profileSchema).optional(),
});

/** Validated settings: one file's, or the merged result. */
export type Settings = z.infer<typeof settingsSchema>;
/** One profile's overlay. */
export type ProfileSettings = z.infer<typeof profileSchema>;
/** One plugin's entry under `plugins`. */
export type PluginEntry = z.infer<typeof pluginEntrySchema>;
/** Per-phase time limits in milliseconds, every phase filled in. */
export type Timeouts = Required<z.infer<typeof timeoutsSchema>>;

/** Time limits used where settings name none. */
export const DEFAULT_TIMEOUTS: Readonly<Timeouts> = Object.freeze({
  setup: 10_000,
  teardown: 5_000,
  shutdown: 15_000,
  event: 60_000,
});
