/**
 * The oauth plugin's settings (declared in manifest.json) and a server's
 * `oauth` entry in `mcpServers`, both checked with zod. A client secret or a
 * private key may be written as `${env:NAME}` so that it stays out of settings files.
 */
import { z } from 'zod';
import type { McpServerDefinition } from 'plinth/sdk';
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

/** A Client ID Metadata Document URL: https with a path, as the 2025-11-25 specification (and the SDK) require. */
const metadataDocumentUrl = z.string().refine(
  (value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' && url.pathname !== '/';
    } catch {
      return false;
    }
  },
  { error: 'expected an https:// URL with a path (the client metadata document plinth is known by)' },
);

const ENV_REFERENCE = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;
const ENV_REFERENCE_SOURCE = ENV_REFERENCE;

const serverOAuthSchema = z.strictObject({
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  scopes: z.union([z.array(z.string().min(1)), z.string().min(1)]).optional(),
  callbackPort: port.optional(),
  clientName: z.string().min(1).optional(),
  clientMetadataUrl: metadataDocumentUrl.optional(),
  grant: z.enum(['authorization_code', 'client_credentials', 'jwt_bearer'], { error: 'expected "authorization_code", "client_credentials" or "jwt_bearer"' }).optional(),
  tokenEndpointAuthMethod: z
    .enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'], {
      error: 'expected "client_secret_basic", "client_secret_post", "private_key_jwt" or "none"',
    })
    .optional(),
  privateKey: z.string().min(1).optional(),
  signingAlgorithm: z.string().regex(/^(RS|PS|ES|HS)(256|384|512)$|^EdDSA$/, { error: 'expected a JWS algorithm such as "RS256" or "ES256"' }).optional(),
  dpop: z.boolean().optional(),
  crossApp: z
    .strictObject({
      idp: z.string().refine((value) => URL.parse(value)?.protocol === 'https:' || isLoopbackHttp(value), {
        error: 'expected the identity provider\'s issuer, an https:// URL (http:// only on 127.0.0.1, ::1 or localhost)',
      }),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1).optional(),
      idToken: z.string().regex(ENV_REFERENCE_SOURCE, { error: 'expected "${env:NAME}": an ID token is a secret and never written into settings' }).optional(),
      idTokenCommand: z.array(z.string().min(1)).min(1).optional(),
    })
    .optional(),
});

