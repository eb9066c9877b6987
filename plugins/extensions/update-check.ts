/**
 * The optional update check under `plinth up` (setting `updateCheck`, off by
 * default): once serving, ask the `marketplace` service which installed
 * plugins have newer versions and print one line each. It only tells; updating
 * stays the user's decision (`plinth ext update`), since an update may declare
 * new hooks or servers that need approval. Without a marketplace plugin, or
 * with every registry unreachable, it says so once and the host goes on.
 */
import { type OutdatedEntry, type PluginKernel, isPlinthError } from 'plinth/sdk';

export async function checkForUpdates(kernel: PluginKernel, print: (line: string) => void, signal: AbortSignal): Promise<void> {
  let market;
  try {
    market = await kernel.get('marketplace');
  } catch (error) {
    const code = isPlinthError(error) ? error.code : 'PLN_E_SERVICE_UNAVAILABLE';
    print(`update check skipped: ${code}: no marketplace to ask (enable the builtin marketplace plugin, or set plugins.extensions.settings.updateCheck to false)`);
    return;
  }
  try {
    const { plugins, notes } = await market.outdated({ signal });
    for (const note of notes) print(`update check: ${note.message}`);
    const newer = plugins.filter((p) => p.wanted !== p.current || p.latest !== p.current);
    for (const entry of newer) print(updateLine(entry));
    if (newer.length === 0 && plugins.length > 0) print(`update check: ${plugins.length} installed plugin(s) up to date`);
  } catch (error) {
    if (signal.aborted) return;
    const code = isPlinthError(error) ? error.code : 'PLN_E_MARKET_REGISTRY_UNREACHABLE';
    print(`update check failed: ${code}: ${error instanceof Error ? error.message.split('\n', 1)[0] : String(error)}`);
  }
}

/** `update available: x 1.0.0 → 1.1.0 (plinth ext update x)`, and the version beyond the recorded range, if any. */
export function updateLine(entry: OutdatedEntry): string {
  const within = entry.wanted !== entry.current ? `${entry.current} → ${entry.wanted} (plinth ext update ${entry.name})` : `${entry.current} is the newest within ${entry.range}`;
  const beyond = entry.latest !== entry.wanted ? `; ${entry.latest} is out of ${entry.range} (plinth ext update ${entry.name} --latest)` : '';
  return `update available: ${entry.name} ${within}${beyond}`;
}
