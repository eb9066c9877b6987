/**
 * DNS-rebinding protection for `plinth serve --http`, as the MCP
 * specification's security guidance asks of a local server: the `Host` header
 * must name this machine (or a host the user allowed), and an `Origin`, when a
 * browser sends one, must be a local page (or an origin the user allowed).
 * Checked before authentication, so that a foreign page learns nothing.
 */
import { isIP } from 'node:net';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Whether `host` (a listen address) is a loopback address. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export interface OriginPolicy {
  /** Host names accepted in `Host` (without port). */
  readonly hosts: ReadonlySet<string>;
  /** Exact origins accepted besides local ones. */
  readonly origins: ReadonlySet<string>;
}

/** The accepted names: loopback, the listen address (unless a wildcard), and what the settings add. */
export function originPolicy(listenHost: string, allowedHosts: readonly string[], allowedOrigins: readonly string[]): OriginPolicy {
  const hosts = new Set([...LOOPBACK_NAMES, ...allowedHosts.map((h) => h.toLowerCase())]);
  if (listenHost !== '0.0.0.0' && listenHost !== '::' && listenHost !== '') hosts.add(isIP(listenHost) === 6 ? `[${listenHost}]` : listenHost.toLowerCase());
  return { hosts, origins: new Set(allowedOrigins.map((o) => o.replace(/\/+$/, '').toLowerCase())) };
}

/** The host name of a `Host` header value (port dropped), lower case. */
function hostName(value: string): string | undefined {
  try {
    return new URL(`http://${value}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Why a request is refused (403), or undefined when its Host and Origin are fine. */
export function rebindingProblem(headers: { host?: string | undefined; origin?: string | undefined }, policy: OriginPolicy): string | undefined {
  const host = headers.host === undefined ? undefined : hostName(headers.host);
  if (host === undefined || !policy.hosts.has(host)) return `Host header ${JSON.stringify(headers.host ?? '')} is not this machine`;
  const origin = headers.origin;
  if (origin === undefined || origin === '') return undefined;
  if (policy.origins.has(origin.replace(/\/+$/, '').toLowerCase())) return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `Origin header ${JSON.stringify(origin)} is not a URL`;
  }
  if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_NAMES.includes(url.hostname.toLowerCase())) return undefined;
  return `Origin ${JSON.stringify(origin)} is not allowed`;
}
