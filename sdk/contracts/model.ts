/**
 * The `model` service's contract: a language model the host lends to plinth.
 * plinth has no model of its own; the hooks plugin runs a peer's `prompt` and
 * `agent` hooks (Claude Code's `"type": "prompt"` / `"type": "agent"`) through
 * this service, and a host (an LLM CLI embedding plinth) provides it. Without a
 * provider such a hook cannot run: on a gate event it blocks, elsewhere it is
 * recorded as not run.
 */
import type { McpTool, ToolCallResult } from './mcp.js';

/** One question to the model: a prompt and the JSON Schema its answer must follow. */
export interface ModelRequest {
  /** The prompt, already rendered (a hook's `$ARGUMENTS` replaced by its input document). */
  readonly prompt: string;
  /** JSON Schema of the answer (for hooks: `{ ok: boolean, reason?: string }`). */
  readonly schema: Readonly<Record<string, unknown>>;
  /** The model the definition names (`"model"`), when it names one; the host picks otherwise. */
  readonly model?: string;
  /** Aborted when the hook's time is up or its event is abandoned: stop and reject. */
  readonly signal?: AbortSignal;
}

/** A question the model may answer over several turns, using tools. */
export interface ModelAgentRequest extends ModelRequest {
  /** The tools of the connected MCP servers (the `mcp` service's), under their namespaced names. */
  readonly tools: readonly McpTool[];
  /** Calls one of `tools` through the `mcp` service (its trust, hooks and time limit apply). */
  readonly callTool: (name: string, args: Readonly<Record<string, unknown>>) => Promise<ToolCallResult>;
  /** The most turns (model answers) the host may take before it must give its final answer. */
  readonly maxTurns: number;
}

/**
 * The `model` service, provided by a host: a JSON answer that follows the
 * request's schema. Reject (or throw) when no answer can be given; plinth
 * treats a rejection as the hook's failure (its `onError` decides), and an
 * answer that does not follow the schema as invalid output.
 *
 * @example
 * kernel.provide('model', {
 *   async complete({ prompt, schema, signal }) {
 *     const reply = await myLlm.generate({ prompt, responseFormat: { type: 'json_schema', schema }, signal });
 *     return JSON.parse(reply.text); // e.g. { ok: false, reason: 'the tests were not run' }
 *   },
 *   async agent({ prompt, schema, tools, callTool, maxTurns, signal }) {
 *     return myLlm.runAgent({ prompt, schema, tools, callTool, maxTurns, signal });
 *   },
 * });
 */
export interface ModelService {
  /** One answer to one prompt (a `prompt` hook). */
  complete(request: ModelRequest): Promise<unknown>;
  /** An answer the model may reach over several turns with tools (an `agent` hook); without it, `agent` hooks cannot run. */
  agent?(request: ModelAgentRequest): Promise<unknown>;
}

declare module '../index.js' {
  interface Services {
    /** A host's language model, for `prompt` and `agent` hooks: see sdk/contracts/model.ts. */
    model: ModelService;
  }
}
