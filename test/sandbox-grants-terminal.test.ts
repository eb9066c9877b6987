/**
 * The grant question on a real terminal (a pseudo-terminal, test/support/on-terminal.py):
 * a downloaded plugin's update that widens its permissions is asked about,
 * showing only what it adds, and each answer does what it says — once (this
 * launch), session (this process), always (stored atomically, still there in
 * a new process), no. Without a terminal nothing is asked and the refusal
 * names the command. Runs the built code (test/fixtures/sandbox/decide.mjs).
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { BIN, ROOT, cleanEnv, ensureBuilt, expectExit, run as runPlinth, sandbox } from './support/cli.js';
import { writePlugin } from './support/plugin-folder.js';
import { tempFolders } from './support/plugin-folder.js';

const run = promisify(execFile);
const PTY = join(ROOT, 'test', 'support', 'on-terminal.py');
const DECIDE = join(ROOT, 'test', 'fixtures', 'sandbox', 'decide.mjs');
const QUESTION = '[N]o: ';
const folders = tempFolders('plinth-grants-tty-');
beforeAll(() => ensureBuilt(), 120_000);
afterEach(() => folders.removeAll());

interface Decided {
  readonly mode: string;
  readonly code?: string;
  readonly hint?: string;
  readonly granted?: { network: { allow: string[] }; env: string[]; filesystem: { read: string[] } };
}

function decisions(output: string): Decided[] {
  return output
    .split(/\r?\n/)
    .filter((line) => line.startsWith('DECISION '))
    .map((line) => JSON.parse(line.slice('DECISION '.length)) as Decided);
}

/** Installs version `version` of "greeter" as the marketplace does: plugins/greeter → plugins/.versions/greeter@<version>. */
async function install(home: string, version: string, permissions: Record<string, unknown>): Promise<string> {
  const dir = join(home, 'plugins', '.versions', `greeter@${version}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: 'greeter', version, permissions }));
  const link = join(home, 'plugins', 'greeter');
  await rm(link, { force: true });
  await symlink(dir, link);
  return link;
}

/** Decides on a terminal, answering the question with `answer`; the whole terminal output. */
async function onTerminal(home: string, dir: string, answer: string): Promise<string> {
  const argv = [process.execPath, DECIDE, home, dir, 'yes'];
  const { stdout } = await run('python3', [PTY, JSON.stringify(argv), JSON.stringify(cleanEnv({}, { ci: false })), answer, QUESTION], { cwd: ROOT, timeout: 60_000 });
  return stdout;
}

/** Decides on a terminal where nobody answers, waiting at most `timeoutMs` for an answer. */
async function unanswered(home: string, dir: string, timeoutMs: number): Promise<{ output: string }> {
  const argv = [process.execPath, DECIDE, home, dir, 'yes', String(timeoutMs)];
  // The marker never shows, so the terminal driver never types.
  const { stdout } = await run('python3', [PTY, JSON.stringify(argv), JSON.stringify(cleanEnv({}, { ci: false })), 'a', 'NEVER SHOWN'], { cwd: ROOT, timeout: 60_000 });
  return { output: stdout };
}

/** Decides with no terminal (stdin and stdout are pipes), `CI` unset. */
async function withoutTerminal(home: string, dir: string): Promise<string> {
  const { stdout } = await run(process.execPath, [DECIDE, home, dir, 'yes'], { cwd: ROOT, env: cleanEnv({}, { ci: false }), timeout: 60_000 });
  return stdout;
}

const V1 = { network: { allow: ['api.example.com'] }, env: ['GREETER_TOKEN'] };
const V2 = { network: { allow: ['api.example.com', 'cdn.example.com'] }, env: ['GREETER_TOKEN'], filesystem: { read: ['${workspace}/docs'] } };

describe('the grant question on a terminal', () => {
  test('nobody answers: the launch is refused once the wait is over, naming the command that grants it, and nothing is stored', async () => {
    const home = await folders.make();
    const dir = await install(home, '1.0.0', V1);
    const { output } = await unanswered(home, dir, 1500);
    expect(output).toContain('plugin "greeter" (downloaded, version 1.0.0) asks for these permissions:');
    const [decided] = decisions(output);
    expect(decided).toMatchObject({ mode: 'refused', code: 'PLN_E_PERM_NOT_GRANTED' });
    expect(decided!.hint).toContain('plinth perms grant greeter');
    expect(output).toContain('nobody answered the question about its permissions (network api.example.com, env GREETER_TOKEN) within 1.5 s');
    await expect(stat(join(home, 'sandbox', 'grants.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 90_000);

  test('nobody answers for the hooks and servers of the workspace settings: the command the refusal names grants exactly what they asked for', async () => {
    // settings:workspace has no manifest to grant from: its command must name the items (a bare `plinth perms grant settings:workspace` is refused).
    const home = await folders.make();
    const dir = await folders.make();
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: 'settings:workspace', permissions: V1 }));
    const { output } = await unanswered(home, dir, 1500);
    const [decided] = decisions(output);
    expect(decided).toMatchObject({ mode: 'refused', code: 'PLN_E_PERM_NOT_GRANTED' });
    const command = /`(plinth perms grant [^`]+)`/.exec(decided!.hint ?? '')?.[1];
    expect(command).toBe("plinth perms grant settings:workspace 'network api.example.com' 'env GREETER_TOKEN'");

    const box = { dirs: ['--home', home, '--workspace', dir], workspace: dir };
    const granted = await runPlinth(box, ['perms', 'grant', 'settings:workspace', 'network api.example.com', 'env GREETER_TOKEN']);
    expectExit(granted, 0);
    expect(decisions(await withoutTerminal(home, dir))[0]).toMatchObject({ mode: 'confined', granted: { network: { allow: ['api.example.com'] }, env: ['GREETER_TOKEN'] } });
  }, 90_000);

  test('"always" is stored atomically and survives a restart; an update that widens asks again, showing only what it adds', async () => {
    const home = await folders.make();
    const dir = await install(home, '1.0.0', V1);
    const first = await onTerminal(home, dir, 'a');
    expect(first).toContain('plugin "greeter" (downloaded, version 1.0.0) asks for these permissions:');
    expect(first).toContain('+ network: api.example.com');
    expect(first).toContain('+ env: GREETER_TOKEN');
    expect(decisions(first).map((d) => d.mode)).toEqual(['confined', 'confined']);
    const file = join(home, 'sandbox', 'grants.json');
    const stored = JSON.parse(await readFile(file, 'utf8'));
    expect(stored.plugins.greeter).toMatchObject({ version: '1.0.0', permissions: { network: { allow: ['api.example.com'] }, env: ['GREETER_TOKEN'] } });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readdir(join(home, 'sandbox'))).filter((f) => f.endsWith('.tmp') || f.endsWith('.lock'))).toEqual([]); // nothing left half-written

    // A new process with no terminal: the stored grant is enough.
    expect(decisions(await withoutTerminal(home, dir))[0]).toMatchObject({ mode: 'confined', granted: { network: { allow: ['api.example.com'] } } });

    // The update adds a host and a path: only those are shown.
    await install(home, '1.1.0', V2);
    const widened = await onTerminal(home, dir, 's');
    expect(widened).toContain('asks for more than you granted to version 1.0.0:');
    expect(widened).toContain('+ network: cdn.example.com');
    expect(widened).toContain('+ filesystem.read: ${workspace}/docs');
    expect(widened).not.toContain('+ network: api.example.com');
    expect(widened).not.toContain('+ env: GREETER_TOKEN');
    // "session": granted for the rest of this process (the second check asks nothing), not stored.
    expect(decisions(widened).map((d) => d.mode)).toEqual(['confined', 'confined']);
    expect(decisions(widened)[0]!.granted!.network.allow).toEqual(['api.example.com', 'cdn.example.com']);
    expect(JSON.parse(await readFile(file, 'utf8')).plugins.greeter.version).toBe('1.0.0');

    // The next process has no session grant: refused without a terminal, naming the command.
    const refused = decisions(await withoutTerminal(home, dir))[0]!;
    expect(refused).toMatchObject({ mode: 'refused', code: 'PLN_E_PERM_NOT_GRANTED' });
    expect(refused.hint).toContain('plinth perms grant greeter');
  });

  test('"once" grants this launch only; "no" refuses it', async () => {
    const home = await folders.make();
    const dir = await install(home, '1.0.0', V1);
    const once = decisions(await onTerminal(home, dir, 'o'));
    expect(once[0]!.mode).toBe('confined');
    expect(once[1]).toMatchObject({ mode: 'refused', code: 'PLN_E_PERM_NOT_GRANTED' });
    await expect(stat(join(home, 'sandbox', 'grants.json'))).rejects.toThrow();

    const no = decisions(await onTerminal(home, dir, 'n'));
    expect(no[0]).toMatchObject({ mode: 'refused', code: 'PLN_E_PERM_DECLINED' });
    // An answer that is not one of the four is no.
    expect(decisions(await onTerminal(home, dir, 'sure'))[0]).toMatchObject({ mode: 'refused', code: 'PLN_E_PERM_DECLINED' });
  });

  test('an update that narrows its permissions runs without a question', async () => {
    const home = await folders.make();
    const dir = await install(home, '1.0.0', V2);
    expect(decisions(await onTerminal(home, dir, 'a'))[0]!.mode).toBe('confined');
    await install(home, '1.2.0', V1);
    expect(decisions(await withoutTerminal(home, dir))[0]).toMatchObject({ mode: 'confined', granted: { network: { allow: ['api.example.com'] } } });
  });
});

