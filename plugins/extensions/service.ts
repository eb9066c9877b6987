/**
 * The `extensions` service (sdk/contracts/extensions.ts): what `plinth ext …`
 * and the marketplace use. State that must survive a restart goes to a
 * settings file first; then, in a running kernel, the change is applied live
 * through `kernel.plugins`, and its report comes back as `live`.
 */
import { join, resolve } from 'node:path';
import { type Candidate, type ConfigResult, type Contribution, type Extension, type ExtensionDetails, type ExtensionScope, type ExtensionsService, type LinkResult, type LiveOutcome, type LiveReport, PlinthError, type PluginKernel, type PluginRef, type PluginStatus, type SettingDecl, type ToggleResult, type UnlinkResult, isPlinthError } from 'plinth/sdk';
import { closestName, isStoredSettingRef, storedSettingKey, storedSettingRef } from 'plinth/internal';
import { enabledState, type SettingsLayers, userDisables } from './enabled.js';
import { dependenciesOf, dependentsOf } from './graph.js';
import { readPluginFolder } from './plugin-folder.js';
import { checkedValue, settingViews } from './setting-values.js';
import { type SettingsFileRef, editSettings, pluginEntry, pruneEmpty, readSettings, settingsEntry } from './settings-file.js';

/** What the service needs of its plugin. */
export interface ServiceOptions {
  readonly kernel: PluginKernel;
  /** The environment settings' `envVar`s are read from (for where a value comes from). */
  readonly env?: Record<string, string | undefined>;
}

/** The top-level key of the user settings that lists linked folders (absolute paths). */
export const LINKS_KEY = 'links';

