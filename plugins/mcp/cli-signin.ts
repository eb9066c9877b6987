/**
 * The interactive prompt at which a sign-in may start outside `plinth auth
 * login`: a one-shot command run by a person on a terminal, whose server needs
 * an OAuth sign-in, asks whether to sign in now, and starts the server again
 * afterwards. Never with `--json`, in CI, without a terminal or inside a hook:
 * there the server's error names `plinth auth login <server>`.
 */
import type { CommandInput, PluginKernel } from 'plinth/sdk';
import type {} from '../oauth/types.js'; // the `Services` merge for 'oauth'
import { askYesNo, processTerminal, whyNotAsk } from '../trust/prompt.js';
import type { ServerStatus } from './types.js';

export type SignInIo = Pick<CommandInput, 'json' | 'out' | 'signal'>;

/** `status` itself, or the status after a sign-in the person agreed to and a new start. */
export async function offerSignIn(status: ServerStatus, io: SignInIo, kernel: Pick<PluginKernel, 'get'>, restart: (name: string) => Promise<ServerStatus>): Promise<ServerStatus> {
  if (status.error?.code !== 'PLN_E_OAUTH_SIGNIN_REQUIRED' || io.json || process.env.PLINTH_HOOK_EVENT !== undefined) return status;
  const terminal = processTerminal();
  if (whyNotAsk(terminal) !== undefined) return status;
  if (!(await askYesNo(`MCP server "${status.name}" needs you to sign in. Sign in now? [y/N] `, terminal, io.signal))) return status;
  const oauth = await kernel.get('oauth');
  await oauth.login(status.name, { progress: (line) => io.out.note(line), signal: io.signal });
  return restart(status.name);
}
