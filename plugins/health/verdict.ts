/**
 * What one check's outcome means for a server: its counters, healthy or
 * degraded, or a reason to restart it. The monitor decides what a restart
 * involves; this only reads the outcome against the settings.
 */
import type { HealthBoard, HealthRecord } from './board.js';
import type { ProbeOutcome } from './probe.js';
import type { HealthSettings } from './settings.js';

/** Records `outcome` on `record` and moves it; returns why it must be restarted, if it must. */
export function applyOutcome(record: HealthRecord, outcome: ProbeOutcome, settings: HealthSettings, board: HealthBoard): string | undefined {
  const now = Date.now();
  record.lastCheck = now;
  record.probe = outcome.method;
  if (outcome.ok) {
    record.latencyMs = outcome.latencyMs;
    record.failures = 0;
    // Stable for a whole interval since it came back: the restarts it took are forgiven.
    if (record.upSince !== undefined && now - record.upSince >= settings.interval) record.restarts = 0;
    if (outcome.latencyMs > settings.degradedMs) {
      board.move(record, 'degraded', `${outcome.method} took ${outcome.latencyMs} ms (more than ${settings.degradedMs} ms)`);
    } else {
      board.move(record, 'healthy', `${outcome.method} answered in ${outcome.latencyMs} ms`);
    }
    return undefined;
  }
  record.failures++;
  if (outcome.down) return outcome.reason;
  if (record.failures >= settings.failuresForRestart) return `${record.failures} checks failed in a row, the last: ${outcome.reason}`;
  if (record.failures >= settings.failuresForDegraded) {
    board.move(record, 'degraded', `${outcome.reason} (${record.failures} of ${settings.failuresForRestart} failed checks before a restart)`);
  }
  return undefined;
}
