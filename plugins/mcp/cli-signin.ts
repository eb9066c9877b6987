/**
 * The interactive prompt at which a sign-in may start outside `plinth auth
 * login`: a one-shot command run by a person on a terminal, whose server needs
 * an OAuth sign-in, asks whether to sign in now, and starts the server again
 * afterwards. Never with `--json`, in CI, without a terminal or inside a hook:
 * there the server's error names `plinth auth login <server>`.
 */
import { type CommandInput, type PluginKernel } from 'plinth/sdk';
import { type PromptIO, askYesNo, processTerminal, whyNotAsk } from 'plinth/internal';
import type { ServerStatus } from 'plinth/sdk';

export type SignInIo = Pick<CommandInput, 'json' | 'out' | 'signal'>;

export interface SignInOfferDeps {
  readonly kernel: Pick<PluginKernel, 'get'>;
  /** Starts the server again once signed in. */
  readonly restart: (name: string) => Promise<ServerStatus>;
  /** Where to ask; default the process's terminal. */
  readonly terminal?: PromptIO;
  readonly env?: Record<string, string | undefined>;
}

/** `status` itself, or the status after a sign-in the person agreed to and a new start. */
export async function offerSignIn(status: ServerStatus, io: SignInIo, deps: SignInOfferDeps): Promise<ServerStatus> {
  const env = deps.env ?? process.env;
  if (status.error?.code !== 'PLN_E_OAUTH_SIGNIN_REQUIRED' || io.json || env.PLINTH_HOOK_EVENT !== undefined) return status;
  const terminal = deps.terminal ?? processTerminal();
  if (whyNotAsk(terminal, env) !== undefined) return status;
  if (!(await askYesNo(`MCP server "${status.name}" needs you to sign in. Sign in now? [y/N] `, terminal, io.signal))) return status;
  const oauth = await deps.kernel.get('oauth');
  await oauth.login(status.name, { progress: (line) => io.out.note(line), signal: io.signal });
  return deps.restart(status.name);
}
