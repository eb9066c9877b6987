/**
 * What granted permissions mean on this machine: placeholders expanded to
 * real paths (symlinks resolved, so that a grant names what it reaches), and
 * host matching for the network proxy (deny wins over allow; `*.name` is
 * subdomains only; an IP literal only when declared as one).
 */
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Permissions } from 'plinth/sdk';

/** What the placeholders stand for, for one principal. */
export interface PlaceholderValues {
  readonly workspace: string;
  /** The user's home folder (not the private HOME the child gets). */
  readonly home: string;
  /** The plugin's folder; absent for settings hooks and servers. */
  readonly pluginDir?: string;
  /** The principal's private temporary folder. */
  readonly tmp: string;
}

/** The real path of `path`, or of its nearest existing parent with the rest appended (a grant may name what does not exist yet). */
export function realPath(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  if (parent === absolute) return absolute;
  return join(realPath(parent), basename(absolute));
}

/**
 * `${workspace}/src` → `/home/me/project/src` (real path). Undefined when the
 * path names `${pluginDir}` and there is none (a settings hook): the grant
 * does not apply.
 */
export function expandPath(pattern: string, values: PlaceholderValues): string | undefined {
  const match = /^\$\{(workspace|home|pluginDir|tmp)\}(.*)$/.exec(pattern);
  if (match === null) return realPath(pattern);
  const [, name, rest] = match as unknown as [string, keyof PlaceholderValues, string];
  const base = values[name];
  if (base === undefined) return undefined;
  return realPath(base + rest);
}

/** The granted read and write paths, expanded, without duplicates; write implies read. */
export function expandFilesystem(filesystem: Permissions['filesystem'], values: PlaceholderValues): { readonly read: string[]; readonly write: string[] } {
  const write = [...new Set(filesystem.write.map((p) => expandPath(p, values)).filter((p): p is string => p !== undefined))];
  const read = [...new Set(filesystem.read.map((p) => expandPath(p, values)).filter((p): p is string => p !== undefined))].filter((p) => !write.includes(p));
  return { read, write };
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

/** Why a host was refused, or undefined when allowed. */
export function hostRefusal(network: Permissions['network'], rawHost: string, port: number): string | undefined {
  const host = normalizeHost(rawHost);
  if (host === '' || !/^[a-z0-9.:-]+$/.test(host)) return 'not a valid host name';
  if (network.allow.length === 0) return 'no network access is declared';
  const deny = network.deny.map(parseHostPattern).find((rule) => ruleMatches(rule, host, port));
  if (deny !== undefined) return `denied by "${network.deny.find((p) => ruleMatches(parseHostPattern(p), host, port))}"`;
  const allowed = network.allow.map(parseHostPattern).some((rule) => ruleMatches(rule, host, port));
  if (allowed) return undefined;
  if (isIpLiteral(host)) return 'an IP address that is not declared as one in network.allow';
  return 'not in network.allow';
}
