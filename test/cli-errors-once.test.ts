/**
 * One failure, printed once: the log line a failure causes when it happens and
 * the command's own report of it (its error, `plinth up`'s status) are not both
 * printed. Counted in what a person sees (stdout and stderr of real runs).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, type Result, type Sandbox, describeRun, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const SERVER = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
const TEST_TIMEOUT = 60_000;
const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterEach(async () => {
  for (const box of boxes.splice(0)) await box.remove();
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-once-');
  boxes.push(made);
  return made;
}

/** How often `needle` occurs in everything the run printed. */
function count(result: Result, needle: string): number {
  return `${result.stdout}\n${result.stderr}`.split(needle).length - 1;
}

function expectOnce(result: Result, ...needles: string[]): void {
  for (const needle of needles) expect(count(result, needle), `"${needle}" once in:\n${describeRun(result)}`).toBe(1);
}

/** A plugin in `<base>/plugins/<name>` (for --plugin-dir) whose setup throws, with a declared number setting and a command. */
async function brokenPlugin(sandboxed: Sandbox, name: string): Promise<string> {
  const dir = join(sandboxed.base, 'plugins', name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'manifest.json'),
    JSON.stringify({
      name,
      version: '1.0.0',
      kernel: '^1.0.0',
      main: './index.ts',
      settings: [{ name: 'limit', type: 'number', default: 1 }],
      commands: { [`${name} run`]: { summary: 'Runs it' } },
    }),
  );
  await writeFile(join(dir, 'index.ts'), "import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup() { throw new Error('kaboom in setup'); } });\n");
  return dir;
}

describe('a failure is printed once', () => {
  test('a plugin that fails at boot: once in plinth up --once, in its status, not also as a log line', async () => {
    const sandboxed = await box();
    const dir = await brokenPlugin(sandboxed, 'boom');
    const result = await run(sandboxed, ['up', '--once', '--plugin-dir', dir]);
    expectExit(result, 4);
    expect(result.stdout).toMatch(/^boom\s.*\sfailed\s/m);
    // The table names the code in its row; the reasons below it say code and message, once.
    expectOnce(result, 'kaboom in setup');
    expect(result.stderr).not.toContain('PLN_E_PLUGIN_SETUP');
  }, TEST_TIMEOUT);

  test('a plugin with an invalid setting: its command fails once, with the setting\'s code, message and fix', async () => {
    const sandboxed = await box();
    const dir = await brokenPlugin(sandboxed, 'counted');
    await sandboxed.settings({ plugins: { counted: { settings: { limit: 'five' } } } });
    const result = await run(sandboxed, ['counted', 'run', '--plugin-dir', dir]);
    expectExit(result, 1);
    expectOnce(result, 'PLN_E_COMMAND_UNAVAILABLE', 'PLN_E_SETTING_INVALID', 'plugins.counted.settings.limit must be', 'fix: set plugins.counted.settings.limit');
    expect(result.stderr).not.toContain('plinth[kernel]');
  }, TEST_TIMEOUT);

  test('the same in plinth up: the status shows the setting\'s code, message and fix once', async () => {
    const sandboxed = await box();
    const dir = await brokenPlugin(sandboxed, 'counted');
    await sandboxed.settings({ plugins: { counted: { settings: { limit: 'five' } } } });
    const result = await run(sandboxed, ['up', '--once', '--plugin-dir', dir]);
    expectExit(result, 4);
    // Once in the table's row (the code), once in the reasons (code, message and fix).
    expect(count(result, 'PLN_E_SETTING_INVALID')).toBe(2);
    expectOnce(result, 'plugins.counted.settings.limit must be', 'fix: set plugins.counted.settings.limit');
  }, TEST_TIMEOUT);

  test('a failing plinth call: the server that did not connect is reported once, by the error', async () => {
    const sandboxed = await box();
    await sandboxed.settings({ mcpServers: { bad: { command: process.execPath, args: [SERVER, '--exit-at-start', '3'] } } });
    const result = await run(sandboxed, ['call', 'bad__echo', '--args', '{"text":"hi"}']);
    expectExit(result, 1);
    expectOnce(result, 'PLN_E_MCP_CONNECT_FAILED');

    const asJson = await run(sandboxed, ['call', 'bad__echo', '--args', '{"text":"hi"}', '--json']);
    expect(json(asJson).error.code).toBe('PLN_E_MCP_CONNECT_FAILED');
    expect(asJson.stderr, describeRun(asJson)).not.toContain('PLN_E_MCP_CONNECT_FAILED');
  }, TEST_TIMEOUT);

  test('a server that never answers does not take the MCP section of plinth up --once with it: it shows as starting', async () => {
    const sandboxed = await box();
    // Reads stdin and never answers initialize, with a connect timeout longer than a status tap may take.
    await sandboxed.settings({ mcpServers: { mute: { command: process.execPath, args: ['-e', 'process.stdin.resume()'], timeout: 60_000 } } });
    const result = await run(sandboxed, ['up', '--once']);
    expect(`${result.stdout}\n${result.stderr}`, describeRun(result)).not.toContain('PLN_E_HOOK_TIMEOUT');
    expect(result.stdout, describeRun(result)).toMatch(/mute\s+.*starting/);
  }, TEST_TIMEOUT);

  test('an invalid settings file and an unknown command: once each', async () => {
    const sandboxed = await box();
    await writeFile(join(sandboxed.home, 'settings.json'), JSON.stringify({ timeouts: { setup: 'soon' } }));
    const invalid = await run(sandboxed, ['up', '--once']);
    expectExit(invalid, 3);
    expectOnce(invalid, 'PLN_E_CONFIG_INVALID', 'timeouts.setup');

    await writeFile(join(sandboxed.home, 'settings.json'), '{}');
    const unknown = await run(sandboxed, ['frobnicate']);
    expectExit(unknown, 2);
    expectOnce(unknown, 'PLN_E_CLI_UNKNOWN_COMMAND', 'frobnicate');
  }, TEST_TIMEOUT);

  test('-v keeps the log\'s details: the failure is in the log as it happens, and in the error', async () => {
    const sandboxed = await box();
    const dir = await brokenPlugin(sandboxed, 'counted');
    await sandboxed.settings({ plugins: { counted: { settings: { limit: 'five' } } } });
    const result = await run(sandboxed, ['counted', 'run', '-v', '--plugin-dir', dir]);
    expectExit(result, 1);
    expect(result.stderr).toMatch(/^plinth\[kernel\] warn: PLN_E_SETTING_INVALID: /m);
    expect(result.stderr).toContain('PLN_E_COMMAND_UNAVAILABLE');
  }, TEST_TIMEOUT);
});
