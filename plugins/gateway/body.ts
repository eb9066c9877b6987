/**
 * The gateway reads a POST body itself, before the SDK's transport sees it, so
 * that a body over `maxBodyBytes` is refused without breaking the connection.
 *
 * Why not simply stop reading and close: a server that closes a socket with the
 * client's upload still arriving makes the kernel send a reset, and the client
 * gets EPIPE or ECONNRESET instead of the 413 (seen on CI with a 10 MB body).
 * So the rest of a refused body is read and dropped (a "lingering close", as
 * web servers call it), up to a bound in bytes and in time; past that bound the
 * connection closes anyway, since a client sending that much is not owed more.
 */
import type { IncomingMessage } from 'node:http';

/** How much of a refused body is still read and dropped, past the limit. */
const DRAIN_BYTES = 64 * 1024 * 1024;
/** How long a refused body may take to arrive before the connection closes. */
const DRAIN_MS = 10_000;

export type Body =
  | { readonly kind: 'read'; readonly raw: Buffer; readonly json?: unknown }
  /**
   * `bytes`: the declared length, or what arrived (`atLeast` when more was coming). `drained`: the
   * whole body arrived and was dropped, so the connection may carry the client's next request.
   */
  | { readonly kind: 'too-large'; readonly bytes: number; readonly atLeast: boolean; readonly drained: boolean }
  | { readonly kind: 'gone' };

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Body> {
  const header = req.headers['content-length'];
  const declared = header === undefined ? undefined : Number(header);
  if (declared !== undefined && declared > maxBytes + DRAIN_BYTES) {
    return Promise.resolve({ kind: 'too-large', bytes: declared, atLeast: false, drained: false });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (body: Body) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      resolve(body);
    };
    const tooLarge = () => bytes > maxBytes || (declared !== undefined && declared > maxBytes);
    const refused = (drained: boolean): Body => ({ kind: 'too-large', bytes: declared ?? bytes, atLeast: declared === undefined && !drained, drained });
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (!tooLarge()) return void chunks.push(chunk);
      chunks.length = 0;
      timer ??= setTimeout(() => finish(refused(false)), DRAIN_MS);
      if (bytes > maxBytes + DRAIN_BYTES) finish(refused(false));
    };
    const onEnd = () => {
      if (tooLarge()) return finish(refused(true));
      const raw = Buffer.concat(chunks, bytes);
      finish({ kind: 'read', raw, json: parse(raw) });
    };
    const onGone = () => {
      if (!req.readableEnded) finish({ kind: 'gone' });
    };
    if (tooLarge()) timer = setTimeout(() => finish(refused(false)), DRAIN_MS);
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}

/** The parsed body, or undefined: the SDK's transport then answers the parse error (or the wrong Content-Type) itself. */
function parse(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}
