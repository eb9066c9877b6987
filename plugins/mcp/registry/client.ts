/**
 * The MCP registries a user configured (`mcpRegistries` in the user settings;
 * a workspace file cannot add one) and a client of their read-only API v0.1:
 * list with search and cursors, a server's versions, one version or `latest`.
 * Every answer is checked against the documents' schemas; a problem names the
 * registry and, for an invalid document, the field.
 */
import { type ConfigLayerView, PlinthError } from 'plinth/sdk';
import {
  MCP_REGISTRY_API,
  type McpServerList,
  type McpServerResponse,
  issuePath,
  mcpServerListSchema,
  mcpServerResponseSchema,
} from 'plinth/internal';
import { z } from 'zod';

/** A registry ready to be asked. The token is only ever sent to `url`'s origin, never logged. */
export interface McpRegistry {
  readonly name: string;
  readonly url: URL;
  readonly token?: string;
}

const registrySettingSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" and "-"'),
  url: z.string().regex(/^https?:\/\//, 'an http(s) URL'),
  token: z.string().regex(/^\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$/, 'a reference to an environment variable: "${env:NAME}"').optional(),
}).strict();

const CONFIG_HINT = 'correct "mcpRegistries" in your user settings.json: a list of { "name", "url", "token"?: "${env:NAME}" }, e.g. [{ "name": "official", "url": "https://registry.modelcontextprotocol.io" }]';

/** The user layers' `mcpRegistries` (the last that sets it wins). */
export function configuredMcpRegistries(layers: readonly ConfigLayerView[], env: Readonly<Record<string, string | undefined>>): McpRegistry[] {
  let raw: unknown;
  for (const layer of layers) if (layer.scope === 'user' && layer.settings.mcpRegistries !== undefined) raw = layer.settings.mcpRegistries;
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw configError('"mcpRegistries" must be a list of { "name", "url" }', 'mcpRegistries');
  const seen = new Set<string>();
  return raw.map((item, index) => {
    const parsed = registrySettingSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw configError(`mcpRegistries[${index}].${issuePath(issue.path)}: ${issue.message}`, `mcpRegistries[${index}]`);
    }
    const { name, url, token } = parsed.data;
    if (seen.has(name)) throw configError(`mcpRegistries[${index}]: the name "${name}" is used twice`, `mcpRegistries[${index}].name`);
    seen.add(name);
    const base = new URL(url);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    let value: string | undefined;
    if (token !== undefined) {
      const variable = token.slice('${env:'.length, -1);
      value = env[variable];
      if (value === undefined || value === '') {
        throw new PlinthError('PLN_E_MCP_REGISTRY_CONFIG', `the token of MCP registry "${name}" names the environment variable ${variable}, which is not set`, { plugin: 'mcp', hint: `set ${variable} in the environment plinth runs in, or remove "token" from mcpRegistries[${index}]` });
      }
    }
    return { name, url: base, ...(value !== undefined && { token: value }) };
  });
}

function configError(message: string, path: string): PlinthError {
  return new PlinthError('PLN_E_MCP_REGISTRY_CONFIG', message, { plugin: 'mcp', hint: CONFIG_HINT, details: { path } });
}

export interface RequestOptions {
  /** One request's limit (default 15000 ms). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 15_000;

/** GETs `path` (below `/v0.1/`) of `registry` and checks the answer against `schema`. */
async function get<T>(registry: McpRegistry, path: string, schema: z.ZodType<T>, options: RequestOptions, what: string): Promise<T | undefined> {
  const url = new URL(`${MCP_REGISTRY_API}/${path}`, registry.url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', ...(registry.token !== undefined && { authorization: `Bearer ${registry.token}` }) },
      signal: AbortSignal.any(signals),
      redirect: 'error',
    });
  } catch (cause) {
    const timedOut = (cause as Error).name === 'TimeoutError';
    const reason = timedOut ? `no answer within ${timeoutMs} ms` : ((cause as Error & { cause?: { code?: string } }).cause?.code ?? (cause as Error).message);
    throw new PlinthError('PLN_E_MCP_REGISTRY_UNREACHABLE', `MCP registry "${registry.name}" (${registry.url.origin}) cannot be reached: ${reason}`, {
      plugin: 'mcp',
      hint: options.signal?.aborted ? 'interrupted; run the command again' : `check that the registry is up and its "url" in "mcpRegistries" is right`,
      details: { registry: registry.name },
    });
  }
  if (response.status === 404 && what !== 'list') {
    await response.body?.cancel();
    return undefined;
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    throw new PlinthError('PLN_E_MCP_REGISTRY_UNREACHABLE', `MCP registry "${registry.name}" refused the request (HTTP ${response.status})`, {
      plugin: 'mcp',
      hint: registry.token === undefined ? 'it needs a token: add "token": "${env:NAME}" to its entry in "mcpRegistries"' : 'check the token its "token" names',
      details: { registry: registry.name },
    });
  }
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  let body: unknown;
  try {
    body = response.ok && /json/i.test(type) ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (body === undefined) {
    throw new PlinthError('PLN_E_MCP_REGISTRY_NOT_A_REGISTRY', `${registry.url.href} (MCP registry "${registry.name}") does not answer the MCP Registry API: GET /${MCP_REGISTRY_API}/${path.split('?')[0]} gave HTTP ${response.status}${/json/i.test(type) ? ' with a body that is not JSON' : ` (${type || 'no content type'})`}`, {
      plugin: 'mcp',
      hint: `its "url" must be the registry's root, the one /${MCP_REGISTRY_API}/servers is below (e.g. https://registry.modelcontextprotocol.io)`,
      details: { registry: registry.name, status: response.status },
    });
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issuePath(issue.path);
    throw new PlinthError('PLN_E_MCP_REGISTRY_DOCUMENT', `MCP registry "${registry.name}" sent an invalid document for ${what}: ${field || '(document)'}: ${issue.message}`, {
      plugin: 'mcp',
      hint: 'the registry serves something plinth cannot use; tell its operator, or remove it from "mcpRegistries"',
      details: { registry: registry.name, field },
    });
  }
  return parsed.data;
}

