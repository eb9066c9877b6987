/**
 * Plugins and registries for the marketplace tests: small plugin folders
 * written on the spot, published with `registry/publish.ts` into a registry
 * folder that `registry/server.ts` serves on 127.0.0.1.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { publishPlugin } from '../../registry/publish.js';
import { type RegistryServer, serveRegistry } from '../../registry/server.js';
import type { SigningKey } from '../../registry/signing.js';

export interface FixturePlugin {
  name: string;
  version: string;
  /** What its `greeting` service answers; default `<name>@<version>`. */
  greeting?: string;
  /** Its setup throws: the version does not load. */
  broken?: boolean;
  dependencies?: Record<string, string>;
  kernel?: string;
  description?: string;
  keywords?: string[];
  hooks?: Record<string, unknown>;
  mcpServers?: Record<string, unknown>;
  /** The manifest's `permissions`. */
  permissions?: Record<string, unknown>;
  /** Extra files (path → content). */
  files?: Record<string, string | Buffer>;
}

/** Writes a plugin folder that provides the service `greeting:<name>` (a function answering its greeting). */
export async function writePlugin(base: string, plugin: FixturePlugin): Promise<string> {
  const dir = join(base, `${plugin.name.replace('/', '+')}-${plugin.version}-${Math.random().toString(36).slice(2, 8)}`);
  await mkdir(dir, { recursive: true });
  const manifest = {
    name: plugin.name,
    version: plugin.version,
    description: plugin.description ?? `the ${plugin.name} fixture`,
    keywords: plugin.keywords ?? [],
    kernel: plugin.kernel ?? '^1.0.0',
    main: './index.ts',
    provides: [`greeting:${plugin.name}`],
    dependencies: plugin.dependencies ?? {},
    ...(plugin.hooks && { hooks: plugin.hooks }),
    ...(plugin.mcpServers && { mcpServers: plugin.mcpServers }),
    ...(plugin.permissions && { permissions: plugin.permissions }),
  };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  const greeting = JSON.stringify(plugin.greeting ?? `${plugin.name}@${plugin.version}`);
  const body = plugin.broken ? `throw new Error('this version is broken');` : `kernel.provide(${JSON.stringify(`greeting:${plugin.name}`)} as never, (() => ${greeting}) as never);`;
  await writeFile(join(dir, 'index.ts'), `import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup(kernel) { ${body} } });\n`);
  for (const [path, content] of Object.entries(plugin.files ?? {})) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

/** A registry folder with `plugins` published, served on 127.0.0.1. */
export async function servedRegistry(base: string, plugins: readonly FixturePlugin[], options: { token?: string; baseUrl?: string; signingKey?: SigningKey } = {}): Promise<{ folder: string; server: RegistryServer; publish: (plugin: FixturePlugin) => Promise<void> }> {
  const folder = join(base, `registry-${Math.random().toString(36).slice(2, 8)}`);
  const sources = join(base, 'sources');
  const publish = async (plugin: FixturePlugin) => {
    await publishPlugin(folder, await writePlugin(sources, plugin), { ...(options.baseUrl !== undefined && { baseUrl: options.baseUrl }), ...(options.signingKey && { signingKey: options.signingKey }) });
  };
  for (const plugin of plugins) await publish(plugin);
  await mkdir(folder, { recursive: true });
  const server = await serveRegistry(folder, options.token === undefined ? {} : { token: options.token });
  return { folder, server, publish };
}

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly authorization?: string;
  readonly ifNoneMatch?: string;
  readonly accept?: string;
  status?: number;
}

/**
 * A real HTTP server on 127.0.0.1 in front of `target` (or answering itself
 * with `answer`): it records every request it sees, with its Authorization
 * and If-None-Match headers and the status sent back.
 */
export async function recordingServer(options: { target?: string; answer?: (req: IncomingMessage, res: ServerResponse) => boolean }): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const entry: Seen = { method: req.method ?? 'GET', url: req.url ?? '/', ...(req.headers.authorization && { authorization: req.headers.authorization }), ...(req.headers['if-none-match'] && { ifNoneMatch: String(req.headers['if-none-match']) }), ...(req.headers.accept && { accept: req.headers.accept }) };
    seen.push(entry);
    if (options.answer?.(req, res)) {
      entry.status = res.statusCode;
      return;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection')) as Record<string, string>;
    fetch(new URL(req.url ?? '/', options.target), { headers, redirect: 'manual' })
      .then(async (response) => {
        entry.status = response.status;
        const body = Buffer.from(await response.arrayBuffer());
        const out: Record<string, string> = {};
        response.headers.forEach((value, key) => {
          if (key !== 'content-encoding' && key !== 'transfer-encoding' && key !== 'connection') out[key] = value;
        });
        res.writeHead(response.status, { ...out, 'content-length': String(body.length) });
        res.end(body);
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    seen,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
