/**
 * RFC 9207 on the v2 client: a sign-in to an authorization server that
 * advertises `authorization_response_iss_parameter_supported` and sends its
 * own `iss` succeeds. plinth checks the response's `iss` itself, and hands it
 * to the SDK's `auth()` with the code, whose own check (the v2
 * `validateAuthorizationResponseIssuer`) refuses a missing `iss` where it is
 * advertised: without it, every such sign-in failed after the browser step.
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

async function signedIn(options: OAuthFixtureOptions): Promise<{ server: OAuthFixture; oauth: OAuthService }> {
  const server = await startOAuthFixture(options);
  fixtures.push(server);
  const kernel = await createTestKernel({
    builtin: true,
    settings: {
      mcpServers: { secure: { url: server.mcpUrl } },
      plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, mcp: { settings: { retries: 0 } }, oauth: { settings: { openBrowser: false } } },
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
  return { server, oauth };
}

describe('an authorization server that advertises and sends iss (RFC 9207)', () => {
  it.each([
    ['RFC 8414 metadata', {}],
    ['OpenID metadata on its own origin', { separateAuthServer: true, authServerMetadata: 'openid' }],
  ] as const)('is signed in to (%s): the code is exchanged and the tokens stored', async (_layout, layout) => {
    const { server, oauth } = await signedIn({ ...layout, iss: 'right', advertiseIss: true });
    const result = await oauth.login('secure', { progress: () => {} });
    expect(result.issuer).toBe(server.issuer);
    expect(server.counters.token).toBe(1);
    expect((await oauth.status('secure'))[0]?.state).toBe('signed-in');
  });
});
