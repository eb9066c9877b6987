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
  let tightened: string | undefined;
  for (const layer of layers) {
    const value = valueOf(layer);
    if (value === undefined) continue;
    const where = `${layer.file}${layer.profile ? ` (profile "${layer.profile}")` : ''}`;
    if (value !== 'confined' && value !== 'open') {
      ignored.push(`${where}: sandbox.default ${JSON.stringify(value)} is neither "confined" nor "open"`);
      continue;
    }
    if (layer.scope === 'user') {
      mode = value;
      from = `${where}`;
    } else if (value === 'confined') tightened = where;
    else ignored.push(`${where}: a workspace cannot set sandbox.default to "open" (only the user's settings can)`);
  }
  if (tightened !== undefined && mode === 'open') return { mode: 'confined', from: `${tightened} (a workspace tightening)`, ignored };
  return { mode, from, ignored };
}
