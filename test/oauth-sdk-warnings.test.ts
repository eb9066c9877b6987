/**
 * The v2 SDK warns on the console (`[mcp-sdk] SEP-2352: stored OAuth
 * credential has no 'issuer' stamp …`) whenever a provider hands it client
 * information without the authorization server it is bound to — which went to
 * plinth's stderr on every connection of a server with a configured client
 * (`oauth.clientId`: pre-registered, client credentials, cross-app access) and
 * on every connection without a sign-in. plinth's provider binds what it hands
 * out (a configured client to the authorization server the server names, as
 * configured; a registration to the one it was made with), so the SDK has
 * nothing to warn about. The spy only listens: nothing is replaced.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SignInChannel } from 'plinth/sdk';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthFixture } from './support/oauth-server.js';

const kernels: TestKernel[] = [];
const fixtures: OAuthFixture[] = [];
const envSet: string[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const name of envSet.splice(0)) delete process.env[name];
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
});

async function boot(options: OAuthFixtureOptions, oauth: Record<string, unknown> | undefined, env: Record<string, string> = {}) {
  for (const [name, value] of Object.entries(env)) {
    process.env[name] = value;
    envSet.push(name);
  }
  const server = await startOAuthFixture(options);
  fixtures.push(server);
  const kernel = await createTestKernel({
    builtin: true,
    env,
    settings: {
      mcpServers: { secure: { url: server.mcpUrl, ...(oauth !== undefined && { oauth }) } },
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
  return { server, oauth: service, mcp: await kernel.get('mcp') };
}

function sdkWarnings(): () => string[] {
  const warn = vi.spyOn(console, 'warn');
  return () => warn.mock.calls.map((args) => args.map(String).join(' ')).filter((line) => line.includes('[mcp-sdk]'));
}

describe('no SDK console warnings about unbound credentials', () => {
  it('for a pre-registered client: its sign-in and its connection', async () => {
    const { oauth, mcp } = await boot({ preRegistered: { clientId: 'pre', redirectUris: ['http://127.0.0.1:9/callback'] } }, { clientId: 'pre' });
    const warnings = sdkWarnings();
    await oauth.login('secure', { progress: () => {} });
    expect((await mcp.start('secure', { retries: 0 })).state).toBe('connected');
    expect(warnings()).toEqual([]);
  });

  it('for a client-credentials server, and for a connection that needs a sign-in', async () => {
    const machine = await boot({ clientCredentials: { clientId: 'robot', clientSecret: 'warn-secret-1', method: 'client_secret_post' } }, {
      grant: 'client_credentials',
      clientId: 'robot',
      clientSecret: '${env:WARN_SECRET}',
    }, { WARN_SECRET: 'warn-secret-1' });
    const warnings = sdkWarnings();
    expect((await machine.mcp.start('secure', { retries: 0 })).state).toBe('connected');
    const unsigned = await boot({}, undefined);
    expect((await unsigned.mcp.start('secure', { retries: 0 })).error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect(warnings()).toEqual([]);
  });
});
