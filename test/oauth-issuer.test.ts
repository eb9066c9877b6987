/**
 * Which authorization server a sign-in talks to, against the real OAuth
 * fixture (test/support/oauth-server.ts) on 127.0.0.1, through real sign-ins:
 *
 * 1. authorization-server metadata whose `issuer` is not the issuer it was
 *    discovered for is not used (RFC 8414 §3.3);
 * 2. the redirect's `iss` (RFC 9207, the MCP specification of 2026-07-28):
 *    wrong, missing although advertised, present although not advertised;
 *    checked before an error is believed and before the code is exchanged;
 * 3. registration says `application_type` (SEP-837);
 * 4. credentials are bound to their authorization server (SEP-2352): a server
 *    that moves asks for a new sign-in, which registers with the new server
 *    and never shows it the old one's client — a sign-in stored before the
 *    binding was recorded included;
 * 5. OAuth requests never go to link-local or unspecified addresses, nor to
 *    this machine for a public server (the rule on addresses, and a real
 *    sign-in whose metadata names 169.254.169.254).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { McpService, OAuthService } from 'plinth/sdk';
import { addressClass, addressRefusal } from '../plugins/oauth/address.js';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthFixture } from './support/oauth-server.js';

const kernels: TestKernel[] = [];
const fixtures: OAuthFixture[] = [];

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
});

async function fixture(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const started = await startOAuthFixture(options);
  fixtures.push(started);
  return started;
}

interface Booted {
  readonly kernel: TestKernel;
  readonly oauth: OAuthService;
  readonly mcp: McpService;
}

async function boot(server: OAuthFixture): Promise<Booted> {
  const kernel = await createTestKernel({
    builtin: true,
    settings: {
      mcpServers: { secure: { url: server.mcpUrl } },
      plugins: {
        health: { enabled: false },
        'mcp-demo': { enabled: false },
        mcp: { settings: { retries: 0 } },
        oauth: { settings: { openBrowser: false, callbackTimeoutMs: 20_000 } },
      },
    },
  });
  kernels.push(kernel);
  return { kernel, oauth: await kernel.get('oauth'), mcp: await kernel.get('mcp') };
}

/** `plinth auth login` in process; the URL it prints is followed as a browser would, wherever it points. */
async function signIn(booted: Booted, server: OAuthFixture): Promise<void> {
  let browsing: Promise<void> | undefined;
  const login = booted.oauth.login('secure', {
    progress: (line) => {
      const url = line.trim();
      if (browsing === undefined && url.startsWith('http://127.0.0.1') && url.includes('response_type=code')) {
        browsing = server.followAuthorization(url).then(async (callback) => void (await (await fetch(callback)).text()));
      }
    },
  });
  try {
    await login;
  } finally {
    await browsing?.catch(() => undefined);
  }
}

async function whoami(mcp: McpService): Promise<{ clientId: string }> {
  const result = await mcp.callTool('secure__whoami', {});
  expect(result.error).toBeUndefined();
  return JSON.parse(result.text) as { clientId: string };
}

async function signedOut(booted: Booted): Promise<boolean> {
  return (await booted.oauth.status('secure'))[0]?.state === 'signed-out';
}

describe('authorization-server metadata (RFC 8414 §3.3)', () => {
  it('does not use metadata naming another issuer than the one it was discovered for: nothing registered, nothing opened', async () => {
    const server = await fixture({ separateAuthServer: true, metadataIssuer: 'https://honest.example' });
    const booted = await boot(server);
    const error = await rejection(signIn(booted, server));
    expect(error.code).toBe('PLN_E_OAUTH_ISSUER_MISMATCH');
    expect(error.details).toMatchObject({ expectedIssuer: server.issuer, receivedIssuer: 'https://honest.example', where: 'metadata' });
    expect(error.message).toContain(server.issuer);
    expect(error.message).toContain('https://honest.example');
    expect(server.counters.register + server.counters.authorize + server.counters.token).toBe(0);
    expect(await signedOut(booted)).toBe(true);
  });
});

