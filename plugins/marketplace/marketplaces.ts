/**
 * The marketplaces a user added (`plinth ext marketplace add`): sources of
 * plugins beside the npm registries. What was added is plinth's state, not a
 * setting: `$PLINTH_HOME/marketplaces.json` (a workspace cannot add one, as it
 * cannot add a registry). Each one's catalogue (the peer's marketplace.json,
 * parsed and checked) is cached under `$PLINTH_HOME/cache/marketplaces/<name>/`
 * (`catalogue.json`, and `repo/`, the checkout its relative plugin folders are
 * installed from, for one added from git), refreshed by `update`.
 *
 * A marketplace comes from a git repository (a URL, or GitHub's `owner/repo`,
 * optionally `#ref`), a folder on disk (read where it is, each time), or the
 * URL of a marketplace.json (its relative folders cannot be installed: there
 * is no repository to take them from).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { type Launcher, PlinthError, safeLine, withFileLock, writeFileAtomic } from 'plinth/sdk';
import { isAlive } from 'plinth/internal';
import semver from 'semver';
import { z } from 'zod';
import { getDocument } from './fetcher.js';
import { cloneAt, refuseCredentials } from './git.js';
import type { HostTokens } from './host-tokens.js';
import type { MarketplacePolicy } from './policy.js';
import { CATALOGUE_FILES, type Catalogue, GITHUB_REPO, gitUrlOf, parseCatalogue } from './peer-catalogue.js';

/** How `ext outdated`'s note about an archive source ends (an archive pinned by its digest has nothing to follow). */
export const NOT_FOLLOWED = '(ext outdated does not follow archives)';

/** Where a marketplace comes from. */
export const marketplaceSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('git'), url: z.string(), ref: z.string().optional() }),
  z.object({ kind: z.literal('path'), path: z.string() }),
  z.object({ kind: z.literal('url'), url: z.string() }),
]);
export type MarketplaceSource = z.infer<typeof marketplaceSourceSchema>;

const recordSchema = z.object({
  name: z.string(),
  source: marketplaceSourceSchema,
  format: z.enum(['claude', 'codex']),
  addedAt: z.string(),
  updatedAt: z.string(),
  /** For a git marketplace: the commit its catalogue was read at. */
  commit: z.string().optional(),
});
/** One added marketplace as `marketplaces.json` records it. */
export type MarketplaceRecord = z.infer<typeof recordSchema>;

const fileSchema = z.object({ version: z.literal(1), marketplaces: z.record(z.string(), recordSchema) });

/** A marketplace with its catalogue, as `list` shows it. */
export interface MarketplaceInfo extends MarketplaceRecord {
  /** Where its relative plugin folders are read from (a git checkout, the folder), when it has one. */
  readonly root?: string;
  readonly plugins: number;
  readonly skipped: readonly string[];
}

export interface MarketplacesOptions {
  readonly home: string;
  readonly launcher: () => Promise<Launcher>;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** For the test hook `PLINTH_MARKET_PAUSE_AT=marketplace-swap` (default: the process's). */
  readonly env?: Record<string, string | undefined>;
  /** The user's allowed and blocked marketplaces (policy.ts), checked before a marketplace is fetched and once its name is known. */
  readonly policy?: MarketplacePolicy;
  /** Tokens per host for a private marketplace (host-tokens.ts). */
  readonly tokens?: HostTokens;
}

/** The added marketplaces and their cached catalogues. */
export class Marketplaces {
  readonly file: string;
  readonly cacheDir: string;

  constructor(private readonly options: MarketplacesOptions) {
    this.file = join(options.home, 'marketplaces.json');
    this.cacheDir = join(options.home, 'cache', 'marketplaces');
  }

  /** Every added marketplace, by name. */
  async records(): Promise<Record<string, MarketplaceRecord>> {
    const text = await readFile(this.file, 'utf8').catch(() => undefined);
    if (text === undefined) return {};
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
    const parsed = fileSchema.safeParse(data);
    if (!parsed.success) {
      throw new PlinthError('PLN_E_MARKETPLACE_INVALID', `${this.file} is not plinth's list of marketplaces: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? 'not JSON'}`, {
        hint: `fix or remove ${this.file}, then add the marketplaces again (\`plinth ext marketplace add <source>\`)`,
        details: { file: this.file },
      });
    }
    return parsed.data.marketplaces;
  }

