/**
 * The `hooks` section of a settings file or a plugin manifest, and its
 * normalisation into {@link HookDefinition}s. Bad input never throws: every
 * problem is a PlinthError naming the file (or manifest) and the JSON path.
 *
 * ```json
 * "hooks": {
 *   "before_tool": [{ "name": "guard", "command": "node", "args": ["hooks/guard.js"], "matcher": "write_*" }],
 *   "pre-tool-call": [{ "name": "audit", "command": "python3", "args": ["audit.py"], "parallel": true }]
 * }
 * ```
 */
import { isAbsolute, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type picomatchModule from 'picomatch';
import { canonicalEvent, EVENT_ALIASES, EVENTS, PlinthError, permissionsSchema, type EventName, type HookSource as Source } from 'plinth/sdk';
import { closestName, isPeerHookEvent, type PeerProtocol } from 'plinth/internal';
import { z } from 'zod';
import { peerNameOf, peerLabel } from './dialects/events.js';
import { parsePermissionRule } from './dialects/permission-rule.js';
import { sectionPeer, translatePeerEvent } from './dialects/section.js';
import { httpUrl } from './http-url.js';
import type { HookDefinition, HookSource } from './types.js';

/**
 * picomatch, required at its first use, not when the plugin loads: imported as
 * a module, CommonJS picomatch costs 10 to 20 ms of every command's start.
 */
let loadedPicomatch: typeof picomatchModule | undefined;
function picomatch(): typeof picomatchModule {
  loadedPicomatch ??= createRequire(import.meta.url)('picomatch') as typeof picomatchModule;
  return loadedPicomatch;
}

/** Values a definition does not set itself. */
export interface HookDefaults {
  /** The hooks plugin's `timeout` setting (default 5000 ms). */
  readonly timeoutMs: number;
  /** Idle time after which a persistent hook process is closed, for `persistent: true`. */
  readonly idleMs: number;
  /** Sources whose peer-dialect hooks may run a command through `sh -c` (setting `shellCommands`); none by default. */
  readonly shellSources?: readonly Source[];
  /** `~` in a peer hook's command; the user's home folder by default. */
  readonly userHome?: string;
  /** plinth's home: a Claude Code plugin's `${CLAUDE_PLUGIN_DATA}` is `<dataHome>/plugin-data/<plugin>` (left as written without it). */
  readonly dataHome?: string;
}

/** Where a section was read: decides the source, ids, default cwd and what problems name. */
export interface SectionOrigin {
  /** Decided by the caller from where the section was loaded, never from its path. */
  readonly source: HookSource;
  /** The settings file, manifest or legacy file. */
  readonly origin: string;
  /** Default cwd and base of a relative cwd: workspace root, user folder or plugin folder. */
  readonly baseDir: string;
  /** For manifest hooks: ids become `<plugin>/<name>`. */
  readonly plugin?: string;
  /** Sent as the protocol's `metadata.hookVersion` (the plugin's version for manifest hooks). */
  readonly version?: string;
  /** JSON path of the section inside `origin`; default `hooks` (`profiles.ci.hooks` for a profile). */
  readonly path?: string;
  /** The project folder (`$CLAUDE_PROJECT_DIR`, `$GEMINI_PROJECT_DIR`, a peer hook's cwd); `baseDir` when not given. */
  readonly projectDir?: string;
  /** Every peer-shaped group of the section speaks this peer (a peer plugin's manifest, an import). */
  readonly protocol?: PeerProtocol;
}

/** Definitions found, and every problem met on the way. */
export interface HookCollection {
  hooks: HookDefinition[];
  problems: PlinthError[];
}

const MAX_TIMER_MS = 2_147_483_647;
const ms = (what: string) =>
  z
    .int({ error: `expected ${what} as a whole number of milliseconds` })
    .positive({ error: `expected ${what} as a positive number of milliseconds` })
    .max(MAX_TIMER_MS, { error: `expected ${what} of at most ${MAX_TIMER_MS} milliseconds` });

/** Hook names become ids (`user:<name>`, `<plugin>/<name>`) typed on command lines: no spaces, `:` or `/`. */
export const HOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const globList = (what: string) =>
  z.array(z.string({ error: `expected ${what} patterns as strings` }).min(1, { error: `expected a non-empty ${what} pattern` }), {
    error: `expected a list of ${what} patterns`,
  });

/** One definition as written under an event of a `hooks` section. Unknown keys are errors. */
export const hookEntrySchema = z
  .strictObject({
    name: z
      .string({ error: 'expected a name (letters, digits, ".", "_" or "-")' })
      .regex(HOOK_NAME, { error: 'expected a name of letters, digits, ".", "_" or "-", starting with a letter or digit (at most 100)' }),
    command: z.string({ error: 'expected the program to run, e.g. "node"' }).min(1, { error: 'expected the program to run, e.g. "node"' }).optional(),
    args: z.array(z.string({ error: 'expected each argument as a string' }), { error: 'expected a list of arguments' }).optional(),
    prompt: z.string({ error: 'expected a prompt template' }).min(1, { error: 'expected a non-empty prompt template' }).optional(),
    /**
     * What runs: `command` (a process; the default with "command"), `http` ("url"), `mcp_tool`
     * ("server", "tool", "input"), `prompt` / `agent` ("prompt" asked of the host's `model` service);
     * a "prompt" without "type" is the legacy askAgent prompt handed to the host.
     */
    type: z.enum(['command', 'http', 'mcp_tool', 'prompt', 'agent'], { error: 'expected "command", "http", "mcp_tool", "prompt" or "agent"' }).optional(),
    url: httpUrl.optional(),
    headers: z.record(z.string(), z.string({ error: 'expected each header value as a string' }), { error: 'expected "headers" as an object of strings' }).optional(),
    allowedEnvVars: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected a variable name (no "$")' }), { error: 'expected a list of variable names' }).optional(),
    server: z.string({ error: 'expected the name of a configured MCP server' }).min(1).optional(),
    tool: z.string({ error: 'expected the name of a tool of that server' }).min(1).optional(),
    input: z.record(z.string(), z.unknown(), { error: "expected an object of the tool's arguments" }).optional(),
    model: z.string({ error: 'expected a model name' }).optional(),
    maxTurns: z.int({ error: 'expected a whole number of turns' }).positive({ error: 'expected at least 1 turn' }).optional(),
    matcher: z
      .union([z.string().min(1), globList('tool-name')], { error: 'expected a tool-name pattern or a list of them, e.g. "write_*"' })
      .optional(),
    files: globList('file').optional(),
    cwd: z.string({ error: 'expected a folder path' }).min(1, { error: 'expected a folder path' }).optional(),
    timeout: ms('a timeout').optional(),
    priority: z.int({ error: 'expected a whole number (higher runs first)' }).optional(),
    dependsOn: z
      .array(z.string({ error: 'expected hook names or ids' }).min(1, { error: 'expected a hook name or id' }), { error: 'expected a list of hook names or ids' })
      .optional(),
    parallel: z.boolean({ error: 'expected true or false' }).optional(),
    rateLimit: z
      .strictObject(
        {
          perMinute: z.int({ error: 'expected a whole number of runs per minute' }).positive({ error: 'expected at least 1 run per minute' }).optional(),
          cooldownMs: z.int({ error: 'expected a whole number of milliseconds' }).nonnegative({ error: 'expected 0 or more milliseconds' }).optional(),
        },
        { error: 'expected { "perMinute": <runs>, "cooldownMs": <milliseconds> }' },
      )
      .optional(),
    onError: z.enum(['block', 'allow'], { error: 'expected "block" or "allow"' }).optional(),
    enabled: z.boolean({ error: 'expected true or false' }).optional(),
    persistent: z
      .union([z.boolean(), z.strictObject({ idleMs: ms('idleMs') })], { error: 'expected true, false or { "idleMs": <milliseconds> }' })
      .optional(),
    protocol: z.enum(['plinth', 'claude', 'gemini', 'codex'], { error: 'expected "plinth" (the default), "claude", "gemini" or "codex"' }).optional(),
    // Claude Code's handler fields, honoured on any definition (see handlerFields): `if` is checked by parsePermissionRule.
    if: z.string({ error: 'expected "if" as one permission rule, e.g. "Bash(git *)"' }).optional(),
    async: z.boolean({ error: 'expected true or false' }).optional(),
    asyncRewake: z.boolean({ error: 'expected true or false' }).optional(),
    rewakeMessage: z.string({ error: 'expected a message as a string' }).optional(),
    rewakeSummary: z.string({ error: 'expected a summary as a string' }).optional(),
    once: z.boolean({ error: 'expected true or false' }).optional(),
    statusMessage: z.string({ error: 'expected a message as a string' }).optional(),
    /** What a hook from settings may reach when confined (sdk/contracts/sandbox.ts); a plugin's hooks have the plugin's manifest `permissions`. */
    permissions: permissionsSchema.optional(),
  })
  .superRefine((entry, ctx) => {
    const needs = HANDLER_FIELDS[entry.type ?? (entry.prompt !== undefined && entry.command === undefined ? 'askAgent' : 'command')];
    for (const key of needs.required) {
      if (entry[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: `a "${entry.type ?? 'command'}" hook needs "${key}"` });
    }
    for (const key of ALL_HANDLER_FIELDS) {
      if (entry[key] !== undefined && !needs.allowed.includes(key)) ctx.addIssue({ code: 'custom', path: [key], message: `"${key}" does not apply to ${entry.type === undefined ? (entry.prompt !== undefined && entry.command === undefined ? 'a "prompt" (askAgent) hook' : 'a "command" hook') : `a "${entry.type}" hook`}` });
    }
    if (entry.type === undefined && (entry.command === undefined) === (entry.prompt === undefined)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'expected exactly one of "command" (run a process) or "prompt" (ask the agent), or a "type" ("http", "mcp_tool", "prompt", "agent")' });
    }
    if (entry.prompt !== undefined || (entry.type !== undefined && entry.type !== 'command')) {
      for (const key of ['args', 'persistent'] as const) {
        if (entry[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `"${key}" applies only to a "command" hook` });
      }
    }
    if (entry.command !== undefined && /\s/.test(entry.command) && !isAbsolute(entry.command)) {
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'expected one program: put its arguments in "args" (no shell runs the command)' });
    }
    for (const [key, list] of [['matcher', typeof entry.matcher === 'string' ? [entry.matcher] : entry.matcher], ['files', entry.files]] as const) {
      (list ?? []).forEach((pattern, i) => {
        const bad = globProblem(pattern);
        if (bad) ctx.addIssue({ code: 'custom', path: typeof entry.matcher === 'string' && key === 'matcher' ? [key] : [key, i], message: bad });
      });
    }
    if (entry.protocol !== undefined && entry.protocol !== 'plinth' && entry.persistent !== undefined && entry.persistent !== false) {
      ctx.addIssue({ code: 'custom', path: ['persistent'], message: `a "${entry.protocol}" hook runs one process per event, as its peer does: "persistent" applies only to plinth's protocol` });
    }
    if (entry.if !== undefined) {
      const rule = parsePermissionRule(entry.if);
      if (!rule.ok) ctx.addIssue({ code: 'custom', path: ['if'], message: `${rule.why}; fix: ${rule.fix}` });
    }
    if (entry.type === undefined && entry.prompt !== undefined && (entry.async !== undefined || entry.asyncRewake !== undefined)) {
      ctx.addIssue({ code: 'custom', path: [entry.async !== undefined ? 'async' : 'asyncRewake'], message: 'a background run does not apply to an askAgent "prompt" hook (it runs no process: the agent is asked)' });
    }
    if ((entry.asyncRewake !== undefined || entry.rewakeMessage !== undefined || entry.rewakeSummary !== undefined) && entry.protocol !== 'claude') {
      ctx.addIssue({ code: 'custom', path: [entry.asyncRewake !== undefined ? 'asyncRewake' : entry.rewakeMessage !== undefined ? 'rewakeMessage' : 'rewakeSummary'], message: 'a rewake is an exit code 2 of a Claude Code hook: it applies only with "protocol": "claude" (use "async" for a background run)' });
    }
    if (entry.dependsOn?.includes(entry.name)) {
      ctx.addIssue({ code: 'custom', path: ['dependsOn'], message: 'a hook cannot depend on itself' });
    }
  });

