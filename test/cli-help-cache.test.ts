/**
 * The kept command table (cli/help-cache.ts): `plinth --help`, `plinth` and
 * `plinth <group> --help` are answered from it only while every file the
 * answer was made from is as it was; an edit, a new or removed plugin, a
 * settings change is seen at the very next call.
 *
 * Each test runs plinth with a temporary folder of its own (TMPDIR), so its
 * table is its own. To tell a served answer from a made one, a test replaces
 * the kept text with a marker: the marker printed is the table serving.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { digest, identity, MAX_ENTRIES, mayBeHelp, RACY_MS, readHelp, writeHelp } from '../cli/help-cache.js';
import { describeRun, ensureBuilt, ROOT, type Result, run, sandbox, type Sandbox } from './support/cli.js';

beforeAll(() => ensureBuilt(), 300_000);

const boxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(boxes.splice(0).map((box) => box.remove()));
});

const MARKER = 'KEPT ANSWER\n';

interface Place {
  box: Sandbox;
  tmp: string;
  table: string;
  help(args?: readonly string[]): Promise<Result>;
  /** The kept entries, by command line (without --home/--workspace). */
  kept(): Promise<Map<string, { stdout: string; code: number }>>;
  /** Replaces every kept answer's text with {@link MARKER}. */
  mark(): Promise<void>;
}

async function place(): Promise<Place> {
  const box = await sandbox('plinth-help-cache-');
  boxes.push(box);
  const tmp = join(box.base, 'tmp');
  await mkdir(tmp);
  const uid = process.getuid?.();
  const table = join(tmp, uid === undefined ? 'plinth-compile-cache' : `plinth-compile-cache-${uid}`, 'help.json');
  const read = async () => JSON.parse(await readFile(table, 'utf8')) as { format: number; entries: Array<{ key: string; stdout: string; code: number }> };
  return {
    box,
    tmp,
    table,
    help: (args = ['--help']) => run(box, args, { TMPDIR: tmp }),
    kept: async () => {
      const data = await read().catch(() => ({ entries: [] }));
      return new Map(data.entries.map((e) => [(JSON.parse(e.key) as { argv: string[] }).argv.slice(box.dirs.length).join(' '), { stdout: e.stdout, code: e.code }]));
    },
    mark: async () => {
      const data = await read();
      await writeFile(table, JSON.stringify({ ...data, entries: data.entries.map((e) => ({ ...e, stdout: MARKER })) }));
    },
  };
}

/** A user plugin declaring `commands` (name → summary). */
async function userPlugin(box: Sandbox, name: string, commands: Record<string, string>, under = ''): Promise<string> {
  const dir = join(box.home, 'plugins', under, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'index.mjs'), 'export default { setup() {} };\n');
  await writeFile(
    join(dir, 'manifest.json'),
    JSON.stringify({ name, version: '1.0.0', kernel: '^1.0.0', main: 'index.mjs', activation: 'lazy', commands: Object.fromEntries(Object.entries(commands).map(([c, summary]) => [c, { summary }])) }),
  );
  return dir;
}

/** Waits until what was just written is old enough for an answer made from it to be kept. */
const settle = () => new Promise((resolve) => setTimeout(resolve, RACY_MS + 200));

async function expectKeptAndServed(at: Place, args: readonly string[] = ['--help']): Promise<Result> {
  const made = await at.help(args);
  expect((await at.kept()).get(args.join(' '))?.stdout, describeRun(made)).toBe(made.stdout);
  await at.mark();
  const served = await at.help(args);
  expect(served.stdout).toBe(MARKER);
  expect(served.code).toBe(made.code);
  return made;
}

