/**
 * What a server's `mcp` status says about its trouble: a one-line reason for
 * people, and whether trying again could help at all.
 */
import type { ServerStatus } from 'plinth/sdk';

/**
 * Errors that no restart fixes (configuration, trust, a missing transport, a
 * sign-in only a person can do): retrying them would only repeat the error, or
 * ask for approval again and again. An unreachable authorization server is
 * retried like an unreachable server.
 */
const NOT_RETRYABLE = new Set([
  'PLN_E_MCP_UNTRUSTED',
  'PLN_E_MCP_SERVER_DISABLED',
  'PLN_E_MCP_SERVER_UNKNOWN',
  'PLN_E_MCP_SERVER_INVALID',
  'PLN_E_MCP_REFERENCE_UNRESOLVED',
  'PLN_E_MCP_TRANSPORT_UNKNOWN',
  'PLN_E_SERVICE_MISSING',
  'PLN_E_SERVICE_UNAVAILABLE',
  'PLN_E_KERNEL_CLOSED',
  'PLN_E_OAUTH_SIGNIN_REQUIRED',
  'PLN_E_OAUTH_CONFIG',
]);

/** Whether restarting could bring the server back (a crash, a timeout, a closed connection: yes). */
export function isRetryable(status: ServerStatus): boolean {
  return status.error === undefined || !NOT_RETRYABLE.has(status.error.code);
}

/** `CODE: message`, and the server's last stderr line when it adds something (it is redacted by the transport). */
export function reasonOf(status: ServerStatus): string {
  const base = status.error ? `${status.error.code}: ${status.error.message}` : `the server is ${status.state}`;
  const stderr = lastLine(status.stderrTail);
  return stderr && !base.includes(stderr) ? `${base} (stderr: ${stderr})` : base;
}

/** Why a server is `failed`: `reason`, and why nothing more will be tried. */
export function givenUp(reason: string, how: { monitored: boolean; retryable: boolean; restarts: number }): string {
  if (!how.monitored) return `${reason} (not monitored: restart it by hand)`;
  if (!how.retryable) return reason;
  if (how.restarts === 0) return `${reason} (automatic restarts are off: maxRestarts is 0)`;
  return `${reason}; gave up after ${how.restarts} restarts`;
}

function lastLine(text: string | undefined): string | undefined {
  const line = text?.trimEnd().split('\n').pop()?.trim();
  return line ? line.slice(0, 200) : undefined;
}

/** Whether restarting could help after the mcp service threw `error` (it throws only to refuse). */
export function isRetryableError(error: unknown): boolean {
  const code = codeOf(error);
  return code === undefined || !NOT_RETRYABLE.has(code);
}

/** `CODE: message` of a thrown error. */
export function reasonOfError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = codeOf(error);
  return code === undefined ? message : `${code}: ${message}`;
}

function codeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