export function createExtensionsService({ kernel, env = process.env }: ServiceOptions): ExtensionsService {
  const files = (): { user: SettingsFileRef; workspace: SettingsFileRef } => {
    const list = kernel.inspect().config.files;
    const find = (scope: ExtensionScope): SettingsFileRef => ({ scope, file: list.find((f) => f.scope === scope)!.file });
    return { user: find('user'), workspace: find('workspace') };
  };
  const layers = async (): Promise<SettingsLayers> => {
    const { user, workspace } = files();
    const [u, w] = await Promise.all([readSettings(user), readSettings(workspace)]);
    return { user: u, workspace: w, profile: kernel.inspect().config.profile };
  };
  const candidatesOf = (name: string): readonly Candidate[] => kernel.inspect().resolution.candidates.get(name) ?? [];
  const isGuard = (name: string): boolean => candidatesOf(name).some((c) => c.manifest.guard || c.manifest.guards.length > 0);
  const statusOf = (name: string): PluginStatus | undefined => kernel.status().find((p) => p.name === name);
  const known = (name: string): PluginStatus => knownPlugin(kernel, name);
  const declsOf = (status: PluginStatus): readonly SettingDecl[] => candidateOf(kernel, status)?.manifest.settings ?? [];
  const declOf = (status: PluginStatus, setting: string): SettingDecl => declaredSetting(kernel, status.name, setting);
  /** A peer plugin's contributions, each with its absolute file (its manifest lists them relative to its folder). */
  const contributionsOf = (status: PluginStatus): Contribution[] => {
    const candidate = candidateOf(kernel, status);
    const listed = candidate?.manifest.peer?.contributions ?? [];
    return listed.map((c) => ({ plugin: status.name, kind: c.kind, name: c.name, file: join(candidate!.dir, ...c.path.split('/')), path: c.path, ...(c.description !== undefined && { description: c.description }) }));
  };
  const row = (status: PluginStatus, state: SettingsLayers): Extension => {
    const enabled = enabledState(status.name, state, isGuard(status.name));
    return {
      name: status.name,
      version: status.version,
      source: status.source,
      enabled: enabled.enabled,
      ...(enabled.from !== undefined && { enabledFrom: enabled.from }),
      linked: status.linked === true,
      state: status.state,
      dir: status.dir,
      description: candidateOf(kernel, status)?.manifest.description ?? '',
      ...(status.error && { error: { ...status.error } }),
    };
  };
  const chosen = (): readonly Candidate[] => kernel.inspect().resolution.plugins;
  const running = (name: string): boolean => ['active', 'lazy', 'loading'].includes(statusOf(name)?.state ?? '');

  const live = async (change: () => Promise<LiveReport>): Promise<LiveOutcome | undefined> => {
    try {
      return outcome(await change(), kernel);
    } catch (error) {
      // No live lifecycle in this kernel (one that only reads its plugins): the settings file is what counts.
      if (isPlinthError(error) && error.code === 'PLN_E_KERNEL_STATE') return undefined;
      return { added: [], removed: [], replaced: [], failed: [errorData(error, kernel)] };
    }
  };

  const toggle = async (name: string, enable: boolean, scope: ExtensionScope): Promise<ToggleResult> => {
    const status = known(name);
    const ref = files()[scope];
    const before = await layers();
    const notes: string[] = [];
    if (!enable && scope === 'workspace' && isGuard(name)) {
      throw new PlinthError('PLN_E_EXT_GUARD', `"${name}" is a guard plugin: a workspace's settings cannot disable it (plinth would ignore the value)`, {
        plugin: 'extensions',
        hint: `to disable it yourself, run \`plinth ext disable ${name}\` (your user settings)`,
        details: { file: ref.file, path: `plugins.${name}.enabled` },
      });
    }
    if (enable && scope === 'workspace' && userDisables(name, before)) {
      throw new PlinthError('PLN_E_EXT_USER_DISABLED', `your user settings disable "${name}": a workspace's settings cannot enable it`, {
        plugin: 'extensions',
        hint: `run \`plinth ext enable ${name}\` (your user settings)`,
        details: { file: files().user.file, path: `plugins.${name}.enabled` },
      });
    }
    // A workspace `true` is ignored (it could only undo a user's `false`): enabling there removes its `false`.
    const next = enable && scope === 'workspace' ? undefined : enable;
    const changed = await editSettings(ref, (data) => {
      const entry = pluginEntry(data, name, ref);
      if (entry.enabled === next) {
        pruneEmpty(data, name);
        return { changed: false, result: false };
      }
      if (next === undefined) delete entry.enabled;
      else entry.enabled = next;
      pruneEmpty(data, name);
      return { changed: true, result: true };
    });
    const after = enabledState(name, await layers(), isGuard(name));
    if (after.enabled !== enable && after.from) notes.push(`"${name}" is still ${after.enabled ? 'enabled' : 'disabled'} by ${after.from}: ${overrideFix(name, enable, after.from)}`);
    if (!enable && isGuard(name)) notes.push(`"${name}" is a guard plugin: while it is disabled, the events it guards are not checked by it`);
    const dependents = dependentsOf(name, chosen());
    let applied: LiveOutcome | undefined;
    if (name === 'extensions') notes.push('the extensions plugin applies a change to itself at the next start');
    else if (!enable && !after.enabled && running(name)) applied = await live(() => kernel.plugins.disable(name));
    else if (enable && after.enabled && !running(name) && status.state !== 'failed') applied = await live(() => kernel.plugins.enable(name));
    return { name, enabled: after.enabled, scope, file: ref.file, changed, dependents: applied ? applied[enable ? 'added' : 'removed'].filter((n) => n !== name) : dependents, notes, ...(applied && { live: applied }) };
  };

  const secrets = async () => {
    try {
      return await kernel.get('secrets');
    } catch (cause) {
      throw new PlinthError('PLN_E_EXT_SECRETS_UNAVAILABLE', 'no secret store is available for a sensitive setting', {
        plugin: 'extensions',
        cause,
        hint: 'enable the builtin oauth plugin (it provides the `secrets` service), or set the value through its environment variable',
      });
    }
  };

  const checkSensitive = (name: string, decl: SettingDecl, scope: ExtensionScope): void => {
    if (scope === 'workspace') {
      throw new PlinthError('PLN_E_EXT_SETTING_SCOPE', `"${decl.name}" of plugin "${name}" is sensitive: its value is kept in your secret store, referenced from your user settings, never in a project's file`, {
        plugin: 'extensions',
        hint: `run \`plinth ext config ${name} ${decl.name} <value>\` without --scope workspace`,
      });
    }
    const provider = chosen().find((c) => c.manifest.provides.includes('secrets'))?.manifest.name;
    if (provider && dependenciesOf(provider, chosen()).has(name)) {
      throw new PlinthError('PLN_E_EXT_SECRET_CYCLE', `plugin "${name}" is set up before the secret store (plugin "${provider}" needs it), so it cannot read "${decl.name}" from there`, {
        plugin: 'extensions',
        hint: decl.envVar ? `set it through ${decl.envVar}, or in your user settings` : 'set it in your user settings',
      });
    }
  };

  const service: ExtensionsService = {
    async list() {
      const state = await layers();
      return kernel.status().map((status) => row(status, state));
    },

    async info(name) {
      const status = known(name);
      const state = await layers();
      const manifest = candidateOf(kernel, status)?.manifest;
      const { user, workspace } = files();
      const details: ExtensionDetails = {
        ...row(status, state),
        provides: [...status.provides],
        dependencies: { ...manifest?.dependencies },
        dependents: dependentsOf(name, chosen()),
        commands: Object.keys(manifest?.commands ?? {}),
        hooks: Object.keys(manifest?.hooks ?? {}),
        mcpServers: Object.keys(manifest?.mcpServers ?? {}),
        settings: settingViews(name, declsOf(status), state, { user: user.file, workspace: workspace.file }, env),
        candidates: candidatesOf(name).map((c) => ({ version: c.manifest.version, source: c.source, dir: c.dir, linked: c.linked === true })),
        ...(manifest?.peer && { peer: { format: manifest.peer.format, file: manifest.peer.file, ignored: [...manifest.peer.ignored], notes: [...manifest.peer.notes] } }),
        contributions: contributionsOf(status),
      };
      return details;
    },

    async contributions(name) {
      if (name !== undefined) return contributionsOf(known(name));
      const state = await layers();
      // What is in force: a chosen plugin (found, not a lower version) that is enabled.
      return kernel
        .status()
        .filter((status) => row(status, state).enabled && status.dir !== '')
        .flatMap((status) => contributionsOf(status));
    },

    enable: (name, options) => toggle(name, true, options?.scope ?? 'user'),
    disable: (name, options) => toggle(name, false, options?.scope ?? 'user'),

    async settings(name) {
      const status = known(name);
      const { user, workspace } = files();
      return settingViews(name, declsOf(status), await layers(), { user: user.file, workspace: workspace.file }, env);
    },

    async configure(name, setting, value, options) {
      const status = known(name);
      const decl = declOf(status, setting);
      const scope = options?.scope ?? 'user';
      const ref = files()[scope];
      if (scope === 'workspace' && decl.scope === 'user') {
        throw new PlinthError('PLN_E_EXT_SETTING_SCOPE', `plugin "${name}" marks "${setting}" as a user setting: a workspace's settings cannot set it (plinth would ignore the value)`, {
          plugin: 'extensions',
          hint: `run \`plinth ext config ${name} ${setting} <value>\` without --scope workspace`,
        });
      }
      const typed = checkedValue(name, decl, value);
      if (decl.sensitive) {
        checkSensitive(name, decl, scope);
        // The secret first, then the reference: a file never points at nothing.
        await (await secrets()).set(storedSettingKey(name, setting), JSON.stringify(typed));
      }
      await editSettings(ref, (data) => {
        const values = settingsEntry(pluginEntry(data, name, ref), name, ref);
        Object.defineProperty(values, setting, { value: decl.sensitive ? storedSettingRef(name, setting) : typed, enumerable: true, writable: true, configurable: true });
        return { changed: true, result: undefined };
      });
      return configResult(name, setting, scope, ref.file, decl.sensitive ? 'secrets' : 'settings', false);
    },

    async unset(name, setting, options) {
      const status = known(name);
      const decl = declOf(status, setting);
      const scope = options?.scope ?? 'user';
      const ref = files()[scope];
      const removed = await editSettings(ref, (data) => {
        const values = settingsEntry(pluginEntry(data, name, ref), name, ref);
        const had = Object.hasOwn(values, setting) ? values[setting] : undefined;
        delete values[setting];
        pruneEmpty(data, name);
        return { changed: had !== undefined, result: had };
      });
      // The secret store holds the user's value only: a workspace file never references it.
      const stored = decl.sensitive && scope === 'user' && (isStoredSettingRef(removed) || removed === undefined);
      if (stored) await (await secrets()).delete(storedSettingKey(name, setting));
      return configResult(name, setting, scope, ref.file, stored ? 'secrets' : 'settings', true);
    },

    async links() {
      return linksIn(await readSettings(files().user));
    },

    async link(folder) {
      const { dir, manifest } = await readPluginFolder(folder);
      const ref = files().user;
      // Another linked folder of the same name is replaced: one name, one folder under development.
      const others = await Promise.all(
        linksIn(await readSettings(ref)).map(async (linked) => ({ linked, name: await readPluginFolder(linked).then((p) => p.manifest.name, () => undefined) })),
      );
      const replacedLink = others.find((o) => o.name === manifest.name && resolve(o.linked) !== dir)?.linked;
      await editSettings(ref, (data) => {
        const list = linksIn(data).filter((l) => l !== replacedLink && resolve(l) !== dir);
        data[LINKS_KEY] = [...list, dir];
        return { changed: true, result: undefined };
      });
      const shadows = installedOf(manifest.name, dir);
      const applied = await live(() => kernel.plugins.add(dir, { linked: true }));
      const result: LinkResult = { name: manifest.name, version: manifest.version, dir, file: ref.file, ...(replacedLink && { replacedLink }), ...(shadows && { shadows }), ...(applied && { live: applied }) };
      return result;
    },

    async unlink(nameOrDir) {
      const ref = files().user;
      const list = linksIn(await readSettings(ref));
      const named = await Promise.all(list.map(async (linked) => ({ linked, name: await readPluginFolder(linked).then((p) => p.manifest.name, () => undefined) })));
      const dir = resolve(nameOrDir);
      const found = named.find((n) => n.name === nameOrDir) ?? named.find((n) => resolve(n.linked) === dir);
      if (!found) {
        throw new PlinthError('PLN_E_EXT_NOT_LINKED', `no linked folder is named "${nameOrDir}"`, {
          plugin: 'extensions',
          hint: list.length === 0 ? 'nothing is linked (`plinth ext link <dir>` links a folder)' : `linked: ${named.map((n) => `${n.name ?? '(unreadable)'} (${n.linked})`).join(', ')}`,
        });
      }
      await editSettings(ref, (data) => {
        const kept = linksIn(data).filter((l) => l !== found.linked);
        if (kept.length === 0) delete data[LINKS_KEY];
        else data[LINKS_KEY] = kept;
        return { changed: true, result: undefined };
      });
      const name = found.name ?? nameOrDir;
      // Letting the linked folder go is enough: the kernel's next resolution picks the installed plugin of that name, if any.
      const applied = statusOf(name)?.linked ? await live(() => kernel.plugins.remove(name)) : undefined;
      // While linked, the kernel sets the other candidates aside: what comes back is known once the link is gone.
      const back = statusOf(name);
      const fallback = back && !back.linked && back.dir !== resolve(found.linked) ? { name, version: back.version, source: back.source, dir: back.dir } : installedOf(name, resolve(found.linked));
      const result: UnlinkResult = { name, dir: found.linked, file: ref.file, ...(fallback && { fallback }), ...(applied && { live: applied }) };
      return result;
    },
  };

  /** The best candidate of `name` that is not the linked folder `dir`: what the link shadows, or what unlinking falls back to. */
  const installedOf = (name: string, dir: string): PluginRef | undefined => {
    const other = candidatesOf(name).find((c) => c.dir !== dir && c.linked !== true);
    return other ? { name, version: other.manifest.version, source: other.source, dir: other.dir } : undefined;
  };

  const configResult = async (name: string, setting: string, scope: ExtensionScope, file: string, stored: 'settings' | 'secrets', unset: boolean): Promise<ConfigResult> => {
    const view = (await service.settings(name)).find((s) => s.name === setting)!;
    return { name, setting: view, scope, file, stored, unset };
  };

  return service;
}

