/**
 * Getting registry documents and tarballs over HTTP (or from a static
 * registry folder): the token goes only to its own registry's origin, a
 * redirect to another origin is refused, every request has a time limit and
 * every body a size limit.
 */
import { createWriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { type IncomingMessage, get as httpGet } from 'node:http';
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlinthError, describeError } from 'plinth/sdk';
import { registryRoot } from 'plinth/internal';
import type { Registry } from './registries.js';

/** Limits and hooks of one request. */
export interface RequestOptions {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  readonly accept?: string;
  /** Sent as `If-None-Match`: a 304 then has no body. */
  readonly etag?: string;
  /** Which step of an install this request is, for errors (`resolve`, `download`). */
  readonly step: string;
  /**
   * Follow a redirect to another http(s) origin: only for a download pinned by its digest (an archive
   * URL with its SHA-256: GitHub's release assets redirect so); a token goes to its own origin only.
   */
  readonly anyOrigin?: boolean;
}

export interface Fetched {
  readonly status: 200 | 304;
  readonly body: Buffer;
  readonly etag?: string;
}

const MAX_REDIRECTS = 5;

/** GETs `url` from `registry` into memory (documents). A 404 is `PLN_E_MARKET_NOT_FOUND`. */
export async function getDocument(registry: Registry, url: URL, options: RequestOptions): Promise<Fetched> {
  if (url.protocol === 'file:') return { status: 200, body: await readLocal(registry, url, options) };
  const deadline = new Deadline(options.timeoutMs, options.signal);
  try {
    const response = await request(registry, url, options, deadline.signal);
    if (response.statusCode === 304) {
      response.resume();
      return { status: 304, body: Buffer.alloc(0), ...etagOf(response) };
    }
    const chunks: Buffer[] = [];
    await readBody(registry, url, response, options, deadline.signal, (chunk) => void chunks.push(chunk));
    return { status: 200, body: Buffer.concat(chunks), ...etagOf(response) };
  } finally {
    deadline.clear();
  }
}

/**
 * One request's time limit, headers and body together, on a timer of its own. Not
 * `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 the timeout signal inside it can
 * be collected and never fire (a 12 s limit let a stalled registry hold an install for 61 s).
 */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onOuterAbort: () => void;

  constructor(timeoutMs: number, private readonly outer?: AbortSignal) {
    this.timer = setTimeout(() => this.controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    this.onOuterAbort = () => this.controller.abort(outer?.reason);
    if (outer?.aborted) this.onOuterAbort();
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }
}

/** Streams `url` into `file` (created, never overwritten), calling `progress` as bytes arrive. Returns the byte count. */
export async function download(registry: Registry, url: URL, file: string, options: RequestOptions & { progress?: (received: number, total: number | undefined) => void; observe?: (chunk: Buffer) => void }): Promise<number> {
  const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
  const closed = new Promise<void>((resolve, reject) => {
    out.once('close', resolve);
    out.once('error', reject);
  });
  let received = 0;
  try {
    if (url.protocol === 'file:') {
      const body = await readLocal(registry, url, options);
      options.observe?.(body);
      out.write(body);
      received = body.length;
      options.progress?.(received, received);
    } else {
      const deadline = new Deadline(options.timeoutMs, options.signal);
      try {
        const response = await request(registry, url, options, deadline.signal);
        const total = Number(response.headers['content-length'] ?? Number.NaN);
        await readBody(registry, url, response, options, deadline.signal, (chunk) => {
          received += chunk.length;
          options.observe?.(chunk);
          out.write(chunk);
          options.progress?.(received, Number.isFinite(total) ? total : undefined);
        });
      } finally {
        deadline.clear();
      }
    }
  } finally {
    out.end();
    await closed;
  }
  return received;
}

/**
 * One GET, following redirects on the same origin only; the token only to the registry's origin.
 * node:http rather than fetch: a one-shot command would spend more time loading fetch (undici)
 * than downloading a 5 MB tarball over it.
 */
