/**
 * The oauth plugin's settings (declared in manifest.json) and a server's
 * `oauth` entry in `mcpServers`, both checked with zod. A client secret may be
 * written as `${env:NAME}` so that it stays out of settings files.
 */
import { z } from 'zod';
import type { McpServerDefinition } from '../mcp/types.js';
import { oauthError } from './errors.js';

// setTimeout fires at once for delays above 2^31-1 ms: a larger value would mean "no time at all".
const ms = z.number().int().positive().max(2_147_483_647);
const port = z.number().int().min(0).max(65_535);

const settingsSchema = z.object({
  storage: z.enum(['auto', 'keychain', 'file'], { error: 'expected "auto", "keychain" or "file"' }),
  keychainModule: z.string().min(1),
  probeTimeoutMs: ms,
  keychainTimeoutMs: ms,
  refreshSkewSeconds: z.number().int().nonnegative().max(86_400),
  callbackPort: port,
  callbackTimeoutMs: ms,
  openBrowser: z.boolean(),
  requestTimeoutMs: ms,
});

export type OAuthSettings = z.infer<typeof settingsSchema>;

/** The validated settings; the kernel already applied defaults and checked types, this checks values. */
export function oauthSettings(values: Readonly<Record<string, unknown>>): OAuthSettings {
  const parsed = settingsSchema.safeParse(values);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw oauthError('PLN_E_OAUTH_CONFIG', undefined, `The oauth plugin's setting "${issue.path.join('.')}" is invalid: ${issue.message}`, {
    hint: 'fix it under "plugins": { "oauth": { … } } in settings.json',
  });
}

const serverOAuthSchema = z.strictObject({
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  scopes: z.union([z.array(z.string().min(1)), z.string().min(1)]).optional(),
  callbackPort: port.optional(),
  clientName: z.string().min(1).optional(),
});

/** A server's OAuth settings once checked, the secret resolved. */
export interface ServerOAuthConfig {
  readonly clientId?: string;
  readonly clientSecret?: string;
  /** Space-separated, as OAuth sends it. */
  readonly scope?: string;
  readonly callbackPort?: number;
  readonly clientName: string;
  /** `oauth` was given (true or an object): sign-in is expected even before the server answers 401. */
  readonly explicit: boolean;
}

const ENV_REFERENCE = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * The `oauth` entry of `definition`, or undefined when it is `false` (the server
 * never gets an auth provider). PLN_E_OAUTH_CONFIG names the entry's origin.
 */
export function serverOAuthConfig(definition: McpServerDefinition, env: NodeJS.ProcessEnv = process.env): ServerOAuthConfig | undefined {
  const raw = definition.oauth;
  if (raw === false) return undefined;
  if (raw === undefined || raw === true) return { clientName: 'plinth', explicit: raw === true };
  const parsed = serverOAuthSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = ['oauth', ...issue.path.map(String)].join('.');
    throw oauthError('PLN_E_OAUTH_CONFIG', definition.name, `MCP server "${definition.name}" has an invalid "${at}" (${definition.origin}): ${issue.message}`, {
      details: { origin: definition.origin },
    });
  }
  const { clientId, clientSecret, scopes, callbackPort, clientName } = parsed.data;
  if (clientSecret !== undefined && clientId === undefined) {
    throw oauthError('PLN_E_OAUTH_CONFIG', definition.name, `MCP server "${definition.name}" has "oauth.clientSecret" without "oauth.clientId" (${definition.origin})`, {
      details: { origin: definition.origin },
    });
  }
  return {
    ...(clientId !== undefined && { clientId }),
    ...(clientSecret !== undefined && { clientSecret: resolveSecret(clientSecret, definition, env) }),
    ...(scopes !== undefined && { scope: typeof scopes === 'string' ? scopes : scopes.join(' ') }),
    ...(callbackPort !== undefined && { callbackPort }),
    clientName: clientName ?? 'plinth',
    explicit: true,
  };
}

function resolveSecret(value: string, definition: McpServerDefinition, env: NodeJS.ProcessEnv): string {
  const reference = ENV_REFERENCE.exec(value);
  if (!reference) return value;
  const resolved = env[reference[1]!];
  if (resolved === undefined || resolved === '') {
    throw oauthError('PLN_E_OAUTH_CONFIG', definition.name, `MCP server "${definition.name}" takes "oauth.clientSecret" from the environment variable ${reference[1]}, which is not set (${definition.origin})`, {
      hint: `set ${reference[1]} in the environment plinth runs in`,
      details: { origin: definition.origin },
    });
  }
  return resolved;
}
