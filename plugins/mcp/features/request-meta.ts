/**
 * What plinth adds to the `_meta` of a request to a 2026-07-28 server (the
 * SDK adds the protocol envelope itself): W3C trace context (`traceparent`,
 * `tracestate`) and, where logs are wanted, the per-request log level that
 * replaces `logging/setLevel` (absent: the server sends the request no log
 * messages). A 2025 server gets none of it: its requests stay as they were.
 */
import { randomBytes } from 'node:crypto';
import { LOG_LEVEL_META_KEY, TRACEPARENT_META_KEY, TRACESTATE_META_KEY } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/client';

/** The MCP (syslog) levels, lowest first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;

// version-traceid-parentid-flags, lower-case hex; the all-zero ids are invalid (W3C Trace Context §3.2).
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-([\da-f]{16})-[\da-f]{2}$/;
// list-members of key=value, no control characters; at most 512 characters (W3C Trace Context §3.3).
const TRACESTATE = /^[\x20-\x7e]{0,512}$/;

/** What one request asks for; every field optional. */
export interface MetaRequest {
  readonly traceparent?: unknown;
  readonly tracestate?: unknown;
  readonly logLevel?: unknown;
}

/** Whether `client` speaks 2026-07-28 (or later) with its server. */
export function isModern(client: Client): boolean {
  return (client as { getProtocolEra?: () => string | undefined }).getProtocolEra?.() === 'modern';
}

/** A valid `traceparent` as given, or undefined. */
export function validTraceparent(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!) || value.startsWith('ff')) return undefined;
  return value;
}

/** A new trace: version 00, random trace and span ids, sampled. */
export function newTraceparent(): string {
  return `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
}

/**
 * The `_meta` entries for one request to a modern server, or undefined for a
 * 2025 one. The first valid `traceparent` of `asks` is kept (a `tracestate`
 * only with it), else a new trace; the first known log level is sent.
 */
export function requestMeta(client: Client, ...asks: ReadonlyArray<MetaRequest | undefined>): Record<string, unknown> | undefined {
  if (!isModern(client)) return undefined;
  let traceparent: string | undefined;
  let tracestate: string | undefined;
  let level: string | undefined;
  for (const ask of asks) {
    if (!ask) continue;
    if (traceparent === undefined) {
      traceparent = validTraceparent(ask.traceparent);
      if (traceparent !== undefined && typeof ask.tracestate === 'string' && ask.tracestate !== '' && TRACESTATE.test(ask.tracestate)) tracestate = ask.tracestate;
    }
    if (level === undefined && typeof ask.logLevel === 'string' && (LOG_LEVELS as readonly string[]).includes(ask.logLevel)) level = ask.logLevel;
  }
  return {
    [TRACEPARENT_META_KEY]: traceparent ?? newTraceparent(),
    ...(tracestate !== undefined && { [TRACESTATE_META_KEY]: tracestate }),
    ...(level !== undefined && { [LOG_LEVEL_META_KEY]: level }),
  };
}
