/**
 * Services: named implementations that plugins provide and others get. Who may
 * provide what is declared in manifests (`provides`), so a lazy provider can be
 * found, and an ambiguity reported, before any plugin code runs.
 */
import type { Disposer } from '../sdk/plugin.js';
import type { Config } from './config/load.js';
import { PlinthError } from '../sdk/errors.js';
import { closestName } from '../internal/text/suggest.js';
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
  private closed = false;
  /** service + provider → the view handed to callers (see `view`). */
  private readonly views = new Map<string, object>();

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

  /** The kernel shuts down: providers' implementations stay reachable through the views callers hold. */
  close(): void {
    this.closed = true;
  }

  /** Forgets what `plugin` declared (it left the kernel); what it provided goes with its registrations. */
  undeclare(plugin: string): void {
    for (const [service, list] of this.declared) {
      const rest = list.filter((p) => p !== plugin);
      if (rest.length > 0) this.declared.set(service, rest);
      else this.declared.delete(service);
    }
  }

  /** Throws PLN_E_SERVICE_UNDECLARED unless `provider` may provide `service`. */
  check(provider: string, service: string): void {
    if (provider !== HOST && !(this.declared.get(service) ?? []).includes(provider)) {
      throw new PlinthError(
        'PLN_E_SERVICE_UNDECLARED',
        `plugin "${provider}" provides service "${service}" without declaring it`,
        { plugin: provider, hook: 'provide', hint: `add "${service}" to "provides" in its manifest.json` },
      );
    }
  }

  provide(provider: string, service: string, implementation: unknown): Disposer {
    this.check(provider, service);
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
      // At shutdown a provider's registrations go too, but what callers hold stays
      // readable (a trace, a final status): only a live removal makes a service gone.
      if (!this.closed && byProvider.get(provider) === implementation) byProvider.delete(provider);
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
      const near = closestName(service, [...this.declared.keys(), ...this.provided.keys()].filter((known) => known !== service));
      throw new PlinthError('PLN_E_SERVICE_MISSING', `no plugin provides service "${service}"${near ? ` (did you mean "${near}"?)` : ''}`, {
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

  /**
   * What callers hold of a plugin's service: a view that reaches the provider's
   * current implementation at each use, so that a caller that kept it across a
   * replacement uses the new version, and one that kept it past the provider's
   * removal gets PLN_E_SERVICE_GONE instead of a torn-down object. The host's own
   * services are handed out as they are: only the host can withdraw them.
   */
  private view(service: string, provider: string): unknown {
    const current = this.provided.get(service)?.get(provider);
    if (provider === HOST || typeof current !== 'object' || current === null) return current;
    const key = `${service}\0${provider}`;
    let view = this.views.get(key);
    if (!view) {
      view = serviceView(() => {
        const now = this.provided.get(service)?.get(provider);
        if (now === undefined) {
          throw new PlinthError('PLN_E_SERVICE_GONE', `service "${service}" is gone: its provider "${provider}" was removed or disabled`, {
            plugin: provider,
            hint: `get it again with kernel.get("${service}") (another provider may serve it), or enable "${provider}" again`,
          });
        }
        return now as object;
      });
      this.views.set(key, view);
    }
    return view;
  }

  private isProjectPlugin(provider: string): boolean {
    const source = this.deps.sourceOf?.(provider);
    return source !== undefined && PROJECT_SOURCES.has(source);
  }

  async get(service: string): Promise<unknown> {
    const provider = this.chooseProvider(service);
    const byProvider = this.provided.get(service);
    if (byProvider?.has(provider)) return this.view(service, provider);
    try {
      await this.deps.activate(provider);
    } catch (cause) {
      throw new PlinthError('PLN_E_SERVICE_UNAVAILABLE', `service "${service}" is unavailable: its provider "${provider}" did not load`, {
        plugin: provider,
        cause,
        hint: 'see the provider\'s error below; `plinth plugins why ' + provider + '` explains its state',
      });
    }
    if (this.provided.get(service)?.has(provider)) return this.view(service, provider);
    throw new PlinthError('PLN_E_SERVICE_NOT_PROVIDED', `plugin "${provider}" declares service "${service}" but did not provide it during setup`, {
      plugin: provider,
      hint: `call kernel.provide("${service}", …) in its setup, or remove it from "provides"`,
    });
  }
}

/**
 * A stand-in for the object `current()` returns, looked up again on every
 * property read and every method call; methods run with the implementation
 * itself as `this`, so classes with private fields work through it.
 */
function serviceView(current: () => object): object {
  const methods = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  return new Proxy(Object.create(null) as object, {
    get(_, key) {
      const target = current();
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function' || isClass(value)) return value;
      let method = methods.get(key);
      if (!method) {
        method = (...args: unknown[]) => {
          const now = current();
          return (Reflect.get(now, key, now) as (...a: unknown[]) => unknown).apply(now, args);
        };
        methods.set(key, method);
      }
      return method;
    },
    has: (_, key) => Reflect.has(current(), key),
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor(_, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(current(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
    set: (_, key, value) => Reflect.set(current(), key, value),
  });
}

/** A class handed out as a value (an error class, say), not a method to call on the service. */
function isClass(fn: Function): boolean {
  const prototype = (fn as { prototype?: object }).prototype;
  return prototype !== undefined && (Function.prototype.toString.call(fn).startsWith('class') || Object.getOwnPropertyNames(prototype).length > 1);
}