/** How to change the layer that still decides, after a change in another one. */
function overrideFix(name: string, enable: boolean, from: string): string {
  if (from.startsWith('profile ')) return `change plugins.${name}.enabled under "profiles" → "${from.slice('profile '.length)}" in the settings file that sets it`;
  return `change it there too (\`plinth ext ${enable ? 'enable' : 'disable'} ${name} --scope ${from.startsWith('workspace') ? 'workspace' : 'user'}\`)`;
}

/** The status of `name`, or `PLN_E_PLUGIN_UNKNOWN` with a "did you mean". */
export function knownPlugin(kernel: PluginKernel, name: string): PluginStatus {
  const status = kernel.status().find((p) => p.name === name);
  if (status) return status;
  const near = closestName(name, kernel.status().map((p) => p.name));
  throw new PlinthError('PLN_E_PLUGIN_UNKNOWN', `no plugin named "${name}" was found`, {
    plugin: 'extensions',
    hint: near ? `did you mean "${near}"? \`plinth ext list\` lists every plugin` : '`plinth ext list` lists every plugin',
  });
}

/** The candidate a status row stands for (same folder), else the best one found. */
function candidateOf(kernel: PluginKernel, status: PluginStatus): Candidate | undefined {
  const list = kernel.inspect().resolution.candidates.get(status.name) ?? [];
  return list.find((c) => c.dir === status.dir && c.manifest.version === status.version) ?? list.find((c) => c.dir === status.dir) ?? list[0];
}

