/**
 * Each builtin plugin's folder stands on its own: it imports no file outside
 * itself but `plinth/sdk` and the packages it names, so a copy of the folder
 * alone, with a generated package.json, packs (`npm pack --offline`), and the
 * remote transports load from such a copy — outside the repository, chosen
 * over the builtin of the same name — and connect to a real MCP server on
 * 127.0.0.1 through it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseSync } from 'vite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestKernel } from '../testing/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const pluginsDir = join(root, 'plugins');
const HTTP_SERVER = join(root, 'test', 'fixtures', 'mcp', 'servers', 'http-server.mjs');
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string>; optionalDependencies?: Record<string, string> };
const run = promisify(execFile);

const scratch = mkdtempSync(join(tmpdir(), 'plinth-packs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/** The packages a plugin folder imports (bare specifiers other than node: modules and plinth itself). */
function importedPackages(dir: string): string[] {
  const names = new Set<string>();
  for (const file of sourceFiles(dir)) {
    const source = readFileSync(file, 'utf8');
    const parsed = parseSync(file, source);
    const specifiers = [
      ...parsed.module.staticImports.map((i) => i.moduleRequest.value),
      ...parsed.module.staticExports.flatMap((e) => e.entries.flatMap((x) => (x.moduleRequest ? [x.moduleRequest.value] : []))),
      ...parsed.module.dynamicImports.flatMap((d) => {
        const literal = /^(['"`])([^'"`$]*)\1$/.exec(source.slice(d.moduleRequest.start, d.moduleRequest.end).trim());
        return literal ? [literal[2]!] : [];
      }),
    ];
    for (const specifier of specifiers) {
      if (specifier.startsWith('.') || specifier.startsWith('node:') || specifier === 'plinth/sdk') continue;
      const parts = specifier.split('/');
      names.add(specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
    }
  }
  return [...names].sort();
}

/**
 * Copies one builtin plugin's folder (nothing else) to `into`/<name> and writes
 * the package.json a publisher would: the manifest's name and version, the
 * packages its code imports at plinth's own ranges, plinth as a peer.
 */
function copyPlugin(name: string, into: string): { dir: string; packages: string[] } {
  const dir = join(into, name);
  cpSync(join(pluginsDir, name), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { name: string; version: string; description?: string };
  const packages = importedPackages(dir);
  const ranges = { ...rootPackage.dependencies, ...rootPackage.optionalDependencies };
  const dependencies = Object.fromEntries(packages.map((pkg) => [pkg, ranges[pkg] ?? '*']));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: `plinth-plugin-${manifest.name}`, version: manifest.version, description: manifest.description, type: 'module', dependencies, peerDependencies: { plinth: `^${rootPackage.version}` } }, null, 2),
  );
  return { dir, packages };
}

/** What `npm install` of the copy's package.json would put in its node_modules: links to the packages plinth has installed. */
function installDependencies(dir: string, packages: readonly string[]): void {
  for (const pkg of packages) {
    const target = join(dir, 'node_modules', pkg);
    mkdirSync(join(target, '..'), { recursive: true });
    symlinkSync(join(root, 'node_modules', pkg), target, 'dir');
  }
}

test('every builtin plugin folder, copied alone with a generated package.json, packs offline', async () => {
  const names = readdirSync(pluginsDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  expect(names).toEqual(expect.arrayContaining(['transport-http', 'transport-sse', 'mcp', 'oauth', 'health', 'hooks', 'trust', 'extensions']));
  const into = join(scratch, 'pack');
  const tarballs = join(scratch, 'tarballs');
  mkdirSync(tarballs, { recursive: true });
  for (const name of names) {
    const { dir } = copyPlugin(name, into);
    const { stdout } = await run('npm', ['pack', '--offline', '--json', '--pack-destination', tarballs], { cwd: dir, env: { ...process.env, npm_config_update_notifier: 'false' } });
    const [packed] = JSON.parse(stdout) as Array<{ name: string; filename: string; files: Array<{ path: string }> }>;
    expect(packed?.name).toBe(`plinth-plugin-${name}`);
    const files = packed!.files.map((f) => f.path);
    expect(files, name).toContain('manifest.json');
    expect(files, name).toContain('package.json');
    // Everything in the folder goes in the tarball; nothing outside it is needed.
    expect(files.sort(), name).toEqual(
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => relative(dir, join(e.parentPath, e.name)))
        .sort(),
    );
  }
}, 120_000);

describe.each(['transport-http', 'transport-sse'])('%s from a copy outside the repository', (plugin) => {
  let server: ChildProcess | undefined;
  let info: { url: string; sse: string };

  beforeAll(async () => {
    server = spawn(process.execPath, [HTTP_SERVER, '--name', 'packed'], { cwd: root, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stderr!.resume();
    const lines = createInterface({ input: server.stdout! });
    info = await new Promise((resolve, reject) => {
      server!.once('exit', (code) => reject(new Error(`the fixture server exited with code ${code} before listening`)));
      lines.on('line', (line) => {
        if (line.startsWith('{')) resolve(JSON.parse(line) as { url: string; sse: string });
      });
    });
  });
  afterAll(() => {
    server?.kill('SIGTERM');
  });

  test('loads from the copy, is chosen over the builtin, and connects to a real server through it', async () => {
    const into = mkdtempSync(join(tmpdir(), 'plinth-packed-'));
    try {
      const { dir, packages } = copyPlugin(plugin, into);
      expect(relative(root, dir).startsWith('..')).toBe(true);
      installDependencies(dir, packages);
      const transport = plugin === 'transport-http' ? 'http' : 'sse';
      const kernel = await createTestKernel({
        builtin: true,
        pluginDirs: [dir],
        settings: {
          mcpServers: { packed: { url: transport === 'http' ? info.url : info.sse, transport } },
          plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } },
        },
      });
      try {
        const mcp = await kernel.get('mcp');
        expect(mcp.problems?.()).toEqual([]);
        const status = await mcp.start('packed', { retries: 0 });
        expect(status.error).toBeUndefined();
        expect(status).toMatchObject({ state: 'connected', transport });
        // The transport that answered is the copy's: one plugin of that name loaded, from the path given.
        const loaded = kernel.status().filter((p) => p.name === plugin && p.state === 'active');
        expect(loaded).toEqual([expect.objectContaining({ source: 'path' })]);
        expect(kernel.inspect().resolution.plugins.filter((c) => c.manifest.name === plugin).map((c) => c.dir)).toEqual([dir]);
        const tool = mcp.tools().find((t) => t.server === 'packed' && t.tool === 'echo');
        expect(tool).toBeDefined();
        const result = await mcp.callTool(tool!.name, { text: `through the packed ${plugin}` });
        expect(result).toMatchObject({ ok: true });
        expect(result.text).toContain(`through the packed ${plugin}`);
      } finally {
        await kernel.dispose();
      }
    } finally {
      rmSync(into, { recursive: true, force: true });
    }
  });
});
