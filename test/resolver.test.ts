import { describe, expect, it } from 'vitest';
import { PlinthError } from '../sdk/errors.js';
import { resolve, type ResolveInput } from '../kernel/resolve/index.js';
import { explain } from '../plugins/inspect/explain.js';
import type { Candidate, PluginSource, Resolution } from '../kernel/types.js';
import { parseManifest } from '../sdk/manifest.js';

const KERNEL = '1.2.0';

interface PluginOptions {
  dependencies?: Record<string, string>;
  kernel?: string;
  source?: PluginSource;
}

/** A candidate as discovery would produce it: `plugin('a@1.0.0', { dependencies: { b: '^1.0.0' } })`. */
function plugin(id: string, options: PluginOptions = {}): Candidate {
  const [name, version] = id.split('@') as [string, string];
  const source = options.source ?? 'builtin';
  const parsed = parseManifest({ name, version, kernel: options.kernel ?? '^1.0.0', dependencies: options.dependencies ?? {} });
  if (!parsed.ok) throw new Error(`bad test manifest ${id}: ${JSON.stringify(parsed.issues)}`);
  const dir = `/plugins/${source}/${name}-${version}`;
  return { manifest: parsed.manifest, dir, file: `${dir}/manifest.json`, source };
}

function run(candidates: Candidate[], extra: Partial<ResolveInput> = {}): Resolution {
  return resolve({ candidates, kernelVersion: KERNEL, ...extra });
}

/** `name@version (source)` of every plugin that loads, in load order. */
function loaded(resolution: Resolution): string[] {
  return resolution.plugins.map((c) => `${c.manifest.name}@${c.manifest.version} (${c.source})`);
}

function exclusionOf(resolution: Resolution, name: string) {
  const exclusion = resolution.excluded.find((e) => e.name === name);
  if (exclusion === undefined) throw new Error(`"${name}" is not excluded`);
  return exclusion;
}

describe('choosing a version', () => {
  it('picks the highest version', () => {
    const r = run([plugin('a@1.0.0'), plugin('a@2.1.0'), plugin('a@1.9.0')]);
    expect(loaded(r)).toEqual(['a@2.1.0 (builtin)']);
    expect(r.candidates.get('a')?.map((c) => c.manifest.version)).toEqual(['2.1.0', '1.9.0', '1.0.0']);
  });

  it('skips versions that do not accept the kernel', () => {
    const r = run([plugin('a@1.0.0'), plugin('a@2.0.0', { kernel: '^2.0.0' })]);
    expect(loaded(r)).toEqual(['a@1.0.0 (builtin)']);
    expect(r.excluded).toEqual([]);
  });

  it('compares versions across sources', () => {
    const r = run([plugin('a@1.2.0', { source: 'builtin' }), plugin('a@1.1.0', { source: 'workspace' })]);
    expect(loaded(r)).toEqual(['a@1.2.0 (builtin)']);
  });

  it('prefers the higher-precedence source on equal versions', () => {
    const r = run([
      plugin('a@1.0.0', { source: 'workspace' }),
      plugin('a@1.0.0', { source: 'builtin' }),
      plugin('a@1.0.0', { source: 'user' }),
    ]);
    expect(loaded(r)).toEqual(['a@1.0.0 (workspace)']);
  });

  it('lets a dependent range force a lower version', () => {
    const r = run([plugin('lib@1.5.0'), plugin('lib@2.0.0'), plugin('app@1.0.0', { dependencies: { lib: '^1.0.0' } })]);
    expect(loaded(r)).toEqual(['lib@1.5.0 (builtin)', 'app@1.0.0 (builtin)']);
    expect(r.requests.get('lib')).toEqual([{ from: 'app@1.0.0', range: '^1.0.0' }]);
  });

  it('follows ranges through a chain until they settle', () => {
    // app pins mid@1, whose manifest pins lib@1: only the second round sees that.
    const r = run([
      plugin('app@1.0.0', { dependencies: { mid: '^1.0.0' } }),
      plugin('mid@1.0.0', { dependencies: { lib: '^1.0.0' } }),
      plugin('mid@2.0.0', { dependencies: { lib: '^2.0.0' } }),
      plugin('lib@1.3.0'),
      plugin('lib@2.0.0'),
    ]);
    expect(loaded(r)).toEqual(['lib@1.3.0 (builtin)', 'mid@1.0.0 (builtin)', 'app@1.0.0 (builtin)']);
  });

  it('falls back to a lower version when the highest cannot load', () => {
    const r = run([plugin('a@1.0.0'), plugin('a@2.0.0', { dependencies: { gone: '^1.0.0' } })]);
    expect(loaded(r)).toEqual(['a@1.0.0 (builtin)']);
    expect(r.excluded).toEqual([]);
    expect(r.rejected.map((x) => [x.candidate?.manifest.version, x.error.code])).toEqual([['2.0.0', 'PLN_E_DEP_MISSING']]);
  });
});

