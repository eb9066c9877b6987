/**
 * The house's folders import each other one way: plugins and the test kernel
 * import the sdk and the kernel, the kernel imports the sdk and internal/ (what
 * the builtins share), internal/ imports the sdk, and the sdk imports neither
 * the kernel nor internal/ nor anything that leads back to them. So a plugin
 * author's `plinth/sdk` never pulls in the kernel, and no two folders (the
 * kernel, the sdk, `testing/`, `registry/`, each plugin's folder) depend on
 * each other round. The graph counts static imports, `import type`,
 * `export … from` and `import()` with a literal (test/support/house-graph.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { describeCycle, fileEdges, folderCycles, houseNode } from './support/house-graph.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const HOUSE = ['kernel', 'cli', 'sdk', 'internal', 'testing', 'registry', 'plugins'];

const edges = fileEdges(root, HOUSE);

describe('the import graph of the house', () => {
  test('is read: the kernel imports the sdk, plugins import the sdk, the test kernel imports the kernel', () => {
    const pairs = new Set(edges.map((e) => `${houseNode(e.from)} → ${houseNode(e.to)}`));
    expect(pairs).toContain('kernel → sdk');
    expect(pairs).toContain('plugins/inspect → sdk');
    expect(pairs).toContain('testing → kernel');
  });

  test('no file under sdk/ imports a file under kernel/ (or testing/, which boots the kernel)', () => {
    const offenders = edges.filter((e) => e.from.startsWith('sdk/') && /^(kernel|testing)\//.test(e.to)).map((e) => `${e.from} imports ${e.to} ("${e.specifier}")`);
    expect(offenders, 'sdk files that import the kernel').toEqual([]);
  });

  test('no file under sdk/ imports internal/: the public sdk stands on its own, and its declarations name nothing internal', () => {
    const offenders = edges.filter((e) => e.from.startsWith('sdk/') && e.to.startsWith('internal/')).map((e) => `${e.from} imports ${e.to} ("${e.specifier}")`);
    expect(offenders, 'sdk files that import internal/').toEqual([]);
  });

  test('internal/ builds on the sdk alone: no file under it imports the kernel, the CLI, the test kernel, the registry or a plugin', () => {
    expect(edges.some((e) => e.from.startsWith('internal/') && e.to.startsWith('sdk/')), 'the graph has internal → sdk edges').toBe(true);
    const offenders = edges
      .filter((e) => e.from.startsWith('internal/') && !/^(internal|sdk)\//.test(e.to))
      .map((e) => `${e.from} imports ${e.to} ("${e.specifier}")`);
    expect(offenders, 'internal files that import beyond internal/ and sdk/').toEqual([]);
  });

  test('no import cycle joins two top-level folders (each plugin folder counts as one)', () => {
    expect(folderCycles(edges).map(describeCycle), 'import cycles between folders').toEqual([]);
  });
});

describe('the cycle check itself', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-house-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  };

  test('names a cycle made of a type import, a re-export and a dynamic import, hop by hop', () => {
    write('kernel/a.ts', "import type { B } from '../sdk/b.js';\nexport const a = 1;\n");
    write('sdk/b.ts', "export type B = number;\nexport { c } from '../plugins/p/c.js';\n");
    write('plugins/p/c.ts', "export const c = async () => import('../../kernel/a.js');\nconst text = `import '../../sdk/b.js'`;\n");
    write('plugins/q/d.ts', "import { a } from '../../kernel/a.js';\n");
    const cycles = folderCycles(fileEdges(dir, ['kernel', 'sdk', 'plugins']));
    expect(cycles.map(describeCycle)).toEqual([
      'kernel → sdk → plugins/p → kernel (kernel/a.ts imports sdk/b.ts; sdk/b.ts imports plugins/p/c.ts; plugins/p/c.ts imports kernel/a.ts)',
    ]);
  });
});
