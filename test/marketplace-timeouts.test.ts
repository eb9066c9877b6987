/**
 * `downloadTimeoutMs` bounds each request, its head and its body together, on a timer of plinth's
 * own, and the error says it timed out (not ECONNRESET). A registry that stalls would otherwise hold
 * the test until vitest's own limit: these tests fail by hanging, never by a measured time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { recordingServer, servedRegistry } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-market-timeouts-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function market(url: string) {
  const kernel = await createTestKernel({
    builtin: true,
    settings: { registries: [{ name: 'slow', url }], plugins: { marketplace: { settings: { downloadTimeoutMs: 500 } }, health: { enabled: false }, 'mcp-demo': { enabled: false } } },
  });
  closers.push(() => kernel.dispose());
  return kernel.get('marketplace');
}

describe('downloadTimeoutMs', () => {
  it('a registry that never answers: the install fails, "timed out after 0.5 s"', async () => {
    const silent = await recordingServer({ answer: () => true }); // takes the request, never writes a byte
    closers.push(silent.close);
    const error = await rejection((await market(silent.url)).install('anything', { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_REGISTRY_UNREACHABLE');
    expect(error.message).toContain('timed out after 0.5 s');
    expect(error.message).not.toContain('ECONNRESET');
    expect(error.hint).toContain('downloadTimeoutMs');
  });

  it('a tarball whose body stalls half way: the download fails, "timed out after 0.5 s"', async () => {
    // Documents come from a real registry behind this front; the tarball's head and half its body, then nothing.
    const proxy = {
      target: '',
      answer: (req: { url?: string }, res: import('node:http').ServerResponse) => {
        if (!req.url?.endsWith('.tgz')) return false;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '4096' });
        res.write(Buffer.alloc(2048));
        return true;
      },
    };
    const front = await recordingServer(proxy);
    // The registry names its tarballs on the front's origin, so the download goes through it.
    const { server } = await servedRegistry(base, [{ name: 'stalled', version: '1.0.0' }], { baseUrl: front.url });
    closers.push(() => server.close());
    proxy.target = server.url;
    closers.push(front.close);
    const error = await rejection((await market(front.url)).install('stalled', { yes: true }));
    expect(error.code).toBe('PLN_E_MARKET_REGISTRY_UNREACHABLE');
    expect(error.message).toContain('timed out after 0.5 s');
    expect(error.message).not.toContain('ECONNRESET');
  });
});
