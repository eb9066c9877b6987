/**
 * The oauth plugin end to end, in process, against a real authorization server
 * and a bearer-protected MCP server on 127.0.0.1 (test/support/oauth-server.ts,
 * built from the SDK's own server-side auth). Nothing opens a browser: the test
 * does what a browser does — it follows the authorization URL plinth prints and
 * requests the callback URL it redirects to, which reaches plinth's real
 * loopback callback server. Tests that tamper with the flow (state, PKCE) tap
 * the `oauth` service's channel hook, as an IDE host would.
 *
 * 1. sign-in: dynamic registration, each metadata location, a pre-registered client;
 * 2. a sign-in that must fail: no registration possible, denied, wrong or missing state, wrong PKCE verifier, inside a hook;
 * 3. connections: never sign in, refresh ahead of expiry, rotation, invalid_grant,
 *    the authorization server down, a 401 on a later call;
 * 4. sign-out with revocation; status;
 * 5. the prompt of a one-shot command on a terminal;
 * 6. tokens in the OS keychain (a keytar stand-in);
 * 7. no secret in any log, error or status.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { offerSignIn } from '../plugins/mcp/cli-signin.js';
import type { McpService, ServerStatus } from 'plinth/sdk';
import type { OAuthService, SignInChannel } from 'plinth/sdk';
import type { InlinePlugin } from '../kernel/kernel.js';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthFixture } from './support/oauth-server.js';
import { rejection } from './support/errors.js';

const kernels: TestKernel[] = [];
const fixtures: OAuthFixture[] = [];

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
});

// ── helpers ─────────────────────────────────────────────────────────────────

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

/** A kernel with the builtin plugins and one remote server `secure` (health and the demo server off). */
async function boot(server: Record<string, unknown>, oauthSettings: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Booted> {
  const kernel = await createTestKernel({
    builtin: true,
    env,
    settings: {
      mcpServers: { secure: server },
      plugins: {
        health: { enabled: false },
        'mcp-demo': { enabled: false },
        mcp: { settings: { retries: 0 } },
        oauth: { settings: { openBrowser: false, callbackTimeoutMs: 20_000, ...oauthSettings } },
      },
    },
  });
  kernels.push(kernel);
  return { kernel, oauth: await kernel.get('oauth'), mcp: await kernel.get('mcp') };
}

/** Every authorization code a test browser carried, for the secret scan. */
const codes: string[] = [];

/** What a browser does with the authorization URL: the server redirects, the browser requests the callback. */
async function browse(server: OAuthFixture, url: string): Promise<void> {
  const callback = await server.followAuthorization(url);
  const code = callback.searchParams.get('code');
  if (code) codes.push(code);
  const page = await fetch(callback);
  await page.text();
}

/** `plinth auth login` in process: the URL plinth prints is followed like a browser would. */
async function signIn(booted: Booted, server: OAuthFixture, name = 'secure'): Promise<{ lines: string[] }> {
  const lines: string[] = [];
  let browsing: Promise<void> | undefined;
  await booted.oauth.login(name, {
    progress: (line) => {
      lines.push(line);
      const url = line.trim();
      if (browsing === undefined && url.startsWith('http://127.0.0.1') && url.includes('response_type=code')) browsing = browse(server, url);
    },
  });
  await browsing;
  return { lines };
}

/** A host's sign-in channel that plays the browser itself, letting the test change the URL on the way out or back. */
function hostChannel(server: OAuthFixture, tamper: { authorization?: (url: URL) => void; callback?: (url: URL) => void }) {
  return (): SignInChannel => {
    let landed: Promise<URL> | undefined;
    return {
      redirectUrl: 'http://127.0.0.1:9/host-callback',
      async open(url) {
        const asked = new URL(url);
        tamper.authorization?.(asked);
        landed = server.followAuthorization(asked);
      },
      async callback() {
        const url = await landed!;
        tamper.callback?.(url);
        return url;
      },
      async close() {},
    };
  };
}

async function whoami(mcp: McpService): Promise<{ clientId: string; scopes: string[]; resource?: string }> {
  const result = await mcp.callTool('secure__whoami', {});
  expect(result.error).toBeUndefined();
  expect(result.ok).toBe(true);
  return JSON.parse(result.text) as { clientId: string; scopes: string[]; resource?: string };
}

async function started(mcp: McpService): Promise<ServerStatus> {
  return mcp.start('secure', { retries: 0 });
}

/** Moves the stored access token's expiry to `msFromNow` (time passing, without waiting). */
async function ageTokens(booted: Booted, msFromNow: number): Promise<void> {
  const secrets = await booted.kernel.get('secrets');
  const record = JSON.parse((await secrets.get('mcp-oauth:secure'))!) as Record<string, unknown>;
  await secrets.set('mcp-oauth:secure', JSON.stringify({ ...record, expiresAt: Date.now() + msFromNow }));
}

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ── 1. sign-in ──────────────────────────────────────────────────────────────

describe('sign-in', () => {
  it('registers dynamically, runs PKCE through the loopback callback, stores the tokens and calls a protected tool', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    const { lines } = await signIn(booted, server);

    expect(lines.some((line) => line.includes(server.endpoints.authorization))).toBe(true);
    expect(server.counters.register).toBe(1);
    const [authorization] = server.authorizations;
    expect(authorization?.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(authorization?.resource).toBe(server.resource);

    expect((await started(booted.mcp)).state).toBe('connected');
    const me = await whoami(booted.mcp);
    expect(me.clientId).toBe(server.registeredClients()[0]?.client_id);
    expect(me.resource).toBe(server.resource);

    const [status] = await booted.oauth.status('secure');
    expect(status).toMatchObject({ server: 'secure', state: 'signed-in', backend: 'file', refreshable: true });
    expect(status?.expiresAt).toBeDefined();
  });

  it.each<[string, OAuthFixtureOptions]>([
    ['resource metadata named only by the WWW-Authenticate header', { resourceMetadata: 'header' }],
    ['resource metadata at the path-suffixed well-known URL', { resourceMetadata: 'path' }],
    ['resource metadata at the root well-known URL', { resourceMetadata: 'root' }],
    ['no resource metadata (the server origin is the authorization server)', { resourceMetadata: 'none' }],
    ['OpenID configuration of a separate authorization server', { authServerMetadata: 'openid', separateAuthServer: true }],
    ['OpenID configuration at a path-inserted URL (issuer with a path)', { authServerMetadata: 'openid-path', separateAuthServer: true, issuerPath: '/tenant1' }],
    ['RFC 8414 metadata of an issuer with a path', { authServerMetadata: 'oauth', separateAuthServer: true, issuerPath: '/tenant1' }],
  ])('discovers through %s', async (_name, options) => {
    const server = await fixture(options);
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    expect((await started(booted.mcp)).state).toBe('connected');
    expect((await whoami(booted.mcp)).clientId).toBeTruthy();
  });

  it('uses a pre-registered client from the settings (secret from the environment) and does not register', async () => {
    const port = await freePort();
    const server = await fixture({
      dynamicRegistration: false,
      preRegistered: { clientId: 'plinth-preregistered', clientSecret: 'pre-registered-secret-7c41', redirectUris: [`http://127.0.0.1:${port}/callback`] },
    });
    const booted = await boot(
      { url: server.mcpUrl, oauth: { clientId: 'plinth-preregistered', clientSecret: '${env:SECURE_CLIENT_SECRET}', callbackPort: port, scopes: ['mcp:read'] } },
      {},
    );
    const saved = process.env.SECURE_CLIENT_SECRET;
    process.env.SECURE_CLIENT_SECRET = 'pre-registered-secret-7c41';
    try {
      await signIn(booted, server);
      expect(server.counters.register).toBe(0);
      expect(server.authorizations[0]?.scopes).toEqual(['mcp:read']);
      expect((await started(booted.mcp)).state).toBe('connected');
      expect((await whoami(booted.mcp)).clientId).toBe('plinth-preregistered');
    } finally {
      if (saved === undefined) delete process.env.SECURE_CLIENT_SECRET;
      else process.env.SECURE_CLIENT_SECRET = saved;
    }
  });

  it('signs in to a server on the older HTTP+SSE transport, and its connection carries the token (and refreshes after a 401)', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.sseUrl, transport: 'sse' });
    await signIn(booted, server);
    const status = await started(booted.mcp);
    expect(status.state).toBe('connected');
    expect(status.transport).toBe('sse');
    expect((await whoami(booted.mcp)).clientId).toBe(server.registeredClients()[0]?.client_id);
    server.expireAccessTokens();
    await whoami(booted.mcp);
    expect(server.counters.refresh).toBe(1);
  });

  it('takes the scope from the server’s challenge when none is configured', async () => {
    const server = await fixture({ challengeScope: 'mcp:write' });
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    expect(server.authorizations[0]?.scopes).toEqual(['mcp:write']);
    expect((await booted.oauth.status('secure'))[0]?.scope).toBe('mcp:write');
  });
});

