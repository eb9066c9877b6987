/**
 * Claude Code's hook handlers that run no command, as written in its settings shape, read into
 * plinth definitions (run by ../handlers.ts):
 *
 * ```json
 * { "type": "http", "url": "http://localhost:8080/hooks/pre-tool-use", "headers": { "Authorization": "Bearer $MY_TOKEN" }, "allowedEnvVars": ["MY_TOKEN"], "timeout": 30 }
 * { "type": "mcp_tool", "server": "semgrep", "tool": "scan_file", "input": { "path": "${tool_input.file_path}" } }
 * { "type": "prompt", "prompt": "Is this command safe? $ARGUMENTS", "model": "claude-haiku" }
 * { "type": "agent", "prompt": "Check that the tests pass: $ARGUMENTS" }
 * ```
 *
 * Time limits are Claude Code's (seconds; defaults 600 for `http` and `mcp_tool`, 30 for
 * `prompt`, 60 for `agent`). A hook's own `permissions` (plinth's) say what a settings hook may
 * reach: an `http` hook's host (`network`), the variables its headers read (`env`), an
 * `mcp_tool` hook's server (`mcp`).
 */
import { resolve } from 'node:path';
import { permissionsSchema, type PlinthError } from 'plinth/sdk';
import type { PeerProtocol } from 'plinth/internal';
import { z } from 'zod';
import { type Mutable, type SectionOrigin, hookId, problem } from '../definition.js';
import type { HookDefinition } from '../types.js';
import { httpUrl } from '../http-url.js';

/** Default time limits of Claude Code's handler types, in seconds (its hooks reference). */
export const HANDLER_DEFAULT_TIMEOUT_S = { http: 600, mcp_tool: 600, prompt: 30, agent: 60 } as const;

/** The handler types read here. */
export type HandlerType = keyof typeof HANDLER_DEFAULT_TIMEOUT_S;

const MAX_TIMER_MS = 2_147_483_647;

const common = {
  timeout: z.number({ error: 'expected a timeout as a number of seconds' }).positive({ error: 'expected a positive timeout' }).optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  statusMessage: z.string().optional(),
  // Claude Code's fields on every handler type; what plinth does with them is peerHookGaps' (plinth/internal).
  if: z.string({ error: 'expected "if" as a permission rule, e.g. "Bash(git commit *)"' }).optional(),
  once: z.boolean({ error: 'expected true or false' }).optional(),
  // plinth's own, accepted on a peer hook.
  onError: z.enum(['block', 'allow'], { error: 'expected "block" or "allow"' }).optional(),
  enabled: z.boolean({ error: 'expected true or false' }).optional(),
  permissions: permissionsSchema.optional(),
};

const handlerSchemas = {
  http: z.strictObject({
    type: z.literal('http'),
    url: httpUrl,
    headers: z.record(z.string(), z.string({ error: 'expected each header value as a string' }), { error: 'expected "headers" as an object of strings' }).optional(),
    allowedEnvVars: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected a variable name, e.g. "MY_TOKEN" (no "$")' }), { error: 'expected "allowedEnvVars" as a list of variable names' })
      .optional(),
    ...common,
  }),
  mcp_tool: z.strictObject({
    type: z.literal('mcp_tool'),
    server: z.string({ error: 'expected "server": the name of a configured MCP server' }).min(1, { error: 'expected a server name' }),
    tool: z.string({ error: 'expected "tool": the name of a tool of that server' }).min(1, { error: 'expected a tool name' }),
    input: z.record(z.string(), z.unknown(), { error: 'expected "input" as an object of the tool\'s arguments' }).optional(),
    ...common,
  }),
  prompt: z.strictObject({
    type: z.literal('prompt'),
    prompt: z.string({ error: 'expected "prompt": the question to ask the model ($ARGUMENTS is the input document)' }).min(1, { error: 'expected a non-empty prompt' }),
    model: z.string({ error: 'expected "model" as a model name' }).optional(),
    ...common,
  }),
  agent: z.strictObject({
    type: z.literal('agent'),
    prompt: z.string({ error: 'expected "prompt": what the agent checks ($ARGUMENTS is the input document)' }).min(1, { error: 'expected a non-empty prompt' }),
    model: z.string({ error: 'expected "model" as a model name' }).optional(),
    ...common,
  }),
} as const;

/** Whether `raw` names a handler type read here. */
export function handlerTypeOf(raw: unknown): HandlerType | undefined {
  const type = typeof raw === 'object' && raw !== null ? (raw as { type?: unknown }).type : undefined;
  return typeof type === 'string' && Object.hasOwn(HANDLER_DEFAULT_TIMEOUT_S, type) ? (type as HandlerType) : undefined;
}

/** One `http`, `mcp_tool`, `prompt` or `agent` hook of a group, as a definition; or the problems that keep it out. */
export function translateHandlerHook(
  raw: unknown,
  type: HandlerType,
  at: { readonly name: string; readonly key: string; readonly event: HookDefinition['events'][number]; readonly hookAt: string },
  group: { readonly sequential: boolean | undefined; readonly matcher: string | undefined },
  protocol: PeerProtocol,
  where: SectionOrigin,
  notYet: readonly string[],
): { hook?: Mutable<HookDefinition>; problems: PlinthError[] } {
  const parsed = handlerSchemas[type].safeParse(raw);
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((issue) => {
        const path = at.hookAt + issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('') + (issue.code === 'unrecognized_keys' ? `.${issue.keys[0] ?? ''}` : '');
        const message = issue.code === 'unrecognized_keys' ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} in a "${type}" hook` : issue.message;
        return problem('PLN_E_HOOK_INVALID', where, path, message, undefined, at.event);
      }),
    };
  }
  const entry = parsed.data;
  const action: HookDefinition['action'] =
    entry.type === 'http'
      ? { type: 'http', url: entry.url, headers: entry.headers ?? {}, allowedEnvVars: entry.allowedEnvVars ?? [] }
      : entry.type === 'mcp_tool'
        ? { type: 'mcp_tool', server: entry.server, tool: entry.tool, input: entry.input ?? {} }
        : { type: entry.type, prompt: entry.prompt, ...(entry.model !== undefined && { model: entry.model }) };
  const seconds = entry.timeout ?? HANDLER_DEFAULT_TIMEOUT_S[type];
  return {
    problems: [],
    hook: {
      id: hookId(where, at.name),
      name: at.name,
      events: [at.event],
      subscribedAs: [at.key],
      matcher: group.matcher === undefined ? {} : { peer: group.matcher },
      action,
      cwd: resolve(where.projectDir ?? where.baseDir),
      timeoutMs: Math.min(Math.max(Math.round(seconds * 1000), 1), MAX_TIMER_MS),
      priority: 0,
      dependsOn: [],
      parallel: group.sequential !== true,
      rateLimit: {},
      // As for a command: the peer goes on when a hook fails (a non-2xx status, a timeout, a tool error).
      onError: entry.onError ?? 'allow',
      enabled: entry.enabled ?? true,
      persistent: false,
      source: where.source,
      origin: `${where.origin}#${at.hookAt}`,
      ...(where.plugin !== undefined && { plugin: where.plugin }),
      ...(where.version !== undefined && { version: where.version }),
      protocol,
      ...(where.plugin !== undefined && { pluginRoot: resolve(where.baseDir) }),
      ...(entry.permissions !== undefined && { permissions: entry.permissions }),
      ...(notYet.length > 0 && { notYet }),
    },
  };
}
