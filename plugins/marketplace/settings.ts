import { type HostTokenSetting, hostTokenSettings } from './host-tokens.js';
import type { PolicySettings } from './policy.js';

/** The plugin's own settings, as the kernel validated them (defaults from the manifest). */
export interface MarketplaceSettings extends PolicySettings {
  readonly downloadTimeoutMs: number;
  readonly maxDownloadBytes: number;
  readonly lockWaitMs: number;
  readonly npmTimeoutMs: number;
  /** A git clone (a git source, a marketplace) that takes longer is stopped. */
  readonly gitTimeoutMs: number;
  /** Tokens for private sources, per host (host-tokens.ts). */
  readonly hostTokens?: readonly HostTokenSetting[];
}

export function marketplaceSettings(settings: Readonly<Record<string, unknown>>): MarketplaceSettings {
  const number = (key: string, fallback: number) => (typeof settings[key] === 'number' && settings[key] > 0 ? (settings[key] as number) : fallback);
  const strings = (key: string) => (Array.isArray(settings[key]) ? (settings[key] as unknown[]).filter((s): s is string => typeof s === 'string' && s.length > 0) : []);
  return {
    downloadTimeoutMs: number('downloadTimeoutMs', 60_000),
    maxDownloadBytes: number('maxDownloadBytes', 50 * 1024 * 1024),
    lockWaitMs: number('lockWaitMs', 60_000),
    npmTimeoutMs: number('npmTimeoutMs', 300_000),
    gitTimeoutMs: number('gitTimeoutMs', 300_000),
    allowedMarketplaces: strings('allowedMarketplaces'),
    blockedMarketplaces: strings('blockedMarketplaces'),
    requirePinnedCommit: settings.requirePinnedCommit === true,
    minReleaseAgeDays: number('minReleaseAgeDays', 0),
    hostTokens: hostTokenSettings(settings.hostTokens),
  };
}
