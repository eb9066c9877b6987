/**
 * A persistent hook's events stay exact while they cost little (issue 28): the trust check of
 * each event stands on a snapshot kept by the identity of every path it looked at
 * (plugins/trust/snapshot-memo.ts), and the trace file stays open (plugins/hooks/trace.ts).
 * - An edited script is refused at the next event: an edit that keeps the size and puts the
 *   mtime back is seen (its ctime moved), for a script that had settled (its snapshot kept) and
 *   for one edited right after its first event (too recent to be kept).
 * - The kept snapshot: a hit while nothing changed, a miss for a same-size edit with mtime put
 *   back, a created file, a new entry in a listed folder; nothing kept while a path is too recent.
 * - A script removed while its process serves is refused too (the runner then leaves the stats to trust).
 * - The trace holds every event once it was decided: after a close, and after a kill -9.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { SETTLED_MS, SnapshotMemo } from '../plugins/trust/snapshot-memo.js';
import { ensureBuilt } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(root, 'test', 'fixtures', 'hooks');
const quiet = { health: { enabled: false }, 'mcp-demo': { enabled: false } };

const folders: string[] = [];
const kernels: Kernel[] = [];
beforeAll(() => ensureBuilt(), 300_000);
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
});
afterAll(async () => {
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-hooks-persistent-trust-'));
  folders.push(dir);
  return dir;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A persistent hook script that answers every line with `allow` and its version (`v1`). */
const SCRIPT = (version: string) =>
  `import { createInterface } from 'node:readline';\ncreateInterface({ input: process.stdin }).on('line', () => process.stdout.write('{"allow":true,"message":"${version}"}\\n'));\n`;

/** A home whose user settings run `script` as a persistent before_tool hook, and its kernel. */
async function setUp(): Promise<{ home: string; script: string; kernel: Kernel }> {
  const base = await temp();
  const home = join(base, 'home');
  const hooks = join(base, 'hooks');
  await mkdir(home, { recursive: true });
  await mkdir(hooks, { recursive: true });
  const script = join(hooks, 'guard.mjs');
  await writeRound(script, SCRIPT('v1'));
  await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: quiet, hooks: { before_tool: [{ name: 'guard', command: 'node', args: [script], cwd: hooks, persistent: true }] } }));
  const kernel = new Kernel({ home, workspace: join(base, 'project'), builtin: true, env: {}, logLevel: 'silent' });
  kernels.push(kernel);
  return { home, script, kernel };
}

/** Writes `file` with a whole-second mtime (one `utimes` can put back exactly). */
async function writeRound(file: string, text: string): Promise<void> {
  await writeFile(file, text);
  const second = Math.floor(Date.now() / 1000) - 60;
  await utimes(file, second, second);
}

/** Rewrites `file` (written by {@link writeRound}) with `text` of the same length, then puts its mtime back: only its ctime tells. */
async function editKeepingSizeAndMtime(file: string, text: string): Promise<void> {
  const before = await stat(file);
  expect(Buffer.byteLength(text)).toBe(before.size);
  await writeFile(file, text);
  await utimes(file, before.mtimeMs / 1000, before.mtimeMs / 1000);
  const after = await stat(file);
  expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
}

describe('an edited persistent hook script is refused at the next event', () => {
  it('after its snapshot was kept (the script had settled): a same-size edit with mtime put back', async () => {
    const { script, kernel } = await setUp();
    // Old enough for the snapshot to be kept.
    await sleep(Math.max(0, SETTLED_MS + 200 - (Date.now() - (await stat(script)).ctimeMs)));
    await kernel.boot();
    for (let i = 0; i < 5; i++) {
      const decision = await kernel.emit('before_tool', { tool: 'read' });
      expect(decision.allow).toBe(true);
      expect(decision.messages).toEqual(['v1']);
    }
    await editKeepingSizeAndMtime(script, SCRIPT('v2'));
    const refused = await kernel.emit('before_tool', { tool: 'read' });
    expect(refused.allow).toBe(false);
    expect(refused.blockedBy).toMatchObject({ by: 'user:guard', code: 'PLN_E_HOOK_UNRUNNABLE' });
    // The running process (still the old code) was not asked.
    expect(refused.messages.join('\n')).not.toContain('v1');
    expect(refused.messages[0]).toContain('changed');
  }, 30_000);

  it('right after its first event (too recent for the snapshot to be kept): the same edit', async () => {
    const { script, kernel } = await setUp();
    await kernel.boot();
    expect((await kernel.emit('before_tool', { tool: 'read' })).allow).toBe(true);
    await editKeepingSizeAndMtime(script, SCRIPT('v2'));
    const refused = await kernel.emit('before_tool', { tool: 'read' });
    expect(refused.allow).toBe(false);
    expect(refused.blockedBy).toMatchObject({ by: 'user:guard', code: 'PLN_E_HOOK_UNRUNNABLE' });
  }, 30_000);
});

