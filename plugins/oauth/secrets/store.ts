/**
 * The `secrets` service: each secret in the OS keychain when the probe has
 * shown it works, otherwise in the encrypted file, and the backend that holds
 * it written down in `index.json`. Reading goes by that record only: a key
 * never stored costs no keychain probe (plain HTTP servers pay nothing), and a
 * key recorded in a keychain that now fails, hangs or answers null is an
 * error, never "not signed in".
 */
import { type Logger, isPlinthError, describeError } from 'plinth/sdk';
import type { Launcher } from 'plinth/sdk';
import { z } from 'zod';
import type { KeychainAvailability, SecretBackendName, SecretStore } from 'plinth/sdk';
import { secretsError } from './errors.js';
import { FileSecrets } from './file-store.js';
import { type SecretsPaths, secretsPaths, withSecretsLock } from './folder.js';
import { Keychain, locateKeychainModule } from './keychain.js';
import { probeKeychain } from './probe.js';
import { SecretsRecord } from './record.js';

const optionsSchema = z.object({
  /** The plinth home; secrets live in `<home>/secrets/`. */
  home: z.string().min(1),
  /** `auto`: the keychain when the probe passes, else the file; `keychain`: the keychain or an error; `file`: the file only. */
  storage: z.enum(['auto', 'keychain', 'file']),
  /** A keytar-compatible module: a package name (resolved from plinth's folder), an absolute path or a file URL. */
  keychainModule: z.string().min(1),
  probeTimeoutMs: z.number().int().positive(),
  keychainTimeoutMs: z.number().int().positive(),
});

export type SecretStoreOptions = z.infer<typeof optionsSchema> & {
  readonly log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** The `launcher` service, which runs the keychain probe in a child process. */
  readonly launcher: () => Promise<Launcher>;
};