type HandlerField = 'command' | 'prompt' | 'url' | 'headers' | 'allowedEnvVars' | 'server' | 'tool' | 'input' | 'model' | 'maxTurns';
const ALL_HANDLER_FIELDS: readonly HandlerField[] = ['command', 'prompt', 'url', 'headers', 'allowedEnvVars', 'server', 'tool', 'input', 'model', 'maxTurns'];
/** Per kind of hook: the fields it needs and those it may have. */
const HANDLER_FIELDS: Record<'command' | 'askAgent' | 'http' | 'mcp_tool' | 'prompt' | 'agent', { readonly required: readonly HandlerField[]; readonly allowed: readonly HandlerField[] }> = {
  command: { required: ['command'], allowed: ['command'] },
  askAgent: { required: ['prompt'], allowed: ['prompt'] },
  http: { required: ['url'], allowed: ['url', 'headers', 'allowedEnvVars'] },
  mcp_tool: { required: ['server', 'tool'], allowed: ['server', 'tool', 'input'] },
  prompt: { required: ['prompt'], allowed: ['prompt', 'model'] },
  agent: { required: ['prompt'], allowed: ['prompt', 'model', 'maxTurns'] },
};

/** A definition as written, validated. */
export type HookEntry = z.infer<typeof hookEntrySchema>;

