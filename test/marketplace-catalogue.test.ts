/**
 * The peers' marketplace catalogues as plinth reads them (Claude Code's
 * `.claude-plugin/marketplace.json`, Codex's `.agents/plugins/marketplace.json`),
 * and what `ext marketplace add` makes of what it is given. No repository is
 * fetched here: test/marketplace-git.test.ts installs from real ones.
 */
import { describe, expect, it } from 'vitest';
import { isPlinthError } from 'plinth/sdk';
import { classifyMarketplaceSource } from '../plugins/marketplace/marketplaces.js';
import { gitUrlOf, insidePath, parseCatalogue } from '../plugins/marketplace/peer-catalogue.js';
import { lockName } from '../plugins/marketplace/store.js';

function failure(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    if (isPlinthError(error)) return error;
    throw error;
  }
  throw new Error('expected a PlinthError');
}

describe('a Claude Code catalogue', () => {
  const catalogue = {
    name: 'acme-tools',
    owner: { name: 'Acme', email: 'tools@acme.test' },
    metadata: { description: 'Acme\'s tools', pluginRoot: './plugins' },
    plugins: [
      { name: 'relative', source: './plugins/relative', description: 'a folder of the marketplace' },
      { name: 'shorthand', source: 'acme/shorthand' },
      { name: 'hub', source: { source: 'github', repo: 'acme/hub', ref: 'v2.0.0', sha: 'a'.repeat(40) } },
      { name: 'any-git', source: { source: 'url', url: 'https://gitlab.example/acme/any.git', ref: 'main' } },
      { name: 'sub', source: { source: 'git-subdir', url: 'https://github.com/acme/mono.git', path: 'plugins/sub', ref: 'main', sha: 'b'.repeat(40) } },
      { name: 'from-npm', source: { source: 'npm', package: '@acme/from-npm', version: '^1.2.0', registry: 'https://npm.acme.test' } },
      { name: 'packed', source: { source: 'archive', url: 'https://acme.test/packed.tgz', sha256: 'c'.repeat(64) } },
      { name: 'no-repo', source: { source: 'github' } },
      { name: 'odd', source: { source: 'svn', url: 'svn://acme.test' } },
      { name: 'relative', source: './plugins/again' },
    ],
  };

  it('keeps each source kind as written, and skips (naming them) the entries it cannot install', () => {
    const parsed = parseCatalogue(JSON.stringify(catalogue), 'marketplace.json', 'claude');
    expect(parsed).toMatchObject({ name: 'acme-tools', format: 'claude', owner: 'Acme', description: 'Acme\'s tools', pluginRoot: './plugins' });
    expect(parsed.plugins.map((p) => p.name)).toEqual(['relative', 'shorthand', 'hub', 'any-git', 'sub', 'from-npm', 'packed']);
    expect(parsed.plugins.find((p) => p.name === 'sub')!.source).toEqual(catalogue.plugins[4]!.source);
    expect(parsed.skipped).toEqual([
      'no-repo: plugins.7.source.repo: missing (a "github" source needs it)',
      'odd: plugins.8.source.source: the source kind "svn" is not one plinth installs (local, github, url, git-subdir, npm, archive)',
      'relative: plugins.9: a second entry of that name',
    ]);
  });

  it('refuses what is not a catalogue, naming the field', () => {
    expect(failure(() => parseCatalogue('{"name": "x", "plugins": {}}', 'm.json', 'claude')).message).toContain('"plugins"');
    expect(failure(() => parseCatalogue('{"plugins": []}', 'm.json', 'claude')).message).toContain('"name"');
    expect(failure(() => parseCatalogue('{"name": "../up", "plugins": []}', 'm.json', 'claude')).message).toContain('a marketplace name is letters');
    const notJson = failure(() => parseCatalogue('{', 'm.json', 'codex'));
    expect(notJson.code).toBe('PLN_E_MARKETPLACE_INVALID');
    expect(notJson.message).toContain('m.json is not a marketplace catalogue: it is not JSON');
  });

  it('an archive entry needs a SHA-256 of 64 hex digits', () => {
    const parsed = parseCatalogue(JSON.stringify({ name: 'm', plugins: [{ name: 'a', source: { source: 'archive', url: 'https://x.test/a.tgz', sha256: 'abc' } }] }), 'm.json', 'claude');
    expect(parsed.plugins).toEqual([]);
    expect(parsed.skipped).toEqual(['a: plugins.0.source.sha256: sha256 must be 64 hex digits']);
    const nameless = parseCatalogue(JSON.stringify({ name: 'm', plugins: [{ source: './x' }] }), 'm.json', 'claude');
    expect(nameless.skipped).toEqual(['plugins.0.name: missing']);
  });
});

describe('sources', () => {
  it('GitHub\'s owner/repo is its https clone URL; a URL stays as it is', () => {
    expect(gitUrlOf('acme/tools')).toBe('https://github.com/acme/tools.git');
    expect(gitUrlOf('acme/tools.git')).toBe('https://github.com/acme/tools.git');
    expect(gitUrlOf('git://127.0.0.1:9418/x.git')).toBe('git://127.0.0.1:9418/x.git');
  });

  it('a folder of a marketplace stays inside it', () => {
    expect(insidePath('./plugins/x')).toBe('plugins/x');
    expect(insidePath('plugins//x/')).toBe('plugins/x');
    expect(insidePath('./')).toBe('');
    for (const outside of ['../x', './plugins/../../x', '/etc', 'C:/x', 'a\\b']) expect(insidePath(outside), outside).toBeUndefined();
  });

  it('marketplace add takes a git URL (#ref), owner/repo, a folder, a marketplace.json file or URL', () => {
    expect(classifyMarketplaceSource('acme/tools')).toEqual({ kind: 'git', url: 'https://github.com/acme/tools.git' });
    expect(classifyMarketplaceSource('acme/tools#v1')).toEqual({ kind: 'git', url: 'https://github.com/acme/tools.git', ref: 'v1' });
    expect(classifyMarketplaceSource('https://gitlab.example/acme/tools.git')).toEqual({ kind: 'git', url: 'https://gitlab.example/acme/tools.git' });
    expect(classifyMarketplaceSource('git@gitlab.example:acme/tools.git')).toEqual({ kind: 'git', url: 'git@gitlab.example:acme/tools.git' });
    expect(classifyMarketplaceSource('https://acme.test/marketplace.json')).toEqual({ kind: 'url', url: 'https://acme.test/marketplace.json' });
    expect(classifyMarketplaceSource('/srv/market/.claude-plugin/marketplace.json')).toEqual({ kind: 'path', path: '/srv/market' });
    expect(classifyMarketplaceSource('/srv/market/.agents/plugins/marketplace.json')).toEqual({ kind: 'path', path: '/srv/market' });
    expect(classifyMarketplaceSource('/srv/market')).toEqual({ kind: 'path', path: '/srv/market' });
    expect(failure(() => classifyMarketplaceSource('not a source')).code).toBe('PLN_E_MARKET_SOURCE');
  });

  it('a plugin lock is one file whatever the name (a URL given by mistake made a path of folders)', () => {
    expect(lockName('@acme/tool')).toBe('@acme+tool');
    expect(lockName('https://github.com/o/r')).toBe('https%3a++github.com+o+r');
    expect(lockName('https://github.com/o/r')).not.toContain('/');
  });
});
