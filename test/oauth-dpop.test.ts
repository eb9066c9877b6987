/**
 * DPoP-bound tokens (RFC 9449, SEP-1932) against a real authorization server
 * and MCP server on 127.0.0.1 that require them: the token request carries a
 * proof, the token comes back `token_type: DPoP` bound to the proof's key
 * (`cnf.jkt`), and the MCP server takes it only as `Authorization: DPoP` with
 * a proof of that key for each request (`ath`); nonce challenges are answered.
 * The key pair is kept with the tokens in the secrets store (every process
 * presents the same key), refreshed tokens stay bound to it, and the private
 * key is never shown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { McpService, OAuthService, ServerStatus, SignInChannel } from 'plinth/sdk';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthFixture } from './support/oauth-server.js';
import { type IdpFixture, startIdpFixture } from './support/idp-server.js';

const kernels: TestKernel[] = [];
const closers: Array<() => Promise<void>> = [];
const envSet: string[] = [];

afterEach(async () => {
  for (const name of envSet.splice(0)) delete process.env[name];
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await Promise.all(closers.splice(0).map((close) => close()));
});

const SECRET = 'dpop-robot-secret-31c2';

async function fixture(options: OAuthFixtureOptions): Promise<OAuthFixture> {
  const server = await startOAuthFixture(options);
  closers.push(() => server.close());
  return server;
}

interface Host {
  readonly kernel: TestKernel;
  readonly oauth: OAuthService;
  readonly mcp: McpService;
}

async function host(server: OAuthFixture, oauth: Record<string, unknown> | undefined, env: Record<string, string> = {}, settings: Record<string, unknown> = {}): Promise<Host> {
  for (const [name, value] of Object.entries(env)) {
    process.env[name] = value;
    envSet.push(name);
  }
  const kernel = await createTestKernel({
    builtin: true,
    env,
    settings: {
      mcpServers: { secure: { url: server.mcpUrl, ...(oauth !== undefined && { oauth }) } },
      plugins: {
        health: { enabled: false },
        'mcp-demo': { enabled: false },
        mcp: { settings: { retries: 0 } },
        oauth: { settings: { openBrowser: false, callbackTimeoutMs: 20_000, ...settings } },
      },
    },
  });
  kernels.push(kernel);
  const service = await kernel.get('oauth');
  // The host's channel plays the browser.
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

async function start(mcp: McpService): Promise<ServerStatus> {
  return mcp.start('secure', { retries: 0 });
}

async function whoami(mcp: McpService): Promise<{ clientId: string; jkt?: string; subject?: string }> {
  const result = await mcp.callTool('secure__whoami', {});
  expect(result.error).toBeUndefined();
  return JSON.parse(result.text) as { clientId: string; jkt?: string; subject?: string };
}

async function stored(booted: Host): Promise<{ tokens?: { token_type?: string }; dpop?: { thumbprint: string; privateJwk: { d: string } }; expiresAt?: number }> {
  const secrets = await booted.kernel.get('secrets');
  return JSON.parse((await secrets.get('mcp-oauth:secure'))!) as never;
}

const machine = { grant: 'client_credentials', clientId: 'robot', clientSecret: '${env:DPOP_ROBOT_SECRET}', tokenEndpointAuthMethod: 'client_secret_post' };

describe('DPoP-bound tokens', () => {
  it('gets a DPoP token where the MCP server requires one and the authorization server advertises DPoP, answers both nonce challenges, and presents it with a proof of the stored key', async () => {
    const server = await fixture({ clientCredentials: { clientId: 'robot', clientSecret: SECRET, method: 'client_secret_post' }, dpop: { nonce: true } });
    const booted = await host(server, machine, { DPOP_ROBOT_SECRET: SECRET });
    const status = await start(booted.mcp);
    expect(status.error).toBeUndefined();
    expect(status.state).toBe('connected');
    const record = await stored(booted);
    expect(record.tokens?.token_type).toBe('DPoP');
    expect(record.dpop?.thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The MCP server checked the token's binding: the key plinth stored is the one the token is bound to.
    expect((await whoami(booted.mcp)).jkt).toBe(record.dpop!.thumbprint);
    const outcomes = server.dpopProofs.map((p) => `${p.where}:${p.outcome}`);
    expect(outcomes).toContain('token:use_dpop_nonce');
    expect(outcomes).toContain('token:ok');
    expect(outcomes).toContain('resource:use_dpop_nonce');
    expect(outcomes.filter((o) => o === 'resource:ok').length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o !== 'token:use_dpop_nonce' && o !== 'resource:use_dpop_nonce' && !o.endsWith(':ok'))).toEqual([]);
    expect(server.dpopProofs.every((p) => p.jkt === undefined || p.jkt === record.dpop!.thumbprint)).toBe(true);
    const shown = [JSON.stringify(status), JSON.stringify(await booted.oauth.status('secure')), booted.kernel.logs.join('\n')].join('\n');
    expect(shown).not.toContain(record.dpop!.privateJwk.d);
  });

  it('signs in with PKCE to a server that requires DPoP, and refreshes ahead of expiry and after a 401 with the same key', async () => {
    const server = await fixture({ dpop: {} });
    const booted = await host(server, undefined);
    await booted.oauth.login('secure', { progress: () => {} });
    const record = await stored(booted);
    expect(record.tokens?.token_type).toBe('DPoP');
    const key = record.dpop!.thumbprint;
    // plinth's own refresh ahead of expiry (as if 59 of its 60 minutes had passed): a proof of the stored key
    // (the AS refuses a refresh token presented without one, or with another key).
    const secrets = await booted.kernel.get('secrets');
    await secrets.set('mcp-oauth:secure', JSON.stringify({ ...record, expiresAt: Date.now() + 30_000 }));
    expect((await start(booted.mcp)).state).toBe('connected');
    expect((await whoami(booted.mcp)).jkt).toBe(key);
    expect(server.counters.refresh).toBe(1);

    // The SDK's refresh after a 401: the same key again.
    server.expireAccessTokens();
    expect((await whoami(booted.mcp)).jkt).toBe(key);
    expect(server.counters.refresh).toBe(2);
    expect((await stored(booted)).dpop?.thumbprint).toBe(key);
    expect(server.dpopProofs.filter((p) => p.outcome !== 'ok')).toEqual([]);
  });

  it('uses DPoP where the MCP server requires it though the authorization server does not advertise it, and never where "dpop": false', async () => {
    const server = await fixture({ clientCredentials: { clientId: 'robot', clientSecret: SECRET, method: 'client_secret_post' }, dpop: { advertise: false } });
    const booted = await host(server, machine, { DPOP_ROBOT_SECRET: SECRET });
    expect((await start(booted.mcp)).state).toBe('connected');
    expect((await whoami(booted.mcp)).jkt).toBe((await stored(booted)).dpop?.thumbprint);

    const off = await fixture({ clientCredentials: { clientId: 'robot', clientSecret: SECRET, method: 'client_secret_post' }, dpop: {} });
    const refused = await host(off, { ...machine, dpop: false }, { DPOP_ROBOT_SECRET: SECRET });
    expect((await start(refused.mcp)).state).toBe('error');
    expect(off.dpopProofs.length).toBeGreaterThan(0);
    expect(off.dpopProofs.every((proof) => proof.where === 'token' && proof.outcome === 'no DPoP proof')).toBe(true);
  });

  it('asks for DPoP where only the MCP server\'s 401 challenge offers the DPoP scheme (neither metadata document says so)', async () => {
    const server = await fixture({ dpop: { challengeOnly: true } });
    const booted = await host(server, undefined);
    await booted.oauth.login('secure', { progress: () => {} });
    const record = await stored(booted);
    expect(record.tokens?.token_type).toBe('DPoP');
    expect((await start(booted.mcp)).state).toBe('connected');
    expect((await whoami(booted.mcp)).jkt).toBe(record.dpop!.thumbprint);
  });

  it('keeps Bearer where only the authorization server supports DPoP (the MCP server does not say it wants it), and asks for DPoP there with "dpop": true', async () => {
    const server = await fixture({ clientCredentials: { clientId: 'robot', clientSecret: SECRET, method: 'client_secret_post' }, dpop: { optional: true } });
    const plain = await host(server, machine, { DPOP_ROBOT_SECRET: SECRET });
    expect((await start(plain.mcp)).state).toBe('connected');
    expect((await stored(plain)).tokens?.token_type).toBe('Bearer');
    expect((await whoami(plain.mcp)).jkt).toBeUndefined();
    expect(server.dpopProofs).toEqual([]);

    const other = await fixture({ clientCredentials: { clientId: 'robot', clientSecret: SECRET, method: 'client_secret_post' }, dpop: { optional: true } });
    const opted = await host(other, { ...machine, dpop: true }, { DPOP_ROBOT_SECRET: SECRET });
    expect((await start(opted.mcp)).state).toBe('connected');
    expect((await stored(opted)).tokens?.token_type).toBe('DPoP');
    expect((await whoami(opted.mcp)).jkt).toBe((await stored(opted)).dpop?.thumbprint);
  });

  it('binds a cross-app access token (ID-JAG, jwt-bearer grant) to a DPoP key too', async () => {
    const idp: IdpFixture = await startIdpFixture({ clientId: 'plinth-at-idp', jagClientId: 'plinth' });
    closers.push(() => idp.close());
    const server = await fixture({ jwtBearer: { idpIssuer: idp.issuer, idpPublicKey: idp.publicKey, clientId: 'plinth', clientSecret: SECRET }, dpop: { nonce: true }, dynamicRegistration: false });
    const booted = await host(
      server,
      { clientId: 'plinth', clientSecret: '${env:DPOP_ROBOT_SECRET}', crossApp: { idp: idp.issuer, clientId: 'plinth-at-idp', idToken: '${env:DPOP_ID_TOKEN}' } },
      { DPOP_ROBOT_SECRET: SECRET, DPOP_ID_TOKEN: idp.idToken('erin@example.com') },
    );
    expect((await start(booted.mcp)).state).toBe('connected');
    const me = await whoami(booted.mcp);
    expect(me).toMatchObject({ subject: 'erin@example.com', clientId: 'plinth' });
    expect(me.jkt).toBe((await stored(booted)).dpop?.thumbprint);
  });
});
