/** The hooks plugin's own settings (declared in manifest.json), checked once at setup. */
import { parseSettings } from 'plinth/sdk';
import { z } from 'zod';

const positiveInt = (unit: string) =>
  z.int({ error: `expected a whole number${unit}` }).positive({ error: `expected a positive integer${unit}` });

const settingsSchema = z.object({
  timeout: positiveInt(' of milliseconds'),
  allowedCommands: z.array(z.string().min(1, { error: 'expected a program name or an absolute path, not an empty string' })),
  maxOutputBytes: positiveInt(' of bytes'),
  strategy: z.enum(['sequential', 'parallel', 'optimized', 'priority'], { error: 'expected "sequential", "parallel", "optimized" or "priority"' }),
  perMinute: positiveInt('').optional(),
  env: z.array(z.string().min(1, { error: 'expected an environment variable name, not an empty string' })),
  persistentIdleMs: positiveInt(' of milliseconds'),
  traceSize: positiveInt(''),
  shellCommands: z.array(z.enum(['user', 'workspace', 'extension', 'downloaded', 'builtin'], { error: 'expected hook sources: "user", "workspace", "extension", "downloaded" or "builtin"' })),
  // Read leniently: a name that is no event is a warning of `hooks validate`, never a reason for the guard not to start.
  hostEvents: z.array(z.string({ error: 'expected event names' })).optional(),
  watchDebounceMs: z.int({ error: 'expected a whole number of milliseconds' }).nonnegative({ error: 'expected 0 or more milliseconds' }),
});

export type HookSettings = z.infer<typeof settingsSchema>;

/**
 * The validated settings; the kernel already applied defaults and checked types, this checks values.
 * @throws PlinthError `PLN_E_SETTING_INVALID` naming each bad key (`plugins.hooks.settings.perMinute: expected a positive integer`).
 */
export function hookSettings(values: Readonly<Record<string, unknown>>): HookSettings {
  return parseSettings('hooks', settingsSchema, values);
}
