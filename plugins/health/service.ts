/** The `health` service: the monitor and the board behind one small interface. */
import { PlinthError } from 'plinth/sdk';
import type { ServerStatus } from 'plinth/sdk';
import type { HealthBoard } from './board.js';
import type { HealthMonitor } from './monitor.js';
import type { HealthService, ServerHealth } from 'plinth/sdk';

/** Builds the service over `monitor` and `board`. */
export function createHealthService(monitor: HealthMonitor, board: HealthBoard): HealthService {
  /** The server's mcp status, or the error a caller can act on. */
  const statusOf = async (name: string): Promise<ServerStatus> => {
    const status = (await monitor.mcp()).servers().find((s) => s.name === name);
    if (status) return status;
    throw new PlinthError('PLN_E_HEALTH_SERVER_UNKNOWN', `no MCP server is named "${name}"`, {
      plugin: 'health',
      hint: 'run `plinth mcp list` for the configured servers',
    });
  };

  return {
    start: () => monitor.watch(),
    running: () => monitor.running,
    status(): readonly ServerHealth[] {
      const known = monitor.known()?.map((s) => s.name);
      // A server whose plugin left while running is no longer the board's (nothing restarts it either).
      const records = [...board.all()].filter((record) => known === undefined || known.includes(record.name));
      // The mcp service's order (definition order), when it has been asked for already.
      const order = known ?? [];
      records.sort((a, b) => rank(order, a.name) - rank(order, b.name));
      return records.map((record) => board.view(record));
    },
    async check(name) {
      const record = monitor.sync(await statusOf(name));
      if (!record) return undefined;
      await monitor.check(record);
      return board.view(record);
    },
    async restart(name) {
      await statusOf(name);
      return board.view(await monitor.restartByHand(name));
    },
    onChange: (listener) => board.onChange(listener),
  };
}

function rank(order: readonly string[], name: string): number {
  const index = order.indexOf(name);
  return index === -1 ? order.length : index;
}
