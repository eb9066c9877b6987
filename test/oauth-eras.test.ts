/**
 * plinth's OAuth in both protocol eras: the same authorization server in
 * front of an MCP endpoint that speaks 2025-11-25 only (legacy), both eras
 * (the v2 SDK's `createMcpHandler`), or 2026-07-28 only (`legacy: 'reject'`).
 * The provider plinth hands a transport (`oauth.providerFor`) is used by the
 * v2 SDK `Client` in `legacy` and pinned-2026 modes: stored tokens from a
 * PKCE sign-in, refresh after a 401, DPoP-bound tokens with nonces, and
 * cross-app access work the same in both; and plinth's own mcp client, with
 * the server's `protocol` setting pinned to 2026-07-28, `auto` or `legacy`,
 * connects and calls through each flow.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpServerDefinition, McpService, OAuthService, SignInChannel } from 'plinth/sdk';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { type IdpFixture, startIdpFixture } from './support/idp-server.js';
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthFixture } from './support/oauth-server.js';

const kernels: TestKernel[] = [];
const closers: Array<() => Promise<void>> = [];
const envSet: string[] = [];

afterEach(async () => {
  for (const name of envSet.splice(0)) delete process.env[name];
  await Promise.all(closers.splice(0).map((close) => close()));
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

const MODERN = '2026-07-28';
const SECRET = 'eras-secret-5e8d';

interface Host {
  readonly kernel: TestKernel;
  readonly oauth: OAuthService;
  readonly mcp: McpService;
}

async function fixture(options: OAuthFixtureOptions): Promise<OAuthFixture> {
  const server = await startOAuthFixture(options);
  closers.push(() => server.close());
  return server;
}

async function host(server: OAuthFixture, oauth?: Record<string, unknown>, env: Record<string, string> = {}, entry: Record<string, unknown> = {}): Promise<Host> {
  for (const [name, value] of Object.entries(env)) {
    process.env[name] = value;
    envSet.push(name);
  }
  const kernel = await createTestKernel({
    builtin: true,
    env,
    settings: {
      mcpServers: { secure: { url: server.mcpUrl, ...entry, ...(oauth !== undefined && { oauth }) } },
      plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, mcp: { settings: { retries: 0 } }, oauth: { settings: { openBrowser: false } } },
    },
  });
  kernels.push(kernel);
  const service = await kernel.get('oauth');
  service.hooks.channel.tap('host', (): SignInChannel => {
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
  return { kernel, oauth: service, mcp: await kernel.get('mcp') };
}

/** The v2 SDK Client in `mode`, authorized by the provider plinth gives a transport for `secure`. */
async function sdkClient(booted: Host, server: OAuthFixture, mode: 'legacy' | { pin: string }): Promise<Client> {
  const definition = booted.mcp.definition('secure') as McpServerDefinition;
  const authProvider = booted.oauth.providerFor(definition)!;
  const client = new Client({ name: 'eras-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider }));
  closers.push(() => client.close());
  return client;
}

async function whoami(client: Client): Promise<{ clientId: string; jkt?: string; subject?: string }> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  expect(result.isError).not.toBe(true);
  return JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as { clientId: string; jkt?: string; subject?: string };
}

async function storedKey(booted: Host): Promise<string | undefined> {
  const record = JSON.parse((await (await booted.kernel.get('secrets')).get('mcp-oauth:secure'))!) as { dpop?: { thumbprint: string } };
  return record.dpop?.thumbprint;
}

describe('a PKCE sign-in, used in either era', () => {
  it.each([
    ['modern', { pin: MODERN }, 'modern'],
    ['dual', { pin: MODERN }, 'modern'],
    ['dual', 'legacy', 'legacy'],
    ['legacy', 'legacy', 'legacy'],
  ] as const)('%s server, client %j: the stored token is presented, and refreshed after a 401', async (era, mode, expectedEra) => {
    const server = await fixture({ era });
    const booted = await host(server);
    await booted.oauth.login('secure', { progress: () => {} });
    const client = await sdkClient(booted, server, mode);
    expect(client.getProtocolEra()).toBe(expectedEra);
    const registered = server.registeredClients()[0]!.client_id;
    expect((await whoami(client)).clientId).toBe(registered);
    server.expireAccessTokens();
    expect((await whoami(client)).clientId).toBe(registered);
    expect(server.counters.refresh).toBe(1);
  });

  it.each([
    ['modern', MODERN, 'modern'],
    ['modern', 'auto', 'modern'],
    ['dual', MODERN, 'modern'],
    ['dual', 'legacy', 'legacy'],
    ['legacy', 'auto', 'legacy'],
    ['legacy', 'legacy', 'legacy'],
  ] as const)("plinth's own client: a %s server with \"protocol\": %j needs the sign-in, then connects (%s) with it and refreshes after a 401", async (era, protocol, expectedEra) => {
    const server = await fixture({ era });
    const booted = await host(server, undefined, {}, { protocol });
    expect((await booted.mcp.start('secure', { retries: 0 })).error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    await booted.oauth.login('secure', { progress: () => {} });
    expect(await booted.mcp.restart('secure', { retries: 0 })).toMatchObject({ state: 'connected', era: expectedEra });
    const registered = server.registeredClients()[0]!.client_id;
    expect(JSON.parse((await booted.mcp.callTool('secure__whoami', {})).text)).toMatchObject({ clientId: registered });
    server.expireAccessTokens();
    const again = await booted.mcp.callTool('secure__whoami', {});
    expect(again.error).toBeUndefined();
    expect(JSON.parse(again.text)).toMatchObject({ clientId: registered });
    expect(server.counters.refresh).toBe(1);
  });
});

describe('the 2026 authorization extensions against a 2026-07-28-only server', () => {
  it("plinth's own client (\"protocol\": \"2026-07-28\") gets DPoP-bound cross-app tokens and calls with them", async () => {
    const idp: IdpFixture = await startIdpFixture({ clientId: 'plinth-at-idp', jagClientId: 'plinth' });
    closers.push(() => idp.close());
    const server = await fixture({ era: 'modern', jwtBearer: { idpIssuer: idp.issuer, idpPublicKey: idp.publicKey, clientId: 'plinth', clientSecret: SECRET }, dpop: { nonce: true } });
    const booted = await host(
      server,
      { clientId: 'plinth', clientSecret: '${env:ERAS_SECRET}', crossApp: { idp: idp.issuer, clientId: 'plinth-at-idp', idToken: '${env:ERAS_ID_TOKEN}' } },
      { ERAS_SECRET: SECRET, ERAS_ID_TOKEN: idp.idToken('gina@example.com') },
      { protocol: MODERN },
    );
    expect(await booted.mcp.start('secure', { retries: 0 })).toMatchObject({ state: 'connected', era: 'modern', protocolVersion: MODERN });
    const me = JSON.parse((await booted.mcp.callTool('secure__whoami', {})).text) as { subject?: string; jkt?: string };
    expect(me.subject).toBe('gina@example.com');
    expect(me.jkt).toBe(await storedKey(booted));
  });

  it('DPoP-bound client-credentials tokens, with nonce challenges, work at 2026-07-28', async () => {
    const server = await fixture({ era: 'modern', clientCredentials: { clientId: 'robot', clientSecret: SECRET, method: 'client_secret_post' }, dpop: { nonce: true } });
    const booted = await host(server, { grant: 'client_credentials', clientId: 'robot', clientSecret: '${env:ERAS_SECRET}', tokenEndpointAuthMethod: 'client_secret_post' }, { ERAS_SECRET: SECRET });
    const client = await sdkClient(booted, server, { pin: MODERN });
    expect(client.getProtocolEra()).toBe('modern');
    const me = await whoami(client);
    expect(me.clientId).toBe('robot');
    expect(me.jkt).toBe(await storedKey(booted));
    expect(server.dpopProofs.map((p) => `${p.where}:${p.outcome}`)).toContain('resource:use_dpop_nonce');
  });

  it('cross-app access works at 2026-07-28', async () => {
    const idp: IdpFixture = await startIdpFixture({ clientId: 'plinth-at-idp', jagClientId: 'plinth' });
    closers.push(() => idp.close());
    const server = await fixture({ era: 'modern', separateAuthServer: true, jwtBearer: { idpIssuer: idp.issuer, idpPublicKey: idp.publicKey, clientId: 'plinth', clientSecret: SECRET } });
    const booted = await host(
      server,
      { clientId: 'plinth', clientSecret: '${env:ERAS_SECRET}', crossApp: { idp: idp.issuer, clientId: 'plinth-at-idp', idToken: '${env:ERAS_ID_TOKEN}' } },
      { ERAS_SECRET: SECRET, ERAS_ID_TOKEN: idp.idToken('frank@example.com') },
    );
    const client = await sdkClient(booted, server, { pin: MODERN });
    expect(await whoami(client)).toMatchObject({ clientId: 'plinth', subject: 'frank@example.com' });
    expect(idp.exchanges).toEqual([expect.objectContaining({ audience: server.issuer, resource: server.resource, accepted: true })]);
  });
});
