/**
 * How many requests one server may send its client (roots, elicitation,
 * sampling): a bucket of `burst` that refills at `perSecond`. A request over
 * the limit is answered at once with a JSON-RPC error
 * (`PLN_E_MCP_SERVER_REQUEST_LIMIT`), without asking the host, a terminal or
 * anyone: a server that floods its client gets errors, the client stays
 * responsive. One warning per burst (a burst ends after `quietMs` without a
 * refusal), not one per request.
 */
import type { Logger } from 'plinth/sdk';

/** How many requests a server may send at once (`burst`), then a second; a burst of refusals ends after `quietMs` without one. */
export interface ServerRequestLimit {
  readonly burst: number;
  readonly perSecond: number;
  readonly quietMs: number;
}

export const SERVER_REQUEST_LIMIT: ServerRequestLimit = { burst: 100, perSecond: 20, quietMs: 10_000 };

// JSON-RPC leaves -32000…-32099 to implementations; this one is "too many requests".
const TOO_MANY_REQUESTS = -32029;

export interface RequestLimit {
  /** Counts one request of `method`; throws the error that answers it when over the limit. */
  take(method: string): void;
}

/** The limit of one server's connection. `now` for tests of the arithmetic. */
export function requestLimit(server: string, log: Pick<Logger, 'warn'>, limit: ServerRequestLimit = SERVER_REQUEST_LIMIT, now: () => number = Date.now): RequestLimit {
  let tokens: number = limit.burst;
  let filledAt = now();
  let lastRefusal: number | undefined;
  const describe = `${limit.burst} at once, then ${limit.perSecond} a second`;
  return {
    take(method) {
      const at = now();
      tokens = Math.min(limit.burst, tokens + ((at - filledAt) / 1000) * limit.perSecond);
      filledAt = at;
      if (tokens >= 1) {
        tokens -= 1;
        return;
      }
      if (lastRefusal === undefined || at - lastRefusal > limit.quietMs) {
        log.warn(
          `PLN_E_MCP_SERVER_REQUEST_LIMIT: server "${server}" sends requests (roots, elicitation, sampling) faster than plinth answers them (${describe}): the ones over the limit are answered with an error until it slows down. Said once per burst.`,
        );
      }
      lastRefusal = at;
      // A plain error with a code: the SDK answers with its message as it is (an McpError's would say "MCP error -32029" twice).
      throw Object.assign(
        new Error(`PLN_E_MCP_SERVER_REQUEST_LIMIT: ${method} refused: server "${server}" sent more requests than plinth answers (${describe}); send fewer, or wait for the answers before asking again`),
        { code: TOO_MANY_REQUESTS },
      );
    },
  };
}
