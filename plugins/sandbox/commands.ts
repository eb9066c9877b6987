/**
 * `plinth perms list|grant|revoke|status|audit`: what each plugin declares and
 * was granted, the grants themselves, whether an OS sandbox is available here
 * and how each plugin runs, and the denials the sandbox saw.
 */
import { type CommandSpec, type ConfigLayerView, EXIT, type GrantDecision, NO_PERMISSIONS, PlinthError, type PluginInfo, type Principal, type SandboxAvailability, formatTable, safeLine } from 'plinth/sdk';
import { closestName } from 'plinth/internal';
import { readAudit } from './audit.js';
import { readDefaultMode } from './grants/default-mode.js';
import { type PermissionItem, formatItem, itemsOf, parseItem, sameItem, widening, withItems, withoutItems } from './grants/items.js';
import { type ExtendedGrantPolicy, type Standing, grantCommand } from './grants/policy.js';
import { WORKSPACE_SETTINGS, principalOf, workspaceGrantKey } from './grants/principal.js';
import type { StoredGrant } from './grants/store.js';

export interface PermsCommandsOptions {
  readonly policy: ExtendedGrantPolicy;
  /** `PLINTH_HOME`: the audit log. */
  readonly home: string;
  /** Every plugin the kernel resolved, by name (from the `manifest` hook). */
  readonly plugins: () => ReadonlyMap<string, PluginInfo>;
  /** The sandbox's probe. */
  readonly availability: () => Promise<SandboxAvailability>;
  readonly configLayers: () => readonly ConfigLayerView[];
  /** The workspace: `settings:workspace` names its hooks' and servers' grants (stored per workspace). */
  readonly workspace: string;
}

const SETTINGS_PRINCIPALS = ['settings:user', 'settings:workspace'];
const PLUGIN_ARG = { name: 'plugin', description: 'A plugin name, or settings:user / settings:workspace for the hooks and servers of settings' };
const PERMISSION_ARG = { name: 'permission', variadic: true, description: 'One declared permission, e.g. "network api.example.com", "filesystem.read ${workspace}/src", "env TOKEN"' };

/** One plugin's permissions, as `perms list` shows them. */
interface Listing {
  readonly name: string;
  readonly version: string;
  readonly source: Principal['source'];
  readonly standing: Standing;
  readonly declared: string[];
  readonly granted: string[];
  readonly withheld: string[];
  /** Declared, not granted: asked for at the next launch (or refused without a terminal). */
  readonly waiting: string[];
  readonly unconfined: boolean;
  readonly grantedVersion?: string;
  readonly grantedAt?: string;
  /** Granted for this process only (a command's process ends with it; shown by a host that stays up). */
  readonly session: boolean;
}

