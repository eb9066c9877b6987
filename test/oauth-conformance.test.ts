/**
 * The MCP client conformance scenarios of the authorization specification
 * (2025-11-25, and the 2025-03-26 fallback), reproduced against the real
 * authorization server and protected MCP server of test/support/oauth-server.ts
 * on 127.0.0.1, with plinth used the way a host uses it: a kernel with the
 * builtin plugins, `mcp.start`, a non-interactive `oauth.login` through the
 * channel hook (the host plays the browser, as the conformance suite's
 * authorization server redirects at once), `mcp.restart`, a tool call.
 *
 * Why not the suite itself (`@modelcontextprotocol/conformance`): its 0.1.16
 * needs Node 22 (`fs.globSync`), and plinth supports and is tested on Node 20.
 *
 * Each test names the scenario it stands for.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpService, ServerStatus } from 'plinth/sdk';
import type { OAuthService, SignInChannel } from 'plinth/sdk';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthFixture } from './support/oauth-server.js';

const kernels: TestKernel[] = [];
const fixtures: OAuthFixture[] = [];
/** Environment variables a test set (the oauth plugin reads `${env:…}` from the process's environment). */
const envSet: string[] = [];

afterEach(async () => {
  for (const name of envSet.splice(0)) delete process.env[name];
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
});

async function fixture(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const started = await startOAuthFixture(options);
  fixtures.push(started);
  return started;
}

interface Host {
  readonly kernel: TestKernel;
  readonly oauth: OAuthService;
  readonly mcp: McpService;
}

