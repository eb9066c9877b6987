/** The gateway plugin's settings (declared in manifest.json), checked once at setup. */
import { parseSettings } from 'plinth/sdk';
import { z } from 'zod';

const MAX_TIMER_MS = 2_147_483_647;
const ms = z.number().int().positive().max(MAX_TIMER_MS);

const settingsSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65_535),
  token: z.string().optional(),
  allowedHosts: z.array(z.string().min(1)),
  allowedOrigins: z.array(z.string().min(1)),
  maxSessions: z.number().int().positive().max(100_000),
  sessionIdleMs: ms,
  maxBodyBytes: z.number().int().positive().max(1 << 30),
  maxBufferedBytes: z.number().int().positive().max(1 << 30),
  startWait: z.number().int().nonnegative().max(MAX_TIMER_MS),
  clientTimeout: ms,
  toolMode: z.enum(['all', 'search']),
  pinnedTools: z.array(z.string().min(1)),
  instance: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, "_" and "-", at most 40')
    .optional(),
});

/** The validated settings of the gateway plugin. */
export type GatewaySettings = z.infer<typeof settingsSchema>;

/** The validated settings; the kernel already applied defaults and checked types, this checks values. */
export function gatewaySettings(values: Readonly<Record<string, unknown>>): GatewaySettings {
  return parseSettings('gateway', settingsSchema, values);
}
