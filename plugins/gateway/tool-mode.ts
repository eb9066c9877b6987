/**
 * The gateway's tool mode (setting `toolMode`). `all`: every served tool is
 * listed. `search`: `tools/list` lists the pinned tools (`pinnedTools`, served
 * names or globs) and two tools of the gateway's own — `search_tools`, which
 * answers with the matching tools' full definitions (the mcp service's
 * `searchTools`), and `call_tool`, which calls any served tool by name. A call
 * through `call_tool` is the same call as a direct one (session.ts unwraps it
 * before the one call path: argument check, `before_tool`, the call,
 * `after_tool`).
 */
import type { McpService, McpTool } from 'plinth/sdk';
import { globTest } from 'plinth/internal';
import { servedTool } from './catalog.js';
import { CALL_TOOL, DEFAULT_LIMIT, GATEWAY_TOOLS, MAX_LIMIT, SEARCH_TOOL } from './gateway-tools.js';

export { CALL_TOOL, DEFAULT_LIMIT, GATEWAY_TOOLS, MAX_LIMIT, SEARCH_TOOL } from './gateway-tools.js';

/** Which served names are pinned: none for an empty list (globTest would match everything). */
export function pinnedTest(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => false;
  return globTest(patterns);
}

/** The served names pinned now, sorted (a change of this list is a `list_changed`). */
export function pinnedNames(tools: ReadonlyMap<string, McpTool>, pinned: (name: string) => boolean): string[] {
  return [...tools.keys()].filter(pinned).sort();
}

/** A tool result with text only. */
const textResult = (text: string, isError = false) => ({ content: [{ type: 'text' as const, text }], ...(isError && { isError: true }) });

/**
 * `search_tools`: the matching served tools' full definitions, best first, as JSON text (and as
 * `structuredContent` `{ tools }`).
 */
export function searchToolsResult(mcp: McpService, tools: ReadonlyMap<string, McpTool>, args: Record<string, unknown>) {
  const query = args.query;
  if (typeof query !== 'string' || query.trim() === '') return textResult('PLN_E_GATEWAY_BAD_ARGUMENTS: search_tools needs "query", a few words saying what you want to do', true);
  const limit = typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(Math.max(args.limit, 1), MAX_LIMIT) : DEFAULT_LIMIT;
  const servers = Array.isArray(args.servers) ? args.servers.filter((s): s is string => typeof s === 'string') : undefined;
  if (!mcp.searchTools) return textResult('PLN_E_GATEWAY_SEARCH_UNAVAILABLE: this mcp plugin has no tool search; set plugins.gateway.settings.toolMode to "all"', true);
  // The served name of each upstream tool (prefix: false changes it; a shadowed duplicate is not served).
  const served = new Map<string, string>();
  for (const [name, tool] of tools) served.set(tool.name, name);
  const found: Record<string, unknown>[] = [];
  // Ask for a few more than the limit: a hit the gateway does not serve (a collision's loser) is skipped.
  for (const hit of mcp.searchTools(query, { limit: limit + 5, ...(servers && servers.length > 0 && { servers }) })) {
    const name = served.get(hit.tool.name);
    if (name === undefined || tools.get(name)?.server !== hit.tool.server) continue;
    found.push(servedTool(mcp, name, tools.get(name)!));
    if (found.length >= limit) break;
  }
  const structured = { tools: found };
  return { content: [{ type: 'text' as const, text: JSON.stringify(structured) }], structuredContent: structured };
}

/** `call_tool`'s arguments: the served name and the tool's own arguments, or why they are not usable. */
export function unwrapCall(args: Record<string, unknown> | undefined): { name: string; arguments: Record<string, unknown> } | { error: string } {
  const name = args?.name;
  if (typeof name !== 'string' || name === '') return { error: 'PLN_E_GATEWAY_BAD_ARGUMENTS: call_tool needs "name", a tool name search_tools returned' };
  const inner = args?.arguments;
  if (inner !== undefined && (typeof inner !== 'object' || inner === null || Array.isArray(inner))) {
    return { error: `PLN_E_GATEWAY_BAD_ARGUMENTS: call_tool's "arguments" must be an object (the arguments of "${name}", as its input schema describes)` };
  }
  return { name, arguments: (inner as Record<string, unknown> | undefined) ?? {} };
}

/** The text result of an error, for the session. */
export const errorResult = (text: string) => textResult(text, true);

/**
 * What a host that defers tool definitions itself puts in `tools/list`'s `_meta` to have every tool in
 * search mode: `{ "io.plinth/tools": "all" }`. The tools nobody pinned then carry
 * `_meta["io.plinth/deferred"]: true`, for the host to load on demand.
 */
export const LIST_ALL_META = 'io.plinth/tools';
/** Marks, in a `tools/list` that asked for everything, a tool that search mode would not list. */
export const DEFERRED_META = 'io.plinth/deferred';

/**
 * What `tools/list` lists in search mode: the pinned tools, then the gateway's two; with `everything`
 * (the request's `_meta` asked, see {@link LIST_ALL_META}), every served tool, the unpinned ones marked deferred.
 */
export function searchModeList(mcp: McpService, tools: ReadonlyMap<string, McpTool>, pinned: (name: string) => boolean, everything = false): Record<string, unknown>[] {
  const listed = everything
    ? [...tools].map(([name, tool]) => {
        const served = servedTool(mcp, name, tool);
        if (pinned(name)) return served;
        const meta = (served._meta ?? {}) as Record<string, unknown>;
        return { ...served, _meta: { ...meta, [DEFERRED_META]: true } };
      })
    : [...tools].filter(([name]) => pinned(name)).map(([name, tool]) => servedTool(mcp, name, tool));
  return [...listed, ...GATEWAY_TOOLS.map((t) => ({ ...t }))];
}
