/** `plinth ext verify`: one installed plugin's files against what its lock entry recorded at install, every file hashed. */
import { stat } from 'node:fs/promises';
import { type LockEntry, type RevokedEntry, type VerifyEntry } from 'plinth/sdk';
import { checkTree } from 'plinth/internal';
import type { PluginStore } from './store.js';

export async function verifyInstalled(store: PluginStore, entry: LockEntry, options: { linked: boolean; revoked?: RevokedEntry | undefined }): Promise<VerifyEntry> {
  const dir = store.versionDir(entry.name, entry.version);
  const base = { name: entry.name, version: entry.version, dir, changed: [], added: [], removed: [], ...(entry.signature && { signature: entry.signature.keyid }) };
  const restore = `plinth ext install --force ${entry.name}@${entry.version}`;
  if (options.linked) return { ...base, status: 'linked', reason: `a linked development folder is used instead of the installed ${entry.name}@${entry.version}: it is not checked (\`plinth ext unlink ${entry.name}\` goes back to the installed one)` };
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) return { ...base, status: 'missing', reason: `its folder ${dir} is gone: it does not load`, restore };
  if (!entry.tree) return { ...base, status: 'unrecorded', reason: 'installed before plinth recorded its files: nothing to compare with', restore };
  const check = await checkTree(dir, entry.tree, { full: true });
  const revoked = options.revoked ?? (entry.revoked && { ...entry.revoked });
  if (!check.ok) return { ...base, status: 'changed', changed: [...check.changed], added: [...check.added], removed: [...check.removed], restore };
  if (revoked) return { ...base, status: 'revoked', reason: revoked.reason, ...(revoked.use && { restore: `plinth ext install ${entry.name}@${revoked.use}` }) };
  return { ...base, status: 'ok' };
}
