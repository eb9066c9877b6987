/**
 * Upstream requests during a modern client's call (2026-07-28 has no server-to-client requests).
 *
 * A legacy upstream server asks for elicitation, sampling or roots while it runs a call that a
 * modern (2026-07-28) client made through the gateway. The gateway cannot push that request to
 * its client, so the call becomes a round trip: the downstream gets an `input_required` result
 * carrying the upstream's request and a `requestState` naming the round trip; the upstream call
 * stays pending in this process; the client's retry (same call, `inputResponses`, the
 * `requestState` echoed) answers the upstream request, and the call goes on — to its result or to
 * the next `input_required`. The hooks run once: the upstream call is made once.
 *
 * The pending call lives in this process only: the retry must reach the same gateway process (the
 * README says how a load balancer routes it: the `requestState` starts with
 * `plinth-gw.<instance>.`). A retry that lands elsewhere, or after `clientTimeout`, gets
 * `PLN_E_GATEWAY_ROUND_TRIP_LOST` and the client calls again.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { ClientCapabilities, InputRequest, InputResponse } from '@modelcontextprotocol/server';
import type { ToolCallResult } from 'plinth/sdk';
import type { DownstreamContext, InFlightCall } from './session.js';

/** Where one step of a round trip got: the call's result, or upstream requests for the client. */
export type Step = { readonly done: ToolCallResult } | { readonly ask: Readonly<Record<string, InputRequest>> };

interface Question {
  readonly request: InputRequest;
  readonly resolve: (answer: InputResponse) => void;
  readonly reject: (error: Error) => void;
}

/** The prefix of every `requestState` this gateway mints: a retry carrying another is the upstream's. */
export const STATE_PREFIX = 'plinth-gw.';

/** One modern call in flight: its upstream call, and the upstream requests waiting for the client. */
export class RoundTrip {
  readonly id: string;
  readonly tool: string;
  readonly call: InFlightCall;
  readonly controller = new AbortController();
  /** The downstream request this round is answering now (progress goes along it). */
  ctx: DownstreamContext;
  readonly #questions = new Map<string, Question>();
  #asked = 0;
  #wake: (() => void) | undefined;
  #result: Promise<ToolCallResult> | undefined;
  #expiry: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(instance: string, tool: string, server: string, ctx: DownstreamContext, capabilities: ClientCapabilities | undefined) {
    this.id = `${STATE_PREFIX}${instance}.${randomUUID()}`;
    this.tool = tool;
    this.ctx = ctx;
    this.call = { server, ctx, round: this, ...(capabilities !== undefined && { capabilities }) };
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Starts the upstream call (once). */
  start(run: () => Promise<ToolCallResult>): void {
    this.#result ??= run();
    void this.#result.then(() => this.#wake?.(), () => this.#wake?.());
  }

  /** An upstream request for the client: resolves with the client's answer on a later retry. */
  ask(request: InputRequest): Promise<InputResponse> {
    if (this.#ended) return Promise.reject(new Error('the call it belongs to has ended'));
    const key = `q${++this.#asked}`;
    return new Promise<InputResponse>((resolve, reject) => {
      this.#questions.set(key, { request, resolve, reject });
      this.#wake?.();
    });
  }

  /** The client's answers (a retry's `inputResponses`) to the requests it was given. */
  answer(responses: Readonly<Record<string, unknown>> | undefined): void {
    clearTimeout(this.#expiry);
    for (const [key, value] of Object.entries(responses ?? {})) {
      const question = this.#questions.get(key);
      if (!question || value === null || typeof value !== 'object') continue;
      this.#questions.delete(key);
      question.resolve(value as InputResponse);
    }
  }

  /** Waits for the call's result or for upstream requests (all those asked by then). */
  async next(): Promise<Step> {
    const result = this.#result!;
    for (;;) {
      if (this.#questions.size > 0) {
        // Requests asked together go out together.
        await new Promise((resolve) => setImmediate(resolve));
        return { ask: Object.fromEntries([...this.#questions].map(([key, q]) => [key, q.request])) };
      }
      const settled = await Promise.race([
        result.then((done) => ({ done }), (error: unknown) => ({ error })),
        new Promise<undefined>((resolve) => (this.#wake = () => resolve(undefined))),
      ]);
      this.#wake = undefined;
      if (settled === undefined) continue;
      if ('error' in settled) throw settled.error;
      return settled;
    }
  }

  /** No retry within `ms`: the upstream requests are refused and the call cancelled. */
  expireIn(ms: number, onExpired: () => void): void {
    clearTimeout(this.#expiry);
    this.#expiry = setTimeout(() => {
      this.end(new Error(`the client did not answer within ${ms} ms (plugins.gateway.settings.clientTimeout)`));
      onExpired();
    }, ms);
    this.#expiry.unref();
  }

  /** The call is over (result, cancellation, expiry): waiting requests are refused, the upstream call cancelled if still running. */
  end(reason?: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#expiry);
    for (const question of this.#questions.values()) question.reject(reason ?? new Error('the call it belongs to has ended'));
    this.#questions.clear();
    if (reason) this.controller.abort(reason);
  }
}

/** The round trips of one gateway process, by `requestState`. */
export class RoundTrips {
  /** Names this process in the states it mints (the README: how a balancer keeps a retry here). */
  readonly instance: string;
  readonly #byId = new Map<string, RoundTrip>();

  constructor(instance?: string) {
    this.instance = instance ?? randomBytes(6).toString('hex');
  }

  open(tool: string, server: string, ctx: DownstreamContext, capabilities: ClientCapabilities | undefined): RoundTrip {
    const round = new RoundTrip(this.instance, tool, server, ctx, capabilities);
    this.#byId.set(round.id, round);
    return round;
  }

  get(id: string): RoundTrip | undefined {
    return this.#byId.get(id);
  }

  close(round: RoundTrip, reason?: Error): void {
    round.end(reason);
    this.#byId.delete(round.id);
  }

  /** The open round trips as callers an upstream request may belong to (forward.ts). */
  callers(): Array<{ readonly closed: boolean; readonly calls: ReadonlySet<InFlightCall> }> {
    return [...this.#byId.values()].map((round) => ({ closed: round.ended, calls: new Set([round.call]) }));
  }

  closeAll(): void {
    for (const round of this.#byId.values()) round.end(new Error('the gateway is closing'));
    this.#byId.clear();
  }
}
