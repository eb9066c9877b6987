/**
 * The 2026 authorization extensions as a person runs them: the built `plinth`
 * in a child process against a real identity provider, authorization server
 * and MCP server on 127.0.0.1 that require cross-app access and DPoP-bound
 * tokens. `plinth auth login` needs no browser, `plinth call` uses the stored
 * DPoP-bound token, `plinth auth status --json` shows the sign-in; no byte
 * plinth writes holds the ID token, the ID-JAG, a secret, a token or the
 * DPoP private key, nor an SDK console warning.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { type IdpFixture, startIdpFixture } from './support/idp-server.js';
import { type OAuthFixture, startOAuthFixture } from './support/oauth-server.js';

const closers: Array<() => Promise<void>> = [];

beforeAll(() => {
  ensureBuilt();
}, 300_000);

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const AS_SECRET = 'cli-as-secret-93a1';

describe('plinth auth with cross-app access and DPoP', () => {
  it('signs in without a browser, calls with the DPoP-bound token, and shows nothing secret', async () => {
    const idp: IdpFixture = await startIdpFixture({ clientId: 'plinth-at-idp', jagClientId: 'plinth' });
    closers.push(() => idp.close());
    const server: OAuthFixture = await startOAuthFixture({
      separateAuthServer: true,
      dynamicRegistration: false,
      jwtBearer: { idpIssuer: idp.issuer, idpPublicKey: idp.publicKey, clientId: 'plinth', clientSecret: AS_SECRET },
      dpop: { nonce: true },
    });
    closers.push(() => server.close());
    const box: Sandbox = await sandbox('plinth-oauth-xaa-');
    closers.push(() => box.remove());
    await box.settings({
      mcpServers: {
        secure: {
          url: server.mcpUrl,
          oauth: { clientId: 'plinth', clientSecret: '${env:CLI_AS_SECRET}', crossApp: { idp: idp.issuer, clientId: 'plinth-at-idp', idToken: '${env:CLI_ID_TOKEN}' } },
        },
      },
      plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, oauth: { settings: { openBrowser: false, storage: 'file' } } },
    });
    const idToken = idp.idToken('judy@example.com');
    const env = { CLI_AS_SECRET: AS_SECRET, CLI_ID_TOKEN: idToken };

    const login = await run(box, ['auth', 'login', 'secure', '--json'], env);
    expectExit(login, 0);
    expect(json<{ server: string; issuer?: string }>(login)).toMatchObject({ server: 'secure', issuer: server.issuer });

    const call = await run(box, ['call', 'secure__whoami'], env);
    expectExit(call, 0);
    const key = server.dpopProofs.find((proof) => proof.where === 'token' && proof.outcome === 'ok')?.jkt;
    expect(key).toBeDefined();
    expect(call.stdout).toContain('judy@example.com');
    expect(call.stdout).toContain(key!);

    const status = await run(box, ['auth', 'status', 'secure', '--json'], env);
    expectExit(status, 0);
    expect(JSON.stringify(json(status))).toContain('signed-in');

    // One exchange at the IdP and one grant: the call used the stored token.
    expect(idp.exchanges.filter((exchange) => exchange.accepted)).toHaveLength(1);
    expect(server.jwtBearerRequests.filter((request) => request.accepted)).toHaveLength(1);

    const written = [login, call, status].map((result) => result.stdout + result.stderr).join('\n');
    for (const secret of [idToken, AS_SECRET, ...idp.issuedGrants, ...server.issuedTokens().access]) expect(written).not.toContain(secret);
    expect(written).not.toContain('"d":');
    expect(written).not.toContain('[mcp-sdk]');
  });
});
