/**
 * Automatic updates under `plinth up` (the user setting `autoUpdateInterval`, in hours; off when
 * unset): once serving, then every interval, each installed plugin whose lock entry says
 * `autoUpdate` (`ext install --auto-update`, `ext auto-update <name> on`) is updated through the
 * marketplace's own `update`, the path `plinth ext update` takes: the policy (allowed marketplaces,
 * pinned commits, minimum release age), a rewritten ref refused, and the approval. Nobody is there to
 * approve, so an update that declares something new (hooks, servers, permissions) is held and
 * reported with the command that takes it, never applied. What each pass did is printed and kept
 * for `up`'s status (`autoUpdate` in `plinth up --json`).
 */
import { type InstallResult, type MarketplaceService, type PluginKernel, isPlinthError, safeLine } from 'plinth/sdk';

/** What one pass did, plugin by plugin. */
export interface AutoUpdatePass {
  /** When the pass started (ISO). */
  readonly at: string;
  /** Updated and loaded (a dependency updated with a plugin is listed too). */
  readonly applied: Array<{ name: string; from?: string; to: string }>;
  /** Not applied: what it is waiting for and the command that takes it. */
  readonly held: Array<{ name: string; reason: string; command: string }>;
  /** Could not be checked or updated (a registry or repository unreachable, a policy refusal). */
  readonly failed: Array<{ name: string; code: string; message: string }>;
  /** Checked, nothing newer. */
  readonly current: string[];
  /** The pass did not run (no marketplace). */
  readonly skipped?: string;
}

const UNATTENDED = 'plinth up applies updates unattended, and this one declares something new';

/** One pass over the plugins with auto-update on. */
export async function autoUpdatePass(kernel: PluginKernel, signal: AbortSignal): Promise<AutoUpdatePass> {
  const pass: AutoUpdatePass = { at: new Date().toISOString(), applied: [], held: [], failed: [], current: [] };
  let market: MarketplaceService;
  try {
    market = await kernel.get('marketplace');
  } catch (error) {
    const code = isPlinthError(error) ? error.code : 'PLN_E_SERVICE_UNAVAILABLE';
    return { ...pass, skipped: `${code}: no marketplace to update from (enable the builtin marketplace plugin, or unset plugins.extensions.settings.autoUpdateInterval)` };
  }
  let names: string[];
  try {
    names = Object.values((await market.installed()).plugins).filter((e) => e.autoUpdate === true).map((e) => e.name).sort();
  } catch (error) {
    return { ...pass, skipped: `${isPlinthError(error) ? error.code : 'PLN_E_MARKET_LOCK_INVALID'}: the lock file could not be read: ${firstLine(error)}` };
  }
  for (const name of names) {
    if (signal.aborted) break;
    await updateOne(market, name, signal, pass);
  }
  return pass;
}

async function updateOne(market: MarketplaceService, name: string, signal: AbortSignal, pass: AutoUpdatePass): Promise<void> {
  let declared: string[] = [];
  let result: InstallResult;
  try {
    result = await market.update([name], {
      signal,
      // Only reached when the update declares something its installed version did not: never approved here.
      approve: async (request) => {
        declared = request.plugins.flatMap((p) => (p.changed ?? []).map((c) => `${p.name}: ${c}`));
        return UNATTENDED;
      },
    });
  } catch (error) {
    const code = isPlinthError(error) ? error.code : 'PLN_E_AUTO_UPDATE_FAILED';
    if (code === 'PLN_E_MARKET_APPROVAL') {
      pass.held.push({ name, reason: `the update declares something new, which needs your approval${declared.length ? ` (${declared.map(safeLine).join('; ')})` : ''}`, command: `plinth ext update ${name}` });
    } else if (code === 'PLN_E_MARKET_GIT_REWRITTEN') {
      pass.held.push({ name, reason: `not followed: ${firstLine(error)}`, command: `plinth ext update ${name} --accept-rewrite` });
    } else if (!signal.aborted) pass.failed.push({ name, code, message: firstLine(error) });
    return;
  }
  for (const change of result.changes) pass.applied.push({ name: change.name, ...(change.from !== undefined && { from: change.from }), to: change.to });
  const held = result.notes.filter((n) => n.kind === 'held');
  for (const note of held) pass.held.push({ name, reason: safeLine(note.message), command: `plinth ext update ${name}` });
  if (result.changes.length === 0 && held.length === 0) pass.current.push(name);
}

/** One line per plugin, as printed while `up` runs and in its status. */
export function passLines(pass: AutoUpdatePass): string[] {
  if (pass.skipped) return [`auto-update skipped: ${pass.skipped}`];
  const lines = [
    ...pass.applied.map((a) => `auto-updated ${a.name}${a.from !== undefined ? ` ${a.from} →` : ''} ${a.to}`),
    ...pass.held.map((h) => `auto-update held ${h.name}: ${h.reason}; to take it: ${h.command}`),
    ...pass.failed.map((f) => `auto-update failed ${f.name}: ${f.code}: ${f.message}`),
  ];
  if (pass.current.length > 0) lines.push(`auto-update: ${pass.current.join(', ')} up to date`);
  if (lines.length === 0) lines.push('auto-update: no installed plugin has auto-update on (plinth ext auto-update <name> on)');
  return lines;
}

function firstLine(error: unknown): string {
  return safeLine(error instanceof Error ? (error.message.split('\n', 1)[0] ?? '') : String(error));
}

/**
 * Runs a pass now and then every `hours`; `last()` is the newest finished pass, `first` the first one.
 * `stop()` clears the timer and waits for a pass under way.
 */
export function scheduleAutoUpdates(kernel: PluginKernel, hours: number, print: (line: string) => void, signal: AbortSignal): { first: Promise<AutoUpdatePass>; last: () => AutoUpdatePass | undefined; stop: () => Promise<void> } {
  let latest: AutoUpdatePass | undefined;
  let running: Promise<AutoUpdatePass> | undefined;
  const run = (): Promise<AutoUpdatePass> => {
    if (running) return running;
    running = autoUpdatePass(kernel, signal)
      .then((pass) => {
        latest = pass;
        for (const line of passLines(pass)) print(line);
        return pass;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const first = run();
  // Node's timers take at most 2^31-1 ms (about 24.8 days): a longer interval waits that long.
  const timer = setInterval(() => void run().catch(() => undefined), Math.min(hours * 3_600_000, 2 ** 31 - 1));
  timer.unref();
  return {
    first,
    last: () => latest,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
