/**
 * The signed documents of a static registry folder (see
 * internal/registry/trust.ts): the index, updated at each signed
 * publish and rebuilt (with a new expiry) by `plinth registry index`; the
 * revocations (`plinth registry revoke`), signed again with every index,
 * which names them and gives them its expiry; and key rotations (`plinth
 * registry rotate-key`), which also re-sign every version and document with
 * the new key. The caller holds the folder's publish lock.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import semver from 'semver';
import { PlinthError } from '../sdk/errors.js';
import { writeFileAtomic } from '../sdk/files.js';
import { type Packument, packumentFile } from '../internal/registry/packument.js';
import { REGISTRY_KEYS_PATH, registryKeysSchema } from '../internal/registry/signatures.js';
import {
  type IndexSigned,
  REGISTRY_INDEX_PATH,
  REGISTRY_REVOCATIONS_PATH,
  REGISTRY_ROTATIONS_PATH,
  type RevocationsSigned,
  type RevokedVersion,
  type RotationSigned,
  packumentDigest,
  registryIndexSchema,
  revocationsDigest,
  revocationsSchema,
  rotationsSchema,
} from '../internal/registry/trust.js';
import { readSearchIndex } from './search-index.js';
import { type RegistryKey, type SigningKey, signDocument, signVersion, withKey } from './signing.js';

/** How long an index is valid by default: a registry re-signs it (`plinth registry index`) before then. */
export const DEFAULT_INDEX_TTL_DAYS = 30;

export interface IndexOptions {
  readonly now?: Date;
  readonly ttlDays?: number;
}

/** Sets `packument`'s digest in the folder's index, one version up, signed by `key` (with the revocations, see {@link writeIndex}). */
export async function updateIndexEntry(root: string, key: SigningKey, packument: Packument, options: IndexOptions = {}): Promise<IndexSigned> {
  const current = await readDocument(root, REGISTRY_INDEX_PATH, registryIndexSchema);
  const packuments = { ...(current?.signed.packuments ?? {}), [packument.name]: packumentDigest(packument) };
  return (await writeIndex(root, key, packuments, current?.signed.version ?? 0, options)).index;
}

/** Rebuilds the index from every packument the folder lists, one version up, with a new expiry (the revocations too). */
export async function rebuildIndex(root: string, key: SigningKey, options: IndexOptions = {}): Promise<IndexSigned> {
  const current = await readDocument(root, REGISTRY_INDEX_PATH, registryIndexSchema);
  return (await writeIndex(root, key, await packumentDigests(root), current?.signed.version ?? 0, options)).index;
}

async function packumentDigests(root: string): Promise<Record<string, string>> {
  const packuments: Record<string, string> = {};
  for (const object of (await readSearchIndex(root)).objects) {
    const packument = await readPackumentFile(root, object.package.name);
    if (packument) packuments[packument.name] = packumentDigest(packument);
  }
  return packuments;
}

/**
 * Signs the index, and with it the revocations when the folder has any (or
 * `revoked` is given): the revocations first, one version up and with the
 * index's expiry, then the index naming them (their version and digest), so
 * that a client can tell an older list, or a missing one, from the current
 * one. Both expire together; `plinth registry index` signs both again.
 */
async function writeIndex(root: string, key: SigningKey, packuments: Record<string, string>, previous: number, options: IndexOptions, revoked?: readonly RevokedVersion[]): Promise<{ index: IndexSigned; revocations?: RevocationsSigned }> {
  const now = options.now ?? new Date();
  const ttl = options.ttlDays ?? DEFAULT_INDEX_TTL_DAYS;
  const expires = new Date(now.getTime() + ttl * 86_400_000).toISOString();
  const current = await readDocument(root, REGISTRY_REVOCATIONS_PATH, revocationsSchema);
  const list = revoked ?? current?.signed.revoked;
  let revocations: RevocationsSigned | undefined;
  if (list !== undefined) {
    revocations = { ...current?.signed, type: 'plinth-revocations', version: (current?.signed.version ?? 0) + 1, expires, revoked: [...list] };
    await writeJson(root, REGISTRY_REVOCATIONS_PATH, signDocument(key, revocations));
  }
  const sorted = Object.fromEntries(Object.keys(packuments).sort().map((name) => [name, packuments[name]!]));
  const signed: IndexSigned = { type: 'plinth-index', version: previous + 1, expires, packuments: sorted, ...(revocations && { revocations: { version: revocations.version, digest: revocationsDigest(revocations) } }) };
  await writeJson(root, REGISTRY_INDEX_PATH, signDocument(key, signed));
  return { index: signed, ...(revocations && { revocations }) };
}

/**
 * Adds `name@version` to the revocations, one version up, and signs the
 * index again to name them (one version up too).
 * @throws PlinthError `PLN_E_REGISTRY_REVOKE` when the folder does not have that version.
 */
