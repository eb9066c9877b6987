/**
 * The peers' settings shape inside a plinth `hooks` section, translated into plinth hook
 * definitions that speak the peer's protocol:
 *
 * ```json
 * "PreToolUse": [{ "matcher": "Edit|Write", "hooks": [{ "type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh", "timeout": 30 }] }]
 * ```
 *
 * Each command becomes one definition named `<Event>.<group>.<hook>` (`PreToolUse.0.0`; ids
 * `user:PreToolUse.0.0`, `<plugin>/PreToolUse.0.0`). Which peer a group speaks is, in order: its
 * `protocol`, the section's (a peer plugin's manifest, see `tagPeerHooks` in the sdk), the event
 * name when only one peer has it, the other peer events of the same section when they all belong
 * to one peer; `SessionStart` alone is a problem asking for `"protocol"`.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, resolve } from 'node:path';
import { type PlinthError } from 'plinth/sdk';
import { isPeerEventOf, peerEventsOf, peerHookGaps, type PeerProtocol } from 'plinth/internal';
import { z } from 'zod';
import { type HookDefaults, type Mutable, type SectionOrigin, handlerFields, hookId, problem } from '../definition.js';
import { parsePermissionRule } from './permission-rule.js';
import { pluginDataDir } from '../session-env.js';
import type { HookDefinition } from '../types.js';
import { type Expansions, readCommandLine } from './command-line.js';
import { CLAUDE_WITHOUT_COUNTERPART, CODEX_WITHOUT_COUNTERPART, peerEvent, peerLabel } from './events.js';
import { CODEX_MATCHED_EVENTS, compilePeerMatcher } from './matcher.js';
import { handlerTypeOf, translateHandlerHook } from './handler-types.js';

/** The peers' default time limit of one command: 60 seconds, in both. */
export const PEER_DEFAULT_TIMEOUT_MS = 60_000;

const MAX_TIMER_MS = 2_147_483_647;

const peerCommandSchema = z.strictObject({
  type: z.string({ error: 'expected "type": "command"' }),
  command: z.string({ error: 'expected the command to run, as a string' }).optional(),
  /** Claude Code: seconds; Gemini CLI: milliseconds. */
  timeout: z.number({ error: 'expected a timeout as a number' }).positive({ error: 'expected a positive timeout' }).optional(),
  // Gemini CLI's own labels, and Claude Code's spinner text: kept out of what runs.
  name: z.string().optional(),
  description: z.string().optional(),
  statusMessage: z.string().optional(),
  // Claude Code's exec form: `command` is the program, `args` its arguments, no shell.
  args: z.array(z.string({ error: 'expected each argument as a string' }), { error: 'expected "args" as a list of strings' }).optional(),
  // Claude Code's handler fields (handlerFields in ../definition.ts); `if` is read by parsePermissionRule.
  if: z.string({ error: 'expected "if" as a permission rule, e.g. "Bash(git commit *)"' }).optional(),
  async: z.boolean({ error: 'expected true or false' }).optional(),
  asyncRewake: z.boolean({ error: 'expected true or false' }).optional(),
  // Not in Claude Code's reference, but in its settings schema and in published hooks: what an asyncRewake says.
  rewakeMessage: z.string({ error: 'expected a message as a string' }).optional(),
  rewakeSummary: z.string({ error: 'expected a summary as a string' }).optional(),
  once: z.boolean({ error: 'expected true or false' }).optional(),
  // "bash", "sh" (the default) or "powershell"; another value is a hook that never runs (peerHookGaps).
  shell: z.string({ error: 'expected "bash", "sh" or "powershell"' }).optional(),
  // Codex CLI's own: the command on Windows (plinth runs `command`), and how its interface shows the hook.
  commandWindows: z.string({ error: 'expected the Windows command as a string' }).optional(),
  command_windows: z.string({ error: 'expected the Windows command as a string' }).optional(),
  visibilityHint: z.string({ error: 'expected a visibility hint as a string' }).optional(),
  // plinth's own, accepted on a peer hook.
  onError: z.enum(['block', 'allow'], { error: 'expected "block" or "allow"' }).optional(),
  enabled: z.boolean({ error: 'expected true or false' }).optional(),
});

