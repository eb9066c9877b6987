/**
 * A server's log messages (`notifications/message`) in the plugin's log, at
 * the matching level, redacted, one bounded line each.
 */
import type { Logger } from 'plinth/sdk';

/** MCP (syslog) levels → the plugin logger's four. */
const LEVELS: Readonly<Record<string, keyof Logger>> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  alert: 'error',
  emergency: 'error',
};

const MAX_LINE = 4000;

/** Writes one server log message to `log`. */
export function logServerMessage(
  log: Logger,
  server: string,
  params: { level: string; logger?: string | undefined; data?: unknown },
  redact: (text: string) => string,
): void {
  const level = LEVELS[params.level] ?? 'info';
  let text: string;
  try {
    text = typeof params.data === 'string' ? params.data : JSON.stringify(params.data) ?? String(params.data);
  } catch {
    text = String(params.data);
  }
  if (text.length > MAX_LINE) text = `${text.slice(0, MAX_LINE)}… (${text.length - MAX_LINE} more characters)`;
  const source = params.logger ? `server "${server}" (${params.logger})` : `server "${server}"`;
  log[level](redact(`${source} ${params.level}: ${text}`), { server, level: params.level });
}
