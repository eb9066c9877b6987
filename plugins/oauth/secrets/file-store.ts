/**
 * The encrypted-file backend: `secrets.enc` holds every secret as one JSON
 * object, sealed with AES-256-GCM under the key in `secrets.key` (both mode
 * 0600, in a 0700 folder). Nothing here guesses: a file that fails its tag, a
 * key that does not match, a missing key or a file other users can read is an
 * error naming the file, never an empty store and never a fresh key (a new key
 * would make every stored secret unreadable).
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { PlinthError, isPlinthError, writeFileAtomic } from 'plinth/sdk';
import { KEY_BYTES, envelopeSchema, seal, unseal } from './envelope.js';
import { secretsError } from './errors.js';
import type { SecretsPaths } from './folder.js';

/** Permission bits that let anyone but the owner in. */
const NOT_OWNER = 0o077;
const checksPermissions = process.platform !== 'win32';

/** How long a key file another process is creating right now may stay short (it is written just after its exclusive create). */
const KEY_SETTLE_ATTEMPTS = 20;
const KEY_SETTLE_DELAY_MS = 25;

export class FileSecrets {
  constructor(readonly paths: SecretsPaths) {}

  /**
   * Every secret in the file; empty when there is no data file yet. Needs no
   * lock: writers replace the file atomically.
   */
  async read(): Promise<Map<string, string>> {
    const { data: file } = this.paths;
    const raw = await readPrivate(file);
    if (raw === undefined) return new Map();
    const envelope = parseEnvelope(file, raw);
    const key = await readPrivate(this.paths.key);
    if (key === undefined) {
      throw secretsError('PLN_E_SECRETS_KEY_MISSING', `${file} exists but its key ${this.paths.key} is missing: the secrets in it cannot be decrypted`, {
        hint: `restore ${this.paths.key} from a backup; plinth does not make a new key while ${file} exists, since that would lose every secret in it. To start over, delete ${file} and sign in again`,
        details: { file, keyFile: this.paths.key },
      });
    }
    const opened = unseal(checkKey(this.paths.key, key), envelope);
    if (!opened.ok && opened.failure === 'wrong-key') {
      throw secretsError('PLN_E_SECRETS_WRONG_KEY', `${file} was encrypted with another key than the one in ${this.paths.key}`, {
        hint: `put back the ${this.paths.key} that belongs with it (from a backup, or the machine the file came from); or delete ${file} and sign in again`,
        details: { file, keyFile: this.paths.key },
      });
    }
    if (!opened.ok) {
      throw secretsError('PLN_E_SECRETS_TAMPERED', `${file} failed its integrity check: it was changed outside plinth, or damaged`, {
        hint: `plinth leaves it as it is; restore it from a backup, or delete ${file} and sign in again to each server`,
        details: { file },
      });
    }
    return parseEntries(file, opened.plaintext);
  }

  /**
   * Reads the secrets, lets `change` edit them, and writes them back when it
   * says it changed something. The caller holds the secrets lock (see
   * `withSecretsLock`), so no other writer's change is lost in between.
   */
  async modifyLocked(change: (entries: Map<string, string>) => boolean): Promise<boolean> {
    const entries = await this.read();
    if (!change(entries)) return false;
    const key = await this.keyForWriting();
    const envelope = seal(key, JSON.stringify(Object.fromEntries(entries)));
    await writeFileAtomic(this.paths.data, `${JSON.stringify(envelope)}\n`, { mode: 0o600 });
    return true;
  }

