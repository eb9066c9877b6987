/**
 * Collecting hook definitions from settings layers, plugin manifests and
 * legacy folders: the source comes from where each was loaded, never from
 * where its folder happens to be.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseManifest, type ConfigLayerView, type PluginInfo, type PluginSource } from 'plinth/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectHooks, pluginHookSource } from '../plugins/hooks/sources.js';

const defaults = { timeoutMs: 5000, idleMs: 60_000 };
let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'plinth-sources-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function layer(scope: 'user' | 'workspace', file: string, hooks: unknown, profile?: string): ConfigLayerView {
  return { scope, file, settings: { hooks }, ...(profile !== undefined && { profile }) };
}

function plugin(name: string, source: PluginSource, dir: string, hooks: Record<string, unknown>): PluginInfo {
  const parsed = parseManifest({ name, version: '1.4.0', kernel: '^1.0.0', hooks });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return { name, version: '1.4.0', source, dir, manifest: parsed.manifest };
}

async function legacyFile(dir: string, file: string, hook: unknown): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, file), JSON.stringify(hook));
}

const cmd = (name: string, extra: Record<string, unknown> = {}) => ({ name, command: 'node', args: [`${name}.js`], ...extra });

describe('collectHooks', () => {
  it('reads every source and decides each source from where it was loaded', async () => {
    const home = path.join(root, 'home');
    const workspace = path.join(root, 'project');
    const builtinDir = path.join(root, 'plinth', 'plugins', 'guard');
    const extDir = path.join(workspace, '.plinth', 'plugins', 'ext');
    await legacyFile(path.join(home, 'hooks'), 'u.json', { name: 'User Legacy', when: { type: 'sessionStart' }, then: { type: 'askAgent', prompt: 'hi' } });
    await legacyFile(path.join(workspace, '.plinth', 'hooks'), 'w.json', { name: 'Ws Legacy', when: { type: 'gitCommit' }, then: { type: 'runCommand', command: 'node check.js' } });

    const { hooks, problems } = await collectHooks(
      {
        home,
        workspace,
        layers: [
          layer('user', path.join(home, 'settings.json'), { before_tool: [cmd('u')] }),
          layer('workspace', path.join(workspace, '.plinth', 'settings.json'), { after_tool: [cmd('w', { cwd: 'scripts' })] }),
        ],
        plugins: [plugin('guard', 'builtin', builtinDir, { before_model: [cmd('g')] }), plugin('ext', 'workspace', extDir, { before_model: [cmd('e')] })],
      },
      defaults,
    );
    expect(problems).toEqual([]);
    const summary = Object.fromEntries(hooks.map((h) => [h.id, { source: h.source, cwd: h.cwd }]));
    expect(summary).toEqual({
      'user:u': { source: 'user', cwd: home },
      'workspace:w': { source: 'workspace', cwd: path.join(workspace, 'scripts') },
      'user:user-legacy': { source: 'user', cwd: home },
      'workspace:ws-legacy': { source: 'workspace', cwd: workspace },
      'guard/g': { source: 'builtin', cwd: builtinDir },
      'ext/e': { source: 'extension', cwd: extDir },
    });
    expect(hooks.find((h) => h.id === 'ext/e')).toMatchObject({ plugin: 'ext', version: '1.4.0', origin: `${path.join(extDir, 'manifest.json')}#hooks.before_model[0]` });
  });

  it('keeps a workspace under the home folder (even under PLINTH_HOME) a workspace', async () => {
    for (const [home, workspace] of [
      [path.join(root, 'home', '.plinth'), path.join(root, 'home', 'projects', 'cloned')],
      [path.join(root, 'h2', '.plinth'), path.join(root, 'h2', '.plinth', 'work', 'repo')],
    ] as const) {
      await legacyFile(path.join(workspace, '.plinth', 'hooks'), 'evil.json', { name: 'evil', when: { type: 'sessionStart' }, then: { type: 'runCommand', command: 'node x.js' } });
      const { hooks } = await collectHooks(
        { home, workspace, layers: [layer('workspace', path.join(workspace, '.plinth', 'settings.json'), { session_start: [cmd('evil2')] })], plugins: [] },
        defaults,
      );
      expect(hooks.map((h) => [h.id, h.source])).toEqual([
        ['workspace:evil2', 'workspace'],
        ['workspace:evil', 'workspace'],
      ]);
    }
  });

  it('loads the user folder once, as workspace, when the workspace .plinth is the user folder', async () => {
    const workspace = path.join(root, 'me');
    const home = path.join(workspace, '.plinth');
    await legacyFile(path.join(home, 'hooks'), 'x.json', { name: 'x', when: { type: 'sessionEnd' }, then: { type: 'askAgent', prompt: 'bye' } });
    const { hooks, problems } = await collectHooks({ home, workspace, layers: [], plugins: [] }, defaults);
    expect(problems).toEqual([]);
    expect(hooks.map((h) => h.id)).toEqual(['workspace:x']);
  });

  it('reports a second definition of one id from another file of the same source, keeping the first', async () => {
    const home = path.join(root, 'home');
    const workspace = path.join(root, 'project');
    await legacyFile(path.join(workspace, '.plinth', 'hooks'), 'lint.json', { name: 'lint', when: { type: 'fileEdited' }, then: { type: 'askAgent', prompt: 'p' } });
    const file = path.join(workspace, '.plinth', 'settings.json');
    const { hooks, problems } = await collectHooks({ home, workspace, layers: [layer('workspace', file, { before_tool: [cmd('lint')] })], plugins: [] }, defaults);
    expect(hooks.map((h) => [h.id, h.action.type])).toEqual([['workspace:lint', 'command']]);
    expect(problems.map((p) => p.code)).toEqual(['PLN_E_HOOK_DUPLICATE']);
    expect(problems[0]!.message).toContain('lint.json');
    expect(problems[0]!.message).toContain(file);
  });

  it('lets profile layers replace hooks by id or add them, but only within their own source', async () => {
    const home = path.join(root, 'home');
    const workspace = path.join(root, 'project');
    const userFile = path.join(home, 'settings.json');
    const wsFile = path.join(workspace, '.plinth', 'settings.json');
    const { hooks, problems } = await collectHooks(
      {
        home,
        workspace,
        layers: [
          layer('user', userFile, { before_tool: [cmd('a'), cmd('b')] }),
          layer('workspace', wsFile, { before_tool: [cmd('c')] }),
          layer('user', userFile, { after_tool: [cmd('a', { timeout: 100 })], session_start: [cmd('new')] }, 'ci'),
          layer('workspace', wsFile, { before_tool: [cmd('b', { enabled: false })], after_tool: [cmd('c', { timeout: 9 })] }, 'ci'),
        ],
        plugins: [],
      },
      defaults,
    );
    expect(problems).toEqual([]);
    expect(hooks.map((h) => [h.id, h.events.join(','), h.timeoutMs, h.enabled])).toEqual([
      ['user:a', 'after_tool', 100, true],
      ['user:b', 'before_tool', 5000, true],
      ['workspace:c', 'after_tool', 9, true],
      ['user:new', 'session_start', 5000, true],
      ['workspace:b', 'before_tool', 5000, false],
    ]);
    expect(hooks[0]!.origin).toBe(`${userFile}#profiles.ci.hooks.after_tool[0]`);
  });

  it('collects problems from every source and never throws', async () => {
    const home = path.join(root, 'home');
    const workspace = path.join(root, 'project');
    await legacyFile(path.join(home, 'hooks'), 'bad.json', { name: 'x' });
    const { hooks, problems } = await collectHooks(
      {
        home,
        workspace,
        layers: [layer('user', path.join(home, 'settings.json'), { nope: [] }), layer('workspace', path.join(workspace, '.plinth', 'settings.json'), 'not an object')],
        plugins: [plugin('p', 'user', path.join(root, 'p'), { before_tool: [{ name: 'x', command: 'node', timeout: 0 }] })],
      },
      defaults,
    );
    expect(hooks).toEqual([]);
    expect([...new Set(problems.map((p) => p.code))].sort()).toEqual(['PLN_E_HOOK_EVENT_UNKNOWN', 'PLN_E_HOOK_INVALID']);
    const origins = new Set(problems.map((p) => path.basename(String(p.details?.origin).split('#')[0]!)));
    expect([...origins].sort()).toEqual(['bad.json', 'manifest.json', 'settings.json']);
    expect(problems.filter((p) => String(p.details?.origin).startsWith(workspace))).toHaveLength(1);
    expect(problems.find((p) => p.plugin === 'p')?.details).toMatchObject({ path: 'hooks.before_tool[0].timeout' });
  });
});

describe('pluginHookSource', () => {
  it('is builtin for builtin plugins and extension for every other', () => {
    expect(pluginHookSource({ name: 'a', source: 'builtin' })).toBe('builtin');
    for (const source of ['user', 'workspace', 'path'] as const) expect(pluginHookSource({ name: 'a', source })).toBe('extension');
  });
});