// ── 2. sign-ins that fail ───────────────────────────────────────────────────

describe('a sign-in that fails', () => {
  it('says how to register when the server offers no dynamic registration and no client is configured', async () => {
    const server = await fixture({ dynamicRegistration: false });
    const booted = await boot({ url: server.mcpUrl });
    const error = await rejection(signIn(booted, server));
    expect(error.code).toBe('PLN_E_OAUTH_REGISTRATION');
    expect(error.hint).toContain('clientId');
  });

  it.each([
    [401, 'answered HTTP 401 without a token'],
    [200, 'it may not need a sign-in'],
  ])('says so when the server (answering %i) publishes no OAuth metadata at all', async (status, says) => {
    const plain = createHttpServer((req, res) => {
      res.statusCode = req.url?.startsWith('/.well-known/') ? 404 : status;
      res.end();
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = plain.address() as { port: number };
      const booted = await boot({ url: `http://127.0.0.1:${port}/mcp`, transport: 'http' });
      const error = await rejection(booted.oauth.login('secure', { progress: () => {} }));
      expect(error.code).toBe('PLN_E_OAUTH_DISCOVERY');
      expect(error.message).toContain(says);
    } finally {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it('reports a refusal by the authorization server (error=access_denied) and stores nothing', async () => {
    const server = await fixture({ deny: true });
    const booted = await boot({ url: server.mcpUrl });
    const error = await rejection(signIn(booted, server));
    expect(error.code).toBe('PLN_E_OAUTH_DENIED');
    expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');
  });

  it.each([
    ['a state this sign-in did not send', (url: URL) => url.searchParams.set('state', 'forged-state-value')],
    ['no state', (url: URL) => url.searchParams.delete('state')],
  ])('refuses a callback with %s, and exchanges no code', async (_name, change) => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    booted.oauth.hooks.channel.tap('ide', hostChannel(server, { callback: change }));
    const error = await rejection(booted.oauth.login('secure'));
    expect(error.code).toBe('PLN_E_OAUTH_STATE_MISMATCH');
    expect(server.counters.token).toBe(0);
    expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');
  });

  it('fails the exchange when the code was issued for another PKCE challenge (a verifier that does not match)', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    // An attacker's challenge substituted on the way to the server: plinth's verifier cannot match it.
    const forged = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    booted.oauth.hooks.channel.tap('ide', hostChannel(server, { authorization: (url) => url.searchParams.set('code_challenge', forged) }));
    const error = await rejection(booted.oauth.login('secure'));
    expect(error.code).toBe('PLN_E_OAUTH_EXCHANGE_FAILED');
    expect(error.message).toContain('invalid_grant');
    expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');
  });

  it('is refused inside a hook, naming the command to run', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    process.env.PLINTH_HOOK_EVENT = 'before_tool';
    try {
      const error = await rejection(booted.oauth.login('secure'));
      expect(error.code).toBe('PLN_E_OAUTH_NOT_INTERACTIVE');
      expect(error.hint).toContain('plinth auth login secure');
    } finally {
      delete process.env.PLINTH_HOOK_EVENT;
    }
    expect(server.counters.authorize).toBe(0);
  });

  it('refuses a local server and an unknown name', async () => {
    const booted = await boot({ command: process.execPath, args: ['-e', '0'] });
    expect((await rejection(booted.oauth.login('secure'))).code).toBe('PLN_E_OAUTH_NOT_REMOTE');
    expect((await rejection(booted.oauth.login('secrue'))).message).toContain('did you mean "secure"');
  });
});

// ── 3. connections ──────────────────────────────────────────────────────────

describe('a connection', () => {
  it('never starts a sign-in: without stored tokens it fails with the command to run, and registers nothing', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    const status = await started(booted.mcp);
    expect(status.state).toBe('error');
    expect(status.error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect(status.error?.message).toContain('sign in');
    expect(server.counters.register).toBe(0);
    expect(server.counters.authorize).toBe(0);
  });

  it('asks for a sign-in (with the default endpoints) from a server that answers 401 without any OAuth metadata, names "headers" as the other cause, and stores nothing', async () => {
    const plain = createHttpServer((req, res) => {
      res.statusCode = req.url?.startsWith('/.well-known/') ? 404 : 401;
      res.end('{"error":"unauthorized"}');
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = plain.address() as { port: number };
      const booted = await boot({ url: `http://127.0.0.1:${port}/mcp`, transport: 'http' });
      const status = await started(booted.mcp);
      // A 2025-03-26 server publishes no metadata: the sign-in uses the default endpoints at its origin.
      expect(status.error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
      expect(await (await booted.kernel.get('secrets')).keys()).toEqual([]);
    } finally {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it('refreshes an access token ahead of its expiry, once, and stores the rotated refresh token before using it', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl }, { refreshSkewSeconds: 60 });
    await signIn(booted, server);
    const [firstRefresh] = server.issuedTokens().refresh;
    // As if 59 of its 60 minutes had passed: within the skew, not expired.
    await ageTokens(booted, 30_000);
    const challenged = server.counters.unauthorized; // the sign-in's own request without a token

    expect((await started(booted.mcp)).state).toBe('connected');
    await whoami(booted.mcp);
    expect(server.counters.refresh).toBe(1);
    expect(server.counters.unauthorized).toBe(challenged);

    // Rotation: the refresh token stored is the new one; the first is dead at the server.
    const issued = server.issuedTokens().refresh;
    expect(issued).toHaveLength(2);
    const record = JSON.parse((await (await booted.kernel.get('secrets')).get('mcp-oauth:secure'))!) as { tokens: { refresh_token: string } };
    expect(record.tokens.refresh_token).toBe(issued[1]);
    expect(record.tokens.refresh_token).not.toBe(firstRefresh);
  });

  it('refreshes an expired access token before the request rather than after a 401', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    await ageTokens(booted, -1_000);
    const challenged = server.counters.unauthorized;
    expect((await started(booted.mcp)).state).toBe('connected');
    expect(server.counters.refresh).toBe(1);
    expect(server.counters.unauthorized).toBe(challenged);
  });

  it('asks to sign in again when the authorization server refuses the refresh token (invalid_grant), keeping the registration', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    server.revokeAllRefreshTokens();
    server.expireAccessTokens();
    const status = await started(booted.mcp);
    expect(status.error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect(status.error?.message).toMatch(/sign in again/);
    expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');

    // Signing in again reuses the registration.
    await signIn(booted, server);
    expect(server.counters.register).toBe(1);
    expect((await booted.mcp.restart('secure', { retries: 0 })).state).toBe('connected');
  });

  it('keeps the tokens when the authorization server is down during a refresh, and works once it is back', async () => {
    const server = await fixture({ separateAuthServer: true });
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    server.expireAccessTokens();
    await server.setDown(true);

    const status = await started(booted.mcp);
    expect(status.error?.code).toBe('PLN_E_OAUTH_UNREACHABLE');
    expect((await booted.oauth.status('secure'))[0]).toMatchObject({ state: 'signed-in', refreshable: true });

    await server.setDown(false);
    expect((await booted.mcp.restart('secure', { retries: 0 })).state).toBe('connected');
    await whoami(booted.mcp);
  });

  it('answers a 401 on a later call with one refresh and one retry', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    expect((await started(booted.mcp)).state).toBe('connected');
    await whoami(booted.mcp);
    const before = { refresh: server.counters.refresh, unauthorized: server.counters.unauthorized };

    server.expireAccessTokens();
    await whoami(booted.mcp);
    expect(server.counters.refresh - before.refresh).toBe(1);
    expect(server.counters.unauthorized - before.unauthorized).toBe(1);
  });
});

// ── 4. sign-out and status ──────────────────────────────────────────────────

describe('sign-out', () => {
  it('revokes the refresh and access tokens at the server (RFC 7009), then deletes them', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    const issued = server.issuedTokens();

    const result = await booted.oauth.logout('secure');
    expect(result).toEqual({ server: 'secure', removed: true, revocation: 'revoked' });
    expect(server.revoked).toEqual([issued.refresh[0], issued.access[0]]);
    expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');
    expect((await started(booted.mcp)).error?.code).toBe('PLN_E_OAUTH_SIGNIN_REQUIRED');
  });

  it('finds the revocation endpoint of an OpenID provider (the SDK keeps only the OpenID fields)', async () => {
    const server = await fixture({ authServerMetadata: 'openid', separateAuthServer: true });
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    expect((await booted.oauth.logout('secure')).revocation).toBe('revoked');
    expect(server.revoked).toHaveLength(2);
  });

  it('deletes the tokens when the server offers no revocation, and says so', async () => {
    const server = await fixture({ revocation: false });
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    expect(await booted.oauth.logout('secure')).toEqual({ server: 'secure', removed: true, revocation: 'unsupported' });
    expect(await booted.oauth.logout('secure')).toEqual({ server: 'secure', removed: false, revocation: 'none' });
  });

  it('deletes the tokens when revocation fails, and reports why', async () => {
    const server = await fixture({ separateAuthServer: true });
    const booted = await boot({ url: server.mcpUrl });
    await signIn(booted, server);
    await server.setDown(true);
    const result = await booted.oauth.logout('secure');
    expect(result.revocation).toBe('failed');
    expect(result.removed).toBe(true);
    expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');
  });
});

