/** `plinth ext search | install | verify | outdated | update | rollback | uninstall`. */
import { type ApprovalRequest, type CommandOutput, type CommandSpec, EXIT, type InstallResult, type KeyTrustRequest, type MarketNote, type MarketplaceService, PlinthError, type RevokedEntry, formatTable, safeLine } from 'plinth/sdk';
import { GRANT_OPTION, type GrantsService, askYesNo, grantReviewLines, processTerminal, whyNotAsk } from 'plinth/internal';
import { describeDeclarations } from './declared.js';
import { type Marketplaces, NOT_FOLLOWED, describeSource } from './marketplaces.js';
import { type ImportPlan, type ImportScope, type PeerName, peerFiles, planPeerImport } from './peer-import.js';
import { progressBar } from './progress.js';

const YES = {
  yes: { type: 'boolean', short: 'y', description: 'Approve installing the plugins as shown without asking (their permissions are a separate decision: --grant)' },
  ...GRANT_OPTION,
} as const;

/** A positive whole number option (`--page 2`), or `fallback` when not given; anything else is a usage error. */
function positiveOption(value: unknown, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new PlinthError('PLN_E_CLI_USAGE', `--${name} takes a whole number from 1 to ${max}, not "${safeLine(String(value))}"`, { hint: `e.g. --${name} 2` });
  }
  return n;
}

