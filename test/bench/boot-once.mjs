/**
 * One boot of the built kernel with every builtin plugin, for trust-first-boot.bench.mjs:
 * `node boot-once.mjs <home> <workspace>`. Prints `{ active, trustWrites }` on stdout: the user
 * plugins that loaded, and how many times trust.json was replaced (each write of the trust store
 * is a rename over it, counted by wrapping `fs/promises.rename` before the kernel is imported).
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [home, workspace] = process.argv.slice(2);
const trustFile = path.join(home, 'trust.json');
let trustWrites = 0;
const fs = createRequire(import.meta.url)('node:fs');
const rename = fs.promises.rename;
fs.promises.rename = (from, to) => {
  if (path.resolve(String(to)) === trustFile) trustWrites++;
  return rename(from, to);
};
syncBuiltinESMExports();

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const { Kernel } = await import(pathToFileURL(path.join(dist, 'kernel', 'index.js')).href);
const kernel = new Kernel({ home, workspace, builtin: true, env: {} });
await kernel.boot();
const active = kernel.status().filter((p) => p.source === 'user' && p.state === 'active').length;
await kernel.shutdown();
process.stdout.write(`${JSON.stringify({ active, trustWrites })}\n`);
