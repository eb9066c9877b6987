/**
 * A server's tools as registry entries: every page of `tools/list`, the
 * server's `includeTools`/`excludeTools` globs applied to the tool's own name,
 * each schema converted, each name namespaced `<server>__<tool>`.
 */
import type { Client, Tool } from '@modelcontextprotocol/client';
import { createRequire } from 'node:module';
import type picomatchModule from 'picomatch';
import type { McpServerDefinition, McpTool } from 'plinth/sdk';
import { convertSchema, schemaDialect } from './schema.js';
import { isModern, requestMeta } from './request-meta.js';
import type { RegisteredTool } from './types.js';
import { xMcpHeaderProblem } from './x-mcp-header.js';

/**
 * picomatch, required at its first use, not when the plugin loads: imported as
 * a module, CommonJS picomatch costs 10 to 20 ms of every command's start.
 */
let loadedPicomatch: typeof picomatchModule | undefined;
function picomatch(): typeof picomatchModule {
  loadedPicomatch ??= createRequire(import.meta.url)('picomatch') as typeof picomatchModule;
  return loadedPicomatch;
}

/** Separates server and tool in a namespaced name; server names never contain it. */
export const NAMESPACE_SEPARATOR = '__';

// A server that keeps sending cursors must not keep us listing forever.
const MAX_PAGES = 1000;

/**
 * Tool names a server may not give: none at all (`<server>__` names nothing),
 * and the keys every plain object inherits, which a host or a model's tool
 * table keyed by name would resolve to `Object.prototype` instead of a tool.
 */
const REFUSED_TOOL_NAMES: ReadonlySet<string> = new Set(['', '__proto__', 'constructor', 'prototype']);

/** Why plinth refuses a tool name, or undefined for one it takes. */
export function refusedToolName(name: string): string | undefined {
  if (!REFUSED_TOOL_NAMES.has(name)) return undefined;
  return name === '' ? 'a tool with an empty name' : `a tool named "${name}" (a key every object inherits)`;
}

/** Every item of a paginated list: follows `nextCursor` until there is none (or it repeats). */
export async function paginate<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: readonly T[]; nextCursor?: string | undefined }>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const result = await fetchPage(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '' || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return items;
}

/** `<server>__<tool>`. */
export function namespacedName(server: string, tool: string): string {
  return `${server}${NAMESPACE_SEPARATOR}${tool}`;
}

/** The server part of a namespaced name, if it has one. */
export function serverOf(name: string): string | undefined {
  const at = name.indexOf(NAMESPACE_SEPARATOR);
  return at > 0 ? name.slice(0, at) : undefined;
}

/** Whether a tool passes the server's `includeTools` (empty or absent: every tool) and `excludeTools` (which wins). */
export function toolFilter(definition: Pick<McpServerDefinition, 'includeTools' | 'excludeTools'>): (tool: string) => boolean {
  const options = { dot: true };
  const include = definition.includeTools?.length ? picomatch()([...definition.includeTools], options) : undefined;
  const exclude = definition.excludeTools?.length ? picomatch()([...definition.excludeTools], options) : undefined;
  return (tool) => (include === undefined || include(tool)) && !(exclude !== undefined && exclude(tool));
}

/**
 * The server's tools, listed page by page and filtered; `timeoutMs` applies to
 * each page. `skipped`: tools listed twice; `refused`: names plinth does not
 * take ({@link refusedToolName}); `badHeaders`, with `headerRules` (a
 * 2026-07-28 server over HTTP): tools whose `x-mcp-header` annotations break
 * the rules (./x-mcp-header.ts); the other tools register either way.
 * `cacheMode` goes to the SDK's response cache for a 2025 server (the first,
 * cursorless request walks every page). A 2026-07-28 server's list is read
 * as sent, uncached, so that the tools the SDK would drop are named: plinth
 * lists tools only at connect and after a change, when a fresh list is due.
 */
export async function listServerTools(
  client: Client,
  definition: McpServerDefinition,
  timeoutMs: number,
  options: { cacheMode?: 'use' | 'refresh' | 'bypass'; headerRules?: boolean } = {},
): Promise<{ tools: RegisteredTool[]; skipped: string[]; refused: string[]; badHeaders: Array<{ tool: string; problem: string }> }> {
  if (!client.getServerCapabilities()?.tools) return { tools: [], skipped: [], refused: [], badHeaders: [] };
  const meta = requestMeta(client);
  const listed = await paginate<Tool>(async (cursor) => {
    const params = { ...(cursor !== undefined && { cursor }), ...(meta && { _meta: meta }) };
    // At 2026-07-28 each page as sent: the SDK's listTools leaves out tools with invalid x-mcp-header annotations
    // with a console line (over any transport but its own stdio class: plinth's stdio too); plinth names them
    // in a coded warning instead, and only where the headers exist (`headerRules`: HTTP).
    const page = isModern(client)
      ? await client.request({ method: 'tools/list', params }, { timeout: timeoutMs })
      : await client.listTools(Object.keys(params).length > 0 ? params : undefined, { timeout: timeoutMs, ...(options.cacheMode !== undefined && { cacheMode: options.cacheMode }) });
    return { items: page.tools, nextCursor: page.nextCursor };
  });
  const allowed = toolFilter(definition);
  const tools: RegisteredTool[] = [];
  const skipped: string[] = [];
  const refused: string[] = [];
  const badHeaders: Array<{ tool: string; problem: string }> = [];
  const names = new Set<string>();
  for (const tool of listed) {
    const refusal = refusedToolName(tool.name);
    if (refusal !== undefined) {
      refused.push(refusal);
      continue;
    }
    const headerProblem = options.headerRules ? xMcpHeaderProblem(tool.inputSchema) : undefined;
    if (headerProblem !== undefined) {
      badHeaders.push({ tool: tool.name, problem: headerProblem });
      continue;
    }
    if (names.has(tool.name)) {
      skipped.push(`${tool.name} (listed twice; the first is kept)`);
      continue;
    }
    names.add(tool.name);
    if (allowed(tool.name)) tools.push(registeredTool(definition.name, tool));
  }
  return { tools, skipped, refused, badHeaders };
}

/** One listed tool as a registry entry. */
export function registeredTool(server: string, tool: Tool): RegisteredTool {
  const title = tool.title ?? tool.annotations?.title;
  const mcpTool: McpTool = {
    name: namespacedName(server, tool.name),
    server,
    tool: tool.name,
    ...(title !== undefined && { title }),
    ...(tool.description !== undefined && { description: tool.description }),
    inputSchema: convertSchema(tool.inputSchema),
    ...(tool.annotations !== undefined && { annotations: tool.annotations }),
  };
  const inputDialect = schemaDialect(tool.inputSchema);
  const outputDialect = schemaDialect(tool.outputSchema);
  return {
    tool: mcpTool,
    listed: tool,
    ...(inputDialect !== undefined && { dialect: inputDialect }),
    ...(tool.outputSchema !== undefined && { outputSchema: convertSchema(tool.outputSchema) }),
    ...(outputDialect !== undefined && { outputDialect }),
    ...(tool.execution?.taskSupport !== undefined && { taskSupport: tool.execution.taskSupport }),
  };
}
