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
export type PeerProtocol = 'claude' | 'gemini' | 'codex';

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
 * Codex CLI's hook events (its `hooks.json`, `[hooks]` in `config.toml`, a Codex plugin's hooks).
 * They are spelled as Claude Code's, so an event name never says a section is Codex's: only a
 * group's `"protocol": "codex"` (what `hooks import --from codex` writes) or a Codex plugin's
 * manifest does ({@link peerEventsOf} leaves Codex out for that reason).
 */
export const CODEX_HOOK_EVENTS = ['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PreCompact', 'PostCompact', 'SessionStart', 'UserPromptSubmit', 'SubagentStart', 'SubagentStop', 'Stop'] as const;

/**
 * Claude Code events that exist there but have no plinth counterpart: reported, never run. None
 * today (every event of its hooks reference, late 2026, has one); kept for the next one it adds.
 */
export const CLAUDE_UNSUPPORTED_EVENTS: readonly string[] = [];

/** What ignoring each Claude Code field on a Codex CLI hook means, as Codex runs it. */
const CODEX_IGNORES = {
  args: 'the command runs as written, without these arguments',
  if: 'the hook runs on every call its matcher matches',
  once: 'the hook runs every time its event fires',
  shell: 'the command runs as any Codex command',
  asyncRewake: 'the hook runs in the foreground',
} as const;

/**
 * The handler types plinth runs, per peer: Claude Code's five (`command`; `http`, `mcp_tool`: in
 * plinth's process; `prompt`, `agent`: through the host's `model` service), Gemini CLI's and Codex CLI's `command`.
 */
export const PEER_HOOK_TYPES = {
  claude: ['command', 'http', 'mcp_tool', 'prompt', 'agent'],
  gemini: ['command'],
  // Codex CLI runs command hooks only (its `prompt` and `agent` never run there either).
  codex: ['command'],
} as const satisfies Record<PeerProtocol, readonly string[]>;

/** What plinth does not do yet with one field of a peer hook, as `ext info`, `hooks validate` and the hooks plugin say it. */
export interface PeerHookGap {
  /** The field as written: `type`, `shell`. */
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
  const peer = protocol === 'claude' ? 'Claude Code' : protocol === 'codex' ? 'Codex CLI' : 'Gemini CLI';
  const gaps: PeerHookGap[] = [];
  if (typeof hook.type === 'string' && !(PEER_HOOK_TYPES[protocol] as readonly string[]).includes(hook.type)) {
    gaps.push({
      field: 'type',
      reason: `${peer} hook type "${hook.type}" not supported yet: plinth runs ${PEER_HOOK_TYPES[protocol].map((t) => `"${t}"`).join(', ')} hooks of ${peer}, so this hook never runs; on a gate event (PreToolUse, BeforeTool, …) it blocks the event until it is removed or plinth supports it`,
      unrunnable: true,
    });
    return gaps;
  }
  if (protocol === 'codex') {
    if (hook.async === true) gaps.push({ field: 'async', reason: 'Codex CLI field not supported yet: "async": true is not honoured, so the hook runs in the foreground, the event waits for it and its answer counts', unrunnable: false });
    // Claude Code's own fields in a Codex hooks file (a plugin written for both): Codex ignores them, and so does plinth.
    for (const field of ['args', 'if', 'once', 'shell', 'asyncRewake'] as const) {
      if (hook[field] !== undefined) gaps.push({ field, reason: `Claude Code's "${field}" is not a Codex CLI hook field: Codex ignores it, and so does plinth (${CODEX_IGNORES[field]})`, unrunnable: false });
    }
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

/**
 * The peers whose event names say which peer a section speaks: Claude Code and Gemini CLI (both
 * for `SessionStart`, `SessionEnd`, `Notification`). Codex CLI spells its events as Claude Code
 * does, so it is never inferred from a name: see {@link isPeerEventOf}.
 */
export function peerEventsOf(name: string): PeerProtocol[] {
  const peers: PeerProtocol[] = [];
  if ((CLAUDE_HOOK_EVENTS as readonly string[]).includes(name) || (CLAUDE_UNSUPPORTED_EVENTS as readonly string[]).includes(name)) peers.push('claude');
  if ((GEMINI_HOOK_EVENTS as readonly string[]).includes(name)) peers.push('gemini');
  return peers;
}

/** Whether `name` is an event of `protocol` (a Claude Code event plinth does not run counts: it is reported). */
export function isPeerEventOf(protocol: PeerProtocol, name: string): boolean {
  return protocol === 'codex' ? (CODEX_HOOK_EVENTS as readonly string[]).includes(name) : peerEventsOf(name).includes(protocol);
}

/** Whether `name` is an event of Claude Code, Gemini CLI or Codex CLI (a key of the peers' settings shape). */
export function isPeerHookEvent(name: string): boolean {
  return peerEventsOf(name).length > 0 || (CODEX_HOOK_EVENTS as readonly string[]).includes(name);
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
