/**
 * The problems in the settings, as `plinth config validate` lists them: the
 * kernel's coded errors (values ignored, unknown keys, plugin settings that
 * failed their declarations), each with its file and JSON path; the owners of
 * sections (hooks, mcpServers) add theirs through the kernel's `validate` hook.
 */
import type { ConfigLayerView, PlinthError } from 'plinth/sdk';

/** One problem in the settings, for `plinth config validate` and `config show`. */
export interface ConfigProblem {
  /** `PLN_E_WORKSPACE_SETTING_IGNORED`, `PLN_E_CONFIG_UNKNOWN_KEY`, `PLN_E_SETTING_INVALID`, `PLN_E_SETTING_REQUIRED`. */
  readonly code: string;
  /** The message (redacted by the kernel); it names the file and the JSON path. */
  readonly message: string;
  /** The settings file the value is in; absent when it came from the environment or a default. */
  readonly file?: string;
  /** The JSON path, e.g. `plugins.hooks.settings.timeout`. */
  readonly path?: string;
  /** What fixes it, when the plugin that found it said. */
  readonly hint?: string;
}

/**
 * `errors` as rows. A warning names its file in its details; a plugin setting's
 * error is placed in the file whose value is in force (none when the value came
 * from the environment or a default), and its message says which.
 */
export function configProblems(errors: readonly PlinthError[], layers: readonly ConfigLayerView[]): ConfigProblem[] {
  return errors.map((error) => {
    const setting = typeof error.details?.setting === 'string' ? error.details.setting : undefined;
    const file = setting !== undefined && error.plugin !== undefined ? fileOfPluginSetting(layers, error.plugin, setting) : stringAt(error.details, 'file');
    const path = stringAt(error.details, 'path');
    const message = setting !== undefined && file !== undefined ? `${file}: ${error.message}` : error.message;
    return { code: error.code, message, ...(file !== undefined && { file }), ...(path !== undefined && { path }) };
  });
}

/** The file whose value of `plugins.<plugin>.settings.<setting>` is in force: the last layer that sets it. */
function fileOfPluginSetting(layers: readonly ConfigLayerView[], plugin: string, setting: string): string | undefined {
  let file: string | undefined;
  for (const layer of layers) {
    const plugins = layer.settings.plugins as Record<string, { settings?: Record<string, unknown> }> | undefined;
    const values = plugins && Object.hasOwn(plugins, plugin) ? plugins[plugin]?.settings : undefined;
    if (values && Object.hasOwn(values, setting)) file = layer.file;
  }
  return file;
}

function stringAt(details: Record<string, unknown> | undefined, key: string): string | undefined {
  return typeof details?.[key] === 'string' ? details[key] : undefined;
}
