/**
 * Whom a hook's process acts for, as the sandbox sees it: the plugin whose
 * manifest declared it (that manifest's `permissions`, its folder), or the
 * settings scope of a hook from settings or a legacy file (the entry's own
 * `permissions`; its folder is the workspace for workspace hooks, plinth's
 * user folder for the user's).
 */
import { NO_PERMISSIONS, type PluginInfo, type Principal } from 'plinth/sdk';
import { withPackageRunner } from 'plinth/internal';
import type { HookDefinition } from './types.js';

export function hookPrincipal(hook: HookDefinition, plugin: PluginInfo | undefined, paths: { readonly home: string; readonly workspace: string }): Principal {
  if (hook.plugin !== undefined && plugin !== undefined) {
    return {
      id: plugin.name,
      source: hook.source === 'downloaded' ? 'downloaded' : plugin.source,
      ...(plugin.dir && { dir: plugin.dir }),
      declared: plugin.manifest.permissions,
      label: `hook "${hook.name}" of plugin "${plugin.name}"`,
    };
  }
  const scope = hook.source === 'workspace' ? 'workspace' : 'user';
  return {
    id: `settings:${scope}`,
    source: scope,
    dir: scope === 'workspace' ? paths.workspace : paths.home,
    // A package runner (`npx -y pkg`, `uvx pkg`) also needs its registry's host: asked for with what the entry declares.
    declared: hook.action.type === 'command' ? withPackageRunner(hook.permissions ?? NO_PERMISSIONS, hook.action.command, hook.action.args) : (hook.permissions ?? NO_PERMISSIONS),
    label: `hook "${hook.name}" from ${scope} settings`,
  };
}
