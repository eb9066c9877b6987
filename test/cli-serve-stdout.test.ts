/**
 * `plinth serve --stdio` keeps stdout for MCP: a plugin that prints with
 * `console.log` (in its setup, in an event handler during a tool call) must
 * not put a line into the stream an MCP host parses. The built `plinth` in a
 * child process, the builtin demo server behind it, a real MCP session over
 * its stdin and stdout; what the plugin prints comes out on stderr.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, cleanEnv, ensureBuilt } from './support/cli.js';

let base = '';

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-serve-stdout-'));
}, 300_000);

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const CHATTY = `export default {
  setup(kernel) {
    console.log('chatty: set up');
    kernel.on('before_tool', () => { console.log('chatty: before_tool'); });
  },
};
`;

it('a plugin that prints to stdout does not break the MCP stream: every stdout line is a JSON-RPC message, the prints go to stderr', async () => {
  const home = join(base, 'home');
  const workspace = join(base, 'project');
  const plugin = join(base, 'plugins', 'chatty');
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  await mkdir(plugin, { recursive: true });
  await writeFile(join(plugin, 'manifest.json'), JSON.stringify({ name: 'chatty', version: '1.0.0', kernel: '^1.0.0', main: './index.mjs', events: ['before_tool'] }));
  await writeFile(join(plugin, 'index.mjs'), CHATTY);
  await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: { health: { enabled: false } } }));

  const child = spawn(process.execPath, [BIN, 'serve', '--stdio', '--home', home, '--workspace', workspace, '--plugin-dir', join(base, 'plugins')], {
    cwd: workspace,
    env: cleanEnv({}, { ci: true }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines: string[] = [];
  const answered = new Map<number, (message: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    try {
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') answered.get(message.id)?.(message);
    } catch {
      // Not JSON: the assertion below shows it.
    }
  });
  const request = (id: number, method: string, params: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      answered.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  try {
    await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const called = await request(2, 'tools/call', { name: 'demo__echo', arguments: { message: 'hi' } });
    expect(called).toMatchObject({ result: { content: [{ type: 'text', text: 'hi' }] } });
  } finally {
    child.stdin.end();
    await new Promise((resolve) => child.once('close', resolve));
  }
  for (const line of lines) expect(() => JSON.parse(line), `stdout line ${JSON.stringify(line)}`).not.toThrow();
  expect(stderr).toContain('chatty: set up');
  expect(stderr).toContain('chatty: before_tool');
}, 120_000);
