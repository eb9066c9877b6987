/**
 * MCP servers in a registry folder: `plinth registry publish-server` adds a
 * `server.json` document, and `plinth registry serve` answers the MCP
 * Registry's read-only API v0.1 from the same folder:
 *
 * - `GET /v0.1/servers?search=&cursor=&limit=&version=latest`: the versions,
 *   sorted by name then version, `search` a case-insensitive part of the name,
 *   title or description, `nextCursor` opaque (the last `name@version` given);
 * - `GET /v0.1/servers/{name}/versions`: every version of one server;
 * - `GET /v0.1/servers/{name}/versions/{version|latest}`: one version.
 *
 * Each version is a file `-/mcp/<name>/<version>.json` (both URI-encoded)
 * holding the API's answer (`{ server, _meta }`), its status under
 * `_meta["io.modelcontextprotocol.registry/official"]`. A published version's
 * `server.json` never changes; its status may (`--status deprecated`).
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import semver from 'semver';
import { PlinthError } from '../sdk/errors.js';
import { writeFileAtomic } from '../sdk/files.js';
import {
  MCP_REGISTRY_API,
  MCP_REGISTRY_OFFICIAL_META,
  type McpServerResponse,
  type McpServerStatus,
  issuePath,
  mcpServerJsonSchema,
  mcpServerResponseSchema,
  statusOf,
} from '../internal/mcp-registry/server-json.js';
import { clampInt, etagOf, parseJson, sendDocument, sendJson } from './http.js';
import { withPublishLock } from './publish.js';

/** Where a registry folder keeps its MCP servers. */
const MCP_FOLDER = ['-', 'mcp'];

export interface PublishServerResult {
  readonly name: string;
  readonly version: string;
  readonly status: McpServerStatus;
  /** `published` (new), `status` (only the status changed), `unchanged`. */
  readonly outcome: 'published' | 'status' | 'unchanged';
  readonly file: string;
}

/**
 * Adds the `server.json` at `file` to the registry folder `root`.
 *
 * @throws PlinthError `PLN_E_REGISTRY_SERVER_JSON` (unreadable or invalid, naming the field),
 *   `PLN_E_REGISTRY_VERSION_EXISTS` (that version is there with another document).
 */
export async function publishServer(root: string, file: string, options: { status?: McpServerStatus; now?: Date } = {}): Promise<PublishServerResult> {
  const text = await readFile(file, 'utf8').catch((cause: unknown) => {
    throw new PlinthError('PLN_E_REGISTRY_SERVER_JSON', `cannot read ${file}`, { cause, hint: 'give the path of a server.json document' });
  });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new PlinthError('PLN_E_REGISTRY_SERVER_JSON', `${file} is not JSON (${(cause as Error).message})`, { hint: 'fix the document and publish again' });
  }
  const parsed = mcpServerJsonSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new PlinthError('PLN_E_REGISTRY_SERVER_JSON', `${file}: ${issuePath(issue.path) || '(document)'}: ${issue.message}`, { hint: 'see the server.json format: https://github.com/modelcontextprotocol/registry/tree/main/docs/reference/server-json', details: { field: issuePath(issue.path) } });
  }
  const server = parsed.data;
  const target = versionFile(root, server.name, server.version);
  if (target === undefined) throw new PlinthError('PLN_E_REGISTRY_SERVER_JSON', `${file}: version: "${server.version}" cannot be stored`, { hint: 'use a semantic version such as 1.2.0' });
  return withPublishLock(root, async () => {
    const now = (options.now ?? new Date()).toISOString();
    const existing = await readVersion(target);
    if (existing) {
      if (JSON.stringify(existing.server) !== JSON.stringify(server)) {
        throw new PlinthError('PLN_E_REGISTRY_VERSION_EXISTS', `${server.name}@${server.version} is already in ${root} with another server.json; a published version never changes`, { hint: 'publish it as a new version (raise "version")', details: { name: server.name, version: server.version } });
      }
      const status = options.status ?? statusOf(existing);
      if (status === statusOf(existing)) return { name: server.name, version: server.version, status, outcome: 'unchanged', file: target };
      const meta = { ...existing._meta?.[MCP_REGISTRY_OFFICIAL_META], status, updatedAt: now };
      await writeFileAtomic(target, `${JSON.stringify({ ...existing, _meta: { ...existing._meta, [MCP_REGISTRY_OFFICIAL_META]: meta } }, null, 2)}\n`);
      return { name: server.name, version: server.version, status, outcome: 'status', file: target };
    }
    const status = options.status ?? 'active';
    await mkdir(dirname(target), { recursive: true });
    const doc = { server, _meta: { [MCP_REGISTRY_OFFICIAL_META]: { status, publishedAt: now, updatedAt: now } } };
    await writeFileAtomic(target, `${JSON.stringify(doc, null, 2)}\n`);
    return { name: server.name, version: server.version, status, outcome: 'published', file: target };
  });
}

function versionFile(root: string, name: string, version: string): string | undefined {
  const v = encodeURIComponent(version);
  if (v === '.' || v === '..' || v === '') return undefined;
  return join(root, ...MCP_FOLDER, encodeURIComponent(name), `${v}.json`);
}

