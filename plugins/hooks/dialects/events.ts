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
    PostCompact: 'post_compress',
    Notification: 'notification',
    Setup: 'setup',
    InstructionsLoaded: 'instructions_loaded',
    UserPromptExpansion: 'prompt_expansion',
    // Claude Code runs these when it is about to show a permission prompt: plinth's approval_request, which a host
    // emits before asking the user (and the hooks plugin emits when a hook answers "ask").
    PermissionRequest: 'approval_request',
    PermissionDenied: 'permission_denied',
    PostToolUseFailure: 'after_tool_failure',
    PostToolBatch: 'after_tool_batch',
    SubagentStart: 'subagent_start',
    SubagentStop: 'subagent_stop',
    TaskCreated: 'task_created',
    TaskCompleted: 'task_completed',
    TeammateIdle: 'teammate_idle',
    StopFailure: 'after_agent_failure',
    Elicitation: 'elicitation',
    ElicitationResult: 'elicitation_result',
    ConfigChange: 'config_change',
    CwdChanged: 'cwd_change',
    DirectoryAdded: 'directory_added',
    FileChanged: 'file_change',
    WorktreeCreate: 'worktree_create',
    WorktreeRemove: 'worktree_remove',
    MessageDisplay: 'message_display',
    PreModelSwitch: 'before_model_switch',
    PostModelSwitch: 'after_model_switch',
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
  // Codex CLI: Claude Code's names for the events it has (its PermissionRequest, SubagentStart and SubagentStop read as Codex reads them: output.ts).
  codex: {
    PreToolUse: 'before_tool',
    PermissionRequest: 'approval_request',
    PostToolUse: 'after_tool',
    UserPromptSubmit: 'before_agent',
    Stop: 'after_agent',
    SubagentStart: 'subagent_start',
    SubagentStop: 'subagent_stop',
    SessionStart: 'session_start',
    PreCompact: 'pre_compress',
    PostCompact: 'post_compress',
  },
};

/** Codex CLI events plinth has no event for, and why each is left out (none today: every event of its hooks docs has one). */
export const CODEX_WITHOUT_COUNTERPART: Readonly<Record<string, string>> = {};

/** Claude Code events plinth has no event for, and why each is left out (none today: every event of its hooks reference has one). */
export const CLAUDE_WITHOUT_COUNTERPART: Readonly<Record<string, string>> = {};

/**
 * Events on which the peer never blocks: a block (`decision`, `continue: false`) becomes a message,
 * and exit 2 is read as {@link EXIT_2} says.
 */
export const ADVISORY: Readonly<Record<PeerProtocol, ReadonlySet<EventName>>> = {
  claude: new Set<EventName>([
    'session_start',
    'session_end',
    'notification',
    'setup',
    'instructions_loaded',
    'permission_denied',
    'subagent_start',
    'after_agent_failure',
    'post_compress',
    'cwd_change',
    'directory_added',
    'file_change',
    'worktree_remove',
    'message_display',
    'after_model_switch',
  ]),
  gemini: new Set<EventName>(['session_start', 'session_end', 'pre_compress', 'notification']),
  codex: new Set<EventName>(['session_start', 'subagent_start', 'pre_compress', 'post_compress']),
};

/**
 * What exit 2 means where it does not simply block (Claude Code's "exit code 2 behavior per event"):
 * `feedback`, the event is allowed and stderr goes to the model (the tool already ran); `ignored`,
 * nothing (the peer drops the exit code and stderr, and reads only the JSON a hook prints);
 * `message`, stderr is said to the user; `failure`, a failed run like any other non-zero exit (its
 * `onError` decides). Any event not named here and not advisory: a block. On advisory events not
 * named here: a message.
 */
export const EXIT_2: Readonly<Record<PeerProtocol, Readonly<Partial<Record<EventName, 'feedback' | 'ignored' | 'message' | 'failure'>>>>> = {
  claude: {
    after_tool: 'feedback',
    after_tool_failure: 'feedback',
    approval_request: 'ignored',
    permission_denied: 'ignored',
    notification: 'ignored',
    after_agent_failure: 'ignored',
    instructions_loaded: 'ignored',
    worktree_remove: 'ignored',
    message_display: 'ignored',
    directory_added: 'ignored',
  },
  gemini: {},
  // Codex CLI: exit 2 blocks, except on PostToolUse, where the call already ran and stderr goes to the model, and on
  // SubagentStart, where it is a failed run ("hook exited with code 2"). On PermissionRequest it denies with stderr
  // the reason, and with an empty stderr the run fails (output.ts).
  codex: { after_tool: 'feedback', subagent_start: 'failure' },
};

/**
 * Events on which Claude Code discards `continue: false` (and `stopReason`): no stop of the agent
 * there, whatever the hook says. Gemini CLI ignores flow control on its advisory events.
 */
export const CONTINUE_IGNORED: Readonly<Record<PeerProtocol, ReadonlySet<EventName>>> = {
  claude: new Set<EventName>([
    'notification',
    'session_end',
    'instructions_loaded',
    'after_agent_failure',
    'pre_compress',
    'post_compress',
    'config_change',
    'cwd_change',
    'directory_added',
    'file_change',
    'worktree_create',
    'worktree_remove',
    'elicitation',
    'elicitation_result',
    'task_created',
    'message_display',
    'setup',
  ]),
  gemini: new Set<EventName>(['session_start', 'session_end', 'pre_compress', 'notification']),
  // Codex CLI: as Claude Code on the events it shares (its PreToolUse refuses `continue: false` outright: output.ts `codexRefusal`).
  // Its SubagentStart reads no flow control at all; SubagentStop's `continue: false` stops the sub-agent's turn, as Stop's.
  codex: new Set<EventName>(['pre_compress', 'post_compress', 'subagent_start']),
};

/** Events on which Claude Code adds a hook's plain-text stdout to the model's context. */
export const PLAIN_TEXT_CONTEXT: ReadonlySet<EventName> = new Set<EventName>(['before_agent', 'session_start', 'prompt_expansion', 'after_model_switch']);

/** The plinth event `name` stands for in `protocol`'s dialect. */
export function peerEvent(protocol: PeerProtocol, name: string): EventName | undefined {
  return Object.hasOwn(PEER_EVENTS[protocol], name) ? PEER_EVENTS[protocol][name] : undefined;
}

/** Per peer, plinth's event → the peer's name (the first name listed for it), made once: asked at every run of a peer hook. */
const PEER_NAMES: Readonly<Record<PeerProtocol, ReadonlyMap<EventName, string>>> = {
  claude: namesOf('claude'),
  gemini: namesOf('gemini'),
  codex: namesOf('codex'),
};

function namesOf(protocol: PeerProtocol): ReadonlyMap<EventName, string> {
  const names = new Map<EventName, string>();
  for (const [name, event] of Object.entries(PEER_EVENTS[protocol])) if (!names.has(event)) names.set(event, name);
  return names;
}

/** The name `protocol` gives plinth's `event`, when it has one. */
export function peerNameOf(protocol: PeerProtocol, event: EventName): string | undefined {
  return PEER_NAMES[protocol].get(event);
}

/** The peer's own name, for messages. */
export function peerLabel(protocol: PeerProtocol): string {
  return protocol === 'claude' ? 'Claude Code' : protocol === 'codex' ? 'Codex CLI' : 'Gemini CLI';
}
