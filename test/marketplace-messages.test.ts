/**
 * What the marketplace says when a registry or a request is not what it expects: each refusal
 * with its own code and a cause and fix that are true (no "check the disk" for a hostile name,
 * no "credentials refused" when none were sent, no pointer to a file plinth does not ship).
 * Real registries and servers on 127.0.0.1; a URL given to install is never fetched.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MarketplaceService } from '../sdk/index.js';
import { createTestKernel } from '../testing/index.js';
import { ROOT } from './support/cli.js';
import { rejection } from './support/errors.js';
import { recordingServer, servedRegistry } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-market-msg-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function host(registries: unknown[]): Promise<MarketplaceService> {
  const kernel = await createTestKernel({ builtin: true, settings: { registries, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } } });
  closers.push(() => kernel.dispose());
  return kernel.get('marketplace');
}

/** A registry answering `packument` for `/old-style` and 404 for the rest (its keys among them). */
async function handMade(packument: unknown) {
  const server = await recordingServer({
    answer: (req, res) => {
      if (req.url === '/old-style') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
      else res.writeHead(404).end();
      return true;
    },
  });
  closers.push(() => server.close());
  return server;
}

const oldStyle = (dist: Record<string, unknown>) => ({ name: 'old-style', 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name: 'old-style', version: '1.0.0', dist: { tarball: 'http://127.0.0.1:9/old-style-1.0.0.tgz', ...dist } } } });

describe('a packument without dist.integrity', () => {
  it('with only npm\'s sha1 shasum is refused as weak (PLN_E_INTEGRITY_WEAK), before any download, not as a malformed document', async () => {
    const server = await handMade(oldStyle({ shasum: 'a'.repeat(40) }));
    const error = await rejection((await host([{ name: 'old', url: server.url }])).install('old-style', { yes: true }));
    expect(error.code).toBe('PLN_E_INTEGRITY_WEAK');
    expect(server.seen.map((s) => s.url)).not.toContain('/old-style-1.0.0.tgz');
  });

  it('with no digest at all is refused as giving none (PLN_E_INTEGRITY_INVALID)', async () => {
    const server = await handMade(oldStyle({}));
    expect((await rejection((await host([{ name: 'old', url: server.url }])).install('old-style', { yes: true }))).code).toBe('PLN_E_INTEGRITY_INVALID');
  });
});

describe('a registry that does not speak the protocol', () => {
  it('points at the protocol\'s description in a file plinth ships, not at a DESIGN.md it does not', async () => {
    const server = await handMade({ nothing: 'like a packument' });
    const error = await rejection((await host([{ name: 'odd', url: server.url }])).install('old-style', { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_REGISTRY_RESPONSE');
    expect(error.hint).not.toContain('DESIGN.md');
    const named = /(plugins\/marketplace\/README\.md), "([^"]+)"/.exec(error.hint ?? '');
    expect(named, error.hint).not.toBeNull();
    expect(existsSync(join(ROOT, named![1]!))).toBe(true);
    expect(readFileSync(join(ROOT, named![1]!), 'utf8')).toMatch(new RegExp(`^## ${named![2]}$`, 'm'));
  });
});

describe('a registry that needs a token', () => {
  const TOKEN = 'tok-5d1e-secret';
  afterEach(() => {
    delete process.env.PLINTH_TEST_MSG_TOKEN;
  });

  it('with none sent says a login is needed and how to set the token, never that credentials were refused', async () => {
    const { server } = await servedRegistry(base, [{ name: 'private', version: '1.0.0' }], { token: TOKEN });
    closers.push(() => server.close());
    const error = await rejection((await host([{ name: 'company', url: server.url }])).install('private', { yes: true }));
    expect(error).toMatchObject({ code: 'PLN_E_MARKET_REGISTRY_RESPONSE', details: expect.objectContaining({ status: 401, tokenSent: false }) as unknown });
    expect(error.message).not.toContain('refused the credentials');
    expect(error.hint).toContain('"token": "${env:NAME}"');

    process.env.PLINTH_TEST_MSG_TOKEN = 'not-the-token';
    const wrong = await rejection((await host([{ name: 'company', url: server.url, token: '${env:PLINTH_TEST_MSG_TOKEN}' }])).install('private', { yes: true }));
    expect(wrong).toMatchObject({ code: 'PLN_E_MARKET_REGISTRY_RESPONSE', details: expect.objectContaining({ status: 401, tokenSent: true }) as unknown });
    expect(JSON.stringify(wrong.toJSON())).not.toContain('not-the-token');
  });
});

describe('what install takes', () => {
  it('a URL it does not fetch from, an archive without its SHA-256, or no name is refused with the sources it takes, before any lock or request', async () => {
    const watcher = await recordingServer({ answer: (_req, res) => (res.writeHead(404).end(), true) });
    closers.push(() => watcher.close());
    const market = await host([{ name: 'local', url: watcher.url }]);
    for (const spec of ['ftp://example.test/o/r', 'github:o/r', 'Not A Name']) {
      const error = await rejection(market.install(spec, { yes: true }));
      expect(error.code, spec).toBe('PLN_E_MARKET_SOURCE');
      expect(error.message).toContain('name@range');
      expect(error.message).toContain('.tgz');
    }
    // An archive is fetched only with its digest pinned.
    const unpinned = await rejection(market.install(`${watcher.url}x/-/x-1.0.0.tgz`, { yes: true }));
    expect(unpinned).toMatchObject({ code: 'PLN_E_MARKET_SOURCE', message: expect.stringContaining('SHA-256 pinned') as unknown });
    expect(watcher.seen).toEqual([]);
  });
});
