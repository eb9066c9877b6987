/** The hooks plugin's own settings (declared in manifest.json), checked once at setup. */
import { z } from 'zod';

const settingsSchema = z.object({
  timeout: z.number().int().positive(),
  allowedCommands: z.array(z.string().min(1)),
  maxOutputBytes: z.number().int().positive(),
  strategy: z.enum(['sequential', 'parallel', 'optimized', 'priority']),
  perMinute: z.number().int().positive().optional(),
  env: z.array(z.string().min(1)),
  persistentIdleMs: z.number().int().positive(),
  traceSize: z.number().int().positive(),
  watchDebounceMs: z.number().int().nonnegative(),
});

export type HookSettings = z.infer<typeof settingsSchema>;

/** The validated settings; the kernel already applied defaults and checked types, this checks values. */
export function hookSettings(values: Readonly<Record<string, unknown>>): HookSettings {
  return settingsSchema.parse(values);
}
