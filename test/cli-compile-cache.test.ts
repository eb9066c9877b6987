/**
 * Node's module compile cache (cli/compile-cache.ts): turned on only where the
 * running Node has it, only in a folder that is the user's own, and never by
 * `--version` (which loads nothing but the version).
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CompileCacheHost, compileCacheDir, enableCompileCache, unsafeCacheDir } from '../cli/compile-cache.js';
import { ensureBuilt, expectExit, plinth, sandbox } from './support/cli.js';

const temps: string[] = [];
async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-compile-cache-test-'));
  temps.push(dir);
  return dir;
}

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A stand-in for `node:module` of Node ≥ 22.1 that records the folder it was given. */
function host(status = 0): CompileCacheHost & { dirs: Array<string | undefined> } {
  const dirs: Array<string | undefined> = [];
  return {
    dirs,
    enableCompileCache: (dir) => {
      dirs.push(dir);
      return { status, directory: dir };
    },
    constants: { compileCacheStatus: { FAILED: 3, ENABLED: 0, ALREADY_ENABLED: 1, DISABLED: 2 } },
  };
}

const hasCompileCache = (): boolean => {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1);
};

describe('enableCompileCache', () => {
  test('a Node without the API (Node 20): nothing is made, nothing is called', async () => {
    const dir = join(await temp(), 'cache');
    expect(enableCompileCache({}, dir)).toEqual({ state: 'absent' });
    expect(existsSync(dir)).toBe(false);
  });

  test('the folder is per user, in the temporary folder', () => {
    expect(compileCacheDir('/tmp', 1234)).toBe(join('/tmp', 'plinth-compile-cache-1234'));
  });

  test('made for this user alone (0700) and handed to Node', async () => {
    const dir = join(await temp(), 'cache');
    const fake = host();
    expect(enableCompileCache(fake, dir)).toEqual({ state: 'enabled', dir });
    expect(fake.dirs).toEqual([dir]);
    if (process.platform !== 'win32') expect(lstatSync(dir).mode & 0o777).toBe(0o700);
  });

  test.skipIf(process.platform === 'win32')('a folder others may write to, a link, or a file is refused, and Node is not asked', async () => {
    const base = await temp();
    const open = join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const link = join(base, 'link');
    symlinkSync(await temp(), link);
    for (const [dir, reason] of [[open, 'others may write to it'], [link, 'it is a symbolic link']] as const) {
      const fake = host();
      expect(enableCompileCache(fake, dir)).toEqual({ state: 'refused', dir, reason });
      expect(fake.dirs).toEqual([]);
    }
    expect(unsafeCacheDir(join(base, 'missing', 'deeper'))).toMatch(/^cannot make it/);
  });

  test.skipIf(process.platform === 'win32' || process.getuid?.() !== 0)('a folder of another user is refused (run as root: the folder is given away)', async () => {
    const dir = join(await temp(), 'theirs');
    mkdirSync(dir, { mode: 0o700 });
    const { chownSync } = await import('node:fs');
    chownSync(dir, 4242, 4242);
    expect(unsafeCacheDir(dir, 0)).toBe('it belongs to user 4242');
  });

  test('Node\'s answer is passed on: already enabled (NODE_COMPILE_CACHE), disabled, failed', async () => {
    const dir = join(await temp(), 'cache');
    expect(enableCompileCache(host(1), dir).state).toBe('already');
    expect(enableCompileCache(host(2), dir).state).toBe('disabled');
    expect(enableCompileCache(host(3), dir).state).toBe('failed');
    const throwing: CompileCacheHost = {
      enableCompileCache: () => {
        throw new Error('no');
      },
    };
    expect(enableCompileCache(throwing, dir)).toEqual({ state: 'failed', dir });
  });
});

describe('the plinth command', () => {
  test(`a command fills the cache where Node has one, and makes nothing where it has none (this Node: ${process.versions.node}); --version never`, async () => {
    const box = await sandbox('plinth-compile-cache-cli-');
    temps.push(box.base);
    const tmp = join(box.base, 'tmp');
    mkdirSync(tmp);
    const version = await plinth(['--version'], { env: { TMPDIR: tmp, TEMP: tmp, TMP: tmp } });
    expectExit(version, 0);
    expect(readdirSync(tmp)).toEqual([]);

    const listed = await plinth([...box.dirs, 'plugins', 'list'], { env: { TMPDIR: tmp, TEMP: tmp, TMP: tmp } });
    expectExit(listed, 0);
    const dir = compileCacheDir(tmp);
    if (hasCompileCache()) {
      expect(existsSync(dir)).toBe(true);
      expect(readdirSync(dir).length).toBeGreaterThan(0);
    } else {
      expect(existsSync(dir)).toBe(false);
    }
  }, 60_000);
});
