/**
 * `plinth hooks import`: the hooks of a Claude Code or Gemini CLI settings file, or of a Codex CLI
 * `hooks.json` or `config.toml`, as plinth would run them, decided before anything is written. Each peer command is read exactly as the hooks
 * plugin reads it at run time ({@link translatePeerEvent}); what it would refuse there (a shell
 * command where the settings allow none, an event without a plinth counterpart, a prompt hook, a
 * bad matcher) is refused here, with the reason. What is added keeps the peer's shape and command
 * strings, with `"protocol"` on each group, in plinth's settings of the chosen scope; its hooks are
 * then trusted exactly as plinth's own (user: on first use; workspace: after approval).
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { PlinthError } from 'plinth/sdk';
import { type PeerProtocol, describeFileError, isPeerHookEvent, parseJsonText } from 'plinth/internal';
import type { HookDefaults } from '../definition.js';
import type { HookDefinition } from '../types.js';
import { sameValue } from '../context-merge.js';
import { peerEvent, peerLabel } from './events.js';
import { translatePeerEvent } from './section.js';

/** One peer command and what the import does with it. */
export interface ImportItem {
  /** The peer's event, e.g. `PreToolUse`. */
  readonly event: string;
  /** plinth's event, when there is one. */
  readonly plinthEvent?: string;
  readonly matcher?: string;
  readonly command: string;
  /** `add`: written; `present`: the same group is already in the settings; `refused`: not written. */
  readonly action: 'add' | 'present' | 'refused';
  /** For `refused`: the code and why. */
  readonly code?: string;
  readonly reason?: string;
  /** JSON path in the peer's file. */
  readonly at: string;
}

/** What an import would do. */
export interface ImportPlan {
  readonly from: PeerProtocol;
  readonly file: string;
  readonly scope: 'user' | 'workspace';
  readonly items: readonly ImportItem[];
  /** Keys of the peer's `hooks` left out, and why (Gemini CLI's `enabled`, `disabled`, …). */
  readonly notes: readonly string[];
  /** The groups to append, by peer event, in the peer's shape with `protocol`. */
  readonly additions: Readonly<Record<string, readonly Record<string, unknown>[]>>;
}

/** The peer's settings files, in the order `hooks import` looks for them when no file is given. */
export function peerSettingsFiles(from: PeerProtocol, workspace: string, userHome: string = homedir()): Array<{ scope: 'user' | 'workspace'; file: string }> {
  if (from === 'codex') {
    // Codex CLI reads a layer's hooks.json and the [hooks] tables of its config.toml.
    return [
      { scope: 'workspace', file: join(workspace, '.codex', 'hooks.json') },
      { scope: 'workspace', file: join(workspace, '.codex', 'config.toml') },
      { scope: 'user', file: join(userHome, '.codex', 'hooks.json') },
      { scope: 'user', file: join(userHome, '.codex', 'config.toml') },
    ];
  }
  const folder = from === 'claude' ? '.claude' : '.gemini';
  return [
    { scope: 'workspace', file: join(workspace, folder, 'settings.json') },
    ...(from === 'claude' ? [{ scope: 'workspace' as const, file: join(workspace, folder, 'settings.local.json') }] : []),
    { scope: 'user', file: join(userHome, folder, 'settings.json') },
  ];
}

/** The scope a peer file belongs to: the project's when it is inside the workspace. */
export function scopeOfFile(file: string, workspace: string): 'user' | 'workspace' {
  const rel = relative(resolve(workspace), resolve(file));
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? 'workspace' : 'user';
}

/** What a peer's settings file holds beside `hooks`, and why `hooks import` leaves each out. */
const SKIPPED: Readonly<Record<PeerProtocol, Readonly<Record<string, string>>>> = {
  claude: {
    permissions: "Claude Code's permission rules are not imported: what a hook or server may reach is plinth's trust and sandbox (`plinth perms status`)",
    enabledPlugins: 'Claude Code plugins are not imported by `hooks import`: `plinth import --from claude` shows them and installs them once confirmed (`plinth ext install <plugin>@<marketplace>`)',
    extraKnownMarketplaces: "Claude Code's marketplaces are not imported by `hooks import`: `plinth import --from claude` adds them once confirmed (`plinth ext marketplace add`)",
    statusLine: 'plinth has no status line: it is not imported',
    env: "Claude Code's session environment is not imported: a hook sees only the variables the hooks setting `env` names",
    mcpServers: 'MCP servers are not imported by `hooks import`: add each with `plinth mcp add`',
  },
  gemini: {
    hooksConfig: "Gemini CLI's own switch for hooks: plinth runs every hook it reads (disable one with \"enabled\": false)",
    mcpServers: 'MCP servers are not imported by `hooks import`: add each with `plinth mcp add`',
  },
  codex: {
    description: "the hooks file's description: plinth's settings have no place for it",
    mcp_servers: 'MCP servers are not imported by `hooks import`: add each with `plinth mcp add`',
    features: "Codex CLI's feature switches (features.hooks): plinth runs every hook it reads (disable one with \"enabled\": false)",
  },
};

