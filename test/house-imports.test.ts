/**
 * House rule: a plugin talks to another only through services and events, so
 * no file under plugins/<name>/ imports a file of another plugin's folder —
 * not a type, not a value (contracts live in the sdk). Each builtin plugin can
 * then be packed and installed on its own. Specifiers are read with a real
 * parser (oxc, through vite): static imports, `import type`, `export … from`
 * and `import()`; imports written inside template strings (generated code) do
 * not count.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync } from 'vite';
import { afterAll, expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const SOURCE = /\.(ts|mts|cts|mjs|cjs|js)$/;

/** Every source file under `dir`, node_modules left out. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return SOURCE.test(entry.name) ? [path] : [];
  });
}

interface Found {
  readonly specifier: string;
  readonly line: number;
}

/** Every module specifier of a file with its line; a computed `import()` is reported as such. */
function specifiers(file: string): { found: Found[]; problems: string[] } {
  const source = readFileSync(file, 'utf8');
  const parsed = parseSync(file, source);
  const lineOf = (offset: number) => source.slice(0, offset).split('\n').length;
  const problems = parsed.errors.map((e) => `parse error: ${e.message}`);
  const found: Found[] = parsed.module.staticImports.map((i) => ({ specifier: i.moduleRequest.value, line: lineOf(i.start) }));
  for (const exported of parsed.module.staticExports) {
    for (const entry of exported.entries) if (entry.moduleRequest) found.push({ specifier: entry.moduleRequest.value, line: lineOf(exported.start) });
  }
  for (const dynamic of parsed.module.dynamicImports) {
    const text = source.slice(dynamic.moduleRequest.start, dynamic.moduleRequest.end).trim();
    const literal = /^(['"`])([^'"`$]*)\1$/.exec(text);
    if (literal) found.push({ specifier: literal[2]!, line: lineOf(dynamic.start) });
    // A computed specifier cannot point into another plugin by a relative path written here.
  }
  return { found, problems };
}

/**
 * The imports of files under `pluginsDir` that land in another plugin's folder,
 * as `file:line imports "specifier" (→ target)`, paths relative to `base`.
 */
function crossings(pluginsDir: string, base: string): string[] {
  const offenders: string[] = [];
  for (const file of sourceFiles(pluginsDir)) {
    const own = relative(pluginsDir, file).split(sep)[0]!;
    const { found, problems } = specifiers(file);
    for (const problem of problems) offenders.push(`${relative(base, file)}: ${problem}`);
    for (const { specifier, line } of found) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(file), specifier);
      const inPlugins = relative(pluginsDir, target);
      // Outside plugins/ (the sdk's or the kernel's files by path): the folder would not work once copied or installed.
      const owner = inPlugins.startsWith('..') || inPlugins === '' ? undefined : inPlugins.split(sep)[0]!;
      if (owner === own) continue;
      const where = owner === undefined ? 'outside plugins/: import plinth/sdk instead' : `in plugin "${owner}"`;
      offenders.push(`${relative(base, file)}:${line} imports "${specifier}" (→ ${relative(base, target)}, ${where})`);
    }
  }
  return offenders;
}

test('no plugin imports a file of another plugin\'s folder (types included), nor one outside plugins/ by path', () => {
  const pluginsDir = join(root, 'plugins');
  const plugins = readdirSync(pluginsDir, { withFileTypes: true }).filter((e) => e.isDirectory());
  expect(plugins.length).toBeGreaterThan(8);
  expect(sourceFiles(pluginsDir).length).toBeGreaterThan(100);
  const offenders = crossings(pluginsDir, root);
  expect(offenders, `imports into another plugin's folder (declare the contract in sdk/ and import it from plinth/sdk):\n  ${offenders.join('\n  ')}`).toEqual([]);
});

test('a builtin plugin reaches plinth only as plinth/sdk and plinth/internal, never the kernel, the test kernel or a deep path', () => {
  const pluginsDir = join(root, 'plugins');
  const offenders: string[] = [];
  const seen = new Set<string>();
  for (const file of sourceFiles(pluginsDir)) {
    for (const { specifier, line } of specifiers(file).found) {
      if (specifier !== 'plinth' && !specifier.startsWith('plinth/')) continue;
      seen.add(specifier);
      if (specifier !== 'plinth/sdk' && specifier !== 'plinth/internal') offenders.push(`${relative(root, file)}:${line} imports "${specifier}"`);
    }
  }
  expect([...seen].sort(), 'the check saw both entry points in use').toEqual(expect.arrayContaining(['plinth/internal', 'plinth/sdk']));
  expect(offenders, 'a plugin that reaches plinth another way would break once packed or installed').toEqual([]);
});

