/**
 * Trust's fingerprint of an installed plugin from the hashes its lock entry
 * recorded at install (plugins/trust/recorded-hashes.ts): the same
 * fingerprint as reading every file, an edit that restores size and mtime
 * still read (ctime moved), a tampered lock unable to let an edited file
 * load, and files outside installed versions read as before.
 *
 * Plugins are installed through the marketplace from a real registry on
 * 127.0.0.1 into a kernel with the builtin plugins; a fresh kernel on the
 * same home shows what the load gates (installed files, then approval) do.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createJiti } from 'jiti';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import * as internal from '../internal/index.js';
import * as sdk from '../sdk/index.js';
import type { LockFile, PluginStatus, TrustService, TrustSubject } from '../sdk/index.js';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { servedRegistry } from './support/market.js';

const jiti = createJiti(import.meta.url, { virtualModules: { 'plinth/sdk': sdk, 'plinth/internal': internal }, interopDefault: true });
const { snapshot } = await jiti.import<typeof import('../plugins/trust/snapshot.js')>(new URL('../plugins/trust/snapshot.ts', import.meta.url).pathname);
const { installedLock, recordedHashes } = await jiti.import<typeof import('../plugins/trust/recorded-hashes.js')>(new URL('../plugins/trust/recorded-hashes.ts', import.meta.url).pathname);
type RecordedHashes = import('../plugins/trust/fingerprint.js').RecordedHashes;

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-trust-fast-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const execFileAsync = promisify(execFile);
const quiet = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

/** `greeter@1.0.0` installed (and approved, as `plinth ext install` does) in a kernel with the builtin plugins. */
async function installed(): Promise<{ kernel: TestKernel; trust: TrustService; subject: TrustSubject; version: string }> {
  const { server } = await servedRegistry(base, [
    { name: 'greeter', version: '1.0.0', files: { 'lib/util.ts': 'export const util = 1;\n', 'lib/deep/data.json': '{"a":1}\n', 'README.md': '# greeter\n' } },
  ]);
  closers.push(() => server.close());
  const kernel = await createTestKernel({ builtin: true, settings: { registries: [{ name: 'local', url: server.url }], plugins: quiet } });
  closers.push(() => kernel.dispose());
  await (await kernel.get('marketplace')).install('greeter', { yes: true });
  const trust = await kernel.get('trust');
  const found = kernel.resolution.plugins.find((c) => c.manifest.name === 'greeter');
  if (!found) throw new Error('greeter was not resolved after its install');
  const subject = await trust.pluginSubject({ name: 'greeter', version: found.manifest.version, dir: found.dir, manifest: found.manifest }, 'user');
  return { kernel, trust, subject, version: join(kernel.home, 'plugins', '.versions', 'greeter@1.0.0') };
}

/** Counts the files whose recorded hash was used. */
function counting(recorded: RecordedHashes): RecordedHashes & { used: string[] } {
  const used: string[] = [];
  return {
    used,
    async sha256Of(path) {
      const known = await recorded.sha256Of(path);
      if (known !== undefined) used.push(path);
      return known;
    },
  };
}

async function approvedFingerprint(home: string): Promise<string | undefined> {
  const data = JSON.parse(await readFile(join(home, 'trust.json'), 'utf8')) as { approvals: Array<{ kind: string; id: string; fingerprint: string }> };
  return data.approvals.find((a) => a.kind === 'plugin' && a.id === 'greeter')?.fingerprint;
}

/** greeter's state in a fresh kernel booted on `home`: both load gates run before its code is imported. */
async function greeterAtBoot(home: string): Promise<PluginStatus | undefined> {
  const kernel = new Kernel({ home, workspace: join(home, 'workspace'), builtin: true, env: {}, logLevel: 'silent' });
  await kernel.boot();
  closers.push(() => kernel.shutdown());
  return kernel.status().find((p) => p.name === 'greeter');
}

async function rewriteLock(home: string, change: (tree: NonNullable<LockFile['plugins'][string]['tree']>) => void): Promise<void> {
  const file = join(home, 'plugins.lock.json');
  const lock = JSON.parse(await readFile(file, 'utf8')) as LockFile;
  change(lock.plugins.greeter!.tree!);
  await writeFile(file, JSON.stringify(lock, null, 2));
}

