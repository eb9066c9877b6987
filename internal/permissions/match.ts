/**
 * Matching a target against declared or granted permissions: one matcher for
 * hosts (the network proxy and `ctx.fetch` answer alike), paths after their
 * placeholders are filled in and links resolved, and commands. Pure but for
 * `realpath`; what is allowed comes from the caller.
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { CapabilityPlaces, CapabilityRequest } from '../../sdk/contracts/capabilities.js';
import type { Permissions } from '../../sdk/contracts/sandbox.js';
import { PlinthError } from '../../sdk/errors.js';

/** The values of a path's placeholders for one principal. */
export interface PathPlaceholders {
  readonly workspace: string;
  readonly home: string;
  readonly pluginDir?: string;
  readonly tmp?: string;
}

/**
 * `${workspace}/src` → `/work/project/src`. Undefined when the path names a
 * placeholder that has no value here (a settings hook has no `${pluginDir}`):
 * such a grant grants nothing.
 */
export function expandPath(path: string, values: PathPlaceholders): string | undefined {
  const match = /^\$\{(workspace|home|pluginDir|tmp)\}(.*)$/.exec(path);
  if (!match) return isAbsolute(path) ? resolve(path) : undefined;
  const base = values[match[1] as keyof PathPlaceholders];
  return base === undefined ? undefined : resolve(join(base, match[2] ?? ''));
}

/** A parsed host pattern. */
interface HostRule {
  /** The name without `*.`, or the IP literal (IPv6 without brackets). */
  readonly host: string;
  readonly subdomains: boolean;
  readonly port?: number;
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** Whether `host` is an IP literal (v4, or v6 with or without brackets). */
export function isIpLiteral(host: string): boolean {
  return IPV4.test(host) || host.includes(':') || host.startsWith('[');
}

/** Lower case, brackets and a trailing dot removed: the form patterns are compared in. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

export function parseHostPattern(pattern: string): HostRule {
  const p = pattern.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(p);
  if (bracketed) return { host: bracketed[1]!, subdomains: false, ...(bracketed[2] !== undefined && { port: Number(bracketed[2]) }) };
  const plain = /^(\*\.)?([^:]+)(?::(\d+))?$/.exec(p);
  if (plain === null) return { host: p, subdomains: false };
  return { host: plain[2]!, subdomains: plain[1] !== undefined, ...(plain[3] !== undefined && { port: Number(plain[3]) }) };
}

function ruleMatches(rule: HostRule, host: string, port: number): boolean {
  if (rule.port !== undefined && rule.port !== port) return false;
  if (rule.subdomains) {
    // `*.example.com` matches `a.example.com`, never `example.com` nor `evilexample.com`; an IP never.
    return !isIpLiteral(host) && host.endsWith(`.${rule.host}`) && host.length > rule.host.length + 1;
  }
  return host === rule.host;
}

/**
 * Why `host:port` is refused by `network`, or undefined when allowed: deny
 * wins over allow; `*.name` is subdomains only; an IP literal only when
 * declared as one; a pattern without a port covers any port. The one matcher
 * of the network proxy and of `ctx.fetch`.
 */
export function hostRefusal(network: Permissions['network'], rawHost: string, port: number): string | undefined {
  const host = normalizeHost(rawHost);
  if (host === '' || !/^[a-z0-9.:-]+$/.test(host)) return 'not a valid host name';
  const deny = network.deny.find((p) => ruleMatches(parseHostPattern(p), host, port));
  if (deny !== undefined) return `denied by "${deny}"`;
  if (network.allow.length === 0) return 'no network access is declared';
  if (network.allow.some((p) => ruleMatches(parseHostPattern(p), host, port))) return undefined;
  if (isIpLiteral(host)) return 'an IP address that is not declared as one in network.allow';
  return 'not in network.allow';
}

/**
 * The real path of `target` (links resolved); for a path that does not exist
 * yet (a file about to be written), the real path of its nearest existing
 * folder with the rest appended, so that a link on the way cannot lead outside.
 */
export async function realTarget(target: string): Promise<string> {
  const absolute = resolve(target);
  try {
    return await realpath(absolute);
  } catch {
    const parent = dirname(absolute);
    if (parent === absolute) return absolute;
    return join(await realTarget(parent), basename(absolute));
  }
}

/** Whether the real path `target` is one of `roots` (already expanded) or inside one, the roots' links resolved too. */
export async function pathWithin(target: string, roots: readonly string[]): Promise<boolean> {
  for (const root of roots) {
    const real = await realTarget(root);
    const rel = relative(real, target);
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) return true;
  }
  return false;
}

/**
 * Whether `program` is one of the `shell` entries: an entry without a slash
 * covers the program named that way (found on `PATH` by the launcher), an
 * entry with one covers that file, compared by real path.
 */
export async function commandAllowed(shell: readonly string[], program: string): Promise<boolean> {
  if (!program.includes('/')) return shell.includes(program);
  const real = await realTarget(program);
  for (const entry of shell) if (entry.includes('/') && (await realTarget(entry)) === real) return true;
  return false;
}

/** Whether `permissions` cover `request`; a plugin's own folder is readable and its `tmp` writable whatever it declares. */
export async function permits(
  permissions: Permissions,
  request: CapabilityRequest,
  places: CapabilityPlaces & { readonly pluginDir?: string },
): Promise<boolean> {
  switch (request.kind) {
    case 'filesystem': {
      const values = { workspace: places.workspace, home: places.home, tmp: places.tmp, ...(places.pluginDir && { pluginDir: places.pluginDir }) };
      const expand = (paths: readonly string[]) => paths.map((p) => expandPath(p, values)).filter((p): p is string => p !== undefined);
      const writable = [places.tmp, ...expand(permissions.filesystem.write)];
      const readable = [...writable, ...(places.pluginDir ? [places.pluginDir] : []), ...expand(permissions.filesystem.read)];
      return pathWithin(request.path, request.access === 'write' ? writable : readable);
    }
    case 'network':
      return hostRefusal(permissions.network, request.host, request.port) === undefined;
    case 'env':
      return permissions.env.includes(request.name);
    case 'shell':
      return commandAllowed(permissions.shell, request.program);
    case 'mcp':
      return permissions.mcp.includes(request.server);
  }
}

export function capabilityTarget(request: CapabilityRequest): string {
  switch (request.kind) {
    case 'filesystem':
      return request.path;
    case 'network':
      return `${request.host}:${request.port}`;
    case 'env':
      return request.name;
    case 'shell':
      return request.program;
    case 'mcp':
      return request.server;
  }
}

/** The refusal of one capability use. */
export function capabilityDenied(info: { readonly name: string }, kind: CapabilityRequest['kind'], target: string, why: string): PlinthError {
  const what = kind === 'filesystem' ? `the path ${target}` : kind === 'network' ? `the host ${target}` : kind === 'env' ? `the environment variable ${target}` : kind === 'shell' ? `the command ${target}` : `the MCP server "${target}"`;
  return new PlinthError('PLN_E_PERM_DENIED', `plugin "${info.name}" may not use ${what}: ${why}`, {
    plugin: info.name,
    hint: `declare it in the plugin's manifest "permissions" (${kind}) and grant it with \`plinth perms grant ${info.name}\`; \`plinth perms audit ${info.name}\` lists the refusals`,
    details: { plugin: info.name, permission: kind, target },
  });
}
