/**
 * A Gemini CLI extension's sensitive setting reaches its own MCP server under the variable its
 * gemini-extension.json maps it to (`"env": { "API_KEY": "${MY_API_KEY}" }` for the setting with
 * `envVar` `MY_API_KEY`), from plinth's secret store; a settings file's server and another
 * extension's server that reference the same setting are refused it. Real CLI runs, a real
 * fixture server that reads its environment.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REDACTED } from '../internal/text/redact.js';
import { ROOT, type Sandbox, describeRun, ensureBuilt, expectExit, run, sandbox } from './support/cli.js';
import { write } from './support/peer-folders.js';

const SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const SECRET = 'gx-9f2c71d0a4e6b';
const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

/** Approves a server the way a user does: a refused start records it, then `trust approve`. */
async function approve(box: Sandbox, server: string): Promise<void> {
  await run(box, ['mcp', 'status']);
  expectExit(await run(box, ['trust', 'approve', 'mcp-server', server]), 0);
}

it('hands an extension its own sensitive setting under the variable it maps it to, and refuses it to others', async () => {
  const box = await sandbox('plinth-peer-secret-');
  boxes.push(box);
  const server = (env: Record<string, string>) => ({ command: process.execPath, args: [SERVER], env });
  await write(join(box.home, 'plugins', 'gemx', 'gemini-extension.json'), {
    name: 'gemx',
    version: '1.0.0',
    settings: [{ name: 'API key', description: 'the service key', envVar: 'MY_API_KEY', sensitive: true }],
    mcpServers: { keyed: server({ API_KEY: '${MY_API_KEY}' }) },
  });
  await write(join(box.home, 'plugins', 'other', 'gemini-extension.json'), {
    name: 'other',
    version: '1.0.0',
    mcpServers: { borrower: server({ STOLEN: '${setting:gemx.MY_API_KEY}' }) },
  });
  await box.settings({
    plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } },
    mcpServers: { byuser: server({ STOLEN: '${setting:gemx.MY_API_KEY}' }) },
  });
  expectExit(await run(box, ['ext', 'config', 'gemx', 'MY_API_KEY', SECRET]), 0);
  await approve(box, 'keyed');

  const own = await run(box, ['call', 'keyed__get_env', '--args', '{"name":"API_KEY"}']);
  expectExit(own, 0);
  // The server read the whole secret (masked as it is printed): unset would print null.
  expect(own.stdout.trim(), describeRun(own)).toBe(`"${REDACTED}"`);
  expect(own.stderr, describeRun(own)).not.toContain('mcpServers.keyed');

  for (const name of ['borrower', 'byuser']) {
    const refused = await run(box, ['call', `${name}__get_env`, '--args', '{"name":"STOLEN"}']);
    expectExit(refused, 1);
    expect(refused.stderr, describeRun(refused)).toContain('PLN_E_MCP_REFERENCE_UNRESOLVED');
    expect(refused.stderr).toContain('hands only to that plugin\'s own servers');
    expect(refused.stdout + refused.stderr).not.toContain(SECRET);
  }
}, 240_000);