describe('the kept command table', () => {
  test('an identical call is answered from it, with the same exit code; a different call is not', async () => {
    const at = await place();
    const first = await at.help();
    expect(first.code, describeRun(first)).toBe(0);
    expect(first.stdout).toContain('plugins list');
    const second = await at.help();
    expect(second).toEqual(first);
    await expectKeptAndServed(at);
    // `plinth` alone prints the table with exit 2: kept as such.
    const bare = await expectKeptAndServed(at, []);
    expect(bare.code).toBe(2);
    // Another command line is another answer.
    const group = await at.help(['mcp', '--help']);
    expect(group.stdout).toContain('mcp list');
    // A command's own help and a command are never kept.
    await at.help(['plugins', 'list', '--help']);
    await at.help(['plugins', 'list']);
    expect([...(await at.kept()).keys()].sort()).toEqual(['', '--help', 'mcp --help']);
  }, 120_000);

  test('a plugin added, edited or removed is seen at the next call', async () => {
    const at = await place();
    await expectKeptAndServed(at);
    const dir = await userPlugin(at.box, 'greeter', { 'greet hello': 'Says hello' });
    const added = await at.help();
    expect(added.stdout, describeRun(added)).toContain('greet hello');
    expect(added.stdout).toContain('Says hello');
    // Just written: not kept yet (a file rewritten within the timestamps' granularity could keep its identity).
    expect((await at.kept()).get('--help')?.stdout).toBe(MARKER);

    await settle();
    await expectKeptAndServed(at);
    await writeFile(join(dir, 'manifest.json'), (await readFile(join(dir, 'manifest.json'), 'utf8')).replace('Says hello', 'Says hi'));
    const edited = await at.help();
    expect(edited.stdout).toContain('Says hi');

    await settle();
    await expectKeptAndServed(at);
    // A group answer is made from the same files.
    await expectKeptAndServed(at, ['greet', '--help']);
    await rm(dir, { recursive: true });
    const removed = await at.help();
    expect(removed.stdout).not.toContain('greet hello');
    const group = await at.help(['greet', '--help']);
    expect(group.code).toBe(2);
    expect(group.stdout).not.toBe(MARKER);
  }, 120_000);

  test('a plugin in a folder below a group folder, and a settings change, are seen at the next call', async () => {
    const at = await place();
    await mkdir(join(at.box.home, 'plugins', 'vendor'), { recursive: true });
    await settle();
    await expectKeptAndServed(at);
    await userPlugin(at.box, 'deep', { 'deep thing': 'From a group folder' }, 'vendor');
    expect((await at.help()).stdout).toContain('deep thing');

    await settle();
    await expectKeptAndServed(at);
    await at.box.settings({ plugins: { scaffold: { enabled: false } } });
    const disabled = await at.help();
    expect(disabled.stdout).not.toContain('plugin new');
    expect(disabled.stdout).toContain('deep thing');
  }, 120_000);

  test('a summary with control characters is kept as it is printed: shown, never sent', async () => {
    const at = await place();
    await userPlugin(at.box, 'red', { 'red alert': 'Turns \u001b[31mred\u001b[0m' });
    await settle();
    const first = await at.help();
    expect(first.stdout).toContain('red alert');
    expect(first.stdout).not.toContain('\u001b');
    expect((await at.kept()).get('--help')?.stdout).toBe(first.stdout);
    expect(await at.help()).toEqual(first);
  }, 120_000);

  test('an answer printed with a warning is not kept, so the warning is shown again', async () => {
    const at = await place();
    const dir = join(at.box.home, 'plugins', 'broken');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'manifest.json'), '{ "name": "broken", ');
    await settle();
    const first = await at.help();
    expect(first.stderr).toContain('broken');
    expect((await at.kept()).has('--help')).toBe(false);
    const second = await at.help();
    expect(second.stderr).toBe(first.stderr);
  }, 120_000);

  test('the environment is part of the call, and no value of it is written', async () => {
    const at = await place();
    const secret = 'tok-3f9a1c7e55d2';
    const withSecret = (value: string) => run(at.box, ['--help'], { TMPDIR: at.tmp, SOME_TOKEN: value });
    const made = await withSecret(secret);
    expect(made.code, describeRun(made)).toBe(0);
    expect((await at.kept()).get('--help')?.stdout).toBe(made.stdout);
    expect(await readFile(at.table, 'utf8')).not.toContain(secret);
    await at.mark();
    expect((await withSecret(secret)).stdout).toBe(MARKER);
    // Another value is another call: answered by the kernel.
    expect((await withSecret(`${secret}x`)).stdout).toBe(made.stdout);
  }, 120_000);

  test('a damaged table is ignored and replaced', async () => {
    const at = await place();
    const made = await at.help();
    for (const damaged of ['{ not json', JSON.stringify({ format: 1, entries: [{ key: 'x' }] }), JSON.stringify({ format: 999, entries: [] }), '']) {
      await writeFile(at.table, damaged);
      const again = await at.help();
      expect(again).toEqual(made);
      expect((await at.kept()).get('--help')?.stdout).toBe(made.stdout);
    }
  }, 120_000);

  test('calls from many folders at once: each prints its own table, and the table stays whole', async () => {
    const at = await place();
    const folders = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const workspace = join(at.box.base, `project-${i}`);
        await mkdir(join(workspace, '.plinth', 'plugins', `p${i}`), { recursive: true });
        await writeFile(join(workspace, '.plinth', 'plugins', `p${i}`, 'manifest.json'), JSON.stringify({ name: `p${i}`, version: '1.0.0', kernel: '^1.0.0', main: 'index.mjs', activation: 'lazy', commands: { [`only${i} here`]: { summary: `Project ${i}` } } }));
        return workspace;
      }),
    );
    await settle();
    const runAll = () => Promise.all(folders.map((workspace) => run({ dirs: ['--home', at.box.home, '--workspace', workspace], workspace }, ['--help'], { TMPDIR: at.tmp })));
    for (const results of [await runAll(), await runAll()]) {
      results.forEach((result, i) => {
        expect(result.code, describeRun(result)).toBe(0);
        expect(result.stdout).toContain(`only${i} here`);
        for (let j = 0; j < folders.length; j++) if (j !== i) expect(result.stdout).not.toContain(`only${j} here`);
      });
    }
    const table = JSON.parse(await readFile(at.table, 'utf8')) as { entries: Array<{ key: string; stdout: string }> };
    expect(table.entries.length).toBeGreaterThan(0);
    for (const entry of table.entries) {
      const workspace = (JSON.parse(entry.key) as { argv: string[] }).argv[3]!;
      const i = folders.indexOf(workspace);
      expect(entry.stdout).toContain(`only${i} here`);
    }
  }, 120_000);
});