/** `http://` to this machine: an identity provider run locally (development, tests). */
function isLoopbackHttp(value: string): boolean {
  const url = URL.parse(value);
  return url !== null && url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

/** How a machine-to-machine server (`"grant": "client_credentials"`) authenticates plinth at the token endpoint. */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/** A server's OAuth settings once checked, the secret resolved. */
export interface ServerOAuthConfig {
  readonly clientId?: string;
  readonly clientSecret?: string;
  /** Space-separated, as OAuth sends it. */
  readonly scope?: string;
  readonly callbackPort?: number;
  readonly clientName: string;
  /** The URL plinth offers as its client id where the authorization server accepts Client ID Metadata Documents. */
  readonly clientMetadataUrl?: string;
  /**
   * `authorization_code` (a person signs in in a browser), `client_credentials` (machine to machine, no browser)
   * or `jwt_bearer` (cross-app access: an ID-JAG from the user's identity provider, no browser).
   */
  readonly grant: 'authorization_code' | 'client_credentials' | 'jwt_bearer';
  /** For `client_credentials`: how plinth authenticates at the token endpoint (undefined: as the authorization server's metadata allows). */
  readonly tokenEndpointAuthMethod?: ClientAuthMethod;
  /** For `private_key_jwt`: the PEM (PKCS #8) private key, or the HMAC secret for `HS…`, resolved. */
  readonly privateKey?: string;
  /** For `private_key_jwt`: the JWS algorithm of the client assertion. */
  readonly signingAlgorithm?: string;
  /** DPoP-bound tokens (RFC 9449): undefined where the MCP server wants them, `true` also wherever the authorization server supports them, `false` never. */
  readonly dpop?: boolean;
  /** Enterprise-managed authorization (cross-app access): the ID-JAG comes from this identity provider. */
  readonly crossApp?: CrossAppConfig;
}

/** `oauth.crossApp`, resolved: where the ID token comes from and plinth's client at the identity provider. */
export interface CrossAppConfig {
  /** The identity provider's issuer (its metadata is discovered from it). */
  readonly idp: string;
  /** plinth's client at the identity provider. */
  readonly clientId: string;
  readonly clientSecret?: string;
  /** The user's ID token, from `${env:NAME}` (resolved when it is needed, not before). */
  readonly idTokenEnv?: string;
  /** A command whose standard output is the user's ID token. */
  readonly idTokenCommand?: readonly string[];
}


/**
 * The `oauth` entry of `definition`, or undefined when it is `false` (the server
 * never gets an auth provider). PLN_E_OAUTH_CONFIG names the entry's origin.
 */
export function serverOAuthConfig(definition: McpServerDefinition, env: NodeJS.ProcessEnv = process.env): ServerOAuthConfig | undefined {
  const raw = definition.oauth;
  if (raw === false) return undefined;
  if (raw === undefined || raw === true) return { clientName: 'plinth', grant: 'authorization_code' };
  const parsed = serverOAuthSchema.safeParse(raw);
  const invalid = (message: string) =>
    oauthError('PLN_E_OAUTH_CONFIG', definition.name, `MCP server "${definition.name}" ${message} (${definition.origin})`, { details: { origin: definition.origin } });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = ['oauth', ...issue.path.map(String)].join('.');
    throw invalid(`has an invalid "${at}": ${issue.message}`);
  }
  const { clientId, clientSecret, scopes, callbackPort, clientName, clientMetadataUrl, tokenEndpointAuthMethod, privateKey, signingAlgorithm, dpop, crossApp } = parsed.data;
  if (clientSecret !== undefined && clientId === undefined) throw invalid('has "oauth.clientSecret" without "oauth.clientId"');
  if (parsed.data.grant === 'jwt_bearer' && crossApp === undefined) throw invalid('has "oauth.grant": "jwt_bearer" without "oauth.crossApp" (where the grant comes from)');
  const grant = crossApp !== undefined ? 'jwt_bearer' : parsed.data.grant;
  if (crossApp !== undefined) {
    if (parsed.data.grant !== undefined && parsed.data.grant !== 'jwt_bearer') throw invalid(`has "oauth.crossApp" with "oauth.grant": "${parsed.data.grant}" (cross-app access is the jwt_bearer grant)`);
    if (clientId === undefined) throw invalid('has "oauth.crossApp" without "oauth.clientId" (plinth\'s client at the MCP server\'s authorization server)');
    if ((crossApp.idToken === undefined) === (crossApp.idTokenCommand === undefined)) throw invalid('needs exactly one of "oauth.crossApp.idToken" ("${env:NAME}") and "oauth.crossApp.idTokenCommand"');
    if (privateKey !== undefined || signingAlgorithm !== undefined || clientMetadataUrl !== undefined || callbackPort !== undefined || tokenEndpointAuthMethod === 'private_key_jwt') {
      throw invalid('has "oauth.privateKey", "oauth.signingAlgorithm", "oauth.clientMetadataUrl", "oauth.callbackPort" or "private_key_jwt", which do not apply with "oauth.crossApp"');
    }
  }
  const machine = grant === 'client_credentials';
  const method = tokenEndpointAuthMethod ?? (privateKey !== undefined ? 'private_key_jwt' : undefined);
  if (machine) {
    if (clientId === undefined) throw invalid('has "oauth.grant": "client_credentials" without "oauth.clientId"');
    if (method === 'private_key_jwt' && privateKey === undefined) throw invalid('authenticates with "private_key_jwt" but has no "oauth.privateKey"');
    if (method !== 'private_key_jwt' && method !== 'none' && clientSecret === undefined) {
      throw invalid('has "oauth.grant": "client_credentials" without "oauth.clientSecret" or "oauth.privateKey"');
    }
  } else if (crossApp === undefined && (tokenEndpointAuthMethod !== undefined || privateKey !== undefined || signingAlgorithm !== undefined)) {
    throw invalid('has "oauth.tokenEndpointAuthMethod", "oauth.privateKey" or "oauth.signingAlgorithm", which apply only with "oauth.grant": "client_credentials"');
  }
  return {
    ...(clientId !== undefined && { clientId }),
    ...(clientSecret !== undefined && { clientSecret: resolveSecret(clientSecret, 'clientSecret', definition, env) }),
    ...(scopes !== undefined && { scope: typeof scopes === 'string' ? scopes : scopes.join(' ') }),
    ...(callbackPort !== undefined && { callbackPort }),
    ...(clientMetadataUrl !== undefined && { clientMetadataUrl }),
    grant: grant ?? 'authorization_code',
    ...(method !== undefined && { tokenEndpointAuthMethod: method }),
    ...(privateKey !== undefined && { privateKey: resolveSecret(privateKey, 'privateKey', definition, env) }),
    ...(method === 'private_key_jwt' && { signingAlgorithm: signingAlgorithm ?? 'RS256' }),
    ...(dpop !== undefined && { dpop }),
    ...(crossApp !== undefined && {
      crossApp: {
        idp: crossApp.idp,
        clientId: crossApp.clientId,
        ...(crossApp.clientSecret !== undefined && { clientSecret: resolveSecret(crossApp.clientSecret, 'crossApp.clientSecret', definition, env) }),
        ...(crossApp.idToken !== undefined && { idTokenEnv: ENV_REFERENCE.exec(crossApp.idToken)![1]! }),
        ...(crossApp.idTokenCommand !== undefined && { idTokenCommand: crossApp.idTokenCommand }),
      },
    }),
    clientName: clientName ?? 'plinth',
  };
}

function resolveSecret(value: string, key: string, definition: McpServerDefinition, env: NodeJS.ProcessEnv): string {
  const reference = ENV_REFERENCE.exec(value);
  if (!reference) return value;
  const resolved = env[reference[1]!];
  if (resolved === undefined || resolved === '') {
    throw oauthError('PLN_E_OAUTH_CONFIG', definition.name, `MCP server "${definition.name}" takes "oauth.${key}" from the environment variable ${reference[1]}, which is not set (${definition.origin})`, {
      hint: `set ${reference[1]} in the environment plinth runs in`,
      details: { origin: definition.origin },
    });
  }
  return resolved;
}