const peerGroupSchema = z.strictObject({
  matcher: z.string({ error: 'expected a matcher as a string ("Edit|Write", "mcp__github__.*", "*")' }).optional(),
  hooks: z.array(z.unknown(), { error: 'expected "hooks": a list of { "type": "command", "command": … }' }),
  protocol: z.enum(['claude', 'gemini', 'codex'], { error: 'expected "protocol": "claude", "gemini" or "codex"' }).optional(),
  /** Gemini CLI: run this group's hooks one after the other. */
  sequential: z.boolean({ error: 'expected true or false' }).optional(),
});

/** Claude Code's own fields: a Gemini CLI hook that has one is told so, not silently accepted (on a Codex CLI hook they are ignored, as Codex ignores them, with a note). */
const CLAUDE_ONLY = ['args', 'if', 'async', 'asyncRewake', 'rewakeMessage', 'rewakeSummary', 'once', 'shell'] as const;
/** Codex CLI's own fields: a Claude Code or Gemini CLI hook that has one is told so. */
const CODEX_ONLY = ['commandWindows', 'command_windows', 'visibilityHint'] as const;

/** Codex CLI's default time limit of one command: 600 seconds. */
export const CODEX_DEFAULT_TIMEOUT_MS = 600_000;

/** What translating one section's peer events found. */
export interface PeerTranslation {
  readonly hooks: Mutable<HookDefinition>[];
  readonly problems: PlinthError[];
}

/**
 * The one peer the rest of a section points to, if it agrees: its events that only one peer has
 * (`PreToolUse`, `BeforeTool`), else the `"protocol"` its groups say (what `hooks import` wrote).
 * A `SessionStart` group without `"protocol"` in such a section speaks that peer.
 */
export function sectionPeer(section: Readonly<Record<string, unknown>>): PeerProtocol | undefined {
  const byEvent = new Set<PeerProtocol>();
  const bySaying = new Set<PeerProtocol>();
  for (const [key, groups] of Object.entries(section)) {
    const named = peerEventsOf(key);
    if (named.length === 0) continue;
    if (named.length === 1) byEvent.add(named[0]!);
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      const said = typeof group === 'object' && group !== null ? (group as { protocol?: unknown }).protocol : undefined;
      if (said === 'claude' || said === 'gemini' || said === 'codex') bySaying.add(said);
    }
  }
  // The events decide when they name one peer; only where they name none, the groups' own "protocol".
  const peers = byEvent.size > 0 ? byEvent : bySaying;
  return peers.size === 1 ? [...peers][0] : undefined;
}

/**
 * Translates the groups listed under the peer event `key` of a section.
 * `hint` is the peer the rest of the section points to ({@link sectionPeer}).
 */
