/**
 * The peers' hooks settings shape, as Claude Code and Gemini CLI write it in their
 * `settings.json` and in a plugin's or extension's `hooks/hooks.json`:
 *
 * ```json
 * "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "…", "timeout": 30 }] }] }
 * ```
 *
 * The hooks plugin accepts it in a plinth `hooks` section (settings or manifest) beside plinth's own
 * definitions and translates it. This module holds only what a plugin that builds such a section
 * needs (the extensions plugin, for a peer plugin's folder): the event names and
 * {@link tagPeerHooks}, which says which peer a section comes from.
 */

/** The peer protocols. */
export type PeerProtocol = 'claude' | 'gemini';

/** Claude Code's hook events (its hooks reference, late 2026, with PreModelSwitch and PostModelSwitch of v2.1.251). */
export const CLAUDE_HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
  'SessionStart',
  'SessionEnd',
  'PreCompact',
  'PostCompact',
  'Notification',
  'Setup',
  'InstructionsLoaded',
  'UserPromptExpansion',
  'PermissionRequest',
  'PermissionDenied',
  'PostToolUseFailure',
  'PostToolBatch',
  'SubagentStart',
  'SubagentStop',
  'TaskCreated',
  'TaskCompleted',
  'TeammateIdle',
  'StopFailure',
  'Elicitation',
  'ElicitationResult',
  'ConfigChange',
  'CwdChanged',
  'DirectoryAdded',
  'FileChanged',
  'WorktreeCreate',
  'WorktreeRemove',
  'MessageDisplay',
  'PreModelSwitch',
  'PostModelSwitch',
] as const;

/** Gemini CLI's hook events. */
export const GEMINI_HOOK_EVENTS = [
  'BeforeTool',
  'AfterTool',
  'BeforeAgent',
  'AfterAgent',
  'BeforeModel',
  'AfterModel',
  'BeforeToolSelection',
  'SessionStart',
  'SessionEnd',
  'PreCompress',
  'Notification',
] as const;

/**
 * Claude Code events that exist there but have no plinth counterpart: reported, never run. None
 * today (every event of its hooks reference, late 2026, has one); kept for the next one it adds.
 */
export const CLAUDE_UNSUPPORTED_EVENTS: readonly string[] = [];

/** What plinth does not do yet with one field of a peer hook, as `ext info`, `hooks validate` and the hooks plugin say it. */
export interface PeerHookGap {
  /** The field as written: `type`, `shell`. */
  readonly field: string;
  /** Starts with "Claude Code field not supported yet" (or "… hook type …"), then what plinth does instead. */
  readonly reason: string;
  /**
   * True when the hook cannot run at all (a `prompt`, `agent`, `http` or `mcp_tool` hook, a `shell`
   * plinth does not know): it never runs, and on a gate event it blocks the event until it is removed or supported.
   * False when it runs without the field (its guard is never weaker for it: it runs at least as often).
   */
  readonly unrunnable: boolean;
}

/**
 * The fields of one peer hook (`{ "type": "command", "command": …, … }`) that plinth does not honour
 * yet, each with what happens instead. The one table of them: the hooks plugin runs (or refuses)
 * a hook by it, the extensions plugin lists it in `ext info` for a peer plugin's hooks.
 */
export function peerHookGaps(protocol: PeerProtocol, hook: unknown): PeerHookGap[] {
  if (!isRecord(hook)) return [];
  const peer = protocol === 'claude' ? 'Claude Code' : 'Gemini CLI';
  const gaps: PeerHookGap[] = [];
  if (typeof hook.type === 'string' && hook.type !== 'command') {
    gaps.push({
      field: 'type',
      reason: `${peer} hook type "${hook.type}" not supported yet: plinth runs only "command" hooks, so this hook never runs; on a gate event (PreToolUse, BeforeTool, …) it blocks the event until it is removed or plinth supports it`,
      unrunnable: true,
    });
    return gaps;
  }
  if (protocol !== 'claude') return gaps;
  // `if`, `async`, `asyncRewake`, `once`, `statusMessage` and `shell` "bash", "sh" or "powershell" are honoured (the hooks plugin's README).
  if (hook.shell !== undefined && hook.shell !== 'bash' && hook.shell !== 'sh' && hook.shell !== 'powershell') {
    gaps.push({
      field: 'shell',
      reason: `Claude Code field not supported yet: "shell": ${JSON.stringify(hook.shell)} (plinth runs a command through "bash", "sh" or "powershell"), so this hook never runs; on a gate event it blocks the event until it is removed or corrected`,
      unrunnable: true,
    });
  }
  return gaps;
}

/** The peers that name an event `name` (both for `SessionStart`, `SessionEnd`, `Notification`). */
export function peerEventsOf(name: string): PeerProtocol[] {
  const peers: PeerProtocol[] = [];
  if ((CLAUDE_HOOK_EVENTS as readonly string[]).includes(name) || (CLAUDE_UNSUPPORTED_EVENTS as readonly string[]).includes(name)) peers.push('claude');
  if ((GEMINI_HOOK_EVENTS as readonly string[]).includes(name)) peers.push('gemini');
  return peers;
}

/** Whether `name` is an event of Claude Code or Gemini CLI (a key of the peers' settings shape). */
export function isPeerHookEvent(name: string): boolean {
  return peerEventsOf(name).length > 0;
}

/**
 * A copy of a peer `hooks` section (from `.claude/settings.json`, `hooks/hooks.json`, …) with
 * `"protocol": protocol` on each matcher group, so that the hooks plugin reads every group in that
 * peer's dialect — `SessionStart` is an event of both peers. Keys that are not peer events, and
 * values that are not lists of groups, are kept as they are (the hooks plugin reports them).
 */
export function tagPeerHooks(hooks: Readonly<Record<string, unknown>>, protocol: PeerProtocol): Record<string, unknown> {
  const tagged: Record<string, unknown> = {};
  for (const [event, groups] of Object.entries(hooks)) {
    const value = isPeerHookEvent(event) && Array.isArray(groups) ? groups.map((g: unknown) => (isRecord(g) ? { ...g, protocol } : g)) : groups;
    Object.defineProperty(tagged, event, { value, enumerable: true, writable: true, configurable: true });
  }
  return tagged;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