async function readVersion(file: string): Promise<McpServerResponse | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = mcpServerResponseSchema.safeParse(parseJson(text));
  return parsed.success ? parsed.data : undefined;
}

/** Newest first by semver when both are versions, else by publication date. */
function newer(a: McpServerResponse, b: McpServerResponse): number {
  const va = semver.valid(a.server.version);
  const vb = semver.valid(b.server.version);
  if (va && vb) return semver.rcompare(va, vb);
  return String(b._meta?.[MCP_REGISTRY_OFFICIAL_META]?.publishedAt ?? '').localeCompare(String(a._meta?.[MCP_REGISTRY_OFFICIAL_META]?.publishedAt ?? ''));
}

/** Serves the `/v0.1/` API from a registry folder's `-/mcp/`. */
export class McpServersHandler {
  constructor(private readonly root: string) {}

  /** Whether `pathname` is this API's. */
  static handles(pathname: string): boolean {
    return pathname === `/${MCP_REGISTRY_API}/servers` || pathname.startsWith(`/${MCP_REGISTRY_API}/servers/`);
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const rest = url.pathname.slice(`/${MCP_REGISTRY_API}/servers`.length);
    if (rest === '' || rest === '/') return this.list(req, res, url.searchParams);
    // The name holds a "/" (encoded or not): everything up to "/versions".
    const match = /^\/(.+?)\/versions(?:\/([^/]+))?\/?$/.exec(rest);
    if (!match) return sendJson(res, 404, { title: 'Not Found', status: 404, detail: 'no such endpoint' });
    let name: string;
    let version: string | undefined;
    try {
      name = decodeURIComponent(match[1]!);
      version = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    } catch {
      return sendJson(res, 404, { title: 'Not Found', status: 404, detail: 'Server not found' });
    }
    const versions = (await this.versionsOf(name)).sort(newer);
    if (versions.length === 0) return sendJson(res, 404, { title: 'Not Found', status: 404, detail: 'Server not found' });
    if (version === undefined) return this.send(req, res, { servers: versions.map((v) => this.marked(v, versions)), metadata: { count: versions.length } });
    const found = version === 'latest' ? this.latest(versions) : versions.find((v) => v.server.version === version);
    if (!found) return sendJson(res, 404, { title: 'Not Found', status: 404, detail: `Server version ${version} not found` });
    return this.send(req, res, this.marked(found, versions));
  }

  private async list(req: IncomingMessage, res: ServerResponse, params: URLSearchParams): Promise<void> {
    const limit = clampInt(params.get('limit'), 30, 1, 100);
    const search = (params.get('search') ?? '').toLowerCase();
    const onlyLatest = params.get('version') === 'latest';
    const cursor = params.get('cursor') ?? '';
    const names = await readdir(join(this.root, ...MCP_FOLDER)).catch(() => [] as string[]);
    const all: McpServerResponse[] = [];
    for (const encoded of names.sort()) {
      let name: string;
      try {
        name = decodeURIComponent(encoded);
      } catch {
        continue;
      }
      const versions = (await this.versionsOf(name)).sort(newer);
      const picked = onlyLatest ? [this.latest(versions)].filter((v) => v !== undefined) : versions;
      for (const v of picked) {
        const s = v.server;
        if (search !== '' && ![s.name, s.title ?? '', s.description ?? ''].some((t) => t.toLowerCase().includes(search))) continue;
        all.push(this.marked(v, versions));
      }
    }
    const key = (v: McpServerResponse): string => `${v.server.name}@${v.server.version}`;
    const start = cursor === '' ? 0 : all.findIndex((v) => key(v) === cursor) + 1;
    const page = all.slice(start, start + limit);
    const more = start + limit < all.length;
    return this.send(req, res, { servers: page, metadata: { count: page.length, ...(more && { nextCursor: key(page.at(-1)!) }) } });
  }

  /** The version `latest` names: the newest that is not deleted (the newest of all when every one is). */
  private latest(sorted: readonly McpServerResponse[]): McpServerResponse | undefined {
    return sorted.find((v) => statusOf(v) !== 'deleted') ?? sorted[0];
  }

  private marked(v: McpServerResponse, sorted: readonly McpServerResponse[]): McpServerResponse {
    const meta = v._meta?.[MCP_REGISTRY_OFFICIAL_META] ?? { status: 'active' as const };
    return { ...v, _meta: { ...v._meta, [MCP_REGISTRY_OFFICIAL_META]: { ...meta, isLatest: this.latest(sorted) === v } } };
  }

  private async versionsOf(name: string): Promise<McpServerResponse[]> {
    if (!mcpServerJsonSchema.shape.name.safeParse(name).success) return [];
    const folder = join(this.root, ...MCP_FOLDER, encodeURIComponent(name));
    const files = await readdir(folder).catch(() => [] as string[]);
    const out: McpServerResponse[] = [];
    for (const f of files) {
      if (!f.endsWith('.json')) continue;
      const doc = await readVersion(join(folder, f));
      if (doc && doc.server.name === name) out.push(doc);
    }
    return out;
  }

  private send(req: IncomingMessage, res: ServerResponse, value: unknown): void {
    const body = JSON.stringify(value);
    sendDocument(req, res, body, etagOf(body), new Date(), 'application/json; charset=utf-8');
  }
}
