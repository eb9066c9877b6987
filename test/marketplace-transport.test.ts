/**
 * A builtin transport travels through the marketplace like any plugin: packed
 * by the registry's packer, published, served on 127.0.0.1, installed with
 * `plinth ext install` into a fresh home, and then it is that installed copy
 * (not the builtin) that connects to a real MCP server.
 *
 * The npm packages the transport imports (the MCP SDK, zod) are not the
 * marketplace's to install: the fresh home gets a node_modules link to
 * plinth's own, where an installed plugin's imports are looked up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kernel } from '../kernel/index.js';
import { publishPlugin } from '../registry/publish.js';
import { type RegistryServer, serveRegistry } from '../registry/server.js';
import { ROOT, ensureBuilt, expectExit, run, sandbox } from './support/cli.js';

const HTTP_SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'http-server.mjs');
let base: string;
let registry: RegistryServer;
let mcpServer: ChildProcess;
let mcpUrl: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-market-transport-'));
  await publishPlugin(join(base, 'registry'), join(ROOT, 'plugins', 'transport-http'));
  registry = await serveRegistry(join(base, 'registry'));
  mcpServer = spawn(process.execPath, [HTTP_SERVER, '--name', 'installed'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  mcpServer.stderr!.resume();
  mcpUrl = await new Promise<string>((resolve, reject) => {
    mcpServer.once('exit', (code) => reject(new Error(`the fixture server exited with code ${code} before listening`)));
    createInterface({ input: mcpServer.stdout! }).on('line', (line) => {
      if (line.startsWith('{')) resolve((JSON.parse(line) as { url: string }).url);
    });
  });
}, 120_000);

afterAll(async () => {
  mcpServer?.kill('SIGTERM');
  await registry?.close();
  await rm(base, { recursive: true, force: true });
});

it('transport-http, installed from the registry into a fresh home, is the transport that reaches a real MCP server', async () => {
  const home = await sandbox('plinth-market-transport-home-');
  try {
    await home.settings({ registries: [{ name: 'local', url: registry.url }], mcpServers: { installed: { url: mcpUrl, transport: 'http' } }, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
    await symlink(join(ROOT, 'node_modules'), join(home.home, 'node_modules'), 'dir');
    const installed = await run(home, ['ext', 'install', 'transport-http', '--yes']);
    expectExit(installed, 0);
    expect(installed.stdout).toContain('installed transport-http@');
    await mkdir(home.workspace, { recursive: true });
    const kernel = new Kernel({ home: home.home, workspace: home.workspace, builtin: true, env: {} });
    await kernel.boot();
    try {
      const chosen = kernel.inspect().resolution.plugins.find((c) => c.manifest.name === 'transport-http');
      expect(chosen).toMatchObject({ source: 'user', dir: join(home.home, 'plugins', 'transport-http') });
      expect(kernel.status().find((p) => p.name === 'transport-http')).toMatchObject({ source: 'user', state: expect.stringMatching(/active|lazy/) as string });
      const mcp = await kernel.get('mcp');
      const status = await mcp.start('installed', { retries: 0 });
      expect(status.error).toBeUndefined();
      expect(status).toMatchObject({ state: 'connected', transport: 'http' });
      const tool = mcp.tools().find((t) => t.server === 'installed' && t.tool === 'echo');
      const result = await mcp.callTool(tool!.name, { text: 'through the installed transport' });
      expect(result).toMatchObject({ ok: true });
      expect(result.text).toContain('through the installed transport');
    } finally {
      await kernel.shutdown();
    }
  } finally {
    await home.remove();
  }
}, 120_000);