describe("the authorization response's iss (RFC 9207)", () => {
  it('refuses a response naming another issuer, and exchanges no code', async () => {
    const server = await fixture({ iss: 'wrong', advertiseIss: true });
    const booted = await boot(server);
    const error = await rejection(signIn(booted, server));
    expect(error.code).toBe('PLN_E_OAUTH_ISSUER_MISMATCH');
    expect(error.details).toMatchObject({ expectedIssuer: server.issuer, receivedIssuer: 'https://attacker.example', where: 'response' });
    expect(server.counters.authorize).toBe(1);
    expect(server.counters.token).toBe(0);
    expect(await signedOut(booted)).toBe(true);
  });

  it('refuses a response without iss from a server that advertises it', async () => {
    const server = await fixture({ iss: 'none', advertiseIss: true });
    const booted = await boot(server);
    const error = await rejection(signIn(booted, server));
    expect(error.code).toBe('PLN_E_OAUTH_ISSUER_MISSING');
    expect(error.details).toMatchObject({ expectedIssuer: server.issuer, receivedIssuer: null });
    expect(server.counters.token).toBe(0);
  });

  it('reads the advertisement of an OpenID provider too (whose metadata the SDK keeps without it)', async () => {
    const server = await fixture({ separateAuthServer: true, authServerMetadata: 'openid', iss: 'none', advertiseIss: true });
    const booted = await boot(server);
    expect((await rejection(signIn(booted, server))).code).toBe('PLN_E_OAUTH_ISSUER_MISSING');
    expect(server.counters.token).toBe(0);
  });

  it('compares an iss the server sends without advertising it: another issuer is refused, its own is accepted', async () => {
    const wrong = await fixture({ iss: 'wrong' });
    const refused = await boot(wrong);
    expect((await rejection(signIn(refused, wrong))).code).toBe('PLN_E_OAUTH_ISSUER_MISMATCH');
    expect(wrong.counters.token).toBe(0);

    const right = await fixture({ separateAuthServer: true, iss: 'right' });
    const accepted = await boot(right);
    await signIn(accepted, right);
    expect(right.counters.token).toBe(1);
    expect((await accepted.mcp.start('secure', { retries: 0 })).state).toBe('connected');
  });

  it('does not believe an error from a response naming another issuer', async () => {
    const server = await fixture({ iss: 'wrong', deny: true });
    const booted = await boot(server);
    const error = await rejection(signIn(booted, server));
    expect(error.code).toBe('PLN_E_OAUTH_ISSUER_MISMATCH');
    expect(error.message).not.toMatch(/declined/);
  });
});

describe('dynamic registration (SEP-837)', () => {
  it('registers as a native application, its redirect being the loopback', async () => {
    const server = await fixture();
    const booted = await boot(server);
    await signIn(booted, server);
    expect(server.registrationRequests).toHaveLength(1);
    expect(server.registrationRequests[0]).toMatchObject({ application_type: 'native' });
  });
});

