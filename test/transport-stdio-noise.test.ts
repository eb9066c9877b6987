/**
 * A stdio server that writes on stdout what is not JSON-RPC (logs, a banner,
 * a usage text), run as the built `plinth` runs it: a real child process.
 * When it wrote nothing else, plinth says so, with the count, the first line
 * (bounded, secrets masked) and where logs belong: as a coded warning when
 * the connect times out, in the connect error when the process exits. A server
 * that prints a banner and then speaks JSON-RPC connects as before, unwarned.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
const boxes: Sandbox[] = [];
afterEach(async () => {
  for (const box of boxes.splice(0)) await box.remove();
});

const SECRET = 'tok-5e3f9a1b7c2d4e6f';
/** Logs on stdout, its token among them, then waits for ever: never a JSON-RPC line. */
const CHATTY = `console.log('Server listening on port 3000, token ' + process.env.API_TOKEN);
console.log('x'.repeat(5000));
console.log('ready');
setInterval(() => {}, 1000);
`;
/** A usage text on stdout, then exit 2: a program that is not an MCP server. */
const USAGE = `console.log('Usage: tool [--port N]'); console.log('  --port N  the port'); process.exit(2);`;
/** A banner on stdout first, then a well-behaved server. */
const BANNER = `import { createInterface } from 'node:readline';
console.log('banner: starting');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'b', version: '1.0.0' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'hi', inputSchema: { type: 'object' } }] } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, result: {} });
});
`;

async function box(servers: Record<string, string>): Promise<Sandbox> {
  const made = await sandbox('plinth-stdio-noise-');
  boxes.push(made);
  const mcpServers: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(servers)) {
    const file = join(made.base, `${name}.mjs`);
    await writeFile(file, source);
    mcpServers[name] = { command: process.execPath, args: [file], env: { API_TOKEN: SECRET }, timeout: 1500 };
  }
  await made.settings({ mcpServers, plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false }, mcp: { settings: { retries: 0 } } } });
  return made;
}

const notJsonRpc = (stderr: string) => stderr.split('\n').filter((line) => line.includes('PLN_E_MCP_STDIO_NOT_JSONRPC'));

describe('a stdio server that writes only what is not JSON-RPC on stdout', () => {
  test('and stays up: the connect timeout comes with a warning that counts the lines, quotes the first (masked) and says logs belong on stderr', async () => {
    const place = await box({ chatty: CHATTY });
    const result = await run(place, ['mcp', 'status', 'chatty']);
    expectExit(result, 1);
    expect(result.stdout).toContain('PLN_E_MCP_CONNECT_TIMEOUT');
    const warnings = notJsonRpc(result.stderr);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('MCP server "chatty" wrote 3 lines on stdout that are not JSON-RPC, and no JSON-RPC message');
    expect(warnings[0]).toContain('(the first: "Server listening on port 3000, token ');
    expect(warnings[0]).toContain('its logs belong on stderr');
    expect(warnings[0]).not.toContain('x'.repeat(300));
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  }, 90_000);

  test('and exits: the connect error itself says why, not just "Connection closed"', async () => {
    const place = await box({ usage: USAGE });
    const result = await run(place, ['mcp', 'status', 'usage', '--json']);
    expectExit(result, 1);
    const error = json(result).servers[0].error;
    expect(error.code).toBe('PLN_E_MCP_CONNECT_FAILED');
    expect(error.message).toContain('the server process exited with code 2; it wrote 2 lines on stdout that are not JSON-RPC, and no JSON-RPC message (the first: "Usage: tool [--port N]")');
    expect(error.message).toContain('logs belong on stderr');
  }, 90_000);

  test('a banner before JSON-RPC: connected as before, no warning', async () => {
    const place = await box({ banner: BANNER });
    const result = await run(place, ['mcp', 'tools', 'banner']);
    expectExit(result, 0);
    expect(result.stdout).toContain('banner__hi');
    expect(notJsonRpc(result.stderr)).toEqual([]);
  }, 90_000);
});
