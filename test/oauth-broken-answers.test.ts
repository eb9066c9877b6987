/**
 * A sign-in against servers that answer garbage: protected-resource metadata
 * that is a login page, a registration endpoint that answers HTML, a token
 * endpoint that answers an error page echoing the request (code, PKCE
 * verifier), or JSON without the token. Each failure names the address and
 * status that broke it and the step it broke in — and never quotes a body,
 * which is where a secret would be. The servers are a real HTTP server on
 * 127.0.0.1; the test is the browser.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthService } from 'plinth/sdk';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';

type Broken = 'refresh-echo' | 'resource-metadata-html' | 'metadata-garbage' | 'registration-html' | 'token-echo' | 'token-without-token';

const CODE = 'THE-AUTHORIZATION-CODE-4711';
const CLIENT_SECRET = 'THE-CLIENT-SECRET-0815';
const REFRESH_TOKEN = 'THE-REFRESH-TOKEN-1234';

const servers: Server[] = [];
const kernels: TestKernel[] = [];

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/**
 * An MCP server at /mcp that challenges with a `resource_metadata` URL, and its
 * authorization server under /as, one of whose answers is broken as `broken` says.
 */
async function brokenServer(broken: Broken): Promise<string> {
  let base = '';
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const html = (res: import('node:http').ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/html' });
    res.end(`<html><body>${body}</body></html>`);
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', base);
      switch (url.pathname) {
        case '/mcp':
          res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/prm"` });
          return res.end();
        case '/prm':
          if (broken === 'resource-metadata-html') return html(res, 200, 'Please log in to the portal');
          return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [`${base}/as`] });
        case '/.well-known/oauth-authorization-server/as':
          if (broken === 'metadata-garbage') {
            res.writeHead(200, { 'content-type': 'application/json' });
            return res.end('{"issuer": "cut off');
          }
          return json(res, 200, {
            issuer: `${base}/as`,
            authorization_endpoint: `${base}/as/authorize`,
            token_endpoint: `${base}/as/token`,
            registration_endpoint: `${base}/as/register`,
            response_types_supported: ['code'],
            code_challenge_methods_supported: ['S256'],
          });
        case '/as/register':
          if (broken === 'registration-html') return html(res, 200, 'Registration is closed');
          return json(res, 201, { ...(JSON.parse(body) as object), client_id: 'client-1', client_secret: CLIENT_SECRET, token_endpoint_auth_method: 'client_secret_post' });
        case '/as/authorize': {
          const back = new URL(url.searchParams.get('redirect_uri')!);
          back.searchParams.set('code', CODE);
          back.searchParams.set('state', url.searchParams.get('state')!);
          res.writeHead(302, { location: back.href });
          return res.end();
        }
        case '/as/token':
          // A proxy's error page that echoes the request: code, verifier and client secret.
          if (broken === 'token-echo') return html(res, 400, `Bad request: ${body}`);
          if (broken === 'refresh-echo') {
            if (body.includes('grant_type=refresh_token')) return html(res, 400, `Bad request: ${body}`);
            // Due for a refresh at once (plinth refreshes 60 s ahead of expiry).
            return json(res, 200, { access_token: 'access-1', token_type: 'Bearer', expires_in: 1, refresh_token: REFRESH_TOKEN });
          }
          return json(res, 200, { note: 'no token here' });
        default:
          res.writeHead(404);
          return res.end();
      }
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return base;
}

async function bootFor(base: string): Promise<TestKernel> {
  const kernel = await createTestKernel({
    builtin: true,
    settings: {
      mcpServers: { secure: { url: `${base}/mcp` } },
      plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, oauth: { settings: { openBrowser: false, callbackTimeoutMs: 20_000, storage: 'file' } } },
    },
  });
  kernels.push(kernel);
  return kernel;
}

/** Signs in to `secure` at `base` as a browser would; resolves with what `login` settled with. */
async function signIn(kernel: TestKernel, base: string): Promise<{ outcome: Promise<unknown>; lines: string[] }> {
  const oauth: OAuthService = await kernel.get('oauth');
  const lines: string[] = [];
  let browsing: Promise<void> | undefined;
  const outcome = oauth
    .login('secure', {
      progress: (line) => {
        lines.push(line);
        const url = line.trim();
        if (browsing === undefined && url.startsWith(`${base}/as/authorize`)) {
          browsing = (async () => {
            const redirect = await fetch(url, { redirect: 'manual' });
            await (await fetch(redirect.headers.get('location')!)).text();
          })();
        }
      },
    })
    .then(
      async (record) => {
        await browsing;
        return record;
      },
      async (error: unknown) => {
        await browsing;
        throw error;
      },
    );
  return { outcome, lines };
}

