/**
 * The sdk's shared-file helpers: `withFileLock` (a lock file taken by every
 * process that writes one file) and `writeFileAtomic` (temp file, fsync,
 * rename). Contention and dead holders are real child processes
 * (test/fixtures/files/contend.mjs); the rest is in process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, open, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type PlinthError, isPlinthError, withFileLock, writeFileAtomic } from '../sdk/index.js';
import { type LineChild, lineChild } from './support/child.js';
import { rejection } from './support/errors.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const CONTEND = join(root, 'test', 'fixtures', 'files', 'contend.mjs');
/** Child processes start node and jiti: generous on a slow shared machine, but bounded. */
const CHILD_TIMEOUT_MS = 40_000;

const folders: string[] = [];
const children: ChildProcess[] = [];

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-files-'));
  folders.push(dir);
  return dir;
}

afterEach(() => {
  vi.restoreAllMocks();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The environment for child processes: no vitest or plinth variables. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('PLINTH_') || key === 'NODE_OPTIONS' || key.startsWith('VITEST')) continue;
    env[key] = value;
  }
  return env;
}

/** Starts contend.mjs; `next()` is its next line of output, bounded in time and naming its stderr on failure. */
function contender(args: string[]): LineChild {
  const started = lineChild(CONTEND, args, { cwd: root, env: childEnv(), timeoutMs: CHILD_TIMEOUT_MS, name: `${args[0]} child` });
  children.push(started.child);
  return started;
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
}

describe('withFileLock', () => {
  it(
    'two processes contending for the lock both complete and every write lands',
    async () => {
      const dir = await temp();
      const data = join(dir, 'data.json');
      const lock = `${data}.lock`;
      const count = 25;
      const pair = ['alpha', 'beta'].map((name) => contender(['append', lock, data, name, String(count)]));
      expect(await Promise.all(pair.map((c) => c.next()))).toEqual(['ready', 'ready']);
      for (const { child } of pair) child.stdin!.end('go\n');
      expect(await Promise.all(pair.map((c) => c.next()))).toEqual(['done', 'done']);
      await Promise.all(pair.map((c) => exited(c.child)));
      expect(pair.map((c) => c.child.exitCode)).toEqual([0, 0]);

      // Each append re-read the list under the lock: had two overlapped, one would have lost the other's entry.
      const list = JSON.parse(await readFile(data, 'utf8')) as string[];
      const expected = ['alpha', 'beta'].flatMap((name) => Array.from({ length: count }, (_, n) => `${name}-${n}`));
      expect([...list].sort()).toEqual([...expected].sort());
      for (const name of ['alpha', 'beta']) expect(list.filter((e) => e.startsWith(`${name}-`))).toEqual(expected.filter((e) => e.startsWith(`${name}-`)));
      expect(await readdir(dir)).toEqual(['data.json']); // no lock, no temporary file
      expect((await stat(data)).mode & 0o777).toBe(0o640);
    },
    CHILD_TIMEOUT_MS + 10_000,
  );

  it(
    'recovers the lock of a process that died holding it',
    async () => {
      const dir = await temp();
      const lock = join(dir, 'state.json.lock');
      const holder = contender(['hold', lock]);
      expect(await holder.next()).toBe('locked');
      holder.child.kill('SIGKILL');
      await exited(holder.child);
      const left = JSON.parse(await readFile(lock, 'utf8')) as { pid: number; host: string };
      expect(left).toMatchObject({ pid: holder.child.pid, host: hostname() });

      const started = Date.now();
      expect(await withFileLock(lock, async () => 'ran', { timeoutMs: 5_000 })).toBe('ran');
      expect(Date.now() - started).toBeLessThan(2_000); // recovered at once, not by waiting out staleMs
      expect(await readdir(dir)).toEqual([]);
    },
    CHILD_TIMEOUT_MS + 10_000,
  );

  it(
    'a lock a live process holds for the whole wait is PLN_E_FILE_LOCKED, and free once it lets go',
    async () => {
      const dir = await temp();
      const lock = join(dir, 'state.json.lock');
      const holder = contender(['hold', lock]);
      expect(await holder.next()).toBe('locked');

      const fn = vi.fn(async () => 'ran');
      const started = Date.now();
      const error = await rejection(withFileLock(lock, fn, { timeoutMs: 300 }));
      expect(error.code).toBe('PLN_E_FILE_LOCKED');
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(error.details).toMatchObject({ lockFile: lock, pid: holder.child.pid, host: hostname() });
      expect(error.hint).toContain(lock);
      expect(fn).not.toHaveBeenCalled();
      expect(JSON.parse(await readFile(lock, 'utf8'))).toMatchObject({ pid: holder.child.pid }); // still the holder's

      holder.child.stdin!.end();
      await exited(holder.child);
      expect(holder.child.exitCode).toBe(0);
      expect(await readdir(dir)).toEqual([]); // the holder released it
      expect(await withFileLock(lock, fn, { timeoutMs: 300 })).toBe('ran');
    },
    CHILD_TIMEOUT_MS + 10_000,
  );

  it('a lock older than staleMs, or one whose owner was never written, is removed even if its process lives', async () => {
    const dir = await temp();
    const lock = join(dir, 'state.json.lock');
    const past = new Date(Date.now() - 60_000);

    await writeFile(lock, JSON.stringify({ pid: process.ppid, host: hostname(), nonce: 'old', at: past.toISOString() }));
    await utimes(lock, past, past);
    expect(await withFileLock(lock, async () => 'old lock broken', { staleMs: 10_000, timeoutMs: 1_000 })).toBe('old lock broken');

    const recent = new Date(Date.now() - 5_000);
    await writeFile(lock, 'garbage');
    await utimes(lock, recent, recent);
    expect(await withFileLock(lock, async () => 'garbage broken', { timeoutMs: 1_000 })).toBe('garbage broken');
    expect(await readdir(dir)).toEqual([]);

    // A fresh lock of a live process is respected.
    await writeFile(lock, JSON.stringify({ pid: process.ppid, host: hostname(), nonce: 'live', at: new Date().toISOString() }));
    expect((await rejection(withFileLock(lock, async () => 'ran', { timeoutMs: 150 }))).code).toBe('PLN_E_FILE_LOCKED');
  });

  it('calls in one process take turns; what fn throws passes through and the lock is released', async () => {
    const dir = await temp();
    let inside = 0;
    let most = 0;
    let runs = 0;
    // Many rounds of many callers: a release that forgets the lock before removing it lets a third caller in.
    for (let round = 0; round < 25; round++) {
      const lock = join(dir, `round-${round}.lock`);
      await Promise.all(
        Array.from({ length: 8 }, () =>
          withFileLock(lock, async () => {
            inside++;
            most = Math.max(most, inside);
            await new Promise((resolve) => setImmediate(resolve));
            runs++;
            inside--;
          }),
        ),
      );
    }
    expect(most).toBe(1);
    expect(runs).toBe(25 * 8);

    const lock = join(dir, 'state.json.lock');
    const boom = new Error('boom');
    await expect(withFileLock(lock, async () => Promise.reject(boom))).rejects.toBe(boom);
    expect(await readdir(dir)).toEqual([]);
  });

  it('a lock file that cannot be created is PLN_E_FILE_WRITE', async () => {
    const dir = await temp();
    const lock = join(dir, 'missing', 'state.json.lock');
    const error = await rejection(withFileLock(lock, async () => 'ran'));
    expect(error.code).toBe('PLN_E_FILE_WRITE');
    expect(error.details).toMatchObject({ file: lock, errno: 'ENOENT' });
  });
});

