/**
 * The `secrets` service's contract: where secrets live (the OS keychain or an
 * encrypted file). The oauth plugin provides it and keeps its tokens there; a
 * deployment may provide its own store (`services.secrets`).
 */

/**
 * Where one secret is kept: the builtin store's `keychain` (the OS keychain) or `file` (its
 * encrypted file); a store of another kind names its own (`vault`), and describes it in
 * {@link SecretStore.describe}'s `label`.
 */
export type SecretBackendName = 'keychain' | 'file' | (string & {});

/** What the keychain probe found: whether the OS keychain can be used, and if not, why (for status and logs). */
export interface KeychainAvailability {
  readonly available: boolean;
  /** Set when not available: `keytar is not installed`, `the probe timed out after 5000 ms`, `the probe crashed (SIGSEGV)`, … */
  readonly reason?: string;
}

/**
 * The `secrets` service: small strings (a JSON document per OAuth server) kept
 * in the OS keychain when a probe in a child process has shown that it works,
 * otherwise in an AES-256-GCM encrypted file under the plinth home. Which
 * backend holds each key is recorded, so a keychain that stops answering is an
 * error, never an empty store ("logged out"). Keys are opaque (`mcp-oauth:<server>`).
 */
export interface SecretStore {
  /**
   * The value under `key`, or undefined when none was ever stored (or it was
   * deleted). Rejects with a `PLN_E_SECRETS_…` error when the backend that holds
   * it cannot be read: a tampered file, a wrong key, a keychain that fails, hangs
   * or answers nothing for a secret it holds.
   */
  get(key: string): Promise<string | undefined>;
  /** Stores `value` in the preferred backend, atomically and safely against other processes; resolves with the backend used. */
  set(key: string, value: string): Promise<SecretBackendName>;
  /** Removes `key` wherever it is recorded; true when something was removed. */
  delete(key: string): Promise<boolean>;
  /** The backend recorded for `key`, without touching any backend (no keychain probe). */
  where(key: string): Promise<SecretBackendName | undefined>;
  /** The recorded keys starting with `prefix`, sorted. */
  keys(prefix?: string): Promise<string[]>;
  /**
   * The backend new secrets go to, and the keychain probe's verdict (runs the probe when not yet
   * run; a store that never uses the OS keychain answers `available: false` with its reason).
   * `label` says where that is for a person (`auth status`): needed when `preferred` is neither
   * `keychain` nor `file`.
   */
  describe(): Promise<{ readonly preferred: SecretBackendName; readonly keychain: KeychainAvailability; readonly label?: string }>;
}

declare module '../index.js' {
  interface Services {
    secrets: SecretStore;
  }
}
