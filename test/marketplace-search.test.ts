/**
 * `marketplace.search` across the configured registries: every registry's
 * answer scored with the sdk's shared `searchScore`, merged (exact name, then
 * prefix, then full text), each hit naming its registry; a static registry
 * folder searched by its whole index; one registry down noted, all down an
 * error. Real registry servers on 127.0.0.1.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MarketplaceService } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { type FixturePlugin, servedRegistry } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-market-search-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function host(registries: unknown[]): Promise<{ kernel: TestKernel; market: MarketplaceService }> {
  const kernel = await createTestKernel({ builtin: true, settings: { registries, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } } });
  closers.push(() => kernel.dispose());
  return { kernel, market: await kernel.get('marketplace') };
}

async function registry(plugins: FixturePlugin[]) {
  const served = await servedRegistry(base, plugins);
  closers.push(() => served.server.close());
  return served;
}


describe('search', () => {
  it('ranks across two registries: exact name, then prefix, then full text, each hit naming its registry', async () => {
    const one = await registry([
      { name: 'lint', version: '1.0.0', description: 'checks code' },
      { name: 'formatter', version: '1.0.0', description: 'formats code, after lint' },
    ]);
    const two = await registry([
      { name: 'lint-extra', version: '2.0.0', description: 'more rules' },
      { name: 'notes', version: '1.0.0', description: 'keeps notes', keywords: ['lint'] },
    ]);
    const { market } = await host([
      { name: 'one', url: one.server.url },
      { name: 'two', url: two.server.url },
    ]);
    const result = await market.search('lint');
    expect(result.hits.map((h) => [h.name, h.registry])).toEqual([
      ['lint', 'one'],
      ['lint-extra', 'two'],
      ['notes', 'two'],
      ['formatter', 'one'],
    ]);
    expect(result.notes).toEqual([]);
    expect((await market.search('nothing-like-this')).hits).toEqual([]);
    // One registry down (and nothing of this query cached): the other's results, and a note naming the one that is not there.
    await two.server.close();
    const partial = await market.search('code');
    expect(partial.hits.map((h) => h.name).sort()).toEqual(['formatter', 'lint']);
    expect(partial.notes).toEqual([expect.objectContaining({ registry: 'two', kind: 'unreachable' })]);
    // Both down: an error, not an empty list.
    await one.server.close();
    expect((await rejection(market.search('something else'))).code).toBe('PLN_E_MARKET_REGISTRY_UNREACHABLE');
  });

  it('with "registries": [] says that no registry is configured, as install does, rather than that nothing matches', async () => {
    const { market } = await host([]);
    const error = await rejection(market.search('hello'));
    expect(error.code).toBe('PLN_E_MARKET_REGISTRY_CONFIG');
    expect(error.message).toContain('no registry is configured');
    expect(error.hint).toContain('"registries"');
  });

  it('reads a static registry folder (a file:// URL or a path) as a registry', async () => {
    const { folder } = await registry([{ name: 'offline-plugin', version: '1.0.0', description: 'works without a network' }]);
    const { kernel, market } = await host([{ name: 'folder', url: folder }]);
    expect((await market.search('offline')).hits).toEqual([expect.objectContaining({ name: 'offline-plugin', registry: 'folder' })]);
    const result = await market.install('offline-plugin', { yes: true });
    expect(result.changes).toEqual([expect.objectContaining({ name: 'offline-plugin', to: '1.0.0', registry: 'folder', loaded: true })]);
    expect(kernel.status().find((p) => p.name === 'offline-plugin')?.state).toBe('active');
  });
});

