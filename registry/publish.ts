/**
 * `plinth registry publish`: adds a plugin (a folder, packed here, or a
 * tarball made by `plinth registry pack` or `npm pack`) to a static registry
 * folder, in the layout of the sdk's registry contract (`packumentFile`,
 * `tarballFile`, `REGISTRY_SEARCH_INDEX`):
 *
 *     <folder>/<name>                     the packument (`@scope/name`: folder `@scope`, file `name`)
 *     <folder>/-/<name>-<version>.tgz     the tarballs
 *     <folder>/-/v1/search                the search index
 *
 * A version, once published, is immutable: the same name@version with other
 * bytes is refused, with the same bytes it is a no-op. Every file is written
 * atomically, in the order tarball → packument → index, so a crash leaves at
 * worst an unreferenced tarball or an index one entry behind (publishing the
 * same tarball again repairs it), never half a document. Publishers to one
 * folder take turns (a lock file in `-/`).
 *
 * `dist.tarball` is written relative to the registry root (`-/name-1.0.0.tgz`),
 * so the folder can move to any host or path: the sdk's `resolveTarballUrl`
 * resolves it against the registry URL, and `plinth registry serve` rewrites it
 * to an absolute URL of its own origin for npm clients. `baseUrl` writes
 * absolute URLs instead, for a folder whose final address is known.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import semver from 'semver';
import { PlinthError } from '../sdk/errors.js';
import { withFileLock, writeFileAtomic } from '../sdk/files.js';
import type { Manifest } from '../sdk/manifest.js';
import { REGISTRY_SEARCH_INDEX, type Packument, type PackumentVersion, latestVersion, packumentFile, packumentSchema, tarballFile } from '../internal/registry/packument.js';
import { distIntegrity, tarballDigests } from './digests.js';
import { packPlugin } from './pack.js';
import { readSearchIndex, searchEntry, withEntry } from './search-index.js';
import { REGISTRY_KEYS_PATH } from '../internal/registry/signatures.js';
import { type RegistryKey, type SigningKey, signVersion, withKey } from './signing.js';
import { readTarball } from './tarball-read.js';
import { type IndexOptions, updateIndexEntry } from './trust-documents.js';

export interface PublishOptions {
  /** When the version was published (packument `time`). Default: now. A fixed date makes the folder reproducible. */
  readonly now?: Date;
  /** Write absolute tarball URLs under this base (e.g. `https://cdn.example/plugins/`) instead of root-relative ones. */
  readonly baseUrl?: string;
  /**
   * Also point this dist-tag at the version (`next`, `beta`). `latest` is not
   * one to set: it is always the highest version that is not a prerelease.
   */
  readonly tag?: string;
  /**
   * Sign the version (`dist.signatures`, as npm's registry does), list the key
   * in `-/npm/v1/keys`, and update the signed index (`-/plinth/index.json`).
   */
  readonly signingKey?: SigningKey;
  /** How many days the signed index stays valid (default 30). */
  readonly indexTtlDays?: number;
}

export interface PublishResult {
  readonly name: string;
  readonly version: string;
  /** `published`; `unchanged` when this exact tarball was already there; `tagged` when it was, and only the tag was added. */
  readonly status: 'published' | 'unchanged' | 'tagged';
  /** The tarball's path inside the registry folder. */
  readonly tarball: string;
  /** `dist.integrity`: sha512 and sha256 SRI. */
  readonly integrity: string;
  readonly shasum: string;
  /** `dist-tags.latest` after publishing. */
  readonly latest: string;
  /** The packument's path inside the registry folder. */
  readonly packument: string;
}

/** What is being published: the tarball and the manifest inside it. */
interface Publishable {
  readonly manifest: Manifest;
  readonly bytes: Buffer;
  readonly fileCount: number;
  readonly unpackedSize: number;
}

/**
 * Publishes `source` (a plugin folder, or a `.tgz` file) into the registry folder `folder` (created when missing).
 *
 * @throws PlinthError `PLN_E_REGISTRY_VERSION_EXISTS` when name@version is there with other bytes,
 *   `PLN_E_REGISTRY_NAME_RESERVED` for a name the layout cannot hold, `PLN_E_REGISTRY_DOCUMENT_INVALID`
 *   when the folder's packument is not one, and what {@link packPlugin} or {@link readTarball} throw.
 */
export async function publishPlugin(folder: string, source: string, options: PublishOptions = {}): Promise<PublishResult> {
  return publishPackage(folder, await publishable(source), options);
}

/** Publishes tarball bytes (its manifest read from them). */
export async function publishTarball(folder: string, bytes: Buffer, options: PublishOptions = {}): Promise<PublishResult> {
  const contents = await readTarball(bytes);
  return publishPackage(folder, { manifest: contents.manifest, bytes, fileCount: contents.files.length, unpackedSize: contents.unpackedSize }, options);
}

