/**
 * `plinth ext …` through the built executable, each run a new process on the
 * same home and workspace (so what one run writes, the next reads):
 *
 * 1. `ext list` for people and `--json` for scripts;
 * 2. disable and enable persist in the chosen settings file; a workspace cannot disable a guard;
 * 3. `ext config` with a sensitive value read from standard input: stored, shown `[redacted]`,
 *    never printed by any command, never written in plain text;
 * 4. `plinth plugin new` makes a folder that `ext link` accepts unchanged; a broken folder is
 *    refused with the file, the path and the fix; unlink.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Result, type Sandbox, ensureBuilt, expectExit, json, run, sandbox, start } from './support/cli.js';

const SECRET = 'cli-secret-b81e0c44d9';
const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function box(settings: Record<string, unknown> = {}): Promise<Sandbox> {
  const made = await sandbox('plinth-ext-cli-');
  boxes.push(made);
  await made.settings({ plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false }, oauth: { settings: { storage: 'file' } } }, ...settings });
  return made;
}

/** A user plugin without code: settings only (one sensitive). */
async function writeNotes(home: string): Promise<void> {
  const dir = join(home, 'plugins', 'notes');
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'manifest.json'),
    JSON.stringify({
      name: 'notes',
      version: '2.1.0',
      kernel: '^1.0.0',
      description: 'Declarations only',
      settings: [
        { name: 'apiKey', sensitive: true, envVar: 'NOTES_API_KEY', description: 'The notes service key' },
        { name: 'folder', default: 'notes', description: 'Where notes go' },
      ],
    }),
  );
}

/** `plinth <args>` with stdin text, for `ext config … -`. */
function runWithInput(at: Sandbox, args: readonly string[], input: string): Promise<Result> {
  return new Promise((resolve) => {
    const child = start(at, args);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin!.end(input);
  });
}

const row = (list: Array<{ name: string }>, name: string) => list.find((e) => e.name === name);

describe('plinth ext list', () => {
  it('prints a table for people and, with --json, an array of plugins with name, version, source, enabled and linked', async () => {
    const at = await box();
    await writeNotes(at.home);

    const table = await run(at, ['ext', 'list']);
    expectExit(table, 0);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+VERSION\s+SOURCE\s+ENABLED\s+STATE\s+LINKED\s+DESCRIPTION$/);
    expect(table.stdout).toMatch(/notes\s+2\.1\.0\s+user\s+yes\s+active\s+Declarations only/);
    expect(table.stdout).toMatch(/mcp-demo\s+1\.0\.0\s+builtin\s+no\s+excluded \(PLN_E_PLUGIN_DISABLED\)/);

    const listed = await run(at, ['ext', 'list', '--json']);
    expectExit(listed, 0);
    const list = json<Array<Record<string, unknown>>>(listed);
    expect(Array.isArray(list)).toBe(true);
    for (const entry of list) {
      expect(entry).toEqual(expect.objectContaining({ name: expect.any(String), version: expect.any(String), source: expect.any(String), enabled: expect.any(Boolean), linked: expect.any(Boolean), state: expect.any(String), dir: expect.any(String), description: expect.any(String) }));
    }
    expect(row(list as never, 'notes')).toMatchObject({ version: '2.1.0', source: 'user', enabled: true, linked: false, state: 'active', dir: join(at.home, 'plugins', 'notes') });
    expect(row(list as never, 'mcp-demo')).toMatchObject({ enabled: false, enabledFrom: 'user settings', error: { code: 'PLN_E_PLUGIN_DISABLED' } });

    const info = await run(at, ['ext', 'info', 'notes', '--json']);
    expectExit(info, 0);
    expect(json(info)).toMatchObject({ name: 'notes', settings: [{ name: 'apiKey', from: 'unset', sensitive: true }, { name: 'folder', from: 'default', value: 'notes' }] });
    const unknown = await run(at, ['ext', 'info', 'nots', '--json']);
    expectExit(unknown, 1);
    expect(json(unknown).error).toMatchObject({ code: 'PLN_E_PLUGIN_UNKNOWN', hint: expect.stringContaining('"notes"') });
  }, 120_000);
});

