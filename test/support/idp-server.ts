/**
 * A real enterprise identity provider on 127.0.0.1 for the cross-app access
 * tests (SEP-990): it mints ID tokens for the test's users (what signing in
 * to it would give), and its token endpoint exchanges such an ID token for an
 * Identity Assertion JWT Authorization Grant (ID-JAG) — RFC 8693 token
 * exchange, `requested_token_type` `urn:ietf:params:oauth:token-type:id-jag`
 * — for one authorization server (`audience`) and MCP server (`resource`).
 * The ID-JAG names the client the user's app is at that authorization server
 * (`client_id`): the IdP's policy maps its own client to it. Everything is
 * ES256 with the IdP's key; {@link IdpFixture.publicKey} is what an
 * authorization server that trusts this IdP verifies ID-JAGs with.
 *
 *   const idp = await startIdpFixture({ clientId: 'plinth-at-idp', jagClientId: 'plinth' });
 *   const server = await startOAuthFixture({ jwtBearer: { idpIssuer: idp.issuer, idpPublicKey: idp.publicKey, … } });
 */
import { type KeyObject, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

export interface IdpFixtureOptions {
  /** The client that may exchange tokens at this IdP (plinth's client there). */
  clientId: string;
  /** Its secret, sent in the body (`client_secret`); none: a public client. */
  clientSecret?: string;
  /** The client id the ID-JAG names at the MCP server's authorization server. */
  jagClientId: string;
  /** Lifetime of an ID-JAG, in seconds. Default 300. */
  jagTtlSeconds?: number;
}

/** One token exchange as it arrived (never a token). */
export interface TokenExchangeRecord {
  readonly clientId?: string;
  readonly audience?: string;
  readonly resource?: string;
  readonly scope?: string;
  readonly accepted: boolean;
  readonly error?: string;
}

export interface IdpFixture {
  /** The IdP's issuer, `http://127.0.0.1:PORT`. */
  readonly issuer: string;
  /** Verifies the ID-JAGs (and ID tokens) this IdP signs. */
  readonly publicKey: KeyObject;
  /** An ID token for `subject`, as signing in to this IdP with the client would give (audience: the client). */
  idToken(subject: string, options?: { expiresInSeconds?: number; audience?: string }): string;
  /** Every token exchange, in order. */
  readonly exchanges: readonly TokenExchangeRecord[];
  /** Every ID-JAG issued, so a test can scan output for them. */
  readonly issuedGrants: readonly string[];
  close(): Promise<void>;
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

function signJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode({ alg: 'ES256', ...header })}.${encode(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

function verifiedClaims(jwt: string, key: KeyObject): Record<string, unknown> | undefined {
  const [header, payload, signature] = jwt.split('.');
  if (header === undefined || payload === undefined || signature === undefined) return undefined;
  try {
    if (!verify('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))) return undefined;
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export async function startIdpFixture(options: IdpFixtureOptions): Promise<IdpFixture> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const exchanges: TokenExchangeRecord[] = [];
  const issuedGrants: string[] = [];
  const app = express();
  app.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.json({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', TOKEN_EXCHANGE],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'none'],
    });
  });
  app.post('/token', express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as Record<string, string | undefined>;
    const refuse = (error: string, description: string): void => {
      exchanges.push({ ...(body.client_id === undefined ? {} : { clientId: body.client_id }), accepted: false, error: description });
      res.status(400).json({ error, error_description: description });
    };
    if (body.grant_type !== TOKEN_EXCHANGE) return refuse('unsupported_grant_type', 'only token exchange');
    if (body.client_id !== options.clientId || (options.clientSecret !== undefined && body.client_secret !== options.clientSecret)) {
      exchanges.push({ ...(body.client_id === undefined ? {} : { clientId: body.client_id }), accepted: false, error: 'client' });
      res.status(401).json({ error: 'invalid_client', error_description: 'client authentication failed' });
      return;
    }
    if (body.requested_token_type !== ID_JAG || body.subject_token_type !== ID_TOKEN) return refuse('invalid_request', 'an ID token for an ID-JAG only');
    if (body.audience === undefined || body.resource === undefined) return refuse('invalid_request', 'audience and resource are required');
    const claims = body.subject_token === undefined ? undefined : verifiedClaims(body.subject_token, publicKey);
    if (claims === undefined || claims.iss !== issuer) return refuse('invalid_grant', 'the subject token is not an ID token of this IdP');
    if (claims.aud !== options.clientId) return refuse('invalid_grant', 'the ID token is for another client');
    if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds()) return refuse('invalid_grant', 'the ID token has expired');
    const ttl = options.jagTtlSeconds ?? 300;
    const grant = signJwt(
      { typ: 'oauth-id-jag+jwt' },
      {
        iss: issuer,
        sub: claims.sub,
        aud: body.audience,
        resource: body.resource,
        client_id: options.jagClientId,
        jti: randomBytes(16).toString('base64url'),
        iat: nowSeconds(),
        exp: nowSeconds() + ttl,
        ...(body.scope === undefined ? {} : { scope: body.scope }),
      },
      privateKey,
    );
    issuedGrants.push(grant);
    exchanges.push({ clientId: body.client_id, audience: body.audience, resource: body.resource, ...(body.scope === undefined ? {} : { scope: body.scope }), accepted: true });
    res.json({ access_token: grant, issued_token_type: ID_JAG, token_type: 'N_A', expires_in: ttl, ...(body.scope === undefined ? {} : { scope: body.scope }) });
  });
  server.on('request', app);
  return {
    issuer,
    publicKey,
    idToken: (subject, opts = {}) =>
      signJwt(
        { typ: 'JWT' },
        { iss: issuer, sub: subject, aud: opts.audience ?? options.clientId, iat: nowSeconds(), exp: nowSeconds() + (opts.expiresInSeconds ?? 600), nonce: randomBytes(8).toString('hex') },
        privateKey,
      ),
    exchanges,
    issuedGrants,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
