/**
 * `ext install --auto-update` and `ext auto-update <name> on|off`, applied by a real `plinth up`
 * process every `autoUpdateInterval` hours (once when it starts): a new commit on the branch a
 * plugin was installed from is taken for a plugin with auto-update on and not for one with it off,
 * through the path `ext update` takes; an update that declares new permissions is held and reported
 * with the command that takes it. Every repository is a real one made here with git, read through
 * `file://`; `up --once --json` is a real `plinth up` that stops itself after its status.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInterface } from 'node:readline';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox, start } from './support/cli.js';
import { write } from './support/peer-folders.js';

const exec = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

async function git(cwd: string, args: string[]): Promise<string> {
  const date = '2020-01-01T00:00:00Z';
  const { stdout } = await exec('git', ['-c', 'user.name=Publisher', '-c', 'user.email=publisher@example.test', '-c', 'init.defaultBranch=main', ...args], { cwd, env: { ...GIT_ENV, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } });
  return stdout.trim();
}

/** Commits a plinth plugin at `version` into the repository `dir` (made when new); `permissions`: what its manifest asks for. */
async function release(dir: string, name: string, version: string, permissions?: Record<string, unknown>): Promise<string> {
  await write(join(dir, 'manifest.json'), { name, version, description: `${name}, from git`, kernel: '^1.0.0', main: './index.ts', ...(permissions && { permissions }) });
  await write(join(dir, 'index.ts'), `import { definePlugin } from 'plinth/sdk';\nexport default definePlugin({ setup() { /* ${version} */ } });\n`);
  if (!existsSync(join(dir, '.git'))) await git(dir, ['init', '-q']);
  await git(dir, ['add', '-A']);
  await git(dir, ['commit', '-q', '-m', `${name} ${version}`]);
  return git(dir, ['rev-parse', 'HEAD']);
}

interface LockFile {
  plugins: Record<string, { version: string; autoUpdate?: boolean; source?: { commit?: string } }>;
}
async function lock(home: Sandbox): Promise<LockFile> {
  return JSON.parse(await readFile(join(home.home, 'plugins.lock.json'), 'utf8')) as LockFile;
}

interface UpJson {
  autoUpdate?: {
    intervalHours: number;
    applied: Array<{ name: string; from?: string; to: string }>;
    held: Array<{ name: string; reason: string; command: string }>;
    failed: Array<{ name: string; code: string; message: string }>;
    current: string[];
  };
}

let base: string;
beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-auto-update-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A plinth home whose user settings turn automatic updates on every `hours` (none: off). */
async function box(hours?: number): Promise<Sandbox> {
  const made = await sandbox('plinth-auto-update-');
  closers.push(() => made.remove());
  await made.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, extensions: { settings: { hotReload: false, ...(hours !== undefined && { autoUpdateInterval: hours }) } } } });
  return made;
}

