/**
 * npm runs this package's `prepare` again whenever a dependent installs or links it (a scaffolded
 * plugin's `npm install` with its `file:` link to plinth, `npm link plinth`). It must not rebuild an
 * up-to-date dist/ under a running host: every `plinth` started during a rebuild failed.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { BIN, ROOT, ensureBuilt } from './support/cli.js';

const npm = (args: string[]) => execFileSync('npm', args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'error' } });

test('prepare leaves an up-to-date dist/ as it is: the same files, not rebuilt', () => {
  ensureBuilt();
  // Brings dist/ up to date with the sources first, should they have been edited since the last build.
  execFileSync(process.execPath, ['build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'ignore' });
  const before = { dist: statSync(join(ROOT, 'dist')).ino, bin: statSync(BIN).ino, mtime: statSync(BIN).mtimeMs };

  const printed = npm(['run', 'prepare']);

  expect(printed).toContain('dist/ is up to date with the sources: not rebuilt');
  expect({ dist: statSync(join(ROOT, 'dist')).ino, bin: statSync(BIN).ino, mtime: statSync(BIN).mtimeMs }).toEqual(before);
});
