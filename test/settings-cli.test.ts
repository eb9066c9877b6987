/**
 * Settings as the real `plinth` command reads them: what a workspace file may
 * not loosen, sensitive numbers in a plugin's log, unknown keys and
 * `plinth config validate`. Every run has its own home and workspace in a
 * temporary folder; hostile workspaces are built there.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KERNEL_API_VERSION } from '../kernel/version.js';
import { type Sandbox, describeRun, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const TEST_TIMEOUT = 90_000;
const boxes: Sandbox[] = [];
const temps: string[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-settings-');
  boxes.push(made);
  return made;
}

async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** Writes the workspace's `.plinth/settings.json`. */
async function workspaceSettings(place: Sandbox, value: Record<string, unknown>): Promise<string> {
  const file = join(place.workspace, '.plinth', 'settings.json');
  await mkdir(join(place.workspace, '.plinth'), { recursive: true });
  await writeFile(file, JSON.stringify(value, null, 2));
  return file;
}

/** Writes a plugin folder `<parent>/<name>` with a manifest and, optionally, index.ts. */
async function writePlugin(parent: string, manifest: Record<string, unknown> & { name: string }, code?: string): Promise<string> {
  const dir = join(parent, manifest.name);
  await mkdir(dir, { recursive: true });
  const full = { version: '1.0.0', kernel: `^${KERNEL_API_VERSION.split('.')[0]}.0.0`, ...(code !== undefined && { main: './index.ts' }), ...manifest };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(full, null, 2));
  if (code !== undefined) await writeFile(join(dir, 'index.ts'), code);
  return dir;
}

describe('sensitive numbers in a plugin log', () => {
  test('a sensitive number setting, and numbers nested in a sensitive object, are redacted in the plugin log and in --json', async () => {
    const place = await box();
    const plugins = await temp('plinth-plugins-');
    await writePlugin(
      plugins,
      { name: 'pinned', settings: [{ name: 'pin', type: 'number', sensitive: true }, { name: 'account', type: 'object', sensitive: true }, { name: 'port', type: 'number', default: 8080 }] },
      "import { definePlugin } from 'plinth/sdk';\n" +
        'export default definePlugin({ setup(kernel, ctx) {\n' +
        '  const account = ctx.settings.account as { id: number };\n' +
        '  ctx.log.warn(`pin ${String(ctx.settings.pin)} account ${account.id} port ${String(ctx.settings.port)}`, { pin: ctx.settings.pin, account });\n' +
        '} });\n',
    );
    await place.settings({ plugins: { pinned: { settings: { pin: 739214, account: { id: 5551234, name: 'ops' } } } } });

    const list = await run(place, ['plugins', 'list', '--plugin-dir', plugins]);
    expectExit(list, 0);
    // The plugin did log, and its log line was redacted.
    expect(list.stderr, describeRun(list)).toContain('pin [redacted] account [redacted] port 8080');
    const show = await run(place, ['config', 'show', '--json', '--plugin-dir', plugins]);
    expectExit(show, 0);
    for (const result of [list, show]) {
      expect(result.stdout + result.stderr, describeRun(result)).not.toContain('739214');
      expect(result.stdout + result.stderr, describeRun(result)).not.toContain('5551234');
    }
  }, TEST_TIMEOUT);
});

export { existsSync, json, workspaceSettings };