/** `grants`: the sandbox's service when a plugin provides it: what an installed or updated plugin declares beyond its grant is asked about at once. */
export function marketplaceCommands(service: () => Promise<MarketplaceService>, grants: () => Promise<GrantsService | undefined> = async () => undefined, marketplaces?: () => Marketplaces, workspace = process.cwd()): CommandSpec[] {
  const review = async (result: InstallResult, out: CommandOutput, signal: AbortSignal, grant: boolean): Promise<void> => {
    for (const change of result.changes) for (const line of grantReviewLines(await (await grants())?.review(change.name, { signal, grant }))) out.note(line);
  };
  return [
    {
      name: 'ext search',
      args: [{ name: 'text', description: 'Words to look for in names, keywords and descriptions (none: every plugin, page by page)', variadic: true }],
      options: {
        registry: { type: 'string', value: '<url|name>', description: 'Search this registry instead of the configured ones: a URL, a folder, or a registry\'s name (plinth: the embedded one)' },
        page: { type: 'string', value: '<n>', description: 'Show page n of the results (default 1)' },
        limit: { type: 'string', value: '<n>', description: 'Results per page (default 20, at most 250)' },
      },
      async run({ args, options, json, out, signal }) {
        const text = args.join(' ');
        const limit = positiveOption(options.limit, 'limit', 20, 250);
        const page = positiveOption(options.page, 'page', 1, Number.MAX_SAFE_INTEGER);
        const registry = typeof options.registry === 'string' ? options.registry : undefined;
        const result = await (await service()).search(text, { signal, limit, offset: (page - 1) * limit, ...(registry && { registry }) });
        if (json) return out.json(result);
        printNotes(out, result.notes);
        if (result.hits.length === 0) {
          if (page > 1) return out.print(`No more results: page ${page} is past the last.`);
          return out.print(text.trim() === '' ? 'The registries have no plugin.' : `No plugin matches "${safeLine(result.query)}".`);
        }
        out.print(formatTable(['NAME', 'VERSION', 'REGISTRY', 'DESCRIPTION'], result.hits.map((h) => [safeLine(h.name), h.version === '' ? '-' : safeLine(h.version), h.registry, safeLine(h.description)])));
        const word = (a: string) => (/^[\w@./:=+-]+$/.test(a) ? a : JSON.stringify(a));
        const again = ['plinth ext search', ...args.map(word), ...(registry ? ['--registry', word(registry)] : []), ...(options.limit !== undefined ? ['--limit', String(limit)] : [])].join(' ');
        if (result.more) out.note(`More results: ${safeLine(again)} --page ${page + 1}`);
      },
    },
    {
      name: 'ext install',
      args: [{ name: 'plugin', required: true, description: 'name, name@range, name@tag, plugin@marketplace, a git URL or owner/repo (#ref), an archive URL (--sha256), or the path of a .tgz' }],
      options: {
        registry: { type: 'string', value: '<url|name>', description: 'Install from this registry instead of the configured ones: a URL, a folder, or a registry\'s name (plinth: the embedded one)' },
        ref: { type: 'string', value: '<ref>', description: 'For a git source: the branch, tag or commit to install (as <url>#<ref>)' },
        sha256: { type: 'string', value: '<hex>', description: 'For an archive URL (.tgz): its SHA-256, required, checked before anything is extracted' },
        force: { type: 'boolean', description: 'Install the version again even when it is the one installed (restores files changed on disk), verified again' },
        'auto-update': { type: 'boolean', description: 'Let plinth up apply its updates on the schedule of the setting autoUpdateInterval (never one that declares something new); `plinth ext auto-update <name> off` stops it' },
        'trust-key': { type: 'string', value: '<keyid>', description: 'Trust this key of the registry on first use without asking (check its fingerprint with the registry\'s operator first)' },
        ...YES,
      },
      async run({ args, options, json, out, signal }) {
        const registry = typeof options.registry === 'string' ? options.registry : undefined;
        const trustKeyIds = typeof options['trust-key'] === 'string' ? [options['trust-key']] : undefined;
        // This process exits once installed: a new plugin loads where it runs (a running `plinth up` picks it up); an update still loads here first.
        if (typeof options.ref === 'string' && typeof options.sha256 === 'string') throw new PlinthError('PLN_E_CLI_USAGE', '--ref is for a git source and --sha256 for an archive: not both', { hint: 'usage: plinth ext install <git url> --ref <ref> | <url.tgz> --sha256 <hex>' });
        const fragment = typeof options.ref === 'string' ? options.ref : typeof options.sha256 === 'string' ? `sha256=${options.sha256}` : undefined;
        if (fragment !== undefined && args[0]!.includes('#')) throw new PlinthError('PLN_E_CLI_USAGE', `"${safeLine(args[0]!)}" names a ref (#…) already: --ref or --sha256 is one too many`, { hint: 'give the ref once' });
        const spec = fragment === undefined ? args[0]! : `${args[0]!}#${fragment}`;
        const result = await withProgress((progress) => service().then((s) => s.install(spec, { ...(registry && { registry }), ...(options.force === true && { force: true }), ...(trustKeyIds && { trustKeyIds }), ...installOptions(options, out, signal, progress), loadNew: false })));
        if (options['auto-update'] === true) await recordAutoUpdate(await service(), result, spec, out);
        report(out, json, result, 'installed', spec);
        await review(result, out, signal, options.grant === true);
      },
    },
    {
      name: 'ext auto-update',
      args: [
        { name: 'name', required: true, description: 'The installed plugin' },
        { name: 'state', required: true, description: 'on: plinth up applies its updates on the schedule of the setting autoUpdateInterval; off: only `plinth ext update` does' },
      ],
      async run({ args, json, out }) {
        const state = args[1];
        if (state !== 'on' && state !== 'off') throw new PlinthError('PLN_E_CLI_USAGE', `"ext auto-update" takes on or off, not "${safeLine(state ?? '')}"`, { hint: `usage: plinth ext auto-update ${safeLine(args[0]!)} on|off` });
        const entry = await (await service()).setAutoUpdate(args[0]!, state === 'on');
        if (json) return out.json({ name: entry.name, version: entry.version, autoUpdate: entry.autoUpdate === true });
        out.print(state === 'on' ? `${entry.name}: plinth up applies its updates (every autoUpdateInterval hours; an update that declares something new is held for \`plinth ext update ${entry.name}\`).` : `${entry.name}: updated only by \`plinth ext update ${entry.name}\`.`);
      },
    },
    ...(marketplaces ? marketplaceSourceCommands(marketplaces) : []),
    ...(marketplaces ? [importCommand(service, marketplaces, workspace, review)] : []),
    {
      name: 'ext verify',
      args: [{ name: 'name', description: 'The installed plugin to check (none: every one)' }],
      async run({ args, json, out, signal }) {
        const result = await (await service()).verify(args[0] === undefined ? [] : [args[0]], { signal });
        if (json) {
          out.json(result);
          return result.plugins.some((p) => p.status === 'changed' || p.status === 'missing' || p.status === 'revoked') ? EXIT.FAILURE : EXIT.OK;
        }
        printNotes(out, result.notes);
        if (result.plugins.length === 0) return out.print('No plugin was installed with plinth ext install.');
        for (const p of result.plugins) {
          const id = `${safeLine(p.name)}@${safeLine(p.version)}`;
          if (p.status === 'ok') out.print(`${id}: ok, every file as installed${p.signature ? ` (signed by ${p.signature})` : ''}`);
          else if (p.status === 'changed') {
            out.print(`${id}: files differ from what was installed in ${p.dir}; it does not load:`);
            for (const f of p.changed) out.print(`  changed  ${safeLine(f)}`);
            for (const f of p.added) out.print(`  added    ${safeLine(f)}`);
            for (const f of p.removed) out.print(`  removed  ${safeLine(f)}`);
            out.print(`  restore it: ${p.restore}`);
          } else out.print(`${id}: ${p.status}: ${safeLine(p.reason ?? '')}${p.restore ? ` (${p.restore})` : ''}`);
        }
        return result.plugins.some((p) => p.status === 'changed' || p.status === 'missing' || p.status === 'revoked') ? EXIT.FAILURE : EXIT.OK;
      },
    },
    {
      name: 'ext outdated',
      async run({ json, out, signal }) {
        const result = await (await service()).outdated({ signal });
        if (json) {
          out.json(result);
          return result.unchecked.length > 0 ? EXIT.FAILURE : EXIT.OK;
        }
        printNotes(out, result.notes);
        for (const r of result.revoked) out.print(revokedLine(r));
        // What could not be checked is named, never counted as up to date.
        for (const u of result.unchecked) out.print(`not checked: ${safeLine(u.name)}@${safeLine(u.version)} (registry ${safeLine(u.registry)}): ${safeLine(u.reason)}`);
        if (result.plugins.length > 0) out.print(formatTable(['NAME', 'CURRENT', 'WANTED', 'LATEST', 'RANGE', 'REGISTRY'], result.plugins.map((p) => [p.name, p.commit ? `${p.current} (${p.commit.slice(0, 12)})` : p.current, p.status === 'rewritten' ? `${p.wanted} (rewritten)` : p.wanted, p.latest, p.range, p.registry])));
        // A moved tag or a rewritten branch is named with what accepts it: never taken by a plain update.
        for (const p of result.plugins) if (p.status === 'rewritten') out.print(`${p.name}: ${safeLine(p.reason ?? 'its ref was rewritten')}; \`plinth ext update ${p.name} --accept-rewrite\` takes it`);
        else if (result.unchecked.length > 0) out.print(`No newer versions among the plugins checked; ${result.unchecked.length} could not be checked (above).`);
        // Git and archive sources are not checked yet (a note names each): never called up to date.
        else out.print(result.revoked.length === 0 && !result.notes.some((n) => n.message.endsWith(NOT_FOLLOWED)) ? 'Every installed plugin is up to date.' : 'No newer versions among the plugins checked.');
        return result.unchecked.length > 0 ? EXIT.FAILURE : EXIT.OK;
      },
    },
    {
      name: 'ext update',
      args: [{ name: 'name', description: 'The plugin to update (none, or --all: every installed plugin)' }],
      options: { all: { type: 'boolean', description: 'Update every installed plugin' }, latest: { type: 'boolean', description: 'Cross the recorded range: the newest version' }, 'accept-rewrite': { type: 'boolean', description: 'Git sources: follow a ref that was force-pushed or rewritten, or a tag that was moved' }, ...YES },
      async run({ args, options, json, out, signal }) {
        if (args[0] !== undefined && options.all === true) throw new PlinthError('PLN_E_CLI_USAGE', '"ext update" takes a name or --all, not both', { hint: 'usage: plinth ext update [name|--all] [--latest]' });
        const result = await withProgress((progress) => service().then((s) => s.update(args[0] === undefined ? [] : [args[0]], { latest: options.latest === true, acceptRewrite: options['accept-rewrite'] === true, ...installOptions(options, out, signal, progress) })));
        report(out, json, result, 'updated');
        await review(result, out, signal, options.grant === true);
      },
    },
    {
      name: 'ext rollback',
      args: [{ name: 'name', required: true, description: 'The plugin to take back to its previous version' }],
      async run({ args, json, out, signal }) {
        report(out, json, await (await service()).rollback(args[0]!, { signal }), 'rolled back');
      },
    },
    {
      name: 'ext uninstall',
      args: [{ name: 'name', required: true, description: 'The installed plugin to remove' }],
      async run({ args, json, out }) {
        const result = await (await service()).uninstall(args[0]!);
        if (json) return out.json(result);
        out.print(`Uninstalled ${result.name}@${result.version}.`);
      },
    },
  ];
}

