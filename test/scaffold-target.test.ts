/**
 * `plinth plugin new --dir <somewhere it cannot go>`: fails at once with
 * PLN_E_SCAFFOLD_TARGET naming the path that is the cause, for a virtual file
 * system (/proc, where Node 20's recursive mkdir spun for ever), a file in the
 * way, and a read-only folder (a real read-only bind mount, by bubblewrap, so
 * that it holds for root too).
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { BIN, type Result, type Sandbox, cleanEnv, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
const boxes: Sandbox[] = [];
afterEach(async () => {
  for (const box of boxes.splice(0)) await box.remove();
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-scaffold-target-');
  boxes.push(made);
  return made;
}

/** The error of `plinth plugin new x --dir <dir> --json`, which must exit 1. */
async function refused(place: Sandbox, dir: string): Promise<{ code: string; message: string; hint: string }> {
  const result = await run(place, ['plugin', 'new', 'x', '--dir', dir, '--json']);
  expectExit(result, 1);
  return json(result).error;
}

const bwrapUsable = spawnSync('bwrap', ['--dev-bind', '/', '/', '--', 'true']).status === 0;

describe('plinth plugin new where the folder cannot be made', () => {
  test('under /proc: refused at once, naming /proc', async () => {
    const error = await refused(await box(), '/proc/nope');
    expect(error.code).toBe('PLN_E_SCAFFOLD_TARGET');
    expect(error.message).toContain('cannot create the folder /proc/nope: /proc does not take new folders');
    expect(error.hint).toContain('--dir');
  }, 90_000);

  test('a file in the way, as --dir or further up: named as a file', async () => {
    const place = await box();
    const file = join(place.base, 'a-file');
    await writeFile(file, 'not a folder\n');
    for (const dir of [file, join(file, 'deeper')]) {
      const error = await refused(place, dir);
      expect(error.code).toBe('PLN_E_SCAFFOLD_TARGET');
      expect(error.message).toContain(`${file} is a file, not a folder`);
    }
  }, 90_000);

  test.skipIf(!bwrapUsable)('a read-only folder: the folder to create, or the files in an empty one, refused as on a read-only file system', async () => {
    const place = await box();
    const readOnly = join(place.base, 'read-only');
    await mkdir(join(readOnly, 'empty'), { recursive: true });
    const inReadOnly = (args: readonly string[]): Promise<Result> =>
      new Promise((resolve) => {
        const argv = ['--dev-bind', '/', '/', '--ro-bind', readOnly, readOnly, '--', process.execPath, BIN, ...place.dirs, ...args, '--json'];
        execFile('bwrap', argv, { cwd: place.workspace, env: cleanEnv({}, { ci: true }), timeout: 60_000 }, (error, stdout, stderr) => {
          const code = (error as { code?: unknown } | null)?.code;
          resolve({ code: error ? (typeof code === 'number' ? code : null) : 0, stdout, stderr });
        });
      });
    const folder = await inReadOnly(['plugin', 'new', 'x', '--dir', readOnly]);
    expectExit(folder, 1);
    expect(json(folder).error).toMatchObject({ code: 'PLN_E_SCAFFOLD_TARGET', message: expect.stringContaining(`cannot create the folder ${join(readOnly, 'x')}: ${readOnly} is on a read-only file system`) });
    const files = await inReadOnly(['plugin', 'new', 'empty', '--dir', readOnly]);
    expectExit(files, 1);
    expect(json(files).error).toMatchObject({ code: 'PLN_E_SCAFFOLD_TARGET', message: expect.stringContaining(`cannot write ${join(readOnly, 'empty', 'manifest.json')}`) });
  }, 90_000);
});
