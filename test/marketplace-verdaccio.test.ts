/**
 * The marketplace against a real npm registry: Verdaccio on 127.0.0.1, plugins published with plain
 * `npm publish` as their authors publish them; and plinth's own `registry serve` read by npm's own
 * client (`npm search`, `npm view`), as a registry described as npm-compatible must be.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { servedRegistry } from './support/market.js';
import { type Verdaccio, startVerdaccio } from './support/verdaccio.js';

let base: string;
let verdaccio: Verdaccio;
let home: Sandbox;

/** A plugin folder as an author publishes it to npm: package.json beside manifest.json. */
async function npmPlugin(name: string, version: string, fields: { description?: string; keywords?: string[] } = {}): Promise<string> {
  const dir = join(base, 'src', `${name}-${version}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version, type: 'module', ...fields }));
  await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name, version, kernel: '^1.0.0', main: './index.ts', ...fields }));
  await writeFile(join(dir, 'index.ts'), `import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup() {} });\n`);
  return dir;
}

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-verdaccio-'));
  verdaccio = await startVerdaccio(base);
  await verdaccio.publish(await npmPlugin('weather-tools', '1.2.0', { description: 'Hourly FORECASTS for the agent', keywords: ['Weather', 'Forecast'] }));
  await verdaccio.publish(await npmPlugin('git-helper', '0.3.1', { description: 'Commits and branches' }));
  await verdaccio.publish(await npmPlugin('lint-rules', '2.0.0', { description: 'More lint rules' }));
  home = await sandbox('plinth-verdaccio-home-');
  await home.settings({ registries: [{ name: 'verdaccio', url: verdaccio.url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
}, 60_000);

afterAll(async () => {
  await verdaccio?.close();
  await home?.remove();
  await rm(base, { recursive: true, force: true });
});

interface Searched {
  hits: Array<{ name: string; version: string; registry: string }>;
  more: boolean;
}

describe('ext search against Verdaccio', () => {
  it('finds a plugin whose search object has no package.version (Verdaccio gives dist-tags), in any letter case', async () => {
    const result = await run(home, ['ext', 'search', 'forecast', '--json']);
    expectExit(result, 0);
    expect(json<Searched>(result).hits).toEqual([expect.objectContaining({ name: 'weather-tools', version: '1.2.0', registry: 'verdaccio' })]);

    const upper = await run(home, ['ext', 'search', 'WEATHER']);
    expectExit(upper, 0);
    expect(upper.stdout).toMatch(/weather-tools\s+1\.2\.0\s+verdaccio\s+Hourly FORECASTS/);
  });

  it('with no text lists every plugin, page by page, and says how to see the next page', async () => {
    const all = await run(home, ['ext', 'search', '--json']);
    expectExit(all, 0);
    expect(json<Searched>(all).hits.map((h) => h.name).sort()).toEqual(['git-helper', 'lint-rules', 'weather-tools']);
    expect(json<Searched>(all).more).toBe(false);

    const first = await run(home, ['ext', 'search', '--limit', '2']);
    expectExit(first, 0);
    expect(first.stderr).toContain('More results: plinth ext search --limit 2 --page 2');
    const second = await run(home, ['ext', 'search', '--limit', '2', '--page', '2', '--json']);
    const names = [...first.stdout.matchAll(/^(\S+)\s+\d/gm)].map((m) => m[1]);
    expect([...names, ...json<Searched>(second).hits.map((h) => h.name)].sort()).toEqual(['git-helper', 'lint-rules', 'weather-tools']);
    expect(json<Searched>(second).more).toBe(false);

    const bad = await run(home, ['ext', 'search', '--page', 'two']);
    expectExit(bad, 2);
    expect(bad.stderr).toContain('--page takes a whole number');
  });

  it('--registry searches that registry instead of the configured ones', async () => {
    const other = await sandbox('plinth-verdaccio-other-');
    try {
      await other.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
      const result = await run(other, ['ext', 'search', 'git', '--registry', verdaccio.url, '--json']);
      expectExit(result, 0);
      expect(json<Searched>(result).hits).toEqual([expect.objectContaining({ name: 'git-helper', version: '0.3.1', registry: 'command-line' })]);
    } finally {
      await other.remove();
    }
  });
});

describe('an npm package that is not a plugin', () => {
  it('published with plain npm publish, install says it is an npm package and not a plinth plugin, not that the download is damaged', async () => {
    const dir = join(base, 'src', 'tiny-lib');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'tiny-lib', version: '1.0.0', main: 'index.js' }));
    await writeFile(join(dir, 'index.js'), 'module.exports = (s) => s.trim();\n');
    await verdaccio.publish(dir);
    const result = await run(home, ['ext', 'install', 'tiny-lib', '--yes', '--json']);
    expectExit(result, 1);
    const error = json<{ error: { code: string; message: string; hint: string } }>(result).error;
    expect(error).toMatchObject({ code: 'PLN_E_TARBALL_NOT_PLUGIN', message: expect.stringContaining('tiny-lib@1.0.0') as unknown });
    expect(error.hint).not.toMatch(/retry|damaged/);
  });
});

describe("plinth registry serve read by npm's own client", () => {
  it('npm search and npm view read its answers', async () => {
    const served = await servedRegistry(base, [{ name: 'served-greeter', version: '1.4.0', description: 'Greets the user', keywords: ['greeting'] }]);
    try {
      const cwd = await mkdtemp(join(base, 'npm-'));
      const env = ['--registry', served.server.url];
      const searched = await verdaccio.npm(['search', 'greeter', '--parseable', ...env], cwd);
      expect(searched.stdout).toMatch(/^served-greeter\tGreets the user\t.*\t1\.4\.0\t/m);
      const viewed = await verdaccio.npm(['view', 'served-greeter', 'version', ...env], cwd);
      expect(viewed.stdout.trim()).toBe('1.4.0');
    } finally {
      await served.server.close();
    }
  });
});
