/**
 * Tokens for private sources, one per host (`hostTokens` in the user's settings:
 * `[{ "host": "git.example.com", "token": "${env:NAME}" }]`, as a registry's token is
 * set). A token is sent as `Authorization: Bearer <token>` to that host only (its
 * `host[:port]` exactly, over http or https): to git through its environment
 * (`http.<origin>/.extraHeader`, redirects not followed), to an archive's or a
 * marketplace.json's download (a redirect to another origin gets no token). It is
 * never written to the lock file nor shown in a message.
 */
import { PlinthError, safeLine } from 'plinth/sdk';

export interface HostTokenSetting {
  readonly host: string;
  readonly token: string;
}

const ENV_REF = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** The settings' `hostTokens`, each resolved from the environment when its host is asked for. */
export class HostTokens {
  constructor(private readonly settings: readonly HostTokenSetting[], private readonly env: Record<string, string | undefined> = process.env) {}

  /** The token for `url`'s host (http or https only), or undefined. */
  for(url: string | URL): string | undefined {
    let parsed: URL;
    try {
      parsed = typeof url === 'string' ? new URL(url) : url;
    } catch {
      return undefined;
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
    const index = this.settings.findIndex((s) => s.host.toLowerCase() === parsed.host.toLowerCase());
    if (index < 0) return undefined;
    const setting = this.settings[index]!;
    const name = ENV_REF.exec(setting.token)?.[1];
    if (name === undefined) {
      throw new PlinthError('PLN_E_MARKET_REGISTRY_CONFIG', `hostTokens[${index}] (host ${safeLine(setting.host)}): "token" must name an environment variable as \${env:NAME}, never hold the token itself`, {
        hint: 'set "token": "${env:NAME}" in plugins.marketplace.settings.hostTokens of your user settings.json, and export NAME with the token',
        details: { step: 'resolve', host: setting.host },
      });
    }
    const value = this.env[name];
    if (value === undefined || value === '') {
      throw new PlinthError('PLN_E_MARKET_REGISTRY_CONFIG', `the token for host ${safeLine(setting.host)} names the environment variable ${name}, which is not set`, {
        hint: `set ${name} in the environment plinth runs in, or remove hostTokens[${index}]`,
        details: { step: 'resolve', host: setting.host, envVar: name },
      });
    }
    return value;
  }
}

/** `hostTokens` as the settings hold it: the entries with a host and a token. */
export function hostTokenSettings(raw: unknown): HostTokenSetting[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter((e): e is HostTokenSetting => typeof e === 'object' && e !== null && typeof (e as HostTokenSetting).host === 'string' && typeof (e as HostTokenSetting).token === 'string');
}