describe('auto-update under plinth up', () => {
  it('applies a new commit for a plugin with auto-update on, not for one with it off', async () => {
    const onRepo = join(base, 'follows');
    const offRepo = join(base, 'stays');
    await release(onRepo, 'follows', '1.0.0');
    const offFirst = await release(offRepo, 'stays', '1.0.0');
    const home = await box(24);
    expectExit(await run(home, ['ext', 'install', `file://${onRepo}#main`, '--auto-update', '--yes']), 0);
    expectExit(await run(home, ['ext', 'install', `file://${offRepo}#main`, '--yes']), 0);
    expect((await lock(home)).plugins.follows?.autoUpdate).toBe(true);
    expect((await lock(home)).plugins.stays?.autoUpdate).toBeUndefined();

    const onNext = await release(onRepo, 'follows', '1.1.0');
    await release(offRepo, 'stays', '1.1.0');
    const up = await run(home, ['up', '--once', '--json']);
    const status = json<UpJson>(up);
    expect(status.autoUpdate).toMatchObject({ intervalHours: 24, applied: [{ name: 'follows', from: '1.0.0', to: '1.1.0' }], held: [], failed: [] });
    const after = await lock(home);
    expect(after.plugins.follows).toMatchObject({ version: '1.1.0', autoUpdate: true, source: { commit: onNext } });
    expect(after.plugins.stays).toMatchObject({ version: '1.0.0', source: { commit: offFirst } });
    expect(up.stderr).toContain('auto-updated follows 1.0.0 → 1.1.0');

    // Turned off, the next commit waits for `ext update`; turned on again, `up` takes it.
    expectExit(await run(home, ['ext', 'auto-update', 'follows', 'off']), 0);
    await release(onRepo, 'follows', '1.2.0');
    const quiet = json<UpJson>(await run(home, ['up', '--once', '--json']));
    expect(quiet.autoUpdate).toMatchObject({ applied: [], current: [] });
    expect((await lock(home)).plugins.follows?.version).toBe('1.1.0');
    expectExit(await run(home, ['ext', 'auto-update', 'follows', 'on']), 0);
    expect(json<UpJson>(await run(home, ['up', '--once', '--json'])).autoUpdate?.applied).toEqual([{ name: 'follows', from: '1.1.0', to: '1.2.0' }]);
  });

  it('runs again on the schedule while plinth up stays up, taking a commit made after it started', async () => {
    const repo = join(base, 'later');
    await release(repo, 'later', '1.0.0');
    // About every 2 s: a schedule short enough for a test.
    const home = await box(0.0005);
    expectExit(await run(home, ['ext', 'install', `file://${repo}#main`, '--auto-update', '--yes']), 0);
    const host = start(home, ['up']);
    const lines: string[] = [];
    createInterface({ input: host.stderr! }).on('line', (line) => void lines.push(line));
    host.stdout!.resume();
    const seen = async (part: string): Promise<void> => {
      for (let i = 0; i < 1200 && !lines.some((l) => l.includes(part)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines.join('\n')).toContain(part);
    };
    try {
      await seen('auto-update: later up to date');
      await release(repo, 'later', '1.1.0');
      await seen('auto-updated later 1.0.0 → 1.1.0');
    } finally {
      host.kill('SIGTERM');
      await new Promise((resolve) => host.once('close', resolve));
    }
    expect((await lock(home)).plugins.later).toMatchObject({ version: '1.1.0', autoUpdate: true });
  }, 120_000);

  it('holds an update that declares new permissions and reports the command that takes it', async () => {
    const repo = join(base, 'asks');
    const first = await release(repo, 'asks', '1.0.0');
    const home = await box(6);
    expectExit(await run(home, ['ext', 'install', `file://${repo}#main`, '--auto-update', '--yes']), 0);
    await release(repo, 'asks', '2.0.0', { network: { allow: ['api.example.test'] } });

    const up = await run(home, ['up', '--once', '--json']);
    const status = json<UpJson>(up);
    expect(status.autoUpdate?.applied).toEqual([]);
    expect(status.autoUpdate?.held).toEqual([expect.objectContaining({ name: 'asks', command: 'plinth ext update asks' })]);
    expect(status.autoUpdate?.held[0]?.reason).toContain('+ permissions: network');
    expect(up.stderr).toContain('auto-update held asks');
    expect((await lock(home)).plugins.asks).toMatchObject({ version: '1.0.0', source: { commit: first } });

    // The user approves it the ordinary way.
    expectExit(await run(home, ['ext', 'update', 'asks', '--yes']), 0);
    expect((await lock(home)).plugins.asks).toMatchObject({ version: '2.0.0', autoUpdate: true });
  });

  it('is off when autoUpdateInterval is unset; ext auto-update names an unknown plugin and a wrong state', async () => {
    const repo = join(base, 'unset');
    await release(repo, 'unset', '1.0.0');
    const home = await box();
    expectExit(await run(home, ['ext', 'install', `file://${repo}#main`, '--auto-update', '--yes']), 0);
    await release(repo, 'unset', '1.1.0');
    const status = json<UpJson>(await run(home, ['up', '--once', '--json']));
    expect(status.autoUpdate).toBeUndefined();
    expect((await lock(home)).plugins.unset?.version).toBe('1.0.0');

    const unknown = await run(home, ['ext', 'auto-update', 'nothing-here', 'on']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('PLN_E_MARKET_NOT_INSTALLED');
    const usage = await run(home, ['ext', 'auto-update', 'unset', 'maybe']);
    expect(usage.stderr).toContain('PLN_E_CLI_USAGE');
  });
});