// ── 5. the prompt of a one-shot command ────────────────────────────────────

describe('a one-shot command on a terminal', () => {
  /** A terminal that answers `answer` to the question, and the command's output whose notes a browser follows. */
  function terminal(server: OAuthFixture, answer: string) {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = Object.assign(new PassThrough(), { isTTY: true });
    let shown = '';
    output.on('data', (chunk: Buffer) => {
      shown += chunk.toString();
      if (shown.includes('Sign in now?')) input.write(`${answer}\n`);
    });
    const browsing: Array<Promise<void>> = [];
    const out = {
      print() {},
      json() {},
      note(line: string) {
        if (line.trim().startsWith(server.endpoints.authorization)) browsing.push(browse(server, line.trim()));
      },
    };
    return { io: { json: false, out, signal: new AbortController().signal }, terminal: { input, output }, browsing, asked: () => shown.includes('Sign in now?') };
  }

  it('offers a sign-in to a server that needs one, and starts it again once signed in', async () => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    const failed = await started(booted.mcp);
    const tty = terminal(server, 'y');
    const status = await offerSignIn(failed, tty.io, { kernel: booted.kernel, restart: (name) => booted.mcp.start(name, { retries: 0 }), terminal: tty.terminal, env: {} });
    await Promise.all(tty.browsing);
    expect(tty.asked()).toBe(true);
    expect(status.state).toBe('connected');
    await whoami(booted.mcp);
  });

  it.each<[string, { answer?: string; json?: boolean; env?: Record<string, string> }]>([
    ['the person says no', { answer: 'n' }],
    ['--json', { json: true }],
    ['inside a hook', { env: { PLINTH_HOOK_EVENT: 'before_tool' } }],
    ['in CI', { env: { CI: 'true' } }],
  ])('does not sign in when %s', async (_name, how) => {
    const server = await fixture();
    const booted = await boot({ url: server.mcpUrl });
    const failed = await started(booted.mcp);
    const tty = terminal(server, how.answer ?? 'y');
    const status = await offerSignIn(failed, { ...tty.io, json: how.json ?? false }, { kernel: booted.kernel, restart: (name) => booted.mcp.start(name, { retries: 0 }), terminal: tty.terminal, env: how.env ?? {} });
    expect(status).toBe(failed);
    expect(server.counters.authorize).toBe(0);
  });
});