describe('plinth ext disable and enable', () => {
  it('persist in the chosen file, name the dependents, and refuse what a workspace may not do', async () => {
    const at = await box();
    const off = await run(at, ['ext', 'disable', 'mcp']);
    expectExit(off, 0);
    expect(off.stdout).toContain(`Disabled mcp in user settings ${join(at.home, 'settings.json')}.`);
    expect(off.stdout).toMatch(/^Stopped: .*\boauth\b.*\bmcp\b|^Stopped: .*\bmcp\b.*\boauth\b/m);
    expect(json(await run(at, ['ext', 'disable', 'mcp', '--json']))).toMatchObject({ changed: false, dependents: [] });
    expect(JSON.parse(await readFile(join(at.home, 'settings.json'), 'utf8')).plugins.mcp).toEqual({ enabled: false });

    const next = json<Array<Record<string, unknown>>>(await run(at, ['ext', 'list', '--json']));
    expect(row(next as never, 'mcp')).toMatchObject({ enabled: false, state: 'excluded' });
    expect(row(next as never, 'oauth')).toMatchObject({ enabled: true, state: 'excluded', error: { code: 'PLN_E_DEP_DISABLED' } });

    const on = await run(at, ['ext', 'enable', 'mcp', '--json']);
    expectExit(on, 0);
    expect(json(on)).toMatchObject({ name: 'mcp', enabled: true, scope: 'user', changed: true });
    expect(row(json(await run(at, ['ext', 'list', '--json'])), 'mcp')).toMatchObject({ enabled: true, state: 'active' });

    const guard = await run(at, ['ext', 'disable', 'trust', '--scope', 'workspace']);
    expectExit(guard, 1);
    expect(guard.stderr).toContain('PLN_E_EXT_GUARD');
    expect(guard.stderr).toContain('plinth ext disable trust');
    await expect(readFile(join(at.workspace, '.plinth', 'settings.json'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });

    const usage = await run(at, ['ext', 'disable', 'inspect', '--scope', 'everywhere']);
    expectExit(usage, 2);
    expect(usage.stderr).toContain('PLN_E_CLI_USAGE');
  }, 120_000);
});

describe('plinth ext config', () => {
  it('stores a sensitive value from standard input in the secret store; no command prints it and no file holds it in plain text', async () => {
    const at = await box();
    await writeNotes(at.home);
    const outputs: Result[] = [];

    const set = await runWithInput(at, ['ext', 'config', 'notes', 'apiKey', '-'], `${SECRET}\n`);
    expectExit(set, 0);
    expect(set.stdout).toContain('Stored notes.apiKey in the secret store');
    outputs.push(set);
    expect(JSON.parse(await readFile(join(at.home, 'settings.json'), 'utf8')).plugins.notes.settings).toEqual({ apiKey: { $secret: 'plugin-setting:notes/apiKey' } });

    const shown = await run(at, ['ext', 'config', 'notes']);
    expectExit(shown, 0);
    expect(shown.stdout).toMatch(/apiKey\s+string, sensitive\s+\[redacted\]\s+secret store/);
    expect(shown.stdout).toMatch(/folder\s+string\s+notes\s+default/);
    outputs.push(shown);
    const one = await run(at, ['ext', 'config', 'notes', 'apiKey', '--json']);
    expect(json(one).setting).toMatchObject({ from: 'secrets', value: '[redacted]' });
    outputs.push(one);
    const plain = await run(at, ['ext', 'config', 'notes', 'folder', 'inbox']);
    expectExit(plain, 0);
    expect(plain.stdout).toContain('Set notes.folder = inbox (user settings');
    for (const args of [['ext', 'info', 'notes'], ['ext', 'info', 'notes', '--json'], ['ext', 'list', '--json'], ['config', 'show', '--json'], ['up', '--once', '--json'], ['up', '--once']]) outputs.push(await run(at, args));

    const wrong = await run(at, ['ext', 'config', 'notes', 'apiKey', 'x', '--scope', 'workspace']);
    expectExit(wrong, 1);
    expect(wrong.stderr).toContain('PLN_E_EXT_SETTING_SCOPE');

    const unset = await run(at, ['ext', 'config', 'notes', 'apiKey', '--unset']);
    expectExit(unset, 0);
    expect(unset.stdout).toContain('and the secret store');
    outputs.push(unset, wrong);

    for (const result of outputs) {
      expect(result.stdout).not.toContain(SECRET);
      expect(result.stderr).not.toContain(SECRET);
    }
    for (const file of await readdir(at.base, { recursive: true })) {
      const content = await readFile(join(at.base, file)).catch(() => Buffer.alloc(0));
      expect(content.includes(SECRET), file).toBe(false);
    }
  }, 180_000);
});

describe('plinth ext link', () => {
  it('accepts what `plinth plugin new` made, unchanged, ahead of an installed plugin of that name; unlink falls back', async () => {
    const at = await box();
    const made = await run(at, ['plugin', 'new', 'my-ext', '--dir', join(at.base, 'dev'), '--json']);
    expectExit(made, 0);
    const dir = join(at.base, 'dev', 'my-ext');
    // An installed copy of the same name.
    await mkdir(join(at.home, 'plugins', 'my-ext'), { recursive: true });
    await writeFile(join(at.home, 'plugins', 'my-ext', 'manifest.json'), JSON.stringify({ name: 'my-ext', version: '0.0.1', kernel: '^1.0.0', description: 'installed' }));

    const linked = await run(at, ['ext', 'link', dir]);
    expectExit(linked, 0);
    expect(linked.stdout).toContain(`Linked my-ext@`);
    expect(linked.stdout).toContain(`It takes precedence over the user plugin my-ext@0.0.1 (${join(at.home, 'plugins', 'my-ext')})`);
    expect(JSON.parse(await readFile(join(at.home, 'settings.json'), 'utf8')).links).toEqual([dir]);

    const list = json<Array<Record<string, unknown>>>(await run(at, ['ext', 'list', '--json']));
    expect(row(list as never, 'my-ext')).toMatchObject({ linked: true, dir, state: 'active' });

    const unlinked = await run(at, ['ext', 'unlink', 'my-ext', '--json']);
    expectExit(unlinked, 0);
    expect(json(unlinked)).toMatchObject({ name: 'my-ext', dir, fallback: { version: '0.0.1', source: 'user' } });
    expect(row(json(await run(at, ['ext', 'list', '--json'])), 'my-ext')).toMatchObject({ linked: false, version: '0.0.1' });
  }, 180_000);

  it('a linked plugin that is disabled is still listed as linked (--json and the table)', async () => {
    const at = await box();
    const dir = join(at.base, 'dev', 'quiet');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: 'quiet', version: '1.0.0', kernel: '^1.0.0', description: 'linked, then disabled' }));
    expectExit(await run(at, ['ext', 'link', dir]), 0);
    expectExit(await run(at, ['ext', 'disable', 'quiet']), 0);
    const listed = await run(at, ['ext', 'list', '--json']);
    expectExit(listed, 0);
    expect(row(json(listed), 'quiet')).toMatchObject({ linked: true, enabled: false, state: 'excluded', dir });
    expect((await run(at, ['ext', 'list'])).stdout).toMatch(/^quiet\s+1\.0\.0\s+path\s+no\s+.*linked/m);
  }, 60_000);

  it('refuses a folder that is not a plugin, or whose manifest is broken, naming the file, the path and the fix', async () => {
    const at = await box();
    const empty = join(at.base, 'empty');
    await mkdir(empty, { recursive: true });
    const none = await run(at, ['ext', 'link', empty, '--json']);
    expectExit(none, 1);
    expect(json(none).error).toMatchObject({ code: 'PLN_E_EXT_LINK_NOT_PLUGIN', hint: expect.stringContaining('plinth plugin new') });

    const broken = join(at.base, 'broken');
    await mkdir(broken, { recursive: true });
    await writeFile(join(broken, 'manifest.json'), JSON.stringify({ name: 'Broken Name', version: '1', main: './index.ts' }));
    const invalid = await run(at, ['ext', 'link', broken]);
    expectExit(invalid, 1);
    expect(invalid.stderr).toContain('PLN_E_MANIFEST_INVALID');
    expect(invalid.stderr).toContain(`${join(broken, 'manifest.json')}: name:`);
    expect(invalid.stderr).toContain(`${join(broken, 'manifest.json')}: version:`);
    expect(invalid.stderr).toContain('fix:');

    await writeFile(join(broken, 'manifest.json'), '{ "name": "broken", }');
    const unreadable = await run(at, ['ext', 'link', broken, '--json']);
    expect(json(unreadable).error).toMatchObject({ code: 'PLN_E_MANIFEST_UNREADABLE', details: { file: join(broken, 'manifest.json'), line: 1 } });
    await expect(readFile(join(at.home, 'settings.json'), 'utf8').then((t) => JSON.parse(t).links)).resolves.toBeUndefined();
  }, 120_000);
});
