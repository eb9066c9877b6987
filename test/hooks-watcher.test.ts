/**
 * The workspace watcher behind `file_change`: real files in a temporary
 * workspace, waits bounded by a deadline, no assertion on timing.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchWorkspace, type FileChange, type WatchOptions, type WorkspaceWatcher } from '../plugins/hooks/watcher.js';

let root: string;
let watcher: WorkspaceWatcher | undefined;
let batches: FileChange[][];
let warnings: string[];

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'plinth-watch-'));
  await mkdir(path.join(root, 'src'), { recursive: true });
  await writeFile(path.join(root, 'src', 'old.ts'), 'old');
  batches = [];
  warnings = [];
});
afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  await rm(root, { recursive: true, force: true });
});

async function start(options: Partial<WatchOptions> = {}): Promise<void> {
  watcher = watchWorkspace({
    workspace: root,
    patterns: ['*.ts'],
    debounceMs: 50,
    onChange: (changes) => {
      batches.push(changes);
    },
    log: { warn: (m) => warnings.push(m), debug: () => {} },
    ...options,
  });
  await watcher.ready;
}

/** Polls until `check` passes or 10 s pass; then lets `check`'s assertion fail. */
async function eventually(check: () => void): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** The last kind reported for each path, over every batch so far. */
function latest(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const batch of batches) for (const change of batch) out[change.path] = change.kind;
  return out;
}

const write = (rel: string, text = 'x'): Promise<void> => writeFile(path.join(root, ...rel.split('/')), text);

describe.each(['tree', 'native'] as const)('watchWorkspace (%s mode)', (mode) => {
  it('reports created, changed and deleted files that match, and nothing else', async () => {
    await mkdir(path.join(root, 'node_modules', 'dep'), { recursive: true });
    await mkdir(path.join(root, '.plinth'), { recursive: true });
    await start({ mode });

    await write('src/new.ts');
    await write('notes.md');
    await write('node_modules/dep/index.ts');
    await write('.plinth/x.ts');
    await eventually(() => expect(latest()['src/new.ts']).toBe('created'));

    await write('src/old.ts', 'edited');
    await eventually(() => expect(latest()['src/old.ts']).toBe('changed'));

    await rm(path.join(root, 'src', 'new.ts'));
    await eventually(() => expect(latest()['src/new.ts']).toBe('deleted'));

    const all = batches.flat();
    expect(all.map((c) => c.path).filter((p) => !p.startsWith('src/'))).toEqual([]);
    const change = all.find((c) => c.path === 'src/old.ts')!;
    expect(change.absolutePath).toBe(path.join(root, 'src', 'old.ts'));
    for (const batch of batches) expect(new Set(batch.map((c) => c.path)).size).toBe(batch.length);
  });

  it('sees files in folders created after it started, and deletions of whole folders', async () => {
    await start({ mode });
    await mkdir(path.join(root, 'pkg', 'deep'), { recursive: true });
    await write('pkg/deep/a.ts');
    await write('pkg/b.ts');
    await eventually(() => expect(latest()).toMatchObject({ 'pkg/deep/a.ts': 'created', 'pkg/b.ts': 'created' }));

    await write('pkg/deep/a.ts', 'again');
    await eventually(() => expect(latest()['pkg/deep/a.ts']).toBe('changed'));

    await rm(path.join(root, 'pkg'), { recursive: true });
    await eventually(() => expect(latest()).toMatchObject({ 'pkg/deep/a.ts': 'deleted', 'pkg/b.ts': 'deleted' }));

    // The same folder made again is watched again.
    await mkdir(path.join(root, 'pkg', 'deep'), { recursive: true });
    await write('pkg/deep/a.ts', 'back');
    await eventually(() => expect(latest()['pkg/deep/a.ts']).toBe('created'));
    await write('pkg/deep/a.ts', 'edited');
    await eventually(() => expect(latest()['pkg/deep/a.ts']).toBe('changed'));
  });

  it('reports an atomic save (write elsewhere, rename over) of a known file as changed', async () => {
    await start({ mode });
    await write('src/tmp.partial', 'new content');
    await rename(path.join(root, 'src', 'tmp.partial'), path.join(root, 'src', 'old.ts'));
    await eventually(() => expect(latest()['src/old.ts']).toBe('changed'));
  });
});

describe('watchWorkspace', () => {
  it('starts nothing for an empty pattern list', async () => {
    await start({ patterns: [] });
    await write('src/a.ts');
    await new Promise((r) => setTimeout(r, 200));
    expect(batches).toEqual([]);
  });

  it('logs a failing handler and keeps watching', async () => {
    let calls = 0;
    await start({
      onChange: (changes) => {
        calls++;
        batches.push(changes);
        if (calls === 1) throw new Error('handler broke');
      },
    });
    await write('src/one.ts');
    await eventually(() => expect(warnings.join('\n')).toContain('handler broke'));
    await write('src/two.ts');
    await eventually(() => expect(latest()['src/two.ts']).toBe('created'));
    expect(warnings[0]).toContain('PLN_E_WATCH_FAILED');
  });

  it('honours a custom ignore list', async () => {
    await start({ ignore: ['src/skip/**'], patterns: ['**/*.ts'] });
    await mkdir(path.join(root, 'src', 'skip'), { recursive: true });
    await write('src/skip/a.ts');
    await write('src/keep.ts');
    await eventually(() => expect(latest()['src/keep.ts']).toBe('created'));
    expect(latest()['src/skip/a.ts']).toBeUndefined();
  });

  it('never throws for a workspace that does not exist', async () => {
    for (const mode of ['tree', 'native'] as const) {
      const w = watchWorkspace({ workspace: path.join(root, 'missing'), patterns: ['*'], mode, onChange: () => {}, log: { warn: (m) => warnings.push(m), debug: () => {} } });
      await w.ready;
      await w.close();
    }
    expect(warnings).toHaveLength(2);
    for (const warning of warnings) expect(warning).toMatch(/^PLN_E_WATCH_FAILED cannot watch .*missing: ENOENT/);
  });
});
