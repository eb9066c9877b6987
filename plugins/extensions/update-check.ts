/**
 * The optional update check under `plinth up` (setting `updateCheck`, off by
 * default): once serving, ask the `marketplace` service which installed
 * plugins have newer versions and print one line each, and stop any installed
 * version its registry revoked (with the reason and the version to move to). It only tells; updating
 * stays the user's decision (`plinth ext update`), since an update may declare
 * new hooks or servers that need approval; the plugins the user marked for
 * auto-update are updated by auto-update.ts, through that same `update`. Without a marketplace plugin, or
 * with every registry unreachable, it says so once and the host goes on.
 */
import { type LiveReport, type OutdatedEntry, type PluginKernel, type RevokedEntry, isPlinthError } from 'plinth/sdk';

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
    const { plugins, notes, revoked } = await market.outdated({ signal });
    for (const note of notes) print(`update check: ${note.message}`);
    // A revoked version stops now, through the live lifecycle (its dependents with it); the lock file keeps it from loading again.
    for (const entry of revoked) await disableRevoked(kernel, entry, print);
    const newer = plugins.filter((p) => p.wanted !== p.current || p.latest !== p.current);
    for (const entry of newer) print(updateLine(entry));
    if (newer.length === 0 && plugins.length > 0) print(`update check: ${plugins.length} installed plugin(s) up to date`);
  } catch (error) {
    if (signal.aborted) return;
    const code = isPlinthError(error) ? error.code : 'PLN_E_MARKET_REGISTRY_UNREACHABLE';
    print(`update check failed: ${code}: ${error instanceof Error ? error.message.split('\n', 1)[0] : String(error)}`);
  }
}

async function disableRevoked(kernel: PluginKernel, entry: RevokedEntry, print: (line: string) => void): Promise<void> {
  const move = entry.use ? `; move to ${entry.use}: plinth ext install ${entry.name}@${entry.use}` : '';
  const running = kernel.status().some((p) => p.name === entry.name && p.version === entry.version && (p.state === 'active' || p.state === 'lazy'));
  if (!running) return print(`revoked: ${entry.name}@${entry.version} by registry ${entry.registry}: ${entry.reason}${move}`);
  const report = await kernel.plugins.disable(entry.name).catch((error: unknown) => error);
  const failed = report instanceof Error ? report : (report as LiveReport).failed[0];
  if (failed) return print(`revoked: ${entry.name}@${entry.version} by registry ${entry.registry}: ${entry.reason}; it could not be stopped (${failed.message})${move}`);
  const others = (report as LiveReport).removed.filter((n) => n !== entry.name);
  print(`disabled ${entry.name}@${entry.version}: revoked by registry ${entry.registry}: ${entry.reason}${others.length ? ` (stopped with it: ${others.join(', ')})` : ''}${move}`);
}

/** `update available: x 1.0.0 → 1.1.0 (plinth ext update x)`, and the version beyond the recorded range, if any. */
export function updateLine(entry: OutdatedEntry): string {
  // A git source whose branch was rewritten or whose tag moved: told, never offered as a plain update.
  if (entry.status === 'rewritten') return `not followed: ${entry.name}: ${entry.reason ?? 'its ref was rewritten'} (plinth ext update ${entry.name} --accept-rewrite takes it)`;
  const within = entry.wanted !== entry.current ? `${entry.current} → ${entry.wanted} (plinth ext update ${entry.name})` : `${entry.current} is the newest within ${entry.range}`;
  const beyond = entry.latest !== entry.wanted ? `; ${entry.latest} is out of ${entry.range} (plinth ext update ${entry.name} --latest)` : '';
  return `update available: ${entry.name} ${within}${beyond}`;
}
