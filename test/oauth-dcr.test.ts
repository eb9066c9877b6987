/**
 * Dynamic client registration (RFC 7591) is deprecated by the MCP
 * specification of 2026-07-28 in favour of Client ID Metadata Documents: it
 * stays plinth's fallback, and a sign-in that falls back to it says so once,
 * with what to configure instead — and says nothing where no registration
 * happens (a metadata document, a pre-registered client).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthService, SignInChannel } from 'plinth/sdk';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthFixture } from './support/oauth-server.js';

const kernels: TestKernel[] = [];
const fixtures: OAuthFixture[] = [];

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
});

const DOCUMENT = 'https://plinth.example/oauth/client.json';
const documents = { [DOCUMENT]: { redirect_uris: ['http://127.0.0.1:9/callback'], client_name: 'plinth' } };

async function signIn(options: OAuthFixtureOptions, oauth: Record<string, unknown> = {}): Promise<{ server: OAuthFixture; kernel: TestKernel }> {
  const server = await startOAuthFixture(options);
  fixtures.push(server);
  const kernel = await createTestKernel({
    builtin: true,
    settings: {
      mcpServers: { secure: { url: server.mcpUrl, oauth } },
      plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, oauth: { settings: { openBrowser: false } } },
    },
  });
  kernels.push(kernel);
  const service: OAuthService = await kernel.get('oauth');
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
  await service.login('secure', { progress: () => {} });
  return { server, kernel };
}

const registering = (kernel: TestKernel) => kernel.logs.filter((line) => line.includes('registering plinth dynamically'));

describe('dynamic client registration, deprecated', () => {
  it('registers where nothing else is possible, and logs once that it is deprecated and that a pre-registered client avoids it', async () => {
    const { server, kernel } = await signIn({});
    expect(server.counters.register).toBe(1);
    const lines = registering(kernel);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('MCP server "secure"');
    expect(lines[0]).toContain('deprecated by the MCP specification of 2026-07-28');
    expect(lines[0]).toContain(server.endpoints.registration!);
    expect(lines[0]).toContain('"oauth.clientId"');
  });

  it('names "oauth.clientMetadataUrl" when the authorization server accepts metadata documents but none is configured', async () => {
    const { server, kernel } = await signIn({ clientMetadataDocuments: documents });
    expect(server.counters.register).toBe(1);
    expect(registering(kernel)).toEqual([expect.stringContaining('accepts Client ID Metadata Documents: set "oauth.clientMetadataUrl"')]);
  });

  it('says nothing when it offers its metadata document or a pre-registered client instead', async () => {
    const cimd = await signIn({ clientMetadataDocuments: documents }, { clientMetadataUrl: DOCUMENT });
    expect(cimd.server.counters.register).toBe(0);
    expect(cimd.server.authorizations[0]?.clientId).toBe(DOCUMENT);
    expect(registering(cimd.kernel)).toEqual([]);

    const pre = await signIn({ preRegistered: { clientId: 'pre', redirectUris: ['http://127.0.0.1:9/callback'] } }, { clientId: 'pre' });
    expect(pre.server.counters.register).toBe(0);
    expect(registering(pre.kernel)).toEqual([]);
  });
});
