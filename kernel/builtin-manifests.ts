/**
 * The builtin plugins' manifests as build.mjs parsed them (dist/builtin-manifests.json):
 * discovery takes the parsed manifest of a builtin `manifest.json` whose text is
 * the one the build read, instead of validating it again at every start (the
 * first zod parse of a process is most of a manifest's cost). A manifest whose
 * text differs (edited after the build), any other plugin's, and every
 * manifest when running from the sources (whose schema may be newer than the
 * build's) is parsed as before.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest } from '../sdk/manifest.js';
import { builtinPluginsDir, packageRoot } from './paths.js';

declare const PLINTH_BUNDLE: true | undefined;

/** `<builtin dir>/<name>/manifest.json` → its text at build time and its parsed manifest, as JSON. */
let table: Map<string, { text: string; manifest: string }> | undefined;

function load(): Map<string, { text: string; manifest: string }> {
  const map = new Map<string, { text: string; manifest: string }>();
  if (typeof PLINTH_BUNDLE === 'undefined') return map;
  try {
    const dir = builtinPluginsDir();
    const shipped = JSON.parse(readFileSync(join(packageRoot(), 'dist', 'builtin-manifests.json'), 'utf8')) as Record<string, { text: string; manifest: string }>;
    for (const [name, entry] of Object.entries(shipped)) map.set(join(dir, name, 'manifest.json'), entry);
  } catch {
    // No table (a build without one, a damaged file): every manifest is parsed.
  }
  return map;
}

/** The build's parse of `file` when `text` is what it read; a fresh object at each call. */
export function prebuiltManifest(file: string, text: string): Manifest | undefined {
  table ??= load();
  const entry = table.get(file);
  return entry !== undefined && entry.text === text ? (JSON.parse(entry.manifest) as Manifest) : undefined;
}