describe('help-cache', () => {
  test('digest: the same text, the same digest; any other text, another', () => {
    const env = JSON.stringify([['HOME', '/home/a'], ['TOKEN', 'x']]);
    expect(digest(env)).toBe(digest(env));
    expect(digest(env)).toMatch(/^[0-9a-f]{56}$/);
    const seen = new Set([digest(env), digest(''), digest(env.replace('x', 'y')), digest(`${env} `), digest(env.replace('/home/a', '/home/b'))]);
    expect(seen.size).toBe(5);
  });

  test('mayBeHelp: --help or -h before --, or no command word', () => {
    expect(mayBeHelp([])).toBe(true);
    expect(mayBeHelp(['--help'])).toBe(true);
    expect(mayBeHelp(['mcp', '-h'])).toBe(true);
    expect(mayBeHelp(['--home', 'h', '--workspace', 'w', '--profile', 'p', '--plugin-dir', 'd', '-v'])).toBe(true);
    expect(mayBeHelp(['plugins', 'list'])).toBe(false);
    expect(mayBeHelp(['--home', 'h', 'mcp'])).toBe(false);
    expect(mayBeHelp(['call', 'x', '--', '--help'])).toBe(false);
    expect(mayBeHelp(['--'])).toBe(false);
  });

  test('an answer is served while its inputs are unchanged; a missing input that appears, or any edit, is a miss', async () => {
    const at = await place();
    const file = join(at.box.base, 'input.json');
    const absent = join(at.box.base, 'absent.json');
    await writeFile(file, '{}');
    const table = join(at.box.base, 'table.json');
    const later = Date.now() + RACY_MS + 1000;
    expect(await writeHelp('k', [file, absent], { stdout: 'x\n', code: 0 }, table, later)).toBe(true);
    expect(readHelp('k', table)).toEqual({ stdout: 'x\n', code: 0 });
    expect(readHelp('other', table)).toBeUndefined();
    await writeFile(absent, '{}');
    expect(readHelp('k', table)).toBeUndefined();
    await rm(absent);
    expect(readHelp('k', table)).toEqual({ stdout: 'x\n', code: 0 });
    await writeFile(file, '{ }');
    expect(readHelp('k', table)).toBeUndefined();
    expect(identity(absent)).toBe('missing');
  });

  test('an input changed within RACY_MS of the call is not kept', async () => {
    const at = await place();
    const file = join(at.box.base, 'input.json');
    await writeFile(file, '{}');
    const table = join(at.box.base, 'table.json');
    expect(await writeHelp('k', [file], { stdout: 'x\n', code: 0 }, table, Date.now())).toBe(false);
    expect(readHelp('k', table)).toBeUndefined();
  });

  test('writers at once never leave the table torn, and it keeps the most recent answers', async () => {
    const at = await place();
    const file = join(at.box.base, 'input.json');
    await writeFile(file, '{}');
    const table = join(at.box.base, 'table.json');
    const later = Date.now() + RACY_MS + 1000;
    const written = await Promise.all(Array.from({ length: 40 }, (_, i) => writeHelp(`k${i}`, [file], { stdout: `answer ${i}\n`, code: i % 3 }, table, later)));
    expect(written.every(Boolean)).toBe(true);
    const data = JSON.parse(await readFile(table, 'utf8')) as { entries: Array<{ key: string; stdout: string; code: number }> };
    expect(data.entries.length).toBeGreaterThan(0);
    expect(data.entries.length).toBeLessThanOrEqual(MAX_ENTRIES);
    for (const entry of data.entries) {
      const i = Number(entry.key.slice(1));
      expect(entry).toMatchObject({ stdout: `answer ${i}\n`, code: i % 3 });
      expect(readHelp(entry.key, table)).toEqual({ stdout: `answer ${i}\n`, code: i % 3 });
    }
  });
});

