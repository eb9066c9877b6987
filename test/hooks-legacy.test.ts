/**
 * The legacy hook format: translation of `when`/`then`, command splitting
 * without a shell, and bad files reported by name without stopping the others.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LEGACY_EVENT_TYPES, legacySlug, loadLegacyFolder, splitCommand, translateLegacy } from '../plugins/hooks/legacy.js';

const defaults = { timeoutMs: 5000, idleMs: 60_000 };
let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'plinth-legacy-'));
  dir = path.join(root, '.plinth', 'hooks');
  await mkdir(dir, { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const where = (): { source: 'workspace'; origin: string; baseDir: string } => ({ source: 'workspace', origin: path.join(dir, 'lint.json'), baseDir: root });

describe('splitCommand', () => {
  it.each([
    ['node hooks/lint.js', ['node', 'hooks/lint.js']],
    ['  node   a.js  ', ['node', 'a.js']],
    [`python3 "my script.py" 'single quoted' --flag="a b"`, ['python3', 'my script.py', 'single quoted', '--flag=a b']],
    [`sh -c 'echo $HOME; rm -rf /'`, ['sh', '-c', 'echo $HOME; rm -rf /']],
    [`node "say \\"hi\\"" a\\ b ''`, ['node', 'say "hi"', 'a b', '']],
    [`node "it's" 'a"b'`, ['node', "it's", 'a"b']],
    ['eslint src/*.ts', ['eslint', 'src/*.ts']],
  ])('splits %s', (line, argv) => {
    expect(splitCommand(line)).toEqual({ ok: true, argv });
  });

  it.each(['node a.js; rm -rf /', 'node a.js | tee x', 'node a.js && echo', 'node a.js > out', 'echo $HOME', 'echo `id`', 'node a.js &', 'node "open', "node 'open", '', '   ', 'node a.js\nrm x', 'node \\'])(
    'refuses %j',
    (line) => {
      const result = splitCommand(line);
      expect(result.ok).toBe(false);
    },
  );
});

describe('translateLegacy', () => {
  it('translates the seed example: askAgent with patterns', () => {
    const { hooks, problems } = translateLegacy(
      { name: 'Lint on Save', when: { type: 'fileEdited', patterns: ['*.ts'] }, then: { type: 'askAgent', prompt: 'Run linting on {{file.path}}' } },
      where(),
      defaults,
    );
    expect(problems).toEqual([]);
    expect(hooks).toEqual([
      expect.objectContaining({
        id: 'workspace:lint-on-save',
        name: 'Lint on Save',
        events: ['file_change'],
        subscribedAs: ['on-file-change'],
        matcher: { files: ['*.ts'] },
        action: { type: 'askAgent', prompt: 'Run linting on {{file.path}}' },
        cwd: root,
        timeoutMs: 5000,
        source: 'workspace',
        origin: where().origin,
        enabled: true,
      }),
    ]);
  });

  it('splits runCommand without a shell and keeps enabled and version', () => {
    const { hooks, problems } = translateLegacy(
      { name: 'check', enabled: false, version: '2.0.0', description: 'x', when: { type: 'preToolCall' }, then: { type: 'runCommand', command: 'node "hooks/check it.js" --strict' } },
      { ...where(), source: 'user' },
      defaults,
    );
    expect(problems).toEqual([]);
    expect(hooks[0]).toMatchObject({
      id: 'user:check',
      events: ['before_tool'],
      subscribedAs: ['pre-tool-call'],
      action: { type: 'command', command: 'node', args: ['hooks/check it.js', '--strict'] },
      enabled: false,
      version: '2.0.0',
      source: 'user',
    });
  });

  it('maps every documented type, canonical names and aliases', () => {
    const types = { ...LEGACY_EVENT_TYPES, before_model: 'before_model', 'pre-execution': 'before_model', 'on-git-commit': 'git_commit' };
    for (const [type, event] of Object.entries(types)) {
      const { hooks, problems } = translateLegacy({ name: type, when: { type }, then: { type: 'askAgent', prompt: 'p' } }, where(), defaults);
      expect(problems, type).toEqual([]);
      expect(hooks[0]!.events, type).toEqual([event]);
    }
    const alias = translateLegacy({ name: 'a', when: { type: 'pre-execution' }, then: { type: 'askAgent', prompt: 'p' } }, where(), defaults);
    expect(alias.hooks[0]!.subscribedAs).toEqual(['pre-execution']);
  });

  it('reports unknown types, shell lines and bad shapes with the file and path', () => {
    const file = where().origin;
    const cases: Array<[unknown, string, string]> = [
      [{ name: 'a', when: { type: 'onSave' }, then: { type: 'askAgent', prompt: 'p' } }, 'PLN_E_HOOK_EVENT_UNKNOWN', 'when.type'],
      [{ name: 'a', when: { type: 'constructor' }, then: { type: 'askAgent', prompt: 'p' } }, 'PLN_E_HOOK_EVENT_UNKNOWN', 'when.type'],
      [{ name: 'a', when: { type: 'gitCommit' }, then: { type: 'runCommand', command: 'npm test && git push' } }, 'PLN_E_HOOK_INVALID', 'then.command'],
      [{ name: 'a', when: { type: 'gitCommit' }, then: { type: 'runCommand', prompt: 'x' } }, 'PLN_E_HOOK_INVALID', 'then'],
      [{ name: 'a', when: { type: 'gitCommit' }, then: { type: 'shell', command: 'x' } }, 'PLN_E_HOOK_INVALID', 'then.type'],
      [{ name: 'a', when: { type: 'gitCommit', patterns: '*.ts' }, then: { type: 'askAgent', prompt: 'p' } }, 'PLN_E_HOOK_INVALID', 'when.patterns'],
      [{ name: 'a', when: { type: 'gitCommit' }, then: { type: 'askAgent', prompt: 'p' }, extra: 1 }, 'PLN_E_HOOK_INVALID', '(file)'],
      [{ name: '!!!', when: { type: 'gitCommit' }, then: { type: 'askAgent', prompt: 'p' } }, 'PLN_E_HOOK_INVALID', 'name'],
      [42, 'PLN_E_HOOK_INVALID', '(file)'],
    ];
    for (const [data, code, at] of cases) {
      const result = translateLegacy(data, where(), defaults);
      expect(result.hooks, JSON.stringify(data)).toEqual([]);
      expect(result.problems.length, JSON.stringify(data)).toBeGreaterThan(0);
      for (const p of result.problems) {
        expect(p.code, JSON.stringify(data)).toBe(code);
        expect(p.details?.origin).toBe(file);
        expect(p.message).toContain(file);
      }
      expect(result.problems.map((p) => p.details?.path)).toContain(at);
    }
  });

  it('accepts a list of hooks in one file, reporting a duplicate id', () => {
    const hook = (name: string) => ({ name, when: { type: 'sessionStart' }, then: { type: 'askAgent', prompt: 'hi' } });
    const result = translateLegacy([hook('One'), hook('Two'), hook('one')], where(), defaults);
    expect(result.hooks.map((h) => [h.id, h.origin])).toEqual([
      ['workspace:one', `${where().origin}#[0]`],
      ['workspace:two', `${where().origin}#[1]`],
    ]);
    expect(result.problems.map((p) => [p.code, p.details?.path])).toEqual([['PLN_E_HOOK_DUPLICATE', '[2].name']]);
  });

  it('slugs names into ids', () => {
    expect(legacySlug('Lint on Save')).toBe('lint-on-save');
    expect(legacySlug('  Café: check/all  ')).toBe('cafe-check-all');
  });
});

describe('loadLegacyFolder', () => {
  it('loads good files and reports each bad one by name', async () => {
    await writeFile(path.join(dir, 'a-good.json'), JSON.stringify({ name: 'good', when: { type: 'fileCreated', patterns: ['src/**'] }, then: { type: 'runCommand', command: 'node hooks/x.js' } }));
    await writeFile(path.join(dir, 'b-broken.json'), '{ "name": "x", ');
    await writeFile(path.join(dir, 'c-shape.json'), JSON.stringify({ name: 'x', when: {}, then: {} }));
    await writeFile(path.join(dir, 'd-secret.json'), '{"token": "hunter2-secret" oops}');
    await writeFile(path.join(dir, 'notes.txt'), 'not a hook');
    await mkdir(path.join(dir, 'sub.json'));
    const { hooks, problems } = await loadLegacyFolder(dir, { source: 'workspace', baseDir: root }, defaults);
    expect(hooks.map((h) => [h.id, h.action])).toEqual([['workspace:good', { type: 'command', command: 'node', args: ['hooks/x.js'] }]]);
    expect(hooks[0]!.matcher).toEqual({ files: ['src/**'] });
    const files = problems.map((p) => path.basename(String(p.details?.origin)));
    expect(files).toContain('b-broken.json');
    expect(files).toContain('c-shape.json');
    expect(files).toContain('d-secret.json');
    expect(files).not.toContain('notes.txt');
    for (const p of problems) expect(p.code).toBe('PLN_E_HOOK_INVALID');
    expect(problems.map((p) => p.message).join('\n')).not.toContain('hunter2');
  });

  it('is quiet about a missing folder and reports an oversized file', async () => {
    expect(await loadLegacyFolder(path.join(root, 'nope'), { source: 'user', baseDir: root }, defaults)).toEqual({ hooks: [], problems: [] });
    await writeFile(path.join(dir, 'big.json'), ' '.repeat(1024 * 1024 + 1));
    const { problems } = await loadLegacyFolder(dir, { source: 'workspace', baseDir: root }, defaults);
    expect(problems.map((p) => p.code)).toEqual(['PLN_E_HOOK_INVALID']);
  });
});