describe('credentials bound to their authorization server (SEP-2352)', () => {
  it('asks for a new sign-in when the server moves, which registers with the new server and never shows it the old client', async () => {
    const server = await fixture({ separateAuthServer: true });
    const booted = await boot(server);
    await signIn(booted, server);
    expect((await booted.mcp.start('secure', { retries: 0 })).state).toBe('connected');
    const before = (await whoami(booted.mcp)).clientId;
    await booted.mcp.stop('secure');

    const moved = await server.moveAuthServer();
    const status = await booted.mcp.start('secure', { retries: 0 });
    expect(status.error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect(status.error?.message).toContain(`now names authorization server ${moved.issuer}`);
    expect(status.error?.message).toContain(`stored sign-in is from ${server.issuer}`);
    // Nothing of the first authorization server's went to the second.
    expect(moved.counters).toEqual({ register: 0, authorize: 0, token: 0 });

    await signIn(booted, server);
    expect(moved.counters.register).toBe(1);
    expect(moved.clientIds).not.toContain(before);
    expect((await booted.mcp.restart('secure', { retries: 0 })).state).toBe('connected');
    expect((await whoami(booted.mcp)).clientId).not.toBe(before);
  });

  it('uses a sign-in stored before bindings were recorded while the server stays, and registers anew when it moves', async () => {
    const server = await fixture({ separateAuthServer: true });
    const booted = await boot(server);
    await signIn(booted, server);
    expect((await booted.mcp.start('secure', { retries: 0 })).state).toBe('connected');
    const before = (await whoami(booted.mcp)).clientId;
    await booted.mcp.stop('secure');
    // What an older plinth stored: the same record without the issuer stamps.
    const secrets = await booted.kernel.get('secrets');
    const record = JSON.parse((await secrets.get('mcp-oauth:secure'))!) as { tokens: Record<string, unknown>; client: Record<string, unknown> };
    delete record.tokens.issuer;
    delete record.client.issuer;
    await secrets.set('mcp-oauth:secure', JSON.stringify(record));

    server.expireAccessTokens(); // a 401: the refresh goes to the server the stored discovery names, which did not move
    expect((await booted.mcp.start('secure', { retries: 0 })).state).toBe('connected');
    expect(server.counters.refresh).toBe(1);
    await booted.mcp.stop('secure');

    const moved = await server.moveAuthServer();
    expect((await booted.mcp.start('secure', { retries: 0 })).error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    await signIn(booted, server);
    expect(moved.counters.register).toBe(1);
    expect(moved.clientIds).not.toContain(before);
  });
});

describe('where OAuth requests may go', () => {
  it('classifies addresses', () => {
    expect(addressClass('169.254.169.254')).toBe('link-local');
    expect(addressClass('fe80::1')).toBe('link-local');
    expect(addressClass('[fe80::1%eth0]')).toBe('link-local');
    expect(addressClass('0.0.0.0')).toBe('unspecified');
    expect(addressClass('::')).toBe('unspecified');
    expect(addressClass('127.0.0.1')).toBe('loopback');
    expect(addressClass('::1')).toBe('loopback');
    expect(addressClass('::ffff:127.0.0.1')).toBe('loopback');
    expect(addressClass('::ffff:169.254.169.254')).toBe('link-local');
    expect(addressClass('10.1.2.3')).toBe('private');
    expect(addressClass('172.20.0.1')).toBe('private');
    expect(addressClass('192.168.1.1')).toBe('private');
    expect(addressClass('fd00::1')).toBe('private');
    expect(addressClass('172.32.0.1')).toBe('public');
    expect(addressClass('93.184.216.34')).toBe('public');
    expect(addressClass('2606:4700::1')).toBe('public');
  });

  it('refuses link-local and unspecified always, and this machine or its network for a public server only', () => {
    expect(addressRefusal(['link-local'], ['loopback'])).toMatch(/link-local/);
    expect(addressRefusal(['unspecified'], ['public'])).toMatch(/unspecified/);
    expect(addressRefusal(['loopback'], ['public'])).toMatch(/loopback/);
    expect(addressRefusal(['private'], ['public'])).toMatch(/private/);
    expect(addressRefusal(['public', 'loopback'], ['public'])).toMatch(/loopback/);
    expect(addressRefusal(['loopback'], ['loopback'])).toBeUndefined();
    expect(addressRefusal(['private'], ['loopback'])).toBeUndefined();
    expect(addressRefusal(['public'], ['public'])).toBeUndefined();
    // A server that resolves partly to the internet is not local.
    expect(addressRefusal(['loopback'], ['loopback', 'public'])).toMatch(/loopback/);
  });

  it('refuses, without connecting, an authorization server the metadata places at 169.254.169.254', async () => {
    const server = await fixture({ authorizationServers: ['http://169.254.169.254/latest'] });
    const booted = await boot(server);
    const asked: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
      asked.push(input instanceof Request ? input.url : String(input));
      return realFetch(input, init);
    }) as typeof fetch;
    try {
      const error = await rejection(signIn(booted, server));
      expect(error.code).toBe('PLN_E_OAUTH_ADDRESS_REFUSED');
      expect(error.message).toContain('169.254.169.254');
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(asked.some((url) => url.startsWith(server.mcpUrl))).toBe(true);
    expect(asked.filter((url) => url.includes('169.254'))).toEqual([]);
  });
});
