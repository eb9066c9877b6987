/**
 * What a publisher needs from a tarball it did not pack (`npm pack` made it,
 * or a CI job): the plugin's manifest and its file list, read in memory
 * without writing a byte to disk. This is not the installer's extractor
 * (which verifies and unpacks safely); it only refuses a layout that no
 * installer would accept, before such a tarball enters a registry.
 */
import { Parser, type ReadEntry } from 'tar';
import { PlinthError } from '../sdk/errors.js';
import { type Manifest, manifestError, parseManifest } from '../sdk/manifest.js';
import { PEER_MANIFEST_FILES, type PeerFiles, readPeerFolder } from '../internal/peer/manifest.js';

/** Limits of what a publisher reads: generous for a plugin, small enough for memory. */
const MAX_ENTRIES = 20_000;
const MAX_MANIFEST_BYTES = 1024 * 1024;
const MAX_UNPACKED_BYTES = 512 * 1024 * 1024;

export interface TarballContents {
  readonly manifest: Manifest;
  /** Paths inside `package/`, sorted. */
  readonly files: readonly string[];
  readonly unpackedSize: number;
}

/**
 * Reads a plugin tarball's `package/manifest.json` and file list.
 *
 * @throws PlinthError `PLN_E_REGISTRY_TARBALL_LAYOUT` when the bytes are not a gzipped tar of
 *   regular files under `package/` with a manifest.json, `PLN_E_MANIFEST_INVALID` when the manifest
 *   is invalid.
 */
export async function readTarball(bytes: Uint8Array, label = 'the tarball'): Promise<TarballContents> {
  const files: string[] = [];
  const problems: string[] = [];
  let unpackedSize = 0;
  let manifestText: string | undefined;
  /** Small JSON files: what a Claude Code plugin's or Gemini CLI extension's manifest is made of, when there is no manifest.json. */
  const jsonTexts = new Map<string, string>();
  // Ten problems say enough; a tarball of millions of bad entries must not fill memory with them.
  const problem = (text: string) => void (problems.length < 10 && problems.push(text));
  const parser = new Parser({
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      const path = entry.path;
      if (files.length >= MAX_ENTRIES) problem(`more than ${MAX_ENTRIES} entries`);
      else if (unpackedSize + entry.size > MAX_UNPACKED_BYTES) problem(`more than ${MAX_UNPACKED_BYTES / 1024 / 1024} MiB unpacked`);
      else if (!path.startsWith('package/') || path.split('/').some((s) => s === '..')) problem(`"${path}" is outside package/`);
      else if (entry.type === 'Directory') {
        // Folders are implied by their files; nothing to record.
      } else if (entry.type !== 'File' && entry.type !== 'OldFile') problem(`"${path}" is a ${entry.type}, not a regular file`);
      else {
        const inner = path.slice('package/'.length);
        files.push(inner);
        unpackedSize += entry.size;
        if (inner.endsWith('.json') && entry.size <= MAX_MANIFEST_BYTES && (inner === 'manifest.json' || jsonTexts.size < 100)) {
          const chunks: Buffer[] = [];
          entry.on('data', (chunk: Buffer) => chunks.push(chunk));
          entry.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (inner === 'manifest.json') manifestText = text;
            else jsonTexts.set(inner, text);
          });
          return;
        }
      }
      entry.resume();
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      parser.on('error', reject);
      parser.on('end', resolve);
      parser.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    });
  } catch (cause) {
    throw layoutError(label, [`not a readable gzipped tar (${(cause as Error).message})`], cause);
  }
  if (problems.length > 0) throw layoutError(label, problems);
  if (manifestText === undefined) {
    const peer = await readPeerFolder('package', { asWritten: true }, tarballFiles(files, jsonTexts));
    if (peer === undefined) throw layoutError(label, ['no package/manifest.json (a plinth plugin has one at the root of its folder; a Claude Code plugin has .claude-plugin/plugin.json, a Codex plugin .codex-plugin/plugin.json, a Gemini CLI extension gemini-extension.json)']);
    const parsed = parseManifest(peer.data);
    if (!parsed.ok) throw manifestError(peer.data, parsed.issues, `${label}: package/${PEER_MANIFEST_FILES[peer.format]}`);
    return { manifest: parsed.manifest, files: files.sort(), unpackedSize };
  }
  let data: unknown;
  try {
    data = JSON.parse(manifestText);
  } catch (cause) {
    throw layoutError(label, ['package/manifest.json is not valid JSON'], cause);
  }
  const parsed = parseManifest(data);
  if (!parsed.ok) throw manifestError(data, parsed.issues, `${label}: package/manifest.json`);
  return { manifest: parsed.manifest, files: files.sort(), unpackedSize };
}

function layoutError(label: string, problems: readonly string[], cause?: unknown): PlinthError {
  return new PlinthError('PLN_E_REGISTRY_TARBALL_LAYOUT', `${label} is not a plugin tarball: ${problems.join('; ')}`, {
    ...(cause !== undefined && { cause }),
    hint: 'make it with `plinth registry pack <dir>` or `npm pack` in the plugin folder (a gzipped tar of regular files under package/, with package/manifest.json)',
    details: { problems },
  });
}

/** A tarball's files, for the peer manifest: the JSON texts read, and which paths exist. */
function tarballFiles(files: readonly string[], texts: ReadonlyMap<string, string>): PeerFiles {
  return {
    read: async (relative) => texts.get(relative),
    has: async (relative) => files.some((f) => f === relative || f.startsWith(`${relative}/`)),
  };
}
