/**
 * The other half of the `load` gate, for plugins installed with `plinth ext
 * install` (a folder under `plugins/.versions/`): before the plugin's code
 * is imported, its files must be those its lock entry recorded at install
 * (internal/registry/installed-tree.ts: one stat per file while nothing changed, a rehash
 * of what did), and its registry must not have revoked it. The lock file and
 * the tree check are the sdk's contract, so this needs nothing of the
 * marketplace plugin (which is lazy: it is not loaded for this). A linked
 * development folder lives elsewhere and is not checked.
 */
import { join } from 'node:path';
import { type LockEntry, type PluginInfo } from 'plinth/sdk';
import { checkTree, describeTreeCheck, realInstalledFolder } from 'plinth/internal';
import { type InstalledLock, installedLock, lockEntryFor } from './recorded-hashes.js';

/** `lock`: the home's lock file, shared with the trust service's recorded hashes so that a load reads it once. */
export function installedFilesGate(home: string, lock: InstalledLock = installedLock(home)): (plugin: PluginInfo) => Promise<string | undefined> {
  return async (plugin) => {
    if (plugin.dir === '' || plugin.linked) return undefined;
    const dir = await realInstalledFolder(home, plugin.dir);
    if (dir === undefined) return undefined;
    const id = `${plugin.name}@${plugin.version}`;
    const entry = await lockEntryOf(lock, plugin);
    if (entry === 'invalid') return `PLN_E_MARKET_LOCK_INVALID: installed plugin ${id} cannot be checked: ${join(home, 'plugins.lock.json')} is not a plinth lock file; restore it, or install the plugin again`;
    if (entry?.revoked) {
      return `PLN_E_MARKET_REVOKED: installed plugin ${id} was revoked by its registry: ${entry.revoked.reason}${entry.revoked.use ? `; move to ${entry.revoked.use}: plinth ext install ${plugin.name}@${entry.revoked.use}` : '; `plinth ext outdated` shows what to move to'}`;
    }
    // Fail closed: a folder in plinth's store that the lock file does not describe (put there by hand,
    // or installed by a plinth that recorded no file tree) cannot be shown to be what was installed.
    if (entry === undefined || !entry.tree) {
      return `PLN_E_MARKET_FILES_CHANGED: installed plugin ${id} has no record of its files in ${join(home, 'plugins.lock.json')} (${entry === undefined ? 'it was not installed by plinth, or its record is gone' : 'it was installed by an older plinth'}), so plinth cannot check it is what was installed; \`plinth ext install --force ${id}\` installs it again from its registry, verified`;
    }
    const check = await checkTree(dir, entry.tree);
    if (check.ok) return undefined;
    return `PLN_E_MARKET_FILES_CHANGED: installed plugin ${id} changed on disk since it was installed (${describeTreeCheck(check)}); \`plinth ext verify ${plugin.name}\` lists every difference, \`plinth ext install --force ${id}\` restores it from its registry, verified again`;
  };
}

async function lockEntryOf(lock: InstalledLock, plugin: PluginInfo): Promise<LockEntry | 'invalid' | undefined> {
  const read = await lock.read();
  if (read === undefined || read === 'invalid') return read;
  return lockEntryFor(read, plugin.name, plugin.version);
}