/** The declaration of `plugin`'s `setting`, or `PLN_E_EXT_SETTING_UNKNOWN` listing the ones it has. */
export function declaredSetting(kernel: PluginKernel, plugin: string, setting: string): SettingDecl {
  const decls = candidateOf(kernel, knownPlugin(kernel, plugin))?.manifest.settings ?? [];
  const decl = decls.find((d) => d.name === setting);
  if (decl) return decl;
  const near = closestName(setting, decls.map((d) => d.name));
  throw new PlinthError('PLN_E_EXT_SETTING_UNKNOWN', `plugin "${plugin}" declares no setting "${setting}"`, {
    plugin: 'extensions',
    hint: decls.length === 0 ? `"${plugin}" declares no settings` : `${near ? `did you mean "${near}"? ` : ''}its settings: ${decls.map((d) => d.name).join(', ')} (\`plinth ext config ${plugin}\`)`,
  });
}

/** The `links` of a settings object: the strings of its array, absolute. */
export function linksIn(data: Record<string, unknown>): string[] {
  const value = data[LINKS_KEY];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v !== '').map((v) => resolve(v)) : [];
}

function outcome(report: LiveReport, kernel: PluginKernel): LiveOutcome {
  return { added: [...report.added], removed: [...report.removed], replaced: [...report.replaced], failed: report.failed.map((e) => errorData(e, kernel)) };
}

function errorData(error: unknown, kernel: PluginKernel): LiveOutcome['failed'][number] {
  if (isPlinthError(error)) {
    return { code: error.code, message: kernel.redact(error.message), ...(error.hint && { hint: kernel.redact(error.hint) }), ...(error.plugin && { plugin: error.plugin }) };
  }
  return { code: 'PLN_E_PLUGIN_SETUP', message: kernel.redact(error instanceof Error ? error.message : String(error)) };
}