export function translatePeerEvent(key: string, list: unknown, where: SectionOrigin, defaults: HookDefaults, hint: PeerProtocol | undefined): PeerTranslation {
  const hooks: Mutable<HookDefinition>[] = [];
  const problems: PlinthError[] = [];
  const base = `${where.path ?? 'hooks'}.${key}`;
  if (!Array.isArray(list)) {
    problems.push(problem('PLN_E_HOOK_INVALID', where, base, 'expected a list of matcher groups: [{ "matcher": "…", "hooks": [{ "type": "command", "command": "…" }] }]'));
    return { hooks, problems };
  }
  list.forEach((rawGroup, g) => {
    const at = `${base}[${g}]`;
    const group = peerGroupSchema.safeParse(rawGroup);
    if (!group.success) {
      for (const issue of group.error.issues) problems.push(problem('PLN_E_HOOK_INVALID', where, issuePath(at, issue), issueMessage(issue)));
      return;
    }
    // Codex CLI spells its events as Claude Code does: it is never inferred from a name, only said.
    const peers = peerEventsOf(key);
    const protocol = group.data.protocol ?? where.protocol ?? (peers.length === 1 ? peers[0] : undefined) ?? hint;
    if (protocol === undefined || !isPeerEventOf(protocol, key)) {
      const why =
        protocol === undefined
          ? peers.length === 0
            ? `"${key}" is a Codex CLI event, and nothing in ${where.origin} says this group is Codex's: its hooks do not run until it says "protocol": "codex"`
            : `"${key}" is an event of both Claude Code and Gemini CLI, and nothing in ${where.origin} says which: its hooks do not run until this group says "protocol": "claude" or "gemini"`
          : `"${key}" is not a ${peerLabel(protocol)} event (this group says "protocol": "${protocol}")`;
      // Named with its event (both peers' SessionStart is session_start): `hooks run` says why its hooks did not run.
      problems.push(problem('PLN_E_HOOK_INVALID', where, at, why, undefined, peerEvent(peers[0] ?? 'codex', key)));
      return;
    }
    const event = peerEvent(protocol, key);
    if (event === undefined) {
      const why = (protocol === 'codex' ? CODEX_WITHOUT_COUNTERPART[key] : CLAUDE_WITHOUT_COUNTERPART[key]) ?? 'plinth has no counterpart';
      problems.push(problem('PLN_E_HOOK_DIALECT_UNSUPPORTED', where, at, `${peerLabel(protocol)}'s ${key} event has no plinth counterpart (${why}); its hooks are not run`));
      return;
    }
    // Codex CLI reads a matcher on tool events and SessionStart only; elsewhere it is ignored, even an invalid one.
    const ignored = protocol === 'codex' && !CODEX_MATCHED_EVENTS.has(event);
    const matcher = ignored || group.data.matcher === undefined || group.data.matcher === '' || group.data.matcher === '*' ? undefined : group.data.matcher;
    if (matcher !== undefined) {
      const compiled = compilePeerMatcher(protocol, matcher);
      if (!compiled.ok) {
        problems.push(problem('PLN_E_HOOK_INVALID', where, `${at}.matcher`, compiled.why, undefined, event));
        return;
      }
    }
    group.data.hooks.forEach((rawHook, h) => {
      const hookAt = `${at}.hooks[${h}]`;
      const name = `${key}.${g}.${h}`;
      // A hook plinth cannot run yet (a type it does not know, a PowerShell command) is kept as a
      // hook that never runs: listed, approved like any other, and blocking a gate event, never silently left out.
      const gaps = peerHookGaps(protocol, rawHook);
      const unrunnable = gaps.find((gap) => gap.unrunnable);
      if (unrunnable !== undefined && unrunnable.field === 'type') {
        hooks.push(unsupportedHook(name, key, event, hookAt, rawHook as Record<string, unknown>, unrunnable.reason, { sequential: group.data.sequential, matcher }, protocol, where));
        return;
      }
      // Claude Code's http, mcp_tool, prompt and agent hooks: run in plinth's process (handler-types.ts).
      const handlerType = handlerTypeOf(rawHook);
      if (handlerType !== undefined) {
        const notYet = gaps.map((gap) => `${gap.field}: ${gap.reason}`);
        const read = translateHandlerHook(rawHook, handlerType, { name, key, event, hookAt }, { sequential: group.data.sequential, matcher }, protocol, where, notYet);
        problems.push(...read.problems);
        if (read.hook !== undefined) hooks.push(unrunnable !== undefined ? unsupportedHook(name, key, event, hookAt, rawHook as Record<string, unknown>, unrunnable.reason, { sequential: group.data.sequential, matcher }, protocol, where) : read.hook);
        return;
      }
      const entry = peerCommandSchema.safeParse(rawHook);
      if (!entry.success) {
        for (const issue of entry.error.issues) problems.push(problem('PLN_E_HOOK_INVALID', where, issuePath(hookAt, issue), issueMessage(issue), undefined, event));
        return;
      }
      // Codex ignores Claude Code's fields (its handler schema drops unknown keys): so does plinth, with a note (peerHookGaps).
      if (protocol === 'gemini') {
        const claudeOnly = CLAUDE_ONLY.filter((field) => entry.data[field] !== undefined);
        if (claudeOnly.length > 0) {
          problems.push(problem('PLN_E_HOOK_INVALID', where, `${hookAt}.${claudeOnly[0]}`, `${claudeOnly.map((f) => `"${f}"`).join(', ')} ${claudeOnly.length > 1 ? 'are' : 'is'} Claude Code's, not a ${peerLabel(protocol)} hook field: remove ${claudeOnly.length > 1 ? 'them' : 'it'}`, undefined, event));
          return;
        }
      }
      if (protocol !== 'codex') {
        const codexOnly = CODEX_ONLY.filter((field) => entry.data[field] !== undefined);
        if (codexOnly.length > 0) {
          problems.push(problem('PLN_E_HOOK_INVALID', where, `${hookAt}.${codexOnly[0]}`, `"${codexOnly[0]}" is Codex CLI's, not a ${peerLabel(protocol)} hook field: remove it, or say "protocol": "codex" on the group`, undefined, event));
          return;
        }
      }
      if (entry.data.if !== undefined && protocol !== 'codex') {
        const rule = parsePermissionRule(entry.data.if);
        if (!rule.ok) {
          problems.push(problem('PLN_E_HOOK_INVALID', where, `${hookAt}.if`, `${rule.why}; fix: ${rule.fix}`, name, event));
          return;
        }
      }
      if (entry.data.command === undefined || entry.data.command.trim() === '') {
        problems.push(problem('PLN_E_HOOK_INVALID', where, `${hookAt}.command`, 'expected the command to run', undefined, event));
        return;
      }
      if (unrunnable !== undefined) {
        hooks.push(unsupportedHook(name, key, event, hookAt, rawHook as Record<string, unknown>, unrunnable.reason, { sequential: group.data.sequential, matcher }, protocol, where));
        return;
      }
      const claude = protocol === 'claude';
      const action =
        claude && entry.data.args !== undefined
          ? execAction(entry.data.command, entry.data.args, protocol, where, defaults)
          : commandAction(entry.data.command, protocol, where, defaults, protocol === 'claude' && (entry.data.shell === 'bash' || entry.data.shell === 'powershell') ? entry.data.shell : 'sh');
      if (!action.ok) {
        problems.push(problem(action.code, where, `${hookAt}.command`, action.why, name, event));
        return;
      }
      const timeoutMs =
        entry.data.timeout === undefined ? (protocol === 'codex' ? CODEX_DEFAULT_TIMEOUT_MS : PEER_DEFAULT_TIMEOUT_MS) : Math.round(protocol === 'gemini' ? entry.data.timeout : entry.data.timeout * 1000);
      hooks.push({
        id: hookId(where, name),
        name,
        events: [event],
        subscribedAs: [key],
        matcher: matcher === undefined ? {} : { peer: matcher },
        action: { type: 'command', command: action.command, args: action.args },
        cwd: resolve(where.projectDir ?? where.baseDir),
        timeoutMs: Math.min(Math.max(timeoutMs, 1), MAX_TIMER_MS),
        priority: 0,
        dependsOn: [],
        // Claude Code runs a group's (and every matching group's) commands at once; Gemini CLI too unless `sequential`.
        parallel: group.data.sequential !== true,
        rateLimit: {},
        // The peers go on when a hook fails (any exit but 2, a timeout): a failure does not block.
        onError: entry.data.onError ?? 'allow',
        enabled: entry.data.enabled ?? true,
        persistent: false,
        source: where.source,
        origin: `${where.origin}#${hookAt}`,
        ...(where.plugin !== undefined && { plugin: where.plugin }),
        ...(where.version !== undefined && { version: where.version }),
        protocol,
        ...(where.plugin !== undefined && { pluginRoot: resolve(where.baseDir) }),
        ...(gaps.length > 0 && { notYet: gaps.map((gap) => `${gap.field}: ${gap.reason}`) }),
        // Codex CLI honours none of Claude Code's handler fields but `statusMessage` (the others are noted above).
        ...(protocol === 'codex' ? (entry.data.statusMessage !== undefined ? { statusMessage: entry.data.statusMessage } : {}) : handlerFields(entry.data)),
      });
    });
  });
  return { hooks, problems };
}

