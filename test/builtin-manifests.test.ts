/**
 * Builtin manifests validated by the build and shipped parsed
 * (dist/builtin-manifests.json, kernel/builtin-manifests.ts): the parsed
 * manifest is exactly what parsing the text gives, and a builtin manifest.json
 * edited after the build is parsed again, not answered from the build.
 */
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { parseManifest } from '../sdk/manifest.js';
import { cleanEnv, describeRun, ensureBuilt, ROOT } from './support/cli.js';
import { execFile } from 'node:child_process';

beforeAll(() => ensureBuilt(), 300_000);

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

const shipped = () => JSON.parse(readFileSync(join(ROOT, 'dist', 'builtin-manifests.json'), 'utf8')) as Record<string, { text: string; manifest: string }>;

test('every builtin manifest is shipped parsed, as parsing its text gives it', () => {
  const table = shipped();
  const builtins = readdirSync(join(ROOT, 'plugins'), { withFileTypes: true }).filter((e) => e.isDirectory() && existsSync(join(ROOT, 'plugins', e.name, 'manifest.json')));
  expect(Object.keys(table).sort()).toEqual(builtins.map((e) => e.name).sort());
  for (const [name, entry] of Object.entries(table)) {
    expect(entry.text).toBe(readFileSync(join(ROOT, 'plugins', name, 'manifest.json'), 'utf8'));
    const parsed = parseManifest(JSON.parse(entry.text));
    expect(parsed.ok).toBe(true);
    expect(JSON.parse(entry.manifest)).toEqual(parsed.ok && parsed.manifest);
  }
});

/** `plinth <args>` of a copy of plinth (its package.json, dist/ and plugins/, node_modules linked). */
function run(root: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = join(root, '..');
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'dist', 'cli', 'bin.js'), '--home', join(base, 'home'), '--workspace', join(base, 'project'), ...args], { cwd: base, env: cleanEnv({ TMPDIR: base }, { ci: true }) }, (error, stdout, stderr) =>
      resolve({ code: typeof error?.code === 'number' ? error.code : error ? 1 : 0, stdout, stderr }),
    );
  });
}

test('a builtin manifest edited after the build is read as it is now', async () => {
  const base = mkdtempSync(join(tmpdir(), 'plinth-builtin-manifests-'));
  temps.push(base);
  const root = join(base, 'plinth');
  for (const part of ['package.json', 'dist', 'plugins']) cpSync(join(ROOT, part), join(root, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  const file = join(root, 'plugins', 'scaffold', 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as { description: string; commands: Record<string, { summary: string }> };

  const before = await run(root, ['ext', 'list', '--json']);
  expect(before.code, describeRun({ ...before, code: before.code })).toBe(0);
  expect(before.stdout).toContain(JSON.stringify(manifest.description));

  writeFileSync(file, JSON.stringify({ ...manifest, description: 'Edited after the build' }, null, 2));
  const edited = await run(root, ['ext', 'list', '--json']);
  expect(edited.code).toBe(0);
  expect(edited.stdout).toContain('"Edited after the build"');
  expect(edited.stdout).not.toContain(JSON.stringify(manifest.description));

  // An edit that makes it invalid is refused as any plugin's is.
  writeFileSync(file, JSON.stringify({ ...manifest, commands: { 'Plugin New': { summary: 'bad name' } } }));
  const invalid = await run(root, ['plugins', 'list']);
  expect(`${invalid.stdout}${invalid.stderr}`).toContain(`PLN_E_MANIFEST_INVALID: ${file}`);
  expect(invalid.stdout).not.toMatch(/^scaffold /m);
}, 120_000);
