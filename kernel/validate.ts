/**
 * `validateSettings()`: what the owners of the settings' sections (`configKeys`)
 * find wrong in them, through the `validate` hook; an owner that could not start
 * checked nothing, and that is a problem too (`PLN_E_CONFIG_UNCHECKED`).
 */
import { PlinthError } from '../sdk/errors.js';
import type { SettingsProblem } from '../sdk/plugin.js';
import { activate } from './activation.js';
import { isRunning } from './live.js';
import { type KernelState, configOf } from './state.js';

/**
 * What the owners of the settings' sections (`configKeys`) find wrong in them: each owner in use is
 * set up (a lazy one too) and asked through the `validate` hook. An owner that could not start
 * checked nothing: that is a problem too (`PLN_E_CONFIG_UNCHECKED`), never silence. After `boot()`.
 */
export async function validateSettings(state: KernelState): Promise<SettingsProblem[]> {
  if (!state.readyInfo) throw new PlinthError('PLN_E_KERNEL_STATE', 'kernel.validateSettings() was called before boot() finished', { hint: 'await kernel.boot() first' });
  const problems: SettingsProblem[] = [];
  const inUse = (keys: readonly string[]) => keys.filter((key) => Object.hasOwn(configOf(state).settings, key));
  for (const record of [...state.records.values()]) {
    const keys = inUse(record.info.manifest.configKeys);
    if (keys.length === 0) continue;
    if (record.state === 'lazy') await activate(state, record.info.name).catch(() => undefined);
    // Disabled on purpose (itself or what it needs): its sections are read by nothing.
    if (isRunning(record) || record.error?.code === 'PLN_E_PLUGIN_DISABLED' || record.error?.code === 'PLN_E_DEP_DISABLED') continue;
    const why = record.error ? `: ${record.error.code}: ${record.error.message}` : '';
    problems.push({
      code: 'PLN_E_CONFIG_UNCHECKED',
      message: `the settings' ${keys.map((k) => `"${k}"`).join(', ')} could not be checked: plugin "${record.info.name}", which reads ${keys.length === 1 ? 'it' : 'them'}, is ${record.state}${why}`,
      hint: record.error?.hint ?? `run \`plinth plugins why ${record.info.name}\``,
    });
  }
  const files = configOf(state).files.filter((f) => f.exists).map((f) => f.file);
  await state.hooks.validate.promise({ files, add: (problem) => void problems.push(problem) });
  return problems.map((p) => ({ ...p, message: state.redactor.text(p.message), ...(p.hint !== undefined && { hint: state.redactor.text(p.hint) }) }));
}
