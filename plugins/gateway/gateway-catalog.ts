/**
 * The catalog every session of one gateway shares: the served tables (see
 * catalog.ts), cached until an upstream list changes, and the routing of a
 * resource URI to its server (a listed URI, a shadowed one, or the first
 * template that matches).
 */
import { UriTemplate, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { McpService, McpTool } from 'plinth/sdk';
import {
  type Collision,
  type ServedPrompt,
  type ServedResource,
  type ServedTemplate,
  parseShadowedUri,
  promptTable,
  resourceTable,
  templateTable,
  toolTable,
} from './catalog.js';

type List = 'tools' | 'resources' | 'prompts';

export class Catalog {
  readonly #mcp: McpService;
  #tools: { tools: Map<string, McpTool>; collisions: Collision[] } | undefined;
  #resources: Promise<Map<string, ServedResource>> | undefined;
  #templates: Promise<ServedTemplate[]> | undefined;
  #prompts: Promise<{ prompts: Map<string, ServedPrompt>; collisions: Collision[] }> | undefined;
  #promptCollisions: Collision[] = [];
  /** Sessions subscribed to the status resource. */
  readonly statusWatchers = new Set<{ server: { sendResourceUpdated(p: { uri: string }): Promise<void> } }>();

  constructor(mcp: McpService) {
    this.#mcp = mcp;
  }

  /** Forgets a cached list (an upstream change). */
  invalidate(list: List): void {
    if (list === 'tools') this.#tools = undefined;
    if (list === 'resources') {
      this.#resources = undefined;
      this.#templates = undefined;
    }
    if (list === 'prompts') this.#prompts = undefined;
  }

  tools(): { tools: Map<string, McpTool>; collisions: Collision[] } {
    this.#tools ??= toolTable(this.#mcp);
    return this.#tools;
  }

  resources(): Promise<Map<string, ServedResource>> {
    this.#resources ??= resourceTable(this.#mcp);
    this.#resources.catch(() => (this.#resources = undefined));
    return this.#resources;
  }

  templates(): Promise<ServedTemplate[]> {
    this.#templates ??= templateTable(this.#mcp);
    this.#templates.catch(() => (this.#templates = undefined));
    return this.#templates;
  }

  prompts(): Promise<{ prompts: Map<string, ServedPrompt>; collisions: Collision[] }> {
    this.#prompts ??= promptTable(this.#mcp).then((table) => {
      this.#promptCollisions = table.collisions;
      return table;
    });
    this.#prompts.catch(() => (this.#prompts = undefined));
    return this.#prompts;
  }

  /** Every collision known now (prompts as of their last listing). */
  collisions(): Collision[] {
    return [...this.tools().collisions, ...this.#promptCollisions];
  }

  /** The server and upstream URI of a URI a host asks for. */
  async route(uri: string): Promise<{ server: string; uri: string }> {
    const shadowed = parseShadowedUri(uri);
    if (shadowed) return shadowed;
    const listed = (await this.resources()).get(uri);
    if (listed) return { server: listed.server, uri: listed.upstreamUri };
    for (const template of await this.templates()) {
      if (new UriTemplate(template.uriTemplate).match(uri)) return { server: template.server, uri };
    }
    // A resource listed since the last listing.
    this.invalidate('resources');
    const fresh = (await this.resources()).get(uri);
    if (fresh) return { server: fresh.server, uri: fresh.upstreamUri };
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `PLN_E_GATEWAY_UNKNOWN: no server lists resource ${uri} or a template that matches it (resources/list and resources/templates/list show them)`);
  }

  watchStatus(session: { server: { sendResourceUpdated(p: { uri: string }): Promise<void> } }): void {
    this.statusWatchers.add(session);
  }

  unwatchStatus(session: { server: { sendResourceUpdated(p: { uri: string }): Promise<void> } }): void {
    this.statusWatchers.delete(session);
  }
}
