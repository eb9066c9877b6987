/**
 * The launcher plugin: provides `launcher`, the one door through which
 * plugins start child processes (contract: sdk/contracts/launcher.ts). Lazy: imported
 * when a plugin first asks for the service. Its teardown kills every child
 * still running; `plinth up` shows the recent launches.
 */
import { definePlugin, optionalService, parseSettings, type StatusSection } from 'plinth/sdk';
import { z } from 'zod';
import { createLauncher } from './launcher.js';

export { createLauncher, type LauncherImpl, type LauncherOptions } from './launcher.js';

const settingsSchema = z.object({ traceSize: z.number().int().min(1).max(10_000) });

/** How many launches `plinth up` lists. */
const STATUS_ROWS = 20;

export default definePlugin({
  setup(kernel, ctx) {
    const settings = parseSettings('launcher', settingsSchema, ctx.settings);
    const launcher = createLauncher({ traceSize: settings.traceSize, redact: (text) => kernel.redact(text), sandbox: () => optionalService(kernel, 'sandbox') });
    kernel.provide('launcher', launcher);
    // Last, so that what other plugins' status taps started (MCP servers) is listed.
    kernel.hooks.status.tap((board) => board.add(traceSection(launcher.trace())), { stage: 100 });
    return () => launcher.close();
  },
});


function traceSection(entries: ReturnType<ReturnType<typeof createLauncher>['trace']>): StatusSection {
  const recent = entries.slice(-STATUS_ROWS);
  return {
    key: 'launches',
    title: `Child processes (last ${recent.length} of ${entries.length})`,
    head: ['plugin', 'program', 'pid', 'state', 'exit', 'ms'],
    rows: recent.map((e) => [
      e.purpose ? `${e.owner} (${e.purpose})` : e.owner,
      e.program,
      e.pid === undefined ? '' : String(e.pid),
      e.reason ? `${e.state}: ${e.reason}` : e.state,
      e.signal ? e.signal : e.exitCode === undefined || e.exitCode === null ? '' : String(e.exitCode),
      e.durationMs === undefined ? '' : String(Math.round(e.durationMs)),
    ]),
    json: entries,
  };
}
