/** The health plugin's settings (declared in manifest.json), checked once at setup. */
import { parseSettings } from 'plinth/sdk';
import { z } from 'zod';

const ms = z.number().int().positive();
const count = z.number().int().positive();

const settingsSchema = z
  .object({
    interval: ms,
    timeout: ms,
    degradedMs: ms,
    failuresForDegraded: count,
    failuresForRestart: count,
    maxRestarts: z.number().int().nonnegative(),
    backoffBaseMs: ms,
    startRetryMs: ms,
  })
  .refine((s) => s.failuresForDegraded <= s.failuresForRestart, {
    message: 'failuresForDegraded must not exceed failuresForRestart (a server is degraded before it is restarted)',
    path: ['failuresForDegraded'],
  });

/** Validated settings of the health plugin. */
export type HealthSettings = z.infer<typeof settingsSchema>;

/** The validated settings; the kernel already applied defaults and checked types, this checks values. */
export function healthSettings(values: Readonly<Record<string, unknown>>): HealthSettings {
  return parseSettings('health', settingsSchema, values);
}

/**
 * Delay before automatic restart number `attempt` (1-based): `base`, then doubled
 * each time (1 s, 2 s, 4 s with the defaults).
 */
export function backoffDelay(base: number, attempt: number): number {
  return base * 2 ** Math.max(0, attempt - 1);
}