/** Signs in to `secure` at `base`, playing the browser; resolves with the error it fails with. */
async function failedSignIn(base: string): Promise<{ error: Error & { code?: string; toJSON?: () => unknown }; lines: string[] }> {
  const kernel = await bootFor(base);
  const { outcome, lines } = await signIn(kernel, base);
  const error = await rejection(outcome);
  return { error: error as Error & { code?: string }, lines: [...lines, ...kernel.logs] };
}

/** Everything a person or a script could see of the failure. */
function shown(failure: { error: Error & { toJSON?: () => unknown }; lines: string[] }): string {
  return [failure.error.message, JSON.stringify(failure.error.toJSON?.() ?? {}), ...failure.lines].join('\n');
}

describe('a sign-in against servers that answer garbage', () => {
  it('names the address and status of a token endpoint that answers an error page, as a failed exchange, and never shows the body it echoed', async () => {
    const base = await brokenServer('token-echo');
    const failure = await failedSignIn(base);
    expect(failure.error.code).toBe('PLN_E_OAUTH_FAILED');
    expect(failure.error.message).toContain(`POST ${base}/as/token answered HTTP 400 (text/html)`);
    const everything = shown(failure);
    expect(everything).not.toContain(CODE);
    expect(everything).not.toContain(CLIENT_SECRET);
    expect(everything).not.toContain('code_verifier');
    expect(everything).not.toContain('Bad request');
  });

  it('names the fields a token answer lacks, in one line', async () => {
    const base = await brokenServer('token-without-token');
    const { error } = await failedSignIn(base);
    expect(error.code).toBe('PLN_E_OAUTH_FAILED');
    expect(error.message).toContain(`POST ${base}/as/token answered HTTP 200 (application/json) with JSON that lacks a valid access_token, token_type`);
    expect(error.message).not.toContain('\n');
  });

  it('says the protected-resource metadata named in the challenge could not be read, not that there is none', async () => {
    const base = await brokenServer('resource-metadata-html');
    const failure = await failedSignIn(base);
    expect(failure.error.code).toBe('PLN_E_OAUTH_DISCOVERY');
    expect(failure.error.message).toContain(`names its OAuth metadata at ${base}/prm`);
    expect(failure.error.message).toContain(`GET ${base}/prm answered HTTP 200 (text/html)`);
    expect(failure.error.message).not.toContain('publishes no OAuth metadata');
    expect(shown(failure)).not.toContain('log in to the portal');
  });

  it('says which metadata document could not be read when the authorization server\'s is broken', async () => {
    const base = await brokenServer('metadata-garbage');
    const { error } = await failedSignIn(base);
    expect(error.code).toBe('PLN_E_OAUTH_DISCOVERY');
    expect(error.message).toContain(`GET ${base}/.well-known/oauth-authorization-server/as answered HTTP 200 (application/json), which is not the JSON OAuth expects`);
    expect(error.message).not.toContain('publishes no OAuth metadata');
  });

  it('keeps a refresh token out of what a connection reports when the refresh is answered by a page echoing it', async () => {
    const base = await brokenServer('refresh-echo');
    const kernel = await bootFor(base);
    await (await signIn(kernel, base)).outcome;
    const mcp = await kernel.get('mcp');
    const status = await mcp.start('secure', { retries: 0 });
    expect(status.state).not.toBe('connected');
    const everything = [JSON.stringify(status), JSON.stringify(await (await kernel.get('oauth')).status('secure')), ...kernel.logs].join('\n');
    expect(status.error?.message).toContain('refresh: server_error: HTTP 400: an answer that is not an OAuth error response');
    expect(everything).not.toContain(REFRESH_TOKEN);
    expect(everything).not.toContain('Bad request');
  });

  it('reports a registration endpoint that answers HTML as a failed registration, naming it', async () => {
    const base = await brokenServer('registration-html');
    const failure = await failedSignIn(base);
    expect(failure.error.code).toBe('PLN_E_OAUTH_REGISTRATION');
    expect(failure.error.message).toContain(`POST ${base}/as/register answered HTTP 200 (text/html)`);
    expect(shown(failure)).not.toContain('Registration is closed');
  });
});
