/**
 * A launch with `pinned` (what a trust check approved) runs exactly those
 * bytes: from a private copy, checked against the approved SHA-256 as it is
 * read, beside which a module of the same folder is the approved copy too
 * and everything else links to the original; or it does not start
 * (PLN_E_TRUST_CHANGED_AT_RUN). Real child processes.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { createLauncher } from '../plugins/launcher/index.js';

const ws = mkdtempSync(join(tmpdir(), 'plinth-pinned-'));
afterAll(() => rmSync(ws, { recursive: true, force: true }));
const launcher = createLauncher();
afterAll(() => launcher.close());
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

const server = "const util = require('./util.js'); const dep = require('dep'); console.log(JSON.stringify({ util, dep, me: __filename }));\n";
const util = "module.exports = 'approved util';\n";
mkdirSync(join(ws, 'tools'));
mkdirSync(join(ws, 'node_modules', 'dep'), { recursive: true });
writeFileSync(join(ws, 'tools', 'server.js'), server);
writeFileSync(join(ws, 'tools', 'util.js'), util);
writeFileSync(join(ws, 'node_modules', 'dep', 'index.js'), "module.exports = 'dep';\n");
const pinned = [
  { path: join(ws, 'tools', 'server.js'), sha256: sha(server) },
  { path: join(ws, 'tools', 'util.js'), sha256: sha(util) },
];

test('runs the approved copy: a module beside it from the copy too, node_modules through a link; the copy is gone after', async () => {
  writeFileSync(join(ws, 'tools', 'util.js'), util);
  const result = await launcher.run({ owner: 'test', program: process.execPath, args: ['tools/server.js'], cwd: ws, pinned });
  expect(result.exitCode, result.stderr.toString()).toBe(0);
  const out = JSON.parse(result.stdout.toString()) as { util: string; dep: string; me: string };
  expect(out).toMatchObject({ util: 'approved util', dep: 'dep' });
  expect(out.me).toContain('plinth-approved-');
  expect(existsSync(out.me)).toBe(false);
});

test('a pinned file that no longer holds what was approved: nothing starts, PLN_E_TRUST_CHANGED_AT_RUN names it', async () => {
  writeFileSync(join(ws, 'tools', 'util.js'), "module.exports = 'swapped';\n");
  const run = launcher.run({ owner: 'test', purpose: 'MCP server "ws"', program: process.execPath, args: ['tools/server.js'], cwd: ws, pinned });
  await expect(run).rejects.toMatchObject({ code: 'PLN_E_TRUST_CHANGED_AT_RUN', message: expect.stringContaining(join(ws, 'tools', 'util.js')) });
});