/**
 * Normalises one `hooks` section. A name listed under several events with the
 * same definition becomes one hook with several events; the same name with a
 * different definition is a `PLN_E_HOOK_DUPLICATE` problem for the later one.
 * `dependsOn` names of hooks in the same section become their ids.
 */
export function normalizeSection(section: unknown, where: SectionOrigin, defaults: HookDefaults): HookCollection {
  const problems: PlinthError[] = [];
  const base = where.path ?? 'hooks';
  if (section === undefined || section === null) return { hooks: [], problems };
  if (!isRecord(section)) {
    problems.push(problem('PLN_E_HOOK_INVALID', where, base, 'expected an object keyed by event name, each a list of hook definitions'));
    return { hooks: [], problems };
  }

  const seen = new Map<string, { hook: Mutable<HookDefinition>; at: string; shape: string }>();
  const hint = sectionPeer(section);
  for (const [key, list] of Object.entries(section)) {
    const eventPath = `${base}${pathKey(key)}`;
    if (isPeerHookEvent(key)) {
      // The peers' shape: `{ matcher, hooks: [{ type, command, timeout }] }` groups; their names are generated, so unique.
      const peer = translatePeerEvent(key, list, where, defaults, hint);
      problems.push(...peer.problems);
      for (const hook of peer.hooks) seen.set(hook.name, { hook, at: hook.origin, shape: '' });
      continue;
    }
    const event = eventName(key);
    if (!event) {
      problems.push(problem('PLN_E_HOOK_EVENT_UNKNOWN', where, eventPath, unknownEvent(key)));
      continue;
    }
    if (!Array.isArray(list)) {
      problems.push(problem('PLN_E_HOOK_INVALID', where, eventPath, 'expected a list of hook definitions', undefined, event));
      continue;
    }
    list.forEach((raw, index) => {
      const at = `${eventPath}[${index}]`;
      const parsed = hookEntrySchema.safeParse(raw);
      if (!parsed.success) {
        // A definition switched off is no guard, readable or not: its problems name no event.
        const guards = !(isRecord(raw) && raw.enabled === false) ? event : undefined;
        for (const issue of parsed.error.issues) problems.push(...issueProblems(issue, where, at, guards));
        return;
      }
      const protocol = parsed.data.protocol;
      if (protocol !== undefined && protocol !== 'plinth' && peerNameOf(protocol, event) === undefined) {
        problems.push(problem('PLN_E_HOOK_DIALECT_UNSUPPORTED', where, `${at}.protocol`, `${peerLabel(protocol)} has no event for ${event}: a "${protocol}" hook cannot subscribe to it`, parsed.data.name, event));
        return;
      }
      const id = hookId(where, parsed.data.name);
      const hook = toHookDefinition(parsed.data, { id, name: parsed.data.name, event, subscribedAs: key, origin: `${where.origin}#${at}` }, where, defaults);
      const shape = definitionShape(hook);
      const earlier = seen.get(parsed.data.name);
      if (!earlier) {
        seen.set(parsed.data.name, { hook, at, shape });
        return;
      }
      if (earlier.shape !== shape) {
        problems.push(
          problem('PLN_E_HOOK_DUPLICATE', where, at, `hook "${parsed.data.name}" is already defined at ${earlier.at} with a different definition; a name may be listed under several events only with the same definition`, parsed.data.name),
        );
        return;
      }
      const already = earlier.hook.events.indexOf(event);
      if (already === -1) {
        earlier.hook.events = [...earlier.hook.events, event];
        earlier.hook.subscribedAs = [...earlier.hook.subscribedAs, key];
      } else if (earlier.hook.subscribedAs[already] !== key) {
        problems.push(
          problem('PLN_E_HOOK_DUPLICATE', where, at, `hook "${parsed.data.name}" already subscribes to ${event} as "${earlier.hook.subscribedAs[already]}"; list it under one spelling only`, parsed.data.name),
        );
      } // the very same entry twice under one key changes nothing
    });
  }

  const hooks = [...seen.values()].map((s) => s.hook);
  const ids = new Map(hooks.map((h) => [h.name, h.id]));
  for (const hook of hooks) hook.dependsOn = hook.dependsOn.map((dep) => ids.get(dep) ?? dep);
  return { hooks, problems };
}

