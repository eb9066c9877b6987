/**
 * A fetched folder (a git checkout, a folder of a marketplace repository) made
 * into a tarball under `package/`, so that it goes through the same safe
 * extraction as a registry's tarball (extract.ts): every entry checked, every
 * file written by plinth's own writer and recorded, the manifest read and
 * checked. `.git` is left out; a symbolic link, or anything but files and
 * folders, is refused here with the path that holds it (never followed).
 */
import { lstat, readdir, realpath } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PlinthError, safeLine } from 'plinth/sdk';
import { create } from 'tar';

/** How many entries a folder may hold (the extraction's own limit is the same). */
const MAX_ENTRIES = 10_000;

/**
 * Packs the files of `folder` (not `.git`) into the gzipped tarball `file`,
 * each under `package/`. `shown` names the source in errors; `within`: the repository or marketplace
 * folder that `folder` must be inside once links are resolved.
 * @throws PlinthError `PLN_E_TARBALL_UNSAFE` for a link or a special file.
 */
export async function packFolder(folderIn: string, file: string, shown: string, within?: string): Promise<void> {
  const info = await lstat(folderIn).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new PlinthError('PLN_E_MARKET_SOURCE', `${safeLine(shown)}: no such folder in the fetched content`, { hint: 'check the source\'s path (a marketplace entry\'s "source" or "path")', details: { step: 'resolve', source: shown } });
  }
  // A folder of a repository reached through a link of that repository (`plugins` → `/`) leads outside it: refused, never followed.
  const folder = await realpath(folderIn);
  if (within !== undefined) {
    const root = await realpath(within);
    if (folder !== root && !folder.startsWith(`${root}${sep}`)) {
      throw new PlinthError('PLN_E_MARKET_SOURCE', `${safeLine(shown)}: its folder leads outside the repository through a symbolic link: not installed`, { hint: 'nothing was installed; ask the publisher to replace the link with the folder itself', details: { step: 'resolve', source: shown } });
    }
  }
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(folder, path).split(sep).join('/');
      if (entry.isDirectory()) {
        if (entry.name === '.git') continue;
        await walk(path);
      } else if (entry.isFile()) {
        files.push(rel);
        if (files.length > MAX_ENTRIES) throw unsafe(shown, rel, `more than ${MAX_ENTRIES} files`);
      } else throw unsafe(shown, rel, entry.isSymbolicLink() ? 'a symbolic link (never followed: a plugin needs none)' : 'neither a file nor a folder');
    }
  };
  await walk(folder);
  files.sort();
  await create({ gzip: true, file, cwd: folder, prefix: 'package', portable: true, noDirRecurse: true, follow: false }, files);
}

function unsafe(shown: string, entry: string, why: string): PlinthError {
  return new PlinthError('PLN_E_TARBALL_UNSAFE', `${safeLine(shown)}: ${safeLine(entry)} is ${why}: not installed`, {
    hint: 'nothing was installed; ask the publisher to replace the link with the file itself',
    details: { step: 'extract', entry },
  });
}
