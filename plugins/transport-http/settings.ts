/** The streamable HTTP transport's settings (declared in manifest.json), checked once at setup. */
import { parseSettings } from 'plinth/sdk';
import { z } from 'zod';

const settingsSchema = z.object({
  reconnectDelayMs: z.number().int().min(0),
  reconnectMaxDelayMs: z.number().int().min(0),
  reconnectGrowFactor: z.number().min(1),
  reconnectRetries: z.number().int().min(0),
  terminateTimeoutMs: z.number().int().min(0),
});

export type HttpSettings = z.infer<typeof settingsSchema>;

/** The defaults, as manifest.json declares them (for hosts and tests that build a factory without the kernel). */
export const HTTP_DEFAULTS: HttpSettings = {
  reconnectDelayMs: 1000,
  reconnectMaxDelayMs: 30_000,
  reconnectGrowFactor: 1.5,
  reconnectRetries: 5,
  terminateTimeoutMs: 2000,
};

/** The validated settings; the kernel already applied defaults and checked types, this checks ranges. */
export function httpSettings(values: Readonly<Record<string, unknown>>): HttpSettings {
  return parseSettings('transport-http', settingsSchema, { ...HTTP_DEFAULTS, ...values });
}
