/**
 * The oauth plugin's default sign-in channel, with real sockets on 127.0.0.1,
 * real fetch and real child processes: the callback server (one request, the
 * state checked, everything echoed escaped, nothing left listening), the
 * browser opener (no shell, http(s) only, `BROWSER` honoured), the pasted
 * callback URL, and the channel racing the two.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isAlive } from '../internal/process/tree.js';
import { isPlinthError } from '../sdk/index.js';
import type { SignInChannel, SignInRequest } from 'plinth/sdk';
import { browserCommand, canOpenBrowser, openBrowser } from '../plugins/oauth/signin/browser.js';
import { startCallbackServer, type CallbackServer, type CallbackServerOptions } from '../plugins/oauth/signin/callback-server.js';
import { createLoopbackChannel, type LoopbackChannelOptions } from '../plugins/oauth/signin/loopback-channel.js';
import { createLauncher } from '../plugins/launcher/index.js';
import { escapeHtml } from '../plugins/oauth/signin/page.js';
import { pasteInput, readPastedUrl, type PasteInput } from '../plugins/oauth/signin/paste.js';

/** Every child these tests start goes through a launcher, as in plinth. */
const launcher = createLauncher();

const STATE = 'st4te-0f-this-sign-in';
const CODE = 'auth-c0de-never-shown';
/** Generous: only there so a broken test fails instead of hanging. */
const LONG = 60_000;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function callbackServer(options: Partial<CallbackServerOptions> = {}): Promise<CallbackServer> {
  const server = await startCallbackServer({ server: 'demo', state: STATE, timeoutMs: LONG, ...options });
  cleanups.push(() => server.close());
  return server;
}

async function channel(options: Partial<LoopbackChannelOptions> = {}, request: Partial<SignInRequest> = {}): Promise<SignInChannel> {
  const created = await createLoopbackChannel(
    { server: 'demo', state: STATE, signal: new AbortController().signal, ...request },
    { timeoutMs: LONG, openBrowser: false, progress: () => {}, env: {}, platform: 'linux', fileExists: () => false, open: async () => false, ...options },
  );
  cleanups.push(() => created.close());
  return created;
}

/** A terminal stand-in: what is written to it reads as typed lines. */
function terminal(): PassThrough & { isTTY: boolean } {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  cleanups.push(() => input.destroy());
  return input;
}

function callbackUrl(base: string, params: Record<string, string>): string {
  return `${base}?${new URLSearchParams(params)}`;
}

/** The code of a PlinthError a promise rejects with (fails the test when it resolves). */
async function rejectionCode(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isPlinthError(error), `expected a PlinthError, got ${String(error)}`).toBe(true);
  return (error as { code: string }).code;
}

