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
import type { scheduleAutoUpdates } from './auto-update.js';
import { createExtensionsService, declaredSetting } from './service.js';

const settingsSchema = z.looseObject({
  reloadDebounceMs: z.int({ error: 'expected a whole number of milliseconds' }).min(0, { error: 'expected 0 or more milliseconds' }),
  hotReload: z.boolean(),
  updateCheck: z.boolean(),
  autoUpdateInterval: z.number({ error: 'expected a number of hours' }).min(0, { error: 'expected 0 (off) or more hours' }),
});

/** How long `up`'s status waits for the first automatic update pass before saying it is under way. */
const STATUS_WAIT_MS = 8_000;

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
    let autoUpdates: ReturnType<typeof scheduleAutoUpdates> | undefined;
    kernel.hooks.serve.tap(async () => {
      if (settings.autoUpdateInterval > 0) {
        // Updates of the plugins with auto-update on, through the marketplace's `update`: in the background, as the update check.
        const { scheduleAutoUpdates } = await import('./auto-update.js');
        autoUpdates = scheduleAutoUpdates(kernel, settings.autoUpdateInterval, print, ctx.signal);
      }
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

    // `up`'s status (and `up --json`): what the first automatic update pass did, when it finishes in time.
    kernel.hooks.status.tap(async (board) => {
      if (!autoUpdates) return;
      const { passLines } = await import('./auto-update.js');
      let timer: NodeJS.Timeout | undefined;
      const pass = await Promise.race([autoUpdates.first.catch(() => undefined), new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), STATUS_WAIT_MS)))]).finally(() => clearTimeout(timer));
      const last = autoUpdates.last() ?? pass;
      const every = `every ${settings.autoUpdateInterval} h`;
      if (!last) return board.add({ key: 'autoUpdate', title: 'Auto-update', head: [], rows: [], json: { intervalHours: settings.autoUpdateInterval, running: true }, line: `Auto-update (${every}): checking; what it does is printed when done` });
      const lines = passLines(last);
      board.add({ key: 'autoUpdate', title: `Auto-update (${every})`, head: ['RESULT'], rows: lines.map((l) => [l]), json: { intervalHours: settings.autoUpdateInterval, ...last } });
    });

    return async () => {
      await autoUpdates?.stop();
      await reload?.close();
      await checking;
    };
  },
});