export function permsCommands(options: PermsCommandsOptions): CommandSpec[] {
  const { policy } = options;
  const store = policy.store;

  const known = (name: string): PluginInfo | undefined => options.plugins().get(name);
  /** Where `name`'s grant is stored: `settings:workspace` is this workspace's (grants/principal.ts `grantKey`). */
  const keyOf = (name: string): string => (name === WORKSPACE_SETTINGS ? workspaceGrantKey(options.workspace) : name);
  const requirePlugin = (name: string): PluginInfo => {
    const plugin = known(name);
    if (plugin) return plugin;
    throw new PlinthError('PLN_E_PERM_UNKNOWN', `no plugin "${name}" is known here`, {
      hint: '`plinth perms list` shows the plugins and their permissions; `plinth plugins list` every plugin found',
      details: { plugin: name },
    });
  };

  /** The settings' principals are exactly these two: a typo would store a grant nothing ever uses. */
  const requireSettings = (name: string): void => {
    if (SETTINGS_PRINCIPALS.includes(name)) return;
    const near = closestName(name, SETTINGS_PRINCIPALS);
    throw new PlinthError('PLN_E_PERM_UNKNOWN', `"${name}" is not a principal: the hooks and servers of settings are settings:user and settings:workspace`, {
      hint: near ? `did you mean ${near}?` : 'use settings:user or settings:workspace, or a plugin name (`plinth perms list` shows them)',
      details: { plugin: name },
    });
  };

  const listing = async (plugin: PluginInfo | undefined, name: string, stored: StoredGrant | undefined): Promise<Listing> => {
    const principal = plugin ? principalOf(plugin) : undefined;
    const judged = principal ? await policy.standing(principal) : { standing: 'untrusted' as Standing, source: (name === 'settings:user' ? 'user' : 'workspace') as Principal['source'] };
    const declared = plugin?.manifest.permissions ?? NO_PERMISSIONS;
    const session = store.session(keyOf(name));
    const have = session ? withItems(stored?.permissions ?? NO_PERMISSIONS, itemsOf(session.permissions)) : (stored?.permissions ?? NO_PERMISSIONS);
    const withheld = stored?.withheld ?? [];
    const wanted = withoutItems(declared, withheld);
    const automatic = judged.standing === 'builtin' || judged.standing === 'user-settings';
    return {
      name,
      version: plugin?.version ?? stored?.version ?? '-',
      source: judged.source,
      standing: judged.standing,
      declared: itemsOf(declared).map(formatItem),
      granted: (automatic ? itemsOf(declared) : itemsOf(have)).map(formatItem),
      withheld: withheld.map(formatItem),
      waiting: automatic ? [] : widening(have, wanted).map(formatItem),
      unconfined: stored?.unconfined === true,
      ...(stored && { grantedVersion: stored.version, grantedAt: stored.grantedAt }),
      session: session !== undefined,
    };
  };

  const listings = async (only?: string): Promise<Listing[]> => {
    const grants = (await store.read()).plugins;
    const names = new Set<string>();
    for (const plugin of options.plugins().values()) {
      // Builtin plugins that declare nothing run nothing worth listing here.
      if (plugin.source !== 'builtin' || itemsOf(plugin.manifest.permissions).length > 0) names.add(plugin.name);
    }
    const here = keyOf(WORKSPACE_SETTINGS);
    // This workspace's settings grant is listed as settings:workspace; another workspace's under its key; one stored
    // before grants were per workspace (a bare settings:workspace) grants nothing and is not listed.
    for (const name of Object.keys(grants)) if (name !== WORKSPACE_SETTINGS) names.add(name === here ? WORKSPACE_SETTINGS : name);
    const grantOf = (name: string) => (Object.hasOwn(grants, keyOf(name)) ? grants[keyOf(name)] : undefined);
    if (only !== undefined) {
      if (only.startsWith('settings:')) requireSettings(only);
      else if (!names.has(only)) requirePlugin(only);
      return [await listing(known(only), only, grantOf(only))];
    }
    return Promise.all([...names].sort().map((name) => listing(known(name), name, grantOf(name))));
  };

  const stateOf = (l: Listing): string => {
    if (l.standing === 'builtin') return 'builtin: granted what it declares';
    if (l.standing === 'user-settings') return 'your settings: granted what they declare';
    if (l.waiting.length > 0) return `asks for ${l.waiting.length} more`;
    return l.grantedVersion === undefined && !l.session ? (l.declared.length === 0 ? 'declares nothing' : 'not granted') : 'granted';
  };

  const parseItems = (args: readonly string[]): PermissionItem[] => args.map(parseItem);

  const list: CommandSpec = {
    name: 'perms list',
    args: [PLUGIN_ARG],
    async run({ args, json, out }) {
      const rows = await listings(args[0]);
      const mode = readDefaultMode(options.configLayers());
      if (json) return out.json({ file: store.file, default: mode, plugins: rows });
      if (rows.length === 0) return out.print(`No plugin declares permissions, and nothing is granted (${store.file}).`);
      out.print(formatTable(['PLUGIN', 'VERSION', 'SOURCE', 'DECLARED', 'GRANTED', 'STATE'], rows.map((l) => [l.name, l.version, l.source, String(l.declared.length), String(l.granted.length), stateOf(l)])));
      if (args[0] !== undefined) {
        const l = rows[0]!;
        const mark = (item: string) => (l.withheld.includes(item) ? 'withheld' : l.waiting.includes(item) ? 'not granted' : 'granted');
        out.print(['', `${l.name} declares:`, ...(l.declared.length === 0 ? ['  nothing (its own folder, read; a private temporary folder; no network)'] : l.declared.map((item) => `  ${safeLine(item)}  (${mark(item)})`))].join('\n'));
        const extra = l.granted.filter((item) => !l.declared.includes(item));
        if (extra.length > 0) out.print(['Granted, no longer declared:', ...extra.map((item) => `  ${safeLine(item)}`)].join('\n'));
        if (l.unconfined) out.print('Allowed to run unconfined where no OS sandbox is available.');
      }
      out.print(`\nsandbox.default: ${mode.mode} (${mode.from})${mode.ignored.length > 0 ? `; ignored: ${mode.ignored.join('; ')}` : ''}`);
    },
  };

  const grant: CommandSpec = {
    name: 'perms grant',
    args: [{ ...PLUGIN_ARG, required: true }, PERMISSION_ARG],
    options: { unconfined: { type: 'boolean', description: 'Allow exactly this plugin to run without an OS sandbox where none is available (with your full rights)' } },
    async run({ args, options: flags, json, out }) {
      const name = args[0]!;
      if (name.startsWith('settings:')) requireSettings(name);
      const plugin = name.startsWith('settings:') ? undefined : requirePlugin(name);
      const items = parseItems(args.slice(1));
      const declared = plugin?.manifest.permissions;
      if (declared) {
        const undeclared = items.filter((item) => !itemsOf(declared).some((d) => sameItem(d, item)));
        if (undeclared.length > 0) {
          throw new PlinthError('PLN_E_PERM_UNKNOWN', `plugin "${name}" does not declare ${undeclared.map(formatItem).join(', ')}: only declared permissions can be granted`, {
            hint: `\`plinth perms list ${name}\` shows what it declares`,
            details: { plugin: name, permissions: undeclared.map(formatItem) },
          });
        }
      } else if (items.length === 0 && flags.unconfined !== true) {
        throw new PlinthError('PLN_E_PERM_UNKNOWN', `"${name}" has no manifest to grant from: name the permissions to grant`, {
          hint: `e.g. \`plinth perms grant ${name} 'network api.example.com'\`; the refusal that sent you here names them`,
          details: { plugin: name },
        });
      }
      const unconfined = flags.unconfined === true;
      const source = plugin ? (await policy.standing(principalOf(plugin))).source : name === 'settings:workspace' ? 'workspace' : name === 'settings:user' ? 'user' : undefined;
      const saved = await store.update(keyOf(name), (current) => {
        const base = current?.permissions ?? NO_PERMISSIONS;
        // No permission named: everything declared (a full grant also ends withheld items).
        const permissions = items.length > 0 ? withItems(base, items) : declared && !unconfined ? declared : base;
        const withheld = items.length > 0 ? (current?.withheld ?? []).filter((w) => !items.some((i) => sameItem(i, w))) : declared && !unconfined ? [] : (current?.withheld ?? []);
        return {
          version: plugin?.version ?? current?.version ?? 'settings',
          ...(source !== undefined && { source }),
          permissions,
          withheld,
          ...((unconfined || current?.unconfined) && { unconfined: true }),
          grantedAt: new Date().toISOString(),
        };
      });
      if (json) return out.json({ plugin: name, grant: saved, file: store.file });
      const what = items.length > 0 ? items.map(formatItem).join(', ') : unconfined ? 'leave to run unconfined where no OS sandbox is available' : `everything it declares (${itemsOf(saved!.permissions).length} permission(s))`;
      out.print(`Granted ${name}: ${safeLine(what)}.`);
      if (unconfined && items.length === 0) out.print('Where no OS sandbox is available it now runs with your full rights; `plinth perms revoke ' + name + ' --unconfined` withdraws it.');
    },
  };

  const revoke: CommandSpec = {
    name: 'perms revoke',
    args: [{ ...PLUGIN_ARG, required: true }, PERMISSION_ARG],
    options: { unconfined: { type: 'boolean', description: 'Withdraw only the permission to run without an OS sandbox' } },
    async run({ args, options: flags, json, out }) {
      const name = args[0]!;
      const items = parseItems(args.slice(1));
      const unconfined = flags.unconfined === true;
      const key = keyOf(name);
      const current = await store.get(key);
      store.clearSession(key);
      // A grant stored before they were per workspace grants nothing; revoking settings:workspace removes it too.
      if (name === WORKSPACE_SETTINGS && (await store.get(WORKSPACE_SETTINGS)) !== undefined) await store.update(WORKSPACE_SETTINGS, () => undefined);
      if (current === undefined && items.length === 0) {
        if (json) return out.json({ plugin: name, revoked: false });
        return out.print(`Nothing was granted to ${name}.`);
      }
      const saved = await store.update(key, (now) => {
        if (!now && items.length === 0) return undefined;
        if (items.length === 0 && !unconfined) return undefined; // the whole grant
        const base: StoredGrant = now ?? { version: known(name)?.version ?? 'settings', permissions: NO_PERMISSIONS, withheld: [], grantedAt: new Date().toISOString() };
        const { unconfined: _dropped, ...rest } = base;
        return {
          ...(unconfined ? rest : base),
          permissions: withoutItems(base.permissions, items),
          // A revoked item is withheld: the plugin runs without it and is not asked for it again.
          withheld: [...base.withheld, ...items.filter((item) => !base.withheld.some((w) => sameItem(w, item)))],
        };
      });
      if (json) return out.json({ plugin: name, revoked: true, grant: saved ?? null });
      if (saved === undefined) return out.print(`Revoked every grant of ${name}; it is asked again before it next runs.`);
      if (items.length > 0) out.print(`Revoked from ${name}: ${safeLine(items.map(formatItem).join(', '))}; it runs without ${items.length === 1 ? 'it' : 'them'}.`);
      if (unconfined) out.print(`${name} no longer runs where no OS sandbox is available.`);
    },
  };

  const status: CommandSpec = {
    name: 'perms status',
    args: [PLUGIN_ARG],
    async run({ args, json, out }) {
      const availability = await options.availability();
      /** The hooks and servers of one settings file: what they hold, decided as a launch would be. */
      const settingsRow = async (name: string) => {
        const scope: 'user' | 'workspace' = name === 'settings:user' ? 'user' : 'workspace';
        const stored = await store.get(keyOf(name));
        const session = store.session(keyOf(name));
        const held = session ? withItems(stored?.permissions ?? NO_PERMISSIONS, itemsOf(session.permissions)) : (stored?.permissions ?? NO_PERMISSIONS);
        const principal: Principal = { id: name, source: scope, ...(scope === 'workspace' && { dir: options.workspace }), declared: held, label: `the hooks and MCP servers of the ${scope} settings` };
        const decided = runs(await policy.explain(principal, { osSandbox: availability.available }));
        const why = decided.runs !== 'confined' ? decided.why : scope === 'user' ? 'your settings: each hook and server gets what its entry declares' : `${itemsOf(held).length} permission(s) granted; each hook and server gets those its entry declares`;
        return { plugin: name, source: scope, ...decided, why };
      };
      if (args[0]?.startsWith('settings:')) {
        const name = args[0];
        requireSettings(name);
        const row = await settingsRow(name);
        if (json) return out.json({ sandbox: availability, default: readDefaultMode(options.configLayers()), plugins: [row], builtinOpen: [] });
        out.print(availabilityLine(availability));
        out.print(`\n${formatTable(['PLUGIN', 'SOURCE', 'RUNS', 'WHY'], [[row.plugin, row.source, row.runs, row.why]])}`);
        return;
      }
      const all = [...options.plugins().values()].filter((p) => args[0] === undefined || p.name === args[0]);
      if (args[0] !== undefined && all.length === 0) requirePlugin(args[0]);
      // Builtin plugins that declare nothing run open, as part of plinth: counted, not listed (unless asked for by name).
      const quiet = args[0] === undefined ? all.filter((p) => p.source === 'builtin' && itemsOf(p.manifest.permissions).length === 0) : [];
      const plugins = all.filter((p) => !quiet.includes(p));
      const rows = await Promise.all(
        plugins.sort((a, b) => (a.name < b.name ? -1 : 1)).map(async (plugin) => ({ plugin: plugin.name, source: (await policy.standing(principalOf(plugin))).source, ...runs(await policy.explain(principalOf(plugin), { osSandbox: availability.available })) })),
      );
      // The settings files' hooks and servers are principals too: listed after the plugins.
      if (args[0] === undefined) rows.push(await settingsRow('settings:user'), await settingsRow('settings:workspace'));
      if (json) return out.json({ sandbox: availability, default: readDefaultMode(options.configLayers()), plugins: rows, builtinOpen: quiet.map((p) => p.name) });
      out.print(availabilityLine(availability));
      if (rows.length > 0) out.print(`\n${formatTable(['PLUGIN', 'SOURCE', 'RUNS', 'WHY'], rows.map((r) => [r.plugin, r.source, r.runs, r.why]))}`);
      if (quiet.length > 0) out.print(`\n${quiet.length} builtin plugin(s) declare no permissions and run open, as part of plinth.`);
    },
  };

  const audit: CommandSpec = {
    name: 'perms audit',
    args: [PLUGIN_ARG, { name: 'permission', description: 'filesystem, network, env, shell, mcp or launch' }],
    options: { limit: { type: 'string', value: '<n>', description: 'Only the last n entries (default 50; 0 for all)' } },
    async run({ args, options: flags, json, out }) {
      const limit = flags.limit === undefined ? 50 : Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 0) {
        out.note(`--limit expects a whole number, got "${String(flags.limit)}"`);
        return EXIT.USAGE;
      }
      const plugin = args[0] === undefined || args[0] === '-' ? undefined : args[0];
      const entries = readAudit(options.home, { ...(plugin !== undefined && { plugin }), ...(args[1] !== undefined && { permission: args[1] }), ...(limit > 0 && { limit }) });
      if (json) return out.json({ entries });
      if (entries.length === 0) return out.print(`No denials recorded${plugin ? ` for ${plugin}` : ''}${args[1] ? ` (${args[1]})` : ''}.`);
      out.print(formatTable(['TIME', 'PLUGIN', 'PERMISSION', 'TARGET', 'REASON'], entries.map((e) => [e.time.slice(0, 19).replace('T', ' '), e.plugin, e.permission, e.target, e.reason])));
    },
  };

  return [list, grant, revoke, status, audit];
}

