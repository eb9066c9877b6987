/**
 * What the kernel says about itself, as data: each plugin's status (the board
 * `plugins list` and `ready` show) and the inspection (what it found, decided
 * and read) that the `inspect` plugin formats. Reads only; redacted.
 */
import type { KernelInspection, PluginStatus } from '../sdk/plugin.js';
import { redactError } from '../internal/text/redact.js';
import { type KernelState, configOf, resolutionOf } from './state.js';

/** The codes of a plugin's settings that fail their declarations: problems in the settings files, for `config validate`. */
const SETTING_CODES: ReadonlySet<string> = new Set(['PLN_E_SETTING_INVALID', 'PLN_E_SETTING_REQUIRED']);

/** Every plugin's state, in resolution order, then the excluded ones. */
export function status(state: KernelState): PluginStatus[] {
  return [...state.records.values()].map((record) => ({
    name: record.info.name,
    version: record.info.version,
    source: record.info.source,
    state: record.state,
    provides: record.info.manifest.provides,
    dir: record.info.dir,
    ...(record.info.linked && { linked: true as const }),
    ...(record.loadMs !== undefined && { loadMs: record.loadMs }),
    ...(record.error && { error: { code: record.error.code, message: state.redactor.text(record.error.message), ...(record.error.hint && { hint: state.redactor.text(record.error.hint) }) } }),
  }));
}

/** What the kernel found, decided and read, as data for inspection tools (the `inspect` plugin formats it). */
export function inspect(state: KernelState): KernelInspection {
  // What is wrong in the files: the warnings prepare found, then each plugin's own settings that failed their declarations.
  const settingErrors = [...state.records.values()].flatMap((r) => (r.error && SETTING_CODES.has(r.error.code) ? [r.error] : []));
  return {
    plugins: status(state),
    resolution: resolutionOf(state),
    invalid: resolutionOf(state).invalid.map((e) => ({ code: e.code, message: state.redactor.text(e.message) })),
    config: {
      files: configOf(state).files,
      profile: configOf(state).profile,
      settings: state.redactor.value(state.pluginConfig),
      problems: [...state.configProblems, ...settingErrors].map((e) => redactError(e, state.redactor)),
    },
  };
}