/** `revoked: x@1.0.0 by registry local: <reason>; move to 1.0.1 (plinth ext install x@1.0.1)`. */
export function revokedLine(r: RevokedEntry): string {
  return `revoked: ${safeLine(r.name)}@${safeLine(r.version)} by registry ${r.registry}: ${safeLine(r.reason)}${r.use ? `; move to ${safeLine(r.use)} (plinth ext install ${safeLine(r.name)}@${safeLine(r.use)})` : ''}`;
}

function installOptions(options: Readonly<Record<string, unknown>>, out: CommandOutput, signal: AbortSignal, progress: (name: string, received: number, total: number | undefined) => void) {
  const terminal = processTerminal();
  const why = whyNotAsk(terminal);
  return {
    yes: options.yes === true,
    signal,
    progress,
    ...(why === undefined && {
      trustKeys: async (request: KeyTrustRequest) => {
        out.note(`registry ${request.registry} (${request.url}) signs its plugins with:`);
        for (const key of request.keys) out.note(`  ${key.keyid} (${key.keytype})`);
        out.note('Compare the fingerprint with what its operator publishes; once trusted, only a rotation signed by this key can change it.');
        return askYesNo(`Trust ${request.keys.length === 1 ? 'this key' : 'these keys'}? [y/N] `, terminal, signal);
      },
    }),
    approve: async (request: ApprovalRequest) => {
      for (const line of approvalLines(request)) out.note(line);
      if (why !== undefined) return why;
      return askYesNo(`Install ${request.plugins.map((p) => `${p.name}@${p.version}`).join(', ')}? [y/N] `, terminal, signal);
    },
  };
}

