/** Calling a plugin's `setup`: under a time limit, errors named after the plugin, a late teardown still run. */
import type { PluginContext, PluginDefinition, PluginKernel, Teardown } from '../sdk/plugin.js';
import { PlinthError, isPlinthError, wrapPluginError } from '../sdk/errors.js';
import { isThenable, withTimeout } from './timeout.js';

/** Runs `definition.setup`; resolves with its teardown, or rejects with PLN_E_PLUGIN_SETUP / PLN_E_PLUGIN_TIMEOUT. */
export async function runSetup(
  definition: PluginDefinition,
  kernel: PluginKernel,
  context: PluginContext,
  timeoutMs: number,
): Promise<Teardown | undefined> {
  const { name } = context;
  // An error that already names this plugin (a coded error from provide, say) keeps its code.
  const own = (error: unknown) => (isPlinthError(error) && error.plugin === name ? error : wrapPluginError('PLN_E_PLUGIN_SETUP', name, 'setup', error));
  let result: ReturnType<PluginDefinition['setup']>;
  try {
    result = definition.setup(kernel, context);
  } catch (error) {
    throw own(error);
  }
  const teardown = await withTimeout(result, timeoutMs, () => {
    // A late teardown still runs, so a hung setup leaks nothing once it settles.
    if (isThenable<void | Teardown>(result)) {
      result.then(
        (late) => {
          if (typeof late === 'function') Promise.resolve().then(late).catch(() => undefined);
        },
        () => undefined,
      );
    }
    return new PlinthError('PLN_E_PLUGIN_TIMEOUT', `plugin "${name}" did not finish setup within ${timeoutMs} ms`, {
      plugin: name,
      hook: 'setup',
      hint: 'make setup return promptly (start long work in the background), or raise timeouts.setup in settings.json',
    });
  }).catch((error: unknown) => {
    throw own(error);
  });
  return typeof teardown === 'function' ? teardown : undefined;
}