/**
 * A peer hook plinth cannot run yet, as a definition that never runs (`unsupported`): `hooks list`
 * shows it, trust approves it like any hook from its place, and on a gate event it blocks.
 */
function unsupportedHook(
  name: string,
  key: string,
  event: HookDefinition['events'][number],
  hookAt: string,
  raw: Record<string, unknown>,
  reason: string,
  group: { readonly sequential: boolean | undefined; readonly matcher: string | undefined },
  protocol: PeerProtocol,
  where: SectionOrigin,
): Mutable<HookDefinition> {
  const text = [raw.prompt, raw.command, raw.url, raw.tool].find((v): v is string => typeof v === 'string' && v !== '') ?? `a "${String(raw.type)}" hook`;
  return {
    id: hookId(where, name),
    name,
    events: [event],
    subscribedAs: [key],
    matcher: group.matcher === undefined ? {} : { peer: group.matcher },
    action: { type: 'askAgent', prompt: text },
    cwd: resolve(where.projectDir ?? where.baseDir),
    timeoutMs: PEER_DEFAULT_TIMEOUT_MS,
    priority: 0,
    dependsOn: [],
    parallel: group.sequential !== true,
    rateLimit: {},
    // Never runs: a gate event is blocked whatever this says (the engine), other events skip it.
    onError: 'block',
    enabled: raw.enabled !== false,
    persistent: false,
    source: where.source,
    origin: `${where.origin}#${hookAt}`,
    ...(where.plugin !== undefined && { plugin: where.plugin }),
    ...(where.version !== undefined && { version: where.version }),
    protocol,
    unsupported: reason,
  };
}

