/**
 * The peers' matchers, read as each peer reads them, against the peer's name of the tool:
 *
 * - Claude Code: a plain name or a `|` list of plain names matches exactly (`Write` is not
 *   `NotebookWrite`); anything else is a regular expression (`Notebook.*`, `mcp__memory__.*`).
 * - Gemini CLI: a regular expression; one that is not valid falls back to an exact comparison.
 *   On lifecycle events (a session's source, a compression's trigger) it compares exactly.
 * - Codex CLI: as Claude Code, but only letters, digits, `_` and `|` make exact names; it reads a
 *   matcher on tool events (`PermissionRequest` too), `SessionStart` and the sub-agent events (their
 *   `agent_type`) only (on `PreCompact`, `PostCompact`,
 *   `UserPromptSubmit` and `Stop` it is ignored, even one that is not a valid expression). Codex
 *   calls every shell tool `Bash` and its file edits `apply_patch` (see {@link peerToolName}).
 *
 * `""`, `"*"` and no matcher match everything (decided where the section is read).
 * plinth names an MCP tool `<server>__<tool>`; Claude Code names it `mcp__<server>__<tool>`, Gemini
 * CLI `mcp_<server>_<tool>` (its `MCP_QUALIFIED_NAME_SEPARATOR` is `_`): a peer matcher is tested
 * against its own peer's name (see {@link peerToolName}).
 */
import type { EventName } from 'plinth/sdk';
import type { PeerProtocol } from 'plinth/internal';

export type PeerMatcher = { readonly ok: true; readonly test: (subject: string) => boolean } | { readonly ok: false; readonly why: string };

const cache = new Map<string, PeerMatcher>();

export function compilePeerMatcher(protocol: PeerProtocol, matcher: string, narrow = false): PeerMatcher {
  const key = `${protocol}\0${narrow ? 'n' : ''}\0${matcher}`;
  let compiled = cache.get(key);
  if (compiled === undefined) {
    compiled = compile(protocol, matcher, narrow);
    if (cache.size > 1000) cache.clear();
    cache.set(key, compiled);
  }
  return compiled;
}

function compile(protocol: PeerProtocol, matcher: string, narrow: boolean): PeerMatcher {
  // Claude Code: only letters, digits, `_`, `-`, spaces, `,` and `|` is an exact name or a list (split on `|` or `,`);
  // FileChanged's and StopFailure's narrower set is letters, digits, `_` and `|`.
  // Codex CLI: letters, digits, "_" and "|" alone are exact names (no "-", unlike Claude Code).
  const list = protocol === 'claude' && !narrow;
  const exact = protocol === 'claude' ? (narrow ? /^[A-Za-z0-9_|]+$/ : /^[A-Za-z0-9_|, -]+$/) : protocol === 'codex' ? /^[A-Za-z0-9_|]+$/ : undefined;
  if (exact?.test(matcher)) {
    const names = new Set(matcher.split(list ? /[|,]/ : '|').map((n) => n.trim()).filter(Boolean));
    return { ok: true, test: (subject) => names.has(subject) };
  }
  let regex: RegExp;
  try {
    regex = new RegExp(matcher);
  } catch (error) {
    if (protocol === 'gemini') return { ok: true, test: (subject) => subject === matcher };
    return { ok: false, why: `"${matcher}" is not a valid regular expression (${(error as Error).message})` };
  }
  return { ok: true, test: (subject) => regex.test(subject) };
}

/**
 * The peer's name of the tool an event's context names: for an MCP tool (context `server` set and
 * the tool `<server>__<tool>`), Claude Code's and Codex CLI's `mcp__<server>__<tool>`, Gemini CLI's
 * `mcp_<server>_<tool>`; for Codex CLI, its name of a shell tool (`Bash`).
 */
export function peerToolName(tool: string, context: Readonly<Record<string, unknown>>, protocol: PeerProtocol = 'claude'): string {
  const own = mcpToolOf(tool, context);
  if (own === undefined) return protocol === 'codex' ? codexToolName(tool) : tool;
  return protocol === 'gemini' ? `mcp_${own.server}_${own.tool}` : `mcp__${own.server}__${own.tool}`;
}

/** The server and the tool's own name, when `tool` is an MCP tool of the context's `server`. */
export function mcpToolOf(tool: string, context: Readonly<Record<string, unknown>>): { readonly server: string; readonly tool: string } | undefined {
  const server = context.server;
  if (typeof server !== 'string' || server === '' || !tool.startsWith(`${server}__`)) return undefined;
  return { server, tool: tool.slice(server.length + 2) };
}

/** The context fields (plinth's name, then the peer's) a peer matcher is tested against on each non-tool event that has matchers. */
const SUBJECTS: Readonly<Partial<Record<EventName, readonly string[]>>> = {
  session_start: ['source'],
  session_end: ['reason'],
  pre_compress: ['trigger'],
  post_compress: ['trigger'],
  notification: ['type', 'notification_type'],
  setup: ['trigger'],
  instructions_loaded: ['loadReason', 'load_reason'],
  prompt_expansion: ['command', 'command_name'],
  subagent_start: ['agentType', 'agent_type'],
  subagent_stop: ['agentType', 'agent_type'],
  config_change: ['source'],
  directory_added: ['source'],
  after_agent_failure: ['error'],
  elicitation: ['server', 'mcp_server_name'],
  elicitation_result: ['server', 'mcp_server_name'],
  before_model_switch: ['to', 'to_model'],
  after_model_switch: ['to', 'to_model'],
};

/**
 * What a peer matcher is tested against on a non-tool event (the peers' matchers on lifecycle
 * events: a session's source, a compaction's trigger, a sub-agent's type, a changed file's name, …);
 * undefined on events the peers give no matcher (it is then ignored, as the peers ignore it).
 */
export function peerMatchSubject(event: EventName, context: Readonly<Record<string, unknown>>): string | undefined {
  if (event === 'file_change') {
    // Claude Code's FileChanged: the changed file's name.
    const file = context.file ?? context.file_path ?? context.path;
    const path = typeof file === 'string' ? file : typeof file === 'object' && file !== null ? (file as { path?: unknown }).path : undefined;
    return typeof path === 'string' ? path.split(/[\\/]/).pop() : undefined;
  }
  for (const field of SUBJECTS[event] ?? []) {
    const value = context[field];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/** Claude Code's events whose matcher is the tool's name, besides plinth's tool events. */
export const PEER_TOOL_EVENTS: ReadonlySet<EventName> = new Set<EventName>(['before_tool', 'after_tool', 'before_tool_selection', 'after_tool_failure', 'approval_request', 'permission_denied']);

/**
 * Codex CLI's shell tools, by the names a host may give them (Codex's own `shell`, `local_shell`,
 * `exec_command`, `unified_exec`, `container.exec`; a Claude-style host's `Bash`): Codex hands each
 * to its hooks as `Bash`, so that one matcher covers them. `apply_patch` and MCP tools keep their names.
 */
const CODEX_SHELL_TOOLS = new Set(['shell', 'local_shell', 'exec_command', 'unified_exec', 'container.exec', 'bash', 'Bash']);

/** Codex CLI's name for a tool plinth knows as `tool`. */
export function codexToolName(tool: string): string {
  return CODEX_SHELL_TOOLS.has(tool) ? 'Bash' : tool;
}

/** Codex CLI's events that read a matcher; on the others it is ignored. */
export const CODEX_MATCHED_EVENTS: ReadonlySet<EventName> = new Set<EventName>(['before_tool', 'approval_request', 'after_tool', 'session_start', 'subagent_start', 'subagent_stop']);
