/**
 * Requests upstream servers send to their client (elicitation, sampling,
 * roots), forwarded to the downstream session they belong to. One upstream
 * connection serves every session, so which session that is must be known,
 * never guessed:
 *
 * 1. the request came along one of our calls (`origin`: the server sent it on
 *    the call's own stream, as the SDK does with `relatedRequestId` over
 *    streamable HTTP) and that call is still in flight: its session, on the
 *    call's stream;
 * 2. otherwise (stdio and SSE servers tell nothing): the one session with calls
 *    in flight to that server, on its newest call's stream; with no call in
 *    flight, the one session that declared the capability;
 * 3. two sessions or more could own it: the origin is unknown. Elicitation and
 *    sampling are refused with `PLN_E_GATEWAY_ORIGIN_UNKNOWN` (the server gets
 *    it as a JSON-RPC error, the log a warning); roots get plinth's own answer
 *    (the workspace), which belongs to no session.
 *
 * The session found but without the capability, or no session at all:
 * `undefined`, and plinth answers as it does without a gateway.
 */
import type { ClientCapabilities, InputRequest, Server } from '@modelcontextprotocol/server';
import { PlinthError } from 'plinth/sdk';
import type { Gateway } from 'plinth/sdk';
import type { InFlightCall } from './session.js';

type Capability = 'elicitation' | 'sampling' | 'roots';

/**
 * Who an upstream request may be for: a legacy session (its `server` can be asked directly), a
 * modern stdio connection, or one modern call in flight (rounds.ts: it has no server to ask; its
 * requests go back to the client as `input_required`).
 */
export interface Caller {
  readonly closed: boolean;
  readonly calls: ReadonlySet<InFlightCall>;
  readonly server?: Pick<Server, 'getClientCapabilities' | 'request'>;
}

/** Where one upstream request goes: a caller (along `call` when there is one), nowhere known (`unknown`: why), or plinth's own answer (undefined). */
type Route = { readonly session: Caller; readonly call: InFlightCall | undefined } | { readonly unknown: string } | undefined;

/** What the client of `caller` declared: a modern call's own envelope, else the legacy session's initialize. */
function capabilitiesOf(caller: Caller, call: InFlightCall | undefined): ClientCapabilities | undefined {
  return call?.round ? call.capabilities : caller.server?.getClientCapabilities();
}

/** The caller an upstream request of `server` belongs to; see the module comment. */
export function routeRequest(sessions: readonly Caller[], server: string, capability: Capability, origin: unknown): Route {
  const live = sessions.filter((s) => !s.closed);
  const able = (s: Caller, call?: InFlightCall) => capabilitiesOf(s, call)?.[capability] !== undefined;
  const deliver = (session: Caller, call: InFlightCall | undefined): Route => (able(session, call) ? { session, call } : undefined);
  if (origin !== undefined) {
    const owner = live.find((s) => s.calls.has(origin as InFlightCall));
    // An origin that is not a call in flight to this server (it ended) tells nothing: as if unknown.
    if (owner && (origin as InFlightCall).server === server) return deliver(owner, origin as InFlightCall);
  }
  const calling = live.filter((s) => [...s.calls].some((c) => c.server === server));
  if (calling.length === 1) {
    const session = calling[0]!;
    return deliver(session, [...session.calls].filter((c) => c.server === server).pop());
  }
  if (calling.length > 1) return { unknown: `${calling.length} sessions have calls in flight to it` };
  // A request of no call goes to a session that can be asked directly (never to a modern call's client).
  const candidates = live.filter((s) => s.server !== undefined && able(s));
  if (candidates.length === 1) return { session: candidates[0]!, call: undefined };
  if (candidates.length > 1) return { unknown: `no call is in flight to it and ${candidates.length} sessions could answer` };
  return undefined;
}

/** The handlers of a gateway whose sessions are `sessions()` (oldest first). */
export function forwardingHandlers(sessions: () => readonly Caller[], timeoutMs: number): Gateway['handlers'] {
  const options = { timeout: timeoutMs, maxTotalTimeout: timeoutMs };
  const unknown = (server: string, method: string, why: string) =>
    new PlinthError('PLN_E_GATEWAY_ORIGIN_UNKNOWN', `server "${server}" sent ${method} but did not send it along a call, and ${why}: the gateway cannot tell which session it belongs to, so it asks none`, {
      plugin: 'gateway',
      hint: 'a server that sends its requests along the call they belong to (streamable HTTP; relatedRequestId in the SDK) is routed exactly; or call it from one session at a time',
      details: { server, method },
    });

  /** A modern call's client is asked on its next retry (rounds.ts); anyone else now, along the call when there is one. */
  const ask = async (target: { session: Caller; call: InFlightCall | undefined }, request: InputRequest): Promise<unknown> => {
    if (target.call?.round) return target.call.round.ask(request);
    if (target.call) return target.call.ctx.mcpReq.send(request as never, options);
    return target.session.server!.request(request as never, options);
  };

  return {
    'mcp:elicitation': async ({ server, message, requestedSchema, origin }) => {
      const target = routeRequest(sessions(), server, 'elicitation', origin);
      if (!target) return undefined;
      if ('unknown' in target) throw unknown(server, 'elicitation/create', target.unknown);
      const request = { method: 'elicitation/create' as const, params: { message, requestedSchema: requestedSchema as never } };
      const answer = (await ask(target, request)) as { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean | string[]> };
      return { action: answer.action, ...(answer.content !== undefined && { content: answer.content }) };
    },
    'mcp:sampling': async ({ server, params, origin }) => {
      const target = routeRequest(sessions(), server, 'sampling', origin);
      if (!target) return undefined;
      if ('unknown' in target) throw unknown(server, 'sampling/createMessage', target.unknown);
      const request = { method: 'sampling/createMessage' as const, params: params as never };
      return (await ask(target, request)) as Record<string, unknown>;
    },
    'mcp:roots': async ({ server, origin }) => {
      const target = routeRequest(sessions(), server, 'roots', origin);
      // No session's roots when it is not known whose: plinth's own (the workspace).
      if (!target || 'unknown' in target) return undefined;
      const request = { method: 'roots/list' as const };
      const answer = (await ask(target, request as InputRequest)) as { roots: Array<{ uri: string; name?: string }> };
      return answer.roots.map((r) => ({ uri: r.uri, ...(r.name !== undefined && { name: r.name }) }));
    },
  };
}