async function request(registry: Registry, start: URL, options: RequestOptions, signal: AbortSignal): Promise<IncomingMessage> {
  let url = start;
  for (let hop = 0; ; hop++) {
    const headers: Record<string, string> = { accept: options.accept ?? 'application/json', 'user-agent': 'plinth-marketplace' };
    if (registry.token !== undefined && url.origin === registry.url.origin) headers.authorization = `Bearer ${registry.token}`;
    if (options.etag !== undefined) headers['if-none-match'] = options.etag;
    let response: IncomingMessage;
    try {
      response = await get(url, headers, signal);
    } catch (error) {
      throw unreachable(registry, url, error, options, signal);
    }
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && status !== 304) {
      response.resume();
      const location = response.headers.location;
      const next = location === undefined ? undefined : new URL(location, url);
      const elsewhere = options.anyOrigin === true && next !== undefined && (next.protocol === 'https:' || next.protocol === 'http:');
      if (next === undefined || (next.origin !== url.origin && !elsewhere)) {
        throw new PlinthError('PLN_E_MARKET_REDIRECT', `registry "${registry.name}" redirected ${shown(url)} to ${next ? shown(next) : 'nowhere'}, another origin: refused`, {
          hint: 'a registry must serve its documents and tarballs itself or name the other host in the document; ask its operator, or use another registry',
          details: { step: options.step, registry: registry.name, url: shown(url), ...(next && { location: shown(next) }) },
        });
      }
      if (hop === MAX_REDIRECTS) throw httpError(registry, url, status, options, 'too many redirects');
      url = next;
      continue;
    }
    if (status === 304 || (status >= 200 && status < 300)) return response;
    response.resume();
    if (status === 404) {
      throw new PlinthError('PLN_E_MARKET_NOT_FOUND', `registry "${registry.name}" has nothing at ${shown(url)} (404)`, {
        hint: 'check the name (`plinth ext search <text>` lists what the registries have) or the registry URL',
        details: { step: options.step, registry: registry.name, url: shown(url), status: 404 },
      });
    }
    if (status === 401 || status === 403) throw refused(registry, url, status, options, headers.authorization !== undefined);
    throw httpError(registry, url, status, options);
  }
}

/** A GET over http or https; the response once its head is in (its body follows). */
async function get(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
  const [fetchWith, protocol] = url.protocol === 'https:' ? [(await import('node:https')).get, 'https'] : [httpGet, 'http'];
  if (url.protocol !== `${protocol}:`) throw Object.assign(new Error(`${url.protocol} is not a registry protocol (http, https or file)`), { code: 'ERR_INVALID_PROTOCOL' });
  return new Promise((resolve, reject) => {
    const req = fetchWith(url, { headers, signal }, resolve);
    req.once('error', reject);
  });
}

async function readBody(registry: Registry, url: URL, response: IncomingMessage, options: RequestOptions, signal: AbortSignal, onChunk: (chunk: Buffer) => void): Promise<void> {
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    response.destroy();
    throw tooLarge(registry, url, options, declared);
  }
  let received = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > options.maxBytes) throw tooLarge(registry, url, options, received);
      onChunk(chunk);
    }
  } catch (error) {
    if (error instanceof PlinthError) throw error;
    throw unreachable(registry, url, error, options, signal);
  }
  // A body cut short (the server went away) ends without an error: its length says so.
  if (Number.isFinite(declared) && received !== declared) throw unreachable(registry, url, Object.assign(new Error(`the body ended after ${received} of ${declared} bytes`), { code: 'ECONNRESET' }), options, signal);
}

/** A static registry folder (internal/registry/packument.ts `packumentFile`, `tarballFile`, `REGISTRY_SEARCH_INDEX`). */
async function readLocal(registry: Registry, url: URL, options: RequestOptions): Promise<Buffer> {
  // `@scope%2fname` is the file `name` in the folder `@scope` (sdk's packumentFile).
  const path = fileURLToPath(new URL(url.href.replace(/%2f/gi, '/')));
  const candidates = [path, `${path}.json`];
  for (const file of candidates) {
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (info.size > options.maxBytes) throw tooLarge(registry, url, options, info.size);
    const handle = await open(file, 'r');
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }
  // A folder that is not there at all is a wrong "url" (a typo), not a registry without this document.
  const root = resolvePath(fileURLToPath(registryRoot(registry.url.href)));
  if (!(await stat(root).catch(() => undefined))?.isDirectory()) {
    throw new PlinthError('PLN_E_MARKET_REGISTRY_UNREACHABLE', `${options.step}: registry "${registry.name}" unreachable: the folder ${root} does not exist`, {
      hint: `correct its "url" in "registries" (a registry folder is made by \`plinth registry publish <plugin> --to <folder>\`)`,
      details: { step: options.step, registry: registry.name, url: url.href, reason: 'ENOENT' },
    });
  }
  throw new PlinthError('PLN_E_MARKET_NOT_FOUND', `registry "${registry.name}" has nothing at ${path}`, {
    hint: 'check the name (`plinth ext search <text>`) or the registry folder',
    details: { step: options.step, registry: registry.name, url: url.href },
  });
}

