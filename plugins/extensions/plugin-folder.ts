/**
 * Checks a folder before `plinth ext link` records it: it holds a
 * `manifest.json` that is strict JSON and a valid manifest, and the `main` it
 * names exists; or, without one, a Claude Code plugin or Gemini CLI extension
 * manifest (the sdk's `readPeerFolder`, as discovery reads it). Errors name the file, the JSON path and the fix, with the
 * codes discovery uses for the same problems.
 */
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type Manifest, PlinthError, parseManifest } from 'plinth/sdk';
import { PEER_MANIFEST_FILES, parseJsonText, readPeerFolder } from 'plinth/internal';

/** A plugin folder whose manifest is valid. */
export interface PluginFolder {
  readonly dir: string;
  readonly file: string;
  readonly manifest: Manifest;
}

/** Reads and checks `<dir>/manifest.json`, or the peer manifest of a folder without one; `workspace` expands the peers' workspace variables. */
export async function readPluginFolder(folder: string, workspace?: string): Promise<PluginFolder> {
  const dir = resolve(folder);
  const file = join(dir, 'manifest.json');
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new PlinthError('PLN_E_EXT_LINK_NOT_PLUGIN', `${dir} is not a folder`, { plugin: 'extensions', hint: 'give the folder of a plugin: the one holding its manifest.json', details: { dir } });
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      const peer = await readPeerFolder(dir, workspace === undefined ? {} : { workspace }).catch((e: unknown) => {
        throw e instanceof PlinthError ? new PlinthError(e.code, e.message, { plugin: 'extensions', ...(e.hint && { hint: e.hint }), details: e.details ?? {} }) : e;
      });
      if (peer !== undefined) return peerFolder(dir, peer.file, peer.data);
      throw new PlinthError('PLN_E_EXT_LINK_NOT_PLUGIN', `${dir} holds no manifest.json (nor ${PEER_MANIFEST_FILES.claude}, ${PEER_MANIFEST_FILES.codex} or ${PEER_MANIFEST_FILES.gemini}), so it is not a plugin folder`, {
        plugin: 'extensions',
        hint: 'give the folder that holds manifest.json (or a Claude Code or Codex plugin or Gemini CLI extension folder; a Claude Code plugin without plugin.json loads when put directly in the plugins folder of plinth), or create a plugin with `plinth plugin new <name> --dir <parent>`',
        details: { dir, file },
      });
    }
    throw new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${file}: cannot read: ${code ?? 'unknown error'}`, { plugin: 'extensions', cause: error, hint: 'make the file readable by you', details: { file } });
  }
  const json = parseJsonText(text);
  if (!json.ok) {
    const { line, column, problem } = json.error;
    throw new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${file}:${line}:${column}: invalid JSON: ${problem}`, {
      plugin: 'extensions',
      hint: 'a manifest is strict JSON: double-quoted names, no comments, no trailing commas',
      details: { file, line, column },
    });
  }
  const parsed = parseManifest(json.value);
  if (!parsed.ok) {
    throw new PlinthError('PLN_E_MANIFEST_INVALID', parsed.issues.map((i) => `${file}: ${i.path === '' ? '' : `${i.path}: `}${i.message}`).join('\n'), {
      plugin: 'extensions',
      hint: 'fix the listed fields; the manifest format is the zod schema exported by plinth/sdk (`manifestSchema`)',
      details: { file, issues: parsed.issues },
    });
  }
  const { manifest } = parsed;
  if (manifest.main !== undefined && !(await stat(resolve(dir, manifest.main)).then((s) => s.isFile(), () => false))) {
    throw new PlinthError('PLN_E_MANIFEST_INVALID', `${file}: main: "${manifest.main}" does not exist in ${dir}`, {
      plugin: 'extensions',
      hint: 'create the module, or correct "main" (it is relative to the manifest)',
      details: { file, issues: [{ path: 'main', message: 'file not found' }] },
    });
  }
  return { dir, file, manifest };
}

/** A peer's folder whose made manifest is valid (it has no `main` to check). */
function peerFolder(dir: string, file: string, data: unknown): PluginFolder {
  const parsed = parseManifest(data);
  if (!parsed.ok) {
    throw new PlinthError('PLN_E_MANIFEST_INVALID', parsed.issues.map((i) => `${file}: ${i.path === '' ? '' : `${i.path}: `}${i.message}`).join('\n'), {
      plugin: 'extensions',
      hint: 'fix the listed fields of the peer\'s manifest',
      details: { file, issues: parsed.issues },
    });
  }
  return { dir, file, manifest: parsed.manifest };
}