/** `ext install --auto-update`: the plugins asked for (not those installed as their dependencies) are recorded for `plinth up` to update. */
async function recordAutoUpdate(market: MarketplaceService, result: InstallResult, spec: string, out: CommandOutput): Promise<void> {
  const lock = await market.installed();
  const asked = result.changes.filter((c) => lock.plugins[c.name] !== undefined && lock.plugins[c.name]!.dependency !== true);
  for (const change of asked) await market.setAutoUpdate(change.name, true);
  if (asked.length === 0) out.note(`nothing was installed from ${safeLine(spec)}, so auto-update was not recorded: \`plinth ext auto-update <name> on\` turns it on for an installed plugin`);
}

/** What the user approves: each plugin's declarations, and for an update what changed. */
export function approvalLines(request: ApprovalRequest): string[] {
  const lines: string[] = [];
  for (const p of request.plugins) {
    lines.push(`${safeLine(p.name)}@${safeLine(p.version)}${p.from ? ` (now ${safeLine(p.from)})` : ''}${p.source ? ` from ${safeLine(p.source)}` : ''} declares:`, ...describeDeclarations(p.declarations));
    if (p.changed && p.changed.length > 0) lines.push('  What changed:', ...p.changed.map((c) => `    ${c}`));
  }
  return lines;
}

async function withProgress<T>(fn: (progress: (name: string, received: number, total: number | undefined) => void) => Promise<T>): Promise<T> {
  const bar = progressBar();
  try {
    return await fn(bar.update);
  } finally {
    bar.done();
  }
}

/** `spec`: what `ext install` was given, named when nothing changed. */
function report(out: CommandOutput, json: boolean, result: InstallResult, verb: string, spec?: string): void {
  if (json) return out.json(result);
  printNotes(out, result.notes);
  if (result.changes.length === 0) {
    if (verb === 'updated') return out.print(result.notes.some((n) => n.kind === 'held') ? 'Nothing updated: newer versions are held back by minReleaseAgeDays (above).' : 'Nothing to do: up to date.');
    return out.print(spec ? `Nothing to do: ${safeLine(spec)} is already installed (--force installs it again).` : 'Nothing to do: already installed.');
  }
  for (const c of result.changes) {
    // Not loaded: a first install by this one-shot command, left to the host that runs it.
    out.print(`${verb} ${c.name}@${c.to}${c.from ? ` (was ${c.from})` : ''} from ${c.registry}${c.loaded ? ', loaded' : c.from ? '' : '; loaded by a running plinth up, or at the next start'}`);
  }
}

