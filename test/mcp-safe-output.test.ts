/**
 * Nothing a server, a hook or a plugin sends can drive the terminal (issue 10,
 * item 5): escape sequences and other control characters are shown, never
 * printed raw, in every command's human output and log; `--json` stays the
 * same document with no raw control character in it; tool names plinth
 * refuses (empty, `__proto__`, `constructor`, `prototype`) are left out with a
 * coded warning naming the server, and the server's other tools register.
 * Real CLI runs against a real SDK server (test/fixtures/mcp/servers/hostile-server.mjs).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { safeJson, safeLine, safeText } from '../sdk/format.js';
import { askYesNo } from '../internal/terminal/prompt.js';
import { ROOT, type Result, type Sandbox, describeRun, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const HOSTILE = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'hostile-server.mjs');
const ESC = '\u001b';
const boxes: Sandbox[] = [];

/** Any character a terminal acts on: C0 but newline, DEL, C1, the bidirectional controls. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function expectNoRawControl(result: Result): void {
  expect(RAW_CONTROL.test(result.stdout), `stdout has a raw control character\n${describeRun(result)}`).toBe(false);
  expect(RAW_CONTROL.test(result.stderr), `stderr has a raw control character\n${describeRun(result)}`).toBe(false);
}

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function hostileBox(): Promise<Sandbox> {
  const box = await sandbox('plinth-safe-output-');
  boxes.push(box);
  await box.settings({ mcpServers: { hostile: { command: process.execPath, args: [HOSTILE] } } });
  return box;
}

describe('the sdk helpers', () => {
  test('safeText shows escapes, C1 and bidi controls; keeps newlines and tabs; is idempotent', () => {
    expect(safeText(`x${ESC}[31mred`)).toBe('x\\x1b[31mred');
    expect(safeText('a\u009b31mb\u202ec\u0007')).toBe('a\\x9b31mb\\u202ec\\x07');
    expect(safeText('one\n\ttwo\r\nthree\rfour')).toBe('one\n\ttwo\nthree\\x0dfour');
    expect(safeText(safeText(`x${ESC}[31m`))).toBe(safeText(`x${ESC}[31m`));
  });

  test('safeLine shows newlines too; safeJson keeps the document and escapes what JSON.stringify leaves raw', () => {
    expect(safeLine('a\nb\tc')).toBe('a\\x0ab\\x09c');
    const value = { name: `x${ESC}[31m\u009b\u202e\u2028` };
    const text = safeJson(JSON.stringify(value));
    expect(RAW_CONTROL.test(text)).toBe(false);
    expect(text).not.toContain('\u2028');
    expect(JSON.parse(text)).toEqual(value);
  });
});

test('askYesNo shows the question\'s escapes (it quotes what asks for approval), never sends them', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
  const answer = askYesNo(`Run node ${ESC}[8mhidden.js? `, { input, output });
  input.write('yes\n');
  expect(await answer).toBe(true);
  expect(written).toContain('node \\x1b[8mhidden.js?');
  expect(RAW_CONTROL.test(written)).toBe(false);
});

describe('a server whose strings hold escape sequences', () => {
  test('mcp tools: names and descriptions shown, refused names left out with a coded warning naming the server', async () => {
    const box = await hostileBox();
    const result = await run(box, ['mcp', 'tools', 'hostile']);
    expectExit(result, 0);
    expectNoRawControl(result);
    expect(result.stdout).toContain('hostile__x\\x1b[31mred');
    expect(result.stdout).toContain('desc \\x1b]0;pwned\\x07 and \\x9b31m C1');
    const names = result.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[0]);
    expect(names).toEqual(['hostile__x\\x1b[31mred', 'hostile__echo', 'hostile__fail']);
    const warnings = result.stderr.split('\n').filter((line) => line.includes('PLN_E_MCP_TOOL_NAME_INVALID'));
    expect(warnings, result.stderr).toHaveLength(4);
    for (const line of warnings) expect(line).toContain('"hostile"');
    expect(result.stderr).toContain('"__proto__"');
    expect(result.stderr).toContain('empty name');
  }, 120_000);

  test('mcp tools --json: the same names, as JSON escapes; no raw control character on stdout', async () => {
    const box = await hostileBox();
    const result = await run(box, ['--json', 'mcp', 'tools', 'hostile']);
    expectExit(result, 0);
    expectNoRawControl(result);
    const { tools } = json<{ tools: Array<{ name: string; tool: string; description?: string }> }>(result);
    expect(tools.map((t) => t.tool)).toEqual([`x${ESC}[31mred`, 'echo', 'fail']);
    expect(tools[0]!.description).toBe(`desc ${ESC}]0;pwned\u0007 and \u009b31m C1`);
  }, 120_000);

  test('call: a result and a server error message are shown, not sent to the terminal', async () => {
    const box = await hostileBox();
    const echoed = await run(box, ['call', 'hostile__echo', '--args', '{"text":"hi"}']);
    expectExit(echoed, 0);
    expectNoRawControl(echoed);
    expect(echoed.stdout.trim()).toBe('\\x1b[2Jhi');

    const failed = await run(box, ['call', 'hostile__fail']);
    expectExit(failed, 1);
    expectNoRawControl(failed);
    expect(failed.stderr).toContain('bad \\x1b[31mthing');
  }, 120_000);

  test('mcp resources, mcp prompts, mcp status: names, descriptions, contents and server info shown', async () => {
    const box = await hostileBox();
    const resources = await run(box, ['mcp', 'resources', 'hostile']);
    expectExit(resources, 0);
    expectNoRawControl(resources);
    expect(resources.stdout).toContain('r\\x1b[5mblink');

    const read = await run(box, ['mcp', 'resources', 'hostile', '--read', 'hostile://r']);
    expectExit(read, 0);
    expectNoRawControl(read);
    expect(read.stdout).toContain('body \\x1b[8mhidden');

    const prompts = await run(box, ['mcp', 'prompts', 'hostile']);
    expectExit(prompts, 0);
    expectNoRawControl(prompts);
    expect(prompts.stdout).toContain('p\\x1b[1mbold');

    const status = await run(box, ['mcp', 'status', 'hostile']);
    expectExit(status, 0);
    expectNoRawControl(status);
    expect(status.stdout).toContain('hostile\\x1b[32m');

    const got = await run(box, ['mcp', 'get', 'hostile']);
    expectExit(got, 0);
    expectNoRawControl(got);
    expect(got.stdout).toContain('Use me \\x1b[41mnow\\x1b[0m');
  }, 120_000);
});

test('hooks run: a hook\'s message is shown, not sent', async () => {
  const box = await sandbox('plinth-safe-output-');
  boxes.push(box);
  const script = join(box.base, 'loud-hook.js');
  await writeFile(script, `process.stdout.write(JSON.stringify({ allow: false, message: 'no ${'\\u001b'}[31mway' }));\n`);
  await box.settings({ hooks: { before_tool: [{ name: 'loud', command: 'node', args: [script] }] } });
  const result = await run(box, ['hooks', 'run', 'before_tool', '--context', '{"tool":"rm"}']);
  expectExit(result, 5);
  expectNoRawControl(result);
  expect(result.stdout).toContain('no \\x1b[31mway');
}, 120_000);

test('a plugin\'s strings (command summary, description, a refused manifest) are shown, never sent raw: --help, plugins list, plugins why', async () => {
  const box = await sandbox('plinth-safe-output-');
  boxes.push(box);
  const plugins = join(box.base, 'plugins');
  await mkdir(join(plugins, 'loud'), { recursive: true });
  await writeFile(
    join(plugins, 'loud', 'manifest.json'),
    JSON.stringify({ name: 'loud', version: '1.0.0', description: `loud ${ESC}[31mplugin`, kernel: '^1.0.0', commands: { 'loud shout': { summary: `Shout ${ESC}]0;title\u0007 ${ESC}[5mloudly` } } }),
  );
  await mkdir(join(plugins, 'bad'), { recursive: true });
  await writeFile(join(plugins, 'bad', 'manifest.json'), JSON.stringify({ name: `bad${ESC}[31m`, version: '1.0.0', kernel: '^1.0.0' }));
  const dirs = ['--plugin-dir', plugins];

  const help = await run(box, [...dirs, '--help']);
  expectExit(help, 0);
  expectNoRawControl(help);
  expect(help.stdout).toContain('Shout \\x1b]0;title\\x07 \\x1b[5mloudly');

  const listed = await run(box, [...dirs, 'plugins', 'list']);
  expectNoRawControl(listed);
  expect(listed.stdout).toContain('loud');
  expect(listed.stdout + listed.stderr).toContain('PLN_E_MANIFEST_INVALID');

  const why = await run(box, [...dirs, 'plugins', 'why', 'loud']);
  expectNoRawControl(why);
}, 120_000);
