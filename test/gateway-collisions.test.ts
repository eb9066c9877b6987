/**
 * Two servers without the prefix usually share every name. `plinth serve` used to print one
 * warning per shared tool (27 for two copies of the fixture server) before its one error; now the
 * error alone says it, one sentence per pair of servers, with the fix that names them.
 * Real CLI run with two real fixture servers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { describeCollisions } from '../plugins/gateway/catalog.js';
import { type Sandbox, describeRun, ensureBuilt, expectExit, run, sandbox } from './support/cli.js';
import { baseSettings, fixtureStdio } from './support/gateway.js';

const boxes: Sandbox[] = [];
beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

describe('describeCollisions', () => {
  test('one sentence per pair of servers; many names counted, the first few quoted', () => {
    const tools = ['echo', 'add', 'image', 'audio', 'fail', 'slow', 'log'].map((name) => ({ kind: 'tool' as const, name, servers: ['one', 'two'] as [string, string] }));
    const collisions = [...tools, { kind: 'prompt' as const, name: 'greet', servers: ['one', 'two'] as [string, string] }, { kind: 'tool' as const, name: 'x', servers: ['a', 'b'] as [string, string] }];
    expect(describeCollisions(collisions)).toBe(
      '7 tools ("echo", "add", "image", "audio", "fail" and 2 more) and prompt "greet" are served by both "one" and "two"; tool "x" is served by both "a" and "b"',
    );
  });
});

test('plinth serve with two unprefixed copies of one server: one error, with the fix, and no warning per name', async () => {
  const box = await sandbox('plinth-gateway-collisions-');
  boxes.push(box);
  await box.settings(baseSettings({ one: { ...fixtureStdio(), prefix: false }, two: { ...fixtureStdio(), prefix: false } }));

  const result = await run(box, ['serve', '--stdio']);

  expectExit(result, 1);
  const printed = `${result.stdout}${result.stderr}`;
  expect(printed.split('PLN_E_GATEWAY_NAME_COLLISION').length - 1, describeRun(result)).toBe(1);
  expect(result.stderr).toMatch(/cannot serve every name: \d+ tools \("echo", .* and \d+ more\) and \d+ prompts \("greet", .*\) are served by both "one" and "two"\n/);
  expect(result.stderr).toContain('fix: remove "prefix": false from "two" or "one" in mcpServers');
  expect(result.stderr.split('\n').filter((line) => line !== '').length, describeRun(result)).toBeLessThanOrEqual(3);
}, 120_000);
