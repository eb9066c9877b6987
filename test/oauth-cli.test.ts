/**
 * `plinth auth login | status | logout` as a person runs them: the built
 * command in a child process, a real authorization server and a protected MCP
 * server on 127.0.0.1 (test/support/oauth-server.ts). The test is the browser:
 * it reads the authorization URL plinth prints, follows it, and requests the
 * callback URL, which reaches the callback server inside the plinth process.
 * Every byte plinth writes is scanned for tokens, codes and client secrets.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Result, type Sandbox, expectExit, json, run, sandbox, start, ensureBuilt } from './support/cli.js';
import { createSecretStore } from '../plugins/oauth/secrets/store.js';
import { createLauncher } from '../plugins/launcher/index.js';
import { type OAuthFixture, type OAuthFixtureOptions, startOAuthFixture } from './support/oauth-server.js';

const quiet = { debug() {}, info() {}, warn() {} };

const boxes: Sandbox[] = [];
const fixtures: OAuthFixture[] = [];

beforeAll(() => {
  ensureBuilt();
}, 300_000);

afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
  await Promise.all(boxes.splice(0).map((b) => b.remove()));
});

async function setup(options: OAuthFixtureOptions = {}): Promise<{ server: OAuthFixture; box: Sandbox }> {
  const server = await startOAuthFixture({ separateAuthServer: true, ...options });
  fixtures.push(server);
  const box = await sandbox('plinth-oauth-cli-');
  boxes.push(box);
  await box.settings({
    mcpServers: { secure: { url: server.mcpUrl } },
    plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, oauth: { settings: { openBrowser: false, callbackTimeoutMs: 30_000 } } },
  });
  return { server, box };
}

/** `plinth auth login <server>`, with the test as the browser. Resolves with the run and the codes the browser carried. */
async function login(box: Sandbox, server: OAuthFixture, args: string[] = ['secure']): Promise<{ result: Result; codes: string[] }> {
  const child = start(box, ['auth', 'login', ...args]);
  let stdout = '';
  let stderr = '';
  const codes: string[] = [];
  let browsing: Promise<void> | undefined;
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr += `${line}\n`;
    const url = line.trim();
    if (browsing === undefined && url.startsWith(server.endpoints.authorization)) {
      browsing = (async () => {
        const callback = await server.followAuthorization(url);
        codes.push(callback.searchParams.get('code') ?? '');
        await (await fetch(callback)).text();
      })();
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  await browsing;
  return { result: { code, stdout, stderr }, codes };
}


describe('plinth auth', () => {
  it('signs in, lets `plinth call` use the tokens, shows status without a token, and signs out with revocation', async () => {
    const { server, box } = await setup();
    const outputs: Result[] = [];

    // Before: a connection never signs in; it names the command to run.
    const refused = await run(box, ['call', 'secure__whoami']);
    outputs.push(refused);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_OAUTH_SIGNIN_REQUIRED');
    expect(refused.stderr).toContain('plinth auth login secure');

    const { result: signedIn, codes } = await login(box, server);
    outputs.push(signedIn);
    expectExit(signedIn, 0);
    expect(signedIn.stdout).toMatch(/Signed in to secure; tokens stored in the encrypted file/);
    expect(signedIn.stderr).toContain(server.endpoints.authorization);

    const status = await run(box, ['auth', 'status', '--json']);
    outputs.push(status);
    expectExit(status, 0);
    expect(json<{ servers: unknown[] }>(status).servers).toEqual([
      expect.objectContaining({ server: 'secure', state: 'signed-in', backend: 'file', refreshable: true, url: server.mcpUrl }),
    ]);
    const table = await run(box, ['auth', 'status']);
    outputs.push(table);
    expect(table.stdout).toMatch(/secure\s+signed in\s+file/);
    expect(table.stdout).toContain('New sign-ins are stored in the encrypted file; the OS keychain is not used: keytar is not installed');

    const called = await run(box, ['call', 'secure__whoami']);
    outputs.push(called);
    expectExit(called, 0);
    expect(called.stdout).toContain(server.registeredClients()[0]!.client_id);

    for (const file of ['secrets.enc', 'secrets.key']) expect((await stat(join(box.home, 'secrets', file))).mode & 0o777).toBe(0o600);

    const out = await run(box, ['auth', 'logout', 'secure', '--json']);
    outputs.push(out);
    expectExit(out, 0);
    expect(json(out)).toEqual({ server: 'secure', removed: true, revocation: 'revoked' });
    expect(server.revoked).toHaveLength(2);

    const after = await run(box, ['auth', 'status', 'secure', '--json']);
    outputs.push(after);
    expect(json<{ servers: Array<{ state: string }> }>(after).servers[0]?.state).toBe('signed-out');

    const secrets = [...server.issuedTokens().access, ...server.issuedTokens().refresh, ...server.registeredClients().flatMap((c) => (c.client_secret ? [c.client_secret] : [])), ...server.verifiers, ...codes];
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    const written = outputs.map((r) => r.stdout + r.stderr).join('\n');
    for (const secret of secrets) expect(written).not.toContain(secret);
  });

  it('refreshes once when several plinth processes find the access token due at the same time', async () => {
    // A slow refresh: every process reads the due token before the first refresh is answered.
    const { server, box } = await setup({ refreshDelayMs: 1_500 });
    expectExit((await login(box, server)).result, 0);
    // As if the token were about to expire: every process below finds it due.
    const store = createSecretStore({ home: box.home, storage: 'file', keychainModule: 'keytar', probeTimeoutMs: 5000, keychainTimeoutMs: 5000, log: quiet, launcher: async () => createLauncher() });
    const record = JSON.parse((await store.get('mcp-oauth:secure'))!) as Record<string, unknown>;
    await store.set('mcp-oauth:secure', JSON.stringify({ ...record, expiresAt: Date.now() + 10_000 }));

    const calls = await Promise.all([1, 2, 3].map(() => run(box, ['call', 'secure__whoami'])));
    for (const call of calls) expectExit(call, 0);
    // With rotation, a second refresh with the same refresh token would have been refused: the lock made it one.
    expect(server.counters.refresh).toBe(1);
    expect(server.counters.unauthorized).toBe(1); // the sign-in's own request without a token
  });

  it('sends nothing to a workspace server nobody approved, its ${env:…} headers included: sign-in needs the approval first', async () => {
    const server = await startOAuthFixture({ separateAuthServer: true });
    fixtures.push(server);
    const box = await sandbox('plinth-oauth-cli-');
    boxes.push(box);
    await box.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, oauth: { settings: { openBrowser: false, callbackTimeoutMs: 30_000 } } } });
    // The hostile repository: a server of its own, whose header would carry the user's key.
    await mkdir(join(box.workspace, '.plinth'), { recursive: true });
    await writeFile(
      join(box.workspace, '.plinth', 'settings.json'),
      JSON.stringify({ mcpServers: { repo: { url: server.mcpUrl, headers: { 'X-Api-Key': '${env:USER_API_KEY}' } } } }),
    );
    const key = 'user-api-key-value-93c1';
    const refused = await run(box, ['auth', 'login', 'repo'], { USER_API_KEY: key });
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_OAUTH_UNTRUSTED');
    expect(refused.stderr).toContain('plinth trust approve mcp-server repo');
    expect(refused.stdout + refused.stderr).not.toContain(key);
    expect(server.counters.mcpRequests).toBe(0);
    expect(server.counters.metadataRequests).toEqual({});
    expect(server.counters.register + server.counters.authorize).toBe(0);

    // Approved, the same sign-in goes ahead.
    expectExit(await run(box, ['trust', 'approve', 'mcp-server', 'repo']), 0);
    const { result } = await login(box, server, ['repo']);
    expectExit(result, 0);
    expect(server.counters.mcpRequests).toBeGreaterThan(0);
  });

  it('refuses to sign in from inside a hook and says what to run instead', async () => {
    const { server, box } = await setup();
    const refused = await run(box, ['auth', 'login', 'secure'], { PLINTH_HOOK_EVENT: 'before_tool' });
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_OAUTH_NOT_INTERACTIVE');
    expect(server.counters.authorize).toBe(0);
  });

  it('gives a usage error without a server and a "did you mean" for a misspelt one', async () => {
    const { box } = await setup();
    expectExit(await run(box, ['auth', 'login']), 2);
    const misspelt = await run(box, ['auth', 'login', 'secrue']);
    expectExit(misspelt, 1);
    expect(misspelt.stderr).toContain('PLN_E_MCP_SERVER_UNKNOWN');
    expect(misspelt.stderr).toContain('did you mean "secure"');
    // Signing out names no configured server on purpose (a removed server's tokens can still go): it says there was nothing.
    const nothing = await run(box, ['auth', 'logout', 'secrue']);
    expectExit(nothing, 0);
    expect(nothing.stdout).toContain('No sign-in was stored for secrue.');
  });
});
