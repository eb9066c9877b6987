/**
 * The user's grants: `$PLINTH_HOME/sandbox/grants.json` for answers given
 * "always" (and `plinth perms grant`), written under a lock and replaced
 * atomically (sdk/files.ts), so that a crash or a concurrent `plinth perms`
 * leaves the previous grants whole; and, in memory, the answers given "for
 * the session", which last as long as this host process.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { PlinthError, withFileLock, writeFileAtomic, type Permissions } from 'plinth/sdk';
import { grantedPermissionsSchema } from './items.js';

const itemSchema = z.object({
  kind: z.enum(['filesystem.read', 'filesystem.write', 'network', 'network.deny', 'env', 'shell', 'mcp']),
  value: z.string().min(1),
});

/** One plugin's stored grant. */
export const storedGrantSchema = z.object({
  /** The plugin version the user saw when granting (shown; the comparison is by permissions). */
  version: z.string(),
  /** Exactly what was granted; `env` items keyed by where their value comes from (items.ts `envGrant`). */
  permissions: grantedPermissionsSchema,
  /** Items the user revoked one by one: the plugin runs without them and is not asked about them again. */
  withheld: z.array(itemSchema).default([]),
  /** `plinth perms grant <plugin> --unconfined`: it may run without an OS sandbox where none is available. */
  unconfined: z.boolean().optional(),
  /**
   * Where the granted plugin came from (`user`, `workspace`, `downloaded`, …): a plugin of the
   * same name from elsewhere (a cloned project's) does not inherit the grant.
   */
  source: z.string().optional(),
  grantedAt: z.string(),
});
export type StoredGrant = z.output<typeof storedGrantSchema>;

export const grantsFileSchema = z.object({
  grantsVersion: z.literal(1),
  plugins: z.record(z.string(), storedGrantSchema),
});
export type GrantsFile = z.output<typeof grantsFileSchema>;

/** A grant for this host process ("session"). */
export interface SessionGrant {
  readonly version: string;
  readonly permissions: Permissions;
  /** As {@link StoredGrant}'s `source`. */
  readonly source?: string;
}

/** Session grants of every store of this process, by home and plugin: a reloaded sandbox plugin keeps them. */
const sessions: Map<string, SessionGrant> = ((globalThis as Record<symbol, unknown>)[Symbol.for('plinth.sandbox.sessionGrants')] ??= new Map<string, SessionGrant>()) as Map<string, SessionGrant>;

export function grantsFile(home: string): string {
  return join(home, 'sandbox', 'grants.json');
}

export class GrantStore {
  readonly file: string;

  constructor(private readonly home: string) {
    this.file = grantsFile(home);
  }

  /**
   * The stored grants; none when the file does not exist.
   * @throws PlinthError `PLN_E_PERM_GRANTS_INVALID` when it is not a grants file (nothing is granted then: fail closed).
   */
  async read(): Promise<GrantsFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { grantsVersion: 1, plugins: {} };
      throw this.invalid(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`, error);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw this.invalid('is not JSON', error);
    }
    const parsed = grantsFileSchema.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw this.invalid(`is not a grants file: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`);
    }
    return parsed.data;
  }

  async get(plugin: string): Promise<StoredGrant | undefined> {
    return (await this.read()).plugins[plugin];
  }

  /** Changes the stored grants under the file's lock; `change` returns the new entry, or undefined to remove it. */
  async update(plugin: string, change: (current: StoredGrant | undefined) => StoredGrant | undefined): Promise<StoredGrant | undefined> {
    await mkdir(join(this.home, 'sandbox'), { recursive: true });
    return withFileLock(`${this.file}.lock`, async () => {
      const data = await this.read();
      const next = change(data.plugins[plugin]);
      const plugins = { ...data.plugins };
      if (next === undefined) delete plugins[plugin];
      else plugins[plugin] = storedGrantSchema.parse(next);
      await writeFileAtomic(this.file, `${JSON.stringify({ grantsVersion: 1, plugins }, null, 2)}\n`, { mode: 0o600 });
      return next;
    });
  }

  session(plugin: string): SessionGrant | undefined {
    return sessions.get(this.key(plugin));
  }

  setSession(plugin: string, grant: SessionGrant): void {
    sessions.set(this.key(plugin), grant);
  }

  clearSession(plugin: string): void {
    sessions.delete(this.key(plugin));
  }

  private key(plugin: string): string {
    return `${this.home}\0${plugin}`;
  }

  private invalid(why: string, cause?: unknown): PlinthError {
    return new PlinthError('PLN_E_PERM_GRANTS_INVALID', `${this.file} ${why}; nothing it holds is granted until it is fixed`, {
      ...(cause !== undefined && { cause }),
      hint: `fix or delete ${this.file} (deleting it withdraws every stored grant; plinth asks again), then run \`plinth perms list\``,
      details: { file: this.file },
    });
  }
}

/**
 * Stores "always" for `id` with exactly `permissions`, as `plinth perms grant` does: for
 * callers that grant on the user's behalf (a test of a confined run, an installer the user answered).
 */
export async function storeGrant(home: string, id: string, permissions: Permissions, options: GrantOptions = {}): Promise<void> {
  await grantDeclared(new GrantStore(home), id, permissions, options);
}

interface GrantOptions {
  readonly version?: string;
  readonly unconfined?: boolean;
  readonly source?: string;
}

/** {@link storeGrant} into a store at hand: everything `permissions` holds, nothing withheld. */
export async function grantDeclared(store: GrantStore, id: string, permissions: Permissions, options: GrantOptions = {}): Promise<void> {
  await store.update(id, (current) => ({
    version: options.version ?? current?.version ?? 'unknown',
    permissions,
    withheld: [],
    ...((options.source ?? current?.source) !== undefined && { source: options.source ?? current?.source }),
    ...((options.unconfined ?? current?.unconfined) && { unconfined: true }),
    grantedAt: new Date().toISOString(),
  }));
}