describe('writeFileAtomic', () => {
  it('replaces the file, leaves no temporary file and sets the mode exactly', async () => {
    const dir = await temp();
    const file = join(dir, 'state.json');

    await writeFileAtomic(file, '{"n":1}\n');
    expect(await readFile(file, 'utf8')).toBe('{"n":1}\n');
    expect((await stat(file)).mode & 0o777).toBe(0o600); // a new file: its owner's only

    await writeFileAtomic(file, new TextEncoder().encode('{"n":2}\n'), { mode: 0o664 });
    expect(await readFile(file, 'utf8')).toBe('{"n":2}\n');
    expect((await stat(file)).mode & 0o777).toBe(0o664); // not reduced by the umask

    await chmod(file, 0o644);
    await writeFileAtomic(file, '{"n":3}\n');
    expect((await stat(file)).mode & 0o777).toBe(0o644); // an existing file keeps its mode
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('a reader sees the old content or the new, never part of either', async () => {
    const dir = await temp();
    const file = join(dir, 'big.txt');
    const versions = ['a', 'b', 'c'].map((c) => c.repeat(1 << 20));
    await writeFileAtomic(file, versions[0]!);
    let writing = true;
    const reads: string[] = [];
    const reader = (async () => {
      while (writing) reads.push(await readFile(file, 'utf8'));
    })();
    for (let i = 1; i <= 12; i++) await writeFileAtomic(file, versions[i % versions.length]!);
    writing = false;
    await reader;
    expect(reads.length).toBeGreaterThan(0);
    for (const text of reads) expect(versions).toContain(text);
    expect(await readdir(dir)).toEqual(['big.txt']);
  });

  it('durable: false replaces the file the same way without flushing it to disk (a cache)', async () => {
    const dir = await temp();
    const file = join(dir, 'cache.json');
    const probe = await open(join(dir, '.probe'), 'w');
    const handleProto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    await rm(join(dir, '.probe'));
    const sync = vi.spyOn(handleProto, 'sync');
    try {
      await writeFileAtomic(file, 'first\n', { durable: false });
      await writeFileAtomic(file, 'second\n', { mode: 0o640, durable: false });
      expect(sync).not.toHaveBeenCalled();
      expect(await readFile(file, 'utf8')).toBe('second\n');
      expect((await stat(file)).mode & 0o777).toBe(0o640);
      expect(await readdir(dir)).toEqual(['cache.json']);
      await writeFileAtomic(file, 'third\n');
      expect(sync).toHaveBeenCalled(); // the default: the file, then its folder
    } finally {
      sync.mockRestore();
    }
  });

  it('a failed write is PLN_E_FILE_WRITE and leaves the previous content and no temporary file', async () => {
    const dir = await temp();
    const file = join(dir, 'state.json');
    await writeFile(file, 'previous\n', { mode: 0o600 });

    // The disk fails while the new content is flushed: after the temporary file is written, before the rename.
    const probe = await open(file, 'r');
    const handleProto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const sync = vi.spyOn(handleProto, 'sync').mockRejectedValueOnce(Object.assign(new Error('i/o error'), { code: 'EIO' }));
    const error = await rejection(writeFileAtomic(file, 'next\n'));
    expect(sync).toHaveBeenCalled();
    expect(error.code).toBe('PLN_E_FILE_WRITE');
    expect(error.details).toMatchObject({ file, errno: 'EIO' });
    expect(await readFile(file, 'utf8')).toBe('previous\n');
    expect(await readdir(dir)).toEqual(['state.json']);

    // The folder is gone: nothing to create the temporary file in.
    const nowhere = join(dir, 'missing', 'state.json');
    expect((await rejection(writeFileAtomic(nowhere, 'x'))).details).toMatchObject({ file: nowhere, errno: 'ENOENT' });
    expect(await readdir(dir)).toEqual(['state.json']);
  });
});
