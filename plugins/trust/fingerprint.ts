/**
 * What a fingerprint is made of: the canonical JSON of a definition, and the
 * state of one file (a SHA-256 of its content, or a marker when there is no
 * readable file, so that creating the file later changes the fingerprint).
 * The fingerprint itself is `snapshot.ts`'s.
 */
import { type BigIntStats, constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { PlinthError } from 'plinth/sdk';
import { hashFileHandle } from 'plinth/internal';
import type { TrustSubject } from 'plinth/sdk';

/** Kinds of subject, as the contract names them. */
export const TRUST_KINDS = ['hook', 'plugin', 'mcp-server'] as const;
/** Sources, lowest trust last. */
export const TRUST_SOURCES = ['builtin', 'user', 'workspace', 'extension', 'downloaded'] as const;

/** What one file contributes to a fingerprint. */
export type FileState =
  | { readonly path: string; readonly state: 'file'; readonly sha256: string }
  | { readonly path: string; readonly state: 'missing' | 'directory' | 'special' }
  | { readonly path: string; readonly state: 'unreadable'; readonly code: string };

/** Throws `PLN_E_TRUST_SUBJECT_INVALID` unless `subject` has the contract's shape. */
export function validateSubject(subject: TrustSubject): void {
  const problem = subjectProblem(subject);
  if (problem) {
    throw new PlinthError('PLN_E_TRUST_SUBJECT_INVALID', `invalid trust subject: ${problem}`, {
      plugin: 'trust',
      hint: 'the plugin that asked must pass { kind, id, source, definition, files (absolute paths), summary }',
    });
  }
}

function subjectProblem(subject: TrustSubject): string | undefined {
  if (typeof subject !== 'object' || subject === null) return 'expected an object';
  if (!(TRUST_KINDS as readonly unknown[]).includes(subject.kind)) return `kind must be one of ${TRUST_KINDS.join(', ')}`;
  if (typeof subject.id !== 'string' || subject.id.length === 0) return 'id must be a non-empty string';
  if (!(TRUST_SOURCES as readonly unknown[]).includes(subject.source)) {
    return `source of ${subject.kind} "${subject.id}" must be one of ${TRUST_SOURCES.join(', ')}`;
  }
  if (typeof subject.summary !== 'string') return `summary of ${subject.kind} "${subject.id}" must be a string`;
  if (!Array.isArray(subject.files)) return `files of ${subject.kind} "${subject.id}" must be an array`;
  if (subject.declaredBy !== undefined && (typeof subject.declaredBy !== 'string' || subject.declaredBy === '')) return `declaredBy of ${subject.kind} "${subject.id}" must be a plugin name`;
  const relative = subject.files.find((file) => typeof file !== 'string' || !isAbsolute(file));
  if (relative !== undefined) return `files of ${subject.kind} "${subject.id}" must be absolute paths, got ${JSON.stringify(relative)}`;
  if (subject.runs !== undefined) {
    const problem = runProblem(subject.runs);
    if (problem) return `runs of ${subject.kind} "${subject.id}": ${problem}`;
  }
  return undefined;
}

function runProblem(run: TrustSubject['runs']): string | undefined {
  if (typeof run !== 'object' || run === null) return 'expected an object';
  const isStrings = (value: unknown) => typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'string');
  if (run.command !== undefined && typeof run.command !== 'string') return 'command must be a string';
  if (run.args !== undefined && !(Array.isArray(run.args) && run.args.every((a) => typeof a === 'string'))) return 'args must be an array of strings';
  if (run.env !== undefined && !isStrings(run.env)) return 'env must map names to strings';
  if (run.headers !== undefined && !isStrings(run.headers)) return 'headers must map names to strings';
  if (run.url !== undefined && typeof run.url !== 'string') return 'url must be a string';
  if (run.cwd !== undefined && (typeof run.cwd !== 'string' || !isAbsolute(run.cwd))) return `cwd must be an absolute path, got ${JSON.stringify(run.cwd)}`;
  return undefined;
}