/**
 * Builds one definition from a validated entry; shared with the legacy
 * translator. `cwd` is resolved against `where.baseDir`.
 */
export function toHookDefinition(
  entry: Omit<HookEntry, 'name'>,
  identity: { id: string; name: string; event: EventName; subscribedAs: string; origin: string },
  where: SectionOrigin,
  defaults: HookDefaults,
): Mutable<HookDefinition> {
  const tools = typeof entry.matcher === 'string' ? [entry.matcher] : entry.matcher;
  const persistent = entry.persistent === true ? { idleMs: defaults.idleMs } : entry.persistent || false;
  return {
    id: identity.id,
    name: identity.name,
    events: [identity.event],
    subscribedAs: [identity.subscribedAs],
    // `./src/*.ts` means `src/*.ts`: paths are matched relative to the workspace.
    matcher: { ...(tools && { tools }), ...(entry.files && { files: entry.files.map((f) => f.replace(/^(!?)(?:\.\/)+/, '$1')) }) },
    action: actionOf(entry),
    cwd: entry.cwd === undefined ? resolve(where.baseDir) : resolve(where.baseDir, entry.cwd),
    timeoutMs: entry.timeout ?? defaults.timeoutMs,
    priority: entry.priority ?? 0,
    dependsOn: entry.dependsOn ?? [],
    parallel: entry.parallel ?? false,
    rateLimit: { ...entry.rateLimit },
    onError: entry.onError ?? 'block',
    enabled: entry.enabled ?? true,
    persistent,
    source: where.source,
    origin: identity.origin,
    ...(where.plugin !== undefined && { plugin: where.plugin }),
    ...(where.version !== undefined && { version: where.version }),
    // Absent for plinth's own protocol, so that existing definitions (and their approvals) stay as they were.
    ...(entry.protocol !== undefined && entry.protocol !== 'plinth' && { protocol: entry.protocol }),
    ...(entry.protocol !== undefined && entry.protocol !== 'plinth' && where.plugin !== undefined && { pluginRoot: resolve(where.baseDir) }),
    ...(entry.permissions !== undefined && { permissions: entry.permissions }),
    ...handlerFields(entry),
  };
}

