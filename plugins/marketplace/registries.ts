/**
 * The registries a user configured (`registries: [...]` in the user's
 * settings; a workspace file cannot add one: a cloned repository must not
 * choose where code is downloaded from), their tokens resolved from the
 * environment, and which registry a name is looked up in.
 */
import { isAbsolute, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type ConfigLayerView, PlinthError, type RegistrySetting } from 'plinth/sdk';
import { registrySettingSchema } from 'plinth/internal';

/** A registry ready to be asked: its URL normalised, its token (if any) resolved. */
export interface Registry {
  readonly name: string;
  /** `http(s):` or `file:` URL of the registry's root. */
  readonly url: URL;
  readonly scope?: string;
  /** The bearer token; only ever sent to `url`'s origin. Never logged, never in an error. */
  readonly token?: string;
  /** Pinned keyids (settings `keys`). */
  readonly keys?: readonly string[];
  /** Settings `signatures`; unset: `required` when the registry lists or pins keys. */
  readonly signatures?: 'required' | 'if-present' | 'off';
  /**
   * Asked only when named (`--registry plinth`, a lock entry that came from it), never for a name
   * nor in a search of the configured registries: plinth's embedded registry once `registries` is set.
   */
  readonly namedOnly?: true;
}

/** What plinth's embedded registry is called, in results, lock entries and `--registry`. */
export const EMBEDDED_REGISTRY_NAME = 'plinth';

/** The registry used when none is configured: plinth's embedded one, so search and install work offline. */
export interface RegistryDefaults {
  readonly embedded?: string;
}

/**
 * Parses the user layers' `registries` (the last layer that sets it wins, as settings merge).
 * Without it, plinth's embedded registry is the one registry. With it, the embedded registry stays
 * reachable by its name ({@link EMBEDDED_REGISTRY_NAME}, `namedOnly`) unless a configured one takes
 * that name: what was installed from it is still checked against it, not against the new registries.
 */
export function configuredRegistries(layers: readonly ConfigLayerView[], env: Record<string, string | undefined>, defaults: RegistryDefaults): Registry[] {
  let raw: unknown;
  for (const layer of layers) if (layer.scope === 'user' && layer.settings.registries !== undefined) raw = layer.settings.registries;
  const embedded = defaults.embedded === undefined ? undefined : { name: EMBEDDED_REGISTRY_NAME, url: registryUrl(defaults.embedded) };
  if (raw === undefined) return embedded ? [embedded] : [];
  if (!Array.isArray(raw)) throw configError('"registries" must be a list such as [{ "name": "local", "url": "http://127.0.0.1:4873" }]', 'registries');
  const configured = parseRegistries(raw, env);
  return embedded && !configured.some((r) => r.name === embedded.name) ? [...configured, { ...embedded, namedOnly: true }] : configured;
}

function parseRegistries(raw: readonly unknown[], env: Record<string, string | undefined>): Registry[] {
  const seen = new Set<string>();
  return raw.map((item, index) => {
    const parsed = registrySettingSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw configError(`registries[${index}].${issue.path.join('.')}: ${issue.message}`, `registries[${index}]`);
    }
    const setting: RegistrySetting = parsed.data;
    if (seen.has(setting.name)) throw configError(`registries[${index}]: the name "${setting.name}" is used twice`, `registries[${index}].name`);
    seen.add(setting.name);
    return {
      name: setting.name,
      url: registryUrl(setting.url),
      ...(setting.scope && { scope: setting.scope }),
      ...(setting.token && { token: resolveToken(setting, index, env) }),
      ...(setting.keys && { keys: setting.keys }),
      ...(setting.signatures && { signatures: setting.signatures }),
    };
  });
}

/**
 * The registry `--registry <value>` means: a registry's name (`plinth`, or one in `registries`, with its
 * token and keys), when `value` is a bare word naming one; else a URL or folder, without a token.
 */
export function commandLineRegistry(value: string, named: () => readonly Registry[] = () => []): Registry {
  const byName = /^[\w-]+$/.test(value) ? named().find((r) => r.name === value) : undefined;
  if (byName) {
    // Named on purpose: looked up in for every name.
    const { namedOnly: _, ...chosen } = byName;
    return chosen;
  }
  return { name: 'command-line', url: registryUrl(value) };
}

/** The registry `name` is looked up in: the one whose scope matches, else the first without a scope (never a `namedOnly` one). */
export function registryFor(registries: readonly Registry[], name: string): Registry {
  const scope = name.startsWith('@') ? name.slice(0, name.indexOf('/')) : undefined;
  const asked = registries.filter((r) => r.namedOnly !== true);
  const chosen = (scope && asked.find((r) => r.scope === scope)) || asked.find((r) => r.scope === undefined);
  if (!chosen) {
    throw new PlinthError('PLN_E_MARKET_REGISTRY_CONFIG', `no registry is configured for "${name}"`, {
      hint: 'add one to "registries" in your settings.json, e.g. [{ "name": "local", "url": "http://127.0.0.1:4873" }], or pass --registry <url>',
      details: { step: 'resolve', plugin: name },
    });
  }
  return chosen;
}

/** `http(s)://…` and `file://…` as they are; anything else is a folder path. */
export function registryUrl(text: string): URL {
  if (/^(https?|file):/i.test(text)) {
    try {
      const url = new URL(text);
      if (!url.pathname.endsWith('/')) url.pathname += '/';
      return url;
    } catch {
      throw configError(`"${text}" is not a valid registry URL`, 'url');
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw configError(`"${text}": only http(s):// and file:// registries are supported`, 'url');
  const url = pathToFileURL(isAbsolute(text) ? text : resolvePath(text));
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

function resolveToken(setting: RegistrySetting, index: number, env: Record<string, string | undefined>): string {
  const name = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(setting.token!)![1]!;
  const value = env[name];
  if (value === undefined || value === '') {
    throw new PlinthError('PLN_E_MARKET_REGISTRY_CONFIG', `the token of registry "${setting.name}" names the environment variable ${name}, which is not set`, {
      hint: `set ${name} in the environment plinth runs in, or remove "token" from registries[${index}]`,
      details: { step: 'resolve', registry: setting.name, envVar: name },
    });
  }
  return value;
}

function configError(message: string, path: string): PlinthError {
  return new PlinthError('PLN_E_MARKET_REGISTRY_CONFIG', message, { hint: 'correct "registries" in your settings.json: a list of { "name", "url", "token"?: "${env:NAME}", "scope"?: "@scope", "keys"?: ["SHA256:…"], "signatures"?: "required" | "if-present" | "off" }', details: { step: 'resolve', path } });
}
