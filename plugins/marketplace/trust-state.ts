/**
 * What the client remembers of each registry's signing, in
 * `$PLINTH_HOME/registry-trust.json` (by registry URL): the keys it trusts
 * (trusted on first use, pinned, or reached by a rotation), the highest
 * index version it has seen, and the highest revocations version, with
 * whether the index named them (`bound`): once it did, it must go on doing so. TUF's rollback and freeze defences are only as
 * good as this memory: it is written atomically under a lock, only after a
 * document passed every check, and a version only ever grows.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PlinthError, withFileLock, writeFileAtomic } from 'plinth/sdk';
import { z } from 'zod';

const trustedKeySchema = z.object({ keyid: z.string(), key: z.string(), how: z.enum(['first-use', 'pinned', 'rotated']), at: z.string() });
export type TrustedKey = z.infer<typeof trustedKeySchema>;

const registryStateSchema = z.object({
  keys: z.array(trustedKeySchema),
  index: z.object({ version: z.number(), expires: z.string(), seenAt: z.string() }).optional(),
  /** `bound`: the index named these revocations (their digest); `expires`: theirs, when they had one. Both only added (records before them have neither). */
  revocations: z.object({ version: z.number(), bound: z.boolean().optional(), expires: z.string().optional(), seenAt: z.string().optional() }).optional(),
});
export type RegistryState = z.infer<typeof registryStateSchema>;

const stateFileSchema = z.object({ version: z.literal(1), registries: z.record(z.string(), registryStateSchema) });
type StateFile = z.infer<typeof stateFileSchema>;

export class TrustState {
  readonly file: string;

  constructor(readonly home: string) {
    this.file = join(home, 'registry-trust.json');
  }

  async get(url: string): Promise<RegistryState | undefined> {
    return (await this.read()).registries[url];
  }

  /** Changes one registry's record under the file's lock; `change` returns the new record. */
  async update(url: string, change: (current: RegistryState | undefined) => RegistryState): Promise<RegistryState> {
    await mkdir(this.home, { recursive: true });
    return withFileLock(`${this.file}.lock`, async () => {
      const data = await this.read();
      const next = change(data.registries[url]);
      // Whatever happened meanwhile in another process, the index version never goes down.
      const before = data.registries[url]?.index?.version ?? 0;
      if (next.index && next.index.version < before) next.index = data.registries[url]!.index;
      // The same for the revocations, and once bound to the index they stay so.
      const seen = data.registries[url]?.revocations;
      if (seen && (!next.revocations || next.revocations.version < seen.version)) next.revocations = seen;
      else if (seen?.bound && next.revocations && !next.revocations.bound) next.revocations = { ...next.revocations, bound: true };
      data.registries[url] = next;
      await writeFileAtomic(this.file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      return next;
    });
  }

  private async read(): Promise<StateFile> {
    const text = await readFile(this.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text === undefined) return { version: 1, registries: {} };
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
    const parsed = stateFileSchema.safeParse(data);
    if (!parsed.success) {
      // Never start over silently: a fresh memory would accept a replayed index.
      throw new PlinthError('PLN_E_MARKET_TRUST_STATE', `${this.file} is not plinth's registry trust record`, {
        hint: `restore it from a backup; removing it makes plinth trust each registry's keys and index anew, as on first use`,
        details: { file: this.file },
      });
    }
    return parsed.data;
  }
}