/** Claude Code's handler fields as written (`if`, `async`, `asyncRewake`, …), read into a definition's; absent ones stay absent, so that existing approvals stand. */
export function handlerFields(entry: {
  readonly if?: string | undefined;
  readonly async?: boolean | undefined;
  readonly asyncRewake?: boolean | undefined;
  readonly rewakeMessage?: string | undefined;
  readonly rewakeSummary?: string | undefined;
  readonly once?: boolean | undefined;
  readonly statusMessage?: string | undefined;
}): Pick<HookDefinition, 'if' | 'async' | 'once' | 'statusMessage'> {
  // `asyncRewake` implies `async`, as in Claude Code.
  const background = entry.async === true || entry.asyncRewake === true;
  return {
    ...(entry.if !== undefined && { if: entry.if }),
    ...(background && {
      async: {
        ...(entry.asyncRewake === true && { rewake: true }),
        ...(entry.asyncRewake === true && entry.rewakeMessage !== undefined && { rewakeMessage: entry.rewakeMessage }),
        ...(entry.asyncRewake === true && entry.rewakeSummary !== undefined && { rewakeSummary: entry.rewakeSummary }),
      },
    }),
    ...(entry.once === true && { once: true }),
    ...(entry.statusMessage !== undefined && entry.statusMessage !== '' && { statusMessage: entry.statusMessage }),
  };
}

/** What a validated entry runs. */
function actionOf(entry: Omit<HookEntry, 'name'>): HookDefinition['action'] {
  switch (entry.type) {
    case 'http':
      return { type: 'http', url: entry.url ?? '', headers: entry.headers ?? {}, allowedEnvVars: entry.allowedEnvVars ?? [] };
    case 'mcp_tool':
      return { type: 'mcp_tool', server: entry.server ?? '', tool: entry.tool ?? '', input: entry.input ?? {} };
    case 'prompt':
    case 'agent':
      return { type: entry.type, prompt: entry.prompt ?? '', ...(entry.model !== undefined && { model: entry.model }), ...(entry.maxTurns !== undefined && { maxTurns: entry.maxTurns }) };
    default:
      return entry.prompt !== undefined && entry.command === undefined ? { type: 'askAgent', prompt: entry.prompt } : { type: 'command', command: entry.command ?? '', args: entry.args ?? [] };
  }
}

