/**
 * The document a peer-dialect hook reads on stdin, built from plinth's event and context: the
 * peer's common fields (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, and Gemini
 * CLI's `timestamp`) and the event's own (`tool_name`, `tool_input`, `tool_response`, `prompt`, …).
 *
 * Where a value comes from, in order: plinth's field (`tool`, `args`, `result`, `prompt`, …), then
 * the peer's own field name in the context (a host that already speaks the peer's names), then the
 * peer's default (`source: "startup"`, `trigger: "auto"`).
 */
import type { EventName } from 'plinth/sdk';
import type { PeerProtocol } from 'plinth/internal';
import type { HookDefinition, PeerHookInput } from '../types.js';
import { peerNameOf } from './events.js';
import { mcpToolOf, peerToolName } from './matcher.js';
import { toolNamesOf } from '../matcher.js';

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

  switch (event) {
    case 'before_tool':
    case 'after_tool': {
      const tool = toolNamesOf(context)[0] ?? pick('tool_name');
      document.tool_name = typeof tool === 'string' ? peerToolName(tool, context, protocol) : '';
      document.tool_input = pick('args', 'input', 'tool_input') ?? {};
      // Codex CLI hands apply_patch's patch as `tool_input.command` (a host may give it as `input` or `patch`).
      if (protocol === 'codex' && document.tool_name === 'apply_patch') document.tool_input = codexPatchInput(document.tool_input);
      const id = pick('toolUseId', 'tool_use_id');
      if (protocol !== 'gemini' && id !== undefined) document.tool_use_id = id;
      // Gemini CLI: the server and the tool's own name (not the qualified one).
      const mcp = typeof tool === 'string' ? mcpToolOf(tool, context) : undefined;
      if (protocol === 'gemini' && mcp !== undefined) document.mcp_context = { server_name: mcp.server, tool_name: mcp.tool };
      if (event === 'after_tool') document.tool_response = pick('result', 'response', 'tool_response') ?? {};
      break;
    }
    case 'before_agent':
      document.prompt = pick('prompt') ?? '';
      break;
    case 'after_agent':
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

/** apply_patch's input as Codex CLI hands it to hooks: `{ command: <patch> }`. */
function codexPatchInput(input: unknown): unknown {
  if (typeof input === 'string') return { command: input };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const fields = input as Record<string, unknown>;
  if (typeof fields.command === 'string') return input;
  const patch = [fields.input, fields.patch].find((v) => typeof v === 'string');
  return patch === undefined ? input : { command: patch };
}