async function publishable(source: string): Promise<Publishable> {
  const path = resolve(source);
  const info = await stat(path).catch((cause: unknown) => {
    throw new PlinthError('PLN_E_REGISTRY_SOURCE', `${path} does not exist`, { cause, hint: 'give a plugin folder or a .tgz made by `plinth registry pack` or `npm pack`', details: { source: path } });
  });
  if (info.isDirectory()) {
    const packed = await packPlugin(path);
    return { manifest: packed.manifest, bytes: packed.bytes, fileCount: packed.files.length, unpackedSize: packed.unpackedSize };
  }
  const bytes = await readFile(path);
  const contents = await readTarball(bytes, path);
  return { manifest: contents.manifest, bytes, fileCount: contents.files.length, unpackedSize: contents.unpackedSize };
}

async function publishPackage(folder: string, item: Publishable, options: PublishOptions): Promise<PublishResult> {
  const root = resolve(folder);
  const { name, version } = item.manifest;
  // `-` is the folder of tarballs and the index: no package can have its name.
  if (name === '-') {
    throw new PlinthError('PLN_E_REGISTRY_NAME_RESERVED', 'a plugin cannot be named "-" in a registry: that name is the folder of its tarballs', { plugin: name, hint: 'rename the plugin' });
  }
  if (options.tag !== undefined && (options.tag === 'latest' || !DIST_TAG.test(options.tag) || semver.validRange(options.tag) !== null)) {
    throw new PlinthError('PLN_E_REGISTRY_TAG_INVALID', `"${options.tag}" cannot be a dist-tag${options.tag === 'latest' ? ': latest is always the highest version that is not a prerelease' : ': a tag is a word such as "next" or "beta", not a version or range'}`, {
      plugin: name,
      hint: 'use a word such as --tag next, or leave --tag out',
    });
  }
  return withPublishLock(root, async () => {
    const digests = tarballDigests(item.bytes);
    const integrity = distIntegrity(digests);
    const packumentPath = packumentFile(name);
    const tarballPath = tarballFile(name, version);
    const existing = await readPackument(join(root, packumentPath));
    const previous = existing?.versions[version];
    if (previous) {
      if (!sameIntegrity(previous.dist.integrity, digests.integrity)) {
        throw new PlinthError('PLN_E_REGISTRY_VERSION_EXISTS', `${name}@${version} is already in ${root} with other content; a published version never changes`, {
          plugin: name,
          hint: `raise "version" in the plugin's manifest.json and publish again`,
          details: { name, version, published: previous.dist.integrity, new: digests.integrity },
        });
      }
      // The same bytes: nothing to write but what a crash or a hand may have removed (the tarball, the index entry).
      const tarballTarget = join(root, tarballPath);
      if (!(await stat(tarballTarget).then((info) => info.isFile(), () => false))) {
        await mkdir(dirname(tarballTarget), { recursive: true });
        await writeFileAtomic(tarballTarget, item.bytes, { mode: 0o644 });
      }
      const tagged = options.tag !== undefined && existing!['dist-tags'][options.tag] !== version ? withTag(existing!, options.tag, version, (options.now ?? new Date()).toISOString()) : existing!;
      if (tagged !== existing) await writeFileAtomic(join(root, packumentPath), `${JSON.stringify(tagged, null, 2)}\n`, { mode: 0o644 });
      await refreshIndex(root, tagged);
      if (options.signingKey && tagged !== existing) await updateIndexEntry(root, options.signingKey, tagged, indexOptions(options));
      return result(name, version, tagged === existing ? 'unchanged' : 'tagged', tarballPath, previous.dist.integrity, digests.shasum, tagged, packumentPath);
    }
    const when = (options.now ?? new Date()).toISOString();
    const tarballTarget = join(root, tarballPath);
    await mkdir(dirname(tarballTarget), { recursive: true });
    await writeFileAtomic(tarballTarget, item.bytes, { mode: 0o644 });
    const doc = versionDocument(item, options.baseUrl === undefined ? tarballPath : new URL(tarballPath, withSlash(options.baseUrl)).href, integrity, digests.shasum);
    if (options.signingKey) {
      doc.dist.signatures = [signVersion(options.signingKey, name, version, integrity)];
      await listKey(root, options.signingKey);
    }
    const added = withVersion(existing, doc, when);
    const packument = options.tag === undefined ? added : withTag(added, options.tag, version, when);
    const packumentTarget = join(root, packumentPath);
    await mkdir(dirname(packumentTarget), { recursive: true });
    await writeFileAtomic(packumentTarget, `${JSON.stringify(packument, null, 2)}\n`, { mode: 0o644 });
    await refreshIndex(root, packument);
    // Last: a crash before it leaves the index one packument behind, which clients refuse until a publish repairs it.
    if (options.signingKey) await updateIndexEntry(root, options.signingKey, packument, indexOptions(options));
    return result(name, version, 'published', tarballPath, integrity, digests.shasum, packument, packumentPath);
  });
}

/** Publishers to one folder (and `registry index|revoke|rotate-key`) take turns: a lock file in `-/`. */
export async function withPublishLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(join(root, '-'), { recursive: true });
  return withFileLock(join(root, '-', '.publish.lock'), fn);
}

