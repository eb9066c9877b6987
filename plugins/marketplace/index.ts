/**
 * The marketplace plugin: provides the `marketplace` service (search the
 * configured registries; install, update, roll back and uninstall user
 * plugins, with integrity checked before anything is extracted) and the
 * `plinth ext search|install|outdated|update|rollback|uninstall` commands.
 */
import { existsSync } from 'node:fs';
import { definePlugin, optionalService } from 'plinth/sdk';
import { defaultRegistryFolder } from 'plinth/internal';
import { marketplaceCommands } from './commands.js';
import { createMarketplace } from './service.js';
import { marketplaceSettings } from './settings.js';
import { Marketplaces } from './marketplaces.js';
import { HostTokens } from './host-tokens.js';
import { MarketplacePolicy } from './policy.js';
import { PluginStore } from './store.js';

export default definePlugin({
  async setup(kernel, ctx) {
    // What a killed install left (a staging folder, a version set aside by --force) is settled before anything reads the store.
    await new PluginStore(ctx.paths.home).cleanLeftovers().catch((error: unknown) => ctx.log.warn('could not clean what an interrupted install left', { error: String(error) }));
    const settings = marketplaceSettings(ctx.settings);
    const launcher = () => kernel.get('launcher');
    const marketplaces = new Marketplaces({ home: ctx.paths.home, launcher, timeoutMs: settings.gitTimeoutMs, maxBytes: settings.maxDownloadBytes, policy: new MarketplacePolicy(settings), tokens: new HostTokens(settings.hostTokens ?? []) });
    const service = createMarketplace({ kernel, home: ctx.paths.home, workspace: ctx.paths.workspace, settings, log: ctx.log, launcher, marketplaces, ...embedded() });
    kernel.provide('marketplace', service);
    kernel.hooks.commands.tap((registry) => {
      for (const command of marketplaceCommands(async () => service, () => optionalService(kernel, 'grants'), () => marketplaces, ctx.paths.workspace)) registry.add(command);
    });
  },
});

/** The registry shipped with plinth (`npm run build` makes it), used when none is configured. */
function embedded(): { embeddedRegistry?: string } {
  const folder = defaultRegistryFolder();
  return existsSync(folder) ? { embeddedRegistry: folder } : {};
}

