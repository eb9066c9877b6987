/**
 * The trust plugin: provides the `trust` service (who may run what, by
 * SHA-256 fingerprint and source) and the `plinth trust` commands, and gates
 * loading: a workspace plugin's code is imported only once its folder is
 * approved, and an installed plugin's only while its files are as installed
 * (installed-gate.ts). Eager, and builtin plugins load first, so the gate is in place
 * before any other plugin's code runs.
 */
import { join } from 'node:path';
import { type PluginInfo, definePlugin } from 'plinth/sdk';
import { trustCommands } from './commands.js';
import { pluginCoverage } from './covered.js';
import { answerWithin, pluginGate } from './gate.js';
import { installedFilesGate } from './installed-gate.js';
import { installedLock } from './recorded-hashes.js';
import { FileHashCache } from './hash-cache.js';
import { createTrustService } from './service.js';
import { TrustStore } from './store.js';
import type { CommandContext } from './verdict.js';

export default definePlugin({
  setup(kernel, ctx) {
    const store = new TrustStore(join(ctx.paths.home, 'trust.json'));
    // A boot's pins (user plugins trusted on first use, one after another) and requests are written
    // together once every plugin is set up, and at shutdown; each later one at once.
    store.startBatch();
    const endBatch = () =>
      store.endBatch().catch((error: unknown) => {
        ctx.log.warn(`${(error as { code?: string }).code ?? 'PLN_E_TRUST_STORE_WRITE'}: the approvals pinned on first use while plinth started could not be recorded (${(error as Error).message}); they are pinned again at the next start`);
      });
    kernel.hooks.ready.tap(endBatch);
    let profile: { value: string | undefined } | undefined;
    const where = (): CommandContext => {
      profile ??= { value: kernel.inspect().config.profile };
      return { home: ctx.paths.home, workspace: ctx.paths.workspace, profile: profile.value };
    };
    // One reader of plugins.lock.json for both gates: a load parses it once.
    const lock = installedLock(ctx.paths.home);
    // The plugins as they are now (a replaced one under its new version, one that left forgotten);
    // approvals live in trust.json and stay: a plugin that comes back as it was needs none again.
    const plugins = new Map<string, PluginInfo>();
    const coveredBy = pluginCoverage({ home: ctx.paths.home, plugins: () => plugins, installed: lock });
    const hashCache = new FileHashCache(join(ctx.paths.home, 'cache', 'trust-hashes.json'));
    const service = createTrustService({ store, log: ctx.log, signal: ctx.signal, where, redact: (text) => kernel.redact(text), installed: lock, hashCache, coveredBy });
    kernel.provide('trust', service);
    // The service itself, not kernel.get('trust'): settings cannot hand this check to another provider.
    const installed = installedFilesGate(ctx.paths.home, lock);
    const approved = pluginGate({ service, log: ctx.log, answerWithinMs: () => answerWithin(kernel.config) });
    // Installed plugins first: files changed on disk are refused as such, before any question of approval.
    kernel.hooks.load.tap(async (plugin) => (await installed(plugin)) ?? approved(plugin));
    kernel.hooks.manifest.tap((plugin) => {
      plugins.set(plugin.name, plugin);
    });
    kernel.hooks.unload.tap((plugin) => {
      plugins.delete(plugin.name);
    });
    kernel.hooks.commands.tap((registry) => {
      for (const command of trustCommands({ store, service, where, plugins: () => plugins })) registry.add(command);
    });
    return endBatch;
  },
});
