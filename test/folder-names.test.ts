/**
 * A folder name is text an attacker chooses (a cloned repository's
 * `.plinth/plugins/<name>`): a newline in it must not print a line of its own
 * (a fake "approved OK"), nor an escape sequence drive the terminal. Every
 * command that prints a plugin's folder or a manifest's path shows such
 * characters escaped (the sdk's `safeLine`), in `plugins why`, `ext info`,
 * `plugins list` (an invalid manifest's path) and the log.
 *
 * Through the real CLI, in a temporary home and workspace.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Result, type Sandbox, describeRun, ensureBuilt, run, sandbox } from './support/cli.js';

const TEST_TIMEOUT = 60_000;
/** What the repository wants printed on a line of its own, green. */
const FAKE = 'trust: plugin "evil" approved OK';
const FOLDER = `evil\n${FAKE} \u001b[32mgreen\u001b[0m\rX`;

const boxes: Sandbox[] = [];

beforeAll(() => {
  ensureBuilt();
}, 300_000);

afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function withFolder(manifest: Record<string, unknown> | string): Promise<Sandbox> {
  const box = await sandbox('plinth-folder-names-');
  boxes.push(box);
  const dir = join(box.workspace, '.plinth', 'plugins', FOLDER);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.json'), typeof manifest === 'string' ? manifest : JSON.stringify({ version: '1.0.0', kernel: '^1.0.0', ...manifest }));
  return box;
}

/** No line of either stream starts with the fake text, and no control character but newline reaches them. */
function expectNothingForged(result: Result): void {
  for (const text of [result.stdout, result.stderr]) {
    for (const line of text.split('\n')) expect(line.trimStart().startsWith(FAKE), describeRun(result)).toBe(false);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  }
}

describe('a plugin folder whose name holds a newline and escape sequences', () => {
  it('plugins why prints the folder on one line, escaped', async () => {
    const box = await withFolder({ name: 'evil', description: `one\n${FAKE}` });
    const result = await run(box, ['plugins', 'why', 'evil']);
    expectNothingForged(result);
    expect(result.stdout, describeRun(result)).toContain(`evil\\x0a${FAKE} \\x1b[32mgreen\\x1b[0m\\x0dX`);
  }, TEST_TIMEOUT);

  it('ext info prints the folder and the description on one line each, escaped', async () => {
    const box = await withFolder({ name: 'evil', description: `one\n${FAKE}` });
    const result = await run(box, ['ext', 'info', 'evil']);
    expectNothingForged(result);
    expect(result.stdout, describeRun(result)).toContain(`folder:      ${join(box.workspace, '.plinth', 'plugins')}/evil\\x0a${FAKE} \\x1b[32mgreen`);
    expect(result.stdout).toContain(`one\\x0a${FAKE}`);
  }, TEST_TIMEOUT);

  it('an invalid manifest in it: plugins list and the log name its path on one line', async () => {
    const box = await withFolder('{ "name": "evil", ');
    const result = await run(box, ['plugins', 'list']);
    expectNothingForged(result);
    expect(result.stdout, describeRun(result)).toContain(`evil\\x0a${FAKE} \\x1b[32mgreen\\x1b[0m\\x0dX/manifest.json:1:`);
  }, TEST_TIMEOUT);

  it('shadowing a user plugin: the PLN_E_PLUGIN_SHADOWS_USER warning names both folders on one line', async () => {
    const box = await withFolder({ name: 'mine' });
    const mine = join(box.home, 'plugins', 'mine');
    await mkdir(mine, { recursive: true });
    await writeFile(join(mine, 'manifest.json'), JSON.stringify({ name: 'mine', version: '1.0.0', kernel: '^1.0.0' }));
    const result = await run(box, ['plugins', 'list']);
    expectNothingForged(result);
    expect(result.stdout + result.stderr, describeRun(result)).toContain(`evil\\x0a${FAKE} \\x1b[32mgreen\\x1b[0m\\x0dX/manifest.json: workspace plugin "mine@1.0.0"`);
  }, TEST_TIMEOUT);
});