/** Resolves true when nothing accepts a TCP connection at host:port. */
function refused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(5000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(true);
    });
  });
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('callback server', () => {
  it('listens on 127.0.0.1 only, at http://127.0.0.1:<port>/callback', async () => {
    const server = await callbackServer();
    expect(server.address).toMatchObject({ address: '127.0.0.1', family: 'IPv4', port: server.port });
    expect(server.port).toBeGreaterThan(0);
    expect(server.redirectUrl).toBe(`http://127.0.0.1:${server.port}/callback`);

    // Other addresses of this machine reach nothing: another loopback address (Linux routes all of
    // 127/8 to lo, yet the socket is bound to 127.0.0.1 alone) and every non-loopback interface.
    const others = Object.values(networkInterfaces())
      .flatMap((addresses) => addresses ?? [])
      .filter((address) => address.family === 'IPv4' && !address.internal)
      .map((address) => address.address);
    if (process.platform === 'linux') others.push('127.0.0.2');
    for (const host of others) expect(await refused(host, server.port), `reachable through ${host}`).toBe(true);
    expect(await refused('127.0.0.1', server.port)).toBe(false);
  });

  it('resolves with the callback URL and shows a success page without the code or the state', async () => {
    const server = await callbackServer();
    const waiting = server.wait();
    const response = await fetch(callbackUrl(server.redirectUrl, { code: CODE, state: STATE }));
    const page = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page).toContain('Signed in');
    expect(page).not.toContain(CODE);
    expect(page).not.toContain(STATE);

    const url = await waiting;
    expect(url.searchParams.get('code')).toBe(CODE);
    expect(url.searchParams.get('state')).toBe(STATE);
  });

  it.each([
    ['a wrong state', `code=${CODE}&state=forged-state`],
    ['no state', `code=${CODE}`],
    ['an empty state', `code=${CODE}&state=`],
    ['two states, one of them right', `code=${CODE}&state=forged-state&state=${STATE}`],
  ])('refuses a callback with %s as possibly forged', async (_, query) => {
    const server = await callbackServer();
    const waiting = server.wait();
    const response = await fetch(`${server.redirectUrl}?${query}`);
    const page = await response.text();

    expect(response.status).toBe(400);
    expect(page).toContain('refused');
    expect(page).toContain('forged');
    expect(page).not.toContain(CODE);
    expect(page).not.toContain('forged-state');
    expect(await rejectionCode(waiting)).toBe('PLN_E_OAUTH_STATE_MISMATCH');
  });

  it('shows an authorization error escaped, and still resolves with the URL for the caller to report', async () => {
    const server = await callbackServer();
    const waiting = server.wait();
    const response = await fetch(
      callbackUrl(server.redirectUrl, {
        error: 'access_denied',
        error_description: '<script>alert(1)</script>',
        error_uri: 'javascript:alert("x")',
        state: STATE,
      }),
    );
    const page = await response.text();

    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(page).toContain('access_denied');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script');
    expect(page).not.toContain('href=');
    expect(page).toContain('javascript:alert(&quot;x&quot;)');
    expect(page).not.toContain(STATE);

    const url = await waiting;
    expect(url.searchParams.get('error')).toBe('access_denied');
  });

  it('rejects a callback with the right state but neither a code nor an error', async () => {
    const server = await callbackServer();
    const waiting = server.wait();
    const response = await fetch(callbackUrl(server.redirectUrl, { state: STATE }));
    expect(response.status).toBe(400);
    expect(await rejectionCode(waiting)).toBe('PLN_E_OAUTH_CALLBACK_INVALID');
  });

  it('answers other paths and methods without settling, then takes the callback', async () => {
    const server = await callbackServer();
    const waiting = server.wait();
    let settled = false;
    void waiting.then(
      () => (settled = true),
      () => (settled = true),
    );

    const origin = `http://127.0.0.1:${server.port}`;
    expect((await fetch(`${origin}/favicon.ico`)).status).toBe(404);
    expect((await fetch(`${origin}/`)).status).toBe(404);
    expect((await fetch(`${origin}/callback/extra?code=x&state=${STATE}`)).status).toBe(404);
    const post = await fetch(server.redirectUrl, { method: 'POST', body: `code=x&state=${STATE}` });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);

    await fetch(callbackUrl(server.redirectUrl, { code: CODE, state: STATE }));
    expect((await waiting).searchParams.get('code')).toBe(CODE);
  });

  it('takes one callback: afterwards it stops listening and drops idle connections', async () => {
    const server = await callbackServer();
    const waiting = server.wait();
    // A connection opened before the callback, as a browser keeps one alive after the favicon.
    const idle = connect({ host: '127.0.0.1', port: server.port });
    await new Promise((resolve) => idle.once('connect', resolve));
    const idleClosed = new Promise((resolve) => idle.once('close', resolve));

    await fetch(callbackUrl(server.redirectUrl, { code: CODE, state: STATE }));
    await waiting;

    await idleClosed;
    await expect(fetch(callbackUrl(server.redirectUrl, { code: 'second', state: STATE }))).rejects.toThrow();
    expect(await refused('127.0.0.1', server.port)).toBe(true);
  });

  it('gives up after its time limit with PLN_E_OAUTH_CALLBACK_TIMEOUT and closes', async () => {
    const server = await callbackServer({ timeoutMs: 50 });
    const error: unknown = await server.wait().catch((caught: unknown) => caught);
    expect(isPlinthError(error) && error.code).toBe('PLN_E_OAUTH_CALLBACK_TIMEOUT');
    expect((error as Error).message).toContain('50 ms');
    expect((error as { hint?: string }).hint).toContain('callbackTimeoutMs');
    expect(await refused('127.0.0.1', server.port)).toBe(true);
  });

  it('stops when the signal aborts, rejecting with its reason', async () => {
    const controller = new AbortController();
    const server = await callbackServer({ signal: controller.signal });
    const waiting = server.wait();
    const reason = new Error('called off');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(await refused('127.0.0.1', server.port)).toBe(true);

    await expect(callbackServer({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('listens on the port asked for', async () => {
    const port = await freePort();
    const server = await callbackServer({ port });
    expect(server.port).toBe(port);
    expect(server.redirectUrl).toBe(`http://127.0.0.1:${port}/callback`);
  });

  it('names a port in use with PLN_E_OAUTH_CALLBACK_PORT', async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => holder.close(resolve)));
    const { port } = holder.address() as { port: number };

    const error: unknown = await callbackServer({ port }).catch((caught: unknown) => caught);
    expect(isPlinthError(error) && error.code).toBe('PLN_E_OAUTH_CALLBACK_PORT');
    expect((error as Error).message).toContain(String(port));
    expect((error as { hint?: string }).hint).toContain('callbackPort');
  });
});

