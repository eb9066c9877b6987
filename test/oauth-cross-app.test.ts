/**
 * Enterprise-managed authorization (cross-app access, SEP-990) against a real
 * identity provider and a real authorization server on 127.0.0.1: the user's
 * ID token becomes an ID-JAG at the IdP (RFC 8693), the ID-JAG an access token
 * at the MCP server's authorization server (RFC 7523 jwt-bearer), and the MCP
 * server sees the user's token — with no browser, in a connection too.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpService, OAuthService, ServerStatus } from 'plinth/sdk';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { type IdpFixture, startIdpFixture } from './support/idp-server.js';
import { type OAuthFixture, startOAuthFixture } from './support/oauth-server.js';

const kernels: TestKernel[] = [];
const closers: Array<() => Promise<void>> = [];
const envSet: string[] = [];

afterEach(async () => {
  for (const name of envSet.splice(0)) delete process.env[name];
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await Promise.all(closers.splice(0).map((close) => close()));
});

const AS_SECRET = 'as-secret-4b1e9c';
const IDP_SECRET = 'idp-secret-77d0aa';

interface World {
  readonly idp: IdpFixture;
  readonly server: OAuthFixture;
}

async function world(): Promise<World> {
  const idp = await startIdpFixture({ clientId: 'plinth-at-idp', clientSecret: IDP_SECRET, jagClientId: 'plinth' });
  closers.push(() => idp.close().catch(() => undefined));
  const server = await startOAuthFixture({
    separateAuthServer: true,
    dynamicRegistration: false,
    jwtBearer: { idpIssuer: idp.issuer, idpPublicKey: idp.publicKey, clientId: 'plinth', clientSecret: AS_SECRET },
  });
  closers.push(() => server.close());
  return { idp, server };
}

interface Host {
  readonly kernel: TestKernel;
  readonly oauth: OAuthService;
  readonly mcp: McpService;
}

async function host(server: OAuthFixture, oauth: Record<string, unknown>, env: Record<string, string>): Promise<Host> {
  for (const [name, value] of Object.entries(env)) {
    process.env[name] = value;
    envSet.push(name);
  }
  const kernel = await createTestKernel({
    builtin: true,
    env,
    settings: {
      mcpServers: { secure: { url: server.mcpUrl, oauth } },
      plugins: {
        health: { enabled: false },
        'mcp-demo': { enabled: false },
        mcp: { settings: { retries: 0 } },
        oauth: { settings: { openBrowser: false } },
      },
    },
  });
  kernels.push(kernel);
  return { kernel, oauth: await kernel.get('oauth'), mcp: await kernel.get('mcp') };
}

function crossApp(idp: IdpFixture, idToken: Record<string, unknown>): Record<string, unknown> {
  return {
    clientId: 'plinth',
    clientSecret: '${env:XAA_AS_SECRET}',
    crossApp: { idp: idp.issuer, clientId: 'plinth-at-idp', clientSecret: '${env:XAA_IDP_SECRET}', ...idToken },
  };
}

const secretsEnv = { XAA_AS_SECRET: AS_SECRET, XAA_IDP_SECRET: IDP_SECRET };

async function start(mcp: McpService): Promise<ServerStatus> {
  return mcp.start('secure', { retries: 0 });
}

async function whoami(mcp: McpService): Promise<{ clientId: string; subject?: string; scopes: string[] }> {
  const result = await mcp.callTool('secure__whoami', {});
  expect(result.error).toBeUndefined();
  return JSON.parse(result.text) as { clientId: string; subject?: string; scopes: string[] };
}

describe('cross-app access (ID-JAG, RFC 8693 then RFC 7523)', () => {
  it('a connection exchanges the ID token for an ID-JAG at the IdP, the ID-JAG for the user\'s token at the MCP server\'s authorization server, and calls as that user', async () => {
    const { idp, server } = await world();
    const idToken = idp.idToken('alice@example.com');
    const booted = await host(server, crossApp(idp, { idToken: '${env:XAA_ID_TOKEN}' }), { ...secretsEnv, XAA_ID_TOKEN: idToken });
    const status = await start(booted.mcp);
    expect(status.error).toBeUndefined();
    expect(status.state).toBe('connected');
    // The IdP was asked for a grant for exactly this authorization server and this MCP server.
    expect(idp.exchanges).toEqual([expect.objectContaining({ clientId: 'plinth-at-idp', audience: server.issuer, resource: server.resource, accepted: true })]);
    expect(server.jwtBearerRequests).toEqual([expect.objectContaining({ clientId: 'plinth', accepted: true, subject: 'alice@example.com' })]);
    expect(await whoami(booted.mcp)).toMatchObject({ clientId: 'plinth', subject: 'alice@example.com' });
    expect(server.counters.authorize).toBe(0);
    expect(server.counters.register).toBe(0);

    // Stored like any sign-in: a new connection uses the token without asking the IdP again.
    expect((await booted.mcp.restart('secure', { retries: 0 })).state).toBe('connected');
    expect(idp.exchanges).toHaveLength(1);
    const second = booted;

    // An expired token: a new grant is asked for (a fresh ID-JAG; the old one is never presented again).
    server.expireAccessTokens();
    expect((await whoami(second.mcp)).subject).toBe('alice@example.com');
    expect(idp.exchanges.filter((e) => e.accepted)).toHaveLength(2);
    expect(server.jwtBearerRequests.filter((r) => r.accepted)).toHaveLength(2);

    const shown = [JSON.stringify(status), JSON.stringify(await booted.oauth.status('secure')), booted.kernel.logs.join('\n')].join('\n');
    for (const secret of [idToken, AS_SECRET, IDP_SECRET, ...idp.issuedGrants, ...server.issuedTokens().access]) expect(shown).not.toContain(secret);
  });

  it('`auth login` takes the ID token from a command (through the launcher) and needs no browser', async () => {
    const { idp, server } = await world();
    const dir = await mkdtemp(join(tmpdir(), 'plinth-xaa-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'id-token');
    await writeFile(file, `${idp.idToken('bob@example.com')}\n`);
    const booted = await host(server, crossApp(idp, { idTokenCommand: [process.execPath, '-e', 'process.stdout.write(require("fs").readFileSync(process.argv[1], "utf8"))', file] }), secretsEnv);
    const signedIn = await booted.oauth.login('secure', { progress: () => {} });
    expect(signedIn.server).toBe('secure');
    expect(server.jwtBearerRequests).toEqual([expect.objectContaining({ accepted: true, subject: 'bob@example.com' })]);
    expect((await start(booted.mcp)).state).toBe('connected');
    expect((await whoami(booted.mcp)).subject).toBe('bob@example.com');
    // The command ran through the launcher, as every child process does.
    const trace = (await booted.kernel.get('launcher')).trace();
    expect(trace.some((entry) => entry.owner === 'oauth' && entry.purpose?.includes('ID token'))).toBe(true);
  });

  it('reports an ID token the IdP refuses (expired) with PLN_E_OAUTH_IDP_REFUSED, stores nothing, and never shows the token', async () => {
    const { idp, server } = await world();
    const expired = idp.idToken('carol@example.com', { expiresInSeconds: -60 });
    const booted = await host(server, crossApp(idp, { idToken: '${env:XAA_ID_TOKEN}' }), { ...secretsEnv, XAA_ID_TOKEN: expired });
    const status = await start(booted.mcp);
    expect(status.state).toBe('error');
    expect(status.error?.code).toBe('PLN_E_OAUTH_IDP_REFUSED');
    expect(status.error?.message).toContain(idp.issuer);
    expect(JSON.stringify(status)).not.toContain(expired);
    expect(server.jwtBearerRequests).toHaveLength(0);
    expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');
  });

  it('asks the IdP and the authorization server for the configured scopes, not every scope the metadata lists', async () => {
    const { idp, server } = await world();
    const booted = await host(server, { ...crossApp(idp, { idToken: '${env:XAA_ID_TOKEN}' }), scopes: ['mcp:read'] }, { ...secretsEnv, XAA_ID_TOKEN: idp.idToken('hana@example.com') });
    expect((await start(booted.mcp)).state).toBe('connected');
    expect(idp.exchanges).toEqual([expect.objectContaining({ scope: 'mcp:read', accepted: true })]);
    expect(server.jwtBearerRequests).toEqual([expect.objectContaining({ scope: 'mcp:read', accepted: true })]);
    expect((await whoami(booted.mcp)).scopes).toEqual(['mcp:read']);
  });

  it('reports an identity provider that cannot be reached as PLN_E_OAUTH_UNREACHABLE, naming it', async () => {
    const { idp, server } = await world();
    const idToken = idp.idToken('ivan@example.com');
    await idp.close();
    const booted = await host(server, crossApp(idp, { idToken: '${env:XAA_ID_TOKEN}' }), { ...secretsEnv, XAA_ID_TOKEN: idToken });
    const status = await start(booted.mcp);
    expect(status.error?.code).toBe('PLN_E_OAUTH_UNREACHABLE');
    expect(status.error?.message).toContain(idp.issuer);
    expect(JSON.stringify(status)).not.toContain(idToken);
  });

  it('says which variable to set when the ID token is missing, and refuses an ID token written into the settings', async () => {
    const { idp, server } = await world();
    const missing = await host(server, crossApp(idp, { idToken: '${env:XAA_UNSET_TOKEN}' }), secretsEnv);
    const status = await start(missing.mcp);
    expect(status.error?.code).toBe('PLN_E_OAUTH_ID_TOKEN');
    expect(status.error?.message).toContain('XAA_UNSET_TOKEN');
    expect(idp.exchanges).toHaveLength(0);

    const literal = await host(server, crossApp(idp, { idToken: idp.idToken('dave@example.com') }), secretsEnv);
    const refused = await start(literal.mcp);
    expect(refused.error?.code).toBe('PLN_E_OAUTH_CONFIG');
    expect(refused.error?.message).toContain('oauth.crossApp.idToken');
  });
});