/**
 * The canonical event for a name or protocol alias. Guards the sdk's lookup,
 * which reads a plain object: `constructor` or `__proto__` must not come back
 * as an inherited member.
 */
export function eventName(name: string): EventName | undefined {
  const event: unknown = canonicalEvent(name);
  return typeof event === 'string' && (EVENTS as readonly string[]).includes(event) ? (event as EventName) : undefined;
}

/** `<plugin>/<name>` for manifest hooks, `<source>:<name>` otherwise. */
export function hookId(where: Pick<SectionOrigin, 'source' | 'plugin'>, name: string): string {
  return where.plugin !== undefined ? `${where.plugin}/${name}` : `${where.source}:${name}`;
}

/** A PlinthError naming the file and JSON path of a bad definition. */
export function problem(
  code: 'PLN_E_HOOK_INVALID' | 'PLN_E_HOOK_DUPLICATE' | 'PLN_E_HOOK_EVENT_UNKNOWN' | 'PLN_E_HOOK_SHELL_REFUSED' | 'PLN_E_HOOK_DIALECT_UNSUPPORTED',
  where: Pick<SectionOrigin, 'origin' | 'plugin' | 'source'>,
  path: string,
  message: string,
  hook?: string,
  /** The event the bad definition is listed under, when known: a user's unreadable guard blocks it. */
  event?: EventName,
): PlinthError {
  const hints = {
    PLN_E_HOOK_INVALID: 'correct the definition at the path given; `plinth hooks validate` checks every source',
    PLN_E_HOOK_DUPLICATE: 'rename one of the hooks, or make both definitions identical to list one hook under several events',
    PLN_E_HOOK_EVENT_UNKNOWN: 'use a canonical event name (before_tool, session_start, …) or a protocol alias (pre-tool-call, …)',
    PLN_E_HOOK_SHELL_REFUSED: 'allow shell commands for that source in your user settings (plugins.hooks.settings.shellCommands), or write the command as one program with arguments',
    PLN_E_HOOK_DIALECT_UNSUPPORTED: 'remove the hook, or move it to an event plinth has (see the dialect table in the hooks plugin README)',
  } as const;
  return new PlinthError(code, path === '' ? `${where.origin}: ${message}` : `${where.origin}: ${path}: ${message}`, {
    ...(where.plugin !== undefined && { plugin: where.plugin }),
    hint: hints[code],
    details: { origin: where.origin, path, source: where.source, ...(hook !== undefined && { hook }), ...(event !== undefined && { event }) },
  });
}

/** Writable view of a readonly interface, for building a value in steps. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function globProblem(pattern: string): string | undefined {
  try {
    picomatch().makeRe(pattern.replace(/^!/, ''));
    return undefined;
  } catch (error) {
    return `"${pattern}" is not a valid glob pattern (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Everything that makes two definitions "the same", i.e. all but where they were found and which events. */
function definitionShape(hook: HookDefinition): string {
  const { events: _events, subscribedAs: _as, origin: _origin, ...rest } = hook;
  return stableJson(rest);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (isRecord(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function issueProblems(issue: z.core.$ZodIssue, where: SectionOrigin, at: string, event: EventName | undefined): PlinthError[] {
  const path = at + issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : pathKey(String(k)))).join('');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => {
      const near = closestName(key, Object.keys(hookEntrySchema.shape).concat(path.endsWith('rateLimit') ? ['perMinute', 'cooldownMs'] : []));
      return problem('PLN_E_HOOK_INVALID', where, `${path}${pathKey(key)}`, `unknown key "${key}"${near ? ` (did you mean "${near}"?)` : ''}`, undefined, event);
    });
  }
  return [problem('PLN_E_HOOK_INVALID', where, path, issue.message, undefined, event)];
}

/** `"befor_tool" is not an event (did you mean "before_tool"?); …`. */
export function unknownEvent(name: string): string {
  const near = closestName(name, [...EVENTS, ...Object.keys(EVENT_ALIASES)]);
  return `"${name}" is not an event${near ? ` (did you mean "${near}"?)` : ''}; expected one of ${EVENTS.join(', ')}, a protocol alias such as "pre-tool-call", or a Claude Code or Gemini CLI event such as "PreToolUse"`;
}

/** `.key`, or `["odd key"]` when the key is not a plain word. */
function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
