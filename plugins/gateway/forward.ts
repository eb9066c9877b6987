/**
 * Requests upstream servers send to their client (elicitation, sampling,
 * roots), forwarded to a downstream client that declared the capability.
 *
 * Which one: the session with a tool call in flight to that server (the
 * newest), sent along that call's request so that over HTTP it travels on the
 * call's own stream; else the newest session that declared the capability.
 * None: `undefined`, and plinth answers as it does without a gateway.
 */
import { CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Gateway } from 'plinth/sdk';
import type { GatewaySession } from './session.js';

type Capability = 'elicitation' | 'sampling' | 'roots';

/** The handlers of a gateway whose sessions are `sessions()` (oldest first). */
export function forwardingHandlers(sessions: () => readonly GatewaySession[], timeoutMs: number): Gateway['handlers'] {
  const pick = (server: string, capability: Capability) => {
    const able = sessions().filter((s) => !s.closed && s.server.getClientCapabilities()?.[capability] !== undefined);
    for (const session of [...able].reverse()) {
      const calls = [...session.calls].filter((c) => c.server === server);
      const call = calls[calls.length - 1];
      if (call) return { session, call };
    }
    const session = able[able.length - 1];
    return session ? { session, call: undefined } : undefined;
  };
  const options = { timeout: timeoutMs, maxTotalTimeout: timeoutMs };

  return {
    'mcp:elicitation': async ({ server, message, requestedSchema }) => {
      const target = pick(server, 'elicitation');
      if (!target) return undefined;
      const request = { method: 'elicitation/create' as const, params: { message, requestedSchema: requestedSchema as never } };
      const answer = target.call
        ? await target.call.extra.sendRequest(request, ElicitResultSchema, options)
        : await target.session.server.request(request, ElicitResultSchema, options);
      return { action: answer.action, ...(answer.content !== undefined && { content: answer.content as Record<string, unknown> }) };
    },
    'mcp:sampling': async ({ server, params }) => {
      const target = pick(server, 'sampling');
      if (!target) return undefined;
      const request = { method: 'sampling/createMessage' as const, params: params as never };
      const answer = target.call
        ? await target.call.extra.sendRequest(request, CreateMessageResultSchema, options)
        : await target.session.server.request(request, CreateMessageResultSchema, options);
      return answer as Record<string, unknown>;
    },
    'mcp:roots': async ({ server }) => {
      const target = pick(server, 'roots');
      if (!target) return undefined;
      const request = { method: 'roots/list' as const };
      const answer = target.call
        ? await target.call.extra.sendRequest(request, ListRootsResultSchema, options)
        : await target.session.server.request(request, ListRootsResultSchema, options);
      return answer.roots.map((r) => ({ uri: r.uri, ...(r.name !== undefined && { name: r.name }) }));
    },
  };
}
