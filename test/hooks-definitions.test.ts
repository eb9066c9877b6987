/**
 * The `hooks` section of settings and manifests: validation with file and JSON
 * path, normalisation into HookDefinitions, merging across events, duplicates.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeSection, type SectionOrigin } from '../plugins/hooks/definition.js';
import { renderTemplate, templateValues } from '../plugins/hooks/template.js';

const defaults = { timeoutMs: 5000, idleMs: 60_000 };
const ws = path.resolve('/tmp/plinth-defs/workspace');
const settings: SectionOrigin = { source: 'workspace', origin: `${ws}/.plinth/settings.json`, baseDir: ws };

function codes(result: { problems: { code: string }[] }): string[] {
  return result.problems.map((p) => p.code);
}

describe('normalizeSection', () => {
  it('normalises a minimal command hook with every default', () => {
    const { hooks, problems } = normalizeSection({ before_tool: [{ name: 'guard', command: 'node', args: ['hooks/guard.js'] }] }, settings, defaults);
    expect(problems).toEqual([]);
    expect(hooks).toEqual([
      {
        id: 'workspace:guard',
        name: 'guard',
        events: ['before_tool'],
        subscribedAs: ['before_tool'],
        matcher: {},
        action: { type: 'command', command: 'node', args: ['hooks/guard.js'] },
        cwd: ws,
        timeoutMs: 5000,
        priority: 0,
        dependsOn: [],
        parallel: false,
        rateLimit: {},
        onError: 'block',
        enabled: true,
        persistent: false,
        source: 'workspace',
        origin: `${settings.origin}#hooks.before_tool[0]`,
      },
    ]);
  });

  it('keeps every field it is given', () => {
    const { hooks, problems } = normalizeSection(
      {
        'pre-tool-call': [
          {
            name: 'audit',
            command: 'python3',
            args: ['audit.py', '--strict'],
            matcher: ['write_*', 'edit'],
            files: ['src/**/*.ts'],
            cwd: 'tools',
            timeout: 1500,
            priority: 10,
            dependsOn: ['other', 'user:global'],
            parallel: true,
            rateLimit: { perMinute: 30, cooldownMs: 100 },
            onError: 'allow',
            enabled: false,
            persistent: true,
          },
        ],
        after_tool: [{ name: 'other', command: 'node', args: ['o.js'] }],
      },
      settings,
      defaults,
    );
    expect(problems).toEqual([]);
    const audit = hooks.find((h) => h.name === 'audit')!;
    expect(audit).toMatchObject({
      events: ['before_tool'],
      subscribedAs: ['pre-tool-call'],
      matcher: { tools: ['write_*', 'edit'], files: ['src/**/*.ts'] },
      cwd: path.join(ws, 'tools'),
      timeoutMs: 1500,
      priority: 10,
      dependsOn: ['workspace:other', 'user:global'],
      parallel: true,
      rateLimit: { perMinute: 30, cooldownMs: 100 },
      onError: 'allow',
      enabled: false,
      persistent: { idleMs: 60_000 },
    });
  });

  it('accepts a single matcher string, an absolute cwd, persistent with its own idle time, and prompt hooks', () => {
    const { hooks, problems } = normalizeSection(
      {
        before_tool: [{ name: 'one', command: 'node', matcher: 'shell', cwd: '/opt/hooks', persistent: { idleMs: 1000 } }],
        file_change: [{ name: 'ask', prompt: 'Lint {{file.path}}', files: ['*.ts', './src/**', '!./src/gen/**'] }],
      },
      settings,
      defaults,
    );
    expect(problems).toEqual([]);
    expect(hooks[0]).toMatchObject({ matcher: { tools: ['shell'] }, cwd: path.resolve('/opt/hooks'), persistent: { idleMs: 1000 }, action: { args: [] } });
    expect(hooks[1]).toMatchObject({ action: { type: 'askAgent', prompt: 'Lint {{file.path}}' }, matcher: { files: ['*.ts', 'src/**', '!src/gen/**'] } });
  });

  it('makes one hook of a name listed under several events with the same definition', () => {
    const def = { name: 'log', command: 'node', args: ['log.js'] };
    const { hooks, problems } = normalizeSection({ before_tool: [def], 'post-tool-call': [{ ...def, priority: 0 }], session_start: [def] }, settings, defaults);
    expect(problems).toEqual([]);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.events).toEqual(['before_tool', 'after_tool', 'session_start']);
    expect(hooks[0]!.subscribedAs).toEqual(['before_tool', 'post-tool-call', 'session_start']);
    expect(hooks[0]!.origin).toBe(`${settings.origin}#hooks.before_tool[0]`);
  });

  it('names the event a definition that cannot be read is listed under (a user\'s guard for it blocks it), unless the definition is switched off', () => {
    const result = normalizeSection(
      {
        'pre-tool-call': [{ name: 'slow', command: 'node', timeout: '5s' }],
        before_model: [{ name: 'off', command: 'node', timeout: '5s', enabled: false }],
      },
      settings,
      defaults,
    );
    expect(codes(result)).toEqual(['PLN_E_HOOK_INVALID', 'PLN_E_HOOK_INVALID']);
    expect(result.problems[0]!.details).toMatchObject({ path: 'hooks.pre-tool-call[0].timeout', event: 'before_tool' });
    expect(result.problems[1]!.details).not.toHaveProperty('event');
  });

  it('reports the later of two different definitions with one name', () => {
    const result = normalizeSection(
      { before_tool: [{ name: 'log', command: 'node', args: ['a.js'] }], after_tool: [{ name: 'x', command: 'node' }, { name: 'log', command: 'node', args: ['b.js'] }] },
      settings,
      defaults,
    );
    expect(codes(result)).toEqual(['PLN_E_HOOK_DUPLICATE']);
    expect(result.problems[0]!.details).toMatchObject({ origin: settings.origin, path: 'hooks.after_tool[1]', hook: 'log' });
    expect(result.hooks.map((h) => h.id)).toEqual(['workspace:log', 'workspace:x']);
    expect(result.hooks[0]!.events).toEqual(['before_tool']);
  });

  it('reports one event subscribed twice under two spellings', () => {
    const def = { name: 'log', command: 'node' };
    const result = normalizeSection({ before_tool: [def], 'pre-tool-call': [def] }, settings, defaults);
    expect(codes(result)).toEqual(['PLN_E_HOOK_DUPLICATE']);
    expect(result.hooks[0]!.events).toEqual(['before_tool']);
  });

  it('reports unknown events with their path and keeps the rest', () => {
    const result = normalizeSection({ before_tol: [{ name: 'a', command: 'node' }], 'on-error': [{ name: 'b', command: 'node' }] }, settings, defaults);
    expect(codes(result)).toEqual(['PLN_E_HOOK_EVENT_UNKNOWN']);
    expect(result.problems[0]!.details).toMatchObject({ path: 'hooks.before_tol' });
    expect(result.hooks.map((h) => h.events)).toEqual([['on_error']]);
  });

  it.each([
    [{ name: 'a', command: 'node', timeout: -1 }, 'hooks.before_tool[0].timeout'],
    [{ name: 'a', command: 'node', timeout: 1.5 }, 'hooks.before_tool[0].timeout'],
    [{ name: 'a', command: 'node', comand: 'x' }, 'hooks.before_tool[0].comand'],
    [{ name: 'a', command: 'node', rateLimit: { perMinit: 3 } }, 'hooks.before_tool[0].rateLimit.perMinit'],
    [{ name: 'a', command: 'node', rateLimit: { perMinute: 0 } }, 'hooks.before_tool[0].rateLimit.perMinute'],
    [{ name: 'a', command: 'node', onError: 'ignore' }, 'hooks.before_tool[0].onError'],
    [{ name: 'a', command: 'node', persistent: { idleMs: 0 } }, 'hooks.before_tool[0].persistent.idleMs'],
    [{ name: 'a', command: 'node', persistent: 'yes' }, 'hooks.before_tool[0].persistent'],
    [{ name: 'a', command: 'node', matcher: 3 }, 'hooks.before_tool[0].matcher'],
    [{ name: 'a', command: 'node', files: ['ok', 4] }, 'hooks.before_tool[0].files[1]'],
    [{ name: 'a', command: 'node', args: 'x.js' }, 'hooks.before_tool[0].args'],
    [{ name: 'a', command: 'node', dependsOn: ['a'] }, 'hooks.before_tool[0].dependsOn'],
    [{ name: 'a', command: 'node hooks/a.js' }, 'hooks.before_tool[0].command'],
    [{ name: 'a', prompt: 'x', args: [] }, 'hooks.before_tool[0].args'],
    [{ name: 'a' }, 'hooks.before_tool[0]'],
    [{ name: 'a', command: 'node', prompt: 'x' }, 'hooks.before_tool[0]'],
    [{ name: 'has space', command: 'node' }, 'hooks.before_tool[0].name'],
    [{ name: 'a/b', command: 'node' }, 'hooks.before_tool[0].name'],
    [{ command: 'node' }, 'hooks.before_tool[0].name'],
    ['node x.js', 'hooks.before_tool[0]'],
  ])('reports %j at %s', (entry, at) => {
    const result = normalizeSection({ before_tool: [{ name: 'fine', command: 'node' }, entry] }, settings, defaults);
    const shifted = at.replace('before_tool[0]', 'before_tool[1]');
    expect(codes(result)).toContain('PLN_E_HOOK_INVALID');
    expect(result.problems.map((p) => p.details?.path)).toContain(shifted);
    for (const p of result.problems) expect(p.message).toContain(settings.origin);
    expect(result.hooks.map((h) => h.name)).toEqual(['fine']);
  });

  it('suggests the key a typo meant', () => {
    const result = normalizeSection({ before_tool: [{ name: 'a', command: 'node', timout: 5 }] }, settings, defaults);
    expect(result.problems[0]!.message).toContain('did you mean "timeout"');
  });

  it('reports a section or event list of the wrong shape, and ignores an absent one', () => {
    expect(codes(normalizeSection([], settings, defaults))).toEqual(['PLN_E_HOOK_INVALID']);
    expect(codes(normalizeSection('x', settings, defaults))).toEqual(['PLN_E_HOOK_INVALID']);
    const list = normalizeSection({ before_tool: { name: 'a' } }, settings, defaults);
    expect(list.problems[0]!.details).toMatchObject({ path: 'hooks.before_tool' });
    expect(normalizeSection(undefined, settings, defaults)).toEqual({ hooks: [], problems: [] });
  });

  it('never throws, whatever it is given', () => {
    const hostile = JSON.parse('{"__proto__": [{"name": "x", "command": "node"}], "before_tool": [null, 1, "s", [], {"__proto__": {"command": "x"}, "name": "p", "command": "node"}]}');
    const result = normalizeSection(hostile, settings, defaults);
    expect(result.problems.length).toBeGreaterThanOrEqual(5);
    expect(result.hooks).toEqual([]);
    expect(({} as Record<string, unknown>).command).toBeUndefined();
  });

  it('uses <plugin>/<name> ids, the plugin version and folder for manifest hooks', () => {
    const dir = path.resolve('/tmp/plugins/guard');
    const { hooks } = normalizeSection(
      { before_model: [{ name: 'validate-input', command: 'node', args: ['hooks/validate.js'], dependsOn: ['other'] }], after_model: [{ name: 'other', command: 'node' }] },
      { source: 'extension', origin: `${dir}/manifest.json`, baseDir: dir, plugin: 'guard', version: '1.2.3' },
      defaults,
    );
    expect(hooks[0]).toMatchObject({ id: 'guard/validate-input', plugin: 'guard', version: '1.2.3', cwd: dir, source: 'extension', dependsOn: ['guard/other'] });
  });

  it('names the profile path when the section is a profile part', () => {
    const result = normalizeSection({ before_tool: [{ name: 'a', command: 'node', timeout: 'x' }] }, { ...settings, path: 'profiles.ci.hooks' }, defaults);
    expect(result.problems[0]!.details).toMatchObject({ path: 'profiles.ci.hooks.before_tool[0].timeout' });
  });
});

