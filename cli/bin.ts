#!/usr/bin/env node
/**
 * The `plinth` executable. `--version` is answered here, before any kernel
 * module loads, so it stays instant and loads no plugin code.
 */
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const beforeDashes = argv.indexOf('--') === -1 ? argv : argv.slice(0, argv.indexOf('--'));

if (beforeDashes.includes('--version') || beforeDashes.includes('-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const { KERNEL_API_VERSION } = await import('../sdk/version.js');
  if (beforeDashes.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ name: 'plinth', version: pkg.version, kernelApi: KERNEL_API_VERSION, node: process.version })}\n`);
  } else {
    process.stdout.write(`plinth ${pkg.version} (kernel API ${KERNEL_API_VERSION}, node ${process.version})\n`);
  }
} else {
  // Before the kernel's modules load: on Node ≥ 22.1 they compile from V8's cached code (cli/compile-cache.ts).
  (await import('./compile-cache.js')).enableCompileCache();
  // The command table as a previous identical call printed it, when nothing it was made from changed (cli/help-cache.ts).
  const helpCache = await import('./help-cache.js');
  const kept = helpCache.mayBeHelp(argv) ? helpCache.readHelp(helpCache.helpKey(argv)) : undefined;
  if (kept !== undefined) {
    const { tolerateClosedStandardStreams, writeStandard } = await import('../internal/terminal/std-streams.js');
    tolerateClosedStandardStreams();
    writeStandard(process.stdout, kept.stdout);
    process.exitCode = kept.code;
  } else {
    const [{ main }, { tolerateClosedStandardStreams }] = await Promise.all([import('./main.js'), import('../internal/terminal/std-streams.js')]);
    // A closed terminal or pipe must not crash plinth halfway through shutdown.
    tolerateClosedStandardStreams();
    const code = await main(argv);
    process.exitCode = code;
    // Shutdown is done; a plugin that left a timer or socket open (a hung
    // teardown) must not keep the process alive. The timer is unref'd, so a
    // clean exit is not delayed by it.
    setTimeout(() => process.exit(code), 1000).unref();
  }
}
