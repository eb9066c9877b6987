/**
 * Permissions as a list of single items (`network api.example.com`,
 * `env GITHUB_TOKEN`), so that two sets can be compared item by item: what an
 * update adds beyond what was granted is shown to the user one line each, and
 * `plinth perms grant|revoke <plugin> <permission>` names one item.
 */
import { NO_PERMISSIONS, type Permissions, PlinthError, type Principal, permissionsSchema } from 'plinth/sdk';
import { ENV_SOURCE, hostPattern } from 'plinth/internal';
import { z } from 'zod';

/** What a value written out in a definition's `env` is keyed as: it reads no host variable. */
export const LITERAL = '(literal)';

/**
 * An `env` grant: `NAME` (the host's variable NAME, passed as NAME), `NAME=${env:OTHER}` (the
 * host's OTHER passed as NAME; several references in a row, `${setting:…}` too) or
 * `NAME=(literal)` (a value the definition writes out). Never a value.
 */
export const envGrant = z
  .string()
  .refine((value) => {
    const eq = value.indexOf('=');
    const name = eq === -1 ? value : value.slice(0, eq);
    const from = eq === -1 ? undefined : value.slice(eq + 1);
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && (from === undefined || from === LITERAL || (from !== '' && ENV_SOURCE.test(from)));
  }, 'expected an environment variable name such as "GITHUB_TOKEN", or "NAME=${env:HOST_VARIABLE}" for a variable set from another one, or "NAME=(literal)" for a value written in the definition');

/** Permissions as granted (stored, asked about): `env` items keyed by where their value comes from ({@link envGrant}). */
export const grantedPermissionsSchema = permissionsSchema.extend({ env: z.array(envGrant).default([]) });

/** The `env` grant item for variable `name` whose value comes from `from` ({@link Principal.envFrom}; undefined: the host's `name`). */
export function envGrantOf(name: string, from: string | undefined): string {
  if (from === undefined || from === `\${env:${name}}`) return name;
  return `${name}=${from === '' ? LITERAL : from}`;
}

/** The variable an `env` grant item passes. */
export function envGrantName(item: string): string {
  const eq = item.indexOf('=');
  return eq === -1 ? item : item.slice(0, eq);
}

/** What `principal` asks for, its `env` items keyed by where their values come from (a settings hook or server's `envFrom`). */
export function keyedDeclared(principal: Pick<Principal, 'declared' | 'envFrom'>): Permissions {
  const from = principal.envFrom;
  if (from === undefined) return principal.declared;
  return { ...principal.declared, env: [...new Set(principal.declared.env.map((name) => envGrantOf(name, Object.hasOwn(from, name) ? from[name] : undefined)))] };
}

/** Permissions as a launch uses them: `env` as the names of the variables passed. */
export function plainEnv(p: Permissions): Permissions {
  return { ...p, env: [...new Set(p.env.map(envGrantName))] };
}

/** Where an item sits in a permissions block. `network.deny` is a restriction: dropping one widens. */
export type ItemKind = 'filesystem.read' | 'filesystem.write' | 'network' | 'network.deny' | 'env' | 'shell' | 'mcp';

export interface PermissionItem {
  readonly kind: ItemKind;
  readonly value: string;
}

const KINDS: readonly ItemKind[] = ['filesystem.read', 'filesystem.write', 'network', 'network.deny', 'env', 'shell', 'mcp'];

/** Short names accepted on the command line, besides the kinds themselves. */
const ALIASES: Readonly<Record<string, ItemKind>> = { read: 'filesystem.read', write: 'filesystem.write', net: 'network', host: 'network', 'network.allow': 'network', deny: 'network.deny', command: 'shell', server: 'mcp' };

function list(p: Permissions, kind: ItemKind): readonly string[] {
  switch (kind) {
    case 'filesystem.read':
      return p.filesystem.read;
    case 'filesystem.write':
      return p.filesystem.write;
    case 'network':
      return p.network.allow;
    case 'network.deny':
      return p.network.deny;
    default:
      return p[kind];
  }
}

/** Every item of `p`, kind by kind, each once. */
export function itemsOf(p: Permissions): PermissionItem[] {
  return KINDS.flatMap((kind) => [...new Set(list(p, kind))].map((value) => ({ kind, value })));
}

export function sameItem(a: PermissionItem, b: PermissionItem): boolean {
  return a.kind === b.kind && a.value === b.value;
}

