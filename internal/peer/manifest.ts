/**
 * Peer folders as plinth plugins: a Claude Code plugin (`.claude-plugin/plugin.json`,
 * with `hooks/hooks.json` and `.mcp.json`) or a Gemini CLI extension
 * (`gemini-extension.json`, with `hooks/hooks.json`) becomes a declaration-only
 * plinth manifest, so that it is found, linked, installed, enabled, disabled and
 * reloaded like any plugin. Nothing here runs anything: it reads JSON files and
 * writes a manifest, which the caller validates with `parseManifest`.
 *
 * What the manifest holds:
 * - `name` (made npm-style when the peer's is not: lowercased, other characters
 *   `-`, said in `peer.notes`), `version` (`0.0.0` for a Claude plugin without
 *   one; a loose one such as `1.0` made semver), `description`;
 * - `mcpServers`, with the peer's variables expanded (`${CLAUDE_PLUGIN_ROOT}`,
 *   `${CLAUDE_PROJECT_DIR}`, `${extensionPath}`, `${workspacePath}`, `${/}`)
 *   and its environment references in `env`/`headers` written as plinth's
 *   (`${VAR}` → `${env:VAR}`; a declared setting's → `${setting:<plugin>.<name>}`);
 * - `settings` from Gemini's `settings` (named by their `envVar`) and Claude's
 *   `userConfig` (env `CLAUDE_PLUGIN_OPTION_<KEY>`): plinth hands a plugin's
 *   settings to its servers and hooks as those variables, as the peers do;
 * - `hooks` in the peer's own shape (`{ "<PeerEvent>": [{ matcher, hooks: [...] }] }`),
 *   read by the hooks plugin in the dialect `peer.format` names; Gemini's
 *   variables are expanded (Gemini hydrates hooks.json), Claude's
 *   `${CLAUDE_PLUGIN_ROOT}` is left for the hook runner, which sets it;
 * - `peer`: the format, the file, and every field or folder plinth does not
 *   honour (`ignored`) or reads differently (`notes`), for `plinth ext info`;
 *   and per server the file and JSON path it was written at and the peer's
 *   spelling of each reference (`servers`), so that problems quote the author's text.
 */
import { readFile } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { describeCause, PlinthError } from '../../sdk/errors.js';
import { safeLine } from '../../sdk/format.js';
import { claudePlugin, isClaudeLayout } from './claude.js';
import { codexPlugin } from './codex.js';
import { geminiExtension } from './gemini.js';
import { noteRead } from '../fs/read-paths.js';
import { isMissing } from './shared.js';
import { PEER_MANIFEST_FILES, type PeerContext, type PeerFiles, type PeerManifest } from './types.js';

export { PEER_MANIFEST_FILES, UNVERSIONED } from './types.js';
export type { PeerContext, PeerFiles, PeerManifest } from './types.js';

/**
 * {@link PeerFiles} of a folder on disk (`names`: its listing, when the caller has it). The folder is listed once, and a path whose first name
 * is not in it is answered from the listing: a peer folder is asked about a dozen names (its
 * component folders), most of them absent, and a folder that is no plugin about two.
 */
export function folderFiles(dir: string, names?: Promise<readonly string[]>): PeerFiles {
  const at = (relative: string) => path.join(dir, ...relative.split('/'));
  let listing: Promise<ReadonlySet<string>> | undefined;
  const present = async (relative: string) => {
    // The caller's listing (discovery lists the folder anyway); a folder that cannot be listed holds nothing.
    listing ??= (names ?? (noteRead(dir), readdir(dir))).then((found) => new Set(found), () => new Set<string>());
    return (await listing).has(relative.split('/')[0] ?? '');
  };
  return {
    async read(relative) {
      if (!(await present(relative))) return undefined;
      try {
        // The callback form: fs.promises.readFile goes through a FileHandle, several times slower on small files (see kernel/discovery.ts).
        noteRead(at(relative));
        return await new Promise<string>((resolve, reject) => readFile(at(relative), 'utf8', (error, text) => (error ? reject(error) : resolve(text))));
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw new PlinthError('PLN_E_MANIFEST_UNREADABLE', `${safeLine(at(relative))}: cannot read: ${describeCause(error)}`, {
          cause: error,
          hint: 'make it readable by plinth (check its permissions), or remove it; every other plugin still loads',
          details: { file: at(relative) },
        });
      }
    },
    has: async (relative) => (await present(relative)) && (!relative.includes('/') || (noteRead(at(relative)), await stat(at(relative)).then(() => true, () => false))),
    async list(relative) {
      if (relative !== '' && !(await present(relative))) return undefined;
      noteRead(relative === '' ? dir : at(relative));
      const entries = await readdir(relative === '' ? dir : at(relative), { withFileTypes: true }).catch(() => undefined);
      return entries?.filter((e) => !e.name.startsWith('.')).map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
    },
  };
}

/** How {@link readPeerFolder} may recognise a folder. */
export interface PeerFolderOptions {
  /**
   * Also read a folder in Claude Code's standard layout alone (`hooks/hooks.json`, `.mcp.json`,
   * `commands/`, `agents/`, `skills/`, `output-styles/`, without `.claude-plugin/plugin.json`) as
   * a Claude Code plugin named after the folder. Only where the caller knows the folder is meant
   * as a plugin: a folder directly in a plugin folder plinth scans (discovery), a plugin's folder
   * already found. Never while searching deeper (a project with its own `.mcp.json` is no plugin),
   * nor for a folder to link (a linked folder needs a manifest: one whose manifest is removed is no
   * plugin any more).
   */
  readonly layout?: boolean;
}

/**
 * The manifest of the peer folder `dir`, or undefined when it holds no peer
 * manifest (and, with `options.layout`, is not in Claude Code's standard layout). A folder with
 * several is read as a Claude Code plugin first, then a Codex plugin, then a Gemini CLI
 * extension, and the others are listed as ignored.
 * @throws PlinthError `PLN_E_MANIFEST_UNREADABLE` (a file cannot be read or is not JSON), `PLN_E_MANIFEST_INVALID` (no usable name or version).
 */
export async function readPeerFolder(dir: string, context: PeerContext = {}, files: PeerFiles = folderFiles(dir), options: PeerFolderOptions = {}): Promise<PeerManifest | undefined> {
  const root = path.resolve(dir);
  const claude = await files.read(PEER_MANIFEST_FILES.claude);
  if (claude !== undefined) return claudePlugin(root, claude, files, context);
  const codex = await files.read(PEER_MANIFEST_FILES.codex);
  if (codex !== undefined) return codexPlugin(root, codex, files, context);
  const gemini = await files.read(PEER_MANIFEST_FILES.gemini);
  if (gemini !== undefined) return geminiExtension(root, gemini, files, context);
  if (options.layout && (await isClaudeLayout(files))) return claudePlugin(root, undefined, files, context);
  return undefined;
}
