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