/** A host's kernel with one remote server `secure`; its sign-in channel follows the authorization URL itself (no browser, no terminal). */
async function host(server: OAuthFixture, entry: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Host> {
  for (const [name, value] of Object.entries(env)) {
    process.env[name] = value;
    envSet.push(name);
  }
  const kernel = await createTestKernel({
    builtin: true,
    env,
    settings: {
      mcpServers: { secure: { url: server.mcpUrl, ...entry } },
      plugins: {
        health: { enabled: false },
        'mcp-demo': { enabled: false },
        mcp: { settings: { retries: 0 } },
        oauth: { settings: { openBrowser: false, callbackTimeoutMs: 20_000 } },
      },
    },
  });
  kernels.push(kernel);
  const oauth = await kernel.get('oauth');
  oauth.hooks.channel.tap('host', (): SignInChannel => {
    let landed: Promise<URL> | undefined;
    return {
      redirectUrl: 'http://127.0.0.1:9/callback',
      async open(url) {
        landed = server.followAuthorization(url);
      },
      callback: async () => landed!,
      async close() {},
    };
  });
  return { kernel, oauth, mcp: await kernel.get('mcp') };
}

async function start(mcp: McpService): Promise<ServerStatus> {
  return mcp.start('secure', { retries: 0 });
}

/** What a host does when a server needs a sign-in: sign in, start it again. */
async function signInAndRestart(booted: Host): Promise<ServerStatus> {
  await booted.oauth.login('secure', { progress: () => {} });
  return booted.mcp.restart('secure', { retries: 0 });
}

async function whoami(mcp: McpService): Promise<{ clientId: string; scopes: string[] }> {
  const result = await mcp.callTool('secure__whoami', {});
  expect(result.error).toBeUndefined();
  return JSON.parse(result.text) as { clientId: string; scopes: string[] };
}

describe('discovery from the request that failed', () => {
  it('auth/metadata-var3: finds protected-resource metadata at a custom URL named only in the 401 of the POST (the GET is not challenged)', async () => {
    const server = await fixture({ resourceMetadata: 'header', protectGet: false, separateAuthServer: true, authServerMetadata: 'openid' });
    const booted = await host(server);
    const failed = await start(booted.mcp);
    expect(failed.error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    const status = await signInAndRestart(booted);
    expect(status.state).toBe('connected');
    expect(server.counters.metadataRequests[server.resourceMetadataUrl!]).toBeGreaterThan(0);
    expect((await whoami(booted.mcp)).clientId).toBe(server.registeredClients()[0]?.client_id);
  });

  it('auth/metadata-var3 from a fresh process: `login` asks with the POST a connection sends first, not a GET', async () => {
    const server = await fixture({ resourceMetadata: 'header', protectGet: false, separateAuthServer: true });
    const booted = await host(server);
    await booted.oauth.login('secure', { progress: () => {} });
    expect((await start(booted.mcp)).state).toBe('connected');
  });

  it("auth/scope-from-www-authenticate: asks for the scope of the failed request's challenge, not every scope the metadata lists", async () => {
    const server = await fixture({ challengeScope: 'mcp:read', protectGet: false });
    const booted = await host(server);
    expect((await start(booted.mcp)).error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect((await signInAndRestart(booted)).state).toBe('connected');
    expect(server.authorizations.map((a) => a.scopes)).toEqual([['mcp:read']]);
  });
});

describe('step-up authorization', () => {
  it('auth/scope-step-up: a 403 insufficient_scope leads to a sign-in for the scope the server named, with what was granted before', async () => {
    const server = await fixture({ openInitialize: true, challengeScope: 'mcp:read', callScope: 'mcp:read mcp:write', issueRefreshTokens: false, protectGet: false });
    const booted = await host(server);
    expect((await start(booted.mcp)).error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect((await signInAndRestart(booted)).state).toBe('connected');
    expect(server.authorizations[0]?.scopes).toEqual(['mcp:read']);

    const refused = await booted.mcp.callTool('secure__whoami', {});
    expect(refused.ok).toBe(false);
    expect(refused.error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');

    expect((await signInAndRestart(booted)).state).toBe('connected');
    expect([...(server.authorizations[1]?.scopes ?? [])].sort()).toEqual(['mcp:read', 'mcp:write']);
    expect((await whoami(booted.mcp)).scopes.sort()).toEqual(['mcp:read', 'mcp:write']);
  });
});

describe('client identity', () => {
  const DOCUMENT = 'https://plinth.example/oauth/client.json';
  const documents = { [DOCUMENT]: { redirect_uris: ['http://127.0.0.1/callback'], client_name: 'plinth' } };

  it('auth/basic-cimd: offers its Client ID Metadata Document URL as client id where the server accepts them, and registers nothing', async () => {
    const server = await fixture({ clientMetadataDocuments: documents });
    const booted = await host(server, { oauth: { clientMetadataUrl: DOCUMENT } });
    expect((await signInAndRestart(booted)).state).toBe('connected');
    expect(server.authorizations[0]?.clientId).toBe(DOCUMENT);
    expect(server.counters.register).toBe(0);
    expect((await whoami(booted.mcp)).clientId).toBe(DOCUMENT);
  });

  it('prefers the metadata document to a pre-registered client where the server accepts documents', async () => {
    const server = await fixture({ clientMetadataDocuments: documents, preRegistered: { clientId: 'pre', redirectUris: ['http://127.0.0.1/callback'] } });
    const booted = await host(server, { oauth: { clientMetadataUrl: DOCUMENT, clientId: 'pre' } });
    await booted.oauth.login('secure', { progress: () => {} });
    expect(server.authorizations[0]?.clientId).toBe(DOCUMENT);
  });

  it('falls back to the pre-registered client, then to dynamic registration, where the server does not accept documents', async () => {
    const preServer = await fixture({ preRegistered: { clientId: 'pre', redirectUris: ['http://127.0.0.1/callback'] } });
    const pre = await host(preServer, { oauth: { clientMetadataUrl: DOCUMENT, clientId: 'pre' } });
    await pre.oauth.login('secure', { progress: () => {} });
    expect(preServer.authorizations[0]?.clientId).toBe('pre');
    expect(preServer.counters.register).toBe(0);

    const dcrServer = await fixture();
    const dcr = await host(dcrServer, { oauth: { clientMetadataUrl: DOCUMENT } });
    await dcr.oauth.login('secure', { progress: () => {} });
    expect(dcrServer.counters.register).toBe(1);
    expect(dcrServer.authorizations[0]?.clientId).toBe(dcrServer.registeredClients()[0]?.client_id);
  });

  it('refuses a metadata document URL that is not https with a path', async () => {
    const server = await fixture();
    const booted = await host(server, { oauth: { clientMetadataUrl: 'http://plinth.example/client.json' } });
    await expect(booted.oauth.login('secure', { progress: () => {} })).rejects.toMatchObject({ code: 'PLN_E_OAUTH_CONFIG' });
  });
});

describe('machine-to-machine servers (client_credentials, no browser)', () => {
  const SECRET = 'cc-secret-value-7f3a';

  it.each(['client_secret_basic', 'client_secret_post'] as const)('auth/client-credentials (%s): a connection gets its token itself, the secret from the environment', async (method) => {
    const server = await fixture({ clientCredentials: { clientId: 'robot', clientSecret: SECRET, method } });
    const booted = await host(
      server,
      { oauth: { grant: 'client_credentials', clientId: 'robot', clientSecret: '${env:ROBOT_SECRET}', tokenEndpointAuthMethod: method, scopes: ['mcp:read'] } },
      { ROBOT_SECRET: SECRET },
    );
    const status = await start(booted.mcp);
    expect(status.error).toBeUndefined();
    expect(status.state).toBe('connected');
    expect(server.clientCredentialRequests).toEqual([expect.objectContaining({ clientId: 'robot', method, accepted: true, scope: 'mcp:read' })]);
    expect(await whoami(booted.mcp)).toMatchObject({ clientId: 'robot', scopes: ['mcp:read'] });
    expect(server.counters.authorize).toBe(0);
    expect(JSON.stringify(status)).not.toContain(SECRET);
  });

  it('auth/client-credentials-jwt: authenticates with a private_key_jwt assertion signed with the key from the environment, and `auth login` needs no channel', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const server = await fixture({ clientCredentials: { clientId: 'robot', method: 'private_key_jwt', publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() } });
    const booted = await host(server, { oauth: { grant: 'client_credentials', clientId: 'robot', privateKey: '${env:ROBOT_KEY}', signingAlgorithm: 'ES256' } }, { ROBOT_KEY: pem });
    const signedIn = await booted.oauth.login('secure', { progress: () => {} });
    expect(signedIn.server).toBe('secure');
    expect(server.clientCredentialRequests).toEqual([expect.objectContaining({ clientId: 'robot', method: 'private_key_jwt', accepted: true })]);
    expect((await start(booted.mcp)).state).toBe('connected');
    expect((await whoami(booted.mcp)).clientId).toBe('robot');
    // The connection used the stored token: no second token request.
    expect(server.clientCredentialRequests).toHaveLength(1);
    expect(server.counters.authorize).toBe(0);
  });

  it('asks for a new token when the one it has is refused, rather than refreshing or asking for a sign-in', async () => {
    const server = await fixture({ clientCredentials: { clientId: 'robot', clientSecret: SECRET, method: 'client_secret_post' } });
    const booted = await host(server, { oauth: { grant: 'client_credentials', clientId: 'robot', clientSecret: '${env:ROBOT_SECRET}' } }, { ROBOT_SECRET: SECRET });
    const status = await start(booted.mcp);
    expect(status.error).toBeUndefined();
    expect(status.state).toBe('connected');
    server.expireAccessTokens();
    expect((await whoami(booted.mcp)).clientId).toBe('robot');
    expect(server.clientCredentialRequests).toHaveLength(2);
    expect(server.clientCredentialRequests.every((request) => request.accepted)).toBe(true);
    expect(server.counters.refresh).toBe(0);
  });

  it('reports refused credentials at sign-in and at connection, stores no tokens, and never shows the secret', async () => {
    const server = await fixture({ clientCredentials: { clientId: 'robot', clientSecret: SECRET, method: 'client_secret_post' } });
    const booted = await host(server, { oauth: { grant: 'client_credentials', clientId: 'robot', clientSecret: '${env:ROBOT_SECRET}' } }, { ROBOT_SECRET: 'wrong-secret-0d2e' });
    const error = await rejection(booted.oauth.login('secure', { progress: () => {} }));
    expect(error).toMatchObject({ code: 'PLN_E_OAUTH_FAILED' });
    expect(error.message).toContain('invalid_client');
    expect(error.message).not.toContain('wrong-secret-0d2e');
    const status = await start(booted.mcp);
    expect(status.state).toBe('error');
    expect(JSON.stringify(status)).not.toContain('wrong-secret-0d2e');
    expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');
  });

  it('refuses client_credentials without a way to authenticate', async () => {
    const server = await fixture();
    const booted = await host(server, { oauth: { grant: 'client_credentials', clientId: 'robot' } });
    expect((await start(booted.mcp)).error?.code).toBe('PLN_E_OAUTH_CONFIG');
  });
});

describe('a server that lets initialize through without a token', () => {
  it('shows as needing a sign-in, not as connected with 0 tools, when tools/list answers 401', async () => {
    const server = await fixture({ openInitialize: true });
    const booted = await host(server);
    const status = await start(booted.mcp);
    expect(status.state).toBe('error');
    expect(status.error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect(booted.mcp.tools()).toEqual([]);
    const signedIn = await signInAndRestart(booted);
    expect(signedIn.error).toBeUndefined();
    expect(signedIn.state).toBe('connected');
    expect(booted.mcp.tools().map((t) => t.name)).toContain('secure__whoami');
  });
});

describe('2025-03-26 servers', () => {
  it('auth/2025-03-26-oauth-endpoint-fallback: a 401 without any metadata leads to a sign-in at the default endpoints of its origin', async () => {
    const server = await fixture({ resourceMetadata: 'none', authServerMetadata: 'none' });
    const booted = await host(server);
    expect((await start(booted.mcp)).error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect((await signInAndRestart(booted)).state).toBe('connected');
    const origin = new URL(server.mcpUrl).origin;
    expect(server.endpoints.registration).toBe(`${origin}/register`);
    expect(server.counters).toMatchObject({ register: 1, authorize: 1, token: 1 });
    expect((await whoami(booted.mcp)).clientId).toBe(server.registeredClients()[0]?.client_id);
  });
});
