/**
 * Upstream servers' log messages (`notifications/message`) for the gateway's
 * sessions. Each session sets its level with `logging/setLevel`; one upstream
 * connection serves every session, so each upstream is told the most verbose
 * level any session asked for, and each session gets only what reaches its
 * own. A message goes:
 *
 * 1. along the call it belongs to (the server sent it on the call's stream, so
 *    its origin is a call in flight): to that call's session only, on that
 *    call's stream, when it reaches the session's level (or the session set
 *    none: it asked for the call);
 * 2. otherwise (a message of no call, or over stdio and SSE, which tell
 *    nothing): to every session that set a level the message reaches.
 *
 * The message keeps its level and data; its `logger` is prefixed with the
 * server's name (`<server>` or `<server>/<logger>`), so a client can tell
 * which upstream sent it.
 */
import type { LoggingLevel } from '@modelcontextprotocol/server';
import type { Logger, McpService, ServerLogMessage } from 'plinth/sdk';
import type { GatewaySession, InFlightCall } from './session.js';

/** The MCP (syslog) levels, least severe first. */
const LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

const rank = (level: string): number => {
  const at = LEVELS.indexOf(level as LoggingLevel);
  return at < 0 ? LEVELS.indexOf('info') : at;
};

/** Whether a message of `level` reaches a session that asked for `asked`. */
export function reaches(level: string, asked: LoggingLevel | undefined): boolean {
  return asked === undefined || rank(level) >= rank(asked);
}

/** The most verbose level the sessions asked for, or undefined when none asked. */
export function upstreamLevel(sessions: Iterable<GatewaySession>): LoggingLevel | undefined {
  let lowest: number | undefined;
  for (const session of sessions) {
    if (session.closed || session.logLevel === undefined) continue;
    const at = rank(session.logLevel);
    if (lowest === undefined || at < lowest) lowest = at;
  }
  return lowest === undefined ? undefined : LEVELS[lowest];
}

/** Tells every connected upstream that can log the level the sessions want now. */
export async function applyLevel(mcp: McpService, sessions: Iterable<GatewaySession>, log: Logger, only?: string): Promise<void> {
  const level = upstreamLevel(sessions);
  if (level === undefined) return;
  await Promise.all(
    mcp
      .servers()
      .filter((s) => s.state === 'connected' && (only === undefined || s.name === only))
      .map(async ({ name }) => {
        const client = mcp.client(name);
        if (!client?.getServerCapabilities()?.logging) return;
        await client.setLoggingLevel(level).catch((error: unknown) => log.debug(`gateway: server "${name}" refused logging/setLevel ${level}: ${(error as Error).message}`));
      }),
  );
}

/** Delivers one upstream message to the sessions it is for (see the module comment). */
export function forwardLog(sessions: readonly GatewaySession[], message: ServerLogMessage): void {
  const params = { level: message.level as LoggingLevel, logger: message.logger ? `${message.server}/${message.logger}` : message.server, data: message.data };
  const notification = { method: 'notifications/message' as const, params };
  const live = sessions.filter((s) => !s.closed && s.server.getClientCapabilities() !== undefined);
  const origin = message.origin as InFlightCall | undefined;
  const owner = origin === undefined ? undefined : live.find((s) => s.calls.has(origin));
  if (owner && origin!.server === message.server) {
    if (reaches(message.level, owner.logLevel)) void origin!.ctx.mcpReq.notify(notification).catch(() => undefined);
    return;
  }
  for (const session of live) {
    if (session.logLevel !== undefined && reaches(message.level, session.logLevel)) void session.server.notification(notification).catch(() => undefined);
  }
}
