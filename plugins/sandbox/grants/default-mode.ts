/**
 * `sandbox.default`: whether the user's own plugins (and the hooks and servers
 * of the user's settings) run confined or open; "open" when no file says.
 * Only the user's settings may
 * open it; a workspace may tighten it to "confined", and a workspace "open" is
 * ignored (and said), because a project must not loosen what the user allows.
 */
import type { ConfigLayerView } from 'plinth/sdk';

export type DefaultMode = 'confined' | 'open';

export interface DefaultModeReading {
  readonly mode: DefaultMode;
  /** Where the mode comes from, for `plinth perms status` and `open` reasons. */
  readonly from: string;
  /** Values that were ignored, with why (a workspace "open", a value that is neither). */
  readonly ignored: readonly string[];
  /** The same, as coded problems with their file and JSON path: warned at setup, listed by `config validate`. */
  readonly problems: readonly DefaultModeProblem[];
}

/** One ignored `sandbox.default`. */
export interface DefaultModeProblem {
  /** `PLN_E_WORKSPACE_SETTING_IGNORED` (a workspace "open") or `PLN_E_SETTING_INVALID` (neither value). */
  readonly code: 'PLN_E_WORKSPACE_SETTING_IGNORED' | 'PLN_E_SETTING_INVALID';
  readonly message: string;
  readonly hint: string;
  readonly file: string;
  /** `sandbox.default`, or `profiles.<name>.sandbox.default`. */
  readonly path: string;
}

function valueOf(layer: ConfigLayerView): unknown {
  const section = layer.settings.sandbox;
  return typeof section === 'object' && section !== null ? (section as Record<string, unknown>).default : undefined;
}

/** Reads the layers in merge order: the last user value wins, then any workspace "confined" tightens it. */
export function readDefaultMode(layers: readonly ConfigLayerView[]): DefaultModeReading {
  // Open unless the user says otherwise: the user's own hooks and plugins ran with the user's rights before the sandbox, and still do.
  let mode: DefaultMode = 'open';
  let from = 'the default';
  const ignored: string[] = [];
  const problems: DefaultModeProblem[] = [];
  let tightened: string | undefined;
  for (const layer of layers) {
    const value = valueOf(layer);
    if (value === undefined) continue;
    const where = `${layer.file}${layer.profile ? ` (profile "${layer.profile}")` : ''}`;
    const path = layer.profile ? `profiles.${layer.profile}.sandbox.default` : 'sandbox.default';
    if (value !== 'confined' && value !== 'open') {
      ignored.push(`${where}: sandbox.default ${JSON.stringify(value)} is neither "confined" nor "open"`);
      problems.push({ code: 'PLN_E_SETTING_INVALID', message: `${layer.file}: ${path} is ignored: expected "confined" or "open"`, hint: `set ${path} to "confined" or "open", or remove it`, file: layer.file, path });
      continue;
    }
    if (layer.scope === 'user') {
      mode = value;
      from = `${where}`;
    } else if (value === 'confined') tightened = where;
    else {
      ignored.push(`${where}: a workspace cannot set sandbox.default to "open" (only the user's settings can)`);
      problems.push({
        code: 'PLN_E_WORKSPACE_SETTING_IGNORED',
        message: `${layer.file}: ${path} is ignored: a workspace cannot set it to "open" (only your user settings can); a project's settings may tighten yours, never loosen them`,
        hint: 'set sandbox.default in your user settings ($PLINTH_HOME/settings.json) if you want it, or remove it from the project\'s file',
        file: layer.file,
        path,
      });
    }
  }
  if (tightened !== undefined && mode === 'open') return { mode: 'confined', from: `${tightened} (a workspace tightening)`, ignored, problems };
  return { mode, from, ignored, problems };
}