const scratch = mkdtempSync(join(tmpdir(), 'plinth-house-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test('the check names the file, the line and the target of every kind of crossing import', () => {
  const plugins = join(scratch, 'plugins');
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(plugins, path)), { recursive: true });
    writeFileSync(join(plugins, path), text);
  };
  write('mcp/types.ts', 'export interface McpService { x: 1 }\n');
  write('mcp/own.ts', "import type { McpService } from './types.js';\nexport type { McpService };\n");
  write(
    'health/monitor.ts',
    [
      "import { definePlugin } from 'plinth/sdk';",
      "import type { McpService } from '../mcp/types.js';",
      "export { x } from '../mcp/own.js';",
      'const later = () => import("../oauth/service.js");',
      "const text = `import { y } from '../mcp/types.js';`;",
      "import { z } from './probe.js';",
    ].join('\n'),
  );
  write('oauth/secrets/probe.mjs', "import('../../mcp/types.js');\nexport * from '../../../sdk/index.js';\n");
  expect(crossings(plugins, scratch).sort()).toEqual([
    'plugins/health/monitor.ts:2 imports "../mcp/types.js" (→ plugins/mcp/types.js, in plugin "mcp")',
    'plugins/health/monitor.ts:3 imports "../mcp/own.js" (→ plugins/mcp/own.js, in plugin "mcp")',
    'plugins/health/monitor.ts:4 imports "../oauth/service.js" (→ plugins/oauth/service.js, in plugin "oauth")',
    'plugins/oauth/secrets/probe.mjs:1 imports "../../mcp/types.js" (→ plugins/mcp/types.js, in plugin "mcp")',
    'plugins/oauth/secrets/probe.mjs:2 imports "../../../sdk/index.js" (→ sdk/index.js, outside plugins/: import plinth/sdk instead)',
  ]);
});

/** Imports of the files under `dir` that are neither its own files, `plinth/sdk`, Node's modules nor the MCP SDK. */
function outsideAuthorOffenders(dir: string): string[] {
  const offenders: string[] = [];
  for (const file of sourceFiles(dir)) {
    for (const { specifier, line } of specifiers(file).found) {
      const own = specifier.startsWith('.') && !relative(dir, resolve(dirname(file), specifier)).startsWith('..');
      if (!own && specifier !== 'plinth/sdk' && !specifier.startsWith('node:') && !/^@modelcontextprotocol\/(client|server)(\/|$)/.test(specifier)) offenders.push(`${relative(root, file)}:${line} imports "${specifier}"`);
    }
  }
  return offenders;
}

test('the fixture third-party transport imports only plinth/sdk, the MCP SDK and its own files, as an outside author would', () => {
  const dir = join(root, 'test', 'fixtures', 'plugins', 'transport-loopback');
  expect(sourceFiles(dir).length).toBeGreaterThan(1);
  expect(outsideAuthorOffenders(dir)).toEqual([]);
});

test('the third-party packages built against the packed plinth (test/third-party.test.ts) import only plinth/sdk, Node and the MCP SDK', () => {
  const base = join(root, 'test', 'fixtures', 'third-party');
  for (const name of ['guard-plugin', 'tcp-transport', 'file-secrets']) {
    const dir = join(base, name);
    expect(sourceFiles(dir).length, name).toBeGreaterThan(0);
    expect(specifiers(join(dir, 'index.ts')).found.map((f) => f.specifier)).toContain('plinth/sdk');
    expect(outsideAuthorOffenders(dir)).toEqual([]);
  }
  // The check is real: the plugin that reaches for plinth/internal (to show that it cannot load) is caught.
  expect(outsideAuthorOffenders(join(base, 'internal-plugin'))).toEqual(['test/fixtures/third-party/internal-plugin/index.ts:9 imports "plinth/internal"']);
});
