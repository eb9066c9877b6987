/**
 * `plinth hooks import`: the hooks of a Claude Code or Gemini CLI settings file, as plinth would
 * run them, decided before anything is written. Each peer command is read exactly as the hooks
 * plugin reads it at run time ({@link translatePeerEvent}); what it would refuse there (a shell
 * command where the settings allow none, an event without a plinth counterpart, a prompt hook, a
 * bad matcher) is refused here, with the reason. What is added keeps the peer's shape and command
 * strings, with `"protocol"` on each group, in plinth's settings of the chosen scope; its hooks are
 * then trusted exactly as plinth's own (user: on first use; workspace: after approval).
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { type PeerProtocol, PlinthError, describeFileError, isPeerHookEvent, parseJsonText } from 'plinth/sdk';
import type { HookDefaults } from '../definition.js';
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

/** Reads the peer's file; its `hooks` object. @throws PlinthError `PLN_E_HOOK_IMPORT` when it cannot be read or holds no hooks. */
export async function readPeerHooks(file: string, from: PeerProtocol): Promise<Record<string, unknown>> {
  const text = await readFile(file, 'utf8').catch((cause: unknown) => {
    throw new PlinthError('PLN_E_HOOK_IMPORT', `cannot read ${file}: ${describeFileError(cause)}`, {
      plugin: 'hooks',
      cause,
      hint: `give the ${peerLabel(from)} settings file to import: plinth hooks import --from ${from} <file>`,
    });
  });
  const parsed = parseJsonText(text);
  if (!parsed.ok) {
    throw new PlinthError('PLN_E_HOOK_IMPORT', `${file} is not valid JSON: ${parsed.error.problem} at line ${parsed.error.line}, column ${parsed.error.column}`, { plugin: 'hooks', hint: 'correct the file, then import again' });
  }
  const hooks = isRecord(parsed.value) ? parsed.value.hooks : undefined;
  if (!isRecord(hooks)) {
    throw new PlinthError('PLN_E_HOOK_IMPORT', `${file} has no "hooks" object`, { plugin: 'hooks', hint: `a ${peerLabel(from)} settings file keeps its hooks under "hooks": { "<Event>": [{ "matcher", "hooks": [...] }] }` });
  }
  return hooks;
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
}): ImportPlan {
  const { from, peerHooks } = input;
  const items: ImportItem[] = [];
  const notes: string[] = [];
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
    const translated = translatePeerEvent(
      event,
      list,
      { source: input.scope, origin: input.file, baseDir: input.scope === 'user' ? input.home : input.workspace, projectDir: input.workspace, protocol: from },
      input.defaults,
      from,
    );
    const made = new Set(translated.hooks.map((h) => h.name));
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