// ── 6. the OS keychain ───────────────────────────────────────────────────────

describe('tokens in the OS keychain', () => {
  const WORKING = fileURLToPath(new URL('./fixtures/keytar/working.mjs', import.meta.url));
  const saved = process.env.PLINTH_KEYCHAIN_FAKE_DIR;
  afterEach(async () => {
    if (saved === undefined) delete process.env.PLINTH_KEYCHAIN_FAKE_DIR;
    else process.env.PLINTH_KEYCHAIN_FAKE_DIR = saved;
  });

  it('are kept there once the probe passes, and a keychain that stops giving them back is an error, never "signed out"', async () => {
    const server = await fixture();
    // A keytar stand-in (the real one needs a desktop session): the probe's child process and plinth share its store.
    const keychain = await mkdtemp(join(tmpdir(), 'plinth-fake-keychain-'));
    process.env.PLINTH_KEYCHAIN_FAKE_DIR = keychain;
    try {
      const booted = await boot({ url: server.mcpUrl }, { keychainModule: WORKING });
      await signIn(booted, server);
      expect((await booted.oauth.status('secure'))[0]).toMatchObject({ state: 'signed-in', backend: 'keychain' });
      expect(await booted.oauth.storage()).toEqual({ preferred: 'keychain', keychain: { available: true } });
      expect((await started(booted.mcp)).state).toBe('connected');

      // The keychain forgets (another tool wiped it, a new login keyring): plinth says so.
      await rm(join(keychain, 'keychain.json'));
      const [status] = await booted.oauth.status('secure');
      expect(status).toMatchObject({ state: 'unreadable', backend: 'keychain', error: { code: 'PLN_E_SECRETS_KEYCHAIN' } });
      const restarted = await booted.mcp.restart('secure', { retries: 0 });
      expect(restarted.error?.code).toBe('PLN_E_SECRETS_KEYCHAIN');

      // Signing out removes what cannot be read (nothing to revoke it with); signing in again repairs it.
      expect(await booted.oauth.logout('secure')).toMatchObject({ removed: true, revocation: 'failed' });
      expect((await booted.oauth.status('secure'))[0]?.state).toBe('signed-out');
      await signIn(booted, server);
      expect((await booted.oauth.status('secure'))[0]).toMatchObject({ state: 'signed-in', backend: 'keychain' });
      // Forgotten once more: a sign-in alone replaces what it cannot read.
      await rm(join(keychain, 'keychain.json'));
      expect((await booted.oauth.status('secure'))[0]?.state).toBe('unreadable');
      await signIn(booted, server);
      expect((await booted.oauth.status('secure'))[0]).toMatchObject({ state: 'signed-in', backend: 'keychain' });
      expect((await booted.mcp.restart('secure', { retries: 0 })).state).toBe('connected');
    } finally {
      await rm(keychain, { recursive: true, force: true });
    }
  });
});

