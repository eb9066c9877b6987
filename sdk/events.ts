/**
 * Agent events: the points of a host's lifecycle at which plugins and external
 * hooks are asked for a decision.
 */

/** Canonical event names (hook architecture), plus the hook protocol's extra events. */
export const EVENTS = [
  'session_start',
  'session_end',
  'before_agent',
  'after_agent',
  'before_model',
  'after_model',
  'before_tool_selection',
  'before_tool',
  'after_tool',
  'pre_compress',
  'post_compress',
  'notification',
  'on_error',
  'file_change',
  'git_commit',
  'context_overflow',
  'approval_request',
  'custom',
  // The events of Claude Code's hook system that the list above does not cover (its names in the
  // hooks plugin's README). A host emits the ones its lifecycle has; `hooks validate` tells which
  // configured hooks a host that declares its events (`hostEvents`) never fires.
  /** One-time preparation before any session (Claude Code's `Setup`: `--init-only`, `--init`, `--maintenance`); context `trigger`. */
  'setup',
  /** An instruction file (`CLAUDE.md`, a rules file) was loaded into the model's context; context `file`, `memoryType`, `loadReason`. */
  'instructions_loaded',
  /** A typed command (a slash command, an MCP prompt) is about to expand into a prompt; can be blocked. Context `command`, `args`, `expansionType`, `prompt`. */
  'prompt_expansion',
  /** The host's permission system denied a tool call on its own (an automatic mode); context `tool`, `args`, `reason`. A hook may ask for a retry (`Decision.host.retry`). */
  'permission_denied',
  /** A tool call failed (Claude Code's `PostToolUseFailure`; `after_tool` is for calls that succeeded); context `tool`, `args`, `error`. */
  'after_tool_failure',
  /** Every call of a batch of parallel tool calls resolved, before the next model call; context `calls`. A block stops the agent loop. */
  'after_tool_batch',
  /** A sub-agent was started; context `agentId`, `agentType`. */
  'subagent_start',
  /** A sub-agent finished responding; a block keeps it working (as `after_agent`'s). Context `agentId`, `agentType`, `response`. */
  'subagent_stop',
  /** A task is being created; a block cancels it. Context `taskId`, `subject`, `description`. */
  'task_created',
  /** A task is being marked completed; a block keeps it open. Context as `task_created`. */
  'task_completed',
  /** A teammate of an agent team is about to go idle; a block keeps it working. Context `teammate`. */
  'teammate_idle',
  /** The agent's turn ended on an error of the model's API rather than a response (Claude Code's `StopFailure`); context `error`, `details`. */
  'after_agent_failure',
  /** An MCP server asks the user for input during a tool call; a hook may answer for the user (`Decision.host.elicitation`). Context `server`, `message`, `schema`. */
  'elicitation',
  /** The user answered an MCP server's request for input, before the answer is sent; a hook may change or block it. Context `server`, `action`, `content`. */
  'elicitation_result',
  /** A settings file changed while the host runs; a block keeps the change from taking effect. Context `source`, `file`. */
  'config_change',
  /** The agent's working directory changed; context `from`, `to`. */
  'cwd_change',
  /** A working directory was added while the host runs; context `directory`, `source`. */
  'directory_added',
  /** An isolated working copy is to be made; a hook makes it and says where (`Decision.host.worktreePath`). Context `name`. */
  'worktree_create',
  /** An isolated working copy is being removed; context `path`. */
  'worktree_remove',
  /** Assistant text is being shown to the user; a hook may change what is shown (`Decision.host.displayContent`), never what the model sees. Context `delta`, `final`. */
  'message_display',
  /** The user asked to switch models, before the switch; a block keeps the current model. Context `from`, `to`. */
  'before_model_switch',
  /** The session's model changed; context `from`, `to`. */
  'after_model_switch',
] as const;

/** A canonical event name. */
export type EventName = (typeof EVENTS)[number];

