/**
 * `plinth registry serve`: a static registry folder (see publish.ts) over
 * HTTP on 127.0.0.1, speaking what npm clients and plinth's marketplace ask:
 *
 * - `GET /<name>`, `GET /@scope%2fname` (or `/@scope/name`): the packument, its
 *   root-relative tarball URLs made absolute on this server's origin; with
 *   `Accept: application/vnd.npm.install-v1+json`, the abbreviated form;
 * - `GET /<name>/<version or dist-tag>`: one version's document;
 * - `GET /-/<name>-<version>.tgz`: a tarball;
 * - `GET /-/v1/search?text=&size=&from=`: ranked by the sdk's `searchScore`;
 * - `GET /-/npm/v1/keys`: the public keys of `dist.signatures`, when versions are signed;
 * - `GET /-/plinth/index.json`, `revocations.json`, `rotations.json`: the signed documents;
 * - `GET /-/ping`: `{}`;
 * - `GET /v0.1/servers…`: the MCP Registry's API over the MCP servers published with
 *   `plinth registry publish-server` (mcp-servers.ts).
 *
 * Every answer has an `ETag` and `Last-Modified`; `If-None-Match` (or
 * `If-Modified-Since` without it) gets a 304. Errors are JSON `{ error }`.
 * Only names and file names the layout can hold are looked up, and a file is
 * served only when its real path is inside the folder: no `..`, no encoded
 * `..`, no link out. With a token, every request but `/-/ping` needs
 * `Authorization: Bearer <token>`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative, resolve, sep } from 'node:path';
import { PlinthError } from '../sdk/errors.js';
import {
  ABBREVIATED_PACKUMENT_TYPE,
  type AbbreviatedPackument,
  type Packument,
  type PackumentVersion,
  REGISTRY_SEARCH_INDEX,
  SEARCH_TIER,
  packumentFile,
  packumentSchema,
  searchResponseSchema,
} from '../internal/registry/packument.js';
import { clampInt, decodePackagePath, decodeTarballPath, etagOf, notFound, notModified, parseJson, sendDocument, sendJson } from './http.js';
import { SearchIndex } from './search-index.js';
import { McpServersHandler } from './mcp-servers.js';
import { REGISTRY_KEYS_PATH } from '../internal/registry/signatures.js';
import { REGISTRY_INDEX_PATH, REGISTRY_REVOCATIONS_PATH, REGISTRY_ROTATIONS_PATH } from '../internal/registry/trust.js';

const TRUST_DOCUMENTS = new Set([REGISTRY_INDEX_PATH, REGISTRY_REVOCATIONS_PATH, REGISTRY_ROTATIONS_PATH]);

export interface ServeOptions {
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** When set, requests need `Authorization: Bearer <token>`. */
  readonly token?: string;
}

export interface RegistryServer {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** How many prepared packuments the server keeps in memory. */
const MAX_CACHED_PACKUMENTS = 2_000;

/** Fields an abbreviated packument keeps of each version (npm's list, plus plinth's `kernel`). */
const ABBREVIATED_FIELDS = ['name', 'version', 'kernel', 'dependencies', 'optionalDependencies', 'peerDependencies', 'peerDependenciesMeta', 'bundleDependencies', 'engines', 'os', 'cpu', 'deprecated', 'bin', 'directories', 'dist', 'hasInstallScript', '_hasShrinkwrap'] as const;

/**
 * Serves `folder` until `close()`.
 *
 * @throws PlinthError `PLN_E_REGISTRY_FOLDER` when `folder` is not a folder, `PLN_E_REGISTRY_LISTEN`
 *   when the port cannot be bound.
 */
export async function serveRegistry(folder: string, options: ServeOptions = {}): Promise<RegistryServer> {
  const root = await realpath(resolve(folder)).catch((cause: unknown) => {
    throw new PlinthError('PLN_E_REGISTRY_FOLDER', `${resolve(folder)} does not exist`, { cause, hint: 'give a registry folder made by `plinth registry publish <dir> --to <folder>`', details: { folder: resolve(folder) } });
  });
  if (!(await stat(root)).isDirectory()) {
    throw new PlinthError('PLN_E_REGISTRY_FOLDER', `${root} is not a folder`, { hint: 'give a registry folder made by `plinth registry publish <dir> --to <folder>`', details: { folder: root } });
  }
  const host = options.host ?? '127.0.0.1';
  const handler = new RegistryHandler(root, options.token);
  // The search index is read and prepared before the first query, not during it.
  await handler.preload();
  const server = createServer((req, res) => {
    handler.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: `internal error: ${(error as Error).message}` });
      else res.destroy();
    });
  });
  await listen(server, options.port ?? 0, host);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  handler.origin = url;
  return {
    url,
    port,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', (cause) => {
      fail(new PlinthError('PLN_E_REGISTRY_LISTEN', `cannot listen on ${host}:${port} (${(cause as NodeJS.ErrnoException).code ?? cause.message})`, { cause, hint: 'choose another --port, or 0 for a free one', details: { host, port } }));
    });
    server.listen(port, host, () => done());
  });
}