describe('plinth ext enable asks at once', () => {
  test('--grant grants what the enabled plugin declares without asking, as plinth perms grant does', async () => {
    const box = await sandbox('plinth-grants-enable-');
    try {
      await box.settings({ sandbox: { default: 'confined' }, plugins: { greeter: { enabled: false }, health: { enabled: false }, 'mcp-demo': { enabled: false } } });
      await writePlugin(join(box.home, 'plugins'), { name: 'greeter', permissions: V1 });
      const granted = await runPlinth(box, ['ext', 'enable', 'greeter', '--grant']);
      expectExit(granted, 0);
      expect(granted.stderr).toContain('granted greeter the permissions it declares');
      expect(granted.stderr).not.toContain('asks for permissions');
      const stored = JSON.parse(await readFile(join(box.home, 'sandbox', 'grants.json'), 'utf8'));
      expect(stored.plugins.greeter.permissions).toMatchObject({ network: { allow: ['api.example.com'] }, env: ['GREETER_TOKEN'] });
    } finally {
      await box.remove();
    }
  }, 120_000);

  test('on a terminal the enabled plugin\'s permissions are asked about ("always" or no) and stored; without one the note names the command', async () => {
    const box = await sandbox('plinth-grants-enable-');
    try {
      await box.settings({ sandbox: { default: 'confined' }, plugins: { greeter: { enabled: false }, health: { enabled: false }, 'mcp-demo': { enabled: false } } });
      await writePlugin(join(box.home, 'plugins'), { name: 'greeter', permissions: V1 });

      const quiet = await runPlinth(box, ['ext', 'enable', 'greeter']);
      expectExit(quiet, 0);
      expect(quiet.stderr).toContain('greeter asks for permissions you have not granted (network api.example.com, env GREETER_TOKEN): grant them with `plinth perms grant greeter`');
      expectExit(await runPlinth(box, ['ext', 'disable', 'greeter']), 0);

      const argv = [process.execPath, BIN, ...box.dirs, 'ext', 'enable', 'greeter'];
      const { stdout } = await run('python3', [PTY, JSON.stringify(argv), JSON.stringify(cleanEnv({}, { ci: false })), 'a', '(asked again when it runs): '], { cwd: box.workspace, timeout: 60_000 });
      expect(stdout).toContain('plugin "greeter" (user, version 1.0.0) asks for these permissions:');
      expect(stdout).toContain('Allow always? [a]lways, [N]o');
      const stored = JSON.parse(await readFile(join(box.home, 'sandbox', 'grants.json'), 'utf8'));
      expect(stored.plugins.greeter.permissions).toMatchObject({ network: { allow: ['api.example.com'] }, env: ['GREETER_TOKEN'] });
    } finally {
      await box.remove();
    }
  }, 120_000);
});
