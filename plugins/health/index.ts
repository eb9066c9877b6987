/**
 * The health plugin: checks the `mcp` service's servers (ping, or a list
 * request), moves each between healthy, degraded, restarting and failed,
 * restarts them with exponential backoff, and announces every transition as a
 * kernel `notification` event. Monitoring starts when the host stays up
 * (`serve`, i.e. `plinth up`) or when the `health` service is asked to start.
 */
import { definePlugin } from 'plinth/sdk';
import { HealthBoard } from './board.js';
import { HealthMonitor } from './monitor.js';
import { createHealthService } from './service.js';
import { healthSettings } from './settings.js';

export default definePlugin({
  setup(kernel, ctx) {
    const settings = healthSettings(ctx.settings);
    const board = new HealthBoard({
      log: ctx.log,
      redact: (text) => kernel.redact(text),
      emit: (change) => {
        // Nobody waits for the decision: a slow hook script must not hold up monitoring.
        kernel.emit('notification', { ...change }).catch((error: unknown) => {
          ctx.log.debug(`notification for "${change.server}" not delivered: ${error instanceof Error ? error.message : String(error)}`);
        });
      },
    });
    const monitor = new HealthMonitor({ settings, board, mcp: () => kernel.get('mcp'), log: ctx.log });
    kernel.provide('health', createHealthService(monitor, board));
    kernel.hooks.serve.tap(() => monitor.watch());
    // Before the mcp plugin stops its servers at shutdown, or their exits would look like crashes.
    kernel.hooks.shutdown.tap(() => monitor.close(), { before: 'mcp' });
    return () => monitor.close();
  },
});
