/**
 * The `marketplace` service's contract: search registries, and install,
 * update, roll back and uninstall user plugins. Declared here so that hosts
 * and other plugins (the extensions plugin) can use it without importing the
 * marketplace plugin's files. The results are zod schemas, so a host that
 * receives them over a wire can check them.
 */
import { z } from 'zod';

/** One installed file as the lock file records it. */
export const treeFileSchema = z.object({ sha256: z.string(), size: z.number(), mtimeMs: z.number(), ctimeMs: z.number() });
export type TreeFile = z.infer<typeof treeFileSchema>;

/** `digest`: `sha256-<base64>` over the sorted lines `<path> <sha256>\n`; `files`: by path relative to the plugin folder, `/`-separated. */
export const installedTreeSchema = z.object({ digest: z.string(), files: z.record(z.string(), treeFileSchema) });
export type InstalledTree = z.infer<typeof installedTreeSchema>;

/** A keyid as the keys document lists it: `SHA256:<base64>`. */
const keyidSchema = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}=?$/, 'expected a keyid such as "SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA" (`plinth registry keygen` prints it)');

/** One registry as the user's settings name it (`registries: [...]`), token unresolved. */
export const registrySettingSchema = z.object({
  /** Shown in search results and messages. */
  name: z.string().min(1).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected a short name: letters, digits, ".", "_" or "-"'),
  /** `http(s)://…`, `file://…`, or the path of a static registry folder. */
  url: z.string().min(1),
  /** A bearer token, as a `${env:NAME}` reference: sent only to this registry's origin. */
  token: z.string().regex(/^\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$/, 'expected an environment reference such as "${env:MY_REGISTRY_TOKEN}" (a token is never written in a settings file)').optional(),
  /** `@scope`: names of that scope are looked up in this registry only. */
  scope: z.string().regex(/^@[a-z0-9-~][a-z0-9-._~]*$/, 'expected a scope such as "@acme"').optional(),
  /**
   * The keys this registry signs with, pinned by keyid. Without it, the keys
   * the registry lists are trusted on first use (shown and asked on a
   * terminal) and recorded; after that, only a rotation signed by a trusted
   * key moves trust to another.
   */
  keys: z.array(keyidSchema).min(1).optional(),
  /**
   * `required` (the default when the registry lists keys or keys are
   * pinned): every version must be signed by a trusted key; `if-present`:
   * unsigned versions pass, signed ones are checked; `off`: nothing is checked.
   */
  signatures: z.enum(['required', 'if-present', 'off']).optional(),
});
/** One registry as the user's settings name it (`registries: [...]`), token unresolved. */
export type RegistrySetting = z.infer<typeof registrySettingSchema>;

/** The `registries` settings key. */
export const registriesSettingSchema = z.array(registrySettingSchema);

/** A note about where data came from: a registry served from its cache because it was unreachable. */
export const marketNoteSchema = z.object({
  registry: z.string(),
  /** `stale`: served from a cache older than 5 minutes because the registry did not answer; `unchecked`: signed, but the registry lists no keys (or none trusted yet); `trusted`: a key trusted on first use or moved to by a rotation; `held`: a newer version younger than the minimum release age the user's policy sets, not updated to. */
  kind: z.enum(['stale', 'unreachable', 'unchecked', 'trusted', 'held']),
  message: z.string(),
  /** Age of the cached document, in ms, when `stale`. */
  ageMs: z.number().optional(),
});
/** A note about where data came from, e.g. a registry served from its cache because it was unreachable. */
export type MarketNote = z.infer<typeof marketNoteSchema>;

/** One search hit. */
export const searchHitSchema = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  keywords: z.array(z.string()),
  /** The registry (its settings name) that has it. */
  registry: z.string(),
  /** Relevance: higher first (exact name, then prefix, then full text). */
  score: z.number(),
});
/** One search hit. */
export type SearchHit = z.infer<typeof searchHitSchema>;

export const searchResultSchema = z.object({
  query: z.string(),
  /** This page of the merged results (`offset` to `offset + limit`). */
  hits: z.array(searchHitSchema),
  /** More results follow this page (ask again with `offset + limit`). */
  more: z.boolean(),
  notes: z.array(marketNoteSchema),
});