describe('another secret store', () => {
  it('takes the tokens when the settings choose it as the `secrets` service (a deployment’s vault)', async () => {
    const server = await fixture();
    const vault = new Map<string, string>();
    const memoryVault: InlinePlugin = {
      manifest: { name: 'memory-vault', provides: ['secrets'] },
      setup(kernel) {
        kernel.provide('secrets', {
          get: async (key) => vault.get(key),
          set: async (key, value) => (vault.set(key, value), 'file'),
          delete: async (key) => vault.delete(key),
          where: async (key) => (vault.has(key) ? 'file' : undefined),
          keys: async (prefix = '') => [...vault.keys()].filter((key) => key.startsWith(prefix)).sort(),
          describe: async () => ({ preferred: 'file', keychain: { available: false, reason: 'a vault of its own' } }),
        });
      },
    };
    const kernel = await createTestKernel({
      builtin: true,
      plugins: [memoryVault],
      settings: {
        services: { secrets: 'memory-vault' },
        mcpServers: { secure: { url: server.mcpUrl } },
        plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, oauth: { settings: { openBrowser: false } } },
      },
    });
    kernels.push(kernel);
    const booted = { kernel, oauth: await kernel.get('oauth'), mcp: await kernel.get('mcp') };
    await signIn(booted, server);
    expect([...vault.keys()]).toEqual(['mcp-oauth:secure']);
    expect((await started(booted.mcp)).state).toBe('connected');
    expect(existsSync(join(kernel.home, 'secrets'))).toBe(false);
  });
});