  /**
   * The key, created on the first write. `read()` ran first, so a data file
   * without a key has already failed; the exclusive create makes sure two
   * processes never make two keys even outside the lock: the loser reads the winner's.
   */
  private async keyForWriting(): Promise<Buffer> {
    const file = this.paths.key;
    const existing = await readPrivate(file);
    if (existing !== undefined) return checkKey(file, existing);
    const key = randomBytes(KEY_BYTES);
    let handle: FileHandle;
    try {
      handle = await open(file, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return this.settledKey();
      throw writeError(file, error);
    }
    try {
      await handle.chmod(0o600); // open's mode went through the umask
      await handle.writeFile(key);
      await handle.sync();
      await handle.close();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(file).catch(() => undefined); // nothing was encrypted with it yet
      throw writeError(file, error);
    }
    return key;
  }

  /** The key another process has just created: it may still be short for a moment. */
  private async settledKey(): Promise<Buffer> {
    const file = this.paths.key;
    for (let attempt = 0; ; attempt++) {
      const key = await readPrivate(file);
      if (key?.length === KEY_BYTES || attempt >= KEY_SETTLE_ATTEMPTS) return checkKey(file, key ?? Buffer.alloc(0));
      await sleep(KEY_SETTLE_DELAY_MS);
    }
  }
}

/** The bytes of `file`, or undefined when it does not exist; refuses a file other users can access. */
async function readPrivate(file: string): Promise<Buffer | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable(file, error);
  }
  try {
    // fstat on the open handle: the mode checked is the mode of the file read.
    const mode = (await handle.stat()).mode & 0o777;
    if (checksPermissions && (mode & NOT_OWNER) !== 0) {
      const octal = `0${mode.toString(8)}`;
      throw secretsError('PLN_E_SECRETS_INSECURE', `${file} can be accessed by other users (mode ${octal}); plinth does not use it like that`, {
        hint: `chmod 600 ${file}, and check that nobody else has read it`,
        details: { file, mode: octal },
      });
    }
    return await handle.readFile();
  } catch (error) {
    if (isPlinthError(error)) throw error;
    throw unreadable(file, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function checkKey(file: string, key: Buffer): Buffer {
  if (key.length === KEY_BYTES) return key;
  throw secretsError('PLN_E_SECRETS_CORRUPT', `${file} is not a secrets key: it holds ${key.length} bytes instead of ${KEY_BYTES}`, {
    hint: `restore ${file} from a backup; if there is no secrets.enc next to it, deleting it is safe (a new key is made on the next write)`,
    details: { file },
  });
}

function parseEnvelope(file: string, raw: Buffer) {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw corrupt(file, 'it is not JSON');
  }
  const parsed = envelopeSchema.safeParse(json);
  // Field names and problems only: the content is ciphertext, but a hand-edited file might hold anything.
  if (!parsed.success) throw corrupt(file, parsed.error.issues.map((issue) => `${issue.path.join('.') || 'envelope'}: ${issue.message}`).join('; '));
  return parsed.data;
}

/** The decrypted JSON object; built in a Map so that no key (`__proto__`) can be lost or change a prototype. */
function parseEntries(file: string, plaintext: string): Map<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(plaintext);
  } catch {
    throw corrupt(file, 'its decrypted content is not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw corrupt(file, 'its decrypted content is not a JSON object');
  const entries = new Map<string, string>();
  for (const [key, value] of Object.entries(json)) {
    if (typeof value !== 'string') throw corrupt(file, `the entry ${JSON.stringify(key)} is not a string`);
    entries.set(key, value);
  }
  return entries;
}

function corrupt(file: string, what: string): PlinthError {
  return secretsError('PLN_E_SECRETS_CORRUPT', `${file} cannot be understood: ${what}`, {
    hint: `restore it from a backup, or delete ${file} and sign in again to each server`,
    details: { file },
  });
}

function unreadable(file: string, cause: unknown): PlinthError {
  const errno = (cause as NodeJS.ErrnoException).code;
  return secretsError('PLN_E_SECRETS_CORRUPT', `${file} cannot be read (${errno ?? 'unknown error'})`, {
    hint: 'check that it is a file you own and can read',
    details: { file, ...(errno && { errno }) },
    cause,
  });
}

function writeError(file: string, cause: unknown): PlinthError {
  const errno = (cause as NodeJS.ErrnoException).code;
  return new PlinthError('PLN_E_FILE_WRITE', `cannot create ${file} (${errno ?? 'unknown error'})`, {
    plugin: 'oauth',
    cause,
    hint: 'check that the folder is writable by you and that the disk has room',
    details: { file, ...(errno && { errno }) },
  });
}