/** What {@link MarketplaceService.search} takes besides the text. */
export interface SearchOptions {
  readonly signal?: AbortSignal;
  /** Hits per page; default 20. */
  readonly limit?: number;
  /** Hits to skip (a page's start); default 0. */
  readonly offset?: number;
  /** Search this registry's URL (or folder) instead of the configured ones, as `ext install --registry` installs from it. */
  readonly registry?: string;
}
/** What {@link MarketplaceService.search} found, with notes about the registries asked. */
export type SearchResult = z.infer<typeof searchResultSchema>;

/** What a plugin declares, as shown before approval. */
export const declarationsSchema = z.object({
  /** `main`, when the plugin runs code in the host. */
  code: z.string().optional(),
  hooks: z.array(z.string()),
  mcpServers: z.array(z.string()),
  commands: z.array(z.string()),
  permissions: z.array(z.string()),
  provides: z.array(z.string()),
  dependencies: z.array(z.string()),
  /** The npm packages its package.json asks for (`name@spec`, `(bundled)` when the tarball brings them); npm installs the others. */
  npm: z.array(z.string()),
});
/** What a plugin declares (code, hooks, MCP servers, commands, permissions, services, npm packages), as shown before approval. */
export type Declarations = z.infer<typeof declarationsSchema>;

/** Where a plugin installed from outside the registries came from, as the lock file records it. */
export const lockSourceSchema = z.object({
  /** `git` (a git URL or GitHub's owner/repo), `local` (a folder of a marketplace), `archive` (a tarball URL pinned by SHA-256), `npm` (a marketplace's npm entry). */
  kind: z.enum(['git', 'local', 'archive', 'npm']),
  /** The git URL, the archive URL, the folder or the npm registry. */
  url: z.string().optional(),
  /** The ref asked for (branch, tag or commit), when one was. */
  ref: z.string().optional(),
  /** The commit the ref resolved to and was installed from. */
  commit: z.string().optional(),
  /** The subfolder of the repository or marketplace that is the plugin. */
  path: z.string().optional(),
  /** The marketplace whose entry it was installed from (`plugin@marketplace`). */
  marketplace: z.string().optional(),
});
/** Where a plugin installed from outside the registries came from (`LockEntry.source`). */
export type LockSource = z.infer<typeof lockSourceSchema>;

const installedVersionSchema = z.object({
  name: z.string(),
  version: z.string(),
  /** The SRI string the download was verified against (sha512, or sha256 at least). */
  integrity: z.string(),
  /** What was asked for (`^1.2.0`, `latest`, a tarball path); `update` stays within it. */
  range: z.string(),
  /** The registry's settings name (`command-line` for `--registry`), or `file` for a local tarball. */
  registry: z.string(),
  /** For `--registry`: its URL, so that `update` and `outdated` ask the same registry. */
  registryUrl: z.string().optional(),
  /** Where the tarball came from. */
  resolved: z.string(),
  installedAt: z.string(),
  /** Installed because another plugin depends on it, not asked for by name. */
  dependency: z.boolean().optional(),
  /** The registry signature it was installed under (`dist.signatures[]` entry that verified). */
  signature: z.object({ keyid: z.string(), sig: z.string() }).optional(),
  /** Every file as installed, and the tree digest: checked before each load. */
  tree: installedTreeSchema.optional(),
  /** The registry revoked this version: it does not load. */
  revoked: z.object({ reason: z.string(), use: z.string().optional() }).optional(),
  /** Not from a registry: where it was fetched from (a git repository, a marketplace's folder, an archive), and what pinned it. */
  source: lockSourceSchema.optional(),
  /** `ext install --auto-update` or `ext auto-update <name> on`: `plinth up` applies its updates on the user's schedule (`autoUpdateInterval`), never one that declares something new. */
  autoUpdate: z.boolean().optional(),
});

/** One entry of `$PLINTH_HOME/plugins.lock.json`. */
export const lockEntrySchema = installedVersionSchema.extend({
  /** What was installed before this version (one level): what `rollback` goes back to. */
  previous: installedVersionSchema.optional(),
});
/** One installed plugin as `$PLINTH_HOME/plugins.lock.json` records it. */
export type LockEntry = z.infer<typeof lockEntrySchema>;

export const lockFileSchema = z.object({
  lockfileVersion: z.literal(1),
  plugins: z.record(z.string(), lockEntrySchema),
});
/** `$PLINTH_HOME/plugins.lock.json`: every plugin the marketplace installed. */
export type LockFile = z.infer<typeof lockFileSchema>;

