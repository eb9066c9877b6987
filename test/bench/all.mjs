/**
 * `npm run bench`: every `*.bench.mjs` in this folder, one after another (the
 * machines are small; two benchmarks at once would measure each other), in
 * name order. Arguments (`--json`, `--quick`) are passed on. Exits non-zero
 * when one failed, after running the rest.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const benches = readdirSync(here).filter((file) => file.endsWith('.bench.mjs')).sort();
const failed = [];
for (const bench of benches) {
  if (!process.argv.includes('--json')) process.stderr.write(`\n== ${bench}\n`);
  const run = spawnSync(process.execPath, [join(here, bench), ...process.argv.slice(2)], { stdio: 'inherit' });
  if (run.status !== 0) failed.push(`${bench} (${run.signal ?? `exit ${run.status}`})`);
}
if (failed.length > 0) {
  process.stderr.write(`\nbench: ${failed.length} of ${benches.length} failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
