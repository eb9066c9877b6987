/**
 * Proves the OAuth fixture (test/support/oauth-server.ts) with the SDK's own
 * client auth: a sign-in through every metadata layout, then a protected tool
 * call; and the knobs the oauth plugin's tests lean on (rotation, revocation,
 * expiry, a refused authorization, a server that is down).
 */
import { randomBytes } from 'node:crypto';
import { auth, extractWWWAuthenticateParams, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { OAuthClientProvider, OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startOAuthFixture, type OAuthFixture, type OAuthFixtureOptions } from './support/oauth-server.js';

/** Nothing listens here: the test reads the redirect itself. */
const REDIRECT_URL = 'http://127.0.0.1:1455/callback';

/** The smallest OAuthClientProvider: everything in memory, the authorization URL kept instead of opened. */
class MemoryProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  lastState: string | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';

  constructor(
    readonly redirectUrl: string = REDIRECT_URL,
    client?: OAuthClientInformationMixed,
  ) {
    this.#client = client;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'oauth fixture self-test',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.#client = client;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  /** The tokens saved by the last sign-in or refresh; fails the test when there are none. */
  saved(): OAuthTokens & { refresh_token: string } {
    const tokens = this.#tokens;
    if (tokens?.refresh_token === undefined) throw new Error('no tokens with a refresh token were saved');
    return { ...tokens, refresh_token: tokens.refresh_token };
  }

  clientId(): string {
    const client = this.#client;
    if (client === undefined) throw new Error('no client information was saved');
    return client.client_id;
  }
}

const fixtures: OAuthFixture[] = [];

async function start(options?: OAuthFixtureOptions): Promise<OAuthFixture> {
  const fixture = await startOAuthFixture(options);
  fixtures.push(fixture);
  return fixture;
}

afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
});

/** What the transport does on a 401: take the metadata URL and scope from the challenge, then `auth()`. */
async function challenge(fixture: OAuthFixture): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const response = await fetch(fixture.mcpUrl, { method: 'POST' });
  await response.body?.cancel();
  expect(response.status).toBe(401);
  return extractWWWAuthenticateParams(response);
}

/** The whole sign-in: discovery (and registration), the redirect followed like a browser, the code exchanged. */
async function signIn(fixture: OAuthFixture, provider: MemoryProvider): Promise<void> {
  const { resourceMetadataUrl, scope } = await challenge(fixture);
  const serverUrl = fixture.mcpUrl;
  expect(await auth(provider, { serverUrl, resourceMetadataUrl, scope })).toBe('REDIRECT');
  if (provider.authorizationUrl === undefined) throw new Error('auth() asked for no redirect');
  const callback = await fixture.followAuthorization(provider.authorizationUrl);
  expect(callback.searchParams.get('state')).toBe(provider.lastState);
  const authorizationCode = callback.searchParams.get('code');
  if (authorizationCode === null) throw new Error(`no code in the callback: ${callback.searchParams.get('error')}`);
  expect(await auth(provider, { serverUrl, resourceMetadataUrl, scope, authorizationCode })).toBe('AUTHORIZED');
}

const ToolResult = z.object({ content: z.array(z.object({ type: z.literal('text'), text: z.string() })).min(1) });
const WhoAmI = z.object({ clientId: z.string(), scopes: z.array(z.string()), resource: z.string().optional() });

async function whoami(fixture: OAuthFixture, provider: MemoryProvider): Promise<{ text: string; me: z.infer<typeof WhoAmI> }> {
  const client = new Client({ name: 'oauth-fixture-self-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(fixture.mcpUrl), { authProvider: provider }));
  try {
    const [first] = ToolResult.parse(await client.callTool({ name: 'whoami', arguments: {} })).content;
    const text = first?.text ?? '';
    return { text, me: WhoAmI.parse(JSON.parse(text)) };
  } finally {
    await client.close();
  }
}

function post(url: string | undefined, form: Record<string, string>): Promise<Response> {
  if (url === undefined) throw new Error('the fixture serves no such endpoint');
  return fetch(url, { method: 'POST', body: new URLSearchParams(form) });
}

function bearer(fixture: OAuthFixture, accessToken: string): Promise<Response> {
  return fetch(fixture.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } });
}

