/**
 * The HTTP side of `plinth registry serve`: what a request path names (only
 * what a registry folder can hold), conditional requests, and JSON answers.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pluginName } from '../sdk/manifest.js';

/** One path segment of a tarball's file name. */
const FILE_SEGMENT = /^[A-Za-z0-9@~_+-][A-Za-z0-9@~._+-]*$/;

/**
 * What a packument path names: `name`, `@scope%2fname` (or `%2F`, or a plain
 * `/`), optionally followed by `/<version or dist-tag>`. Undefined for what no
 * package can be named.
 */
export function decodePackagePath(rawPath: string): { name: string; selector?: string } | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  const parts = decoded.split('/');
  const nameParts = parts[0]?.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, nameParts).join('/');
  const rest = parts.slice(nameParts);
  if (name === '-' || !pluginName.safeParse(name).success || rest.length > 1) return undefined;
  const selector = rest[0];
  if (selector === undefined) return { name };
  return SELECTOR.test(selector) ? { name, selector } : undefined;
}

/** A version or a dist-tag, as it may follow a name. */
const SELECTOR = /^[A-Za-z0-9][A-Za-z0-9.+_-]*$/;

function decodeSegment(segment: string): string | undefined {
  try {
    const decoded = decodeURIComponent(segment);
    return decoded === '.' || decoded === '..' || decoded.includes('/') || decoded.includes('\\') ? undefined : decoded;
  } catch {
    return undefined;
  }
}

export function clampInt(value: string | null, fallback: number, min: number, max: number): number {
  const n = value === null ? NaN : Number.parseInt(value, 10);
  return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : fallback;
}

export function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

export function notModified(req: IncomingMessage, etag: string, modified: Date): boolean {
  const match = req.headers['if-none-match'];
  if (match !== undefined) return match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*');
  const since = req.headers['if-modified-since'];
  if (since !== undefined) {
    const time = Date.parse(since);
    return Number.isFinite(time) && Math.floor(modified.getTime() / 1000) <= Math.floor(time / 1000);
  }
  return false;
}

export function sendDocument(req: IncomingMessage, res: ServerResponse, body: string, etag: string, modified: Date, type: string): void {
  res.setHeader('ETag', etag);
  res.setHeader('Last-Modified', modified.toUTCString());
  res.setHeader('Cache-Control', 'no-cache');
  if (notModified(req, etag, modified)) {
    res.statusCode = 304;
    return void res.end();
  }
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

export function notFound(res: ServerResponse, error: string): void {
  sendJson(res, 404, { error });
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A tarball's path below `-/` (`@scope/name-1.0.0.tgz`), decoded; undefined for anything a registry folder cannot hold. */
export function decodeTarballPath(rawPath: string): string | undefined {
  const segments = rawPath.split('/').map(decodeSegment);
  if (!rawPath.endsWith('.tgz') || segments.some((segment) => segment === undefined || !FILE_SEGMENT.test(segment))) return undefined;
  return segments.join('/');
}
