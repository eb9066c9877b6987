/**
 * The registry documents of `plinth/sdk` (internal/registry/packument.ts): lenient
 * with what real npm registries add, strict on what install relies on, and
 * the search scoring the server and the client share.
 */
import { describe, expect, test } from 'vitest';
import { SEARCH_TIER, abbreviatedPackumentSchema, compareSearchResults, encodePackageName, integritySchema, latestVersion, packumentFile, packumentSchema, packumentUrl, prepareQuery, prepareSearchDoc, registryRoot, resolveTarballUrl, searchResponseSchema, searchScore, tarballFile, tarballUrlSchema } from '../internal/registry/packument.js';

const INTEGRITY = 'sha512-8rU4vHc9BSWqKyyCXV8rWVETYZ8Rr9rmyyElNlwQhSpXAwC6cUjCrzO5xYdvgV8Wc5kFRmKd8GM1oknLcP1h9w==';

/** A version as npm's registry returns it: far more fields than plinth reads. */
function npmVersion(version: string, dist: Record<string, unknown> = {}) {
  return {
    name: 'left-pad',
    version,
    description: 'String left pad',
    main: 'index.js',
    license: 'WTFPL',
    _id: `left-pad@${version}`,
    _npmVersion: '10.2.0',
    _nodeVersion: '20.0.0',
    _npmUser: { name: 'someone', email: 'someone@example.com' },
    maintainers: [{ name: 'someone', email: 'someone@example.com' }],
    directories: {},
    gitHead: 'abc',
    dist: {
      tarball: `https://registry.npmjs.org/left-pad/-/left-pad-${version}.tgz`,
      integrity: INTEGRITY,
      shasum: '2a5b1c3d',
      fileCount: 5,
      unpackedSize: 9000,
      signatures: [{ keyid: 'SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA', sig: 'MEUCIQ…' }],
      'npm-signature': '-----BEGIN PGP SIGNATURE-----',
      ...dist,
    },
  };
}

