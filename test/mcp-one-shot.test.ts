/**
 * A one-shot command stops its stdio servers promptly once its work is done
 * (issue 10, item 13): stdin is closed first, then, after a short grace,
 * SIGTERM to the whole process group, then SIGKILL; by the time `plinth call`
 * has exited no process of the server's tree is left. Real CLI runs, a real
 * SDK server that records how it was stopped (test/fixtures/mcp/servers/lifecycle-server.mjs).
 * Nor does it open a modern server's change stream (`subscriptions/listen`): nothing stays to
 * follow a change (test/fixtures/mcp/servers/listen-server.mjs counts the requests it got).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { isAlive } from '../internal/process/tree.js';
import { ROOT, type Sandbox, ensureBuilt, expectExit, run, sandbox } from './support/cli.js';

const LIFECYCLE = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'lifecycle-server.mjs');
const LISTEN = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'listen-server.mjs');
const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

/** The fixture's events: `[kind, number]` in the order written. */
async function events(file: string): Promise<Array<[string, number]>> {
  const text = await readFile(file, 'utf8');
  return text.trim().split('\n').map((line) => {
    const [kind = '', value = ''] = line.split(' ');
    return [kind, Number(value)];
  });
}

test('plinth call: once the result is printed, the server and its child are gone by exit; stdin closed before any signal', async () => {
  const box = await sandbox('plinth-one-shot-');
  boxes.push(box);
  const file = join(box.base, 'events.log');
  await box.settings({ mcpServers: { life: { command: process.execPath, args: [LIFECYCLE, file] } } });

  const result = await run(box, ['call', 'life__echo', '--args', '{"text":"hi"}']);
  expectExit(result, 0);
  expect(result.stdout.trim()).toBe('hi');

  // Right after plinth exited: the whole tree is gone, nothing was left to die later.
  const seen = await events(file);
  const pid = seen.find(([kind]) => kind === 'pid')![1];
  const child = seen.find(([kind]) => kind === 'child')![1];
  expect(isAlive(pid), `server pid ${pid}`).toBe(false);
  expect(isAlive(child), `child pid ${child} (ignores SIGTERM: SIGKILL of the group)`).toBe(false);

  // The stdio specification's order: input closed, then SIGTERM.
  const kinds = seen.map(([kind]) => kind);
  expect(kinds).toContain('stdin-end');
  expect(kinds).toContain('sigterm');
  expect(kinds.indexOf('stdin-end')).toBeLessThan(kinds.indexOf('sigterm'));
  // Not a wall-time figure: which grace plinth chose. The SDK's own close waits a fixed 2000 ms
  // between the two, so it can never come under this bound; a one-shot command's grace is 100 ms.
  const grace = seen.find(([kind]) => kind === 'sigterm')![1] - seen.find(([kind]) => kind === 'stdin-end')![1];
  expect(grace).toBeLessThan(1500);
}, 120_000);

test('plinth call: a daemon the server started (double fork: a session of its own, its parent gone) and a detached child are gone by exit (issue 24, item 17)', async () => {
  const box = await sandbox('plinth-one-shot-');
  boxes.push(box);
  const pidFile = join(box.base, 'pids.json');
  const server = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
  await box.settings({ mcpServers: { daemons: { command: process.execPath, args: [server, '--orphan-child', '--detached-child', '--pid-file', pidFile] } } });

  const result = await run(box, ['call', 'daemons__echo', '--args', '{"text":"hi"}']);
  expectExit(result, 0);
  const { children } = JSON.parse(await readFile(pidFile, 'utf8')) as { children: number[] };
  expect(children).toHaveLength(2);
  const left = children.filter(isAlive);
  // Not left for the next test either.
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect(left, 'still running after plinth call exited').toEqual([]);
}, 120_000);

test('plinth call opens no change stream (subscriptions/listen) on a modern server: the tools are listed, nothing is followed', async () => {
  const box = await sandbox('plinth-one-shot-listen-');
  boxes.push(box);
  await box.settings({ mcpServers: { listen: { command: process.execPath, args: [LISTEN] } } });
  const result = await run(box, ['call', 'listen__hits', '--args', '{}']);
  expectExit(result, 0);
  const hits = JSON.parse(result.stdout) as Record<string, number>;
  expect(hits['tools/list']).toBeGreaterThan(0);
  expect(hits['subscriptions/listen']).toBeUndefined();
});