function etagOf(response: IncomingMessage): { etag?: string } {
  const etag = response.headers.etag;
  return etag === undefined ? {} : { etag };
}

/** The URL without credentials, query or fragment: safe in messages. */
export function shown(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** The network error's own code (ECONNREFUSED, ETIMEDOUT), or a word for an abort. */
export function networkCode(error: unknown, signal?: AbortSignal): string {
  if (signal?.aborted) return (signal.reason as { name?: string } | undefined)?.name === 'TimeoutError' ? 'timed out' : 'interrupted';
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return describeError(error);
}

function unreachable(registry: Registry, url: URL, error: unknown, options: RequestOptions, signal?: AbortSignal): PlinthError {
  const code = networkCode(error, signal);
  const interrupted = code === 'interrupted';
  const what = interrupted ? 'request interrupted' : code === 'timed out' ? `timed out after ${seconds(options.timeoutMs)}` : `unreachable (${code})`;
  return new PlinthError(interrupted ? 'PLN_E_MARKET_INTERRUPTED' : 'PLN_E_MARKET_REGISTRY_UNREACHABLE', `${options.step}: registry "${registry.name}" ${what} at ${shown(url)}`, {
    cause: error,
    hint: interrupted ? 'nothing was changed; run the command again' : code === 'timed out' ? `it did not finish within ${seconds(options.timeoutMs)}; check the network, or raise plugins.marketplace.settings.downloadTimeoutMs` : 'check that the registry is up and its URL in "registries" is right',
    details: { step: options.step, registry: registry.name, url: shown(url), reason: code },
  });
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function tooLarge(registry: Registry, url: URL, options: RequestOptions, bytes: number): PlinthError {
  return new PlinthError('PLN_E_MARKET_DOWNLOAD', `${options.step}: ${shown(url)} from registry "${registry.name}" is larger than ${options.maxBytes} bytes (${bytes}): refused`, {
    hint: 'raise plugins.marketplace.settings.maxDownloadBytes if you trust this plugin to be that large',
    details: { step: options.step, registry: registry.name, url: shown(url), bytes, maxBytes: options.maxBytes },
  });
}

/**
 * A 401 or 403: the token plinth sent was refused, or (none sent) the registry wants one. A token
 * is sent only to the registry's own origin, so a tarball elsewhere that asks for one is said to be so.
 */
function refused(registry: Registry, url: URL, status: number, options: RequestOptions, sentToken: boolean): PlinthError {
  const index = `registry "${registry.name}"`;
  let why: string;
  let hint: string;
  if (sentToken) {
    why = status === 401 ? 'it refused the token sent' : 'the token sent is not allowed to read this';
    hint = `check the token of ${index} (the environment variable its "token" names) and what it may read`;
  } else if (registry.token !== undefined) {
    why = `it asks for credentials, and plinth sends ${index}'s token only to ${registry.url.origin}`;
    hint = 'the registry points at a tarball on another origin that requires a login: ask its operator to serve its tarballs itself';
  } else {
    why = status === 401 ? 'it requires a login, and no token was sent (none is set for it)' : 'it refuses requests without credentials, and no token was sent (none is set for it)';
    hint = registry.name === 'command-line'
      ? 'add the registry to "registries" in your settings.json with "token": "${env:NAME}" and use it by its name'
      : `set "token": "\${env:NAME}" on ${index} in your settings.json and export NAME with the registry's token`;
  }
  return new PlinthError('PLN_E_MARKET_REGISTRY_RESPONSE', `${options.step}: ${index} answered ${status} for ${shown(url)}: ${why}`, {
    hint,
    details: { step: options.step, registry: registry.name, url: shown(url), status, tokenSent: sentToken },
  });
}

function httpError(registry: Registry, url: URL, status: number, options: RequestOptions, why?: string): PlinthError {
  return new PlinthError('PLN_E_MARKET_REGISTRY_RESPONSE', `${options.step}: registry "${registry.name}" answered ${status} for ${shown(url)}${why ? `: ${why}` : ''}`, {
    hint: 'check the registry URL and credentials; try again later if the registry is having trouble',
    details: { step: options.step, registry: registry.name, url: shown(url), status },
  });
}
