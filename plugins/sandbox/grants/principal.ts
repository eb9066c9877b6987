/** A plugin as the grants see it: the principal its child processes and capability calls act for; and the key its grants are stored under. */
import { resolve } from 'node:path';
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

/** The principal of every workspace's settings hooks and servers. */
export const WORKSPACE_SETTINGS = 'settings:workspace';

/**
 * The key a principal's grants are stored under (grants.json, the session's):
 * its id, except for the hooks and servers of a workspace's settings, whose
 * grants are per workspace (`settings:workspace@/path/to/repo`): what the user
 * granted one repository is never granted to another that acts under the same
 * id. A grant stored under the bare `settings:workspace` (before grants were per
 * workspace) belongs to no workspace and grants nothing.
 */
export function grantKey(principal: Pick<Principal, 'id' | 'dir'>): string {
  if (principal.id !== WORKSPACE_SETTINGS) return principal.id;
  // Without its workspace it cannot be told apart: a key no grant is stored under (fail closed).
  return principal.dir === undefined ? `${WORKSPACE_SETTINGS}@` : workspaceGrantKey(principal.dir);
}

/** {@link grantKey} of the workspace settings of `workspace`. */
export function workspaceGrantKey(workspace: string): string {
  return `${WORKSPACE_SETTINGS}@${resolve(workspace)}`;
}
