/**
 * The scaffolded plugin's own test passes as written, run by vitest in the
 * plugin's folder outside the repository, with `plinth` linked into a
 * node_modules above it (as `npm link plinth` would): `plinth/sdk` resolves
 * through package.json exports to the built dist/sdk/index.js.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { scaffoldPlugin } from '../sdk/scaffold.js';
import { ensureBuilt } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
let base: string | undefined;

beforeAll(() => {
  ensureBuilt();
}, 300_000);

afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

/** The environment without this vitest run's own variables, so the child is a fresh vitest. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('VITEST') || key.startsWith('PLINTH_') || key === 'NODE_OPTIONS' || key === 'TEST') continue;
    env[key] = value;
  }
  return { ...env, NO_COLOR: '1', CI: '1' };
}

test('a scaffolded plugin passes its own test', async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-scaffold-'));
  expect(base.startsWith(root)).toBe(false);
  await mkdir(join(base, 'node_modules'), { recursive: true });
  await symlink(root, join(base, 'node_modules', 'plinth'), 'dir');

  const { dir, files } = await scaffoldPlugin({ name: 'my-plugin', parent: join(base, 'plugins') });
  expect(files.sort()).toEqual(['README.md', 'index.test.ts', 'index.ts', 'manifest.json']);
  expect(await readFile(join(dir, 'index.test.ts'), 'utf8')).toContain("from 'plinth/sdk'");

  const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [vitest, 'run', '--root', dir],
      { cwd: dir, env: childEnv(), timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : null) : 0;
        resolve({ code, output: `${stdout}\n${stderr}`.replace(/\u001b\[[0-9;]*m/g, '') });
      },
    );
  });
  expect(result.code, result.output).toBe(0);
  expect(result.output).toMatch(/Tests\s+2 passed \(2\)/);
  expect(result.output).toContain('index.test.ts');
}, 150_000);
