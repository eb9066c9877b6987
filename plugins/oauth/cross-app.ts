/**
 * Enterprise-managed authorization (cross-app access, SEP-990): the user's ID
 * token from their identity provider becomes an Identity Assertion JWT
 * Authorization Grant (ID-JAG) at that provider (RFC 8693 token exchange, the
 * SDK's `discoverAndRequestJwtAuthGrant`); the provider then presents the
 * ID-JAG at the MCP server's authorization server (RFC 7523 `jwt-bearer`
 * grant, the SDK's token request). No browser: a connection does it itself.
 *
 * The ID token comes from the environment (`"idToken": "${env:NAME}"`) or from
 * a command's standard output (`"idTokenCommand": [...]`, started through the
 * launcher, acting for whoever defined the server); it is read when a token is
 * needed, never stored, never logged. Neither it nor the ID-JAG is put in an
 * error: the IdP's refusal is reported by its `error` code only.
 */
import { discoverAndRequestJwtAuthGrant } from '@modelcontextprotocol/client';
import type { FetchLike } from '@modelcontextprotocol/client';
import { isPlinthError } from 'plinth/sdk';
import type { Launcher, McpServerDefinition } from 'plinth/sdk';
import { oauthErrorCode } from './classify.js';
import { oauthError } from './errors.js';
import type { CrossAppConfig } from './settings.js';

/** How long the ID token command may run. */
const COMMAND_TIMEOUT_MS = 30_000;

export interface CrossAppDeps {
  readonly server: McpServerDefinition;
  readonly config: CrossAppConfig;
  readonly fetch: FetchLike;
  readonly env: NodeJS.ProcessEnv;
  readonly launcher?: () => Promise<Launcher>;
}

/** What the MCP server's authorization server and resource are, as discovery found them. */
export interface CrossAppTarget {
  readonly authorizationServer: string;
  readonly resource: string;
  readonly scope?: string;
}

/** The ID-JAG for `target`, from the identity provider, in exchange for the user's ID token. */
export async function requestIdJag(deps: CrossAppDeps, target: CrossAppTarget): Promise<string> {
  const { server, config } = deps;
  const idToken = await userIdToken(deps);
  try {
    const grant = await discoverAndRequestJwtAuthGrant({
      idpUrl: config.idp,
      audience: target.authorizationServer,
      resource: target.resource,
      idToken,
      clientId: config.clientId,
      ...(config.clientSecret !== undefined && { clientSecret: config.clientSecret }),
      ...(target.scope !== undefined && { scope: target.scope }),
      fetchFn: deps.fetch,
    });
    return grant.jwtAuthGrant;
  } catch (error) {
    if (isPlinthError(error)) throw error;
    // fetch rejects with a TypeError whose cause is the socket's error; a time limit aborts it.
    if (error instanceof TypeError || (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))) {
      throw oauthError('PLN_E_OAUTH_UNREACHABLE', server.name, `The identity provider ${config.idp} of MCP server "${server.name}" could not be reached: ${describe(error)}`, {
        cause: error,
        details: { step: 'identity assertion', idp: config.idp },
      });
    }
    const code = oauthErrorCode(error);
    throw oauthError(
      'PLN_E_OAUTH_IDP_REFUSED',
      server.name,
      `The identity provider ${config.idp} did not give MCP server "${server.name}" an identity assertion grant (ID-JAG) for the user's ID token: ${code ?? describe(error)}`,
      { details: { idp: config.idp, ...(code !== undefined && { error: code }) } },
    );
  }
}

/** The user's ID token: from the environment variable, or the command's standard output (trimmed). */
async function userIdToken(deps: CrossAppDeps): Promise<string> {
  const { server, config } = deps;
  if (config.idTokenEnv !== undefined) {
    const value = deps.env[config.idTokenEnv]?.trim();
    if (!value) {
      throw oauthError('PLN_E_OAUTH_ID_TOKEN', server.name, `MCP server "${server.name}" takes the user's ID token from the environment variable ${config.idTokenEnv}, which is not set`, {
        hint: `sign in to your identity provider and set ${config.idTokenEnv} to the ID token it gave you (or use "oauth.crossApp.idTokenCommand")`,
      });
    }
    return value;
  }
  const [program, ...args] = config.idTokenCommand!;
  const shown = program!;
  if (deps.launcher === undefined) {
    throw oauthError('PLN_E_OAUTH_ID_TOKEN', server.name, `MCP server "${server.name}" takes the user's ID token from the command ${shown}, but no launcher is available to run it`);
  }
  const launcher = await deps.launcher();
  const result = await launcher.run({
    owner: 'oauth',
    purpose: `ID token for MCP server "${server.name}"`,
    program: program!,
    args,
    stdin: 'ignore',
    timeoutMs: COMMAND_TIMEOUT_MS,
    maxOutputBytes: 64 * 1024,
    ...(server.actingFor !== undefined && { actingFor: server.actingFor }),
  });
  const token = result.stdout.toString('utf8').trim();
  if (result.refused !== undefined) throw result.refused;
  if (result.spawnError !== undefined || result.exitCode !== 0 || result.timedOut || token === '' || /\s/.test(token)) {
    const why =
      result.spawnError !== undefined
        ? `could not be started (${result.spawnError})`
        : result.timedOut
          ? `did not finish within ${COMMAND_TIMEOUT_MS / 1000} s`
          : result.exitCode !== 0
            ? `exited with ${result.exitCode ?? result.signal}`
            : 'printed no single token';
    // Its output is never quoted: it may hold the token.
    throw oauthError('PLN_E_OAUTH_ID_TOKEN', server.name, `The command that gives the user's ID token for MCP server "${server.name}" (${shown}) ${why}`, {
      hint: 'run the command yourself (sign in to your identity provider first if it asks), then try again; it must print the ID token alone on its standard output',
    });
  }
  return token;
}

function describe(error: unknown): string {
  const cause = error instanceof TypeError && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const message = (error instanceof Error ? error.message : String(error)) + cause;
  // The SDK's messages name endpoints and codes; anything that looks like a JWT is cut out all the same.
  return message.replace(/ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[token]').slice(0, 300);
}
