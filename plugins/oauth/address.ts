/**
 * Where OAuth requests may go. Every address a request of the oauth plugin
 * goes to (discovery, registration, token, refresh, revocation) is named by
 * the MCP server's metadata, so a hostile server could aim them at the host's
 * own services or a cloud metadata endpoint. Before a request is sent, its
 * host is resolved and:
 *
 * - a link-local (169.254.0.0/16, fe80::/10) or unspecified (0.0.0.0/8, ::)
 *   address is refused always, as the sandbox's network proxy does;
 * - a loopback (127.0.0.0/8, ::1) or private (10/8, 172.16/12, 192.168/16,
 *   100.64/10, fc00::/7) address is refused when the MCP server itself is
 *   not on a loopback or private address: a public server must not steer
 *   plinth to this machine or its network, while a local server (one on
 *   127.0.0.1 for development, or in the office network) may use a local
 *   authorization server;
 * - the MCP server's own origin (its configured `url`'s host and port) is
 *   always allowed: the user chose it.
 *
 * The refusal throws `PLN_E_OAUTH_ADDRESS_REFUSED` before any connection.
 * Not covered: the name is resolved again by the request itself, so a DNS
 * answer that changes between the two (rebinding) is not caught.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { FetchLike } from '@modelcontextprotocol/client';
import { oauthError } from './errors.js';

export type AddressClass = 'unspecified' | 'link-local' | 'loopback' | 'private' | 'public';

/** The class of an IP address (v4, v6, or v4-mapped v6); a string that is no IP address is `public`. */
export function addressClass(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase().replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped !== null) return addressClass(mapped[1]!);
  const kind = isIP(bare);
  if (kind === 4) {
    const [a, b] = bare.split('.').map(Number) as [number, number];
    if (a === 0) return 'unspecified';
    if (a === 169 && b === 254) return 'link-local';
    if (a === 127) return 'loopback';
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)) return 'private';
    return 'public';
  }
  if (kind === 6) {
    const words = expand(bare);
    if (words.every((word) => word === 0)) return 'unspecified';
    if (words.slice(0, 7).every((word) => word === 0) && words[7] === 1) return 'loopback';
    if ((words[0]! & 0xffc0) === 0xfe80) return 'link-local';
    if ((words[0]! & 0xfe00) === 0xfc00) return 'private';
    return 'public';
  }
  return 'public';
}

/** The eight 16-bit words of an IPv6 address (a trailing dotted quad included). */
function expand(address: string): number[] {
  let text = address;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad !== null) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((word) => Number.parseInt(word || '0', 16));
}

/** Whether a host (its resolved addresses) is on this machine or its network, not the public internet. */
function isLocal(classes: readonly AddressClass[]): boolean {
  return classes.length > 0 && classes.every((kind) => kind !== 'public');
}

/**
 * Why a request to `target` is refused for an MCP server whose own addresses
 * are of `serverClasses`, or undefined when it may go. `targetClasses` are the
 * classes of the addresses `target`'s host resolves to.
 */
export function addressRefusal(targetClasses: readonly AddressClass[], serverClasses: readonly AddressClass[]): string | undefined {
  const never = targetClasses.find((kind) => kind === 'link-local' || kind === 'unspecified');
  if (never !== undefined) return `a ${never} address, which OAuth requests never go to`;
  const local = targetClasses.find((kind) => kind === 'loopback' || kind === 'private');
  if (local !== undefined && !isLocal(serverClasses)) return `a ${local} address, named by an MCP server that is not itself on this machine or its network`;
  return undefined;
}

/** The classes of the addresses `host` resolves to (one for an IP literal); none when it cannot be resolved (the request then fails on its own). */
async function classesOf(host: string): Promise<AddressClass[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0) return [addressClass(bare)];
  try {
    return (await lookup(bare, { all: true })).map((entry) => addressClass(entry.address));
  } catch {
    return [];
  }
}

/** `fetch` that refuses, before connecting, what {@link addressRefusal} refuses for the MCP server at `serverUrl`. */
export function guardedFetch(fetch: FetchLike, server: string, serverUrl: string): FetchLike {
  const own = URL.parse(serverUrl);
  let serverClasses: Promise<AddressClass[]> | undefined;
  return async (input, init) => {
    const url = URL.parse(input instanceof Request ? input.url : String(input));
    if (url !== null && (own === null || url.host !== own.host || url.protocol !== own.protocol)) {
      serverClasses ??= own === null ? Promise.resolve([]) : classesOf(own.hostname);
      const refusal = addressRefusal(await classesOf(url.hostname), await serverClasses);
      if (refusal !== undefined) {
        throw oauthError('PLN_E_OAUTH_ADDRESS_REFUSED', server, `An OAuth request for MCP server "${server}" to ${url.origin} was refused: ${url.hostname} is ${refusal}`, {
          details: { url: `${url.origin}${url.pathname}` },
        });
      }
    }
    return fetch(input, init);
  };
}