const AS_LAYOUTS = ['oauth', 'openid', 'openid-path'] as const;
const LAYOUTS: OAuthFixtureOptions[] = [
  // A separate authorization server with an issuer path, so a legacy fallback to the MCP origin cannot pass by luck.
  ...(['header', 'path', 'root'] as const).flatMap((resourceMetadata) =>
    AS_LAYOUTS.map((authServerMetadata) => ({ resourceMetadata, authServerMetadata, separateAuthServer: true })),
  ),
  ...AS_LAYOUTS.map((authServerMetadata) => ({ resourceMetadata: 'none' as const, authServerMetadata })),
];

describe('the OAuth fixture', () => {
  it.each(LAYOUTS)(
    'signs a client in with resource metadata "$resourceMetadata" and server metadata "$authServerMetadata", then serves whoami',
    async (options) => {
      const fixture = await start(options);
      const provider = new MemoryProvider();

      await signIn(fixture, provider);
      const { text, me } = await whoami(fixture, provider);

      expect(fixture.counters.metadataRequests[fixture.authServerMetadataUrl]).toBeGreaterThan(0);
      if (fixture.resourceMetadataUrl !== undefined) {
        expect(fixture.counters.metadataRequests[fixture.resourceMetadataUrl]).toBeGreaterThan(0);
      }
      expect(fixture.counters.register).toBe(1);
      expect(me).toEqual({
        clientId: provider.clientId(),
        scopes: ['mcp:read', 'mcp:write'],
        resource: fixture.resource === undefined ? undefined : new URL(fixture.resource).href,
      });
      const { access, refresh } = fixture.issuedTokens();
      for (const token of [...access, ...refresh]) expect(text).not.toContain(token);
    },
  );

  it('answers a request without a token with 401 naming its metadata and the scope it wants', async () => {
    const fixture = await start({ challengeScope: 'mcp:read' });

    const response = await fetch(fixture.mcpUrl, { method: 'POST' });
    await response.body?.cancel();

    expect(response.status).toBe(401);
    const header = response.headers.get('www-authenticate') ?? '';
    expect(header).toMatch(/^Bearer error="invalid_token"/);
    expect(header).toContain(`resource_metadata="${fixture.resourceMetadataUrl}"`);
    expect(header).toContain('scope="mcp:read"');
    expect(fixture.counters).toMatchObject({ mcpRequests: 1, unauthorized: 1 });
    const metadata: unknown = await (await fetch(fixture.resourceMetadataUrl ?? '')).json();
    expect(metadata).toMatchObject({ resource: fixture.mcpUrl, authorization_servers: [fixture.issuer] });
  });

  it('rotates the refresh token and refuses the old one with invalid_grant', async () => {
    const fixture = await start();
    const provider = new MemoryProvider();
    await signIn(fixture, provider);
    const before = provider.saved();

    // With tokens saved, auth() refreshes instead of redirecting.
    expect(await auth(provider, { serverUrl: fixture.mcpUrl, ...(await challenge(fixture)) })).toBe('AUTHORIZED');
    const after = provider.saved();
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.access_token).not.toBe(before.access_token);
    expect(fixture.counters.refresh).toBe(1);

    const reused = await post(fixture.endpoints.token, {
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token,
      client_id: provider.clientId(),
    });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await whoami(fixture, provider)).me.clientId).toBe(provider.clientId());
  });

  it('records a revocation, after which neither token of the grant works', async () => {
    const fixture = await start();
    const provider = new MemoryProvider();
    await signIn(fixture, provider);
    const { access_token, refresh_token } = provider.saved();

    const revoked = await post(fixture.endpoints.revocation, {
      token: refresh_token,
      token_type_hint: 'refresh_token',
      client_id: provider.clientId(),
    });
    await revoked.body?.cancel();
    const call = await bearer(fixture, access_token);
    await call.body?.cancel();
    const refreshed = await post(fixture.endpoints.token, { grant_type: 'refresh_token', refresh_token, client_id: provider.clientId() });

    expect(revoked.status).toBe(200);
    expect(fixture.revoked).toEqual([refresh_token]);
    expect(fixture.counters.revoke).toBe(1);
    expect(call.status).toBe(401);
    expect(await refreshed.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('turns every current access token into a 401 on expireAccessTokens, and a refresh mends it', async () => {
    const fixture = await start();
    const provider = new MemoryProvider();
    await signIn(fixture, provider);

    fixture.expireAccessTokens();
    const expired = await bearer(fixture, provider.saved().access_token);
    await expired.body?.cancel();
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('expired');

    expect(await auth(provider, { serverUrl: fixture.mcpUrl, ...(await challenge(fixture)) })).toBe('AUTHORIZED');
    expect((await whoami(fixture, provider)).me.clientId).toBe(provider.clientId());
  });

  it('refuses a code presented with the wrong PKCE verifier', async () => {
    const fixture = await start();
    const provider = new MemoryProvider();
    const { resourceMetadataUrl } = await challenge(fixture);
    await auth(provider, { serverUrl: fixture.mcpUrl, resourceMetadataUrl });
    const callback = await fixture.followAuthorization(provider.authorizationUrl ?? '');
    provider.saveCodeVerifier(randomBytes(32).toString('base64url'));

    await expect(
      auth(provider, { serverUrl: fixture.mcpUrl, resourceMetadataUrl, authorizationCode: callback.searchParams.get('code') ?? '' }),
    ).rejects.toThrow(/code_verifier does not match/);
    expect(fixture.issuedTokens().access).toEqual([]);
  });

  it('redirects with access_denied and the state when the user declines', async () => {
    const fixture = await start({ deny: true });
    const provider = new MemoryProvider();
    const { resourceMetadataUrl } = await challenge(fixture);
    await auth(provider, { serverUrl: fixture.mcpUrl, resourceMetadataUrl });

    const callback = await fixture.followAuthorization(provider.authorizationUrl ?? '');

    expect(callback.origin + callback.pathname).toBe(REDIRECT_URL);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(provider.lastState);
    expect(callback.searchParams.has('code')).toBe(false);
  });

  it('signs in a pre-registered confidential client, on another loopback port than the one registered', async () => {
    const secret = randomBytes(16).toString('hex');
    const fixture = await start({
      dynamicRegistration: false,
      preRegistered: { clientId: 'plinth-test', clientSecret: secret, redirectUris: ['http://127.0.0.1:1000/callback'] },
    });
    // RFC 8252 §7.3: the SDK's authorization handler lets a loopback redirect URI differ in its port only.
    const provider = new MemoryProvider('http://127.0.0.1:2000/callback', { client_id: 'plinth-test', client_secret: secret });

    await signIn(fixture, provider);

    expect((await whoami(fixture, provider)).me.clientId).toBe('plinth-test');
    expect(fixture.counters.register).toBe(0);
    expect(fixture.endpoints.registration).toBeUndefined();
    expect(await (await fetch(fixture.authServerMetadataUrl)).json()).not.toHaveProperty('registration_endpoint');
  });

  it.each([false, true])('setDown makes the token endpoint unreachable while the MCP server answers (separate: %s)', async (separateAuthServer) => {
    const fixture = await start({ separateAuthServer });

    await fixture.setDown(true);
    await expect(post(fixture.endpoints.token, { grant_type: 'refresh_token' })).rejects.toThrow(TypeError);
    const mcp = await fetch(fixture.mcpUrl, { method: 'POST' });
    await mcp.body?.cancel();
    expect(mcp.status).toBe(401);

    await fixture.setDown(false);
    const back = await post(fixture.endpoints.token, { grant_type: 'refresh_token' });
    await back.body?.cancel();
    expect(back.status).toBe(400);
  });

  it('closes every listening socket', async () => {
    const fixture = await start({ separateAuthServer: true });

    await fixture.close();

    await expect(fetch(fixture.mcpUrl, { method: 'POST' })).rejects.toThrow(TypeError);
    await expect(fetch(fixture.authServerMetadataUrl)).rejects.toThrow(TypeError);
  });
});
