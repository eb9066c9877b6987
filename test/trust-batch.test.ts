/**
 * The pins of one boot are written together (plugins/trust/store.ts `startBatch`): a user
 * plugin (or hook) trusted on first use while plinth starts is recorded with the others in one
 * write at `ready`, and each change is applied again to the store as it is then, under the lock,
 * so that processes booting at once lose nothing and the first writer of a subject is kept.
 * After `ready`, a pin is written at once, as before.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { createTrustService } from '../plugins/trust/service.js';
import { TrustStore } from '../plugins/trust/store.js';
import type { Logger, TrustSubject } from '../sdk/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(root, 'test', 'fixtures', 'trust');
/** Child processes start node and jiti: generous on a slow shared machine, but bounded. */
const CHILD_TIMEOUT_MS = 60_000;

const folders: string[] = [];
const kernels: Kernel[] = [];
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
});
afterAll(async () => {
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-trust-batch-'));
  folders.push(dir);
  return dir;
}

interface Stored {
  approvals: Array<{ id: string; how: string; fingerprint: string }>;
  requests: Array<{ id: string }>;
}
const stored = async (home: string): Promise<Stored> => JSON.parse(await readFile(join(home, 'trust.json'), 'utf8')) as Stored;

const warnings: string[] = [];
const log: Logger = { debug() {}, info() {}, warn: (message: string) => void warnings.push(message), error() {} } as unknown as Logger;

const userHook = (id: string, definition: unknown): TrustSubject => ({ kind: 'hook', id, source: 'user', definition, files: [], summary: id });

/** A service on `home`'s trust.json, as one process has it. */
function serviceAt(home: string) {
  const store = new TrustStore(join(home, 'trust.json'));
  const service = createTrustService({ store, log, where: () => ({ home, workspace: join(home, 'workspace'), profile: undefined }), env: () => ({ CI: '1' }) });
  return { store, service };
}

describe('a boot writes its pins once', () => {
  it('a boot with many user plugins pins each before its code runs; every pin is in trust.json at ready, and a later pin at once', async () => {
    const home = await temp();
    for (let i = 0; i < 12; i++) {
      const dir = join(home, 'plugins', `p${i}`);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: `p${i}`, version: '1.0.0', kernel: '^1.0.0', main: './index.js' }));
      await writeFile(join(dir, 'index.js'), 'export default { setup() {} };\n');
    }
    // With the builtin plugins, trust is set up first and gates every user plugin.
    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } }));
    const kernel = new Kernel({ home, workspace: join(home, 'workspace'), builtin: true, env: {}, logLevel: 'silent' });
    kernels.push(kernel);
    await kernel.boot();
    expect(kernel.status().filter((p) => p.source === 'user' && p.state === 'active')).toHaveLength(12);
    // Written at ready, before shutdown: every pin is there.
    const pins = (await stored(home)).approvals.filter((a) => a.how === 'pinned').map((a) => a.id).sort();
    expect(pins).toEqual(Array.from({ length: 12 }, (_, i) => `p${i}`).sort());

    // After ready, a pin is written at once (a user hook at its first event).
    const trust = await kernel.get('trust');
    expect(await trust.check(userHook('user:late', { late: true }))).toMatchObject({ trusted: true, level: 'user' });
    expect((await stored(home)).approvals.map((a) => a.id)).toContain('user:late');
  });

  it('a batch shows its pins at once, writes them in one write, and keeps another writer\'s record of the same subject', async () => {
    const home = await temp();
    const a = serviceAt(home);
    const b = serviceAt(home);
    a.store.startBatch();
    const first = await a.service.check(userHook('user:x', { v: 1 }));
    const other = await a.service.check(userHook('user:y', { v: 1 }));
    expect([first.level, other.level]).toEqual(['user', 'user']);
    // Seen by this process at once (checked again: the same pin, no new one), not written yet.
    expect(await a.service.check(userHook('user:x', { v: 1 }))).toMatchObject({ trusted: true, level: 'user' });
    expect(a.store.writes).toBe(0);
    // Another process pins x otherwise first, and writes at once.
    expect(await b.service.check(userHook('user:x', { v: 2 }))).toMatchObject({ trusted: true, level: 'user' });
    await a.store.endBatch();
    expect(a.store.writes).toBe(1);
    const { approvals } = await stored(home);
    expect(approvals.map((r) => r.id).sort()).toEqual(['user:x', 'user:y']);
    // The first writer's x is kept; this process's x, as it was, is now refused as changed, and it said so.
    expect(approvals.find((r) => r.id === 'user:x')?.fingerprint).toBe((await b.service.inspect(userHook('user:x', { v: 2 }))).fingerprint);
    expect(await a.service.check(userHook('user:x', { v: 1 }), { interactive: false })).toMatchObject({ trusted: false, level: 'changed' });
    expect(warnings.some((w) => w.includes('user hook "user:x"') && w.includes('another plinth process pinned it first'))).toBe(true);
  });

  it('an approval while batching writes the batch with it', async () => {
    const home = await temp();
    const { store, service } = serviceAt(home);
    store.startBatch();
    await service.check(userHook('user:pinned', { p: 1 }));
    await service.approve({ kind: 'hook', id: 'workspace:approved', source: 'workspace', definition: { w: 1 }, files: [], summary: 'w' });
    expect(store.writes).toBe(1);
    expect((await stored(home)).approvals.map((r) => `${r.id}:${r.how}`).sort()).toEqual(['user:pinned:pinned', 'workspace:approved:approved']);
    await store.endBatch();
    expect(store.writes).toBe(1);
  });

  it('two processes pinning at boot at once lose nothing, and each writes trust.json once', async () => {
    const home = await temp();
    const count = 25;
    const children = ['alpha', 'beta'].map((prefix) =>
      spawn(process.execPath, [join(FIXTURES, 'pin-many-at-boot.mjs'), home, prefix, String(count)], { cwd: root, env: { ...process.env, CI: '1' }, stdio: ['pipe', 'pipe', 'pipe'] }),
    );
    try {
      const lines = children.map((child) => createInterface({ input: child.stdout! })[Symbol.asyncIterator]());
      const errors = children.map((child) => {
        let text = '';
        child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
        return () => text;
      });
      const next = async (i: number) => {
        const line = await Promise.race([lines[i]!.next(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`child ${i} said nothing: ${errors[i]!()}`)), CHILD_TIMEOUT_MS))]);
        return line.value as string;
      };
      expect(await Promise.all([next(0), next(1)])).toEqual(['ready', 'ready']);
      for (const child of children) child.stdin!.end('go\n');
      const reports = (await Promise.all([next(0), next(1)])).map((line) => JSON.parse(line) as { trusted: number; writes: number });
      expect(reports).toEqual([
        { trusted: count, writes: 1 },
        { trusted: count, writes: 1 },
      ]);
      expect(await Promise.all([next(0), next(1)])).toEqual(['done', 'done']);
      await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
      expect(children.map((child) => child.exitCode)).toEqual([0, 0]);
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    }
    const ids = (await stored(home)).approvals.map((a) => a.id).sort();
    expect(ids).toEqual(['alpha', 'beta'].flatMap((p) => Array.from({ length: count }, (_, n) => `user:${p}-${n}`)).sort());
  }, CHILD_TIMEOUT_MS * 2);
});
