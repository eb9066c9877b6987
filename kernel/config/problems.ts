/**
 * The problems in the settings, as `plinth config validate` lists them: the
 * warnings found while loading (values ignored, unknown keys) and the plugin
 * settings that failed their declarations, each with its file and JSON path.
 */
import type { ConfigProblem } from '../../sdk/plugin.js';
import type { PlinthError } from '../../sdk/errors.js';
import { type Config, fileOfPluginSetting } from './load.js';

const SETTING_CODES = new Set(['PLN_E_SETTING_INVALID', 'PLN_E_SETTING_REQUIRED']);

/**
 * `warnings` as problems, then each plugin error that is about one of its
 * settings, with the file whose value is in force (none when the value came
 * from the environment or a default). Every message passes through `redact`.
 */
export function configProblems(
  warnings: readonly PlinthError[],
  pluginErrors: Iterable<{ plugin: string; error: PlinthError | undefined }>,
  config: Pick<Config, 'layers'>,
  redact: (text: string) => string,
): ConfigProblem[] {
  const problems: ConfigProblem[] = warnings.map((e) => ({
    code: e.code,
    message: redact(e.message),
    ...(typeof e.details?.file === 'string' && { file: e.details.file }),
    ...(typeof e.details?.path === 'string' && { path: e.details.path }),
  }));
  for (const { plugin, error } of pluginErrors) {
    if (error === undefined || !SETTING_CODES.has(error.code)) continue;
    const setting = typeof error.details?.setting === 'string' ? error.details.setting : undefined;
    const file = setting === undefined ? undefined : fileOfPluginSetting(config, plugin, setting);
    const message = redact(error.message);
    problems.push({
      code: error.code,
      message: file === undefined ? message : `${file}: ${message}`,
      ...(file !== undefined && { file }),
      ...(typeof error.details?.path === 'string' && { path: error.details.path }),
    });
  }
  return problems;
}
