/** The stdio transport's settings (declared in manifest.json), checked once at setup. */
import { parseSettings } from 'plinth/sdk';
import { z } from 'zod';

const settingsSchema = z.object({
  stderrTailBytes: z.number().int().min(256).max(16 * 1024 * 1024),
  killGraceMs: z.number().int().min(0).max(60_000),
  exitGraceMs: z.number().int().min(0).max(60_000),
});

export type StdioSettings = z.infer<typeof settingsSchema>;

/** The defaults, as manifest.json declares them (for hosts and tests that build a factory without the kernel). */
export const STDIO_DEFAULTS: StdioSettings = { stderrTailBytes: 16 * 1024, killGraceMs: 500, exitGraceMs: 2000 };

/** The validated settings; the kernel already applied defaults and checked types, this checks ranges. */
export function stdioSettings(values: Readonly<Record<string, unknown>>): StdioSettings {
  return parseSettings('transport-stdio', settingsSchema, { ...STDIO_DEFAULTS, ...values });
}
