/**
 * A plugin as people publish it to npm (plain `npm publish` to a real Verdaccio on 127.0.0.1):
 * its plinth metadata (kernel range, plugin dependencies) comes from the manifest in its tarball,
 * never from the packument npm wrote (whose `dependencies` are npm packages); its npm dependencies
 * are installed into its version folder by npm itself, from the registry it came from, before it is
 * moved into place; a failure there leaves the previous version; and `registry pack` gives the same
 * bytes whatever caches a run left, and bundles what `bundleDependencies` names.
 */
import { mkdir, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packPlugin } from '../registry/pack.js';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { type Verdaccio, startVerdaccio } from './support/verdaccio.js';

let base: string;
let verdaccio: Verdaccio;
let home: Sandbox;
const TOKEN_ENV = 'PLINTH_TEST_VERDACCIO_TOKEN';
const env = () => ({ [TOKEN_ENV]: verdaccio.token });

/** A plain npm package (not a plugin). */
async function npmPackage(name: string, version: string): Promise<string> {
  const dir = join(base, 'src', `${name}-${version}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version, type: 'module', main: 'index.js' }));
  await writeFile(join(dir, 'index.js'), `export default function leftpad(text, width) { return String(text).padStart(width, '.'); }\n`);
  return dir;
}

/**
 * A plugin as its author publishes it to npm: package.json (with the npm `dependencies`) beside
 * manifest.json (with the plugin `dependencies` and `kernel`). Its command `<command>` prints the
 * text through h3-leftpad when `pads`.
 */
async function npmPlugin(name: string, version: string, options: { npmDeps?: Record<string, string>; pluginDeps?: Record<string, string>; kernel?: string; command?: string; pads?: boolean; extra?: Record<string, unknown> } = {}): Promise<string> {
  const dir = join(base, 'src', `${name}-${version}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version, type: 'module', ...(options.npmDeps && { dependencies: options.npmDeps }), ...options.extra }));
  const command = options.command ?? name;
  await writeFile(
    join(dir, 'manifest.json'),
    JSON.stringify({ name, version, kernel: options.kernel ?? '^1.0.0', main: './index.ts', activation: 'lazy', commands: { [command]: { summary: 'test command' } }, ...(options.pluginDeps && { dependencies: options.pluginDeps }) }),
  );
  const body = options.pads ? `\`[\${leftpad(args[0] ?? '', 8)}]\`` : `'${name}@${version}'`;
  await writeFile(
    join(dir, 'index.ts'),
    [
      ...(options.pads ? [`import leftpad from 'h3-leftpad';`] : []),
      `import { definePlugin } from 'plinth/sdk';`,
      `export default definePlugin({ setup(kernel) { kernel.hooks.commands.tap((r) => r.add({ name: '${command}', args: [{ name: 'text' }], run({ args, out }) { out.print(${body}); } })); } });`,
      '',
    ].join('\n'),
  );
  return dir;
}

