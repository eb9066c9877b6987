/**
 * The `load` gate: before a plugin's code is imported, plugins that came with
 * a project (workspace) or from a download need an approval of their folder
 * as it is; user plugins are trusted on first use and pinned; builtin plugins
 * and those named on the command line (`path`) are trusted without a record.
 */
import { type Logger, type PluginInfo, type PluginSource, isPlinthError } from 'plinth/sdk';
import { TRUST_SOURCES } from './fingerprint.js';
import { pluginSubject } from './plugin-files.js';
import type { TrustService, TrustSource } from 'plinth/sdk';

/**
 * The trust source a plugin is checked as, or undefined when it needs no check:
 * `builtin` ships with plinth and `path` is a folder the user named on the
 * command line. A source this version does not know (the marketplace's
 * `downloaded`, when it marks installs so) is checked as what it says, or as
 * `downloaded`: it needs approval.
 */
export function trustSourceOf(source: PluginSource): TrustSource | undefined {
  switch (source) {
    case 'builtin':
    case 'path':
      return undefined;
    case 'user':
    case 'workspace':
      return source;
  }
  const other: string = source;
  return (TRUST_SOURCES as readonly string[]).includes(other) ? (other as TrustSource) : 'downloaded';
}

export interface GateOptions {
  readonly service: TrustService;
  readonly log: Logger;
  /**
   * How long a question on the terminal may wait: the kernel bounds a `load`
   * tap by `timeouts.setup`, so the question is withdrawn (as "no") a little
   * before that, instead of being left open after the plugin was refused.
   */
  readonly answerWithinMs: () => number;
}

/** The `load` tap: undefined lets the plugin load; a string refuses it and says why. */
export function pluginGate({ service, log, answerWithinMs }: GateOptions): (plugin: PluginInfo) => Promise<string | undefined> {
  return async (plugin) => {
    const source = trustSourceOf(plugin.source);
    if (source === undefined) return undefined;
    let subject;
    try {
      subject = await pluginSubject(plugin, source);
    } catch (error) {
      if (isPlinthError(error) && error.code === 'PLN_E_TRUST_PLUGIN_FILES') return `${error.code}: ${error.message}${error.hint ? `; ${error.hint}` : ''}`;
      throw error;
    }
    const answer = new AbortController();
    const timer = setTimeout(() => answer.abort(), answerWithinMs());
    try {
      const verdict = await service.check(subject, { signal: answer.signal });
      if (verdict.trusted) {
        log.debug(`${plugin.source} plugin "${plugin.name}" is trusted (${verdict.level})`);
        return undefined;
      }
      return verdict.reason ?? `${plugin.source} plugin "${plugin.name}" is not approved`;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** `timeouts.setup` from the merged settings (default 10 s), less half a second for the rest of the check. */
export function answerWithin(config: Readonly<Record<string, unknown>>): number {
  const timeouts = config.timeouts as { setup?: unknown } | undefined;
  const setup = typeof timeouts?.setup === 'number' ? timeouts.setup : 10_000;
  return Math.max(0, setup - 500);
}