type Action =
  | { readonly ok: true; readonly command: string; readonly args: string[] }
  | { readonly ok: false; readonly code: 'PLN_E_HOOK_INVALID' | 'PLN_E_HOOK_SHELL_REFUSED'; readonly why: string };

/** The values plinth expands in a peer command itself. */
export function peerExpansions(protocol: PeerProtocol, where: SectionOrigin, defaults: Pick<HookDefaults, 'shellSources' | 'userHome' | 'dataHome'>): Expansions {
  const project = resolve(where.projectDir ?? where.baseDir);
  if (protocol === 'codex') {
    // Codex CLI sets no project variable; it puts a plugin's root into its hooks' commands.
    const root: Record<string, string> = where.plugin === undefined ? {} : { PLUGIN_ROOT: resolve(where.baseDir), CLAUDE_PLUGIN_ROOT: resolve(where.baseDir) };
    return { HOME: defaults.userHome ?? homedir(), ...root };
  }
  const values: Record<string, string> = { CLAUDE_PROJECT_DIR: project, HOME: defaults.userHome ?? homedir() };
  if (protocol === 'gemini') {
    values.GEMINI_PROJECT_DIR = project;
    values.GEMINI_CWD = project;
    values.workspacePath = project;
  }
  if (where.plugin !== undefined) {
    if (protocol === 'claude') values.CLAUDE_PLUGIN_ROOT = resolve(where.baseDir);
    if (protocol === 'claude' && defaults.dataHome !== undefined) values.CLAUDE_PLUGIN_DATA = pluginDataDir(defaults.dataHome, where.plugin);
    else values.extensionPath = resolve(where.baseDir);
  }
  return values;
}

/**
 * A peer command as a program and arguments. A script named directly (`$CLAUDE_PROJECT_DIR/x.sh`)
 * runs through the interpreter its `#!` line names, so that the whitelist (`allowedCommands`)
 * decides as for any hook; shell syntax runs through `sh -c` where the settings allow it.
 */
export function commandAction(command: string, protocol: PeerProtocol, where: SectionOrigin, defaults: Pick<HookDefaults, 'shellSources' | 'userHome' | 'dataHome'>, shell: 'sh' | 'bash' | 'powershell' = 'sh'): Action {
  if (shell === 'powershell') {
    // PowerShell's syntax is not a POSIX shell's: the string is PowerShell's to read, plinth's placeholders put in as text.
    if (!(defaults.shellSources ?? []).includes(where.source)) {
      return {
        ok: false,
        code: 'PLN_E_HOOK_SHELL_REFUSED',
        why: `a "shell": "powershell" command runs through PowerShell and ${where.source} hooks may not run shell commands; to allow it, add "${where.source}" to plugins.hooks.settings.shellCommands in your user settings (and "pwsh" to allowedCommands), or use the exec form ("command" the program, "args" its arguments)`,
      };
    }
    return { ok: true, command: POWERSHELL, args: ['-NoProfile', '-NonInteractive', '-Command', expandPlaceholders(command, peerExpansions(protocol, where, defaults))] };
  }
  const line = readCommandLine(command, peerExpansions(protocol, where, defaults), defaults.userHome ?? homedir());
  if (line.kind === 'invalid') return { ok: false, code: 'PLN_E_HOOK_INVALID', why: `the command cannot be read: ${line.why}` };
  if (line.kind === 'shell') {
    if (!(defaults.shellSources ?? []).includes(where.source)) {
      return {
        ok: false,
        code: 'PLN_E_HOOK_SHELL_REFUSED',
        why: `the command needs a shell (${line.needs}) and ${where.source} hooks may not run shell commands; to allow it, add "${where.source}" to plugins.hooks.settings.shellCommands in your user settings, or make the command one program with arguments`,
      };
    }
    return { ok: true, command: shell, args: ['-c', command] };
  }
  const [program, ...args] = line.argv as [string, ...string[]];
  const interpreter = program.includes('/') ? shebangOf(isAbsolute(program) ? program : resolve(where.projectDir ?? where.baseDir, program)) : undefined;
  if (interpreter) return { ok: true, command: interpreter.program, args: [...interpreter.args, program, ...args] };
  return { ok: true, command: program, args };
}

