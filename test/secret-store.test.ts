/**
 * The oauth plugin's `secrets` service: the OS keychain, used only after a
 * probe in a child process passed, and the AES-256-GCM file it falls back to.
 * The keychains are fake keytar modules (test/fixtures/keytar/) run for real:
 * the probe is a real child process, killed when it hangs, surviving a
 * segfault; the file is real and attacked on disk; two real processes write at
 * once. No stored value may appear in any error or log line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type PlinthError, isPlinthError } from '../sdk/index.js';
import { isAlive } from '../internal/process/tree.js';
import { FileSecrets } from '../plugins/oauth/secrets/file-store.js';
import { secretsPaths } from '../plugins/oauth/secrets/folder.js';
import { probeKeychain } from '../plugins/oauth/secrets/probe.js';
import { createLauncher } from '../plugins/launcher/index.js';
import { type SecretStoreOptions, createSecretStore } from '../plugins/oauth/secrets/store.js';
import type { SecretStore } from 'plinth/sdk';
import { type LineChild, lineChild } from './support/child.js';

/** Every child these tests start goes through a launcher, as in plinth. */
const launcher = createLauncher();

// The real probe, watched: how many probe children each scenario starts.
vi.mock('../plugins/oauth/secrets/probe.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../plugins/oauth/secrets/probe.js')>();
  return { ...actual, probeKeychain: vi.fn(actual.probeKeychain) };
});

const root = fileURLToPath(new URL('..', import.meta.url));
const fake = (name: 'working' | 'throws' | 'null' | 'hangs' | 'segfault'): string => join(root, 'test', 'fixtures', 'keytar', `${name}.mjs`);
const SET_MANY = join(root, 'test', 'fixtures', 'keytar', 'set-many.mjs');
/** Child processes start node and jiti: generous on a slow shared machine, but bounded. */
const CHILD_TIMEOUT_MS = 30_000;
const posix = process.platform !== 'win32';

/** What is stored in these tests: none of it may be seen in an error or a log line. */
const VALUE = 'tok_Q7xv9LmA2pWz4R8sKd3N';
const OTHER = 'refresh_Hb6Tn1Yc5Ue0Jg';
const STORED = [VALUE, OTHER, 'value-one', 'value-two'];

const folders: string[] = [];
const children: ChildProcess[] = [];
/** The fake keychains' folder for the current test: their state, the behaviour switch, the pids of the processes they ran in. */
let keychainDir = '';
/** The current test's log lines: none may hold a stored value. */
let logs: string[] = [];

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-secrets-'));
  folders.push(dir);
  return dir;
}

beforeEach(async () => {
  vi.mocked(probeKeychain).mockClear();
  logs = [];
  keychainDir = await temp();
  // The fakes find their shared state through it; the probe child inherits the environment.
  vi.stubEnv('PLINTH_KEYCHAIN_FAKE_DIR', keychainDir);
});

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  const pids = await probePids();
  vi.unstubAllEnvs();
  for (const line of logs) for (const value of STORED) expect(line).not.toContain(value);
  // Killed children may take a moment to finish exiting on a loaded machine; one that was never killed lives on for a minute.
  await vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 5_000, interval: 20 });
});