  /** The added marketplace `name`, or `PLN_E_MARKETPLACE_UNKNOWN`. */
  async get(name: string): Promise<MarketplaceRecord> {
    const record = (await this.records())[name];
    if (!record) {
      const known = Object.keys(await this.records());
      throw new PlinthError('PLN_E_MARKETPLACE_UNKNOWN', `no marketplace "${safeLine(name)}" was added`, {
        hint: known.length > 0 ? `the marketplaces added are ${known.join(', ')}; add another with \`plinth ext marketplace add <git url | owner/repo | path>\`` : 'add it first: `plinth ext marketplace add <git url | owner/repo | path | url of a marketplace.json>`',
        details: { step: 'resolve', marketplace: name },
      });
    }
    return record;
  }

  /** The catalogue of `record`: read from its folder (a path marketplace), else the cached one. */
  async catalogue(record: MarketplaceRecord): Promise<Catalogue> {
    if (record.source.kind === 'path') return (await readCatalogueIn(record.source.path)).catalogue;
    const text = await readFile(join(this.dirOf(record.name), 'catalogue.json'), 'utf8').catch(() => undefined);
    if (text === undefined) {
      throw new PlinthError('PLN_E_MARKETPLACE_INVALID', `the cached catalogue of marketplace "${record.name}" is gone`, { hint: `fetch it again: \`plinth ext marketplace update ${record.name}\``, details: { step: 'resolve', marketplace: record.name } });
    }
    return JSON.parse(text) as Catalogue;
  }

  /** The folder relative plugin sources of `record` are read from, or undefined (a marketplace.json URL). */
  rootOf(record: MarketplaceRecord): string | undefined {
    if (record.source.kind === 'path') return record.source.path;
    if (record.source.kind === 'git') return join(this.dirOf(record.name), 'repo');
    return undefined;
  }

