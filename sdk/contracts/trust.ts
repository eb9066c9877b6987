/**
 * The `trust` service's contract: who may run what, decided by the trust
 * plugin from a SHA-256 fingerprint and the subject's source. Declared here
 * because the hooks and MCP plugins (and any third party) consume it, and
 * no plugin imports another plugin's files.
 */
import type { PluginInfo } from '../plugin.js';

/** Where a subject was defined. Decided from where it was loaded, never from a path pattern. */
export type TrustSource = 'builtin' | 'user' | 'workspace' | 'extension' | 'downloaded';

/** What the trust plugin answers for one subject (a hook, a plugin, an MCP server). */
export interface TrustVerdict {
  readonly trusted: boolean;
  /**
   * `builtin` always trusted; `user` trusted on first use and pinned; `approved`
   * by the user; `pending` never approved; `changed` approved once, changed since.
   */
  readonly level: 'builtin' | 'user' | 'approved' | 'pending' | 'changed' | 'denied';
  /** SHA-256 (hex) over the definition, what it runs and the content of the files it names. */
  readonly fingerprint: string;
  /** When not trusted: why (and, for `changed`, what changed), and the exact command that approves it. */
  readonly reason?: string;
  readonly approveCommand?: string;
  /**
   * Trusted workspace subjects only: every file inside the workspace whose
   * content the approval covers (named by `runs`, or in a folder it walked),
   * with the SHA-256 approved. Pass it to the launch (`pinned` of a launch
   * request): the child then runs exactly these bytes, from a private copy,
   * or does not start (`PLN_E_TRUST_CHANGED_AT_RUN`).
   */
  readonly pinned?: readonly PinnedFile[];
}

/** A file by absolute path, with the SHA-256 of the content that was approved. */
export interface PinnedFile {
  readonly path: string;
  readonly sha256: string;
}

/**
 * What a hook or a server runs, or where it sends data, as written. The trust
 * plugin fingerprints all of it and, by one rule for every kind, the content
 * of every file or folder that `command`, an argument or an env value names
 * (relative to `cwd`); and it shows all of it when asking, secrets masked.
 */
export interface TrustRun {
  /** The program; a path (relative to `cwd`) or a name looked up on PATH. */
  readonly command?: string;
  readonly args?: readonly string[];
  /** Environment the definition adds, as written (`${env:…}` references unresolved, so that a rotated secret needs no approval). */
  readonly env?: Readonly<Record<string, string>>;
  /** Absolute working folder: where relative words are looked up. */
  readonly cwd?: string;
  /**
   * True when `cwd` was not written but defaulted to the folder plinth runs in (a
   * workspace entry's; a user MCP server's defaults to the user folder and is not flagged):
   * it then is not part of the subject's identity, only where its relative
   * words are looked up. An explicit cwd counts.
   */
  readonly cwdIsDefault?: boolean;
  /** A remote server's address. */
  readonly url?: string;
  /** Request headers as written; shown by name only, values never. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Something the trust plugin can approve. */
export interface TrustSubject {
  readonly kind: 'hook' | 'plugin' | 'mcp-server';
  /** Stable id within its kind (a hook id, a plugin name, a server name). */
  readonly id: string;
  readonly source: TrustSource;
  /** A JSON-serialisable description; its canonical JSON goes into the fingerprint. Keep `runs`' fields out of it. */
  readonly definition: unknown;
  /** Absolute paths of more files whose content goes into the fingerprint; a missing file hashes as absent. */
  readonly files: readonly string[];
  /** What it runs, for hooks and servers: fingerprinted and shown by the trust plugin's one rule. */
  readonly runs?: TrustRun;
  /** Shown when asking and listed: what it is, in a line or two. */
  readonly summary: string;
  /**
   * For a hook or server from a plugin's manifest: that plugin's name. Not
   * fingerprinted. A subject of source `extension` or `downloaded` declared by
   * a plugin plinth installed is covered by the explicit approval of that
   * plugin (which `plinth ext install` records after showing every hook and
   * server it declares) while the plugin's folder is as approved.
   */
  readonly declaredBy?: string;
}

/** Options of {@link TrustService.check}. */
export interface CheckOptions {
  /** `false`: never ask on the terminal, even when one is there. */
  readonly interactive?: boolean;
  /** Withdraws a question on the terminal (the answer counts as no) when aborted. */
  readonly signal?: AbortSignal;
}

/** The `trust` service. */
export interface TrustService {
  /** Decides whether `subject` may run now; asks on a terminal when approval is needed and `interactive` is allowed. */
  check(subject: TrustSubject, options?: CheckOptions): Promise<TrustVerdict>;
  /** Records approval of the subject as it is now. */
  approve(subject: TrustSubject): Promise<TrustVerdict>;
  /** Forgets an approval (or a pinned user fingerprint). Returns whether there was one. */
  revoke(kind: TrustSubject['kind'], id: string): Promise<boolean>;
  /** The verdict without asking or recording anything. */
  inspect(subject: TrustSubject): Promise<TrustVerdict>;
  /**
   * The subject the trust plugin checks before importing a plugin's code: its
   * manifest and every file in its folder, as they are now. For a plugin's
   * author (`plinth plugin new` approves what it created).
   * @throws PlinthError `PLN_E_TRUST_PLUGIN_FILES` when the folder is too large to fingerprint.
   */
  pluginSubject(plugin: Pick<PluginInfo, 'name' | 'version' | 'dir' | 'manifest'>, source: TrustSource): Promise<TrustSubject>;
}

declare module '../index.js' {
  interface Services {
    trust: TrustService;
  }
}
