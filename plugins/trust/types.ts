/** The trust plugin's service: who may run what, by SHA-256 fingerprint. */
import type { PluginInfo } from 'plinth/sdk';

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
  /** SHA-256 (hex) over the definition and the content of the files it runs. */
  readonly fingerprint: string;
  /** When not trusted: why, and the exact command that approves it. */
  readonly reason?: string;
  readonly approveCommand?: string;
}

/** Something the trust plugin can approve. */
export interface TrustSubject {
  readonly kind: 'hook' | 'plugin' | 'mcp-server';
  /** Stable id within its kind (a hook id, a plugin name, a server name). */
  readonly id: string;
  readonly source: TrustSource;
  /** A JSON-serialisable description; its canonical JSON goes into the fingerprint. */
  readonly definition: unknown;
  /** Absolute paths of files whose content goes into the fingerprint (a hook's script); a missing file hashes as absent. */
  readonly files: readonly string[];
  /** Shown when asking: what will run. */
  readonly summary: string;
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

declare module 'plinth/sdk' {
  interface Services {
    trust: TrustService;
  }
}
