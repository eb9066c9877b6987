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

test("a pinned child's streams stand in until it starts: what is written before is delivered, and a large exchange keeps every byte in order", async () => {
  // An echo: each chunk of stdin back on stdout, then a line on stderr when stdin ends.
  const echo = "process.stdin.pipe(process.stdout); process.stdin.on('end', () => process.stderr.write('stdin ended\\n'));\n";
  writeFileSync(join(ws, 'tools', 'echo.js'), echo);
  const child = launcher.start({ owner: 'test', program: process.execPath, args: ['tools/echo.js'], cwd: ws, pinned: [{ path: join(ws, 'tools', 'echo.js'), sha256: sha(echo) }] });
  // Written at once, before the copy is made and the process exists: 8 MiB, far past every pipe's buffer (backpressure both ways).
  const block = Buffer.alloc(64 * 1024);
  const sent: Buffer[] = [];
  for (let i = 0; i < 128; i++) sent.push(Buffer.from(block.fill(i % 251)));
  const received: Buffer[] = [];
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => received.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  for (const chunk of sent) child.stdin!.write(chunk);
  child.stdin!.end();
  const end = await child.ended;
  expect(end.exitCode).toBe(0);
  expect(Buffer.concat(received).equals(Buffer.concat(sent))).toBe(true);
  expect(stderr).toBe('stdin ended\n');
});