export async function revokeVersion(root: string, key: SigningKey, entry: { name: string; version: string; reason: string; use?: string }, options: IndexOptions = {}): Promise<RevocationsSigned> {
  const now = options.now ?? new Date();
  const packument = await readPackumentFile(root, entry.name);
  if (!packument?.versions[entry.version]) {
    throw new PlinthError('PLN_E_REGISTRY_REVOKE', `${entry.name}@${entry.version} is not in ${root}: there is nothing to revoke`, { plugin: entry.name, hint: 'name a published version, e.g. `plinth registry revoke name@1.0.0 --reason "…"`', details: { name: entry.name, version: entry.version } });
  }
  if (entry.use !== undefined && (!packument.versions[entry.use] || entry.use === entry.version)) {
    throw new PlinthError('PLN_E_REGISTRY_REVOKE', `--use ${entry.use}: ${entry.name}@${entry.use} is not another published version`, { plugin: entry.name, hint: 'publish the fixed version first, then revoke the old one with --use <it>', details: { name: entry.name, use: entry.use } });
  }
  const current = await readDocument(root, REGISTRY_REVOCATIONS_PATH, revocationsSchema);
  const others = (current?.signed.revoked ?? []).filter((r) => !(r.name === entry.name && r.version === entry.version));
  const revoked = [...others, { name: entry.name, version: entry.version, reason: entry.reason, ...(entry.use !== undefined && { use: entry.use }), at: now.toISOString() }];
  const index = await readDocument(root, REGISTRY_INDEX_PATH, registryIndexSchema);
  const written = await writeIndex(root, key, index?.signed.packuments ?? (await packumentDigests(root)), index?.signed.version ?? 0, { ...options, now }, revoked);
  return written.revocations!;
}

/**
 * Moves the folder from `from` to `to`: a rotation signed by `from` is
 * appended, `to` is listed in the keys document (`from` stays, expired now),
 * and every version, the index and the revocations are signed again by `to`.
 * @throws PlinthError `PLN_E_REGISTRY_ROTATE` when `from` is not the key the folder signs with.
 */
export async function rotateKey(root: string, from: SigningKey, to: SigningKey, options: IndexOptions = {}): Promise<{ rotation: RotationSigned; resigned: number }> {
  const now = options.now ?? new Date();
  const keysFile = join(root, REGISTRY_KEYS_PATH);
  const keysText = await readFile(keysFile, 'utf8').catch(() => undefined);
  const keys = keysText === undefined ? undefined : registryKeysSchema.safeParse(JSON.parse(keysText));
  const listed = keys?.success ? keys.data.keys : [];
  const active = listed.filter((k) => k.expires == null);
  if (!active.some((k) => k.keyid === from.keyid)) {
    throw new PlinthError('PLN_E_REGISTRY_ROTATE', `${from.keyid} is not the key ${root} signs with${active.length ? ` (it signs with ${active.map((k) => k.keyid).join(', ')})` : ' (it lists no keys)'}`, {
      hint: 'give the current key with --from and the new one with --key; only the current key can hand over to a new one',
      details: { from: from.keyid },
    });
  }
  if (from.keyid === to.keyid) throw new PlinthError('PLN_E_REGISTRY_ROTATE', 'the new key is the current key', { hint: 'make a new one with `plinth registry keygen <file>`', details: { from: from.keyid } });
  const rotations = (await readDocument(root, REGISTRY_ROTATIONS_PATH, rotationsSchema)) ?? { rotations: [] };
  const rotation: RotationSigned = { type: 'plinth-rotation', from: from.keyid, to: { keyid: to.keyid, key: to.publicKey }, at: now.toISOString() };
  await writeJson(root, REGISTRY_ROTATIONS_PATH, { rotations: [...rotations.rotations, signDocument(from, rotation)] });
  const expired: RegistryKey[] = listed.map((k) => (k.keyid === from.keyid ? { ...(k as RegistryKey), expires: now.toISOString() } : (k as RegistryKey)));
  await writeJson(root, REGISTRY_KEYS_PATH, { keys: withKey(expired, to) });
  let resigned = 0;
  for (const object of (await readSearchIndex(root)).objects) {
    const packument = await readPackumentFile(root, object.package.name);
    if (!packument) continue;
    for (const doc of Object.values(packument.versions)) {
      if (!doc.dist.signatures?.length) continue;
      doc.dist.signatures = [signVersion(to, doc.name, doc.version, doc.dist.integrity)];
      resigned++;
    }
    await writeJson(root, packumentFile(packument.name), packument);
  }
  // The revocations are signed again with the index, by the new key.
  await rebuildIndex(root, to, options);
  return { rotation, resigned };
}

async function readPackumentFile(root: string, name: string): Promise<Packument | undefined> {
  const text = await readFile(join(root, packumentFile(name)), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const data = JSON.parse(text) as Packument;
  // Versions in semver order, as publish writes them.
  data.versions = Object.fromEntries(Object.keys(data.versions).sort(semver.compare).map((v) => [v, data.versions[v]!]));
  return data;
}

async function readDocument<T>(root: string, path: string, schema: { safeParse(data: unknown): { success: true; data: T } | { success: false } }): Promise<T | undefined> {
  const file = join(root, path);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new PlinthError('PLN_E_REGISTRY_DOCUMENT_INVALID', `${file} is not a signed registry document`, { hint: 'restore it from a backup, or remove it and run the command again', details: { file } });
  return parsed.data;
}

async function writeJson(root: string, path: string, value: unknown): Promise<void> {
  const file = join(root, path);
  await mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o644 });
}
