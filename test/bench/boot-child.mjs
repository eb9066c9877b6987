/**
 * One boot for kernel.bench.mjs, in a process of its own (argv[2]: a JSON job).
 * `kernel`: createKernel + boot() over the given home, timed from before
 * createKernel to the end of boot; `jiti`: jiti alone (created as the kernel's
 * loader creates it, `plinth/sdk` the same module) importing the same entry
 * files one after another, timed from importing jiti to the last import. The
 * kernel's modules are imported before the clock starts on both sides: what is
 * timed is the work that grows with the plugins. Prints one JSON line.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const job = JSON.parse(process.argv[2]);
const url = (file) => pathToFileURL(path.join(job.dist, file)).href;
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

if (job.mode === 'kernel') {
  const { createKernel } = await import(url('kernel/index.js'));
  const warnings = [];
  const cpu0 = cpu();
  const started = performance.now();
  const kernel = createKernel({ home: job.home, workspace: job.workspace, env: job.env, builtin: job.builtin, logSink: (line) => warnings.push(line) });
  const report = await kernel.boot();
  const ms = performance.now() - started;
  const cpuMs = cpu() - cpu0;
  const states = {};
  for (const plugin of report.plugins) states[plugin.state] = (states[plugin.state] ?? 0) + 1;
  const failed = report.plugins.filter((p) => p.state === 'failed' || p.state === 'skipped' || (p.state === 'excluded' && p.error?.code !== 'PLN_E_PLUGIN_DISABLED' && p.error?.code !== 'PLN_E_DEP_DISABLED'));
  await kernel.shutdown();
  process.stdout.write(`${JSON.stringify({ ms, cpuMs, plugins: report.plugins.length, states, failed: failed.map((p) => `${p.name}: ${p.error?.code} ${p.error?.message}`), warnings: warnings.length })}\n`);
} else {
  const require = createRequire(path.join(job.dist, '..', 'package.json'));
  const sdk = await import(url('sdk/index.js'));
  const jitiUrl = pathToFileURL(require.resolve('jiti')).href;
  const cpu0 = cpu();
  const started = performance.now();
  const { createJiti } = await import(jitiUrl);
  const jiti = createJiti(url('kernel/index.js'), { virtualModules: { 'plinth/sdk': sdk }, interopDefault: true, moduleCache: true });
  for (const file of job.files) {
    const definition = await jiti.import(file, { default: true });
    if (typeof definition?.setup !== 'function') throw new Error(`${file} exports no plugin`);
  }
  const ms = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ ms, cpuMs: cpu() - cpu0, plugins: job.files.length })}\n`);
}