function printNotes(out: CommandOutput, notes: readonly MarketNote[]): void {
  for (const note of notes) out.note(`plinth: warning: ${note.message}`);
}

/** `plinth ext marketplace add | list | update | remove`: the peers' marketplaces as sources beside the registries. */
function marketplaceSourceCommands(marketplaces: () => Marketplaces): CommandSpec[] {
  return [
    {
      name: 'ext marketplace add',
      args: [{ name: 'source', required: true, description: 'A git URL or GitHub\'s owner/repo (#ref), a folder, or the URL of a marketplace.json' }],
      async run({ args, json, out, signal }) {
        const { record, catalogue } = await marketplaces().add(args[0]!, signal);
        if (json) return out.json({ ...record, plugins: catalogue.plugins.map((p) => p.name), skipped: catalogue.skipped });
        for (const s of catalogue.skipped) out.note(`plinth: warning: ${record.name}: skipped ${s}`);
        out.print(`Added marketplace ${record.name} (${catalogue.format === 'codex' ? 'Codex' : 'Claude Code'} catalogue, ${catalogue.plugins.length} plugin${catalogue.plugins.length === 1 ? '' : 's'}) from ${safeLine(describeSource(record.source))}${record.commit ? ` at ${record.commit.slice(0, 12)}` : ''}.`);
        out.print(`Install one with: plinth ext install <plugin>@${record.name}   (plinth ext search lists them)`);
      },
    },
    {
      name: 'ext marketplace list',
      async run({ json, out }) {
        const list = await marketplaces().list();
        if (json) return out.json({ marketplaces: list });
        if (list.length === 0) return out.print('No marketplace was added: plinth ext marketplace add <git url | owner/repo | path | url>');
        out.print(formatTable(['NAME', 'FORMAT', 'PLUGINS', 'SOURCE', 'UPDATED'], list.map((m) => [m.name, m.format, String(m.plugins), safeLine(describeSource(m.source)), m.updatedAt])));
        for (const m of list) for (const s of m.skipped) out.note(`plinth: warning: ${m.name}: skipped ${safeLine(s)}`);
      },
    },
    {
      name: 'ext marketplace update',
      args: [{ name: 'name', description: 'The marketplace to fetch again (none: every one)' }],
      async run({ args, json, out, signal }) {
        const store = marketplaces();
        const names = args[0] !== undefined ? [args[0]] : Object.keys(await store.records());
        const updated = [];
        for (const name of names) {
          const { record, catalogue, from } = await store.update(name, signal);
          updated.push({ ...record, plugins: catalogue.plugins.map((p) => p.name), skipped: catalogue.skipped, ...(from && { from }) });
        }
        if (json) return out.json({ marketplaces: updated });
        if (updated.length === 0) return out.print('No marketplace was added.');
        for (const m of updated) out.print(`Updated marketplace ${m.name}: ${m.plugins.length} plugin${m.plugins.length === 1 ? '' : 's'}${m.commit ? ` at ${m.commit.slice(0, 12)}${m.from && m.from !== m.commit ? ` (was ${m.from.slice(0, 12)})` : ''}` : ''}.`);
      },
    },
    {
      name: 'ext marketplace remove',
      args: [{ name: 'name', required: true, description: 'The marketplace to forget (the plugins installed from it stay)' }],
      async run({ args, json, out }) {
        const record = await marketplaces().remove(args[0]!);
        if (json) return out.json({ removed: record.name, source: record.source });
        out.print(`Removed marketplace ${record.name}; the plugins installed from it stay installed.`);
      },
    },
  ];
}

