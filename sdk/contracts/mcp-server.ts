/**
 * A configured MCP server, as the mcp plugin, every transport (plinth's or a
 * third party's) and the oauth plugin see it: one `mcpServers.<name>` entry as
 * written (checked by {@link mcpServerEntrySchema}: an unknown key is an error, so a
 * typo such as `comand` does not start nothing silently), and the definition
 * the mcp plugin normalises it into.
 *
 * ```json
 * "mcpServers": {
 *   "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspace}"] },
 *   "search": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer ${env:SEARCH_TOKEN}" } }
 * }
 * ```
 */
import { z } from 'zod';
import type { PinnedFile, TrustSource } from './trust.js';
import { type PermissionsInput, type Principal, permissionsSchema } from './sandbox.js';

/**
 * One server as written under `mcpServers.<name>` in settings or a manifest: the
 * shape people paste between MCP hosts, plus plinth's fields.
 */
export interface McpServerConfig {
  /**
   * Local server: the program and its arguments (stdio). `${workspace}` in an argument is the
   * workspace root; a user entry's relative paths are the user folder's (internal/permissions/workspace-content.ts).
   */
  command?: string;
  args?: string[];
  /** Values may reference `${env:NAME}` and `${setting:plugin.name}`; resolved values are treated as secrets. */
  env?: Record<string, string>;
  /** Default: the workspace root (workspace settings), the user folder (user settings), the plugin folder (manifests). May start with `${workspace}`. */
  cwd?: string;
  /** Remote server. */
  url?: string;
  headers?: Record<string, string>;
  /** `stdio`, `http` (streamable HTTP), `sse`, or a third-party transport's name. Default: `stdio` with `command`; with `url`, `http` falling back to `sse`. */
  transport?: string;
  /** Connection timeout in ms (default 10000). */
  timeout?: number;
  enabled?: boolean;
  includeTools?: string[];
  excludeTools?: string[];
  /** OAuth settings, read by the oauth plugin. */
  oauth?: Record<string, unknown> | boolean;
  /** Whether the gateway (`plinth serve`) shows this server's tools and prompts as `<server>__<name>` (default) or under their own names (`false`). */
  prefix?: boolean;
  /** What a server from settings may reach when confined (sdk/contracts/sandbox.ts); a plugin's servers have the plugin's manifest `permissions`. */
  permissions?: PermissionsInput;
  /**
   * The MCP protocol era to speak (see {@link McpProtocolSetting}); default: the mcp plugin's
   * `protocol` setting.
   */
  protocol?: McpProtocolSetting;
}

/**
 * How the client finds a server's protocol era: `auto` (ask with `server/discover`,
 * fall back to `initialize`, remember the verdict), `legacy` (the 2025 `initialize`
 * handshake, nothing else), or a pinned modern revision (`"2026-07-28"`: that
 * revision or a coded failure, no fallback).
 */
export type McpProtocolSetting = 'auto' | 'legacy' | McpModernRevision;

/** The modern (stateless, 2026-07-28 and later) revisions plinth's SDK speaks: the values a pin may name. */
export const MCP_MODERN_REVISIONS = ['2026-07-28'] as const;
/** One of {@link MCP_MODERN_REVISIONS}: a revision a server's `protocol` setting may pin. */
export type McpModernRevision = (typeof MCP_MODERN_REVISIONS)[number];

const PROTOCOL_EXPECTED = `expected "auto", "legacy" or a modern revision to pin (${MCP_MODERN_REVISIONS.map((r) => `"${r}"`).join(', ')})`;

/** A `protocol` value (a server's, or the mcp plugin's default), checked. */
export const mcpProtocolSchema = z
  .string({ error: PROTOCOL_EXPECTED })
  .refine((value): value is McpProtocolSetting => value === 'auto' || value === 'legacy' || (MCP_MODERN_REVISIONS as readonly string[]).includes(value), {
    error: (issue) =>
      typeof issue.input === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(issue.input)
        ? `${PROTOCOL_EXPECTED}: ${issue.input} is not a modern revision plinth speaks (2025 revisions are reached with "legacy" or "auto")`
        : PROTOCOL_EXPECTED,
  })
  .transform((value) => value as McpProtocolSetting);

/** A server once normalised. */
export interface McpServerDefinition {
  /** Unique; letters, digits, `-` and `_`, never `__` (it separates server and tool in tool names). */
  readonly name: string;
  /** The transport to ask for; `auto` means streamable HTTP, then SSE when the server answers as an old one. */
  readonly transport: string;
  readonly command?: string;
  readonly args: readonly string[];
  /** Resolved values. */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute. */
  readonly cwd: string;
  readonly url?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly connectTimeoutMs: number;
  readonly enabled: boolean;
  readonly includeTools?: readonly string[];
  readonly excludeTools?: readonly string[];
  readonly oauth?: Record<string, unknown> | boolean;
  /** `false`: the gateway serves this server's tools and prompts under their own names, not `<server>__<name>`. */
  readonly prefix?: boolean;
  /** The era setting written in its entry; undefined: the mcp plugin's `protocol` setting applies. */
  readonly protocol?: McpProtocolSetting;
  /** Where it was defined: decides whether it needs approval (workspace servers do, through the trust plugin). */
  readonly source: TrustSource;
  /** `file#json.path` or the manifest that declared it. */
  readonly origin: string;
  readonly plugin?: string;
  /** Resolved env and header values that must never be shown (the kernel's redactor learns them). */
  readonly secrets: readonly string[];
  /** Whom its process acts for (a stdio server): the declaring plugin, or the settings scope with the entry's `permissions`. */
  readonly actingFor?: Principal;
  /** Set by the MCP plugin after the trust check (the verdict's `pinned`): the files the launch must run exactly as approved. */
  readonly pinned?: readonly PinnedFile[];
}

const MAX_TIMER_MS = 2_147_483_647;

/** Server names become tool-name prefixes (`<server>__<tool>`) and command-line words. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** A transport's name: the service asked for is `transport:<name>`. */
export const MCP_TRANSPORT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** Spellings other MCP hosts use for `type`, mapped to plinth's transport names. */
const TYPE_ALIASES: Readonly<Record<string, string>> = { stdio: 'stdio', sse: 'sse', http: 'http', 'streamable-http': 'http', streamableHttp: 'http' };

const stringRecord = (what: string) =>
  z.record(z.string(), z.string({ error: `expected each ${what} value as a string` }), { error: `expected an object of ${what} names to string values` });

const toolList = z.array(z.string({ error: 'expected tool names as strings' }).min(1, { error: 'expected a non-empty tool name' }), {
  error: 'expected a list of tool names',
});

/** One entry under `mcpServers`, as written. Unknown keys are errors. */
export const mcpServerEntrySchema = z
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
      .regex(MCP_TRANSPORT_NAME, { error: 'expected a transport name of lowercase letters, digits and "-", e.g. "stdio", "http", "sse"' })
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
    prefix: z.boolean({ error: 'expected true (tools as <server>__<tool>, the default) or false (tools under their own names, in `plinth serve`)' }).optional(),
    permissions: permissionsSchema.optional(),
    protocol: mcpProtocolSchema.optional(),
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
export type McpServerEntry = z.infer<typeof mcpServerEntrySchema>;

/** `transport`, or `type` mapped to a transport name. */
export function mcpEntryTransport(entry: Pick<McpServerEntry, 'transport' | 'type'>): string | undefined {
  return entry.transport ?? (entry.type !== undefined ? TYPE_ALIASES[entry.type] : undefined);
}
