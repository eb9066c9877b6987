/**
 * The gateway plugin: plinth served as one MCP server. It provides the
 * `gateway` service; `plinth serve --stdio|--http` creates a gateway, lets the
 * host provide its forwarding handlers, starts the servers and serves. The
 * SDK's server side is imported only then (./gateway.ts).
 */
import { type PluginKernel, definePlugin } from 'plinth/sdk';
import { gatewaySettings } from './settings.js';

export default definePlugin({
  setup(kernel, ctx) {
    const settings = gatewaySettings(ctx.settings);
    // Plugins that come or go while a gateway serves change what it lists.
    const followers = new Set<() => void>();
    const changed = () => {
      for (const follower of [...followers]) follower();
    };
    kernel.hooks.manifest.tap(() => changed());
    kernel.hooks.unload.tap(() => changed());

    const open: Array<{ close(): Promise<void> }> = [];
    kernel.provide('gateway', {
      async create() {
        const [{ createGateway }, mcp] = await Promise.all([import('./gateway.js'), kernel.get('mcp')]);
        const gateway = createGateway({
          mcp,
          health: () => healthStates(kernel),
          settings,
          home: ctx.paths.home,
          log: ctx.log,
          version: kernel.apiVersion,
          followPlugins: (follower) => {
            followers.add(follower);
            return () => void followers.delete(follower);
          },
        });
        open.push(gateway);
        return gateway;
      },
    });
    return async () => {
      await Promise.all(open.map((g) => g.close().catch(() => undefined)));
    };
  },
});

/** The health plugin's states, when it is installed and enabled. */
async function healthStates(kernel: PluginKernel): Promise<ReadonlyMap<string, string> | undefined> {
  try {
    const health = await kernel.get('health');
    return new Map(health.status().map((s) => [s.name, s.state]));
  } catch {
    return undefined;
  }
}
