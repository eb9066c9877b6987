/**
 * The extensions plugin: `plinth ext …` and the `extensions` service on top of
 * the kernel's live lifecycle, and hot reload of plugin folders while
 * `plinth up` runs.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { type PluginKernel, definePlugin, optionalService, parseSettings, safeText } from 'plinth/sdk';
import { extensionCommands } from './commands.js';
import type { HotReload } from './reload.js';
import { createExtensionsService, declaredSetting } from './service.js';

const settingsSchema = z.looseObject({
  reloadDebounceMs: z.int({ error: 'expected a whole number of milliseconds' }).min(0, { error: 'expected 0 or more milliseconds' }),
  hotReload: z.boolean(),
  updateCheck: z.boolean(),
});

export default definePlugin({
  setup(kernel, ctx) {
    const settings = parseSettings('extensions', settingsSchema, ctx.settings);
    const service = createExtensionsService({ kernel });
    kernel.provide('extensions', service);
    kernel.hooks.commands.tap((registry) => {
      for (const command of extensionCommands({ service, decl: async (plugin, setting) => declaredSetting(kernel, plugin, setting), grants: () => optionalService(kernel, 'grants') })) registry.add(command);
    });

    const print = (line: string) => {
      ctx.log.info(line);
      process.stderr.write(`${safeText(`plinth: ${line}`)}\n`);
    };
    // Only while the host stays up: a one-shot command never watches anything.
    let reload: HotReload | undefined;
    let checking: Promise<void> | undefined;
    kernel.hooks.serve.tap(async () => {
      if (settings.updateCheck) {
        // In the background: registries may be slow, and the host must not wait for them to serve.
        checking = import('./update-check.js').then(({ checkForUpdates }) => checkForUpdates(kernel, print, ctx.signal));
      }
      if (!settings.hotReload) return;
      const { startHotReload } = await import('./reload.js');
      // The user's plugins folder is plinth's own: made now, so that a first install while serving is seen.
      await mkdir(join(ctx.paths.home, 'plugins'), { recursive: true }).catch(() => undefined);
      reload = startHotReload({
        kernel,
        log: ctx.log,
        settingsFolders: [ctx.paths.home, join(ctx.paths.workspace, '.plinth')],
        debounceMs: settings.reloadDebounceMs,
        print,
      });
      await reload.ready;
    });

    return async () => {
      await reload?.close();
      await checking;
    };
  },
});

