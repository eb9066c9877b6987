/**
 * The marketplace talks to registries as an npm client does, and no more
 * trustingly: scoped names go to their registry, documents are cached
 * and revalidated with ETags, an unreachable registry is answered from its
 * cache saying how old it is, a token goes to its own registry's origin only,
 * and a redirect to another origin is refused. Real servers on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MarketplaceService } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { type FixturePlugin, recordingServer, servedRegistry } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-market-net-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function host(registries: unknown[], settings: Record<string, unknown> = {}): Promise<{ kernel: TestKernel; market: MarketplaceService }> {
  const kernel = await createTestKernel({ builtin: true, settings: { registries, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, marketplace: { settings } } } });
  closers.push(() => kernel.dispose());
  return { kernel, market: await kernel.get('marketplace') };
}

async function registry(plugins: FixturePlugin[], options: { token?: string; baseUrl?: string } = {}) {
  const served = await servedRegistry(base, plugins, options);
  closers.push(() => served.server.close());
  return served;
}

async function recorder(options: Parameters<typeof recordingServer>[0]) {
  const server = await recordingServer(options);
  closers.push(() => server.close());
  return server;
}

describe('scopes', () => {
  it('routes @scope/… names to the registry of that scope, asking as npm does (@scope%2fname, abbreviated packument)', async () => {
    const general = await registry([{ name: '@acme/tool', version: '9.0.0', greeting: 'the wrong one' }]);
    const acme = await registry([{ name: '@acme/tool', version: '1.0.0' }]);
    const proxy = await recorder({ target: acme.server.url });
    const { kernel, market } = await host([
      { name: 'general', url: general.server.url },
      { name: 'acme', url: proxy.url, scope: '@acme' },
    ]);
    const result = await market.install('@acme/tool', { yes: true });
    expect(result.changes).toEqual([expect.objectContaining({ name: '@acme/tool', to: '1.0.0', registry: 'acme' })]);
    // First the registry's signing keys (it lists none), then the packument.
    expect(proxy.seen[0]).toMatchObject({ url: '/-/npm/v1/keys', status: 404 });
    expect(proxy.seen[1]).toMatchObject({ url: '/@acme%2ftool', accept: 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8' });
    const greet = (await kernel.get('greeting:@acme/tool' as never)) as unknown as () => string;
    expect(greet()).toBe('@acme/tool@1.0.0');
    expect(await readFile(join(kernel.home, 'plugins', '@acme', 'tool', 'manifest.json'), 'utf8')).toContain('"@acme/tool"');
  });
});

describe('cache', () => {
  it('serves fresh documents from disk, revalidates with If-None-Match, and falls back to a stale copy saying how old', async () => {
    const origin = await registry([{ name: 'cached', version: '1.0.0' }]);
    const proxy = await recorder({ target: origin.server.url });
    const { kernel, market } = await host([{ name: 'local', url: proxy.url }]);
    await market.search('cached');
    await market.search('cached');
    // Its answer to the text and its listing (plinth matches in any letter case itself); the second search came from the cache.
    expect(proxy.seen.filter((s) => s.url.startsWith('/-/v1/search'))).toHaveLength(2);
    // outdated revalidates: the packument is asked again with its ETag, and the registry answers 304.
    await market.install('cached', { yes: true });
    await market.outdated();
    const packuments = proxy.seen.filter((s) => s.url === '/cached');
    expect(packuments.at(-1)).toMatchObject({ status: 304, ifNoneMatch: expect.any(String) as string });
    // Three hours later the registry is gone: the cache answers, and says so.
    const dir = join(kernel.home, 'cache', 'registry');
    for (const file of await readdir(dir)) {
      const entry = JSON.parse(await readFile(join(dir, file), 'utf8')) as { fetchedAt: number };
      await writeFile(join(dir, file), JSON.stringify({ ...entry, fetchedAt: Date.now() - 3 * 3600_000 }));
    }
    await proxy.close();
    const stale = await market.search('cached');
    expect(stale.hits.map((h) => h.name)).toEqual(['cached']);
    expect(stale.notes).toEqual([expect.objectContaining({ registry: 'local', kind: 'stale', message: 'registry local unreachable (ECONNREFUSED); using its cache from 3 h ago' })]);
  });

  it('says which registry is unreachable when nothing is cached', async () => {
    const gone = await recorder({ answer: () => false });
    await gone.close();
    const { market } = await host([{ name: 'gone', url: gone.url }]);
    const error = await rejection(market.install('anything', { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_REGISTRY_UNREACHABLE');
    expect(error.details).toMatchObject({ step: 'resolve', registry: 'gone', reason: 'ECONNREFUSED' });
  });
});

describe('limits', () => {
  it('refuses a tarball larger than maxDownloadBytes, at the download step, installing nothing', async () => {
    const { server } = await registry([{ name: 'bulky', version: '1.0.0', files: { 'data.bin': randomBytes(64 * 1024) } }]);
    const { kernel, market } = await host([{ name: 'local', url: server.url }], { maxDownloadBytes: 20_000 });
    const error = await rejection(market.install('bulky', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_DOWNLOAD', details: expect.objectContaining({ step: 'download', maxBytes: 20_000 }) as unknown });
    expect(await readdir(join(kernel.home, 'plugins')).catch(() => [])).toEqual([]);
  });

  it('gives up on a registry that does not answer within downloadTimeoutMs', async () => {
    const silent = await recorder({ answer: () => true }); // takes the request and never answers
    const { market } = await host([{ name: 'silent', url: silent.url }], { downloadTimeoutMs: 300 });
    const error = await rejection(market.install('anything', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REGISTRY_UNREACHABLE', details: expect.objectContaining({ registry: 'silent', reason: 'timed out' }) as unknown });
  });
});

describe('tokens and redirects', () => {
  const TOKEN = 'tok-7f3a9c2e-secret';
  afterEach(() => {
    delete process.env.PLINTH_TEST_REGISTRY_TOKEN;
  });

  it('sends the token to its own registry only: never to a tarball host on another origin', async () => {
    process.env.PLINTH_TEST_REGISTRY_TOKEN = TOKEN;
    // The packuments name tarballs on another origin (a CDN, here a second server on another port that has nothing).
    const cdn = await recorder({ answer: (_req, res) => (res.writeHead(404), res.end(), true) });
    const origin = await registry([{ name: 'private', version: '1.0.0' }], { token: TOKEN, baseUrl: cdn.url });
    const proxy = await recorder({ target: origin.server.url });
    const { kernel, market } = await host([{ name: 'private', url: proxy.url, token: '${env:PLINTH_TEST_REGISTRY_TOKEN}' }]);
    const error = await rejection(market.install('private', { yes: true }));
    expect(kernel.logs.join('\n')).not.toContain(TOKEN);
    expect(proxy.seen.map((s) => [s.url, s.authorization, s.status])).toEqual([
      ['/-/npm/v1/keys', `Bearer ${TOKEN}`, 404],
      ['/private', `Bearer ${TOKEN}`, 200],
    ]);
    expect(cdn.seen.map((s) => [s.url, s.authorization])).toEqual([['/-/private-1.0.0.tgz', undefined]]);
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_NOT_FOUND', details: expect.objectContaining({ step: 'download' }) as unknown });
    expect(JSON.stringify(error.toJSON())).not.toContain(TOKEN);
  });

  it('refuses a redirect to another origin before sending anything there', async () => {
    process.env.PLINTH_TEST_REGISTRY_TOKEN = TOKEN;
    const elsewhere = await recorder({ answer: (_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), res.end('{}'), true) });
    const redirecting = await recorder({
      answer: (req, res) => {
        res.writeHead(302, { location: new URL(req.url ?? '/', elsewhere.url).href });
        res.end();
        return true;
      },
    });
    const { market } = await host([{ name: 'sly', url: redirecting.url, token: '${env:PLINTH_TEST_REGISTRY_TOKEN}' }]);
    const error = await rejection(market.install('anything', { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_REDIRECT');
    expect(redirecting.seen[0]?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(elsewhere.seen).toEqual([]);
    expect(JSON.stringify(error.toJSON())).not.toContain(TOKEN);
  });

  it('a token reference to a variable that is not set is a coded error naming the variable, not a request without it', async () => {
    const origin = await registry([{ name: 'private', version: '1.0.0' }], { token: TOKEN });
    const { market } = await host([{ name: 'private', url: origin.server.url, token: '${env:PLINTH_TEST_REGISTRY_TOKEN}' }]);
    const error = await rejection(market.search('private'));
    expect(error.code).toBe('PLN_E_MARKET_REGISTRY_CONFIG');
    expect(error.message).toContain('PLINTH_TEST_REGISTRY_TOKEN');
  });
});
