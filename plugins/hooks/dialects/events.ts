/**
 * The peers' event names and plinth's events they stand for. Gemini CLI's events are plinth's
 * own (plinth's names come from the same hook architecture); Claude Code's are fewer and named
 * after what the user sees; Codex CLI uses Claude Code's names for the events it has.
 */
import type { EventName } from 'plinth/sdk';
import type { PeerProtocol } from 'plinth/internal';

export const PEER_EVENTS: Readonly<Record<PeerProtocol, Readonly<Record<string, EventName>>>> = {
  claude: {
    PreToolUse: 'before_tool',
    PostToolUse: 'after_tool',
    UserPromptSubmit: 'before_agent',
    Stop: 'after_agent',
    SessionStart: 'session_start',
    SessionEnd: 'session_end',
    PreCompact: 'pre_compress',
    Notification: 'notification',
  },
  gemini: {
    BeforeTool: 'before_tool',
    AfterTool: 'after_tool',
    BeforeAgent: 'before_agent',
    AfterAgent: 'after_agent',
    BeforeModel: 'before_model',
    AfterModel: 'after_model',
    BeforeToolSelection: 'before_tool_selection',
    SessionStart: 'session_start',
    SessionEnd: 'session_end',
    PreCompress: 'pre_compress',
    Notification: 'notification',
  },
  // Codex CLI: Claude Code's names, plus PostCompact; its PermissionRequest and subagent events have no plinth event yet.
  codex: {
    PreToolUse: 'before_tool',
    PostToolUse: 'after_tool',
    UserPromptSubmit: 'before_agent',
    Stop: 'after_agent',
    SessionStart: 'session_start',
    PreCompact: 'pre_compress',
    PostCompact: 'post_compress',
  },
};

/** Codex CLI events plinth has no event for, and why each is left out. */
export const CODEX_WITHOUT_COUNTERPART: Readonly<Record<string, string>> = {
  PermissionRequest: "plinth's approval_request is answered by the host; a PreToolUse hook's deny reaches it",
  SubagentStart: 'plinth has no sub-agent events',
  SubagentStop: 'plinth has no sub-agent events',
};

/** Claude Code events plinth has no event for, and why each is left out. */
export const CLAUDE_WITHOUT_COUNTERPART: Readonly<Record<string, string>> = {
  SubagentStop: 'plinth has no sub-agent events',
  SubagentStart: 'plinth has no sub-agent events',
  PermissionRequest: "plinth's approval_request is answered by the host; a PreToolUse hook's \"ask\" reaches it",
  PermissionDenied: 'plinth has no event for a denied permission',
  PostToolUseFailure: 'plinth fires after_tool for a failed call too: use PostToolUse',
};

/** Events on which the peer never blocks: a block (exit 2, `decision`, `continue: false`) becomes a message. */
export const ADVISORY: Readonly<Record<PeerProtocol, ReadonlySet<EventName>>> = {
  claude: new Set<EventName>(['session_start', 'session_end', 'pre_compress', 'notification']),
  gemini: new Set<EventName>(['session_start', 'session_end', 'pre_compress', 'notification']),
  codex: new Set<EventName>(['session_start', 'pre_compress', 'post_compress']),
};

/** The plinth event `name` stands for in `protocol`'s dialect. */
export function peerEvent(protocol: PeerProtocol, name: string): EventName | undefined {
  return Object.hasOwn(PEER_EVENTS[protocol], name) ? PEER_EVENTS[protocol][name] : undefined;
}

/** The name `protocol` gives plinth's `event`, when it has one. */
export function peerNameOf(protocol: PeerProtocol, event: EventName): string | undefined {
  return Object.entries(PEER_EVENTS[protocol]).find(([, e]) => e === event)?.[0];
}

/** The peer's own name, for messages. */
export function peerLabel(protocol: PeerProtocol): string {
  return protocol === 'claude' ? 'Claude Code' : protocol === 'codex' ? 'Codex CLI' : 'Gemini CLI';
}