interface Lock {
  plugins: Record<string, { version: string; tree: { files: Record<string, unknown> } }>;
}
const lockOf = async (box: Sandbox): Promise<Lock> => JSON.parse(await readFile(join(box.home, 'plugins.lock.json'), 'utf8')) as Lock;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-npm-deps-'));
  verdaccio = await startVerdaccio(base);
  await verdaccio.publish(await npmPackage('h3-leftpad', '1.0.0'));
  await verdaccio.publish(await npmPlugin('pad-tool', '1.0.0', { npmDeps: { 'h3-leftpad': '^1.0.0' }, pads: true, command: 'pad' }));
  // 1.1.0 needs an npm package the registry does not have.
  await verdaccio.publish(await npmPlugin('pad-tool', '1.1.0', { npmDeps: { 'h3-leftpad': '^1.0.0', 'h3-missing': '^1.0.0' }, pads: true, command: 'pad' }));
  // A plugin dependency declared in the manifest only: npm's packument knows nothing of it.
  await verdaccio.publish(await npmPlugin('pad-user', '1.0.0', { pluginDeps: { 'pad-tool': '~1.0.0' } }));
  await verdaccio.publish(await npmPlugin('future-tool', '1.0.0', { kernel: '^2.0.0' }));
  home = await sandbox('plinth-npm-deps-home-');
  await home.settings({ registries: [{ name: 'verdaccio', url: verdaccio.url, token: `\${env:${TOKEN_ENV}}` }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
}, 60_000);

afterAll(async () => {
  await verdaccio?.close();
  await home?.remove();
  await rm(base, { recursive: true, force: true });
});

describe('a plugin published with plain npm publish', () => {
  it('is installed with its npm dependencies (npm, from its registry), listed in the approval, recorded in its tree, and its code imports them', async () => {
    const refused = await run(home, ['ext', 'install', 'pad-tool@1.0.0'], env());
    expectExit(refused, 1);
    expect(refused.stderr).toContain('npm packages: h3-leftpad@^1.0.0');

    const installed = await run(home, ['ext', 'install', 'pad-tool@1.0.0', '--yes'], env());
    expectExit(installed, 0);
    const lock = await lockOf(home);
    expect(lock.plugins['pad-tool']?.version).toBe('1.0.0');
    // A plugin, not an npm package: h3-leftpad is in the plugin's node_modules, never installed as a plugin.
    expect(lock.plugins['h3-leftpad']).toBeUndefined();
    expect(Object.keys(lock.plugins['pad-tool']!.tree.files)).toContain('node_modules/h3-leftpad/index.js');

    const padded = await run(home, ['pad', 'ab'], env());
    expectExit(padded, 0);
    expect(padded.stdout.trim()).toBe('[......ab]');

    const verified = await run(home, ['ext', 'verify', 'pad-tool', '--json'], env());
    expectExit(verified, 0);
  });

  it('an update whose npm dependency the registry does not have fails at the npm step and leaves the previous version in place', async () => {
    const updated = await run(home, ['ext', 'install', 'pad-tool@1.1.0', '--yes', '--json'], env());
    expectExit(updated, 1);
    expect(json<{ error: { code: string; details: { step: string } } }>(updated).error).toMatchObject({ code: 'PLN_E_MARKET_NPM', details: { step: 'npm' } });
    expect((await lockOf(home)).plugins['pad-tool']?.version).toBe('1.0.0');
    expect(await readlink(join(home.home, 'plugins', 'pad-tool'))).toContain('pad-tool@1.0.0');
    const padded = await run(home, ['pad', 'cd'], env());
    expectExit(padded, 0);
    expect(padded.stdout.trim()).toBe('[......cd]');
  });

  it("resolves the plugin dependencies its manifest declares (the packument lists none)", async () => {
    const box = await sandbox('plinth-npm-deps-user-');
    try {
      await box.settings({ registries: [{ name: 'verdaccio', url: verdaccio.url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
      const installed = await run(box, ['ext', 'install', 'pad-user', '--yes'], env());
      expectExit(installed, 0);
      const lock = await lockOf(box);
      expect(lock.plugins['pad-tool']?.version).toBe('1.0.0');
      expect(lock.plugins['pad-user']?.version).toBe('1.0.0');
      const ran = await run(box, ['pad-user'], env());
      expectExit(ran, 0);
      expect(ran.stdout.trim()).toBe('pad-user@1.0.0');
    } finally {
      await box.remove();
    }
  });

  it("refuses, before anything is placed, a version whose manifest needs another kernel (the packument did not say)", async () => {
    const refused = await run(home, ['ext', 'install', 'future-tool', '--yes', '--json'], env());
    expectExit(refused, 1);
    expect(json<{ error: { code: string; details: { step: string; kernel: string } } }>(refused).error).toMatchObject({ code: 'PLN_E_MARKET_KERNEL', details: { step: 'validate', kernel: '^2.0.0' } });
    expect((await lockOf(home)).plugins['future-tool']).toBeUndefined();
    await expect(readlink(join(home.home, 'plugins', 'future-tool'))).rejects.toThrow();
  });
});

describe('registry pack', () => {
  it('gives the same bytes with or without the caches a run leaves (__pycache__, *.pyc)', async () => {
    const dir = await npmPlugin('cache-pack', '1.0.0');
    await writeFile(join(dir, 'tool.py'), 'print("hi")\n');
    const clean = await packPlugin(dir);
    await mkdir(join(dir, '__pycache__'), { recursive: true });
    await writeFile(join(dir, '__pycache__', 'tool.cpython-312.pyc'), Buffer.from([0x42, 0x0d, 0x0d, 0x0a, 1, 2, 3]));
    await writeFile(join(dir, 'tool.pyc'), 'compiled');
    const after = await packPlugin(dir);
    expect(after.files).toEqual(clean.files);
    expect(after.bytes.equals(clean.bytes)).toBe(true);
  });

  it('bundles the npm packages bundleDependencies names, and an install keeps them without npm or a registry', async () => {
    const dir = await npmPlugin('pad-bundled', '1.0.0', { npmDeps: { 'h3-leftpad': '^1.0.0' }, pads: true, command: 'padb', extra: { bundleDependencies: ['h3-leftpad'] } });
    // As `npm install` leaves it in the author's folder.
    await mkdir(join(dir, 'node_modules', 'h3-leftpad'), { recursive: true });
    for (const file of ['package.json', 'index.js']) await writeFile(join(dir, 'node_modules', 'h3-leftpad', file), await readFile(join(base, 'src', 'h3-leftpad-1.0.0', file)));
    await mkdir(join(dir, 'node_modules', '.bin'), { recursive: true });
    await writeFile(join(dir, 'node_modules', '.package-lock.json'), '{}');
    const packed = await packPlugin(dir);
    expect(packed.files).toEqual(expect.arrayContaining(['node_modules/h3-leftpad/index.js', 'node_modules/h3-leftpad/package.json']));
    expect(packed.files.filter((f) => f.startsWith('node_modules/'))).toHaveLength(2);
    const file = join(base, 'pad-bundled-1.0.0.tgz');
    await writeFile(file, packed.bytes);

    // No registry configured but plinth's embedded folder: npm has nowhere to install from, and needs not.
    const box = await sandbox('plinth-npm-deps-bundled-');
    try {
      await box.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
      const installed = await run(box, ['ext', 'install', file, '--yes']);
      expectExit(installed, 0);
      const ran = await run(box, ['padb', 'x']);
      expectExit(ran, 0);
      expect(ran.stdout.trim()).toBe('[.......x]');
    } finally {
      await box.remove();
    }
  });
});