/**
 * JSON with object keys sorted (by UTF-16 code unit), no whitespace, and
 * JSON.stringify's rules otherwise (`toJSON`, `undefined` members omitted,
 * non-finite numbers as null). Throws on cycles and bigints.
 */
export function canonicalJson(value: unknown): string {
  return canonical(value, new Set(), '$') ?? 'null';
}

function canonical(input: unknown, ancestors: Set<object>, path: string): string | undefined {
  let value = input;
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(key: string): unknown }).toJSON('');
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      throw notJson(path, 'a bigint');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (ancestors.has(object)) throw notJson(path, 'a cycle');
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      return `[${object.map((item, i) => canonical(item, ancestors, `${path}[${i}]`) ?? 'null').join(',')}]`;
    }
    const members: string[] = [];
    for (const key of Object.keys(object).sort()) {
      const member = canonical((object as Record<string, unknown>)[key], ancestors, `${path}.${key}`);
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    ancestors.delete(object);
  }
}

function notJson(path: string, what: string): PlinthError {
  return new PlinthError('PLN_E_TRUST_SUBJECT_INVALID', `the definition of a trust subject is not JSON: ${path} is ${what}`, {
    plugin: 'trust',
    hint: 'pass a JSON-serialisable definition',
  });
}

/**
 * Where a file's hash may already be known without reading it: the hash
 * recorded at install for a file of an installed version whose stat still
 * matches the record (recorded-hashes.ts), or undefined (then it is read).
 */
export interface RecordedHashes {
  sha256Of(path: string): Promise<string | undefined>;
}

/**
 * Hashes that stand for reading a file: by its path alone before it is opened
 * (`sha256Of`, an installed plugin's recorded tree), or by the opened file's
 * identity (`byIdentity`, hash-cache.ts, told each hash read with `remember`).
 * The state of a file is the same with them or without.
 */
export interface KnownHashes extends Partial<RecordedHashes> {
  byIdentity?(path: string, identity: string, size: bigint): Promise<string | undefined>;
  remember?(path: string, identity: string, size: bigint, sha256: string): void;
}

/**
 * A path's identity: device, inode, mode, size, and mtime and ctime to the nanosecond. Any change
 * to a file sets its ctime to now, and no one but the system clock's owner can set it back, so
 * while the identity is the same the content is (hash-cache.ts, snapshot-memo.ts).
 */
export function fileIdentity(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.mode}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

/**
 * The state of one file: its content's SHA-256, or why there is none.
 * Symbolic links are followed (the target is what runs); FIFOs and devices
 * are marked, not read. With `recorded`, a hash it knows stands for reading
 * the file: the state is the same either way, so approvals do not change.
 */
export async function fileState(path: string, recorded?: KnownHashes): Promise<FileState> {
  const known = await recorded?.sha256Of?.(path);
  if (known !== undefined) return { path, state: 'file', sha256: known };
  let handle;
  try {
    // Non-blocking, so that a FIFO named as a script cannot hang the check.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
    if (code === 'ENOENT' || code === 'ENOTDIR') return { path, state: 'missing' };
    if (code === 'EISDIR') return { path, state: 'directory' };
    return { path, state: 'unreadable', code };
  }
  try {
    const info = await handle.stat({ bigint: true });
    if (info.isDirectory()) return { path, state: 'directory' };
    if (!info.isFile()) return { path, state: 'special' }; // a FIFO or a device: not read
    const identity = fileIdentity(info);
    const kept = await recorded?.byIdentity?.(path, identity, info.size);
    if (kept !== undefined) return { path, state: 'file', sha256: kept };
    const sha256 = await hashFileHandle(handle);
    recorded?.remember?.(path, identity, info.size, sha256);
    return { path, state: 'file', sha256 };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
    return code === 'EISDIR' ? { path, state: 'directory' } : { path, state: 'unreadable', code };
  } finally {
    await handle.close();
  }
}
