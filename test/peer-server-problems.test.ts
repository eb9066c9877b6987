/**
 * A problem with a peer plugin's MCP server is told in the author's terms: it names the file
 * the server is written in (a Claude Code plugin's `.mcp.json`, not its `.claude-plugin/plugin.json`),
 * quotes the reference as written (`${TOKEN}`, not plinth's `${env:TOKEN}`), and is printed once
 * per command, also by commands that list it themselves. (Plinth's other warnings, a settings
 * file's unknown key among them, are printed by every command that reads what they are about,
 * so these are too.) Real CLI runs.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT, type Result, type Sandbox, describeRun, ensureBuilt, run, sandbox } from './support/cli.js';
import { write } from './support/peer-folders.js';

const SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

const printed = (result: Result) => `${result.stdout}\n${result.stderr}`;
const count = (text: string, needle: string) => text.split(needle).length - 1;

it('names the peer file the server is written in, quotes the reference as written, and says it once per command', async () => {
  const box = await sandbox('plinth-peer-problems-');
  boxes.push(box);
  const claude = join(box.home, 'plugins', 'claude-x');
  await write(join(claude, '.claude-plugin', 'plugin.json'), { name: 'claude-x', version: '1.0.0' });
  await write(join(claude, '.mcp.json'), { mcpServers: { cserv: { command: process.execPath, args: [SERVER], env: { TOKEN: '${PEER_TEST_UNSET_TOKEN}' } } } });
  const gemini = join(box.home, 'plugins', 'gemini-x');
  await write(join(gemini, 'gemini-extension.json'), {
    name: 'gemini-x',
    version: '1.0.0',
    mcpServers: { gserv: { command: process.execPath, args: [SERVER], env: { REGION: '$PEER_TEST_UNSET_REGION' } } },
  });
  await box.settings({ plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } } });

  const claudeProblem = `${join(claude, '.mcp.json')}: mcpServers.cserv.env.TOKEN: "\${PEER_TEST_UNSET_TOKEN}" refers to the environment variable PEER_TEST_UNSET_TOKEN, which is not set`;
  const geminiProblem = `${join(gemini, 'gemini-extension.json')}: mcpServers.gserv.env.REGION: "$PEER_TEST_UNSET_REGION" refers to the environment variable PEER_TEST_UNSET_REGION, which is not set`;
  for (const args of [['mcp', 'list'], ['mcp', 'status'], ['mcp', 'get', 'cserv'], ['ext', 'list']]) {
    const result = await run(box, args);
    const text = printed(result);
    expect(count(text, claudeProblem), `${args.join(' ')}\n${describeRun(result)}`).toBe(1);
    expect(text).not.toContain('plugin.json');
    expect(text).not.toContain('${env:PEER_TEST_UNSET');
    if (args[1] !== 'get') expect(count(text, geminiProblem), `${args.join(' ')}\n${describeRun(result)}`).toBe(1);
  }
}, 180_000);