export function createSecretStore(options: SecretStoreOptions): SecretStore {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) throw new TypeError(`invalid secret store options: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  return new Store(parsed.data, options.log, options.launcher);
}

const HINT_UNREADABLE = 'unlock the OS keychain (or start its service) and retry, or sign in again';

class Store implements SecretStore {
  private readonly paths: SecretsPaths;
  private readonly file: FileSecrets;
  private readonly record: SecretsRecord;
  /** The probe's verdict, once asked for: it runs at most once per store. */
  private verdict: Promise<KeychainAvailability> | undefined;
  /** Set when the probe passed. */
  private keychain: Keychain | undefined;

  constructor(
    private readonly options: z.infer<typeof optionsSchema>,
    private readonly log: SecretStoreOptions['log'],
    private readonly launcher: SecretStoreOptions['launcher'],
  ) {
    this.paths = secretsPaths(options.home);
    this.file = new FileSecrets(this.paths);
    this.record = new SecretsRecord(this.paths.index);
  }

  async get(key: string): Promise<string | undefined> {
    checkKey(key);
    const entry = (await this.record.read()).get(key);
    if (!entry) return undefined;
    if (entry.backend === 'file') {
      const value = (await this.file.read()).get(key);
      // The file is authenticated, so its answer is trustworthy: the secret is gone (an older file put back, or it was deleted).
      if (value === undefined) this.log.warn(`${key} is recorded in ${this.paths.data} but is not in it: treating it as not stored`);
      return value;
    }
    const keychain = await this.keychainHolding(key);
    let value: string | null;
    try {
      value = await keychain.get(key);
    } catch (error) {
      throw secretsError('PLN_E_SECRETS_KEYCHAIN', `the OS keychain holds the secret ${key} but did not return it: ${problemOf(error)}`, {
        hint: HINT_UNREADABLE,
        details: { key },
        cause: error,
      });
    }
    if (value === null) {
      throw secretsError('PLN_E_SECRETS_KEYCHAIN', `the OS keychain holds the secret ${key} but did not return it: it answered that it has none (a locked keychain, or the entry was removed from it)`, {
        hint: HINT_UNREADABLE,
        details: { key },
      });
    }
    return value;
  }

  async set(key: string, value: string): Promise<SecretBackendName> {
    checkKey(key);
    const target = await this.target();
    let backend: SecretBackendName = 'file';
    if (target) {
      try {
        await target.set(key, value);
        backend = 'keychain';
      } catch (error) {
        if (this.options.storage === 'keychain') throw error;
        this.log.warn(`${key} could not be stored in the OS keychain (${problemOf(error)}): storing it in ${this.paths.data} instead`);
      }
    }
    const previous = await withSecretsLock(this.paths, async () => {
      if (backend === 'file') {
        await this.file.modifyLocked((entries) => {
          entries.set(key, value);
          return true;
        });
      }
      const entries = await this.record.read();
      const before = entries.get(key);
      entries.set(key, { backend, updatedAt: new Date().toISOString() });
      await this.record.writeLocked(entries);
      if (backend === 'keychain') await this.dropFileCopyLocked(key);
      return before;
    });
    if (backend === 'file' && previous?.backend === 'keychain') await this.dropKeychainCopy(key);
    return backend;
  }

  async delete(key: string): Promise<boolean> {
    checkKey(key);
    const entry = (await this.record.read()).get(key);
    let removed = false;
    if (entry?.backend === 'keychain') removed = await (await this.keychainHolding(key)).delete(key);
    return withSecretsLock(this.paths, async () => {
      if (entry?.backend === 'file') removed = (await this.file.modifyLocked((entries) => entries.delete(key))) || removed;
      else removed = (await this.dropFileCopyLocked(key)) || removed; // a copy left by a crash between the two writes of a set
      const entries = await this.record.read();
      if (entries.delete(key)) {
        await this.record.writeLocked(entries);
        removed = true;
      }
      return removed;
    });
  }

  async where(key: string): Promise<SecretBackendName | undefined> {
    checkKey(key);
    return (await this.record.read()).get(key)?.backend;
  }

  async keys(prefix = ''): Promise<string[]> {
    return [...(await this.record.read()).keys()].filter((key) => key.startsWith(prefix)).sort();
  }

  async describe(): Promise<{ readonly preferred: SecretBackendName; readonly keychain: KeychainAvailability }> {
    const { storage } = this.options;
    if (storage === 'file') return { preferred: 'file', keychain: { available: false, reason: 'the "storage" setting is "file"' } };
    const keychain = await this.probe();
    return { preferred: storage === 'keychain' || keychain.available ? 'keychain' : 'file', keychain };
  }

  /**
   * The keychain when new secrets go there, undefined for the file. In
   * `keychain` mode a failed probe is an error, never a quiet move to the file.
   */
  private async target(): Promise<Keychain | undefined> {
    const { storage } = this.options;
    if (storage === 'file') return undefined;
    const verdict = await this.probe();
    if (this.keychain) return this.keychain;
    if (storage === 'auto') return undefined;
    throw secretsError('PLN_E_SECRETS_KEYCHAIN', `the "storage" setting asks for the OS keychain, but it cannot be used: ${verdict.reason ?? 'the probe failed'}`, {
      hint: 'make the keychain work (install keytar, unlock the keychain, start its service), or set the oauth plugin\'s "storage" setting to "auto" or "file"',
      details: { storage, reason: verdict.reason },
    });
  }

  private probe(): Promise<KeychainAvailability> {
    this.verdict ??= (async () => {
      const location = locateKeychainModule(this.options.keychainModule);
      const verdict = location.found ? await probeKeychain(location, { timeoutMs: this.options.probeTimeoutMs, launcher: this.launcher }) : { available: false, reason: location.reason };
      if (verdict.available && location.found) this.keychain = new Keychain(location, this.options.keychainTimeoutMs);
      if (!verdict.available && this.options.storage === 'auto') {
        this.log.info(`the OS keychain is not used (${verdict.reason ?? 'the probe failed'}): secrets are kept in the encrypted file ${this.paths.data}`);
      }
      return verdict;
    })();
    return this.verdict;
  }

  /** The keychain that `key` is recorded in; an error when it cannot be used now. */
  private async keychainHolding(key: string): Promise<Keychain> {
    const verdict = await this.probe();
    if (this.keychain) return this.keychain;
    throw secretsError('PLN_E_SECRETS_KEYCHAIN', `the OS keychain holds the secret ${key} but cannot be used now: ${verdict.reason ?? 'the probe failed'}`, {
      hint: HINT_UNREADABLE,
      details: { key, reason: verdict.reason },
    });
  }

  /** Removes a stale copy of `key` from the file (the caller holds the lock); never fails the write it follows. */
  private async dropFileCopyLocked(key: string): Promise<boolean> {
    try {
      return await this.file.modifyLocked((entries) => entries.delete(key));
    } catch (error) {
      this.log.debug(`could not remove an old copy of ${key} from ${this.paths.data}: ${describeError(error)}`);
      return false;
    }
  }

  /** Removes the copy of `key` the keychain held before it moved to the file; never fails the write it follows. */
  private async dropKeychainCopy(key: string): Promise<void> {
    try {
      await this.probe();
      if (this.keychain) await this.keychain.delete(key);
      else this.log.debug(`could not remove the old copy of ${key} from the OS keychain: it cannot be used`);
    } catch (error) {
      this.log.debug(`could not remove the old copy of ${key} from the OS keychain: ${problemOf(error)}`);
    }
  }
}

function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new TypeError('a secret key is a non-empty string');
}

/** What went wrong in a keychain call, in a few words. */
function problemOf(error: unknown): string {
  if (isPlinthError(error) && typeof error.details?.problem === 'string') return error.details.problem;
  return describeError(error);
}
