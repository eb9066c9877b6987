/**
 * Small things a new user meets in the first hour, each run with the real `plinth` command: what a
 * command suggests must exist and work here (a tool name, an approve command), a warning is printed
 * once, and a workspace value that is dropped is said.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Result, type Sandbox, describeRun, ensureBuilt, expectExit, json, plinth, run, sandbox } from './support/cli.js';

const TEST_TIMEOUT = 60_000;
const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-first-hour-');
  boxes.push(made);
  return made;
}

async function workspaceSettings(workspace: string, value: Record<string, unknown>): Promise<string> {
  await mkdir(join(workspace, '.plinth'), { recursive: true });
  const file = join(workspace, '.plinth', 'settings.json');
  await writeFile(file, JSON.stringify(value, null, 2));
  return file;
}

/** Runs a command plinth printed, word by word (the tests' paths need no quoting), from `cwd`. */
function runPrinted(command: string, cwd: string): Promise<Result> {
  const words = command.split(' ');
  expect(words[0]).toBe('plinth');
  return plinth(words.slice(1), { cwd, ci: true });
}

function count(result: Result, needle: string): number {
  return `${result.stdout}\n${result.stderr}`.split(needle).length - 1;
}

describe('what plinth suggests exists here', () => {
  test('`plinth call echo` names the servers configured, not the demo server once it is left out', async () => {
    const place = await box();
    await place.settings({ mcpServers: { files: { command: 'node', args: ['server.js'] } } });
    const result = await run(place, ['call', 'echo']);
    expectExit(result, 2);
    expect(result.stderr).toContain('PLN_E_CLI_USAGE');
    expect(result.stderr, describeRun(result)).toContain('files__echo');
    expect(result.stderr).not.toContain('demo');
  }, TEST_TIMEOUT);

  test("`trust list` shows another project's waiting hook with a command that approves it from here", async () => {
    const place = await box();
    const other = join(place.base, 'other-project');
    await mkdir(other, { recursive: true });
    await writeFile(join(other, 'guard.js'), 'process.stdout.write(JSON.stringify({ allow: true }));\n');
    await workspaceSettings(other, { hooks: { before_tool: [{ name: 'guard', command: 'node', args: ['guard.js'] }] } });
    // Refused (not approved) in the other project: recorded as waiting there.
    const refused = await plinth(['--home', place.home, '--workspace', other, 'hooks', 'run', 'before_tool'], { cwd: other, ci: true });
    expect(refused.stderr + refused.stdout, describeRun(refused)).toContain('workspace:guard');

    const listed = await run(place, ['trust', 'list', '--json']);
    expectExit(listed, 0);
    const request = json<{ requests: Array<{ kind: string; id: string; workspace?: string; approveCommand: string }> }>(listed).requests.find((r) => r.id === 'workspace:guard');
    expect(request, describeRun(listed)).toBeDefined();
    expect(request!.workspace).toBe(other);

    const approved = await runPrinted(request!.approveCommand, place.workspace);
    expectExit(approved, 0);
    const hooks = await plinth(['--home', place.home, '--workspace', other, 'hooks', 'list', '--json'], { cwd: other, ci: true });
    expect(JSON.stringify(json(hooks)), describeRun(hooks)).toContain('"trusted":true');
  }, TEST_TIMEOUT);

  test('`mcp list` offers `trust approve mcp-server` only once it works, and the command it offers then approves the server', async () => {
    const place = await box();
    await workspaceSettings(place.workspace, { mcpServers: { ws: { command: 'node', args: ['server.js'] } } });
    const approveLines = (result: Result) => [...result.stdout.matchAll(/approve with `([^`]+)`/g)].map((m) => m[1]!);

    // Nothing has asked to start it yet: no approve command that would fail PLN_E_TRUST_NOT_FOUND.
    const before = await run(place, ['mcp', 'list']);
    expectExit(before, 0);
    expect(before.stdout, describeRun(before)).toContain('ws: pending');
    for (const command of approveLines(before)) {
      const tried = await runPrinted(command, place.workspace);
      expect(tried.stderr).not.toContain('PLN_E_TRUST_NOT_FOUND');
      expectExit(tried, 0);
    }
    expect(before.stdout).toContain('mcp status ws');

    // Started once (no terminal): refused and recorded; now the command is offered, and works.
    const status = await run(place, ['mcp', 'status', 'ws']);
    expect(status.stdout + status.stderr, describeRun(status)).toContain('PLN_E_MCP_UNTRUSTED');
    const after = await run(place, ['mcp', 'list']);
    const offered = approveLines(after);
    expect(offered.length, describeRun(after)).toBe(1);
    expectExit(await runPrinted(offered[0]!, place.workspace), 0);
    const listed = await run(place, ['mcp', 'list', '--json']);
    expect(json<{ servers: Array<{ name: string; trust?: { trusted: boolean } }> }>(listed).servers.find((s) => s.name === 'ws')?.trust?.trusted).toBe(true);
  }, TEST_TIMEOUT);
});

describe('said once', () => {
  test("a failing hook that blocks `plinth call` is printed once: the call's error, not a warning too", async () => {
    const place = await box();
    await place.settings({ hooks: { before_tool: [{ name: 'broken', command: 'node', args: ['-e', 'process.stderr.write("guard broke"); process.exit(2)'] }] } });
    const result = await run(place, ['call', 'demo__echo', '--args', '{"message":"hi"}']);
    expectExit(result, 5);
    expect(result.stderr).toContain('PLN_E_MCP_BLOCKED');
    expect(count(result, 'exited with code 2'), describeRun(result)).toBe(1);
  }, TEST_TIMEOUT);

  test('a workspace sandbox.default "open" is dropped and said: once per command, and by config validate', async () => {
    const place = await box();
    const file = await workspaceSettings(place.workspace, { sandbox: { default: 'open' } });
    const listed = await run(place, ['plugins', 'list']);
    expectExit(listed, 0);
    const said = listed.stderr.split('\n').filter((line) => line.includes('PLN_E_WORKSPACE_SETTING_IGNORED'));
    expect(said.length, describeRun(listed)).toBe(1);
    expect(said[0]).toContain(`${file}: sandbox.default is ignored`);

    const validated = await run(place, ['config', 'validate', '--json']);
    expectExit(validated, 3);
    expect(json<{ problems: Array<{ code: string; file?: string; path?: string }> }>(validated).problems).toContainEqual({
      code: 'PLN_E_WORKSPACE_SETTING_IGNORED',
      file,
      path: 'sandbox.default',
      message: expect.stringContaining('sandbox.default'),
      hint: expect.any(String),
    });

    // A workspace may tighten it: nothing is said.
    await workspaceSettings(place.workspace, { sandbox: { default: 'confined' } });
    const tightened = await run(place, ['plugins', 'list']);
    expect(tightened.stderr).not.toContain('PLN_E_WORKSPACE_SETTING_IGNORED');
  }, TEST_TIMEOUT);
});