it('a script removed while its persistent process still serves is refused at the next event, and the process is not asked', async () => {
  // The runner skips its own stats while a process serves the same definition (runner.ts `check`): the trust check must see it.
  const { script, kernel } = await setUp();
  await kernel.boot();
  expect((await kernel.emit('before_tool', { tool: 'read' })).messages).toEqual(['v1']);
  await rm(script);
  const refused = await kernel.emit('before_tool', { tool: 'read' });
  expect(refused.allow).toBe(false);
  expect(refused.blockedBy).toMatchObject({ by: 'user:guard' });
  expect(refused.messages.join('\n')).not.toContain('v1');
}, 30_000);

describe('the kept snapshots (snapshot-memo.ts)', () => {
  const snap = { fingerprint: 'f'.repeat(64), shown: {} };

  it('stand while every path is the same; a same-size edit with mtime put back, a created file or a new entry of a listed folder undoes them', async () => {
    const base = await temp();
    const file = join(base, 'script.js');
    const folder = join(base, 'lib');
    const missing = join(base, 'node');
    await writeRound(file, 'one\n');
    await mkdir(folder);
    await writeFile(join(folder, 'a.js'), 'a\n');
    const started = Date.now() + SETTLED_MS + 50; // as if the snapshot began once they had settled
    const memo = new SnapshotMemo();
    const touched = [file, folder, join(folder, 'a.js'), missing];

    expect(memo.put('k', snap, touched, started)).toBe(true);
    expect(memo.get('k')).toBe(snap);
    expect(memo.get('k')).toBe(snap);
    expect(memo.counts).toMatchObject({ hits: 2, misses: 0 });

    await editKeepingSizeAndMtime(file, 'two\n');
    expect(memo.get('k')).toBeUndefined();

    memo.put('k', snap, touched, Date.now() + SETTLED_MS + 50);
    await writeFile(missing, '#!/bin/sh\n');
    expect(memo.get('k')).toBeUndefined();

    memo.put('k', snap, touched, Date.now() + SETTLED_MS + 50);
    await writeFile(join(folder, 'b.js'), 'b\n');
    expect(memo.get('k')).toBeUndefined();
  });

  it('are not kept while a path they touched changed too recently to tell a later change apart', async () => {
    const base = await temp();
    const file = join(base, 'script.js');
    await writeFile(file, 'one\n');
    const memo = new SnapshotMemo();
    expect(memo.put('k', snap, [file], Date.now())).toBe(false);
    expect(memo.get('k')).toBeUndefined();
    expect(memo.counts.unsettled).toBe(1);
  });
});

describe('the trace holds every event', () => {
  it('after a close: every run of every event, one line each', async () => {
    const { home, kernel } = await setUp();
    await kernel.boot();
    for (let i = 0; i < 30; i++) expect((await kernel.emit('before_tool', { tool: 'read', n: i })).allow).toBe(true);
    await kernel.shutdown();
    kernels.splice(kernels.indexOf(kernel), 1);
    const lines = (await readFile(join(home, 'hooks-trace.jsonl'), 'utf8')).split('\n').filter(Boolean);
    expect(lines).toHaveLength(30);
    expect(lines.every((line) => (JSON.parse(line) as { hook: string; status: string }).hook === 'user:guard')).toBe(true);
  }, 30_000);

  it('after kill -9: each event was written before its decision was returned', async () => {
    const { home } = await setUp();
    const child = spawn(process.execPath, [join(FIXTURES, 'emit-then-wait.mjs'), home, join(home, '..', 'project'), '40'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const first = await Promise.race([lines.next(), once(child, 'exit').then(() => ({ value: `exited: ${stderr}` }))]);
      expect(first.value).toBe('emitted 40');
      child.kill('SIGKILL');
      await once(child, 'exit');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    const traced = (await readFile(join(home, 'hooks-trace.jsonl'), 'utf8')).split('\n').filter(Boolean);
    expect(traced).toHaveLength(40);
  }, 60_000);
});
