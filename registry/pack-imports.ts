/**
 * A packed plugin must work on its own: a module that imports a file outside
 * the plugin folder by a relative path (`../../plugins/mcp/types.js`) would
 * break once installed. The check reads import specifiers with a pattern
 * (static `import … from`, `export … from`, side-effect `import '…'`,
 * `import('…')`, `require('…')`), which is enough for a specifier that climbs
 * out; what a plugin shares with others belongs in the sdk (`plinth/sdk`).
 */
import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { PlinthError } from '../sdk/errors.js';

const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|tsx|jsx)$/;
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s*)(['"])(\.{1,2}\/[^'"\n]*)\1/gm;

/** Throws `PLN_E_REGISTRY_PACK_IMPORT` listing every relative import in `paths` (inside `root`) that leaves the folder. */
export async function checkRelativeImports(root: string, paths: readonly string[]): Promise<void> {
  const offenders: string[] = [];
  for (const path of paths) {
    if (!SOURCE.test(path)) continue;
    const source = await readFile(posix.join(root.replace(/\\/g, '/'), path), 'utf8');
    for (const match of source.matchAll(SPECIFIER)) {
      const specifier = match[2]!;
      const target = posix.normalize(posix.join(posix.dirname(path), specifier));
      if (target === '..' || target.startsWith('../')) offenders.push(`${path} imports "${specifier}"`);
    }
  }
  if (offenders.length > 0) {
    throw new PlinthError('PLN_E_REGISTRY_PACK_IMPORT', `the plugin imports files outside its folder, which an installed copy would not have:\n${offenders.map((o) => `  ${o}`).join('\n')}`, {
      hint: 'import what plugins share from "plinth/sdk" (contracts live in sdk/), or copy the file into the plugin',
      details: { imports: offenders },
    });
  }
}