export interface ListQuery {
  readonly search?: string;
  readonly cursor?: string;
  readonly limit?: number;
  /** `latest`: one entry per server. */
  readonly version?: 'latest';
}

/** A list whose entries are checked one by one: an invalid entry is left out, not the whole page. */
const lenientListSchema = mcpServerListSchema.extend({ servers: z.array(z.unknown()) });

/** An entry of a list left out, and why (the field). */
export interface SkippedEntry {
  readonly registry: string;
  readonly index: number;
  readonly problem: string;
}

/** One page of `GET /v0.1/servers`; entries that are not valid documents are in `skipped`. */
export async function listServers(registry: McpRegistry, query: ListQuery, options: RequestOptions = {}): Promise<McpServerList & { skipped: SkippedEntry[] }> {
  const params = new URLSearchParams();
  if (query.search) params.set('search', query.search);
  if (query.cursor) params.set('cursor', query.cursor);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.version) params.set('version', query.version);
  const qs = params.toString();
  const page = (await get(registry, `servers${qs ? `?${qs}` : ''}`, lenientListSchema, options, 'list'))!;
  const servers: McpServerResponse[] = [];
  const skipped: SkippedEntry[] = [];
  page.servers.forEach((entry, index) => {
    const parsed = mcpServerResponseSchema.safeParse(entry);
    if (parsed.success) servers.push(parsed.data);
    else {
      const issue = parsed.error.issues[0]!;
      skipped.push({ registry: registry.name, index, problem: `servers[${index}].${issuePath(issue.path)}: ${issue.message}` });
    }
  });
  return { ...page, servers, skipped };
}

/** Every page of a query (at most `maxPages`, default 20): follows `nextCursor`. */
export async function listAll(registry: McpRegistry, query: Omit<ListQuery, 'cursor'>, options: RequestOptions & { maxPages?: number; skipped?: SkippedEntry[] } = {}): Promise<McpServerResponse[]> {
  const out: McpServerResponse[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (let page = 0; page < (options.maxPages ?? 20); page++) {
    const answer = await listServers(registry, { ...query, ...(cursor !== undefined && { cursor }) }, options);
    out.push(...answer.servers);
    options.skipped?.push(...answer.skipped);
    const next = answer.metadata?.nextCursor ?? undefined;
    if (!next || seen.has(next)) break;
    seen.add(next);
    cursor = next;
  }
  return out;
}

/** Every version of `name`; undefined when the registry does not have it. */
export async function serverVersions(registry: McpRegistry, name: string, options: RequestOptions = {}): Promise<McpServerResponse[] | undefined> {
  return (await get(registry, `servers/${encodeURIComponent(name)}/versions`, mcpServerListSchema, options, `"${name}"`))?.servers;
}

/** One version of `name` (`latest`: the registry's latest); undefined when the registry does not have it. */
export async function serverVersion(registry: McpRegistry, name: string, version: string, options: RequestOptions = {}): Promise<McpServerResponse | undefined> {
  return get(registry, `servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`, mcpServerResponseSchema, options, `"${name}@${version}"`);
}

/** `name@version` → its parts; a bare name asks for `latest`. */
export function parseServerSpec(spec: string): { name: string; version: string } {
  const at = spec.lastIndexOf('@');
  return at > 0 ? { name: spec.slice(0, at), version: spec.slice(at + 1) || 'latest' } : { name: spec, version: 'latest' };
}