/** What one install, update or rollback changed, plugin by plugin. */
export const changeSchema = z.object({
  name: z.string(),
  from: z.string().optional(),
  to: z.string(),
  registry: z.string(),
  integrity: z.string(),
  /** Loaded into the running kernel (false when the kernel was not booted: the next start loads it). */
  loaded: z.boolean(),
});
/** What one install, update or rollback changed, plugin by plugin. */
export type MarketChange = z.infer<typeof changeSchema>;

export const installResultSchema = z.object({
  changes: z.array(changeSchema),
  notes: z.array(marketNoteSchema),
});
/** What {@link MarketplaceService.install}, `update` or `rollback` changed. */
export type InstallResult = z.infer<typeof installResultSchema>;

export const outdatedEntrySchema = z.object({
  name: z.string(),
  current: z.string(),
  /** Newest version within the recorded range (may equal `current`). */
  wanted: z.string(),
  /** Newest version the registry has that this kernel can run. */
  latest: z.string(),
  range: z.string(),
  registry: z.string(),
  /** A git source: the commit installed. */
  commit: z.string().optional(),
  /** A git source: the commit it would update to. */
  newCommit: z.string().optional(),
  /** A git source: the ref it would update at (the same branch, a newer tag). */
  newRef: z.string().optional(),
  /** A git source: `newer`, or `rewritten` (its ref moved in a way that is not a fast-forward, or its tag moved: `ext update --accept-rewrite` takes it). */
  status: z.enum(['newer', 'rewritten']).optional(),
  /** What happened to a rewritten ref. */
  reason: z.string().optional(),
});
/** An installed plugin with a newer version in its registry, or a git source with newer commits. */
export type OutdatedEntry = z.infer<typeof outdatedEntrySchema>;

/** An installed version its registry revoked. `use`: the version to move to (the registry's, else the newest not revoked). */
export const revokedEntrySchema = z.object({ name: z.string(), version: z.string(), reason: z.string(), use: z.string().optional(), registry: z.string() });
/** An installed version its registry revoked, and the version to move to. */
export type RevokedEntry = z.infer<typeof revokedEntrySchema>;

/** An installed plugin `outdated` could not check (its registry unreachable, gone from the settings, or its answer unusable): never counted as up to date. */
export const uncheckedEntrySchema = z.object({ name: z.string(), version: z.string(), registry: z.string(), reason: z.string() });
/** An installed plugin `outdated` could not check: never counted as up to date. */
export type UncheckedEntry = z.infer<typeof uncheckedEntrySchema>;

export const outdatedResultSchema = z.object({ plugins: z.array(outdatedEntrySchema), revoked: z.array(revokedEntrySchema), unchecked: z.array(uncheckedEntrySchema), notes: z.array(marketNoteSchema) });
/** What {@link MarketplaceService.outdated} found: newer versions, revoked ones, and plugins it could not check. */
export type OutdatedResult = z.infer<typeof outdatedResultSchema>;

export const uninstallResultSchema = z.object({ name: z.string(), version: z.string(), removed: z.array(z.string()) });
/** What {@link MarketplaceService.uninstall} removed. */
export type UninstallResult = z.infer<typeof uninstallResultSchema>;

/** One installed plugin checked against its lock entry (`plinth ext verify`). */
export const verifyEntrySchema = z.object({
  name: z.string(),
  version: z.string(),
  /** `ok`, `changed` (files differ), `missing` (its folder is gone), `unrecorded` (installed before trees were recorded), `linked` (a development folder: not checked), `revoked`. */
  status: z.enum(['ok', 'changed', 'missing', 'unrecorded', 'linked', 'revoked']),
  changed: z.array(z.string()),
  added: z.array(z.string()),
  removed: z.array(z.string()),
  dir: z.string(),
  signature: z.string().optional(),
  reason: z.string().optional(),
  /** The command that restores it. */
  restore: z.string().optional(),
});
/** One installed plugin checked against its lock entry (`plinth ext verify`). */
export type VerifyEntry = z.infer<typeof verifyEntrySchema>;
export const verifyResultSchema = z.object({ plugins: z.array(verifyEntrySchema), revoked: z.array(revokedEntrySchema), notes: z.array(marketNoteSchema) });
/** What {@link MarketplaceService.verify} found. */
export type VerifyResult = z.infer<typeof verifyResultSchema>;

