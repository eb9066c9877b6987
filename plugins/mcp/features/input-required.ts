/**
 * The multi-round-trip pattern of MCP 2026-07-28: a `tools/call`,
 * `prompts/get` or `resources/read` answered with `resultType:
 * "input_required"` carries the requests a 2025 server would have sent
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`); the client
 * answers them and sends the request again (a new id) with `inputResponses`
 * and the server's `requestState` byte for byte.
 *
 * plinth drives the rounds itself (the SDK's `allowInputRequired` hands each
 * one back) rather than letting the SDK's client fulfil them, for three
 * things the SDK's loop cannot give: the embedded requests reach the SAME
 * handlers a 2025 server's requests do (`prepareClient`'s, through the SDK's
 * own validation and `applyDefaults`) INSIDE the call's origin, which the
 * host's `mcp:elicitation`/`mcp:sampling`/`mcp:roots` see as `origin`
 * (the SDK's loop runs them wherever the transport delivered the answer);
 * the bound is the plugin's `inputRounds` with a coded error; and a caller
 * may take the round trip over (`CallOptions.inputRequired: 'return'`).
 */
import type { Client } from '@modelcontextprotocol/client';
import type { InputRequiredAnswer } from 'plinth/sdk';
import { withCallOrigin } from '../origin.js';
import { MCP_CODES } from './result.js';

/** Rounds (retries) per logical request when the plugin's `inputRounds` is not given: the SDK client's own default. */
export const DEFAULT_INPUT_ROUNDS = 10;

/** The `input_required` answer in `value`, or undefined for any other result. */
export function inputRequiredOf(value: unknown): InputRequiredAnswer | undefined {
  if (typeof value !== 'object' || value === null || (value as { resultType?: unknown }).resultType !== 'input_required') return undefined;
  const { inputRequests, requestState } = value as { inputRequests?: unknown; requestState?: unknown };
  const requests = typeof inputRequests === 'object' && inputRequests !== null && !Array.isArray(inputRequests) ? (inputRequests as InputRequiredAnswer['inputRequests']) : {};
  return { inputRequests: requests, ...(typeof requestState === 'string' && { requestState }) };
}

/** The params of the next round: the first round's, this round's answers, the state as sent. */
export function retryParams(params: Readonly<Record<string, unknown>>, responses: Readonly<Record<string, unknown>> | undefined, requestState: string | undefined): Record<string, unknown> {
  const { inputResponses: _previous, requestState: _state, ...first } = params;
  return {
    ...first,
    ...(responses !== undefined && Object.keys(responses).length > 0 && { inputResponses: responses }),
    ...(requestState !== undefined && { requestState }),
  };
}

type StoredHandler = (request: { jsonrpc: '2.0'; id: string; method: string; params?: Record<string, unknown> }, ctx: unknown) => Promise<unknown>;

/**
 * Answers one round's embedded requests, all at once, through the handlers
 * registered on `client` (see ./requests.ts), inside `origin`. A request of
 * a method with no handler, or a handler that fails, fails the round: the
 * call ends with that error (the server is not retried with partial answers).
 */
export async function answerInputRequests(client: Client, answer: InputRequiredAnswer, origin: unknown, signal: AbortSignal): Promise<Record<string, unknown>> {
  // The handler chain as registered (request validation, the elicitation mode check and applyDefaults, ours).
  const handlerOf = (client as unknown as { _getRequestHandler?: (method: string) => StoredHandler | undefined })._getRequestHandler;
  const entries = Object.entries(answer.inputRequests);
  const round = new AbortController();
  const onAbort = () => round.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const answered = await Promise.all(
      entries.map(async ([key, request]) => {
        const method = typeof request?.method === 'string' ? request.method : undefined;
        if (method !== 'elicitation/create' && method !== 'sampling/createMessage' && method !== 'roots/list') {
          throw new Error(`the server's input request "${key}" is not elicitation/create, sampling/createMessage or roots/list (${String(method)})`);
        }
        const handler = handlerOf?.call(client, method);
        if (!handler) throw new Error(`no answer for the server's ${method} (input request "${key}"): the client was connected without that capability`);
        const params = typeof request.params === 'object' && request.params !== null ? { ...request.params } : undefined;
        const ctx = {
          sessionId: undefined,
          mcpReq: {
            id: key,
            method,
            _meta: params?._meta,
            signal: round.signal,
            send: () => Promise.reject(new Error('not available while answering an input request')),
            notify: () => Promise.reject(new Error('not available while answering an input request')),
          },
        };
        const run = () => handler({ jsonrpc: '2.0', id: key, method, ...(params && { params }) }, ctx);
        try {
          return [key, await (origin !== undefined ? withCallOrigin(origin, run) : run())] as const;
        } catch (error) {
          round.abort(error);
          throw error;
        }
      }),
    );
    return Object.fromEntries(answered);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A request that could not be finished for lack of input: its code and message (caught by the caller that knows how to report it). */
export class InputFailure extends Error {
  constructor(
    readonly code: typeof MCP_CODES.inputRounds | typeof MCP_CODES.inputUnanswered | typeof MCP_CODES.timeout,
    message: string,
  ) {
    super(message);
  }
}

/** One logical request that may take rounds. */
export interface Rounds {
  readonly client: Client;
  /** `tool "x" of server "s"`, `prompts/get x on server "s"`: for the messages. */
  readonly what: string;
  /** Retries allowed after the first answer (the plugin's `inputRounds`). */
  readonly rounds: number;
  /** For the whole request, every round and answer included. */
  readonly timeoutMs: number;
  readonly origin?: unknown;
  readonly signal: AbortSignal;
  /** Hand the first `input_required` back instead of answering it. */
  readonly handBack?: boolean;
}

/**
 * Sends `first` (with `send`, which must pass `allowInputRequired: true` and
 * the time left), answers each `input_required` and sends again with the
 * answers and the state, until a complete result, which it resolves with.
 * Rejects with an `InputFailure` when out of rounds, time or answers; with
 * the SDK's own error when a request fails.
 */
export async function requestInRounds(
  rounds: Rounds,
  first: Readonly<Record<string, unknown>>,
  send: (params: Readonly<Record<string, unknown>>, remainingMs: number) => Promise<unknown>,
): Promise<{ result: unknown } | { inputRequired: InputRequiredAnswer }> {
  const started = Date.now();
  let params = first;
  for (let round = 0; ; round += 1) {
    const remaining = rounds.timeoutMs - (Date.now() - started);
    if (remaining <= 0) throw new InputFailure(MCP_CODES.timeout, `${rounds.what} did not finish within ${rounds.timeoutMs} ms (${round} rounds of input)`);
    const answer = await send(params, remaining);
    const needed = inputRequiredOf(answer);
    if (!needed) return { result: answer };
    if (rounds.handBack) return { inputRequired: needed };
    if (round >= rounds.rounds) {
      throw new InputFailure(MCP_CODES.inputRounds, `${rounds.what} still asked for input after ${rounds.rounds} rounds and was given up (the mcp plugin's inputRounds setting is the bound)`);
    }
    let responses: Record<string, unknown>;
    try {
      responses = await answerInputRequests(rounds.client, needed, rounds.origin, rounds.signal);
    } catch (error) {
      if (rounds.signal.aborted) throw error;
      throw new InputFailure(MCP_CODES.inputUnanswered, `${rounds.what} asked for input plinth could not give: ${error instanceof Error ? error.message : String(error)}`);
    }
    params = retryParams(first, responses, needed.requestState);
  }
}
