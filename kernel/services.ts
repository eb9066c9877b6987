/**
 * Services: named implementations that plugins provide and others get. Who may
 * provide what is declared in manifests (`provides`), so a lazy provider can be
 * found, and an ambiguity reported, before any plugin code runs.
 */
import type { Disposer } from '../sdk/plugin.js';
import type { Config } from './config/load.js';
import { PlinthError } from '../sdk/errors.js';
import { PROJECT_SOURCES, type PluginSource } from './types.js';

/** The provider name the host application uses when it provides a service itself. */
export const HOST = 'host';

/** How the registry reaches the rest of the kernel. */
export interface ServiceDeps {
  /** `services` from settings: service → chosen provider. */
  readonly choices: Readonly<Record<string, string>>;
  /** Imports and sets up a plugin (and its dependencies); rejects with its load error. */
  activate(plugin: string): Promise<void>;
  /** Where a provider was found; undefined for the host and unknown names. */
  sourceOf?(plugin: string): PluginSource | undefined;
  /** Told when a choice is made for the user (a project plugin passed over). */
  note?(text: string): void;
}

/**
 * `services` from settings, file by file in merge order, except a choice made
 * by the workspace settings file (or its part of the profile) of a provider that
 * came with the project too (a workspace plugin): a cloned repository must not
 * pick, say, its own `trust`. Such a choice is skipped, so that the user's own
 * choice (if any) stands, and reported through `ignored`.
 */
export function serviceChoices(
  config: Pick<Config, 'settings' | 'layers'>,
  sourceOf: (plugin: string) => PluginSource | undefined,
  ignored: (error: PlinthError) => void,
): Record<string, string> {
  if (config.layers === undefined) return { ...config.settings.services };
  const choices: Record<string, string> = {};
  for (const layer of config.layers) {
    for (const [service, provider] of Object.entries(layer.settings.services ?? {})) {
      const source = sourceOf(provider);
      if (layer.scope === 'workspace' && source !== undefined && PROJECT_SOURCES.has(source)) {
        ignored(
          new PlinthError('PLN_E_SERVICE_CHOICE_IGNORED', `${layer.file}${layer.profile ? ` (profile ${layer.profile})` : ''} chooses "${provider}" for service "${service}", but "${provider}" is a ${source} plugin: a project cannot choose its own plugin as a provider; the choice is ignored`, {
            plugin: provider,
            hint: `if you trust it, choose it in your user settings ($PLINTH_HOME/settings.json): "services": { "${service}": "${provider}" }`,
            details: { service, provider, file: layer.file },
          }),
        );
        continue;
      }
      Object.defineProperty(choices, service, { value: provider, enumerable: true, writable: true, configurable: true });
    }
  }
  return choices;
}

export class ServiceRegistry {
  /** service → plugins whose manifest declares it. */
  private readonly declared = new Map<string, string[]>();
  /** service → provider → implementation. */
  private readonly provided = new Map<string, Map<string, unknown>>();
  /** Services whose project providers were passed over, said once. */
  private readonly noted = new Set<string>();

  constructor(private readonly deps: ServiceDeps) {}

  /** Records that `plugin` declares it provides `services`. */
  declare(plugin: string, services: readonly string[]): void {
    for (const service of services) {
      const list = this.declared.get(service) ?? [];
      if (!list.includes(plugin)) list.push(plugin);
      this.declared.set(service, list);
    }
  }

  /** Every provider declared for a service (plus the host, when it provided one). */
  providers(service: string): string[] {
    const declared = this.declared.get(service) ?? [];
    return this.provided.get(service)?.has(HOST) ? [...declared, HOST] : [...declared];
  }

  provide(provider: string, service: string, implementation: unknown): Disposer {
    if (provider !== HOST && !(this.declared.get(service) ?? []).includes(provider)) {
      throw new PlinthError(
        'PLN_E_SERVICE_UNDECLARED',
        `plugin "${provider}" provides service "${service}" without declaring it`,
        { plugin: provider, hook: 'provide', hint: `add "${service}" to "provides" in its manifest.json` },
      );
    }
    const byProvider = this.provided.get(service) ?? new Map<string, unknown>();
    if (byProvider.has(provider)) {
      throw new PlinthError('PLN_E_SERVICE_DUPLICATE', `"${provider}" provides service "${service}" twice`, {
        plugin: provider === HOST ? undefined : provider,
        hook: 'provide',
        hint: 'call provide once per service, or dispose the first registration before providing again',
      });
    }
    byProvider.set(provider, implementation);
    this.provided.set(service, byProvider);
    return () => {
      if (byProvider.get(provider) === implementation) byProvider.delete(provider);
    };
  }

  /** The provider `get(service)` would use; throws when there is none or the choice is ambiguous. */
  chooseProvider(service: string): string {
    const providers = this.providers(service);
    const chosen = this.deps.choices[service];
    if (chosen !== undefined) {
      if (!providers.includes(chosen)) {
        throw new PlinthError(
          'PLN_E_SERVICE_PROVIDER_UNKNOWN',
          `settings choose "${chosen}" for service "${service}", but it does not provide it` +
            (providers.length > 0 ? ` (providers: ${providers.join(', ')})` : ' (no plugin provides it)'),
          { hint: `set "services": { "${service}": "<one of the providers>" } in settings.json`, details: { service, chosen, providers } },
        );
      }
      return chosen;
    }
    if (providers.length === 0) {
      throw new PlinthError('PLN_E_SERVICE_MISSING', `no plugin provides service "${service}"`, {
        hint: 'install or enable a plugin that lists it in "provides"',
        details: { service },
      });
    }
    if (providers.length > 1) {
      // A provider that came with the project does not compete with the user's own:
      // an unapproved workspace plugin declaring `trust` must not make it ambiguous.
      const own = providers.filter((p) => !this.isProjectPlugin(p));
      if (own.length === 1) {
        if (!this.noted.has(service)) {
          this.noted.add(service);
          const passed = providers.filter((p) => p !== own[0]).map((p) => `"${p}"`).join(', ');
          this.deps.note?.(`service "${service}": using "${own[0]}"; ${passed} came with the workspace (choose in user settings to use it)`);
        }
        return own[0]!;
      }
      throw new PlinthError(
        'PLN_E_SERVICE_AMBIGUOUS',
        `service "${service}" has ${providers.length} providers: ${providers.join(', ')}`,
        { hint: `choose one in settings.json: "services": { "${service}": "${providers[0]}" }`, details: { service, providers } },
      );
    }
    return providers[0]!;
  }

  private isProjectPlugin(provider: string): boolean {
    const source = this.deps.sourceOf?.(provider);
    return source !== undefined && PROJECT_SOURCES.has(source);
  }

  async get(service: string): Promise<unknown> {
    const provider = this.chooseProvider(service);
    const byProvider = this.provided.get(service);
    if (byProvider?.has(provider)) return byProvider.get(provider);
    try {
      await this.deps.activate(provider);
    } catch (cause) {
      throw new PlinthError('PLN_E_SERVICE_UNAVAILABLE', `service "${service}" is unavailable: its provider "${provider}" did not load`, {
        plugin: provider,
        cause,
        hint: 'see the provider\'s error below; `plinth plugins why ' + provider + '` explains its state',
      });
    }
    const after = this.provided.get(service);
    if (after?.has(provider)) return after.get(provider);
    throw new PlinthError('PLN_E_SERVICE_NOT_PROVIDED', `plugin "${provider}" declares service "${service}" but did not provide it during setup`, {
      plugin: provider,
      hint: `call kernel.provide("${service}", …) in its setup, or remove it from "provides"`,
    });
  }
}