describe('packument', () => {
  test('a packument as npm serves it parses, unknown fields kept', () => {
    const doc = packumentSchema.parse({
      _id: 'left-pad',
      _rev: '12-abc',
      name: 'left-pad',
      'dist-tags': { latest: '1.3.0', next: '2.0.0-rc.1' },
      versions: { '1.3.0': npmVersion('1.3.0'), '2.0.0-rc.1': npmVersion('2.0.0-rc.1') },
      time: { created: '2014-03-14T00:00:00.000Z', modified: '2022-06-19T00:00:00.000Z', '1.3.0': '2018-04-09T00:00:00.000Z' },
      maintainers: [],
      readme: '# left-pad',
      users: { someone: true },
      bugs: { url: 'https://example.com' },
    });
    expect(doc._rev).toBe('12-abc');
    expect(doc.versions['1.3.0']!.dist.signatures?.[0]?.keyid).toMatch(/^SHA256:/);
    expect((doc.versions['1.3.0']!.dist as Record<string, unknown>)['npm-signature']).toBeDefined();
    expect(doc.versions['1.3.0']!.kernel).toBeUndefined();
  });

  test('the abbreviated form parses, with or without dist-tags', () => {
    const doc = abbreviatedPackumentSchema.parse({
      name: 'left-pad',
      modified: '2022-06-19T00:00:00.000Z',
      'dist-tags': { latest: '1.3.0' },
      versions: { '1.3.0': { name: 'left-pad', version: '1.3.0', dist: { tarball: 'https://r.example/left-pad-1.3.0.tgz', integrity: INTEGRITY }, engines: { node: '>=8' }, _hasShrinkwrap: false } },
    });
    expect(doc.versions['1.3.0']!.engines).toEqual({ node: '>=8' });
    expect(abbreviatedPackumentSchema.parse({ name: 'x', versions: {} })['dist-tags']).toEqual({});
  });

  test('strict on what install relies on: dist.tarball, dist.integrity, names and versions', () => {
    const withDist = (dist: Record<string, unknown>) => packumentSchema.safeParse({ name: 'left-pad', versions: { '1.3.0': { ...npmVersion('1.3.0'), dist: { ...npmVersion('1.3.0').dist, ...dist } } } }).success;
    expect(withDist({})).toBe(true);
    expect(withDist({ integrity: undefined })).toBe(false);
    expect(withDist({ integrity: 'not-sri' })).toBe(false);
    expect(withDist({ integrity: 'sha512-' })).toBe(false);
    expect(withDist({ tarball: undefined })).toBe(false);
    expect(withDist({ tarball: 'file:///etc/passwd' })).toBe(false);
    expect(withDist({ tarball: 'javascript:alert(1)' })).toBe(false);
    expect(withDist({ tarball: '../outside.tgz' })).toBe(false);
    expect(withDist({ tarball: '/-/left-pad-1.3.0.tgz' })).toBe(false);
    expect(withDist({ tarball: '-/left-pad-1.3.0.tgz' })).toBe(true);
    expect(packumentSchema.safeParse({ name: 'Left Pad', versions: {} }).success).toBe(false);
    expect(packumentSchema.safeParse({ name: 'left-pad', versions: { one: { ...npmVersion('one') } } }).success).toBe(false);
    // A version listed under another version's key is a lie about what is installed.
    expect(packumentSchema.safeParse({ name: 'left-pad', versions: { '9.9.9': npmVersion('1.3.0') } }).success).toBe(false);
  });

  test('integrity: one or more SRI tokens; weak algorithms pass the schema for the client to refuse', () => {
    expect(integritySchema.safeParse(`${INTEGRITY} sha256-cj3i/0pu645DU+Ms51qCjpEnI/XtqRFeTLqAEADfcWw=`).success).toBe(true);
    expect(integritySchema.safeParse('sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=').success).toBe(true);
    expect(integritySchema.safeParse('md5-1B2M2Y8AsgTpgAmY7PhCfg==').success).toBe(true);
    expect(integritySchema.safeParse('crc32-AAAA').success).toBe(false);
    expect(integritySchema.safeParse('').success).toBe(false);
    expect(integritySchema.safeParse(42).success).toBe(false);
  });

  test('tarball references: absolute http(s) or root-relative without climbing', () => {
    for (const good of ['https://r.example/a.tgz', 'http://127.0.0.1:4873/a/-/a-1.0.0.tgz', '-/@scope/a-1.0.0.tgz']) expect(tarballUrlSchema.safeParse(good).success, good).toBe(true);
    for (const bad of ['', 'ftp://r.example/a.tgz', 'data:application/gzip;base64,AA', '-/../../a.tgz', './-/a.tgz', '-\\a.tgz', '-/a\n.tgz']) expect(tarballUrlSchema.safeParse(bad).success, bad).toBe(false);
  });
});

describe('search response', () => {
  test('npm\'s response parses; a sparse one from a smaller registry too', () => {
    const npm = searchResponseSchema.parse({
      objects: [
        {
          downloads: { monthly: 1, weekly: 1 },
          dependents: 3,
          updated: '2024-01-01T00:00:00.000Z',
          searchScore: 123.4,
          package: { name: 'left-pad', keywords: ['pad'], version: '1.3.0', description: 'String left pad', sanitized_name: 'left-pad', publisher: { email: 'x', username: 'x' }, maintainers: [], license: 'WTFPL', date: '2018-04-09T00:00:00.000Z', links: { npm: 'https://www.npmjs.com/package/left-pad' } },
          score: { final: 0.5, detail: { popularity: 1, quality: 1, maintenance: 0 } },
          flags: { insecure: 0 },
        },
      ],
      total: 1,
      time: 'Thu Jan 01 2026 00:00:00 GMT+0000 (Coordinated Universal Time)',
    });
    expect(npm.objects[0]!.package.name).toBe('left-pad');
    expect(searchResponseSchema.parse({ objects: [{ package: { name: 'x', version: '1.0.0' } }] }).objects).toHaveLength(1);
    expect(searchResponseSchema.safeParse({ results: [] }).success).toBe(false);
  });
});

