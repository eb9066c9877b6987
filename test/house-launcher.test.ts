/**
 * One door for child processes: nothing under plugins/ starts a process but
 * the launcher plugin. No file there other than plugins/launcher/ imports
 * `execa`, `node:child_process`, `child_process` or the SDK's stdio client
 * transport (which spawns on its own), statically, dynamically or through
 * `require`. Specifiers are read with a real parser (oxc, through vite), so a
 * specifier in a string or a comment does not count, and one written any way
 * the parser sees does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync } from 'vite';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const PLUGINS = join(root, 'plugins');
const LAUNCHER = `plugins${sep}launcher${sep}`;
/** Modules that start processes. */
const SPAWNERS = new Set(['execa', 'node:child_process', 'child_process', '@modelcontextprotocol/sdk/client/stdio.js', '@modelcontextprotocol/client/stdio', 'cross-spawn']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) ? [path] : [];
  });
}

/** Every module specifier a file names: static imports (type-only ones too), re-exports, literal dynamic imports, `require` calls. */
function specifiers(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const parsed = parseSync(file, source);
  const found: string[] = parsed.module.staticImports.map((i) => i.moduleRequest.value);
  for (const exported of parsed.module.staticExports) {
    for (const entry of exported.entries) if (entry.moduleRequest) found.push(entry.moduleRequest.value);
  }
  for (const dynamic of parsed.module.dynamicImports) {
    const text = source.slice(dynamic.moduleRequest.start, dynamic.moduleRequest.end).trim();
    const literal = /^(['"`])([^'"`$]*)\1$/.exec(text);
    found.push(literal ? literal[2]! : text);
  }
  for (const [, , name] of source.matchAll(/(?<![.\w$])require\(\s*(['"])([^'"]+)\1\s*\)/g)) found.push(name!);
  return found;
}

const files = sourceFiles(PLUGINS).map((file) => ({ file, rel: relative(root, file) }));

test('the scan reads the plugins, and finds the launcher itself importing node:child_process', () => {
  expect(files.length).toBeGreaterThan(50);
  const launcher = files.filter(({ rel }) => rel.startsWith(LAUNCHER));
  expect(launcher.some(({ file }) => specifiers(file).includes('node:child_process'))).toBe(true);
});

test('no plugin but the launcher imports execa, node:child_process or a transport that spawns', () => {
  const offenders = files
    .filter(({ rel }) => !rel.startsWith(LAUNCHER))
    .flatMap(({ file, rel }) => specifiers(file).filter((specifier) => SPAWNERS.has(specifier)).map((specifier) => `${rel}: ${specifier}`));
  expect(offenders).toEqual([]);
});

test('every builtin plugin that gets the launcher service lists launcher in its dependencies', () => {
  const missing: string[] = [];
  for (const entry of readdirSync(PLUGINS, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === 'launcher') continue;
    const folder = join(PLUGINS, entry.name);
    const usesLauncher = sourceFiles(folder).some((file) => /\.get\(\s*['"]launcher['"]\s*\)/.test(readFileSync(file, 'utf8')));
    if (!usesLauncher) continue;
    const manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8')) as { dependencies?: Record<string, string> };
    if (manifest.dependencies?.launcher === undefined) missing.push(entry.name);
  }
  expect(missing).toEqual([]);
});