afterAll(async () => {
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The pids of the processes hangs.mjs or segfault.mjs ran in, or started, in this test: none may outlive it. */
async function probePids(): Promise<number[]> {
  const text = await readFile(join(keychainDir, 'pids'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map(Number);
}

/** A store on `home`; its log lines go to `logs`. */
function storeFor(home: string, options: Partial<Omit<SecretStoreOptions, 'home' | 'log'>> = {}): SecretStore {
  const line = (level: string) => (message: string, data?: Record<string, unknown>) => logs.push(`${level} ${message}${data ? ` ${JSON.stringify(data)}` : ''}`);
  return createSecretStore({
    home,
    storage: 'auto',
    keychainModule: fake('working'),
    probeTimeoutMs: 10_000,
    keychainTimeoutMs: 5_000,
    log: { debug: line('debug'), info: line('info'), warn: line('warn') },
    launcher: async () => launcher,
    ...options,
  });
}

/** The PlinthError `promise` rejects with, after checking that no stored value shows in it anywhere. */
async function rejection(promise: Promise<unknown>): Promise<PlinthError> {
  const error: unknown = await promise.then(
    (value) => ({ resolved: value }),
    (e: unknown) => e,
  );
  if (!isPlinthError(error)) throw new Error(`expected a PlinthError, got ${JSON.stringify(error)}`);
  const seen = [error.message, error.hint ?? '', JSON.stringify(error), String(error), String(error.stack)];
  for (let cause = error.cause; cause; cause = (cause as { cause?: unknown }).cause) seen.push(String(cause), JSON.stringify(cause) ?? '');
  for (const text of seen) for (const value of STORED) expect(text).not.toContain(value);
  expect(error.plugin).toBe('oauth');
  return error;
}

const secretsFolder = (home: string) => join(home, 'secrets');
const dataFile = (home: string) => join(home, 'secrets', 'secrets.enc');
const keyFile = (home: string) => join(home, 'secrets', 'secrets.key');
const indexFile = (home: string) => join(home, 'secrets', 'index.json');
const mode = async (path: string) => (await stat(path)).mode & 0o777;

/** What the working fake keychain holds, by `service/account`. */
async function fakeKeychain(): Promise<Record<string, string>> {
  return JSON.parse(await readFile(join(keychainDir, 'keychain.json'), 'utf8').catch(() => '{}')) as Record<string, string>;
}

/** What the encrypted file itself holds, whatever the record says. */
async function inFile(home: string): Promise<Record<string, string>> {
  return Object.fromEntries(await new FileSecrets(secretsPaths(home)).read());
}

/** The data file's envelope. */
async function envelope(home: string): Promise<Record<string, string | number>> {
  return JSON.parse(await readFile(dataFile(home), 'utf8')) as Record<string, string | number>;
}

describe('choosing a backend', () => {
  it('without a keychain module: the file, and no probe child is started', async () => {
    const home = await temp();
    const store = storeFor(home, { keychainModule: 'plinth-no-such-keychain-module' });

    expect(await store.describe()).toEqual({
      preferred: 'file',
      keychain: { available: false, reason: 'plinth-no-such-keychain-module is not installed (it is an optional dependency)' },
    });
    expect(await store.set('mcp-oauth:docs', VALUE)).toBe('file');
    expect(await store.get('mcp-oauth:docs')).toBe(VALUE);
    expect(await store.where('mcp-oauth:docs')).toBe('file');
    expect(probeKeychain).not.toHaveBeenCalled();
    expect(logs.filter((line) => line.startsWith('info'))).toEqual([
      `info the OS keychain is not used (plinth-no-such-keychain-module is not installed (it is an optional dependency)): secrets are kept in the encrypted file ${dataFile(home)}`,
    ]);
  });

  it('a key never stored is undefined without touching any backend (no probe)', async () => {
    const home = await temp();
    const store = storeFor(home);
    expect(await store.get('mcp-oauth:plain-http')).toBeUndefined();
    expect(await store.where('mcp-oauth:plain-http')).toBeUndefined();
    expect(await store.delete('mcp-oauth:plain-http')).toBe(false);
    expect(await store.keys()).toEqual([]);
    expect(probeKeychain).not.toHaveBeenCalled();
  });

  it('storage "file" never probes the keychain, and says why it is not used in words `auth status` can follow "the OS keychain is not used:" with', async () => {
    const home = await temp();
    const store = storeFor(home, { storage: 'file' });
    expect(await store.set('mcp-oauth:docs', VALUE)).toBe('file');
    expect(await store.get('mcp-oauth:docs')).toBe(VALUE);
    expect(await store.describe()).toEqual({ preferred: 'file', keychain: { available: false, reason: 'the "storage" setting is "file"' } });
    expect(probeKeychain).not.toHaveBeenCalled();
  });

  it('a working keychain: used, recorded, the value round-trips, nothing in the file; probed once', async () => {
    const home = await temp();
    const store = storeFor(home);

    expect(await store.describe()).toEqual({ preferred: 'keychain', keychain: { available: true } });
    expect(await store.set('mcp-oauth:docs', VALUE)).toBe('keychain');
    expect(await store.set('mcp-oauth:issues', OTHER)).toBe('keychain');
    expect(await store.get('mcp-oauth:docs')).toBe(VALUE);
    expect(await store.where('mcp-oauth:docs')).toBe('keychain');
    expect(await store.keys('mcp-oauth:')).toEqual(['mcp-oauth:docs', 'mcp-oauth:issues']);
    // Under the service "plinth", account = the key; the probe's own entry is gone.
    expect(await fakeKeychain()).toEqual({ 'plinth/mcp-oauth:docs': VALUE, 'plinth/mcp-oauth:issues': OTHER });
    await expect(stat(dataFile(home))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(keyFile(home))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(JSON.parse(await readFile(indexFile(home), 'utf8'))).toMatchObject({
      version: 1,
      entries: { 'mcp-oauth:docs': { backend: 'keychain' }, 'mcp-oauth:issues': { backend: 'keychain' } },
    });

    expect(await store.delete('mcp-oauth:docs')).toBe(true);
    expect(await store.get('mcp-oauth:docs')).toBeUndefined();
    expect(await fakeKeychain()).toEqual({ 'plinth/mcp-oauth:issues': OTHER });
    expect(probeKeychain).toHaveBeenCalledTimes(1);
  });

  it('moving a secret between backends removes the copy left in the other', async () => {
    const home = await temp();
    expect(await storeFor(home, { storage: 'file' }).set('mcp-oauth:docs', 'value-one')).toBe('file');

    const keychainStore = storeFor(home);
    expect(await keychainStore.set('mcp-oauth:docs', VALUE)).toBe('keychain');
    expect(await inFile(home)).toEqual({});
    expect(await fakeKeychain()).toEqual({ 'plinth/mcp-oauth:docs': VALUE });

    const fileStore = storeFor(home, { storage: 'file' });
    expect(await fileStore.where('mcp-oauth:docs')).toBe('keychain');

    expect(await fileStore.set('mcp-oauth:docs', OTHER)).toBe('file');
    expect(await fakeKeychain()).toEqual({});
    expect(await inFile(home)).toEqual({ 'mcp-oauth:docs': OTHER });
    expect(await keychainStore.get('mcp-oauth:docs')).toBe(OTHER);
  });
});

describe('a keychain that fails the probe', () => {
  const failing = [
    { fake: 'throws', reason: "the probe's setPassword threw: Cannot autolaunch D-Bus without X11 $DISPLAY" },
    { fake: 'null', reason: 'the keychain returned nothing for a value it had just stored (a locked keychain?)' },
    { fake: 'segfault', reason: 'the probe crashed (SIGSEGV)' },
  ] as const;

  for (const { fake: name, reason } of failing) {
    it(`${name}: "auto" falls back to the file saying why; "keychain" refuses`, async () => {
      const home = await temp();
      const auto = storeFor(home, { keychainModule: fake(name) });
      expect(await auto.describe()).toEqual({ preferred: 'file', keychain: { available: false, reason } });
      expect(await auto.set('mcp-oauth:docs', VALUE)).toBe('file');
      expect(await auto.get('mcp-oauth:docs')).toBe(VALUE);
      expect(logs).toContain(`info the OS keychain is not used (${reason}): secrets are kept in the encrypted file ${dataFile(home)}`);

      const strict = storeFor(home, { storage: 'keychain', keychainModule: fake(name) });
      const error = await rejection(strict.set('mcp-oauth:issues', OTHER));
      expect(error.code).toBe('PLN_E_SECRETS_KEYCHAIN');
      expect(error.message).toBe(`the "storage" setting asks for the OS keychain, but it cannot be used: ${reason}`);
      expect(error.hint).toContain('"auto" or "file"');
      expect(await strict.where('mcp-oauth:issues')).toBeUndefined();
      expect(await strict.describe()).toEqual({ preferred: 'keychain', keychain: { available: false, reason } });
      // Each store probed once, however often it was asked.
      expect(probeKeychain).toHaveBeenCalledTimes(2);
    });
  }

  it('the segfaulting module only ever ran in probe children, which are gone', async () => {
    const home = await temp();
    const store = storeFor(home, { keychainModule: fake('segfault') });
    expect((await store.describe()).keychain.reason).toBe('the probe crashed (SIGSEGV)');
    const pids = await probePids();
    expect(pids).toHaveLength(1);
    expect(pids).not.toContain(process.pid);
    expect(isAlive(pids[0]!)).toBe(false);
  });

  it('a hanging probe is killed at the time limit', async () => {
    const home = await temp();
    const auto = storeFor(home, { keychainModule: fake('hangs'), probeTimeoutMs: 1_000 });
    expect(await auto.describe()).toEqual({ preferred: 'file', keychain: { available: false, reason: 'the probe timed out after 1000 ms' } });
    // The probe child and the helper it started: the fake would have kept both alive for a minute.
    const pids = await probePids();
    expect(pids).toHaveLength(2);
    // SIGKILL went to the whole tree; a killed process can still be in the middle of exiting for a moment on a loaded machine.
    await vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 5_000, interval: 20 });
    expect(await auto.set('mcp-oauth:docs', VALUE)).toBe('file');

    const strict = storeFor(home, { storage: 'keychain', keychainModule: fake('hangs'), probeTimeoutMs: 1_000 });
    expect((await rejection(strict.set('mcp-oauth:docs', VALUE))).message).toContain('the probe timed out after 1000 ms');
  });
});

describe('a secret recorded in the keychain that the keychain does not give back', () => {
  /** A home whose index says the keychain holds `mcp-oauth:docs`. */
  async function storedInKeychain(): Promise<string> {
    const home = await temp();
    expect(await storeFor(home).set('mcp-oauth:docs', VALUE)).toBe('keychain');
    return home;
  }

  it('a keychain that fails the probe now: an error, never undefined', async () => {
    const home = await storedInKeychain();
    for (const name of ['throws', 'null'] as const) {
      const store = storeFor(home, { keychainModule: fake(name) });
      const error = await rejection(store.get('mcp-oauth:docs'));
      expect(error.code).toBe('PLN_E_SECRETS_KEYCHAIN');
      expect(error.message).toMatch(/^the OS keychain holds the secret mcp-oauth:docs but cannot be used now: /);
      expect(error.hint).toContain('sign in again');
      // Still recorded: a sign-out cannot pretend it removed what it could not reach.
      expect((await rejection(store.delete('mcp-oauth:docs'))).code).toBe('PLN_E_SECRETS_KEYCHAIN');
      expect(await store.where('mcp-oauth:docs')).toBe('keychain');
    }
  });

  it('a keychain that forgot it (answers null): an error, not "signed out"', async () => {
    const home = await storedInKeychain();
    const store = storeFor(home);
    expect(await store.get('mcp-oauth:docs')).toBe(VALUE); // the probe passes
    await unlink(join(keychainDir, 'keychain.json'));
    const error = await rejection(store.get('mcp-oauth:docs'));
    expect(error.code).toBe('PLN_E_SECRETS_KEYCHAIN');
    expect(error.message).toBe(
      'the OS keychain holds the secret mcp-oauth:docs but did not return it: it answered that it has none (a locked keychain, or the entry was removed from it)',
    );
  });

  it('a keychain that throws or hangs after the probe passed: an error within the time limit', async () => {
    const home = await storedInKeychain();
    const store = storeFor(home, { keychainTimeoutMs: 300 });
    expect(await store.describe()).toMatchObject({ keychain: { available: true } });

    await writeFile(join(keychainDir, 'behaviour'), 'throw');
    const threw = await rejection(store.get('mcp-oauth:docs'));
    expect(threw.message).toBe('the OS keychain holds the secret mcp-oauth:docs but did not return it: getPassword threw: fake keychain refused getPassword(mcp-oauth:docs)');

    await writeFile(join(keychainDir, 'behaviour'), 'hang');
    const hung = await rejection(store.get('mcp-oauth:docs'));
    expect(hung.message).toBe('the OS keychain holds the secret mcp-oauth:docs but did not return it: getPassword timed out after 300 ms');
  });

  it('a keychain that quotes the password in its error: the password is cut out', async () => {
    const home = await temp();
    const strict = storeFor(home, { storage: 'keychain' });
    const auto = storeFor(home);
    // Both probes pass; the keychain fails afterwards.
    expect((await strict.describe()).keychain.available).toBe(true);
    expect((await auto.describe()).keychain.available).toBe(true);
    await writeFile(join(keychainDir, 'behaviour'), 'throw');

    const error = await rejection(strict.set('mcp-oauth:docs', VALUE));
    expect(error.code).toBe('PLN_E_SECRETS_KEYCHAIN');
    expect(error.message).toBe('the OS keychain failed for mcp-oauth:docs: setPassword threw: fake keychain refused setPassword(mcp-oauth:docs, [redacted])');
    expect(await strict.where('mcp-oauth:docs')).toBeUndefined();

    // In "auto", the same failure sends the secret to the file, with a warning that does not quote it either.
    expect(await auto.set('mcp-oauth:docs', VALUE)).toBe('file');
    expect(logs).toContain(
      `warn mcp-oauth:docs could not be stored in the OS keychain (setPassword threw: fake keychain refused setPassword(mcp-oauth:docs, [redacted])): storing it in ${dataFile(home)} instead`,
    );
    expect(await auto.get('mcp-oauth:docs')).toBe(VALUE);
  });
});

describe('the encrypted file', () => {
  /** A home with two secrets in the file. */
  async function fileHome(): Promise<{ home: string; store: SecretStore }> {
    const home = await temp();
    const store = storeFor(home, { storage: 'file' });
    await store.set('mcp-oauth:docs', VALUE);
    await store.set('mcp-oauth:issues', OTHER);
    return { home, store };
  }

  it.skipIf(!posix)('is private: folder 0700, key, data and record 0600', async () => {
    const { home } = await fileHome();
    expect(await mode(secretsFolder(home))).toBe(0o700);
    expect(await mode(keyFile(home))).toBe(0o600);
    expect(await mode(dataFile(home))).toBe(0o600);
    expect(await mode(indexFile(home))).toBe(0o600);
    expect((await readFile(keyFile(home))).length).toBe(32);
  });

  it('holds ciphertext only, with a fresh IV for every write', async () => {
    const { home, store } = await fileHome();
    const raw = await readFile(dataFile(home), 'utf8');
    for (const value of [VALUE, OTHER]) {
      expect(raw).not.toContain(value);
      expect(raw).not.toContain(Buffer.from(value).toString('base64').slice(0, 16));
    }
    const first = await envelope(home);
    expect(first).toMatchObject({ v: 1, alg: 'aes-256-gcm', kid: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(Buffer.from(String(first.iv), 'base64')).toHaveLength(12);

    await store.set('mcp-oauth:docs', VALUE); // the same content again
    const second = await envelope(home);
    expect(second.iv).not.toBe(first.iv);
    expect(second.data).not.toBe(first.data);
    expect(second.kid).toBe(first.kid);
  });

  for (const field of ['data', 'tag'] as const) {
    it(`a flipped byte in "${field}" is PLN_E_SECRETS_TAMPERED, and the file is left as it is`, async () => {
      const { home, store } = await fileHome();
      const sealed = await envelope(home);
      const bytes = Buffer.from(String(sealed[field]), 'base64');
      bytes[0]! ^= 0x01;
      const tampered = JSON.stringify({ ...sealed, [field]: bytes.toString('base64') });
      await writeFile(dataFile(home), tampered);

      const error = await rejection(store.get('mcp-oauth:docs'));
      expect(error.code).toBe('PLN_E_SECRETS_TAMPERED');
      expect(error.message).toContain(dataFile(home));
      expect(error.details).toEqual({ file: dataFile(home) });
      // A write must not paper over it either.
      expect((await rejection(store.set('mcp-oauth:new', 'value-one'))).code).toBe('PLN_E_SECRETS_TAMPERED');
      expect(await readFile(dataFile(home), 'utf8')).toBe(tampered);
    });
  }

  it('another key is PLN_E_SECRETS_WRONG_KEY', async () => {
    const { home, store } = await fileHome();
    await writeFile(keyFile(home), randomBytes(32), { mode: 0o600 });
    const error = await rejection(store.get('mcp-oauth:docs'));
    expect(error.code).toBe('PLN_E_SECRETS_WRONG_KEY');
    expect(error.message).toBe(`${dataFile(home)} was encrypted with another key than the one in ${keyFile(home)}`);
  });

  it('a missing key is PLN_E_SECRETS_KEY_MISSING, and no new key is made', async () => {
    const { home, store } = await fileHome();
    const before = await readFile(dataFile(home), 'utf8');
    await unlink(keyFile(home));
    expect((await rejection(store.get('mcp-oauth:docs'))).code).toBe('PLN_E_SECRETS_KEY_MISSING');
    expect((await rejection(store.set('mcp-oauth:new', 'value-two'))).code).toBe('PLN_E_SECRETS_KEY_MISSING');
    await expect(stat(keyFile(home))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(dataFile(home), 'utf8')).toBe(before);
  });

  it('a data file deleted by hand: its secrets read as not stored, with a warning', async () => {
    const { home, store } = await fileHome();
    await unlink(dataFile(home));
    // Unlike a keychain that does not answer, the file can be read: it has no such secret.
    expect(await store.get('mcp-oauth:docs')).toBeUndefined();
    expect(logs).toContain(`warn mcp-oauth:docs is recorded in ${dataFile(home)} but is not in it: treating it as not stored`);
    expect(await store.set('mcp-oauth:docs', VALUE)).toBe('file'); // signing in again works, with the same key
    expect(await store.get('mcp-oauth:docs')).toBe(VALUE);
  });

  it('a file that is not an envelope is PLN_E_SECRETS_CORRUPT', async () => {
    const { home, store } = await fileHome();
    await writeFile(dataFile(home), '{"v":1,"alg":"aes-256-gcm"');
    const error = await rejection(store.get('mcp-oauth:docs'));
    expect(error.code).toBe('PLN_E_SECRETS_CORRUPT');
    expect(error.message).toBe(`${dataFile(home)} cannot be understood: it is not JSON`);
  });

  it.skipIf(!posix)('a key or data file other users can read is PLN_E_SECRETS_INSECURE', async () => {
    const { home, store } = await fileHome();
    for (const file of [keyFile(home), dataFile(home)]) {
      await chmod(file, 0o644);
      const error = await rejection(store.get('mcp-oauth:docs'));
      expect(error.code).toBe('PLN_E_SECRETS_INSECURE');
      expect(error.message).toContain(`${file} can be accessed by other users (mode 0644)`);
      expect(error.hint).toContain(`chmod 600 ${file}`);
      await chmod(file, 0o600);
    }
    expect(await store.get('mcp-oauth:docs')).toBe(VALUE);
  });

  it('two processes writing at once both land every secret', { timeout: CHILD_TIMEOUT_MS * 2 }, async () => {
    const home = await temp();
    const count = 20;
    const writers = ['alpha', 'beta'].map((prefix) => writer([home, prefix, String(count)]));
    expect(await Promise.all(writers.map((w) => w.next()))).toEqual(['ready', 'ready']);
    for (const { child } of writers) child.stdin!.end('go\n');
    expect(await Promise.all(writers.map((w) => w.next()))).toEqual(['done', 'done']);
    await Promise.all(writers.map(({ child }) => (child.exitCode === null ? once(child, 'exit') : undefined)));
    expect(writers.map(({ child }) => child.exitCode)).toEqual([0, 0]);

    const store = storeFor(home, { storage: 'file' });
    const expected = ['alpha', 'beta'].flatMap((prefix) => Array.from({ length: count }, (_, n) => `${prefix}-${n}`));
    expect(await store.keys()).toEqual([...expected].sort());
    for (const key of expected) expect(await store.get(key)).toBe(`value-${key}`);
  });
});

it('no stored value appears in the errors of every failure above, nor in their JSON', async () => {
  // `rejection` scans each error as it is met; this gathers one of each kind in one place.
  const home = await temp();
  const store = storeFor(home, { storage: 'file' });
  await store.set('mcp-oauth:docs', VALUE);
  const sealed = await envelope(home);
  const errors: PlinthError[] = [];
  await writeFile(dataFile(home), JSON.stringify({ ...sealed, data: Buffer.from('x'.repeat(40)).toString('base64') }));
  errors.push(await rejection(store.get('mcp-oauth:docs')));
  await writeFile(dataFile(home), JSON.stringify(sealed));
  await writeFile(keyFile(home), randomBytes(32));
  errors.push(await rejection(store.get('mcp-oauth:docs')));
  await unlink(keyFile(home));
  errors.push(await rejection(store.get('mcp-oauth:docs')));
  await writeFile(dataFile(home), VALUE);
  errors.push(await rejection(store.get('mcp-oauth:docs'))); // a "file" that is the value itself is not quoted back
  expect(errors.map((error) => error.code)).toEqual(['PLN_E_SECRETS_TAMPERED', 'PLN_E_SECRETS_WRONG_KEY', 'PLN_E_SECRETS_KEY_MISSING', 'PLN_E_SECRETS_CORRUPT']);
  for (const error of errors) expect(JSON.stringify(error)).not.toContain(VALUE);
});

/** Starts set-many.mjs; `next()` is its next line of output, bounded in time and naming its stderr on failure. */
function writer(args: string[]): LineChild {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_OPTIONS' && !key.startsWith('VITEST')));
  const started = lineChild(SET_MANY, args, { cwd: root, env, timeoutMs: CHILD_TIMEOUT_MS, name: 'writer' });
  children.push(started.child);
  return started;
}
