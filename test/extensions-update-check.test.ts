/**
 * The optional update check under `plinth up` (the extensions plugin's
 * `updateCheck`, off by default): once serving, it asks the marketplace which
 * installed plugins have newer versions and prints one line each; it never
 * updates by itself. Real registry server on 127.0.0.1, real install.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { servedRegistry } from './support/market.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-update-check-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function host(url: string, extensions: Record<string, unknown>, more: Record<string, unknown> = {}): Promise<TestKernel> {
  const kernel = await createTestKernel({
    builtin: true,
    settings: { registries: [{ name: 'local', url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, extensions: { settings: { hotReload: false, ...extensions } }, ...more } },
  });
  closers.push(() => kernel.dispose());
  return kernel;
}

async function until(kernel: TestKernel, part: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const line = kernel.logs.find((l) => l.includes(part));
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no log line with "${part}"; lines: ${kernel.logs.filter((l) => l.includes('update')).join(' | ')}`);
}

describe('the update check under plinth up', () => {
  it('names an installed plugin with a newer version and the command that updates it; it installs nothing', async () => {
    const served = await servedRegistry(base, [
      { name: 'greeter', version: '1.0.0' },
      { name: 'greeter', version: '1.0.4' },
      { name: 'greeter', version: '2.0.0' },
    ]);
    closers.push(() => served.server.close());
    const kernel = await host(served.server.url, { updateCheck: true });
    await (await kernel.get('marketplace')).install('greeter@~1.0.0', { yes: true });
    await kernel.plugins.replace('greeter'); // as a restart would: the version recorded runs
    const before = kernel.status().find((p) => p.name === 'greeter')?.version;

    await kernel.serve();
    const line = await until(kernel, 'update available: greeter');
    expect(line).toContain('greeter 1.0.4 is the newest within ~1.0.0');
    expect(line).toContain('2.0.0 is out of ~1.0.0 (plinth ext update greeter --latest)');
    expect(kernel.status().find((p) => p.name === 'greeter')?.version).toBe(before);
  });

  it('is off by default, and says it was skipped when there is no marketplace', async () => {
    const served = await servedRegistry(base, [{ name: 'greeter', version: '1.0.0' }]);
    closers.push(() => served.server.close());
    const quiet = await host(served.server.url, {});
    await quiet.serve();
    expect(quiet.logs.some((l) => l.includes('update'))).toBe(false);

    const without = await host(served.server.url, { updateCheck: true }, { marketplace: { enabled: false } });
    await without.serve();
    expect(await until(without, 'update check skipped')).toContain('PLN_E_SERVICE_MISSING');
  });
});