/**
 * Events whose decision gates what the host does next: a tool call, a model
 * call, an agent turn, the tools offered, an approval, and what a guard keeps
 * out in the peers too: a command's expansion into a prompt, a model switch, a
 * settings change, an isolated working copy (made by the hook, so failing makes
 * none), an answer to an MCP server's request for input. They fail closed: a
 * guard that cannot run blocks them (a plugin lists the ones it guards in its
 * manifest's `guards`).
 *
 * Events that can be blocked but are not gates (`after_tool_batch`,
 * `subagent_stop`, `task_created`, `task_completed`, `teammate_idle`,
 * `elicitation_result`, `pre_compress`): a block there is a hook's decision to
 * keep working or to undo, and a hook that cannot run lets them through.
 */
export const GATE_EVENTS = [
  'before_agent',
  'before_model',
  'before_tool_selection',
  'before_tool',
  'approval_request',
  'prompt_expansion',
  'before_model_switch',
  'config_change',
  'worktree_create',
  'elicitation',
] as const satisfies readonly EventName[];

/** Whether `event` (a canonical name) is one of the {@link GATE_EVENTS}. */
export function isGateEvent(event: EventName): boolean {
  return (GATE_EVENTS as readonly EventName[]).includes(event);
}

/**
 * The hook protocol's spellings, accepted wherever an event name is taken.
 * `pre-execution` and `post-execution` wrap one model invocation in the protocol
 * ("before LLM execution starts"), so they alias the model events.
 */
export const EVENT_ALIASES: Readonly<Record<string, EventName>> = {
  'pre-execution': 'before_model',
  'post-execution': 'after_model',
  'pre-tool-call': 'before_tool',
  'post-tool-call': 'after_tool',
  'on-error': 'on_error',
  'on-file-change': 'file_change',
  'on-git-commit': 'git_commit',
  'on-session-start': 'session_start',
  'on-session-end': 'session_end',
  'on-context-overflow': 'context_overflow',
  'on-approval-request': 'approval_request',
};

const CANONICAL: ReadonlySet<string> = new Set(EVENTS);

/** The canonical name for `name` (itself or an alias), or `undefined` when it names no event. */
export function canonicalEvent(name: string): EventName | undefined {
  if (CANONICAL.has(name)) return name as EventName;
  // hasOwn: "constructor" or "__proto__" must not find Object.prototype's members.
  return Object.hasOwn(EVENT_ALIASES, name) ? EVENT_ALIASES[name] : undefined;
}

/** What one event handler may answer. Returning nothing means "allow, no change". */
export interface EventResult {
  /** `false` blocks the operation; later handlers do not run. */
  allow?: boolean;
  /** Shown to the user. When blocking, the (first) message is the reason. */
  message?: string | readonly string[];
  /** Added to the model's context by the host. */
  systemMessage?: string | readonly string[];
  /** A replacement context, seen by later handlers and returned to the caller. */
  context?: Record<string, unknown>;
  /** What inside the plugin decided, e.g. an external hook's id; reported as `blockedBy.by`. */
  by?: string;
  /** When blocking because something could not run (rather than because it decided no): its `PLN_E_…` code, reported as `blockedBy.code`. */
  code?: string;
  /** When blocking: what the user can do about it (the command that approves, the setting to correct), reported as `blockedBy.fix`. */
  fix?: string;
  /** What the handler asks the host to do beyond allowing or blocking; merged into `Decision.host` (see {@link HostDirectives}). */
  host?: HostDirectives;
}

/**
 * What handlers ask the host to do beyond allowing or blocking the event, for a host to honour
 * where its lifecycle has the matching step (each field is absent unless a handler set it). The
 * hooks plugin fills it from the peers' outputs (Claude Code, Gemini CLI); a host that has no
 * such step ignores the field. When several handlers set one field, the first (in handler order)
 * wins for `stop` and `defer`, the last for the others; `watchPaths` are joined.
 */
