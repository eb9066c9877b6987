/**
 * The marketplace plugin: provides the `marketplace` service (search the
 * configured registries; install, update, roll back and uninstall user
 * plugins, with integrity checked before anything is extracted) and the
 * `plinth ext search|install|outdated|update|rollback|uninstall` commands.
 */
import { definePlugin } from 'plinth/sdk';
import { marketplaceCommands } from './commands.js';
import { createMarketplace } from './service.js';
import { marketplaceSettings } from './settings.js';

export default definePlugin({
  setup(kernel, ctx) {
    const service = createMarketplace({ kernel, home: ctx.paths.home, settings: marketplaceSettings(ctx.settings), log: ctx.log, ...embedded() });
    kernel.provide('marketplace', service);
    kernel.hooks.commands.tap((registry) => {
      for (const command of marketplaceCommands(async () => service)) registry.add(command);
    });
  },
});

/** The registry shipped with plinth (`PLINTH_MARKET_EMBEDDED` overrides it, for tests). */
function embedded(): { embeddedRegistry?: string } {
  const given = process.env.PLINTH_MARKET_EMBEDDED;
  return given ? { embeddedRegistry: given } : {};
}