describe('failures', () => {
  it('PLN_E_DEP_CONFLICT: no version satisfies every range', () => {
    const r = run([
      plugin('a@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('b@1.0.0', { dependencies: { c: '^2.0.0' } }),
      plugin('c@1.4.0', { source: 'builtin' }),
      plugin('c@2.1.0', { source: 'user' }),
    ]);
    // A tie keeps the higher version, so "a" is the one left out.
    expect(loaded(r)).toEqual(['c@2.1.0 (user)', 'b@1.0.0 (builtin)']);
    const { error } = exclusionOf(r, 'a');
    expect(error.code).toBe('PLN_E_DEP_CONFLICT');
    expect(error.plugin).toBe('a');
    for (const part of ['"a@1.0.0"', '"b@1.0.0"', '"c"', '^1.0.0', '^2.0.0', '1.4.0 (builtin)', '2.1.0 (user)']) {
      expect(error.message).toContain(part);
    }
  });

  it('PLN_E_DEP_CONFLICT: keeps the version most dependents accept', () => {
    const r = run([
      plugin('a@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('b@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('z@1.0.0', { dependencies: { c: '^2.0.0' } }),
      plugin('c@1.4.0'),
      plugin('c@2.1.0'),
    ]);
    expect(loaded(r)).toEqual(['c@1.4.0 (builtin)', 'a@1.0.0 (builtin)', 'b@1.0.0 (builtin)']);
    expect(exclusionOf(r, 'z').error.code).toBe('PLN_E_DEP_CONFLICT');
  });

  it('a conflicting dependent falls back to a version that agrees', () => {
    const r = run([
      plugin('a@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('b@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('p@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('p@2.0.0', { dependencies: { c: '^2.0.0' } }),
      plugin('c@1.0.0'),
      plugin('c@2.0.0'),
    ]);
    expect(loaded(r)).toContain('p@1.0.0 (builtin)');
    expect(loaded(r)).toContain('c@1.0.0 (builtin)');
    expect(r.excluded).toEqual([]);
  });

  it('PLN_E_DEP_MISSING: a dependency is not installed', () => {
    const r = run([plugin('a@1.0.0', { dependencies: { b: '^1.0.0' } })]);
    const { error } = exclusionOf(r, 'a');
    expect(error.code).toBe('PLN_E_DEP_MISSING');
    expect(error.plugin).toBe('a');
    expect(error.message).toContain('"a"');
    expect(error.message).toContain('"b"');
    expect(error.message).toContain('^1.0.0');
  });

  it('PLN_E_DEP_MISSING: names the whole chain when it is deeper', () => {
    const r = run([
      plugin('top@1.0.0', { dependencies: { a: '^1.0.0' } }),
      plugin('a@1.0.0', { dependencies: { b: '^1.0.0' } }),
    ]);
    const { error } = exclusionOf(r, 'top');
    expect(error.code).toBe('PLN_E_DEP_MISSING');
    expect(error.message).toContain('"top" → "a" → "b"');
    expect(error.details?.chain).toEqual(['top', 'a', 'b']);
  });

  it('PLN_E_DEP_MISSING: says so when the dependency has an invalid manifest', () => {
    const broken = new PlinthError('PLN_E_MANIFEST_INVALID', '/x/b/manifest.json: version: expected a semver version', { plugin: 'b' });
    const r = run([plugin('a@1.0.0', { dependencies: { b: '^1.0.0' } })], { invalid: [broken] });
    const { error } = exclusionOf(r, 'a');
    expect(error.code).toBe('PLN_E_DEP_MISSING');
    expect(error.message).toContain('PLN_E_MANIFEST_INVALID');
    expect(r.invalid).toEqual([broken]);
  });

  it('PLN_E_DEP_CYCLE: excludes every plugin in the cycle, and what depends on it', () => {
    const r = run([
      plugin('a@1.0.0', { dependencies: { b: '^1.0.0' } }),
      plugin('b@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('c@1.0.0', { dependencies: { a: '^1.0.0' } }),
      plugin('user@1.0.0', { dependencies: { a: '^1.0.0' } }),
      plugin('free@1.0.0'),
    ]);
    expect(loaded(r)).toEqual(['free@1.0.0 (builtin)']);
    for (const name of ['a', 'b', 'c']) {
      const { error } = exclusionOf(r, name);
      expect(error.code).toBe('PLN_E_DEP_CYCLE');
      expect(error.plugin).toBe(name);
      for (const member of ['a', 'b', 'c']) expect(error.message).toContain(member);
    }
    expect(exclusionOf(r, 'a').error.message).toContain('a → b → c → a');
    const dependent = exclusionOf(r, 'user').error;
    expect(dependent.code).toBe('PLN_E_DEP_EXCLUDED');
    expect(dependent.message).toContain('"user"');
    expect(dependent.message).toContain('PLN_E_DEP_CYCLE');
  });

  it('PLN_E_DEP_CYCLE: a plugin that depends on itself', () => {
    const r = run([plugin('a@1.0.0', { dependencies: { a: '*' } })]);
    expect(exclusionOf(r, 'a').error.code).toBe('PLN_E_DEP_CYCLE');
  });

  it('PLN_E_KERNEL_INCOMPATIBLE: no version accepts this kernel', () => {
    const r = run([plugin('p@1.0.0', { kernel: '^2.0.0' }), plugin('p@1.1.0', { kernel: '>=3.0.0', source: 'user' })]);
    const exclusion = exclusionOf(r, 'p');
    expect(exclusion.candidate).toBeUndefined();
    expect(exclusion.error.code).toBe('PLN_E_KERNEL_INCOMPATIBLE');
    for (const part of ['"p"', KERNEL, '^2.0.0', '>=3.0.0']) expect(exclusion.error.message).toContain(part);
  });

  it('PLN_E_PLUGIN_DISABLED: says where it was disabled', () => {
    const r = run([plugin('x@1.0.0')], { disabled: new Map([['x', 'workspace settings']]) });
    const { error } = exclusionOf(r, 'x');
    expect(error.code).toBe('PLN_E_PLUGIN_DISABLED');
    expect(error.message).toContain('"x"');
    expect(error.message).toContain('workspace settings');
  });

  it('PLN_E_DEP_DISABLED: cascades to every transitive dependent', () => {
    const r = run(
      [
        plugin('x@1.0.0'),
        plugin('a@1.0.0', { dependencies: { x: '^1.0.0' } }),
        plugin('top@1.0.0', { dependencies: { a: '^1.0.0' } }),
        plugin('other@1.0.0'),
      ],
      { disabled: new Map([['x', 'user settings']]) },
    );
    expect(loaded(r)).toEqual(['other@1.0.0 (builtin)']);
    expect(exclusionOf(r, 'a').error.code).toBe('PLN_E_DEP_DISABLED');
    const { error } = exclusionOf(r, 'top');
    expect(error.code).toBe('PLN_E_DEP_DISABLED');
    expect(error.plugin).toBe('top');
    expect(error.message).toContain('"top" → "a" → "x"');
    expect(error.message).toContain('user settings');
  });

  it('PLN_E_DEP_EXCLUDED: cascades any other exclusion, naming the chain and the cause', () => {
    const r = run([
      plugin('p@1.0.0', { kernel: '^2.0.0' }),
      plugin('a@1.0.0', { dependencies: { p: '^1.0.0' } }),
      plugin('top@1.0.0', { dependencies: { a: '^1.0.0' } }),
    ]);
    expect(r.plugins).toEqual([]);
    const direct = exclusionOf(r, 'a').error;
    expect(direct.code).toBe('PLN_E_DEP_EXCLUDED');
    expect(direct.message).toContain('"a"');
    expect(direct.message).toContain('"p"');
    expect(direct.message).toContain('PLN_E_KERNEL_INCOMPATIBLE');
    const deep = exclusionOf(r, 'top').error;
    expect(deep.code).toBe('PLN_E_DEP_EXCLUDED');
    expect(deep.message).toContain('"top" → "a" → "p"');
    expect(deep.details?.cause).toBe('PLN_E_KERNEL_INCOMPATIBLE');
  });

  it('PLN_E_DEP_EXCLUDED: a conflict cascades to the plugins above it', () => {
    const r = run([
      plugin('a@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('b@1.0.0', { dependencies: { c: '^2.0.0' } }),
      plugin('c@2.0.0'),
      plugin('top@1.0.0', { dependencies: { a: '*' } }),
    ]);
    const { error } = exclusionOf(r, 'top');
    expect(error.code).toBe('PLN_E_DEP_EXCLUDED');
    for (const name of ['"top"', '"a"', '"c"', 'PLN_E_DEP_CONFLICT']) expect(error.message).toContain(name);
  });

  it('throws PLN_E_KERNEL_VERSION_INVALID for a kernel version that is not semver', () => {
    expect(() => resolve({ candidates: [], kernelVersion: 'latest' })).toThrow(expect.objectContaining({ code: 'PLN_E_KERNEL_VERSION_INVALID' }));
  });
});

describe('the outcome', () => {
  const graph = (): Candidate[] => [
    plugin('zeta@1.0.0'),
    plugin('app@1.0.0', { dependencies: { ui: '^1.0.0', db: '^1.0.0' } }),
    plugin('ui@1.0.0', { dependencies: { core: '^1.0.0' } }),
    plugin('db@1.0.0', { dependencies: { core: '^1.0.0' } }),
    plugin('core@1.0.0'),
    plugin('alpha@1.0.0'),
  ];

  it('orders plugins after their dependencies, ties by name', () => {
    const order = run(graph()).plugins.map((c) => c.manifest.name);
    expect(order).toEqual(['alpha', 'core', 'db', 'ui', 'app', 'zeta']);
  });

  it('where dependencies leave it open, loads builtin plugins first, then user, workspace and path ones, then by name', () => {
    // `trust` (builtin) must be set up before any other plugin's code is imported:
    // it taps `load` to refuse unapproved workspace plugins.
    const candidates = [
      plugin('aaa@1.0.0', { source: 'workspace' }),
      plugin('abc@1.0.0', { source: 'path' }),
      plugin('mine@1.0.0', { source: 'user' }),
      plugin('trust@1.0.0', { source: 'builtin' }),
      plugin('hooks@1.0.0', { source: 'builtin', dependencies: { trust: '^1.0.0' } }),
      // A builtin plugin that needs a user plugin still loads after it: dependencies come first.
      plugin('inspect@1.0.0', { source: 'builtin', dependencies: { mine: '^1.0.0' } }),
      plugin('zzz@1.0.0', { source: 'builtin' }),
      plugin('ws-app@1.0.0', { source: 'workspace', dependencies: { abc: '^1.0.0' } }),
    ];
    const order = (list: Candidate[]) => run(list).plugins.map((c) => c.manifest.name);
    expect(order(candidates)).toEqual(['trust', 'hooks', 'zzz', 'mine', 'inspect', 'aaa', 'abc', 'ws-app']);
    expect(order([...candidates].reverse())).toEqual(order(candidates));
    // Without sources in play, ties are still broken by name alone.
    expect(run(graph()).plugins.map((c) => c.manifest.name)).toEqual(['alpha', 'core', 'db', 'ui', 'app', 'zeta']);
  });

  it('is the same whatever the input order', () => {
    const candidates = [
      ...graph(),
      plugin('a@1.0.0', { dependencies: { c: '^1.0.0' } }),
      plugin('b@1.0.0', { dependencies: { c: '^2.0.0' } }),
      plugin('c@1.0.0'),
      plugin('c@2.0.0', { source: 'user' }),
      plugin('m@1.0.0', { dependencies: { gone: '*', c: '*' } }),
    ];
    const summary = (r: Resolution) => ({
      plugins: loaded(r),
      excluded: r.excluded.map((e) => [e.name, e.error.code, e.error.message]),
      requests: [...r.requests],
      candidates: [...r.candidates].map(([name, list]) => [name, list.map((c) => c.dir)]),
    });
    const expected = summary(run(candidates));
    for (const shuffled of [[...candidates].reverse(), [...candidates.slice(5), ...candidates.slice(0, 5)]]) {
      expect(summary(run(shuffled))).toEqual(expected);
    }
  });

  it('passes invalid manifests through', () => {
    const invalid = [new PlinthError('PLN_E_MANIFEST_UNREADABLE', '/x/manifest.json:1:2: invalid JSON')];
    expect(run([], { invalid }).invalid).toEqual(invalid);
  });
});

describe('explain', () => {
  const resolution = () =>
    run(
      [
        plugin('lib@2.0.0', { source: 'user' }),
        plugin('lib@1.5.0', { source: 'workspace' }),
        plugin('lib@1.5.0', { source: 'builtin' }),
        plugin('lib@1.0.0'),
        plugin('lib@1.9.0', { kernel: '^2.0.0' }),
        plugin('app@1.0.0', { dependencies: { lib: '^1.0.0', log: '^1.0.0' } }),
        plugin('log@1.0.0'),
        plugin('x@1.0.0', { dependencies: { lib: '^1.0.0' } }),
      ],
      { disabled: new Map([['x', 'user settings']]) },
    );

  it('says why each candidate was or was not chosen', () => {
    const why = explain(resolution(), 'lib');
    expect(why?.chosen?.source).toBe('workspace');
    expect(why?.candidates.map((c) => [c.candidate.manifest.version, c.candidate.source, c.status])).toEqual([
      ['2.0.0', 'user', 'unsatisfied'],
      ['1.9.0', 'builtin', 'kernel'],
      ['1.5.0', 'workspace', 'chosen'],
      ['1.5.0', 'builtin', 'shadowed'],
      ['1.0.0', 'builtin', 'lower'],
    ]);
    const reasons = why?.candidates.map((c) => c.reason) ?? [];
    expect(reasons[0]).toContain('"app@1.0.0" ^1.0.0');
    expect(reasons[1]).toContain(KERNEL);
    expect(reasons[3]).toContain('workspace');
    expect(reasons[4]).toContain('1.5.0');
  });

  it('lists who asked for it; a disabled plugin asks nothing', () => {
    expect(explain(resolution(), 'lib')?.requestedBy).toEqual([{ from: 'app@1.0.0', range: '^1.0.0' }]);
  });

  it('lists its dependencies with the version each resolved to', () => {
    const why = explain(resolution(), 'app');
    expect(why?.dependencies.map((d) => [d.name, d.range, d.resolved?.manifest.version, d.problem])).toEqual([
      ['lib', '^1.0.0', '1.5.0', undefined],
      ['log', '^1.0.0', '1.0.0', undefined],
    ]);
    expect(why?.exclusion).toBeUndefined();
  });

  it('gives the exclusion of a plugin that does not load', () => {
    const why = explain(resolution(), 'x');
    expect(why?.chosen).toBeUndefined();
    expect(why?.exclusion?.code).toBe('PLN_E_PLUGIN_DISABLED');
    expect(why?.candidates.map((c) => c.status)).toEqual(['disabled']);
    expect(why?.dependencies.map((d) => [d.name, d.resolved?.manifest.version])).toEqual([['lib', '1.5.0']]);
  });

  it('reports a missing dependency', () => {
    const r = run([plugin('a@1.0.0', { dependencies: { gone: '^1.0.0' } })]);
    expect(explain(r, 'a')?.dependencies).toEqual([{ name: 'gone', range: '^1.0.0', resolved: undefined, problem: 'PLN_E_DEP_MISSING' }]);
  });

  it('returns undefined for a name it never saw', () => {
    expect(explain(resolution(), 'nope')).toBeUndefined();
  });
});
