/**
 * The public API as review sees it: docs/api/*.api.md, made by
 * docs/api/report.mjs from the built declarations of the package's entry
 * points (`plinth`, `plinth/sdk`, `plinth/testing`), is current; every export
 * has a doc comment and names no type a third party cannot import; and the
 * sdk stays small. The report tool itself is shown on a package of its own.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

interface Entry {
  readonly specifier: string;
  readonly types: string;
  readonly report: string;
}
interface Report {
  readonly entry: Entry;
  readonly text: string;
  readonly undocumented: readonly string[];
  readonly forgotten: readonly string[];
  readonly exports: number;
}
type ReportTool = { reports(options?: { root?: string; entries?: readonly Entry[] }): Report[]; ENTRIES: readonly Entry[] };

// A plain .mjs (it runs without a build step); typed here by what the test uses.
const toolUrl = pathToFileURL(join(root, 'docs', 'api', 'report.mjs')).href;
let tool: ReportTool;
beforeAll(async () => {
  tool = (await import(toolUrl)) as ReportTool;
});

describe("plinth's API report", () => {
  let current: Report[];
  beforeAll(() => {
    current = tool.reports();
  });

  test('covers each entry point package.json exports, and no other', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const exported = Object.keys(pkg.exports)
      .filter((key) => key !== './package.json')
      .map((key) => (key === '.' ? 'plinth' : `plinth/${key.slice(2)}`));
    expect(current.map((r) => r.entry.specifier).sort()).toEqual(exported.sort());
  });

  test.each(['plinth.api.md', 'plinth-sdk.api.md', 'plinth-testing.api.md'])('docs/api/%s is the report of the build', (file) => {
    const report = current.find((r) => r.entry.report === file);
    expect(report, file).toBeDefined();
    const checkedIn = readFileSync(join(root, 'docs', 'api', file), 'utf8');
    // On a difference: `npm run api-report`, then review the diff as a change to the public API.
    expect(checkedIn === report!.text, `docs/api/${file} is out of date: run \`npm run api-report\` and review the diff`).toBe(true);
  });

  test('every export has a doc comment', () => {
    const undocumented = current.flatMap((r) => r.undocumented.map((name) => `${r.entry.specifier}: ${name}`));
    expect(undocumented).toEqual([]);
  });

  test('no export names a type that no entry point exports', () => {
    const forgotten = current.flatMap((r) => r.forgotten.map((name) => `${r.entry.specifier}: ${name}`));
    expect(forgotten).toEqual([]);
  });

  test('the sdk exports at most 70 values, and the report counts what the module really has', async () => {
    const sdk = await import(pathToFileURL(join(root, 'dist', 'sdk', 'index.js')).href);
    const values = Object.keys(sdk);
    expect(values.length).toBeLessThanOrEqual(70);
    const text = current.find((r) => r.entry.specifier === 'plinth/sdk')!.text;
    expect(text).toContain(`(${values.length} values)`);
  });
});

describe('the report tool, on a package of its own', () => {
  const pkg = mkdtempSync(join(tmpdir(), 'plinth-api-report-'));
  afterAll(() => rmSync(pkg, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(pkg, path)), { recursive: true });
    writeFileSync(join(pkg, path), text);
  };
  let report: Report;
  beforeAll(() => {
    write(
      'dist/index.d.ts',
      [
        "export { greet, type Greeting as Hello } from './greet.js';",
        "export * from './shapes.js';",
        "export type { Options } from './options.js';",
        '',
      ].join('\n'),
    );
    write(
      'dist/greet.d.ts',
      [
        "import type { Tone } from './tone.js';",
        '/** Says hello. */',
        'export declare function greet(name: string, tone?: Tone): Greeting;',
        'export interface Greeting {',
        '    text: string;',
        '}',
        '',
      ].join('\n'),
    );
    write('dist/tone.d.ts', "/** How it is said. */\nexport type Tone = 'warm' | 'cold';\n");
    write(
      'dist/shapes.d.ts',
      [
        "import { z } from 'zod';",
        'declare const circleSchema: z.ZodObject<{ r: z.ZodNumber }>;',
        '/** A circle, as its schema says. */',
        'export type Circle = z.infer<typeof circleSchema>;',
        '/** Two shapes. */',
        'export declare function pair<T extends Circle>(a: T, b: T): [T, T];',
        '',
      ].join('\n'),
    );
    write(
      'dist/options.d.ts',
      ["/** Options. */", 'export interface Options {', '    hello?: import("./greet.js").Greeting;', '}', "declare module './greet.js' {", '    interface Greeting {', '        loud?: boolean;', '    }', '}', ''].join('\n'),
    );
    report = tool.reports({ root: pkg, entries: [{ specifier: 'pkg', types: 'dist/index.d.ts', report: 'pkg.api.md' }] })[0]!;
  });

  test('lists every export sorted, with its declaration, where it is declared and under which name', () => {
    expect(report.exports).toBe(5);
    const names = [...report.text.matchAll(/^export (?:declare )?(?:function|interface|type) (\w+)/gm)].map((m) => m[1]);
    expect(names).toEqual(['Circle', 'greet', 'Greeting', 'Options', 'pair']);
    expect(report.text).toContain('// greet.ts (exported as Hello), type only\n// (undocumented)\nexport interface Greeting {\n    text: string;\n}');
    expect(report.text).toContain('export declare function greet(name: string, tone?: Tone): Greeting;');
  });

  test('marks what has no doc comment, and what a declaration names but no entry point exports', () => {
    expect(report.undocumented).toEqual(['Hello']);
    expect(report.forgotten).toEqual(['Tone (dist/tone.d.ts), named by greet']);
    expect(report.text).toContain('// (forgotten) Tone (dist/tone.d.ts), named by greet');
  });

  test('shows what `typeof` makes a type of, and the declaration merges the entry point brings', () => {
    expect(report.text).toContain('## Not exported, named through `typeof`');
    expect(report.text).toContain('// shapes.ts, not exported (typeof in Circle)\ndeclare const circleSchema: z.ZodObject<{ r: z.ZodNumber }>;');
    expect(report.text).toContain("## Declaration merges");
    expect(report.text).toContain("// options.ts\ndeclare module './greet.js' {");
  });

  test('names an export it cannot find', () => {
    write('dist/broken.d.ts', "export { missing } from './greet.js';\n");
    expect(() => tool.reports({ root: pkg, entries: [{ specifier: 'broken', types: 'dist/broken.d.ts', report: 'b.api.md' }] })).toThrow(
      'broken: cannot find the declaration of missing',
    );
  });
});