describe('escapeHtml', () => {
  it('escapes the five characters that matter in text and attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

describe('pasted callback URL', () => {
  it('is read only from a terminal', () => {
    expect(pasteInput(Object.assign(new PassThrough(), { isTTY: false }))).toBeUndefined();
    expect(pasteInput(new PassThrough())).toBeUndefined();
    const tty = terminal();
    expect(pasteInput(tty)).toBe(tty);
  });

  it('skips empty lines, hints once per line that is no URL, resolves with the first URL, and lets go of the input', async () => {
    const input = terminal();
    const progress: string[] = [];
    const reading = readPastedUrl({ input, progress: (line) => progress.push(line) });
    input.write('\n   \nnot a url\n');
    input.write(`  http://127.0.0.1:5000/callback?code=${CODE}&state=${STATE}  \n`);

    const url = await reading;
    expect(url?.searchParams.get('code')).toBe(CODE);
    expect(progress).toHaveLength(1);
    expect(progress[0]).toContain('not a URL');
    expect(progress.join('\n')).not.toContain(CODE);
    expect(input.isPaused()).toBe(true);
    expect(input.listenerCount('data')).toBe(0);
    expect(input.listenerCount('end')).toBe(0);
  });

  it('keeps reading past URLs the check refuses', async () => {
    const input = terminal();
    const progress: string[] = [];
    const reading = readPastedUrl({ input, progress: (line) => progress.push(line), check: (url) => (url.searchParams.has('code') ? undefined : 'no code in it') });
    input.write('https://auth.example.com/authorize?client_id=x\nhttp://127.0.0.1:1/callback?code=c\n');
    expect((await reading)?.searchParams.get('code')).toBe('c');
    expect(progress).toEqual(['no code in it']);
  });

  it('resolves undefined when the input ends, and rejects with the reason when aborted', async () => {
    const ended = terminal();
    const reading = readPastedUrl({ input: ended as PasteInput, progress: () => {} });
    ended.end('junk\n');
    expect(await reading).toBeUndefined();

    const input = terminal();
    const controller = new AbortController();
    const aborted = readPastedUrl({ input, progress: () => {}, signal: controller.signal });
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(input.listenerCount('data')).toBe(0);
  });
});

describe('loopback channel', () => {
  const authorizationUrl = new URL('https://auth.example.com/authorize?response_type=code&client_id=plinth');

  it('always prints the URL, and says why no browser opened', async () => {
    const lines: string[] = [];
    const open = vi.fn(async () => true);
    const ssh = await channel({ openBrowser: true, open, env: { SSH_CONNECTION: '10.0.0.1 5000 10.0.0.2 22', DISPLAY: ':0' }, progress: (line) => lines.push(line) });
    await ssh.open(authorizationUrl);
    expect(lines[0]).toBe('Open this URL to sign in to demo:');
    expect(lines[1]).toBe(authorizationUrl.href);
    expect(lines.join('\n')).toContain('no browser: this is an SSH session');
    expect(open).not.toHaveBeenCalled();

    lines.length = 0;
    const off = await channel({ openBrowser: false, open, env: { DISPLAY: ':0' }, progress: (line) => lines.push(line) });
    await off.open(authorizationUrl);
    expect(lines.slice(0, 2)).toEqual(['Open this URL to sign in to demo:', authorizationUrl.href]);
    expect(lines.join('\n')).toContain('openBrowser setting is off');
    expect(open).not.toHaveBeenCalled();
  });

  it('opens the browser where it can, and prints the URL too', async () => {
    const lines: string[] = [];
    const open = vi.fn(async () => false);
    const desktop = await channel({ openBrowser: true, open, env: { DISPLAY: ':0' }, progress: (line) => lines.push(line) });
    await desktop.open(authorizationUrl);
    expect(open).toHaveBeenCalledWith(authorizationUrl.href);
    expect(lines).toContain(authorizationUrl.href);
    expect(lines.join('\n')).toContain('Could not start a browser');
  });

  it('never hands a non-http(s) authorization URL to the browser', async () => {
    const lines: string[] = [];
    const open = vi.fn(async () => true);
    const desktop = await channel({ openBrowser: true, open, env: { DISPLAY: ':0' }, progress: (line) => lines.push(line) });
    await desktop.open(new URL('file:///etc/passwd'));
    expect(open).not.toHaveBeenCalled();
    expect(lines.join('\n')).toContain('only http: and https:');
  });

  it('offers pasting only on a terminal', async () => {
    const withTty: string[] = [];
    await (await channel({ input: terminal(), progress: (line) => withTty.push(line) })).open(authorizationUrl);
    expect(withTty.join('\n')).toContain('paste it here');

    const without: string[] = [];
    await (await channel({ input: Object.assign(new PassThrough(), { isTTY: false }), progress: (line) => without.push(line) })).open(authorizationUrl);
    expect(without.join('\n')).not.toContain('paste');
  });

  it('takes a pasted URL when it comes first, and then stops listening', async () => {
    const input = terminal();
    const signIn = await channel({ input });
    const waiting = signIn.callback();
    input.write(`${callbackUrl(signIn.redirectUrl, { code: CODE, state: STATE })}\n`);
    const url = await waiting;
    expect(url.searchParams.get('code')).toBe(CODE);
    expect(await refused('127.0.0.1', Number(new URL(signIn.redirectUrl).port))).toBe(true);
  });

  it('takes the browser callback when it comes first, and lets go of the terminal', async () => {
    const input = terminal();
    const signIn = await channel({ input });
    const waiting = signIn.callback();
    await fetch(callbackUrl(signIn.redirectUrl, { code: CODE, state: STATE }));
    expect((await waiting).searchParams.get('code')).toBe(CODE);
    expect(input.listenerCount('data')).toBe(0);
    expect(input.isPaused()).toBe(true);
  });

  it('checks the state of a pasted URL like the server does', async () => {
    const input = terminal();
    const lines: string[] = [];
    const signIn = await channel({ input, progress: (line) => lines.push(line) });
    const waiting = signIn.callback();
    // The authorization URL pasted by mistake (it carries the same state): a hint, and the channel keeps reading.
    input.write(`${authorizationUrl.href}&state=${STATE}\n`);
    input.write(`${callbackUrl(signIn.redirectUrl, { code: CODE, state: 'old-state' })}\n`);
    expect(await rejectionCode(waiting)).toBe('PLN_E_OAUTH_STATE_MISMATCH');
    expect(lines.some((line) => line.includes('carries no sign-in result'))).toBe(true);
    expect(lines.join('\n')).not.toContain(CODE);
  });

  it('keeps waiting for the browser when the terminal input ends', async () => {
    const input = terminal();
    const signIn = await channel({ input });
    const waiting = signIn.callback();
    input.end();
    await new Promise((resolve) => setImmediate(resolve));
    await fetch(callbackUrl(signIn.redirectUrl, { code: CODE, state: STATE }));
    expect((await waiting).searchParams.get('code')).toBe(CODE);
  });

  it('rejects with the signal\'s reason when the sign-in is called off', async () => {
    const controller = new AbortController();
    const signIn = await channel({ input: terminal() }, { signal: controller.signal });
    const waiting = signIn.callback();
    const reason = new Error('Ctrl-C');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it('times out with PLN_E_OAUTH_CALLBACK_TIMEOUT while both wait', async () => {
    const signIn = await channel({ input: terminal(), timeoutMs: 50 });
    expect(await rejectionCode(signIn.callback())).toBe('PLN_E_OAUTH_CALLBACK_TIMEOUT');
  });

  it('frees the port on close, and close can be called again', async () => {
    const port = await freePort();
    const signIn = await channel({ input: terminal() }, { port });
    expect(signIn.redirectUrl).toBe(`http://127.0.0.1:${port}/callback`);
    await signIn.close();
    await signIn.close();
    expect(await refused('127.0.0.1', port)).toBe(true);
  });
});

describe('browser', () => {
  const none = (): boolean => false;

  it.each([
    ['an SSH session', { SSH_CONNECTION: '10.0.0.1 5000 10.0.0.2 22', DISPLAY: ':0' }, 'linux', 'SSH session'],
    ['an SSH terminal on a Mac', { SSH_TTY: '/dev/ttys001' }, 'darwin', 'SSH session'],
    ['an SSH client variable', { SSH_CLIENT: '10.0.0.1 5000 22' }, 'win32', 'SSH session'],
    ['CI', { CI: 'true', DISPLAY: ':0' }, 'linux', 'CI'],
    ['CI=1 on a Mac', { CI: '1' }, 'darwin', 'CI'],
    ['Linux without a display', {}, 'linux', 'display'],
    ['FreeBSD without a display', {}, 'freebsd', 'display'],
    ['a container', { container: 'podman', DISPLAY: ':0' }, 'linux', 'container'],
    ['BROWSER=none', { BROWSER: 'none', DISPLAY: ':0' }, 'linux', 'BROWSER'],
    ['an empty BROWSER', { BROWSER: ' ' }, 'darwin', 'BROWSER'],
  ] as const)('cannot be opened in %s', (_, env, platform, reason) => {
    const verdict = canOpenBrowser(env, platform, none);
    expect(verdict.canOpen).toBe(false);
    expect(!verdict.canOpen && verdict.reason).toContain(reason);
    expect(!verdict.canOpen && verdict.reason).toMatch(/^no browser: /);
  });

  it('sees a Docker container by its /.dockerenv', () => {
    expect(canOpenBrowser({ DISPLAY: ':0' }, 'linux', (path) => path === '/.dockerenv')).toEqual({ canOpen: false, reason: 'no browser: this is a container' });
  });

  it.each([
    ['an X11 desktop', { DISPLAY: ':0' }, 'linux'],
    ['a Wayland desktop', { WAYLAND_DISPLAY: 'wayland-0' }, 'linux'],
    ['a Mac', {}, 'darwin'],
    ['Windows', {}, 'win32'],
    ['CI=false', { CI: 'false', DISPLAY: ':0' }, 'linux'],
    ['SSH with a BROWSER helper (remote editors set one)', { SSH_CONNECTION: 'x', BROWSER: '/opt/editor/helper.sh' }, 'linux'],
  ] as const)('can be opened on %s', (_, env, platform) => {
    expect(canOpenBrowser(env, platform, none)).toEqual({ canOpen: true });
  });

  it('uses each platform\'s opener with the URL as one argument, never a shell', () => {
    const url = 'https://auth.example.com/a?x=1&y=2';
    expect(browserCommand(url, {}, 'darwin')).toEqual({ file: 'open', args: [url] });
    expect(browserCommand(url, {}, 'win32')).toEqual({ file: 'rundll32', args: ['url.dll,FileProtocolHandler', url] });
    expect(browserCommand(url, {}, 'linux')).toEqual({ file: 'xdg-open', args: [url] });
    expect(browserCommand(url, { BROWSER: 'firefox  --new-window' }, 'linux')).toEqual({ file: 'firefox', args: ['--new-window', url] });
    expect(browserCommand(url, { BROWSER: 'none' }, 'linux')).toBeUndefined();
  });

  describe('openBrowser', () => {
    let dir = '';
    const pids: number[] = [];

    afterEach(async () => {
      await vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 10_000 });
      pids.length = 0;
      if (dir) await rm(dir, { recursive: true, force: true });
      dir = '';
    });

    /** A `BROWSER` program that records its pid and arguments (written whole, by rename), then exits. */
    async function recorder(): Promise<{ browser: string; record: string }> {
      dir = await mkdtemp(join(tmpdir(), 'plinth-browser-'));
      const script = join(dir, 'record-args.mjs');
      const record = join(dir, 'args.json');
      await writeFile(
        script,
        [
          "import { renameSync, writeFileSync } from 'node:fs';",
          'const [out, ...args] = process.argv.slice(2);',
          "writeFileSync(out + '.tmp', JSON.stringify({ pid: process.pid, args }));",
          "renameSync(out + '.tmp', out);",
          '',
        ].join('\n'),
      );
      return { browser: `${process.execPath} ${script} ${record}`, record };
    }

    async function recorded(record: string): Promise<{ pid: number; args: string[] }> {
      await vi.waitFor(() => expect(existsSync(record)).toBe(true), { timeout: 10_000, interval: 20 });
      const result = JSON.parse(readFileSync(record, 'utf8')) as { pid: number; args: string[] };
      pids.push(result.pid);
      return result;
    }

    // BROWSER is split on whitespace, so the recorder's own paths must have none.
    const spaced = /\s/.test(process.execPath) || /\s/.test(tmpdir());

    it.skipIf(spaced)('starts the BROWSER program with the URL intact as one argument, whatever shell syntax it holds', async () => {
      const { browser, record } = await recorder();
      const canary = join(dir, 'pwned');
      const url = `https://auth.example.com/authorize?a=1&b=2;touch ${canary}&c=$(touch ${canary})&d=\`touch ${canary}\`|x`;
      const expected = new URL(url).href;
      expect(expected).toContain('&b=2;touch');
      expect(expected).toContain('$(touch');

      expect(await openBrowser(url, { env: { BROWSER: browser }, platform: 'linux', launcher })).toBe(true);
      const { args } = await recorded(record);
      expect(args).toEqual([expected]);
      expect(existsSync(canary)).toBe(false);
    });

    it.skipIf(spaced)('puts the URL where BROWSER says %s, without treating $& in it as a pattern', async () => {
      const { browser, record } = await recorder();
      const url = 'https://auth.example.com/authorize?x=$&y=$1';
      expect(await openBrowser(url, { env: { BROWSER: `${browser} --url=%s --new` }, platform: 'linux', launcher })).toBe(true);
      const { args } = await recorded(record);
      expect(args).toEqual([`--url=${new URL(url).href}`, '--new']);
    });

    it('refuses anything but http: and https: URLs, starting nothing', async () => {
      const { browser, record } = await recorder();
      for (const url of ['file:///etc/passwd', 'javascript:alert(1)', '--help', '-a /bin/sh', 'ssh://host', '']) {
        expect(await openBrowser(url, { env: { BROWSER: browser }, platform: 'linux', launcher }), url).toBe(false);
      }
      expect(existsSync(record)).toBe(false);
    });

    it('resolves false, without throwing, when the program is missing or opening is disabled', async () => {
      dir = await mkdtemp(join(tmpdir(), 'plinth-browser-'));
      const missing = join(dir, 'no-such-browser');
      expect(await openBrowser('https://example.com/', { env: { BROWSER: missing }, platform: 'linux', launcher })).toBe(false);
      expect(await openBrowser('https://example.com/', { env: { BROWSER: 'none' }, platform: 'linux', launcher })).toBe(false);
    });
  });
});
