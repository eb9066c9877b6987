/**
 * One `mcpServers.<name>` entry as written in a settings file or a plugin
 * manifest, checked strictly: an unknown key is an error (a typo such as
 * `comand` would otherwise start nothing, silently), and every problem names
 * the file and the JSON path.
 *
 * ```json
 * "mcpServers": {
 *   "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] },
 *   "search": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer ${env:SEARCH_TOKEN}" } }
 * }
 * ```
 */
import { closestName, PlinthError } from 'plinth/sdk';
import { z } from 'zod';

const MAX_TIMER_MS = 2_147_483_647;

/** Server names become tool-name prefixes (`<server>__<tool>`) and command-line words. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** A transport's name: the service asked for is `transport:<name>`. */
export const TRANSPORT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** Spellings other MCP hosts use for `type`, mapped to plinth's transport names. */
const TYPE_ALIASES: Readonly<Record<string, string>> = { stdio: 'stdio', sse: 'sse', http: 'http', 'streamable-http': 'http', streamableHttp: 'http' };

const stringRecord = (what: string) =>
  z.record(z.string(), z.string({ error: `expected each ${what} value as a string` }), { error: `expected an object of ${what} names to string values` });

const toolList = z.array(z.string({ error: 'expected tool names as strings' }).min(1, { error: 'expected a non-empty tool name' }), {
  error: 'expected a list of tool names',
});

/** One entry under `mcpServers`, as written. Unknown keys are errors. */
export const serverEntrySchema = z
  .strictObject({
    command: z.string({ error: 'expected the program to run, e.g. "npx"' }).min(1, { error: 'expected the program to run, e.g. "npx"' }).optional(),
    args: z.array(z.string({ error: 'expected each argument as a string' }), { error: 'expected a list of arguments' }).optional(),
    env: stringRecord('environment variable').optional(),
    cwd: z.string({ error: 'expected a folder path' }).min(1, { error: 'expected a folder path' }).optional(),
    url: z
      .string({ error: 'expected the server URL, e.g. "https://example.com/mcp"' })
      .refine((u) => URL.canParse(u), { error: 'expected an absolute URL, e.g. "https://example.com/mcp"' })
      .optional(),
    headers: stringRecord('header').optional(),
    transport: z
      .string({ error: 'expected a transport name: "stdio", "http", "sse" or a transport plugin\'s name' })
      .regex(TRANSPORT_NAME, { error: 'expected a transport name of lowercase letters, digits and "-", e.g. "stdio", "http", "sse"' })
      .optional(),
    /** The name other MCP hosts (`.mcp.json`) give the transport. */
    type: z.enum(Object.keys(TYPE_ALIASES) as [string, ...string[]], { error: `expected one of ${Object.keys(TYPE_ALIASES).join(', ')}` }).optional(),
    timeout: z
      .int({ error: 'expected a connection timeout as a whole number of milliseconds' })
      .positive({ error: 'expected a positive number of milliseconds' })
      .max(MAX_TIMER_MS, { error: `expected at most ${MAX_TIMER_MS} milliseconds` })
      .optional(),
    enabled: z.boolean({ error: 'expected true or false' }).optional(),
    includeTools: toolList.optional(),
    excludeTools: toolList.optional(),
    oauth: z.union([z.boolean(), z.record(z.string(), z.unknown())], { error: 'expected true, false or an object of OAuth settings' }).optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.command !== undefined && entry.url !== undefined) {
      ctx.addIssue({ code: 'custom', path: [], message: 'expected either "command" (a local server) or "url" (a remote server), not both' });
    }
    if (entry.command !== undefined && /\s/.test(entry.command) && !/^(?:\/|[A-Za-z]:[\\/])/.test(entry.command)) {
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'expected one program: put its arguments in "args" (no shell runs the command)' });
    }
    if (entry.type !== undefined && entry.transport !== undefined && TYPE_ALIASES[entry.type] !== entry.transport) {
      ctx.addIssue({ code: 'custom', path: ['type'], message: `"type" says ${entry.type} but "transport" says ${entry.transport}: keep one of them` });
    }
    const transport = entry.transport ?? (entry.type !== undefined ? TYPE_ALIASES[entry.type] : undefined);
    if (transport === 'stdio' && entry.url !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'the stdio transport runs a local program: give "command", not "url"' });
    }
    if ((transport === 'http' || transport === 'sse' || transport === 'auto') && entry.command !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['command'], message: `the ${transport} transport connects to a URL: give "url", not "command"` });
    }
    if (entry.url !== undefined && (transport === undefined || transport === 'http' || transport === 'sse' || transport === 'auto') && !/^https?:\/\//i.test(entry.url)) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'expected an http:// or https:// URL (other schemes need a transport plugin that understands them, named in "transport")' });
    }
  });

/** An entry as written, validated. */
export type ServerEntry = z.infer<typeof serverEntrySchema>;

/** `transport`, or `type` mapped to a transport name. */
export function entryTransport(entry: Pick<ServerEntry, 'transport' | 'type'>): string | undefined {
  return entry.transport ?? (entry.type !== undefined ? TYPE_ALIASES[entry.type] : undefined);
}

/** The transports plinth's own plugins provide (and `auto`), which need a `command` or a `url`. */
const BUILTIN_TRANSPORTS: ReadonlySet<string> = new Set(['stdio', 'http', 'sse', 'auto']);

/**
 * Whether an entry defines a server (replacing an earlier one of its name
 * whole) rather than amending one: it has `command` or `url`, or names a
 * transport plinth does not provide itself, since a third-party transport (an
 * in-process server, say) may need neither. `{ "transport": "sse" }` alone
 * stays an amendment, which is how a profile swaps a transport.
 */
export function definesServer(entry: Pick<ServerEntry, 'command' | 'url' | 'transport'>): boolean {
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

/** Every problem of one entry that failed validation, each at its own JSON path. */
export function entryProblems(error: z.ZodError, where: ProblemPlace, at: string, server: string): PlinthError[] {
  return error.issues.flatMap((issue) => {
    const path = at + issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : pathKey(String(k)))).join('');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => {
        const near = issue.path.length === 0 ? closestName(key, Object.keys(serverEntrySchema.shape)) : undefined;
        return definitionProblem('PLN_E_MCP_SERVER_INVALID', where, `${path}${pathKey(key)}`, `unknown key "${key}"${near ? ` (did you mean "${near}"?)` : ''}`, server);
      });
    }
    return [definitionProblem('PLN_E_MCP_SERVER_INVALID', where, path, issue.message, server)];
  });
}

/** `.key`, or `["odd key"]` when the key is not a plain word. */
export function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

