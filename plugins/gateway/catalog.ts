/**
 * What the gateway serves, and where each name goes: the union of the
 * upstream servers' tools and prompts under the names a host sees
 * (`<server>__<name>`, or the server's own name with `prefix: false`), and
 * their resources and templates with URIs kept.
 *
 * Collisions: a served name two servers claim goes to the first in
 * definition order (at start the gateway refuses to serve at all, see
 * `collisions`); a resource URI two servers list stays the first server's,
 * and the other's copy is served as `plinth://server/<server>?uri=<uri>`;
 * a template two servers list is the first server's.
 */
import type { McpService, McpTool } from 'plinth/sdk';

const SEPARATOR = '__';
/** The gateway's own resources live under this scheme and host. */
export const STATUS_URI = 'plinth://gateway/status';
const SHADOWED_PREFIX = 'plinth://server/';

/** A name two servers claim. */
export interface Collision {
  readonly kind: 'tool' | 'prompt';
  readonly name: string;
  readonly servers: readonly [string, string];
}

/** A resource as served: the downstream URI, and where it comes from. */
export interface ServedResource {
  readonly uri: string;
  readonly server: string;
  readonly upstreamUri: string;
  readonly entry: Readonly<Record<string, unknown>>;
}

/** A resource template as served. */
export interface ServedTemplate {
  readonly server: string;
  readonly uriTemplate: string;
  readonly entry: Readonly<Record<string, unknown>>;
}

/** A prompt as served. */
export interface ServedPrompt {
  readonly name: string;
  readonly server: string;
  readonly prompt: string;
  readonly entry: Readonly<Record<string, unknown>>;
}

/** The served name of one of a server's items. */
export function servedName(service: Pick<McpService, 'definition'>, server: string, name: string): string {
  return service.definition(server)?.prefix === false ? name : `${server}${SEPARATOR}${name}`;
}

/** The shadowed copy of a URI another server already serves. */
export function shadowedUri(server: string, uri: string): string {
  return `${SHADOWED_PREFIX}${encodeURIComponent(server)}?uri=${encodeURIComponent(uri)}`;
}

/** The server and upstream URI of a shadowed URI, or undefined for any other URI. */
export function parseShadowedUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(SHADOWED_PREFIX)) return undefined;
  const rest = uri.slice(SHADOWED_PREFIX.length);
  const at = rest.indexOf('?uri=');
  if (at <= 0) return undefined;
  try {
    return { server: decodeURIComponent(rest.slice(0, at)), uri: decodeURIComponent(rest.slice(at + 5)) };
  } catch {
    return undefined;
  }
}

/** Server order: definition order, so that "the first" is stable and documented. */
function order(service: Pick<McpService, 'servers'>): Map<string, number> {
  return new Map(service.servers().map((s, i) => [s.name, i]));
}

function byServer<T extends { server: string }>(items: readonly T[], rank: Map<string, number>): T[] {
  return [...items].sort((a, b) => (rank.get(a.server) ?? Infinity) - (rank.get(b.server) ?? Infinity));
}

/** Tools by served name (first server wins) and the collisions found. */
export function toolTable(service: Pick<McpService, 'servers' | 'definition' | 'tools'>): { tools: Map<string, McpTool>; collisions: Collision[] } {
  const tools = new Map<string, McpTool>();
  const collisions: Collision[] = [];
  for (const tool of byServer(service.tools(), order(service))) {
    const name = servedName(service, tool.server, tool.tool);
    const taken = tools.get(name);
    if (taken) collisions.push({ kind: 'tool', name, servers: [taken.server, tool.server] });
    else tools.set(name, tool);
  }
  return { tools, collisions };
}

/** Prompts by served name (first server wins) and the collisions found. */
export async function promptTable(service: McpService): Promise<{ prompts: Map<string, ServedPrompt>; collisions: Collision[] }> {
  const prompts = new Map<string, ServedPrompt>();
  const collisions: Collision[] = [];
  for (const prompt of byServer(await service.prompts(), order(service))) {
    const name = servedName(service, prompt.server, prompt.name);
    const taken = prompts.get(name);
    if (taken) collisions.push({ kind: 'prompt', name, servers: [taken.server, prompt.server] });
    else prompts.set(name, { name, server: prompt.server, prompt: prompt.name, entry: withoutServer(prompt) });
  }
  return { prompts, collisions };
}

