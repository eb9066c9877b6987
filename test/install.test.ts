/**
 * The README's way to put `plinth` on the PATH works, offline: `npm install -g .`
 * (and `npm link`) from the repository into a prefix of the test's own, then
 * the prefix's `bin/plinth` runs from any folder.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, describeRun, ensureBuilt } from './support/cli.js';
import { installGlobally, offlineNpmEnv, shell } from './support/npm.js';

const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
let base: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-install-'));
}, 300_000);
afterAll(() => rm(base, { recursive: true, force: true }));

describe('putting plinth on the PATH', () => {
  test('the README says how', () => {
    expect(readme).toContain('npm install -g .');
    expect(readme).toContain('npm link');
  });

  test('npm install -g . into a prefix, offline: <prefix>/bin/plinth runs from another folder', async () => {
    const { bin, result } = await installGlobally(base);
    expect(result.code, describeRun(result)).toBe(0);

    const elsewhere = join(base, 'elsewhere');
    await mkdir(elsewhere, { recursive: true });
    const env = await offlineNpmEnv(base, { PLINTH_HOME: join(base, 'home') });
    const shown = await shell(`'${bin}' --version`, elsewhere, env);
    expect(shown.code, describeRun(shown)).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^plinth ${version.replaceAll('.', '\\.')} \\(kernel API \\d+\\.\\d+\\.\\d+, node v`));

    // Its builtin plugins come with it: the embedded default boots from there.
    const up = await shell(`'${bin}' up --once --json`, elsewhere, env);
    expect(up.code, describeRun(up)).toBe(0);
    const status = JSON.parse(up.stdout) as { plugins: { name: string; state: string }[] };
    expect(status.plugins.find((p) => p.name === 'trust')?.state).toBe('active');
  }, 240_000);

  test('npm link does the same', async () => {
    const prefix = join(base, 'linked');
    const linked = await shell('npm link', ROOT, await offlineNpmEnv(base, { npm_config_prefix: prefix }));
    expect(linked.code, describeRun(linked)).toBe(0);
    const shown = await shell(`'${join(prefix, 'bin', 'plinth')}' --version`, base, await offlineNpmEnv(base));
    expect(shown.code, describeRun(shown)).toBe(0);
    expect(shown.stdout).toContain(`plinth ${version}`);
  }, 240_000);
});
