/**
 * The errors of the default sign-in channel. Messages say what happened and how
 * long was waited; they never carry the code, the state or a pasted URL.
 */
import { PlinthError } from 'plinth/sdk';

export type SignInCode =
  | 'PLN_E_OAUTH_STATE_MISMATCH'
  | 'PLN_E_OAUTH_CALLBACK_TIMEOUT'
  | 'PLN_E_OAUTH_CALLBACK_PORT'
  | 'PLN_E_OAUTH_CALLBACK_INVALID';

function signInError(code: SignInCode, message: string, hint: string, details: Record<string, unknown>, cause?: unknown): PlinthError {
  return new PlinthError(code, message, { plugin: 'oauth', hint, details, ...(cause !== undefined && { cause }) });
}

/** Where a callback came from, for messages. */
export type CallbackSource = 'browser' | 'pasted';

const FROM: Readonly<Record<CallbackSource, string>> = {
  browser: 'The sign-in callback',
  pasted: 'The pasted URL',
};

export function stateMismatchError(server: string, source: CallbackSource, missing: boolean): PlinthError {
  const what = missing ? 'carried no state' : 'carried a state other than the one sent';
  return signInError(
    'PLN_E_OAUTH_STATE_MISMATCH',
    `${FROM[source]} for "${server}" ${what}: refused as possibly forged, nothing was stored`,
    source === 'pasted'
      ? `run \`plinth auth login ${server}\` again and paste the address the browser ends on for that sign-in (not an older one)`
      : `run \`plinth auth login ${server}\` again; if it happens again, another program or web page is calling the callback address`,
    { server, source, missing },
  );
}

export function invalidCallbackError(server: string, source: CallbackSource): PlinthError {
  return signInError(
    'PLN_E_OAUTH_CALLBACK_INVALID',
    `${FROM[source]} for "${server}" carried neither an authorization code nor an error`,
    `run \`plinth auth login ${server}\` again; if it happens again, the authorization server does not redirect back as OAuth requires`,
    { server, source },
  );
}

/** `1500` → `1.5 s`; small limits (tests, misconfiguration) stay in ms so the message is never "0 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

export function callbackTimeoutError(server: string, timeoutMs: number): PlinthError {
  return signInError(
    'PLN_E_OAUTH_CALLBACK_TIMEOUT',
    `No sign-in callback for "${server}" arrived within ${formatDuration(timeoutMs)}`,
    `run \`plinth auth login ${server}\` again and finish signing in in the browser in time (the oauth setting callbackTimeoutMs sets the limit); if the browser runs on another machine, paste the address it ends on into the terminal`,
    { server, timeoutMs },
  );
}

export function callbackPortError(server: string, port: number, reason: string, cause?: unknown): PlinthError {
  return signInError(
    'PLN_E_OAUTH_CALLBACK_PORT',
    `The sign-in callback server for "${server}" cannot listen on 127.0.0.1 port ${port}: ${reason}`,
    port === 0
      ? 'check that the loopback interface (127.0.0.1) is up'
      : `free port ${port}, or change callbackPort (the oauth plugin's setting, or "oauth": { "callbackPort": … } on the server; 0 picks a free port, but a client registered with a fixed redirect URI needs that port)`,
    { server, port },
    cause,
  );
}