describe('what the kept table is made from', () => {
  /**
   * The modules that read what the command table is made from. Each file system
   * call in them must note its path (internal/fs/read-paths.ts) on its line or
   * the two before: a read that is not noted is an input the table does not
   * check, and an answer kept from it would go stale.
   */
  const readers = ['kernel/discovery.ts', 'kernel/config/load.ts', ...readdirSync(join(ROOT, 'internal/peer')).map((name) => `internal/peer/${name}`)];

  test.each(readers)('every file system call in %s notes its path', (file) => {
    const source = readFileSync(join(ROOT, file), 'utf8');
    const names = [...source.matchAll(/^import \{([^}]*)\} from 'node:fs(?:\/promises)?';$/gm)].flatMap((m) =>
      m[1]!
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part !== '' && !part.startsWith('type '))
        .map((part) => part.split(/\s+as\s+/).at(-1)!),
    );
    const lines = source.split('\n');
    const unnoted = lines.flatMap((line, i) => {
      if (line.startsWith('import ') || !names.some((name) => new RegExp(`(?<![.\\w])${name}\\(`).test(line))) return [];
      return lines.slice(Math.max(0, i - 2), i + 1).some((l) => l.includes('noteRead(')) ? [] : [`${file}:${i + 1}: ${line.trim()}`];
    });
    expect(unnoted).toEqual([]);
  });
});