describe('URLs and layout', () => {
  test('packument URLs encode the scope\'s slash; tarballs resolve against the registry root', () => {
    expect(encodePackageName('@acme/git')).toBe('@acme%2fgit');
    expect(encodePackageName('git')).toBe('git');
    expect(packumentUrl('https://r.example/npm', '@acme/git').href).toBe('https://r.example/npm/@acme%2fgit');
    expect(packumentUrl('https://r.example/npm/?x=1#y', 'git').href).toBe('https://r.example/npm/git');
    expect(registryRoot('http://127.0.0.1:4873').href).toBe('http://127.0.0.1:4873/');
    expect(resolveTarballUrl('https://r.example/npm', '-/@acme/git-1.0.0.tgz').href).toBe('https://r.example/npm/-/@acme/git-1.0.0.tgz');
    expect(resolveTarballUrl('https://r.example/npm', 'https://cdn.example/git-1.0.0.tgz').href).toBe('https://cdn.example/git-1.0.0.tgz');
    expect(packumentFile('@acme/git')).toBe('@acme/git');
    expect(tarballFile('@acme/git', '1.0.0')).toBe('-/@acme/git-1.0.0.tgz');
  });

  test('latest is the highest version that is not a prerelease', () => {
    expect(latestVersion(['1.0.0', '1.10.0', '1.9.0', '2.0.0-beta.1'])).toBe('1.10.0');
    expect(latestVersion(['2.0.0-beta.1', '2.0.0-beta.2'])).toBe('2.0.0-beta.2');
    expect(latestVersion([])).toBeUndefined();
  });
});

describe('searchScore', () => {
  const score = (text: string, fields: { name: string; keywords?: string[]; description?: string }) => searchScore(prepareQuery(text), prepareSearchDoc(fields));

  test('tiers: exact name, then name prefix, then full text; no match is 0', () => {
    expect(score('git', { name: 'git' })).toBeGreaterThanOrEqual(SEARCH_TIER.exact);
    expect(score('git', { name: '@acme/git' })).toBeGreaterThanOrEqual(SEARCH_TIER.exact);
    expect(score('git', { name: 'git-tools' })).toBeGreaterThanOrEqual(SEARCH_TIER.prefix);
    expect(score('git', { name: 'git-tools' })).toBeLessThan(SEARCH_TIER.exact);
    expect(score('git', { name: 'hooks', keywords: ['git'] })).toBeGreaterThanOrEqual(SEARCH_TIER.text);
    expect(score('git', { name: 'hooks', keywords: ['git'] })).toBeLessThan(SEARCH_TIER.prefix);
    expect(score('git', { name: 'hooks', description: 'nothing here' })).toBe(0);
    expect(score('GIT', { name: 'Git' })).toBe(score('git', { name: 'git' }));
  });

  test('within full text: name word over keyword over description word over a part of a word', () => {
    const ordered = [
      score('lint', { name: 'eslint-lint-runner' }),
      score('lint', { name: 'runner', keywords: ['lint'] }),
      score('lint', { name: 'runner', keywords: ['linters'] }),
      score('lint', { name: 'runner', description: 'runs lint on save' }),
      score('lint', { name: 'runner', description: 'runs eslint on save' }),
    ];
    expect([...ordered].sort((a, b) => b - a)).toEqual(ordered);
    expect(new Set(ordered).size).toBe(ordered.length);
  });

  test('every term must match somewhere; an empty query matches everything', () => {
    expect(score('git hooks', { name: 'git', description: 'hooks for commits' })).toBeGreaterThan(0);
    expect(score('git hooks', { name: 'git', description: 'status' })).toBe(0);
    expect(score('', { name: 'anything' })).toBe(SEARCH_TIER.text);
    expect(score('  ', { name: 'anything' })).toBe(SEARCH_TIER.text);
  });

  test('the whole name ranks before the same name in another scope; equal scores order by name', () => {
    expect(score('git', { name: 'git' })).toBeGreaterThan(score('git', { name: '@acme/git' }));
    const sorted = [
      { name: 'b', score: 1.5 },
      { name: 'a', score: 1.5 },
      { name: 'c', score: 2 },
    ].sort(compareSearchResults);
    expect(sorted.map((r) => r.name)).toEqual(['c', 'a', 'b']);
  });
});
