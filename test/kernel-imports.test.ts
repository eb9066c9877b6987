/**
 * The kernel (and the sdk it hands to plugins) imports only tapable, jiti,
 * semver, zod, picomatch and Node's own modules: a plugin's heavy dependencies
 * stay with that plugin. (picomatch has no dependencies, and the sdk's globs
 * require it on first use, not at import.) Specifiers are read with a real parser (oxc, through vite), so
 * imports written inside template strings (the scaffold's) do not count.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync } from 'vite';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const ALLOWED = new Set(['tapable', 'jiti', 'semver', 'zod', 'picomatch']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier of a file: static imports, re-exports, dynamic imports, `require` calls. */
/**
 * The one place that may import a computed specifier: the plugin loader, which
 * imports a builtin plugin's compiled main (plugin code, not a kernel dependency).
 */
const PLUGIN_LOADER = /kernel[\\/]loader\.ts$/;

function specifiers(file: string): { specifiers: string[]; problems: string[] } {
  const source = readFileSync(file, 'utf8');
  const parsed = parseSync(file, source);
  const problems = parsed.errors.map((e) => `parse error: ${e.message}`);
  const found: string[] = parsed.module.staticImports.filter((i) => !typeOnly(source.slice(i.start, i.end), i.moduleRequest.value)).map((i) => i.moduleRequest.value);
  for (const exported of parsed.module.staticExports) {
    if (typeOnly(source.slice(exported.start, exported.end), exported.entries[0]?.moduleRequest?.value)) continue;
    for (const entry of exported.entries) if (entry.moduleRequest) found.push(entry.moduleRequest.value);
  }
  for (const dynamic of parsed.module.dynamicImports) {
    const text = source.slice(dynamic.moduleRequest.start, dynamic.moduleRequest.end).trim();
    const literal = /^(['"`])([^'"`$]*)\1$/.exec(text);
    if (literal) found.push(literal[2]!);
    else if (PLUGIN_LOADER.test(file) && text.includes('compiled')) continue;
    else problems.push(`import(${text}): a computed specifier cannot be checked`);
  }
  for (const [, , name] of source.matchAll(/(?<![.\w$])require\(\s*(['"])([^'"]+)\1\s*\)/g)) found.push(name!);
  return { specifiers: found, problems };
}

/**
 * The sdk's service contracts name the MCP SDK's types (`Transport`,
 * `OAuthClientProvider`, `Client`): a whole `import type` / `export type`
 * statement of it is erased at build, so it loads nothing. Not `import { type X }`,
 * which verbatimModuleSyntax keeps as an import of the module.
 */
const TYPES_ONLY = /^@modelcontextprotocol\/(client|server|core)(\/|$)/;

function typeOnly(statement: string, specifier: string | undefined): boolean {
  return specifier !== undefined && TYPES_ONLY.test(specifier) && /^(import|export)\s+type\s*[{*]/.test(statement);
}

function allowed(specifier: string): boolean {
  if (specifier.startsWith('./') || specifier.startsWith('../')) return true;
  if (specifier.startsWith('node:')) return true;
  const pkg = specifier.split('/')[0]!;
  return ALLOWED.has(pkg);
}

test('kernel/, cli/, sdk/ and testing/ import only tapable, jiti, semver, zod, picomatch, node: modules, relative files and the MCP SDK\'s types', () => {
  const files = ['kernel', 'cli', 'sdk', 'testing'].flatMap((dir) => tsFiles(join(root, dir)));
  expect(files.length).toBeGreaterThan(10);
  const offenders: string[] = [];
  let seen = 0;
  for (const file of files) {
    const rel = file.slice(root.length);
    const result = specifiers(file);
    seen += result.specifiers.length;
    for (const problem of result.problems) offenders.push(`${rel}: ${problem}`);
    for (const specifier of result.specifiers) if (!allowed(specifier)) offenders.push(`${rel}: "${specifier}"`);
  }
  expect(seen).toBeGreaterThan(files.length); // the parser did find imports
  expect(offenders, `forbidden imports in the kernel or sdk:\n  ${offenders.join('\n  ')}`).toEqual([]);
});

test('the check itself catches a forbidden import and ignores imports inside strings', () => {
  const dir = join(root, 'test');
  const probe = 'probe.ts';
  const source = [
    "import { x } from 'execa';",
    "export * from '@modelcontextprotocol/client';",
    "const t = `import { y } from 'tar';`;",
    "await import('keytar');",
    "import semver from 'semver';",
  ].join('\n');
  const parsed = parseSync(join(dir, probe), source);
  const found = [
    ...parsed.module.staticImports.map((i) => i.moduleRequest.value),
    ...parsed.module.staticExports.flatMap((e) => e.entries.flatMap((x) => (x.moduleRequest ? [x.moduleRequest.value] : []))),
    ...parsed.module.dynamicImports.map((d) => source.slice(d.moduleRequest.start + 1, d.moduleRequest.end - 1)),
  ];
  expect(found.filter((s) => !allowed(s)).sort()).toEqual(['@modelcontextprotocol/client', 'execa', 'keytar']);
  expect(found).not.toContain('tar');
});

test('a whole type-only import of the MCP SDK passes; a value import, or `import { type X }` (kept by verbatimModuleSyntax), does not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-kernel-imports-'));
  try {
    const file = join(dir, 'contract.ts');
    writeFileSync(
      file,
      [
        "import type { Transport } from '@modelcontextprotocol/client';",
        "export type { OAuthClientProvider } from '@modelcontextprotocol/client';",
        "import { type Client } from '@modelcontextprotocol/client/stdio';",
        "import { ProtocolError } from '@modelcontextprotocol/server';",
        "import type { Options } from 'execa';",
      ].join('\n'),
    );
    expect(specifiers(file).specifiers.filter((s) => !allowed(s)).sort()).toEqual(['@modelcontextprotocol/client/stdio', '@modelcontextprotocol/server', 'execa']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
