/**
 * Trust keeps the hashes of large files a command names (an interpreter by
 * its path) between checks and between processes, by the file's identity
 * (plugins/trust/hash-cache.ts): a kept hash stands for reading the file
 * while the file is unchanged, an edit is read again even when it puts size
 * and mtime back (its ctime moved), and small files (scripts) are always read.
 * Each kernel here is a new trust service on the same home, as a new process is.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import type { TrustSubject } from '../sdk/index.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-trust-hash-cache-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const kernels: Kernel[] = [];
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
});

const quiet = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

interface Cache {
  version: 1;
  files: Record<string, { identity: string; sha256: string }>;
}

/** A home, a 2 MB "interpreter" and a small script, and the server subject that runs one with the other. */
async function setUp(): Promise<{ home: string; interpreter: string; script: string; subject: TrustSubject }> {
  const root = await mkdtemp(join(base, 'case-'));
  const home = join(root, 'home');
  await mkdir(join(home, 'workspace'), { recursive: true });
  await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: quiet }));
  await mkdir(join(root, 'bin'), { recursive: true });
  const interpreter = join(root, 'bin', 'interp');
  const script = join(root, 'server.js');
  await writeFile(interpreter, randomBytes(2 * 1024 * 1024), { mode: 0o755 });
  await writeFile(script, 'console.log("serving")\n');
  const subject: TrustSubject = { kind: 'mcp-server', id: 'docs', source: 'user', definition: { transport: 'stdio' }, files: [], runs: { command: interpreter, args: [script], cwd: root }, summary: 'docs' };
  return { home, interpreter, script, subject };
}

/** A new trust service on `home`: a new kernel, as a new process would make. */
async function trustIn(home: string) {
  const kernel = new Kernel({ home, workspace: join(home, 'workspace'), builtin: true, env: {} });
  kernels.push(kernel);
  await kernel.boot();
  return kernel.get('trust');
}

const cacheFile = (home: string) => join(home, 'cache', 'trust-hashes.json');
const readCache = async (home: string) => JSON.parse(await readFile(cacheFile(home), 'utf8')) as Cache;

describe('the hashes of large files, kept by identity', () => {
  it('keeps the large file named by the command (0600, by identity), not the small script; the next process takes the kept hash', async () => {
    const { home, interpreter, script, subject } = await setUp();
    const first = await (await trustIn(home)).check(subject);
    expect(first).toMatchObject({ trusted: true, level: 'user' });
    const cache = await readCache(home);
    expect(Object.keys(cache.files)).toEqual([interpreter]);
    expect(cache.files[interpreter]?.identity).toMatch(/^\d+:\d+:\d+:2097152:\d+:\d+$/);
    expect(cache.files).not.toHaveProperty(script);
    expect((await stat(cacheFile(home))).mode & 0o777).toBe(0o600);

    // A kept hash stands for reading the file: a wrong one (for the same identity) changes the fingerprint.
    await writeFile(cacheFile(home), JSON.stringify({ ...cache, files: { [interpreter]: { ...cache.files[interpreter]!, sha256: 'f'.repeat(64) } } }));
    const misled = await (await trustIn(home)).check(subject, { interactive: false });
    expect(misled.trusted).toBe(false);
    expect(misled.fingerprint).not.toBe(first.fingerprint);

    // Put back, it gives the same fingerprint as reading the file.
    await writeFile(cacheFile(home), JSON.stringify(cache));
    expect(await (await trustIn(home)).check(subject)).toMatchObject({ trusted: true, fingerprint: first.fingerprint });
  });

  it('an edit is read again, even one that restores the size and the mtime (the ctime moved): the server is "changed"', async () => {
    const { home, interpreter, subject } = await setUp();
    const first = await (await trustIn(home)).check(subject);
    const before = await stat(interpreter);
    const kept = (await readCache(home)).files[interpreter]!;
    await writeFile(interpreter, randomBytes(before.size));
    await utimes(interpreter, before.atime, before.mtime);
    const after = await (await trustIn(home)).check(subject, { interactive: false });
    expect(after).toMatchObject({ trusted: false, level: 'changed' });
    expect(after.fingerprint).not.toBe(first.fingerprint);
    const now = (await readCache(home)).files[interpreter]!;
    expect(now.identity).not.toBe(kept.identity);
    expect(now.sha256).not.toBe(kept.sha256);
  });

  it('a cache that is not one is ignored and written anew; checks do not depend on it', async () => {
    const { home, interpreter, subject } = await setUp();
    await mkdir(join(home, 'cache'), { recursive: true });
    await writeFile(cacheFile(home), '{ not json');
    expect(await (await trustIn(home)).check(subject)).toMatchObject({ trusted: true, level: 'user' });
    expect(Object.keys((await readCache(home)).files)).toEqual([interpreter]);
  });
});
