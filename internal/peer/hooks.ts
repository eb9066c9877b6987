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

/** Claude Code's hook events plinth runs (the others are reported as unsupported where they are written). */
export const CLAUDE_HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SessionStart', 'SessionEnd', 'PreCompact', 'Notification'] as const;

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

/** Claude Code events that exist there but have no plinth counterpart: reported, never run. */
export const CLAUDE_UNSUPPORTED_EVENTS = ['SubagentStop', 'PermissionRequest', 'PostToolUseFailure', 'SubagentStart', 'PermissionDenied'] as const;

/**
 * The handler types plinth runs, per peer: Claude Code's five (`command`; `http`, `mcp_tool`: in
 * plinth's process; `prompt`, `agent`: through the host's `model` service), Gemini CLI's `command`.
 */
export const PEER_HOOK_TYPES = {
  claude: ['command', 'http', 'mcp_tool', 'prompt', 'agent'],
  gemini: ['command'],
} as const satisfies Record<PeerProtocol, readonly string[]>;

/** What plinth does not do yet with one field of a peer hook, as `ext info`, `hooks validate` and the hooks plugin say it. */
export interface PeerHookGap {
  /** The field as written: `type`, `if`, `async`, `asyncRewake`, `once`, `shell`. */
  readonly field: string;
  /** Starts with "Claude Code field not supported yet" (or "… hook type …"), then what plinth does instead. */
  readonly reason: string;
  /**
   * True when the hook cannot run at all (a hook of a type plinth does not run, see {@link PEER_HOOK_TYPES}; a PowerShell
   * command): it never runs, and on a gate event it blocks the event until it is removed or supported.
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
  if (typeof hook.type === 'string' && !(PEER_HOOK_TYPES[protocol] as readonly string[]).includes(hook.type)) {
    gaps.push({
      field: 'type',
      reason: `${peer} hook type "${hook.type}" not supported yet: plinth runs ${PEER_HOOK_TYPES[protocol].map((t) => `"${t}"`).join(', ')} hooks of ${peer}, so this hook never runs; on a gate event (PreToolUse, BeforeTool, …) it blocks the event until it is removed or plinth supports it`,
      unrunnable: true,
    });
    return gaps;
  }
  if (protocol !== 'claude') return gaps;
  if (hook.shell !== undefined && hook.shell !== 'bash') {
    gaps.push({
      field: 'shell',
      reason: `Claude Code field not supported yet: "shell": ${JSON.stringify(hook.shell)} (plinth runs a command without a shell, or through bash with "shell": "bash"), so this hook never runs; on a gate event it blocks the event until it is removed or plinth supports it`,
      unrunnable: true,
    });
  }
  if (hook.if !== undefined) {
    gaps.push({ field: 'if', reason: 'Claude Code field not supported yet: "if" is not evaluated, so the hook runs on every call its matcher matches (as Claude Code does when it cannot read the condition)', unrunnable: false });
  }
  if (hook.async === true) {
    gaps.push({ field: 'async', reason: 'Claude Code field not supported yet: "async": true is not honoured, so the hook runs in the foreground, the event waits for it and its answer counts', unrunnable: false });
  }
  if (hook.asyncRewake === true) {
    gaps.push({ field: 'asyncRewake', reason: 'Claude Code field not supported yet: "asyncRewake": true is not honoured, so the hook runs in the foreground, the event waits for it and its answer counts (an exit 2 reason still reaches the model)', unrunnable: false });
  }
  if (hook.once === true) {
    gaps.push({ field: 'once', reason: 'Claude Code field not supported yet: "once": true is not honoured, so the hook runs every time its event fires, not once per session', unrunnable: false });
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