/** A registry's keys offered for trust on first use. */
export interface KeyTrustRequest {
  readonly registry: string;
  readonly url: string;
  readonly keys: ReadonlyArray<{ keyid: string; keytype: string }>;
}

/** How a caller approves what a download declares before any of it runs. */
export interface ApprovalRequest {
  /** `from`: the version installed now; `source`: where it is fetched from when not a registry (`<git url>#<commit>`, an archive's URL). */
  readonly plugins: ReadonlyArray<{ name: string; version: string; from?: string; source?: string; declarations: Declarations; changed?: readonly string[] }>;
}

/** Options of install and update. */
export interface InstallOptions {
  /** A registry URL to use instead of the configured ones. */
  readonly registry?: string;
  /** Approve what the plugins declare without asking. */
  readonly yes?: boolean;
  /**
   * Asks the user; without it (and without `yes`) the install stops with
   * `PLN_E_MARKET_APPROVAL`. Resolves `false` for a "no", or a string saying
   * why nobody could be asked (no terminal): the error then says so, and how to approve.
   */
  readonly approve?: (request: ApprovalRequest) => Promise<boolean | string>;
  /** Download progress (bytes so far, total when known). */
  readonly progress?: (name: string, received: number, total: number | undefined) => void;
  readonly signal?: AbortSignal;
  /** Install the version again even when it is the active one (restores files changed on disk). */
  readonly force?: boolean;
  /** Asked before a registry's keys are trusted on first use; without it (or on "no") the install stops with `PLN_E_MARKET_KEY_UNTRUSTED`. */
  readonly trustKeys?: (request: KeyTrustRequest) => Promise<boolean>;
  /** Keyids to trust on first use without asking (`--trust-key`): only these, and only when the registry lists them. */
  readonly trustKeyIds?: readonly string[];
  /**
   * Whether a plugin installed for the first time is loaded into this kernel
   * (default true). A one-shot command that exits right after passes false:
   * the plugin loads where it runs, live in a running `plinth up` (which watches
   * the plugin folders) or at the next start. An update is loaded here first
   * whatever this says: the new version must load before the old one is dropped.
   */
  readonly loadNew?: boolean;
  /** `update` of a git source: follow a ref that moved in a way that is not a fast-forward (force-push, rewrite) or a tag that now points at another commit, instead of refusing with `PLN_E_MARKET_GIT_REWRITTEN`. */
  readonly acceptRewrite?: boolean;
}

/** The `marketplace` service. Every failure is a PlinthError with a `PLN_E_…` code and `details.step`. */
export interface MarketplaceService {
  /** Ranked hits for `text` across the registries (case-insensitive: names, keywords, descriptions); empty `text` lists every plugin, page by page. */
  search(text: string, options?: SearchOptions): Promise<SearchResult>;
  /** `spec`: `name`, `name@range`, `name@tag`, or the path of a local tarball. */
  install(spec: string, options?: InstallOptions): Promise<InstallResult>;
  /** Asks each installed plugin's registry for newer and revoked versions; installs nothing. */
  outdated(options?: { signal?: AbortSignal }): Promise<OutdatedResult>;
  /** `names` empty: every installed plugin. `latest`: cross the recorded range. */
  update(names: readonly string[], options?: InstallOptions & { latest?: boolean }): Promise<InstallResult>;
  /** Goes back to the version installed before the last update of `name`. */
  rollback(name: string, options?: Pick<InstallOptions, 'signal'>): Promise<InstallResult>;
  /** Removes an installed plugin, its folder and its lock entry. */
  uninstall(name: string): Promise<UninstallResult>;
  /** Turns `plinth up`'s automatic updates of `name` on or off (`LockEntry.autoUpdate`); its lock entry as it is now. */
  setAutoUpdate(name: string, on: boolean): Promise<LockEntry>;
  /** The lock file as it is now. */
  installed(): Promise<LockFile>;
  /** Checks installed plugins' files against the lock file (and their registries' revocations). `names` empty: all. */
  verify(names: readonly string[], options?: { signal?: AbortSignal }): Promise<VerifyResult>;
}

declare module '../index.js' {
  interface Services {
    marketplace: MarketplaceService;
  }
}