  /** Every added marketplace with its catalogue (one that cannot be read says so in `skipped`). */
  async list(): Promise<MarketplaceInfo[]> {
    await this.cleanLeftovers();
    const out: MarketplaceInfo[] = [];
    for (const record of Object.values(await this.records())) {
      const root = this.rootOf(record);
      try {
        const catalogue = await this.catalogue(record);
        out.push({ ...record, ...(root && { root }), plugins: catalogue.plugins.length, skipped: catalogue.skipped });
      } catch (error) {
        out.push({ ...record, ...(root && { root }), plugins: 0, skipped: [(error as Error).message] });
      }
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Adds the marketplace `input` names (a git URL or `owner/repo`, `#ref`
   * optional; a folder; the URL of a marketplace.json): fetched, its
   * catalogue read and checked, then recorded. Adding one already added from
   * the same source refreshes it.
   */
  async add(input: string, signal?: AbortSignal): Promise<{ record: MarketplaceRecord; catalogue: Catalogue }> {
    const source = classifyMarketplaceSource(input);
    this.options.policy?.check({ url: source.kind === 'path' ? source.path : source.url }, `the marketplace ${safeLine(input)}`);
    return this.fetchAndRecord(source, undefined, signal);
  }

  /** Fetches the catalogue of `name` again (git: a fresh clone at its ref; url: the document). */
  async update(name: string, signal?: AbortSignal): Promise<{ record: MarketplaceRecord; catalogue: Catalogue; from?: string }> {
    const record = await this.get(name);
    const done = await this.fetchAndRecord(record.source, record, signal);
    return { ...done, ...(record.commit && { from: record.commit }) };
  }

  /** Forgets `name` and its cached catalogue; the plugins installed from it stay. */
  async remove(name: string): Promise<MarketplaceRecord> {
    const record = await this.get(name);
    await this.write((data) => void delete data[name]);
    await rm(this.dirOf(name), { recursive: true, force: true });
    return record;
  }

  /** Removes the temporary folders of adds and updates whose process is gone (killed before it cleaned up), or puts a catalogue set aside back. */
  private async cleanLeftovers(): Promise<void> {
    for (const entry of await readdir(this.cacheDir).catch(() => [] as string[])) {
      const match = /^\.(fetch|old)-(\d+)-/.exec(entry);
      if (!match || Number(match[2]) === process.pid || isAlive(Number(match[2]))) continue;
      const path = join(this.cacheDir, entry);
      // Killed between the two renames of a refresh: the catalogue set aside goes back when nothing took its place.
      const name = match[1] === 'old' ? ((JSON.parse(await readFile(join(path, 'catalogue.json'), 'utf8').catch(() => '{}')) as { name?: unknown }).name) : undefined;
      if (typeof name === 'string' && /^[a-z0-9][a-z0-9._-]*$/i.test(name) && !existsSync(this.dirOf(name))) await rename(path, this.dirOf(name));
      else await rm(path, { recursive: true, force: true });
    }
  }

  private dirOf(name: string): string {
    return join(this.cacheDir, name);
  }

  private async write(change: (data: Record<string, MarketplaceRecord>) => void): Promise<void> {
    await mkdir(this.options.home, { recursive: true });
    await withFileLock(`${this.file}.lock`, async () => {
      const data = await this.records();
      change(data);
      await writeFileAtomic(this.file, `${JSON.stringify({ version: 1, marketplaces: data }, null, 2)}\n`, { mode: 0o644 });
    });
  }

  private async fetchAndRecord(source: MarketplaceSource, before: MarketplaceRecord | undefined, signal?: AbortSignal): Promise<{ record: MarketplaceRecord; catalogue: Catalogue }> {
    await mkdir(this.cacheDir, { recursive: true });
    await this.cleanLeftovers();
    // Named by this process: what a killed add or update left is removed by the next one (cleanLeftovers).
    const temp = join(this.cacheDir, `.fetch-${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      let catalogue: Catalogue;
      let commit: string | undefined;
      if (source.kind === 'path') {
        catalogue = (await readCatalogueIn(source.path)).catalogue;
      } else if (source.kind === 'git') {
        commit = await cloneAt(source.url, join(temp, 'repo'), source.ref, undefined, { launcher: this.options.launcher, timeoutMs: this.options.timeoutMs, ...(this.options.tokens && { tokens: this.options.tokens }), ...(signal && { signal }) });
        catalogue = (await readCatalogueIn(join(temp, 'repo'))).catalogue;
      } else {
        refuseCredentials(source.url);
        const url = new URL(source.url);
        const token = this.options.tokens?.for(url);
        const document = await getDocument({ name: 'marketplace', url: new URL(url.origin), ...(token !== undefined && { token }) }, url, { timeoutMs: this.options.timeoutMs, maxBytes: Math.min(this.options.maxBytes, 8 * 1024 * 1024), step: 'resolve', ...(signal && { signal }) });
        catalogue = parseCatalogue(document.body.toString('utf8'), source.url, /\.agents\/plugins\//.test(url.pathname) ? 'codex' : 'claude');
      }
      // `plugin@<name>` must not read as a version or the `latest` tag: a catalogue named so would take over `x@latest`.
      if (catalogue.name === 'latest' || semver.validRange(catalogue.name) !== null) {
        throw new PlinthError('PLN_E_MARKETPLACE_INVALID', `the marketplace calls itself "${safeLine(catalogue.name)}", which reads as a version or the latest tag in plugin@${safeLine(catalogue.name)}: not added`, {
          hint: 'ask its publisher to give it another name',
          details: { step: 'resolve', marketplace: catalogue.name },
        });
      }
      // Its name is known now: a blocked name (or one outside the allowed ones) is not added, nor refreshed.
      this.options.policy?.check({ name: catalogue.name, url: source.kind === 'path' ? source.path : source.url }, `marketplace "${safeLine(catalogue.name)}"`);
      const records = await this.records();
      const taken = records[catalogue.name];
      if (before && before.name !== catalogue.name) {
        throw new PlinthError('PLN_E_MARKETPLACE_INVALID', `marketplace "${before.name}" now calls itself "${safeLine(catalogue.name)}": not updated`, { hint: `remove it (\`plinth ext marketplace remove ${before.name}\`) and add it again`, details: { step: 'resolve', marketplace: before.name } });
      }
      if (!before && taken && JSON.stringify(taken.source) !== JSON.stringify(source)) {
        throw new PlinthError('PLN_E_MARKETPLACE_EXISTS', `a marketplace called "${catalogue.name}" was already added from ${describeSource(taken.source)}`, {
          hint: `remove it first (\`plinth ext marketplace remove ${catalogue.name}\`), or update it (\`plinth ext marketplace update ${catalogue.name}\`)`,
          details: { step: 'resolve', marketplace: catalogue.name },
        });
      }
      const dir = this.dirOf(catalogue.name);
      await mkdir(temp, { recursive: true });
      await writeFileAtomic(join(temp, 'catalogue.json'), `${JSON.stringify(catalogue, null, 2)}\n`);
      // The new catalogue (and checkout) replaces the old one with two renames; the record follows.
      const old = join(this.cacheDir, `.old-${process.pid}-${randomBytes(4).toString('hex')}`);
      const had = existsSync(dir);
      if (had) await rename(dir, old);
      if ((this.options.env ?? process.env).PLINTH_MARKET_PAUSE_AT === 'marketplace-swap') {
        process.stderr.write('marketplace: paused at marketplace-swap\n');
        await new Promise((done) => setTimeout(done, 60_000));
      }
      await rename(temp, dir);
      if (had) await rm(old, { recursive: true, force: true });
      const now = new Date().toISOString();
      const record: MarketplaceRecord = { name: catalogue.name, source, format: catalogue.format, addedAt: (before ?? taken)?.addedAt ?? now, updatedAt: now, ...(commit && { commit }) };
      await this.write((data) => void (data[catalogue.name] = record));
      return { record, catalogue };
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }
}

/** What `marketplace add` was given, understood: a folder or file on disk, a marketplace.json URL, or a git repository. */
export function classifyMarketplaceSource(input: string): MarketplaceSource {
  const hash = input.lastIndexOf('#');
  const [base, ref] = hash > 0 && !input.startsWith('.') && !isAbsolute(input) ? [input.slice(0, hash), input.slice(hash + 1)] : [input, undefined];
  if (input.startsWith('.') || isAbsolute(input) || (existsSync(input) && !GITHUB_REPO.test(input))) {
    const path = resolvePath(input);
    // The catalogue file itself: its repository's root is above `.claude-plugin/` or `.agents/plugins/`.
    if (basename(path) === 'marketplace.json') {
      const parent = dirname(path);
      const root = basename(parent) === '.claude-plugin' ? dirname(parent) : basename(parent) === 'plugins' && basename(dirname(parent)) === '.agents' ? dirname(dirname(parent)) : parent;
      return { kind: 'path', path: root };
    }
    return { kind: 'path', path };
  }
  if (/^https?:\/\//i.test(base) && /\.json$/i.test(new URL(base).pathname)) return { kind: 'url', url: base };
  if (GITHUB_REPO.test(base)) return { kind: 'git', url: gitUrlOf(base), ...(ref && { ref }) };
  if (/^(https?|git|ssh|file):\/\//i.test(base) || /^[\w.-]+@[\w.-]+:/.test(base)) return { kind: 'git', url: base, ...(ref && { ref }) };
  throw new PlinthError('PLN_E_MARKET_SOURCE', `"${safeLine(input)}" is not a marketplace source`, {
    hint: 'give a git URL (https://…, file://…, git@host:…), GitHub\'s owner/repo, a folder holding .claude-plugin/marketplace.json or .agents/plugins/marketplace.json, or the URL of a marketplace.json',
    details: { step: 'resolve', source: input },
  });
}

/** `git https://… #ref`, `folder /x`, `url https://…/marketplace.json`. */
export function describeSource(source: MarketplaceSource): string {
  if (source.kind === 'git') return `${source.url}${source.ref ? `#${source.ref}` : ''}`;
  if (source.kind === 'path') return source.path;
  return source.url;
}

/** The catalogue in the repository or folder `root`. */
export async function readCatalogueIn(root: string): Promise<{ catalogue: Catalogue; file: string }> {
  for (const candidate of CATALOGUE_FILES) {
    const file = join(root, candidate.path);
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (info.size > 8 * 1024 * 1024) throw new PlinthError('PLN_E_MARKETPLACE_INVALID', `${file} is ${info.size} bytes: more than a catalogue needs`, { hint: 'ask its publisher to fix it', details: { step: 'resolve', file } });
    return { catalogue: parseCatalogue(await readFile(file, 'utf8'), file, candidate.format), file };
  }
  throw new PlinthError('PLN_E_MARKETPLACE_INVALID', `${root} holds no marketplace catalogue (${CATALOGUE_FILES.map((c) => c.path).join(' or ')})`, {
    hint: 'a marketplace repository has .claude-plugin/marketplace.json (Claude Code) or .agents/plugins/marketplace.json (Codex); to install a plugin repository itself, `plinth ext install <git url>`',
    details: { step: 'resolve', root },
  });
}
