/**
 * The document a peer-dialect hook reads on stdin, built from plinth's event and context: the
 * peer's common fields (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, and Gemini
 * CLI's `timestamp`) and the event's own (`tool_name`, `tool_input`, `tool_response`, `prompt`, …).
 *
 * Where a value comes from, in order: plinth's field (`tool`, `args`, `result`, `prompt`, …), then
 * the peer's own field name in the context (a host that already speaks the peer's names), then the
 * peer's default (`source: "startup"`, `trigger: "auto"`).
 */
import { resolve } from 'node:path';
import type { EventName } from 'plinth/sdk';
import type { PeerProtocol } from 'plinth/internal';
import type { HookDefinition, PeerHookInput } from '../types.js';
import { peerNameOf } from './events.js';
import { mcpToolOf, peerToolName } from './matcher.js';
import { filePathsOf, toolNamesOf } from '../matcher.js';

type Context = Readonly<Record<string, unknown>>;

/** The input of one run of a peer-dialect hook; `context` is kept beside it, for reading the answer. */
export function buildPeerInput(
  hook: Pick<HookDefinition, 'protocol'>,
  event: EventName,
  context: Context,
  facts: { readonly sessionId?: string; readonly workspace: string },
): PeerHookInput {
  const protocol: PeerProtocol = hook.protocol === 'gemini' || hook.protocol === 'codex' ? hook.protocol : 'claude';
  const name = peerNameOf(protocol, event) ?? event;
  const pick = (...keys: string[]): unknown => {
    for (const key of keys) if (context[key] !== undefined) return context[key];
    return undefined;
  };
  const document: Record<string, unknown> = {
    session_id: facts.sessionId ?? pick('session_id') ?? '',
    transcript_path: pick('transcriptPath', 'transcript_path') ?? '',
    cwd: pick('cwd') ?? facts.workspace,
    hook_event_name: name,
  };
  if (protocol === 'gemini') document.timestamp = new Date().toISOString();
  else document.permission_mode = pick('permissionMode', 'permission_mode') ?? 'default';
  if (protocol === 'codex') {
    // Codex CLI: a transcript path is null when there is none; every event says the model; turn-scoped events their turn.
    document.transcript_path = pick('transcriptPath', 'transcript_path') ?? null;
    document.model = pick('model') ?? '';
    const turn = pick('turnId', 'turn_id');
    if (turn !== undefined && event !== 'session_start') document.turn_id = turn;
  }

  const set = (field: string, ...keys: string[]): void => {
    const value = pick(...keys);
    if (value !== undefined) document[field] = value;
  };

  switch (event) {
    case 'approval_request':
    case 'permission_denied':
    case 'after_tool_failure':
    case 'before_tool':
    case 'after_tool': {
      // approval_request as the hooks plugin emits it carries the call in `details`.
      const call = toolContext(event, context);
      const tool = toolNamesOf(call)[0] ?? pick('tool_name');
      document.tool_name = typeof tool === 'string' ? peerToolName(tool, call, protocol) : '';
      document.tool_input = call.args ?? call.input ?? call.tool_input ?? {};
      // Codex CLI hands apply_patch's patch as `tool_input.command` (a host may give it as `input` or `patch`).
      if (protocol === 'codex' && document.tool_name === 'apply_patch') document.tool_input = codexPatchInput(document.tool_input);
      const id = call.toolUseId ?? call.tool_use_id;
      // PermissionRequest has no tool_use_id (Claude Code's reference).
      if (protocol !== 'gemini' && id !== undefined && event !== 'approval_request') document.tool_use_id = id;
      // Gemini CLI: the server and the tool's own name (not the qualified one).
      const mcp = typeof tool === 'string' ? mcpToolOf(tool, call) : undefined;
      if (protocol === 'gemini' && mcp !== undefined) document.mcp_context = { server_name: mcp.server, tool_name: mcp.tool };
      if (event === 'after_tool') document.tool_response = pick('result', 'response', 'tool_response') ?? {};
      // Codex CLI's PermissionRequest input has no suggestions.
      if (event === 'approval_request' && protocol !== 'codex') set('permission_suggestions', 'permissionSuggestions', 'permission_suggestions');
      if (event === 'permission_denied') document.reason = pick('reason') ?? '';
      if (event === 'after_tool_failure') {
        const error = pick('error');
        document.error = error instanceof Error ? error.message : typeof error === 'string' ? error : error === undefined ? '' : JSON.stringify(error);
        set('is_interrupt', 'isInterrupt', 'is_interrupt');
      }
      if (event === 'after_tool' || event === 'after_tool_failure') set('duration_ms', 'durationMs', 'duration_ms');
      break;
    }
    case 'after_tool_batch': {
      const calls = pick('calls', 'tool_calls');
      document.tool_calls = Array.isArray(calls)
        ? calls.map((c: Record<string, unknown>) => ({
            tool_name: c.tool ?? c.tool_name ?? '',
            tool_input: c.args ?? c.tool_input ?? {},
            ...((c.toolUseId ?? c.tool_use_id) !== undefined && { tool_use_id: c.toolUseId ?? c.tool_use_id }),
            tool_response: c.result ?? c.tool_response ?? '',
          }))
        : [];
      break;
    }
    case 'setup':
      document.trigger = pick('trigger') ?? 'init';
      break;
    case 'instructions_loaded':
      document.file_path = pick('file', 'file_path') ?? '';
      document.memory_type = pick('memoryType', 'memory_type') ?? 'Project';
      document.load_reason = pick('loadReason', 'load_reason') ?? 'session_start';
      set('globs', 'globs');
      set('trigger_file_path', 'triggerFile', 'trigger_file_path');
      set('parent_file_path', 'parentFile', 'parent_file_path');
      break;
    case 'prompt_expansion':
      document.expansion_type = pick('expansionType', 'expansion_type') ?? 'slash_command';
      document.command_name = pick('command', 'command_name') ?? '';
      document.command_args = pick('args', 'command_args') ?? '';
      set('command_source', 'commandSource', 'command_source');
      document.prompt = pick('prompt') ?? '';
      break;
    case 'subagent_start':
    case 'subagent_stop':
      document.agent_id = pick('agentId', 'agent_id') ?? '';
      document.agent_type = pick('agentType', 'agent_type') ?? '';
      if (event === 'subagent_stop') {
        document.stop_hook_active = pick('stopHookActive', 'stop_hook_active') ?? false;
        set('agent_transcript_path', 'agentTranscriptPath', 'agent_transcript_path');
        document.last_assistant_message = pick('response', 'last_assistant_message') ?? '';
        if (protocol === 'codex') {
          // Codex CLI: null where there is none.
          document.agent_transcript_path = pick('agentTranscriptPath', 'agent_transcript_path') ?? null;
          document.last_assistant_message = pick('response', 'last_assistant_message') ?? null;
        }
      }
      break;
    case 'task_created':
    case 'task_completed':
      document.task_id = pick('taskId', 'task_id') ?? '';
      document.task_subject = pick('subject', 'task_subject') ?? '';
      set('task_description', 'description', 'task_description');
      set('teammate_name', 'teammate', 'teammate_name');
      set('team_name', 'team', 'team_name');
      break;
    case 'teammate_idle':
      document.teammate_name = pick('teammate', 'teammate_name') ?? '';
      set('team_name', 'team', 'team_name');
      break;
    case 'after_agent_failure': {
      const error = pick('error');
      document.error = typeof error === 'string' ? error : 'unknown';
      set('error_details', 'details', 'error_details');
      set('last_assistant_message', 'response', 'last_assistant_message');
      break;
    }
    case 'elicitation':
      document.mcp_server_name = pick('server', 'mcp_server_name') ?? '';
      document.message = pick('message') ?? '';
      set('mode', 'mode');
      set('url', 'url');
      set('elicitation_id', 'elicitationId', 'elicitation_id');
      set('requested_schema', 'schema', 'requested_schema');
      break;
    case 'elicitation_result':
      document.mcp_server_name = pick('server', 'mcp_server_name') ?? '';
      document.action = pick('action') ?? 'accept';
      set('mode', 'mode');
      set('elicitation_id', 'elicitationId', 'elicitation_id');
      set('content', 'content');
      break;
    case 'config_change':
      document.source = pick('source') ?? 'user_settings';
      set('file_path', 'file', 'file_path');
      break;
    case 'cwd_change':
      document.old_cwd = pick('from', 'old_cwd') ?? '';
      document.new_cwd = pick('to', 'new_cwd') ?? document.cwd;
      break;
    case 'directory_added':
      document.directory = pick('directory') ?? '';
      document.source = pick('source') ?? 'slash_command';
      break;
    case 'file_change': {
      // plinth's watcher says { file, changes: { type: "modified" | "added" | "removed" } }; Claude Code change/add/unlink.
      // Absolute, as Claude Code gives it (plinth's watcher names the file relative to the workspace).
      const path = filePathsOf(context)[0] ?? pick('file_path');
      document.file_path = typeof path === 'string' && path !== '' ? resolve(facts.workspace, path) : '';
      const changes = context.changes as { type?: unknown } | undefined;
      const kind = pick('event') ?? changes?.type;
      document.event = kind === 'added' || kind === 'created' || kind === 'add' ? 'add' : kind === 'removed' || kind === 'deleted' || kind === 'unlink' ? 'unlink' : 'change';
      break;
    }
    case 'worktree_create':
      document.name = pick('name') ?? '';
      break;
    case 'worktree_remove':
      document.worktree_path = pick('path', 'worktree_path') ?? '';
      break;
    case 'message_display':
      set('turn_id', 'turnId', 'turn_id');
      set('message_id', 'messageId', 'message_id');
      document.index = pick('index') ?? 0;
      document.final = pick('final') ?? true;
      document.delta = pick('delta', 'text') ?? '';
      break;
    case 'before_model_switch':
    case 'after_model_switch':
      document.from_model = pick('from', 'from_model') ?? '';
      document.to_model = pick('to', 'to_model') ?? '';
      set('source', 'source');
      break;
    case 'post_compress':
      document.trigger = pick('trigger') ?? 'auto';
      document.compact_summary = pick('summary', 'compact_summary') ?? '';
      break;
    case 'before_agent':
      document.prompt = pick('prompt') ?? '';
      break;
    case 'after_agent':
      if (protocol === 'claude') set('last_assistant_message', 'response', 'last_assistant_message');
      if (protocol === 'gemini') {
        document.prompt = pick('prompt') ?? '';
        document.prompt_response = pick('response', 'prompt_response') ?? '';
      }
      document.stop_hook_active = pick('stopHookActive', 'stop_hook_active') ?? false;
      if (protocol === 'codex') document.last_assistant_message = pick('response', 'last_assistant_message') ?? null;
      break;
    case 'before_model':
    case 'before_tool_selection':
      document.llm_request = pick('request', 'llm_request') ?? {};
      break;
    case 'after_model':
      document.llm_request = pick('request', 'llm_request') ?? {};
      document.llm_response = pick('response', 'llm_response') ?? {};
      break;
    case 'session_start':
      document.source = pick('source') ?? 'startup';
      // Claude Code says which model the session uses; "" when the host did not say.
      if (protocol !== 'gemini') document.model = pick('model') ?? '';
      if (protocol === 'claude') set('session_title', 'sessionTitle', 'session_title');
      break;
    case 'session_end':
      document.reason = pick('reason') ?? 'other';
      break;
    case 'post_compress':
      if (protocol === 'codex') document.trigger = pick('trigger') ?? 'auto';
      break;
    case 'pre_compress':
      document.trigger = pick('trigger') ?? 'auto';
      if (protocol === 'claude') document.custom_instructions = pick('customInstructions', 'custom_instructions') ?? '';
      break;
    case 'notification':
      document.message = pick('message') ?? '';
      if (protocol === 'claude') {
        const title = pick('title');
        if (title !== undefined) document.title = title;
      } else {
        document.notification_type = pick('type', 'notification_type') ?? 'ToolPermission';
        document.details = pick('details') ?? {};
      }
      break;
    default:
      break;
  }
  return { protocol, event: name, canonical: event, document, context };
}

/**
 * The context that names the tool call of a tool event: the event's own, or on `approval_request`
 * as the hooks plugin emits it (a hook answered "ask"), its `details` (the call's context).
 */
export function toolContext(event: EventName, context: Context): Context {
  if (event !== 'approval_request' || toolNamesOf(context).length > 0) return context;
  const details = context.details;
  return typeof details === 'object' && details !== null && !Array.isArray(details) ? (details as Context) : context;
}

/** apply_patch's input as Codex CLI hands it to hooks: `{ command: <patch> }`. */
function codexPatchInput(input: unknown): unknown {
  if (typeof input === 'string') return { command: input };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const fields = input as Record<string, unknown>;
  if (typeof fields.command === 'string') return input;
  const patch = [fields.input, fields.patch].find((v) => typeof v === 'string');
  return patch === undefined ? input : { command: patch };
}