function indexOptions(options: PublishOptions): IndexOptions {
  return { ...(options.now && { now: options.now }), ...(options.indexTtlDays !== undefined && { ttlDays: options.indexTtlDays }) };
}

function result(name: string, version: string, status: PublishResult['status'], tarball: string, integrity: string, shasum: string, packument: Packument, path: string): PublishResult {
  return { name, version, status, tarball, integrity, shasum, latest: packument['dist-tags'].latest ?? version, packument: path };
}

/** Whether an SRI string lists the sha512 digest `sha512` (the one a publish always writes). */
function sameIntegrity(listed: string, sha512: string): boolean {
  return listed.trim().split(/\s+/).includes(sha512);
}

/**
 * The version's document: the whole manifest, checked and with its defaults
 * (so a client can show what a plugin declares before downloading it, and the
 * resolver finds `kernel`, filled in when implied, and `dependencies`), plus
 * `keywords` and `dist`.
 */
function versionDocument(item: Publishable, tarball: string, integrity: string, shasum: string): PackumentVersion {
  const m = item.manifest;
  const declared: unknown = (m as Record<string, unknown>).keywords;
  const keywords = Array.isArray(declared) ? declared.filter((k): k is string => typeof k === 'string') : [];
  return {
    ...m,
    name: m.name,
    version: m.version,
    description: m.description,
    keywords,
    kernel: m.kernel,
    dependencies: m.dependencies,
    dist: { tarball, integrity, shasum, fileCount: item.fileCount, unpackedSize: item.unpackedSize },
  };
}

function withVersion(existing: Packument | undefined, doc: PackumentVersion, when: string): Packument {
  const versions = { ...(existing?.versions ?? {}), [doc.version]: doc };
  // Versions listed in semver order, so that the file reads as a history.
  const ordered = Object.fromEntries(Object.keys(versions).sort(semver.compare).map((v) => [v, versions[v]!]));
  const latest = latestVersion(Object.keys(ordered))!;
  const head = ordered[latest]!;
  return {
    ...(existing ?? {}),
    name: doc.name,
    description: head.description ?? '',
    keywords: head.keywords ?? [],
    'dist-tags': { ...(existing?.['dist-tags'] ?? {}), latest },
    versions: ordered,
    time: { created: existing?.time?.created ?? when, ...(existing?.time ?? {}), modified: when, [doc.version]: when },
  };
}

/** Adds the key to the folder's keys document (`-/npm/v1/keys`), before any version signed with it is listed. */
export async function listKey(root: string, key: SigningKey): Promise<void> {
  const file = join(root, REGISTRY_KEYS_PATH);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  let keys: RegistryKey[] = [];
  if (text !== undefined) {
    const data = (() => {
      try {
        return JSON.parse(text) as { keys?: unknown };
      } catch {
        return undefined;
      }
    })();
    if (!Array.isArray(data?.keys)) {
      throw new PlinthError('PLN_E_REGISTRY_DOCUMENT_INVALID', `${file} is not a keys document ({ "keys": [...] })`, { hint: 'restore it from a backup, or remove it and publish again', details: { file } });
    }
    keys = data.keys as RegistryKey[];
  }
  const listed = keys.find((k) => k.keyid === key.keyid);
  if (listed?.expires != null) {
    throw new PlinthError('PLN_E_REGISTRY_SIGN_KEY', `${key.keyid} was rotated away from on ${listed.expires.slice(0, 10)}: it signs nothing more in ${root}`, { hint: 'sign with the key the registry rotated to (`plinth registry rotate-key` printed it)', details: { keyid: key.keyid } });
  }
  const updated = withKey(keys, key);
  if (updated.length === keys.length) return;
  await mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, `${JSON.stringify({ keys: updated }, null, 2)}\n`, { mode: 0o644 });
}

function withTag(packument: Packument, tag: string, version: string, when: string): Packument {
  return { ...packument, 'dist-tags': { ...packument['dist-tags'], [tag]: version }, time: { ...(packument.time ?? {}), modified: when } };
}

/** npm's rule for a dist-tag: a word that `encodeURIComponent` leaves alone. */
const DIST_TAG = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

async function refreshIndex(root: string, packument: Packument): Promise<void> {
  const index = await readSearchIndex(root);
  const entry = searchEntry(packument);
  const current = index.objects.find((o) => o.package.name === entry.package.name);
  if (current && JSON.stringify(current) === JSON.stringify(entry)) return;
  const file = join(root, REGISTRY_SEARCH_INDEX);
  await mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, `${JSON.stringify(withEntry(index, entry))}\n`, { mode: 0o644 });
}

/** The folder's packument of a name; undefined when it has none. */
export async function readPackument(file: string): Promise<Packument | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw cause;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const parsed = packumentSchema.safeParse(data);
  if (!parsed.success) {
    throw new PlinthError('PLN_E_REGISTRY_DOCUMENT_INVALID', `${file} is not a packument (${parsed.error.issues[0]?.message ?? 'invalid'})`, {
      hint: 'restore it from a backup, or remove it and publish every version of the plugin again',
      details: { file },
    });
  }
  return parsed.data;
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
