/**
 * The health plugin, as the `mcp` commands use it when it is there: the HEALTH
 * column of `plinth mcp status` and manual restarts that reset its counters.
 * The health plugin is optional; without it the column is left out and
 * restarts go straight to the `mcp` service.
 */
import type { PluginKernel } from 'plinth/sdk';
import type { HealthService, ServerHealth } from 'plinth/sdk';

/** The `health` service when a loaded (or lazy) plugin provides it, else undefined. */
export async function healthService(kernel: PluginKernel): Promise<HealthService | undefined> {
  const provided = kernel.status().some((p) => p.provides.includes('health') && (p.state === 'active' || p.state === 'lazy'));
  if (!provided) return undefined;
  try {
    return await kernel.get('health');
  } catch {
    // A broken health plugin must not take `mcp status` down with it; `plinth up` reports it.
    return undefined;
  }
}

/**
 * Checks each connected server now (a one-shot command has no monitoring
 * history) and returns their health by name; servers the health plugin does not
 * monitor are absent.
 */
export async function healthOf(kernel: PluginKernel, servers: readonly string[]): Promise<Map<string, ServerHealth>> {
  const health = await healthService(kernel);
  const states = new Map<string, ServerHealth>();
  if (!health) return states;
  await Promise.all(
    servers.map(async (name) => {
      const state = await health.check(name).catch(() => undefined);
      if (state) states.set(name, state);
    }),
  );
  return states;
}
