/**
 * The OS-keychain backend, over a keytar-compatible module (`getPassword`,
 * `setPassword`, `deletePassword`) imported on first use: keytar is an
 * optional native dependency, and loading it costs time and can fail in ways
 * plinth must survive. Every call has a time limit, since a keychain waiting
 * for an unlock dialog or a dead D-Bus never answers. Use it only after the
 * probe (probe.ts) has passed: a library that segfaults must do so in a child.
 */
import { describeError } from 'plinth/sdk';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { secretsError } from './errors.js';

/** The keychain service name every plinth secret is filed under; the account is the secret's key. */
export const KEYCHAIN_SERVICE = 'plinth';

/** Where the keychain module is, or why there is none. */
export type KeychainModuleLocation = { readonly found: true; readonly url: string; readonly path: string } | { readonly found: false; readonly reason: string };

/**
 * Finds the module named by the `keychainModule` setting without loading it:
 * an absolute path or a file URL as given, a bare name resolved from plinth's
 * own folder (where an optional dependency is installed).
 */
export function locateKeychainModule(spec: string): KeychainModuleLocation {
  let path: string;
  let url: string;
  if (spec.startsWith('file:')) {
    try {
      path = fileURLToPath(spec);
    } catch {
      return { found: false, reason: `the keychain module ${spec} is not a valid file URL` };
    }
    url = spec; // kept whole: a query string reaches the module
  } else if (isAbsolute(spec)) {
    path = spec;
    url = pathToFileURL(spec).href;
  } else {
    try {
      path = createRequire(import.meta.url).resolve(spec);
    } catch {
      return { found: false, reason: `${spec} is not installed (it is an optional dependency)` };
    }
    url = pathToFileURL(path).href;
  }
  if (!existsSync(path)) return { found: false, reason: `the keychain module ${path} does not exist` };
  return { found: true, url, path };
}

const keytarSchema = z.object({
  getPassword: z.custom<(service: string, account: string) => Promise<unknown>>((value) => typeof value === 'function'),
  setPassword: z.custom<(service: string, account: string, password: string) => Promise<unknown>>((value) => typeof value === 'function'),
  deletePassword: z.custom<(service: string, account: string) => Promise<unknown>>((value) => typeof value === 'function'),
});

type Keytar = z.infer<typeof keytarSchema>;

/** The module's API, from its named exports or its default export (keytar is CommonJS). */
function keytarApi(loaded: unknown): Keytar | undefined {
  for (const candidate of [loaded, (loaded as { default?: unknown } | undefined)?.default]) {
    const parsed = keytarSchema.safeParse(candidate);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

type Operation = 'load' | 'getPassword' | 'setPassword' | 'deletePassword';

export class Keychain {
  private loaded: Promise<Keytar> | undefined;

  constructor(
    private readonly location: Extract<KeychainModuleLocation, { found: true }>,
    private readonly timeoutMs: number,
  ) {}

  /** The secret under `account`, or null when the keychain says it has none. */
  async get(account: string): Promise<string | null> {
    const value = await this.call('getPassword', account, (api) => api.getPassword(KEYCHAIN_SERVICE, account));
    return typeof value === 'string' ? value : null;
  }

  async set(account: string, value: string): Promise<void> {
    await this.call('setPassword', account, (api) => api.setPassword(KEYCHAIN_SERVICE, account, value), value);
  }

  /** Whether there was a secret to delete. */
  async delete(account: string): Promise<boolean> {
    return (await this.call('deletePassword', account, (api) => api.deletePassword(KEYCHAIN_SERVICE, account))) === true;
  }

  private load(): Promise<Keytar> {
    this.loaded ??= bounded(import(this.location.url) as Promise<unknown>, this.timeoutMs).then((loaded) => {
      const api = keytarApi(loaded);
      if (!api) throw new Error('it does not export getPassword, setPassword and deletePassword');
      return api;
    });
    // A failed load is not cached: the next call tries again (the keychain may have been unlocked meanwhile).
    this.loaded.catch(() => (this.loaded = undefined));
    return this.loaded;
  }

  /**
   * Runs one keychain call within the time limit. The module's error message is
   * kept (it says what is wrong: no D-Bus, a locked collection) but never the
   * error itself, and `value` is cut out of it: a secret must not ride along.
   */
  private async call<T>(operation: Exclude<Operation, 'load'>, account: string, run: (api: Keytar) => Promise<T>, value?: string): Promise<T> {
    let api: Keytar;
    try {
      api = await this.load();
    } catch (error) {
      throw this.failure('load', account, error);
    }
    try {
      return await bounded(Promise.resolve().then(() => run(api)), this.timeoutMs);
    } catch (error) {
      throw this.failure(operation, account, error, value);
    }
  }

  private failure(operation: Operation, account: string, error: unknown, value?: string) {
    const module = this.location.path;
    let what: string;
    if (error instanceof KeychainTimeout) what = operation === 'load' ? `loading ${module} timed out after ${error.ms} ms` : `${operation} timed out after ${error.ms} ms`;
    else {
      const said = redact(describeError(error), value);
      what = operation === 'load' ? `${module} could not be loaded: ${said}` : `${operation} threw: ${said}`;
    }
    return secretsError('PLN_E_SECRETS_KEYCHAIN', `the OS keychain failed for ${account}: ${what}`, {
      hint: 'unlock the keychain (or start its service) and retry; or set the oauth plugin\'s "storage" setting to "file"',
      // `problem` lets a caller say it in its own words (the store: "holds the secret but did not return it").
      details: { account, operation, module, problem: what },
    });
  }
}

class KeychainTimeout extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/** `promise`, or a KeychainTimeout after `ms`. The timer is cleared either way, so a promise that never settles holds nothing alive. */
function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new KeychainTimeout(ms)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

function redact(text: string, value: string | undefined): string {
  return value ? text.split(value).join('[redacted]') : text;
}