/** `network api.example.com`: how an item is shown and typed. */
export function formatItem(item: PermissionItem): string {
  return `${item.kind} ${item.value}`;
}

/** A line for a person: `+ network: api.example.com`, `+ no longer denied: evil.example.com`. */
export function describeWidening(item: PermissionItem): string {
  if (item.kind === 'env' && item.value.includes('=')) {
    const name = envGrantName(item.value);
    const from = item.value.slice(name.length + 1);
    return from === LITERAL ? `+ env: ${name} = a value written in the definition` : `+ env: ${name} = ${from} (read from your environment, passed as ${name})`;
  }
  return item.kind === 'network.deny' ? `+ network (no longer denied): ${item.value}` : `+ ${item.kind}: ${item.value}`;
}

/**
 * What `wanted` allows beyond `granted`: allow-items it has that the grant has
 * not, and denies the grant has that it dropped. Empty when `wanted` is the
 * grant or narrower: a narrowing needs no prompt. Items compare exactly, so a
 * grant of `*.example.com` does not cover `api.example.com` (one more prompt, never one less).
 */
export function widening(granted: Permissions, wanted: Permissions): PermissionItem[] {
  const have = itemsOf(granted);
  const want = itemsOf(wanted);
  const added = want.filter((item) => item.kind !== 'network.deny' && !have.some((h) => sameItem(h, item)));
  const undenied = have.filter((item) => item.kind === 'network.deny' && !want.some((w) => sameItem(w, item)));
  return [...added, ...undenied];
}

/** `p` with `items` added (allow items) — denies in `items` are added as denies. */
export function withItems(p: Permissions, items: readonly PermissionItem[]): Permissions {
  return build([...itemsOf(p), ...items]);
}

/** `p` without `items`. */
export function withoutItems(p: Permissions, items: readonly PermissionItem[]): Permissions {
  return build(itemsOf(p).filter((item) => !items.some((gone) => sameItem(gone, item))));
}

function build(items: readonly PermissionItem[]): Permissions {
  const values = (kind: ItemKind) => [...new Set(items.filter((item) => item.kind === kind).map((item) => item.value))];
  return {
    filesystem: { read: values('filesystem.read'), write: values('filesystem.write') },
    network: { allow: values('network'), deny: values('network.deny') },
    env: values('env'),
    shell: values('shell'),
    mcp: values('mcp'),
  };
}

/**
 * Reads `network api.example.com`, `network:api.example.com` or
 * `read=${workspace}/src` as typed on the command line, checked as the
 * manifest's schema checks it.
 *
 * @throws PlinthError `PLN_E_PERM_ITEM_INVALID` naming the kinds and an example.
 */
export function parseItem(text: string): PermissionItem {
  const match = /^\s*([a-z.]+)\s*[\s:=]\s*(.+?)\s*$/.exec(text);
  const kind = match ? (KINDS.find((k) => k === match[1]) ?? ALIASES[match[1] ?? '']) : undefined;
  const invalid = (why: string) =>
    new PlinthError('PLN_E_PERM_ITEM_INVALID', `"${text}" is not a permission: ${why}`, {
      hint: `write it as "<kind> <value>" (or "<kind>:<value>"), kind one of ${KINDS.join(', ')}; e.g. "network api.example.com", "filesystem.read \${workspace}/src", "env GITHUB_TOKEN", "env API_TOKEN=\${env:MY_TOKEN}"`,
      details: { permission: text },
    });
  if (!match || !kind) throw invalid('expected a kind and a value');
  const value = kind === 'network' || kind === 'network.deny' ? hostPattern.safeParse(match[2]) : { success: true as const, data: match[2] as string };
  if (!value.success) throw invalid(value.error.issues[0]?.message ?? 'not a host');
  // `NAME=${env:NAME}` is the host's NAME: one spelling, so that a grant compares as it should.
  const item = { kind, value: kind === 'env' ? normalEnvGrant(value.data) : value.data };
  const checked = grantedPermissionsSchema.safeParse(withItems(NO_PERMISSIONS, [item]));
  if (!checked.success) throw invalid(checked.error.issues[0]?.message ?? 'invalid value');
  return item;
}

/** `NAME=${env:NAME}` as `NAME`; anything else as typed (checked by {@link envGrant}). */
function normalEnvGrant(text: string): string {
  const name = envGrantName(text);
  return text === `${name}=\${env:${name}}` ? name : text;
}