/** The notes for the keys of a peer's settings file beside `hooks`: nothing is left out without one. */
export function skippedKeys(settings: Readonly<Record<string, unknown>>, from: PeerProtocol): string[] {
  return Object.keys(settings)
    .filter((key) => key !== 'hooks' && key !== '$schema')
    .map((key) => `"${key}": ${Object.hasOwn(SKIPPED[from], key) ? SKIPPED[from][key] : `not a hook setting; ${peerLabel(from)}'s "${key}" is not imported`}`);
}

/**
 * Reads the peer's file; its `hooks` object, and the notes on what else it holds. A Codex CLI
 * `config.toml` (any `.toml` file) is read as TOML: its `[hooks]` tables are the hooks, less
 * `[hooks.state]` (Codex's own record of which hooks the user enabled and trusted).
 * @throws PlinthError `PLN_E_HOOK_IMPORT` when it cannot be read or holds no hooks.
 */
export async function readPeerSettings(file: string, from: PeerProtocol): Promise<{ hooks: Record<string, unknown>; skipped: string[] }> {
  const text = await readFile(file, 'utf8').catch((cause: unknown) => {
    throw new PlinthError('PLN_E_HOOK_IMPORT', `cannot read ${file}: ${describeFileError(cause)}`, {
      plugin: 'hooks',
      cause,
      hint: `give the ${peerLabel(from)} settings file to import: plinth hooks import --from ${from} <file>`,
    });
  });
  if (from === 'codex' && file.endsWith('.toml')) return readCodexToml(file, text);
  const parsed = parseJsonText(text);
  if (!parsed.ok) {
    throw new PlinthError('PLN_E_HOOK_IMPORT', `${file} is not valid JSON: ${parsed.error.problem} at line ${parsed.error.line}, column ${parsed.error.column}`, { plugin: 'hooks', hint: 'correct the file, then import again' });
  }
  const hooks = isRecord(parsed.value) ? parsed.value.hooks : undefined;
  if (!isRecord(hooks)) {
    throw new PlinthError('PLN_E_HOOK_IMPORT', `${file} has no "hooks" object`, { plugin: 'hooks', hint: `a ${peerLabel(from)} settings file keeps its hooks under "hooks": { "<Event>": [{ "matcher", "hooks": [...] }] }` });
  }
  return { hooks, skipped: skippedKeys(parsed.value as Record<string, unknown>, from) };
}

/** Why a hook the import would add cannot run (`hooks validate`'s checks short of trust), by hook name (`PreToolUse.0.1`). */
export type ImportChecks = ReadonlyMap<string, { readonly code: string; readonly reason: string }>;

/**
 * Runs the checks `hooks validate` makes before a run on every hook `peerHooks` would add: a
 * program not allowed or not found, a script or folder missing, a hook plinth cannot run yet.
 * A hook that fails one is refused by {@link planImport}, never offered as `add`.
 */
export async function checkImport(
  input: Pick<Parameters<typeof planImport>[0], 'from' | 'file' | 'peerHooks' | 'scope' | 'workspace' | 'home' | 'defaults'>,
  check: (hook: HookDefinition) => Promise<{ readonly failure: string; readonly detail: string } | undefined>,
): Promise<ImportChecks> {
  const found = new Map<string, { code: string; reason: string }>();
  for (const [event, list] of Object.entries(input.peerHooks)) {
    if (!isPeerHookEvent(event)) continue;
    const translated = translatePeerEvent(event, list, importOrigin(input), input.defaults, input.from);
    await Promise.all(
      translated.hooks.map(async (hook) => {
        if (hook.unsupported !== undefined) return void found.set(hook.name, { code: 'PLN_E_HOOK_DIALECT_UNSUPPORTED', reason: hook.unsupported });
        // An http, mcp_tool, prompt or agent hook starts no process: nothing to check before it runs.
        if (hook.action.type !== 'command') return;
        const cannot = await check(hook);
        if (cannot) found.set(hook.name, { code: 'PLN_E_HOOK_UNRUNNABLE', reason: `it cannot run (${cannot.failure}): ${cannot.detail}` });
      }),
    );
  }
  return found;
}

function importOrigin(input: { scope: 'user' | 'workspace'; file: string; home: string; workspace: string; from: PeerProtocol }) {
  return { source: input.scope, origin: input.file, baseDir: input.scope === 'user' ? input.home : input.workspace, projectDir: input.workspace, protocol: input.from } as const;
}

/**
 * What importing `peerHooks` into the `scope` settings (whose `hooks` are `existing`) would do.
 * `destination` is the settings file written, so that the refusals read as they would at run time.
 */
export function planImport(input: {
  readonly from: PeerProtocol;
  readonly file: string;
  readonly peerHooks: Readonly<Record<string, unknown>>;
  readonly scope: 'user' | 'workspace';
  readonly destination: string;
  readonly existing: Readonly<Record<string, unknown>>;
  readonly workspace: string;
  readonly home: string;
  readonly defaults: HookDefaults;
  /** What {@link checkImport} found: those hooks are refused. */
  readonly checks?: ImportChecks;
  /** Notes on what the peer's file holds beside `hooks` ({@link readPeerSettings}). */
  readonly skipped?: readonly string[];
}): ImportPlan {
  const { from, peerHooks } = input;
  const items: ImportItem[] = [];
  const notes: string[] = [...(input.skipped ?? [])];
  const additions: Record<string, Record<string, unknown>[]> = {};
  for (const [event, list] of Object.entries(peerHooks)) {
    if (!isPeerHookEvent(event)) {
      notes.push(
        from === 'gemini' && (event === 'enabled' || event === 'disabled' || event === 'notifications')
          ? `"hooks.${event}" is Gemini CLI's own switch; plinth runs every hook it reads (disable one with "enabled": false), so it is not imported`
          : `"hooks.${event}" is not a ${peerLabel(from)} hook event; it is not imported`,
      );
      continue;
    }
    const groups = Array.isArray(list) ? list : [];
    const translated = translatePeerEvent(event, list, importOrigin(input), input.defaults, from);
    const made = new Set(translated.hooks.map((h) => h.name));
    // A hook that runs without a field it has (Claude Code's `if`, `async`, …) is added, and the note says so.
    for (const hook of translated.hooks) {
      if (hook.unsupported !== undefined || input.checks?.has(hook.name)) continue;
      const [, g, h] = hook.name.split('.');
      for (const gap of hook.notYet ?? []) notes.push(`hooks.${event}[${g}].hooks[${h}].${gap}`);
    }
    const existing = Array.isArray(input.existing[event]) ? (input.existing[event] as unknown[]) : [];
    const plinthEvent = peerEvent(from, event);
    groups.forEach((rawGroup, g) => {
      const group = isRecord(rawGroup) ? rawGroup : {};
      const commands = Array.isArray(group.hooks) ? group.hooks : [];
      const matcher = typeof group.matcher === 'string' && group.matcher !== '' ? group.matcher : undefined;
      const kept: unknown[] = [];
      const groupItems: ImportItem[] = [];
      commands.forEach((rawHook, h) => {
        const at = `hooks.${event}[${g}].hooks[${h}]`;
        const command = isRecord(rawHook) && typeof rawHook.command === 'string' ? rawHook.command : JSON.stringify(rawHook);
        const base = { event, ...(plinthEvent && { plinthEvent }), ...(matcher !== undefined && { matcher }), command, at };
        const checked = input.checks?.get(`${event}.${g}.${h}`);
        if (checked !== undefined) {
          groupItems.push({ ...base, action: 'refused', code: checked.code, reason: checked.reason });
          return;
        }
        if (made.has(`${event}.${g}.${h}`)) {
          kept.push(rawHook);
          groupItems.push({ ...base, action: 'add' });
          return;
        }
        const why =
          translated.problems.find((p) => pathOf(p) === at || pathOf(p).startsWith(`${at}.`)) ??
          translated.problems.find((p) => pathOf(p).startsWith(`hooks.${event}[${g}]`) && !pathOf(p).includes('.hooks['));
        groupItems.push({ ...base, action: 'refused', code: why?.code ?? 'PLN_E_HOOK_INVALID', reason: stripWhere(why?.message ?? 'it cannot be read', input.file) });
      });
      if (commands.length === 0) {
        const why = translated.problems.find((p) => pathOf(p).startsWith(`hooks.${event}[${g}]`));
        items.push({ event, command: '', at: `hooks.${event}[${g}]`, action: 'refused', code: why?.code ?? 'PLN_E_HOOK_INVALID', reason: stripWhere(why?.message ?? 'the group has no hooks', input.file) });
        return;
      }
      if (kept.length > 0) {
        const { protocol: _p, ...rest } = group;
        const added = { ...rest, hooks: kept, protocol: from };
        if (existing.some((e) => sameValue(e, added)) || (additions[event] ?? []).some((e) => sameValue(e, added))) {
          for (const item of groupItems) items.push(item.action === 'add' ? { ...item, action: 'present' } : item);
          return;
        }
        (additions[event] ??= []).push(added);
      }
      items.push(...groupItems);
    });
    if (!Array.isArray(list)) {
      items.push({ event, command: '', at: `hooks.${event}`, action: 'refused', code: 'PLN_E_HOOK_INVALID', reason: 'expected a list of matcher groups' });
    }
  }
  return { from, file: input.file, scope: input.scope, items, notes, additions };
}

/** The settings' `hooks` with the plan's groups appended under their events. */
export function applyImport(hooks: Readonly<Record<string, unknown>>, plan: ImportPlan): Record<string, unknown> {
  const next: Record<string, unknown> = { ...hooks };
  for (const [event, groups] of Object.entries(plan.additions)) {
    const current = Array.isArray(next[event]) ? (next[event] as unknown[]) : [];
    next[event] = [...current, ...groups];
  }
  return next;
}

function pathOf(problem: PlinthError): string {
  const path = problem.details?.path;
  return typeof path === 'string' ? path : '';
}

/** A problem's message without the `<file>: <path>: ` it starts with (the table shows where). */
function stripWhere(message: string, file: string): string {
  const rest = message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message;
  return rest.replace(/^hooks[^\s:]*: /, '');
}

/** A Codex CLI config.toml's `[hooks]`: the events' groups, as its hooks.json would hold them. */
async function readCodexToml(file: string, text: string): Promise<{ hooks: Record<string, unknown>; skipped: string[] }> {
  const { parse, TomlError } = await import('smol-toml');
  let data: Record<string, unknown>;
  try {
    data = parse(text) as Record<string, unknown>;
  } catch (error) {
    const at = error instanceof TomlError ? ` at line ${error.line}, column ${error.column}` : '';
    throw new PlinthError('PLN_E_HOOK_IMPORT', `${file} is not valid TOML${at}`, { plugin: 'hooks', cause: error, hint: 'correct the file, then import again' });
  }
  const table = isRecord(data.hooks) ? data.hooks : undefined;
  const { state, ...hooks } = table ?? {};
  if (table === undefined || Object.keys(hooks).length === 0) {
    throw new PlinthError('PLN_E_HOOK_IMPORT', `${file} has no [hooks] tables`, {
      plugin: 'hooks',
      hint: 'a Codex CLI config.toml keeps its hooks as [[hooks.<Event>]] tables, each with [[hooks.<Event>.hooks]] handlers; or import its hooks.json',
    });
  }
  const skipped = Object.keys(data)
    .filter((key) => key !== 'hooks')
    .map((key) => `"${key}": ${Object.hasOwn(SKIPPED.codex, key) ? SKIPPED.codex[key] : `not a hook setting; Codex CLI's "${key}" is not imported`}`);
  const servers = isRecord(data.mcp_servers) ? codexServerCommands(data.mcp_servers) : [];
  if (servers.length > 0) skipped.push(`"mcp_servers": to add them to plinth: ${servers.join('; ')}`);
  if (state !== undefined) skipped.push('"hooks.state": Codex CLI\'s record of the hooks you enabled and trusted there; plinth asks for its own approval (user hooks on first use, workspace hooks with `plinth hooks trust`)');
  return { hooks, skipped };
}

/**
 * `plinth mcp add` lines for a Codex config.toml's `[mcp_servers.<name>]` tables: a program and its
 * arguments, or a URL (`bearer_token_env_var` as an Authorization header that references the
 * variable). An `env` value is never copied (it may be a secret): each variable is passed as a
 * reference to the environment (`-e KEY='${env:KEY}'`).
 */
export function codexServerCommands(servers: Readonly<Record<string, unknown>>): string[] {
  const lines: string[] = [];
  for (const [name, entry] of Object.entries(servers)) {
    if (!isRecord(entry) || entry.enabled === false) continue;
    const env = isRecord(entry.env) ? Object.keys(entry.env).map((key) => `-e ${shellWord(`${key}=\${env:${key}}`)}`) : [];
    if (typeof entry.command === 'string') {
      const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
      lines.push(['plinth mcp add', ...env, shellWord(name), '--', ...[entry.command, ...args].map(shellWord)].join(' '));
    } else if (typeof entry.url === 'string') {
      const bearer = typeof entry.bearer_token_env_var === 'string' ? [`-H ${shellWord(`Authorization: Bearer \${env:${entry.bearer_token_env_var}}`)}`] : [];
      lines.push(['plinth mcp add -t http', ...bearer, shellWord(name), shellWord(entry.url)].join(' '));
    }
  }
  return lines;
}

/** A word as a POSIX shell reads it back: plain when it is safe, else in single quotes. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