/** How a decision reads in `perms status`. */
function runs(decision: GrantDecision): { runs: 'confined' | 'open' | 'refused' | 'asks first'; why: string; code?: string } {
  if (decision.mode === 'confined') return { runs: 'confined', why: `${itemsOf(decision.granted).length} permission(s) granted` };
  if (decision.mode === 'open') return { runs: 'open', why: decision.reason };
  if (decision.error.code === 'PLN_E_PERM_NOT_GRANTED') return { runs: 'asks first', why: `not granted yet: asked on a terminal, refused without one (${grantCommand(String(decision.error.plugin ?? ''))})`, code: decision.error.code };
  return { runs: 'refused', why: `${decision.error.code}: ${decision.error.hint ?? decision.error.message}`, code: decision.error.code };
}

/** One plain line: whether child processes can be confined here, and if not why. */
export function availabilityLine(a: SandboxAvailability): string {
  if (a.available) return `OS sandbox: ${a.kind ?? 'available'}${a.version ? ` ${a.version}` : ''}${a.program ? ` (${a.program})` : ''}: plugins' child processes run confined.`;
  return `No OS sandbox is available here: ${a.reason ?? 'unknown reason'}. Plugins that would run confined are not started unless you allow exactly that plugin (plinth perms grant <plugin> --unconfined).`;
}