/** Resources by served URI: the first server keeps a URI, later ones are served shadowed. */
export async function resourceTable(service: McpService): Promise<Map<string, ServedResource>> {
  const resources = new Map<string, ServedResource>();
  for (const resource of byServer(await service.resources(), order(service))) {
    const uri = resources.has(resource.uri) ? shadowedUri(resource.server, resource.uri) : resource.uri;
    resources.set(uri, { uri, server: resource.server, upstreamUri: resource.uri, entry: { ...withoutServer(resource), uri } });
  }
  return resources;
}

/** Templates: the first server's of each template string. */
export async function templateTable(service: McpService): Promise<ServedTemplate[]> {
  const seen = new Set<string>();
  const templates: ServedTemplate[] = [];
  for (const template of byServer(await service.resourceTemplates(), order(service))) {
    if (seen.has(template.uriTemplate)) continue;
    seen.add(template.uriTemplate);
    templates.push({ server: template.server, uriTemplate: template.uriTemplate, entry: withoutServer(template) });
  }
  return templates;
}

/** The tool as the host sees it: the upstream's listing (schemas, annotations, output schema) under the served name. */
export function servedTool(service: Pick<McpService, 'listedTool'>, name: string, tool: McpTool): Record<string, unknown> {
  const listed = service.listedTool?.(tool.name);
  if (listed) return { ...listed, name };
  return {
    name,
    ...(tool.title !== undefined && { title: tool.title }),
    ...(tool.description !== undefined && { description: tool.description }),
    inputSchema: tool.inputSchema,
    ...(tool.annotations !== undefined && { annotations: tool.annotations }),
  };
}

/** Which server a served tool name belongs to when it is not served now (the server is down): `<server>__…`. */
export function serverOfName(service: Pick<McpService, 'definition'>, name: string): string | undefined {
  const at = name.indexOf(SEPARATOR);
  if (at <= 0) return undefined;
  const server = name.slice(0, at);
  return service.definition(server) ? server : undefined;
}

function withoutServer<T extends { server: string }>(item: T): Record<string, unknown> {
  const { server: _server, ...rest } = item;
  return rest;
}

/** How many names of one kind a collision sentence quotes before it says how many more. */
const NAMES_SHOWN = 5;

/**
 * A sentence per pair of servers naming what both serve: `tool "echo" is served by both "a" and
 * "b"`, or for many, `27 tools ("echo", "add", … and 22 more) and 2 prompts (…) are served by both
 * "a" and "b"`. Two servers without the prefix usually share every name, and one line per name
 * would bury the fix.
 */
export function describeCollisions(collisions: readonly Collision[]): string {
  const pairs = new Map<string, { servers: Collision['servers']; kinds: Map<Collision['kind'], string[]> }>();
  for (const c of collisions) {
    const key = `${c.servers[0]}\0${c.servers[1]}`;
    const pair = pairs.get(key) ?? { servers: c.servers, kinds: new Map() };
    pairs.set(key, pair);
    pair.kinds.set(c.kind, [...(pair.kinds.get(c.kind) ?? []), c.name]);
  }
  return [...pairs.values()]
    .map(({ servers, kinds }) => {
      const total = [...kinds.values()].reduce((sum, names) => sum + names.length, 0);
      const what = [...kinds].map(([kind, names]) => namesOf(kind, names)).join(' and ');
      return `${what} ${total === 1 ? 'is' : 'are'} served by both "${servers[0]}" and "${servers[1]}"`;
    })
    .join('; ');
}

function namesOf(kind: Collision['kind'], names: readonly string[]): string {
  if (names.length === 1) return `${kind} "${names[0]}"`;
  const shown = names.slice(0, NAMES_SHOWN).map((name) => `"${name}"`);
  const more = names.length - shown.length;
  return `${names.length} ${kind}s (${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''})`;
}
