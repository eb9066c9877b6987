/**
 * A hook or MCP server that an installed plugin declares is covered by the
 * approval of that plugin. `plinth ext install` shows every hook and server
 * the plugin declares, with what each runs, and records the approval of the
 * plugin's folder; asking again for each of them, one by one, would ask about
 * what was just approved (and skip a guard hook until then). Covered only while:
 *
 * 1. the subject is a hook or server from a plugin's manifest (`declaredBy`,
 *    source `extension` or `downloaded`: never a workspace's settings, never
 *    a definition a workspace amended);
 * 2. that plugin is one plinth installed (its real folder under
 *    `plugins/.versions/`, where the marketplace shows the declarations before
 *    it installs): a folder dropped into `plugins/` by hand is pinned on first
 *    use, and a pin shows nothing;
 * 3. the plugin's approval is an explicit one (`approved`), and
 * 4. the plugin's folder, manifest included, is now exactly as approved: its
 *    fingerprint is taken again, so an edited hook script is not covered.
 */
import { type PluginInfo, type TrustSubject } from 'plinth/sdk';
import { realInstalledFolder } from 'plinth/internal';
import { trustSourceOf } from './gate.js';
import { pluginSubject } from './plugin-files.js';
import { type InstalledLock, recordedHashes } from './recorded-hashes.js';
import { snapshot } from './snapshot.js';
import { type TrustData, findEntry } from './store.js';

export interface CoverageOptions {
  /** The plinth home, where installed versions live. */
  readonly home: string;
  /** The plugins the kernel resolved, by name (from the `manifest` hook). */
  readonly plugins: () => ReadonlyMap<string, PluginInfo>;
  /** The lock file's reader: files as recorded at install are not read again to fingerprint the folder. */
  readonly installed?: InstalledLock;
}

const COVERABLE_SOURCES: ReadonlySet<TrustSubject['source']> = new Set(['extension', 'downloaded']);

/**
 * What covers a subject its own record does not: `covered` by the approval of
 * installed plugin `plugin`; `changed`: it would be, but the plugin's folder no
 * longer is as approved (then the subject is refused as changed, not merely
 * unapproved, so that a guard hook blocks instead of being skipped).
 */
export type Coverage = { readonly covered: true; readonly plugin: string } | { readonly covered: false; readonly plugin: string; readonly version: string };

/** A function answering, for a subject not trusted by its own record, whether an installed plugin's approval covers it; undefined when none could. */
export function pluginCoverage({ home, plugins, installed }: CoverageOptions): (subject: TrustSubject, data: TrustData) => Promise<Coverage | undefined> {
  return async (subject, data) => {
    if (subject.kind === 'plugin' || subject.declaredBy === undefined || !COVERABLE_SOURCES.has(subject.source)) return undefined;
    const plugin = plugins().get(subject.declaredBy);
    if (!plugin || plugin.dir === '' || plugin.linked) return undefined;
    const source = trustSourceOf(plugin.source);
    if (source === undefined || source === 'workspace') return undefined;
    const record = findEntry(data.approvals, { kind: 'plugin', id: plugin.name });
    if (record?.how !== 'approved' || (await realInstalledFolder(home, plugin.dir)) === undefined) return undefined;
    const changed = { covered: false, plugin: plugin.name, version: plugin.version } as const;
    try {
      const now = await snapshot(await pluginSubject(plugin, source), false, undefined, installed && recordedHashes(installed));
      return now.fingerprint === record.fingerprint ? { covered: true, plugin: plugin.name } : changed;
    } catch {
      // A folder that cannot be fingerprinted now is not as approved.
      return changed;
    }
  };
}
