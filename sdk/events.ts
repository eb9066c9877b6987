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
] as const;

/** A canonical event name. */
export type EventName = (typeof EVENTS)[number];

/**
 * Events whose decision gates what the host does next: a tool call, a model
 * call, an agent turn, the tools offered, an approval. They fail closed: a
 * guard that cannot run blocks them (a plugin lists the ones it guards in its
 * manifest's `guards`).
 */
export const GATE_EVENTS = ['before_agent', 'before_model', 'before_tool_selection', 'before_tool', 'approval_request'] as const satisfies readonly EventName[];

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
}

/** A handler of one event, as a plugin registers it with `kernel.on`. */
export type EventHandler = (
  context: Readonly<Record<string, unknown>>,
  event: EventName,
) => EventResult | void | Promise<EventResult | void>;
