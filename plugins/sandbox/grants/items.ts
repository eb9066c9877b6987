/**
 * Permissions as a list of single items (`network api.example.com`,
 * `env GITHUB_TOKEN`), so that two sets can be compared item by item: what an
 * update adds beyond what was granted is shown to the user one line each, and
 * `plinth perms grant|revoke <plugin> <permission>` names one item.
 */
import { NO_PERMISSIONS, type Permissions, PlinthError, hostPattern, permissionsSchema } from 'plinth/sdk';

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
      hint: `write it as "<kind> <value>" (or "<kind>:<value>"), kind one of ${KINDS.join(', ')}; e.g. "network api.example.com", "filesystem.read \${workspace}/src", "env GITHUB_TOKEN"`,
      details: { permission: text },
    });
  if (!match || !kind) throw invalid('expected a kind and a value');
  const value = kind === 'network' || kind === 'network.deny' ? hostPattern.safeParse(match[2]) : { success: true as const, data: match[2] as string };
  if (!value.success) throw invalid(value.error.issues[0]?.message ?? 'not a host');
  const item = { kind, value: value.data };
  const checked = permissionsSchema.safeParse(withItems(NO_PERMISSIONS, [item]));
  if (!checked.success) throw invalid(checked.error.issues[0]?.message ?? 'invalid value');
  return item;
}