/**
 * Claude Code's exec form (`"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/check.js"]`): the
 * program and its arguments as written, no shell; plinth's own variables (`${CLAUDE_PLUGIN_ROOT}`,
 * `$CLAUDE_PROJECT_DIR`, …) are put in, any other text stays as it is. A script named as the
 * program runs through its `#!` interpreter, as in the shell form.
 */
export function execAction(command: string, args: readonly string[], protocol: PeerProtocol, where: SectionOrigin, defaults: Pick<HookDefaults, 'shellSources' | 'userHome' | 'dataHome'>): Action {
  // Only the path placeholders: `$HOME`, `$` and backticks pass through verbatim, as Claude Code's exec form passes them.
  const { HOME: _home, ...values } = peerExpansions(protocol, where, defaults);
  const expand = (word: string) => expandPlaceholders(word, values);
  const program = expand(command);
  const argv = args.map(expand);
  const interpreter = program.includes('/') ? shebangOf(isAbsolute(program) ? program : resolve(where.projectDir ?? where.baseDir, program)) : undefined;
  if (interpreter) return { ok: true, command: interpreter.program, args: [...interpreter.args, program, ...argv] };
  return { ok: true, command: program, args: argv };
}

/** The program a `"shell": "powershell"` command runs through: PowerShell 7 (`pwsh`), Windows PowerShell on Windows. */
export const POWERSHELL = process.platform === 'win32' ? 'powershell' : 'pwsh';

/** `text` with plinth's own variables (`${CLAUDE_PLUGIN_ROOT}`, `$CLAUDE_PROJECT_DIR`, …) put in as plain text; any other `$…` stays as written. */
function expandPlaceholders(text: string, values: Expansions): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (all, braced: string | undefined, bare: string | undefined) => {
    const name = (braced ?? bare)!;
    return Object.hasOwn(values, name) ? values[name]! : all;
  });
}

/** The interpreter a script's `#!` line names (`/usr/bin/env python3` → python3, `/bin/bash` → bash), sh for a text file without one; undefined when unreadable or a binary. */
function shebangOf(file: string): { program: string; args: string[] } | undefined {
  let head: string;
  try {
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(256);
      const read = readSync(fd, buffer, 0, buffer.length, 0);
      head = buffer.subarray(0, read).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  // Without a `#!` line a shell runs a text file as a shell script (execve's ENOEXEC): so does plinth, with sh.
  if (!head.startsWith('#!')) return head.includes('\0') || head.startsWith('\x7fELF') ? undefined : { program: 'sh', args: [] };
  const words = (head.slice(2).split('\n')[0] ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return undefined;
  let [first, ...rest] = words as [string, ...string[]];
  if (basename(first) === 'env') {
    if (rest[0] === '-S') rest = rest.slice(1);
    if (rest.length === 0) return undefined;
    [first, ...rest] = rest as [string, ...string[]];
  }
  return { program: basename(first), args: rest };
}

function issuePath(at: string, issue: z.core.$ZodIssue): string {
  const path = at + issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('');
  return issue.code === 'unrecognized_keys' ? `${path}.${issue.keys[0] ?? ''}` : path;
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} in a peer hook`;
  return issue.message;
}
