/** What the peer-folder modules share: the files that mark each format, and the shapes passed between them. */
import type { PeerOrigin } from '../../sdk/manifest.js';

/** The file that marks each peer format, relative to the folder (`/`-separated). */
export const PEER_MANIFEST_FILES = { claude: '.claude-plugin/plugin.json', codex: '.codex-plugin/plugin.json', gemini: 'gemini-extension.json' } as const;

/** The version given to a Claude Code plugin whose plugin.json has none: below every released version. */
export const UNVERSIONED = '0.0.0';

/** What the folder's variables expand to besides its own path. */
export interface PeerContext {
  /** The workspace root (`${workspacePath}`, `${CLAUDE_PROJECT_DIR}`); left as written when unknown. */
  readonly workspace?: string;
  /**
   * Leave the folder's own variables (`${CLAUDE_PLUGIN_ROOT}`, `${extensionPath}`) as written and
   * name the peer's file relative to the folder: for the manifest a packer puts in a registry's
   * document, which must name no path of the publisher's machine.
   */
  readonly asWritten?: true;
}

/** The manifest made from a peer folder, not yet validated, and the file it came from. */
export interface PeerManifest {
  readonly file: string;
  readonly format: PeerOrigin['format'];
  readonly data: Record<string, unknown>;
}

/** One ignored field or note. */
export type Field = PeerOrigin['ignored'][number];
/** A JSON object as read. */
export type Json = Record<string, unknown>;

/** Reads what the synthesis needs, from a folder on disk (or, for a tarball, from its entries). */
export interface PeerFiles {
  /** The text of the file at a relative `/`-separated path, or undefined when there is none. */
  read(relative: string): Promise<string | undefined>;
  /** Whether a file or folder is at that path. */
  has(relative: string): Promise<boolean>;
  /**
   * The names in the folder at a relative path (`''`: the folder itself), a folder's name ending
   * in `/`; undefined when there is no such folder. Absent where a listing is not at hand (a
   * registry's tarball document): then no contributions are listed.
   */
  list?(relative: string): Promise<string[] | undefined>;
}