/** `plinth import --from claude|gemini|codex`: the peer's marketplaces and enabled plugins, shown, then added and installed once confirmed. */
function importCommand(service: () => Promise<MarketplaceService>, marketplaces: () => Marketplaces, workspace: string, review: (result: InstallResult, out: CommandOutput, signal: AbortSignal, grant: boolean) => Promise<void>): CommandSpec {
  return {
    name: 'import',
    args: [{ name: 'file', description: "The peer's file (default: Claude Code's settings files, Codex CLI's config.toml, Gemini CLI's extensions folder; the workspace's, then the user's)" }],
    options: {
      from: { type: 'string', value: '<claude|gemini|codex>', description: 'Whose plugins: claude (Claude Code), gemini (Gemini CLI) or codex (Codex CLI)' },
      scope: { type: 'string', value: '<user|workspace>', description: "Read only the user's or only the workspace's files (default: both)" },
      ...YES,
    },
    async run({ args, options, json, out, signal }) {
      const from = options.from;
      if (from !== 'claude' && from !== 'gemini' && from !== 'codex') throw new PlinthError('PLN_E_CLI_USAGE', `--from must be claude, gemini or codex, got ${from === undefined ? 'nothing' : `"${safeLine(String(from))}"`}`, { hint: 'plinth import --from claude [.claude/settings.json]' });
      const scope = options.scope;
      if (scope !== undefined && scope !== 'user' && scope !== 'workspace') throw new PlinthError('PLN_E_CLI_USAGE', `--scope must be user or workspace, got "${safeLine(String(scope))}"`, { hint: 'plinth import --from claude --scope user' });
      const store = marketplaces();
      const added = new Set(Object.keys(await store.records()));
      const plan = await planPeerImport(from as PeerName, peerFiles(from as PeerName, workspace, scope as ImportScope | undefined, args[0]), added, workspace);
      const toAdd = plan.marketplaces.filter((m) => !m.added);
      const nothing = toAdd.length === 0 && plan.plugins.length === 0;
      if (!json) showImportPlan(plan, out);
      if (nothing) {
        if (json) return out.json({ ...plan, done: false, added: [], installed: [] });
        return out.print(plan.files.length === 0 ? `No ${from} file was found (${peerFiles(from as PeerName, workspace, scope as ImportScope | undefined, args[0]).join(', ')}).` : 'Nothing to import.');
      }
      if (options.yes !== true) {
        const terminal = processTerminal();
        const why = json ? 'of --json' : whyNotAsk(terminal);
        const yes = why === undefined && (await askYesNo(`Add ${toAdd.length} marketplace(s) and install ${plan.plugins.length} plugin(s)? [y/N] `, terminal, signal));
        if (!yes) {
          const reason = why === undefined ? 'not confirmed' : `nothing was asked because ${why}; run again with --yes to import`;
          if (json) out.json({ ...plan, done: false, added: [], installed: [], reason });
          else out.print(`Nothing added or installed: ${reason}.`);
          return EXIT.FAILURE;
        }
      }
      const addedNow: string[] = [];
      const failed: { item: string; code?: string; message: string }[] = [];
      const failure = (item: string, error: unknown) => failed.push({ item, ...(error instanceof PlinthError && { code: error.code }), message: (error as Error).message ?? String(error) });
      for (const m of toAdd) {
        try {
          const { record } = await store.add(m.source, signal);
          addedNow.push(record.name);
          if (record.name !== m.name) out.note(`plinth: warning: marketplace ${m.name} of ${m.file} is named ${record.name} by its catalogue: its plugins are <plugin>@${record.name} in plinth`);
          else if (!json) out.print(`Added marketplace ${record.name} from ${safeLine(describeSource(record.source))}.`);
        } catch (error) {
          failure(`marketplace ${m.name}`, error);
        }
      }
      const installed: string[] = [];
      for (const p of plan.plugins) {
        try {
          const result = await withProgress((progress) => service().then((s) => s.install(p.spec, { ...installOptions(options, out, signal, progress), loadNew: false })));
          if (!json) report(out, false, result, 'installed', p.spec);
          installed.push(...result.changes.map((c) => `${c.name}@${c.to}`));
          await review(result, out, signal, options.grant === true);
        } catch (error) {
          failure(p.spec, error);
        }
      }
      if (json) out.json({ ...plan, done: true, added: addedNow, installed, failed });
      else for (const f of failed) out.print(`not imported: ${safeLine(f.item)}: ${f.code ? `${f.code}: ` : ''}${safeLine(f.message)}`);
      return failed.length > 0 ? EXIT.FAILURE : EXIT.OK;
    },
  };
}

function showImportPlan(plan: ImportPlan, out: CommandOutput): void {
  out.print(plan.files.length > 0 ? `From ${plan.files.join(', ')}:` : 'No file to read.');
  for (const m of plan.marketplaces) out.print(m.added ? `  marketplace ${m.name}: already added` : `  add marketplace ${m.name} from ${safeLine(m.source)}`);
  for (const p of plan.plugins) out.print(`  install ${safeLine(p.spec)}`);
  for (const s of plan.skipped) out.print(`  skipped: ${s}`);
}
