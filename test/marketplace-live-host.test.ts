/**
 * `plinth ext install` and `plinth ext update` while `plinth up` runs in
 * another process: the host's watcher (the extensions plugin) sees the link
 * switch in $PLINTH_HOME/plugins and loads the new version without a
 * restart, approved by the install (the trust plugin pins what was approved).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt, expectExit, run, sandbox, start } from './support/cli.js';
import { servedRegistry } from './support/market.js';

const WAIT_MS = 30_000;
let base: string;
beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-market-host-'));
}, 120_000);
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function until(what: string, lines: () => string[], test: (lines: string[]) => boolean): Promise<string[]> {
  const deadline = Date.now() + WAIT_MS;
  while (!test(lines())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; saw:\n${lines().join('\n')}`);
    await new Promise((done) => setTimeout(done, 50));
  }
  return lines();
}

it('a running plinth up picks up an install and an update made by another plinth, without a restart', async () => {
  const { server, publish } = await servedRegistry(base, [{ name: 'greeter', version: '1.0.0' }]);
  const home = await sandbox('plinth-market-host-');
  try {
    await home.settings({ registries: [{ name: 'local', url: server.url }], plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false }, extensions: { settings: { reloadDebounceMs: 100 } } } });
    // The host watches the plugin folders that exist when it starts (the extensions plugin's rule).
    await mkdir(join(home.home, 'plugins'), { recursive: true });
    const host = start(home, ['up']);
    const lines: string[] = [];
    createInterface({ input: host.stderr! }).on('line', (line) => void lines.push(line));
    host.stdout!.resume();
    try {
      await until('plinth is up', () => lines, (l) => l.some((x) => x.includes('plinth is up')));
      expectExit(await run(home, ['ext', 'install', 'greeter', '--yes']), 0);
      await until('the new plugin in the host', () => lines, (l) => l.some((x) => x.includes('greeter@1.0.0')));
      await publish({ name: 'greeter', version: '1.1.0' });
      expectExit(await run(home, ['ext', 'update', 'greeter', '--yes']), 0);
      const seen = await until('the update in the host', () => lines, (l) => l.some((x) => x.includes('greeter@1.1.0')));
      expect(seen.filter((x) => x.includes('greeter'))).toEqual(['plinth: added greeter@1.0.0', 'plinth: reloaded greeter@1.1.0']);
    } finally {
      host.kill('SIGTERM');
      await new Promise((resolve) => host.once('close', resolve));
    }
  } finally {
    await server.close();
    await home.remove();
  }
}, 120_000);
