/**
 * docs/errors.md is the one table of error codes: every `PLN_E_…` code used in
 * the sources is listed there, and nothing listed there is unused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const SOURCE_DIRS = ['kernel', 'cli', 'sdk', 'testing', 'plugins', 'registry'];
const CODE = /PLN_E_[A-Z0-9_]+/g;

function sourceFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // e.g. registry/ before it has any file
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : sourceFiles(path);
    return /\.(ts|json)$/.test(entry.name) ? [path] : [];
  });
}

/** Code → the files using it. A match ending in `_` is a prefix (`PLN_E_CONFIG_*` in prose), not a code. */
function usedCodes(): Map<string, string[]> {
  const used = new Map<string, string[]>();
  for (const file of SOURCE_DIRS.flatMap((dir) => sourceFiles(join(root, dir)))) {
    for (const [code] of readFileSync(file, 'utf8').matchAll(CODE)) {
      if (code.endsWith('_')) continue;
      const files = used.get(code) ?? [];
      const rel = file.slice(root.length);
      if (!files.includes(rel)) files.push(rel);
      used.set(code, files);
    }
  }
  return used;
}

/** Codes in the first cell of the table rows of docs/errors.md, in order (duplicates kept). */
function documentedCodes(): string[] {
  const text = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  const codes: string[] = [];
  for (const line of text.split('\n')) {
    const cell = /^\|\s*`(PLN_E_[A-Z0-9_]+)`\s*\|/.exec(line);
    if (cell?.[1]) codes.push(cell[1]);
  }
  return codes;
}

describe('docs/errors.md', () => {
  const used = usedCodes();
  const documented = documentedCodes();

  test('the scan finds codes on both sides', () => {
    expect(used.size).toBeGreaterThan(10);
    expect(documented.length).toBeGreaterThan(10);
  });

  test('documents every code used in kernel/, sdk/, plugins/, registry/', () => {
    const listed = new Set(documented);
    const missing = [...used.keys()].filter((code) => !listed.has(code)).sort();
    const report = missing.map((code) => `${code} (used in ${used.get(code)!.join(', ')})`);
    expect(report, `codes missing from docs/errors.md:\n  ${report.join('\n  ')}`).toEqual([]);
  });

  test('lists no code that is no longer used', () => {
    const stale = [...new Set(documented)].filter((code) => !used.has(code)).sort();
    expect(stale, `stale codes in docs/errors.md (used nowhere in the sources): ${stale.join(', ')}`).toEqual([]);
  });

  test('lists each code once', () => {
    const twice = documented.filter((code, i) => documented.indexOf(code) !== i);
    expect(twice, `codes listed more than once in docs/errors.md: ${twice.join(', ')}`).toEqual([]);
  });
});