/**
 * Sets a file's mtime back to the nanosecond: `utimes` takes seconds as a
 * double, which cannot always say the time again exactly; `touch -d @s.ns` can.
 */
async function restoreMtime(file: string, mtimeNs: bigint): Promise<void> {
  const seconds = mtimeNs / 1_000_000_000n;
  const nanos = (mtimeNs % 1_000_000_000n).toString().padStart(9, '0');
  await execFileAsync('touch', ['-m', '-d', `@${seconds}.${nanos}`, file]);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('an installed plugin fingerprinted from its recorded tree', () => {
  it('gives the fingerprint a full read gives, with every file taken from the record; the approval made at install holds at the next boot', async () => {
    const { kernel, subject } = await installed();
    const full = await snapshot(subject, false);
    const recorded = counting(recordedHashes(installedLock(kernel.home)));
    const fast = await snapshot(subject, false, undefined, recorded);
    expect(fast.fingerprint).toBe(full.fingerprint);
    expect(fast.shown).toEqual(full.shown);
    expect(new Set(recorded.used)).toEqual(new Set(subject.files));
    expect(await approvedFingerprint(kernel.home)).toBe(full.fingerprint);
    expect(await greeterAtBoot(kernel.home)).toMatchObject({ state: 'active' });
  });

  it('reads a file edited with its size and mtime restored (ctime moved): the fingerprint changes and the next boot refuses it', async () => {
    const { kernel, trust, subject, version } = await installed();
    const file = join(version, 'lib', 'util.ts');
    const before = await stat(file, { bigint: true });
    await writeFile(file, 'export const util = 2;\n'); // same size
    await restoreMtime(file, before.mtimeNs);
    const after = await stat(file, { bigint: true });
    expect([after.size, after.mtimeNs]).toEqual([before.size, before.mtimeNs]);
    expect(after.ctimeNs).not.toBe(before.ctimeNs);
    const recorded = counting(recordedHashes(installedLock(kernel.home)));
    const now = await snapshot(subject, false, undefined, recorded);
    expect(recorded.used.filter((path) => path.endsWith(join('lib', 'util.ts')))).toEqual([]);
    expect(recorded.used).toHaveLength(new Set(subject.files).size - 1);
    expect(now.fingerprint).toBe((await snapshot(subject, false)).fingerprint);
    expect(now.fingerprint).not.toBe(await approvedFingerprint(kernel.home));
    expect(await trust.inspect(subject)).toMatchObject({ trusted: false, level: 'changed' });
    // The installed gate sees it first (its own stat check, then the rehash).
    const status = await greeterAtBoot(kernel.home);
    expect(status?.state).not.toBe('active');
    expect(status?.error?.message).toContain('PLN_E_MARKET_FILES_CHANGED');
  });

  describe('a tampered lock cannot let an edited file load', () => {
    it('a wrong sha256 for an unchanged file: the installed gate refuses (the digest over the recorded hashes is not the recorded digest)', async () => {
      const { kernel, trust, subject } = await installed();
      await rewriteLock(kernel.home, (tree) => void (tree.files['lib/util.ts']!.sha256 = sha256('something else')));
      // The wrong record is used, since the stat matches: the fingerprint differs from the approved one. The
      // running service takes it too (a full read would find the approved content): a wrong record refuses.
      expect((await snapshot(subject, false, undefined, recordedHashes(installedLock(kernel.home)))).fingerprint).not.toBe(await approvedFingerprint(kernel.home));
      expect(await trust.inspect(subject)).toMatchObject({ trusted: false, level: 'changed' });
      const status = await greeterAtBoot(kernel.home);
      expect(status?.state).not.toBe('active');
      expect(status?.error?.message).toContain('PLN_E_MARKET_FILES_CHANGED');
    });

    it('a wrong sha256 with the digest made to fit: the installed gate passes, the approval gate refuses (the fingerprint differs from the approved one)', async () => {
      const { kernel } = await installed();
      await rewriteLock(kernel.home, (tree) => {
        tree.files['lib/util.ts']!.sha256 = sha256('something else');
        tree.digest = internal.treeDigest(tree.files);
      });
      // The files are as installed: only the record is wrong, and the approval gate of the booting kernel used it.
      const status = await greeterAtBoot(kernel.home);
      expect(status?.state).not.toBe('active');
      expect(status?.error?.message).not.toContain('PLN_E_MARKET_FILES_CHANGED');
      expect(status?.error?.message).toMatch(/changed since it was (approved|pinned)/);
    });

    it('an edited file with the lock rewritten to record it (its new stat, its new hash, the digest to fit): the fingerprint is that of the edit, which was never approved', async () => {
      const { kernel, subject, version } = await installed();
      const file = join(version, 'lib', 'util.ts');
      const edit = 'export const util = "evil";\n';
      await writeFile(file, edit);
      const info = await stat(await realpath(file));
      await rewriteLock(kernel.home, (tree) => {
        tree.files['lib/util.ts'] = { sha256: sha256(edit), size: info.size, mtimeMs: info.mtimeMs, ctimeMs: info.ctimeMs };
        tree.digest = internal.treeDigest(tree.files);
      });
      const recorded = counting(recordedHashes(installedLock(kernel.home)));
      const now = await snapshot(subject, false, undefined, recorded);
      expect(recorded.used).toHaveLength(new Set(subject.files).size);
      expect(now.fingerprint).toBe((await snapshot(subject, false)).fingerprint);
      expect(now.fingerprint).not.toBe(await approvedFingerprint(kernel.home));
      const status = await greeterAtBoot(kernel.home);
      expect(status?.state).not.toBe('active');
      expect(status?.error?.message).toMatch(/changed since it was (approved|pinned)/);
      // What remains, and is not tested as a "pass": a lock rewritten to pair the edit's new stat with the
      // *old* hash makes both gates see the installed content. Whoever can write plugins.lock.json can write
      // trust.json beside it (same folder, same owner) and approve anything; see recorded-hashes.ts.
    });
  });

  it('a hook or server subject that names files of an installed plugin uses the record too, with the same fingerprint', async () => {
    const { kernel, version } = await installed();
    const linked = join(kernel.home, 'plugins', 'greeter');
    const subject = {
      definition: { events: ['before_tool'] },
      files: [],
      source: 'workspace' as const,
      runs: { command: 'node', args: [join(linked, 'index.ts'), join(version, 'lib')], cwd: kernel.home },
    };
    const recorded = counting(recordedHashes(installedLock(kernel.home)));
    const fast = await snapshot(subject, true, undefined, recorded);
    expect(fast.fingerprint).toBe((await snapshot(subject, true)).fingerprint);
    expect(recorded.used.sort()).toEqual([join(linked, 'index.ts'), join(version, 'lib', 'deep', 'data.json'), join(version, 'lib', 'util.ts')].sort());
  });

  it('reads as before: files outside installed versions, a version folder the lock does not describe, and any file when the lock is not a lock', async () => {
    const { kernel, subject } = await installed();
    const elsewhere = await mkdtemp(join(base, 'elsewhere-'));
    await writeFile(join(elsewhere, 'hook.js'), 'process.exit(0);\n');
    const stray = join(kernel.home, 'plugins', '.versions', 'stray@1.0.0');
    await mkdir(stray, { recursive: true });
    await writeFile(join(stray, 'index.js'), 'export default {};\n');
    const other = { definition: null, files: [join(elsewhere, 'hook.js'), join(stray, 'index.js'), join(elsewhere, 'missing.js')], source: 'workspace' as const };
    const recorded = counting(recordedHashes(installedLock(kernel.home)));
    expect((await snapshot(other, true, undefined, recorded)).fingerprint).toBe((await snapshot(other, true)).fingerprint);
    expect(recorded.used).toEqual([]);

    await writeFile(join(kernel.home, 'plugins.lock.json'), '{ not json');
    const broken = counting(recordedHashes(installedLock(kernel.home)));
    expect((await snapshot(subject, false, undefined, broken)).fingerprint).toBe(await approvedFingerprint(kernel.home));
    expect(broken.used).toEqual([]);
  });
});