describe('renderTemplate (askAgent prompts)', () => {
  const values = templateValues('on-file-change', {
    tool: 'write_file',
    file: { path: 'src/a.ts', size: 12 },
    files: ['a.ts', 'b.ts'],
    count: 0,
    flag: false,
    nothing: null,
  });

  it('fills paths, indexes and the event name', () => {
    expect(renderTemplate('Lint {{file.path}} after {{ tool }} ({{event}})', values)).toBe('Lint src/a.ts after write_file (on-file-change)');
    expect(renderTemplate('{{files[1]}} {{files.0}} {{count}} {{flag}}', values)).toBe('b.ts a.ts 0 false');
  });

  it('renders missing values as empty and objects as JSON', () => {
    expect(renderTemplate('[{{missing}}][{{file.nope.deeper}}][{{nothing}}][{{tool.length}}]', values)).toBe('[][][][]');
    expect(renderTemplate('{{file}} {{files}}', values)).toBe('{"path":"src/a.ts","size":12} ["a.ts","b.ts"]');
  });

  it('reaches nothing but own data and runs no code', () => {
    let ran = false;
    const tricky: Record<string, unknown> = { plain: 'ok' };
    Object.defineProperty(tricky, 'getter', { enumerable: true, get: () => ((ran = true), 'secret') });
    const cyclic: Record<string, unknown> = { name: 'c', big: 10n, when: new Date(0) };
    cyclic.self = cyclic;
    const out = renderTemplate('{{constructor}}|{{__proto__}}|{{plain.constructor.name}}|{{tricky.getter}}|{{tricky}}|{{cyclic}}|{{toString}}', { tricky, cyclic });
    expect(out).toBe('||||{"plain":"ok"}|{"name":"c","big":"10","when":"1970-01-01T00:00:00.000Z","self":"[Circular]"}|');
    expect(ran).toBe(false);
    expect(renderTemplate('{{ a b }} {{1x}} {{a..b}} {{}} {{= process.exit() }}', { a: 1 })).toBe('{{ a b }} {{1x}} {{a..b}} {{}} {{= process.exit() }}');
  });
});
