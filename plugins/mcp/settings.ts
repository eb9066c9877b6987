/** The mcp plugin's own settings (declared in manifest.json), checked once at setup. */
import { parseSettings } from 'plinth/sdk';
import { mcpProtocolSchema } from 'plinth/internal';
import { z } from 'zod';

// setTimeout fires at once for delays above 2^31-1 ms: a larger value would mean "no time at all".
const MAX_TIMER_MS = 2_147_483_647;
const ms = z.number().int().positive().max(MAX_TIMER_MS);

const settingsSchema = z.object({
  connectTimeout: ms,
  firstStartTimeout: ms,
  callTimeout: ms,
  inputRounds: z.number().int().positive().max(100),
  serverLogLevel: z.enum(['', 'debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']),
  retries: z.number().int().nonnegative().max(20),
  retryBaseMs: z.number().int().nonnegative().max(MAX_TIMER_MS),
  startOnServe: z.boolean(),
  /** The era of a server whose entry does not say (`protocol`): auto, legacy or a pinned modern revision. */
  protocol: mcpProtocolSchema,
});

/** The validated settings of the mcp plugin. */
export type McpSettings = z.infer<typeof settingsSchema>;

/** The validated settings; the kernel already applied defaults and checked types, this checks values. */
export function mcpSettings(values: Readonly<Record<string, unknown>>): McpSettings {
  return parseSettings('mcp', settingsSchema, values);
}