// ── 7. secrets stay secret ──────────────────────────────────────────────────

describe('secrets', () => {
  it('stores tokens encrypted with mode 0600 and never shows a token, code, verifier or client secret in logs, errors or status', async () => {
    const port = await freePort();
    const clientSecret = 'confidential-client-secret-93ab';
    const server = await fixture({ separateAuthServer: true, preRegistered: { clientId: 'plinth-confidential', clientSecret, redirectUris: [`http://127.0.0.1:${port}/callback`] } });
    const booted = await boot({ url: server.mcpUrl, oauth: { clientId: 'plinth-confidential', clientSecret, callbackPort: port } });
    await signIn(booted, server);
    await started(booted.mcp);
    await whoami(booted.mcp);
    server.expireAccessTokens();
    await whoami(booted.mcp);
    server.revokeAllRefreshTokens();
    server.expireAccessTokens();
    const failed = await booted.mcp.restart('secure', { retries: 0 });
    const status = await booted.oauth.status();
    const errors: unknown[] = [failed.error];
    errors.push((await rejection(booted.oauth.login('secure-typo'))).toJSON());

    const secrets = [
      ...server.issuedTokens().access,
      ...server.issuedTokens().refresh,
      ...server.registeredClients().flatMap((c) => (c.client_secret ? [c.client_secret] : [])),
      ...server.authorizations.flatMap((a) => (a.state ? [a.state] : [])),
      ...server.verifiers,
      ...codes,
    ];
    expect(secrets).toContain(clientSecret);
    expect(server.verifiers).toHaveLength(1);
    expect(secrets.length).toBeGreaterThan(6);
    const home = booted.kernel.home;
    const file = join(home, 'secrets', 'secrets.enc');
    const seen = [JSON.stringify(booted.kernel.logs), JSON.stringify(status), JSON.stringify(errors), JSON.stringify(booted.mcp.servers()), await readFile(file, 'utf8')].join('\n');
    for (const secret of secrets) expect(seen).not.toContain(secret);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});
