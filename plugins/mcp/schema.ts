/**
 * The mcp plugin's reading of `mcpServers` entries: which entry defines a
 * server and which amends one, and problems that name the file and the JSON
 * path. The entry's schema itself is the sdk's (`mcpServerEntrySchema`), since
 * transports and the oauth plugin read the same shape.
 */
import { mcpServerEntrySchema, PlinthError } from 'plinth/sdk';
import { closestName } from 'plinth/internal';
import type { McpServerEntry } from 'plinth/sdk';
import type { z } from 'zod';

/** The transports plinth's own plugins provide (and `auto`), which need a `command` or a `url`. */
const BUILTIN_TRANSPORTS: ReadonlySet<string> = new Set(['stdio', 'http', 'sse', 'auto']);

/**
 * Whether an entry defines a server (replacing an earlier one of its name
 * whole) rather than amending one: it has `command` or `url`, or names a
 * transport plinth does not provide itself, since a third-party transport (an
 * in-process server, say) may need neither. `{ "transport": "sse" }` alone
 * stays an amendment, which is how a profile swaps a transport.
 */
export function definesServer(entry: Pick<McpServerEntry, 'command' | 'url' | 'transport'>): boolean {
  return entry.command !== undefined || entry.url !== undefined || (entry.transport !== undefined && !BUILTIN_TRANSPORTS.has(entry.transport));
}

/** Where a problem was found: the file (or manifest) and, for manifests, the plugin. */
export interface ProblemPlace {
  readonly origin: string;
  readonly plugin?: string;
  readonly source: string;
}

/** Codes of definition problems. */
export type DefinitionCode = 'PLN_E_MCP_SERVER_INVALID' | 'PLN_E_MCP_SERVER_DUPLICATE' | 'PLN_E_MCP_REFERENCE_UNRESOLVED';

const HINTS: Readonly<Record<DefinitionCode, string>> = {
  PLN_E_MCP_SERVER_INVALID: 'correct the entry at the path given; `plinth mcp list` shows every server and problem',
  PLN_E_MCP_SERVER_DUPLICATE: 'rename the server in one of the plugins, or override it by name in your settings',
  PLN_E_MCP_REFERENCE_UNRESOLVED: 'set the environment variable or setting named, or write the value itself; references are ${env:NAME} and ${setting:plugin.name}',
};

/** A PlinthError naming the file and JSON path of a bad definition. */
export function definitionProblem(code: DefinitionCode, where: ProblemPlace, path: string, message: string, server?: string): PlinthError {
  return new PlinthError(code, path === '' ? `${where.origin}: ${message}` : `${where.origin}: ${path}: ${message}`, {
    plugin: where.plugin ?? 'mcp',
    hint: HINTS[code],
    details: { origin: where.origin, path, source: where.source, ...(server !== undefined && { server }) },
  });
}

/** Keys of another host's server entries that plinth spells differently: what to write instead (pasted from Gemini CLI's settings, they are the usual unknown keys). */
const PEER_KEYS: Readonly<Record<string, string>> = {
  httpUrl: 'Gemini CLI\'s streamable HTTP URL: write it as "url", with "transport": "http"',
  trust: 'Gemini CLI\'s "trust" has no counterpart: plinth asks for approval itself, or `plinth trust approve mcp-server <name>`',
};

/** Every problem of one entry that failed validation, each at its own JSON path. */
export function entryProblems(error: z.ZodError, where: ProblemPlace, at: string, server: string): PlinthError[] {
  return error.issues.flatMap((issue) => {
    const path = at + issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : pathKey(String(k)))).join('');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => {
        const peer = issue.path.length === 0 ? PEER_KEYS[key] : undefined;
        const near = issue.path.length === 0 && peer === undefined ? closestName(key, Object.keys(mcpServerEntrySchema.shape)) : undefined;
        return definitionProblem('PLN_E_MCP_SERVER_INVALID', where, `${path}${pathKey(key)}`, `unknown key "${key}"${peer ? ` (${peer})` : near ? ` (did you mean "${near}"?)` : ''}`, server);
      });
    }
    return [definitionProblem('PLN_E_MCP_SERVER_INVALID', where, path, issue.message, server)];
  });
}

/** `.key`, or `["odd key"]` when the key is not a plain word. */
export function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

