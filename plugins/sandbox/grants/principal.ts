/** A plugin as the grants see it: the principal its child processes and capability calls act for. */
import type { PluginInfo, Principal } from 'plinth/sdk';

export function principalOf(plugin: PluginInfo): Principal {
  return {
    id: plugin.name,
    source: plugin.source,
    ...(plugin.dir && { dir: plugin.dir }),
    declared: plugin.manifest.permissions,
    label: `plugin "${plugin.name}"`,
  };
}
