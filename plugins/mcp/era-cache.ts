/**
 * The era verdicts of `auto` servers, kept across runs in
 * `<home>/mcp-eras.json` (written atomically under a lock, as the sdk's file
 * helpers do it), so that a known server is not asked again each run:
 *
 * - the key is the server, not its name: a local server's fingerprint
 *   (command, args, cwd and the names of its env variables) or a remote
 *   server's origin and path, hashed (arguments may carry secrets; none are stored);
 * - a modern verdict keeps the server's `DiscoverResult` (handed to the SDK as
 *   `connect(transport, { prior: { kind: 'modern', discover } })`: no round trip);
 * - a legacy verdict is dated, and not used past the horizon (default a day):
 *   a stale legacy verdict would succeed silently forever, since an upgraded
 *   server still answers `initialize` (the SDK's `PriorDiscovery` says so),
 *   so it is asked again then.
 *
 * The mcp plugin forgets a verdict when a connection made with it fails in a
 * way that says the server changed (./connect.ts), and asks again at once.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { DiscoverResult, PriorDiscovery } from '@modelcontextprotocol/client';
import { type McpServerDefinition, withFileLock, writeFileAtomic } from 'plinth/sdk';

/** A remembered verdict. */
export type EraVerdict = { readonly era: 'modern'; readonly discover: DiscoverResult; readonly at: string } | { readonly era: 'legacy'; readonly at: string };

interface EraFile {
  readonly version: 1;
  readonly servers: Record<string, EraVerdict>;
}

/** Legacy verdicts older than this are asked again. */
export const LEGACY_HORIZON_MS = 24 * 60 * 60 * 1000;

/** The key of a server: what makes it the same server across runs, hashed. */
export function eraKey(definition: Pick<McpServerDefinition, 'name' | 'command' | 'args' | 'cwd' | 'env' | 'url' | 'transport'>): string {
  let identity: unknown[];
  if (definition.command !== undefined) {
    identity = ['stdio', definition.command, ...definition.args, '\0cwd', definition.cwd, '\0env', ...Object.keys(definition.env).sort()];
  } else if (definition.url !== undefined && URL.canParse(definition.url)) {
    const url = new URL(definition.url);
    identity = ['remote', `${url.origin}${url.pathname}`];
  } else {
    // A third-party transport that needs neither (its own settings say where): its name and the server's.
    identity = ['transport', definition.transport, definition.name];
  }
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 32);
}

/** The verdict store. */
export class EraVerdicts {
  readonly #file: string;
  readonly #horizonMs: number;
  readonly #onError: (message: string) => void;
  readonly #now: () => number;

  constructor(file: string, options: { horizonMs?: number; onError?: (message: string) => void; now?: () => number } = {}) {
    this.#file = file;
    this.#horizonMs = options.horizonMs ?? LEGACY_HORIZON_MS;
    this.#onError = options.onError ?? (() => undefined);
    this.#now = options.now ?? Date.now;
  }

  /** The verdict to hand the SDK for `key`, if one is known and fresh; `legacyOnly`: a modern one is not used (it is probed instead). */
  async prior(key: string, options: { legacyOnly?: boolean } = {}): Promise<PriorDiscovery | undefined> {
    const verdict = (await this.#read()).servers[key];
    if (verdict === undefined) return undefined;
    if (verdict.era === 'modern') return options.legacyOnly ? undefined : { kind: 'modern', discover: verdict.discover };
    const age = this.#now() - Date.parse(verdict.at);
    return Number.isFinite(age) && age >= 0 && age < this.#horizonMs ? { kind: 'legacy' } : undefined;
  }

  /** What a connection found: modern with its discover result, or legacy. */
  async remember(key: string, found: { era: 'modern'; discover: DiscoverResult } | { era: 'legacy' }): Promise<void> {
    // A modern server probed again with the same answer: nothing to write (no lock, no fsync on every start).
    const known = (await this.#read()).servers[key];
    if (found.era === 'modern' && known?.era === 'modern' && JSON.stringify(known.discover) === JSON.stringify(found.discover)) return;
    const at = new Date(this.#now()).toISOString();
    await this.#change((servers) => {
      servers[key] = found.era === 'modern' ? { era: 'modern', discover: found.discover, at } : { era: 'legacy', at };
    });
  }

  async forget(key: string): Promise<void> {
    await this.#change((servers) => {
      delete servers[key];
    });
  }

  async #read(): Promise<EraFile> {
    try {
      const parsed = JSON.parse(await readFile(this.#file, 'utf8')) as Partial<EraFile>;
      const servers = parsed?.version === 1 && typeof parsed.servers === 'object' && parsed.servers !== null ? parsed.servers : {};
      return { version: 1, servers: Object.fromEntries(Object.entries(servers).filter(([, v]) => isVerdict(v))) };
    } catch {
      return { version: 1, servers: {} };
    }
  }

  async #change(edit: (servers: Record<string, EraVerdict>) => void): Promise<void> {
    try {
      await withFileLock(`${this.#file}.lock`, async () => {
        const { servers } = await this.#read();
        edit(servers);
        await writeFileAtomic(this.#file, `${JSON.stringify({ version: 1, servers }, null, 1)}\n`);
      });
    } catch (error) {
      this.#onError(`could not record an MCP server's protocol era in ${this.#file}: ${(error as Error).message}`);
    }
  }
}

function isVerdict(value: unknown): value is EraVerdict {
  const v = value as Partial<Record<string, unknown>> | undefined;
  if (typeof v !== 'object' || v === null || typeof v.at !== 'string') return false;
  if (v.era === 'legacy') return true;
  return v.era === 'modern' && typeof v.discover === 'object' && v.discover !== null && Array.isArray((v.discover as { supportedVersions?: unknown }).supportedVersions);
}