/** A document read from a file, kept until the file changes (same size and mtime). */
interface Cached<T> {
  readonly mtimeMs: number;
  readonly size: number;
  readonly value: T;
}

/** A packument prepared for serving: both forms' bodies and their ETags. */
interface ServedPackument {
  readonly full: { body: string; etag: string };
  readonly abbreviated: { body: string; etag: string };
  /** Each version's document, tarball URL absolute. */
  readonly versions: Readonly<Record<string, PackumentVersion>>;
  readonly distTags: Readonly<Record<string, string>>;
}

class RegistryHandler {
  origin = '';
  private readonly packuments = new Map<string, Cached<ServedPackument>>();
  private index: Cached<SearchIndex> | undefined;
  private readonly mcpServers: McpServersHandler;

  constructor(
    private readonly root: string,
    private readonly token: string | undefined,
  ) {
    this.mcpServers = new McpServersHandler(root);
  }

  async preload(): Promise<void> {
    await this.searchIndex();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return sendJson(res, 405, { error: `${req.method ?? 'this method'} is not supported: the registry is read-only (publish with \`plinth registry publish\`)` });
    }
    const url = new URL(req.url ?? '/', 'http://registry.invalid');
    if (url.pathname === '/-/ping') return sendJson(res, 200, {});
    if (this.token !== undefined && !this.authorized(req)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="plinth registry"');
      return sendJson(res, 401, { error: 'this registry needs a token: send Authorization: Bearer <token>' });
    }
    if (McpServersHandler.handles(url.pathname)) return this.mcpServers.handle(req, res, url);
    if (url.pathname === `/${REGISTRY_SEARCH_INDEX}`) return this.search(req, res, url.searchParams);
    if (url.pathname === `/${REGISTRY_KEYS_PATH}`) return this.keys(req, res);
    if (TRUST_DOCUMENTS.has(url.pathname.slice(1))) return this.trustDocument(req, res, url.pathname.slice(1));
    if (url.pathname.startsWith('/-/')) return this.tarball(req, res, url.pathname.slice(3));
    return this.packument(req, res, url.pathname.slice(1));
  }

  private authorized(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return false;
    const given = createHash('sha256').update(match[1]!).digest();
    const expected = createHash('sha256').update(this.token!).digest();
    return timingSafeEqual(given, expected);
  }

  private async packument(req: IncomingMessage, res: ServerResponse, rawPath: string): Promise<void> {
    const target = decodePackagePath(rawPath);
    if (target === undefined) return notFound(res, 'no such package');
    const { name, selector } = target;
    const file = await this.inside(packumentFile(name));
    const info = file === undefined ? undefined : await stat(file).catch(() => undefined);
    if (!file || !info?.isFile()) return notFound(res, `no package named "${name}"`);
    let cached = this.packuments.get(file);
    if (!cached || cached.mtimeMs !== info.mtimeMs || cached.size !== info.size) {
      const parsed = packumentSchema.safeParse(parseJson(await readFile(file, 'utf8')));
      if (!parsed.success || parsed.data.name !== name) return sendJson(res, 500, { error: `the registry's document for "${name}" is invalid` });
      cached = { mtimeMs: info.mtimeMs, size: info.size, value: this.prepare(parsed.data) };
      this.packuments.delete(file);
      this.packuments.set(file, cached);
      // Keep memory bounded on a large registry: the oldest prepared documents go first.
      if (this.packuments.size > MAX_CACHED_PACKUMENTS) this.packuments.delete(this.packuments.keys().next().value!);
    }
    if (selector !== undefined) {
      // `GET /<name>/<version or dist-tag>`: one version's document, as npm's registry answers it.
      const version = cached.value.distTags[selector] ?? selector;
      const doc = cached.value.versions[version];
      if (doc === undefined) return notFound(res, `"${name}" has no version or dist-tag "${selector}"`);
      const body = JSON.stringify(doc);
      return sendDocument(req, res, body, etagOf(body), info.mtime, 'application/json; charset=utf-8');
    }
    const abbreviated = (req.headers.accept ?? '').includes(ABBREVIATED_PACKUMENT_TYPE);
    const form = abbreviated ? cached.value.abbreviated : cached.value.full;
    res.setHeader('Vary', 'Accept');
    sendDocument(req, res, form.body, form.etag, info.mtime, abbreviated ? `${ABBREVIATED_PACKUMENT_TYPE}; charset=utf-8` : 'application/json; charset=utf-8');
  }

  /** Both forms of a packument, tarball URLs absolute on this server. */
  private prepare(packument: Packument): ServedPackument {
    const versions = Object.fromEntries(
      Object.entries(packument.versions).map(([v, doc]) => [v, { ...doc, dist: { ...doc.dist, tarball: new URL(doc.dist.tarball, this.origin).href } }]),
    );
    const full = JSON.stringify({ ...packument, versions });
    const short: AbbreviatedPackument = {
      name: packument.name,
      ...(packument.time?.modified && { modified: packument.time.modified }),
      'dist-tags': packument['dist-tags'],
      versions: Object.fromEntries(
        Object.entries(versions).map(([v, doc]: [string, Record<string, unknown>]) => [v, Object.fromEntries(ABBREVIATED_FIELDS.filter((k) => doc[k] !== undefined).map((k) => [k, doc[k]])) as AbbreviatedPackument['versions'][string]]),
      ),
    };
    const abbreviated = JSON.stringify(short);
    return { full: { body: full, etag: etagOf(full) }, abbreviated: { body: abbreviated, etag: etagOf(abbreviated) }, versions, distTags: packument['dist-tags'] };
  }

  /** The public keys versions are signed with (`npm audit signatures` reads them); 404 when nothing was signed. */
  private async keys(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const file = await this.inside(REGISTRY_KEYS_PATH);
    const info = file === undefined ? undefined : await stat(file).catch(() => undefined);
    if (!file || !info?.isFile()) return notFound(res, 'this registry signs nothing: it lists no keys');
    const body = await readFile(file, 'utf8');
    sendDocument(req, res, body, etagOf(body), info.mtime, 'application/json; charset=utf-8');
  }

  /** The signed index, revocations and rotations (internal/registry/trust.ts); 404 when the folder has none. */
  private async trustDocument(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const file = await this.inside(path);
    const info = file === undefined ? undefined : await stat(file).catch(() => undefined);
    if (!file || !info?.isFile()) return notFound(res, `this registry publishes no ${path}`);
    const body = await readFile(file, 'utf8');
    sendDocument(req, res, body, etagOf(body), info.mtime, 'application/json; charset=utf-8');
  }

  private async tarball(req: IncomingMessage, res: ServerResponse, rawPath: string): Promise<void> {
    const path = decodeTarballPath(rawPath);
    if (path === undefined) return notFound(res, 'no such tarball');
    const file = await this.inside(`-/${path}`);
    const info = file === undefined ? undefined : await stat(file).catch(() => undefined);
    if (!file || !info?.isFile()) return notFound(res, 'no such tarball');
    // Tarballs never change once published: size and mtime identify the bytes.
    const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', info.mtime.toUTCString());
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    if (notModified(req, etag, info.mtime)) {
      res.statusCode = 304;
      return void res.end();
    }
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Length', info.size);
    if (req.method === 'HEAD') return void res.end();
    await new Promise<void>((done, fail) => {
      const stream = createReadStream(file);
      stream.on('error', fail);
      res.on('close', () => done());
      stream.pipe(res);
    });
  }

  private async search(req: IncomingMessage, res: ServerResponse, params: URLSearchParams): Promise<void> {
    const size = clampInt(params.get('size'), 20, 1, 250);
    const from = clampInt(params.get('from'), 0, 0, Number.MAX_SAFE_INTEGER);
    const text = params.get('text') ?? '';
    const loaded = await this.searchIndex();
    const { results, total } = loaded.index.search(text, size, from);
    const body = JSON.stringify({
      objects: results.map(({ object, score }) => ({
        ...object,
        // npm's own client (`npm search`) reads `maintainers` as a list and `date`; indexes written before carry neither.
        package: { maintainers: [], ...object.package },
        // `final` in [0, 1]; `searchScore` the raw score (exact name > 3, name prefix > 2, text > 1).
        score: { final: Math.min(1, score / (SEARCH_TIER.exact + 1)), detail: { quality: 0, popularity: 0, maintenance: 0 } },
        searchScore: score,
      })),
      total,
      time: new Date(loaded.mtimeMs).toISOString(),
    });
    sendDocument(req, res, body, etagOf(body), new Date(loaded.mtimeMs), 'application/json; charset=utf-8');
  }

  /** The search index, read again when its file changes; an empty one when the folder has none. */
  private async searchIndex(): Promise<{ index: SearchIndex; mtimeMs: number }> {
    const file = join(this.root, REGISTRY_SEARCH_INDEX);
    const info = await stat(file).catch(() => undefined);
    if (!info) return { index: new SearchIndex({ objects: [] }), mtimeMs: 0 };
    if (!this.index || this.index.mtimeMs !== info.mtimeMs || this.index.size !== info.size) {
      const parsed = searchResponseSchema.safeParse(parseJson(await readFile(file, 'utf8')));
      const index = new SearchIndex(parsed.success ? parsed.data : { objects: [] });
      this.index = { mtimeMs: info.mtimeMs, size: info.size, value: index };
    }
    return { index: this.index.value, mtimeMs: this.index.mtimeMs };
  }

  /** The real path of `rel` when it is inside the folder (links followed); undefined otherwise or when missing. */
  private async inside(rel: string): Promise<string | undefined> {
    const real = await realpath(join(this.root, ...rel.split('/'))).catch(() => undefined);
    if (real === undefined) return undefined;
    const r = relative(this.root, real);
    return r !== '' && !r.startsWith(`..${sep}`) && r !== '..' && resolve(this.root, r) === real ? real : undefined;
  }
}