export interface HostDirectives {
  /**
   * Stop the agent loop after this event (a peer hook's `continue: false`; `reason` its
   * `stopReason`, for the user). Set with or without a block: the host ends the turn, not only
   * the operation the event gated.
   */
  stop?: { reason?: string };
  /**
   * Pause at this tool call and exit so that the caller can resume it later (Claude Code's
   * `permissionDecision: "defer"` on `before_tool`): the tool does not run; a host that cannot
   * pause treats the call as not decided (ask as usual). `reason` is the hook's, when it gave one.
   */
  defer?: { reason?: string };
  /**
   * The answer to a permission prompt, given for the user (Claude Code's `PermissionRequest`
   * `decision`, on `approval_request`): `allow` also sets context `approved: true`, `deny` blocks.
   * `updatedPermissions` are the peer's permission update entries (`addRules`, `setMode`, …) for
   * the host to apply; `interrupt` (with `deny`) asks the host to stop the agent.
   */
  permission?: {
    behavior: 'allow' | 'deny';
    updatedPermissions?: ReadonlyArray<Record<string, unknown>>;
    message?: string;
    interrupt?: boolean;
  };
  /** Tell the model it may retry the denied tool call (`permission_denied`, Claude Code's `retry: true`). */
  retry?: boolean;
  /**
   * Replace the tool's output the model sees (`after_tool`: Claude Code's `updatedToolOutput` or
   * `updatedMCPToolOutput`). The tool already ran: only what the model reads changes.
   */
  toolOutput?: unknown;
  /** Name the session (Claude Code's `sessionTitle`, on `session_start` and `before_agent`). */
  sessionTitle?: string;
  /** Where the hook made the working copy (`worktree_create`): a hook's path on stdout, or `worktreePath`. */
  worktreePath?: string;
  /** Call this tool next; its result replaces the result of the call that just ran (Gemini CLI's `tailToolCallRequest`, on `after_tool`). */
  tailToolCall?: { name: string; args: Record<string, unknown> };
  /** Clear the model's conversation history, keeping what the user sees (Gemini CLI's `clearContext`, on `after_agent`). */
  clearContext?: boolean;
  /** The answer to an MCP server's request for input, given for the user (`elicitation`, `elicitation_result`). */
  elicitation?: { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
  /** Show this instead of the text being displayed (`message_display`); what the model sees is unchanged. */
  displayContent?: string;
  /** Absolute paths to watch for `file_change` from now on (Claude Code's `watchPaths`, on `session_start`, `cwd_change`, `file_change`). */
  watchPaths?: string[];
}

/** Who blocked an event, and why. */
export interface BlockedBy {
  /** The plugin whose handler blocked (or whose handler failed, which blocks). */
  plugin: string;
  /** What inside that plugin decided, when it says (an external hook's id, for instance). */
  by?: string;
  /** The reason it gave, if any. */
  reason?: string;
  /** Set when the block comes from a failure rather than a decision. */
  code?: string;
  /** What the user can do about it, when the blocker said (a command, a setting to correct). */
  fix?: string;
}

/** The combined answer of every handler of one event. */
export interface Decision {
  allow: boolean;
  messages: string[];
  systemMessages: string[];
  /** The context after every handler's changes. */
  context: Record<string, unknown>;
  /** Present when `allow` is false. */
  blockedBy?: BlockedBy;
  /** Present when a handler asked the host for more than allow or block: stop the loop, defer a call, a title, … (see {@link HostDirectives}). */
  host?: HostDirectives;
}

/** A handler of one event, as a plugin registers it with `kernel.on`. */
export type EventHandler = (
  context: Readonly<Record<string, unknown>>,
  event: EventName,
) => EventResult | void | Promise<EventResult | void>;

/**
 * `later` merged over `earlier`, as the kernel combines the `host` of an event's handlers (and the
 * hooks plugin those of its hooks), in their order: `stop` and `defer` keep the first, `watchPaths`
 * are joined, any other field takes the later value. Undefined when neither has a field.
 */
export function mergeHostDirectives(earlier: HostDirectives | undefined, later: HostDirectives | undefined): HostDirectives | undefined {
  if (later === undefined || Object.keys(later).length === 0) return earlier;
  if (earlier === undefined) return { ...later };
  const merged: HostDirectives = { ...earlier, ...later };
  if (earlier.stop !== undefined) merged.stop = earlier.stop;
  if (earlier.defer !== undefined) merged.defer = earlier.defer;
  if (earlier.watchPaths !== undefined && later.watchPaths !== undefined) merged.watchPaths = [...new Set([...earlier.watchPaths, ...later.watchPaths])];
  return merged;
}
