/**
 * `plinth import --from claude|codex|gemini`: a peer's known marketplaces and enabled plugins, shown
 * first, nothing added or installed without --yes (no terminal here: CI=1), then added and installed
 * through `ext marketplace add` and `ext install <plugin>@<marketplace>`. The marketplace and the
 * extension are real git repositories made here and read through file://.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { writePlugin } from './support/market.js';
import { write } from './support/peer-folders.js';

const exec = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

async function commitAll(dir: string, message: string): Promise<string> {
  const git = (...args: string[]) => exec('git', ['-c', 'user.name=Publisher', '-c', 'user.email=publisher@example.test', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, env: GIT_ENV });
  if (!existsSync(join(dir, '.git'))) await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '-m', message);
  return (await git('rev-parse', 'HEAD')).stdout.trim();
}

let base: string;
let market: string;
let extension: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-import-'));
  // A Claude Code marketplace with one plugin in a folder of its own.
  market = join(base, 'team-market');
  await write(join(market, 'plugins', 'linter', '.claude-plugin', 'plugin.json'), { name: 'linter', version: '1.0.0', description: 'lints', author: { name: 'Publisher' } });
  await write(join(market, 'plugins', 'linter', 'commands', 'lint.md'), '---\ndescription: Lint\n---\nLint the files.\n');
  await write(join(market, '.claude-plugin', 'marketplace.json'), { name: 'team-tools', owner: { name: 'Team' }, plugins: [{ name: 'linter', source: './plugins/linter', description: 'lints' }] });
  await commitAll(market, 'the marketplace');
  // A Gemini CLI extension's repository (plinth's manifest, as a repository of its own).
  extension = await writePlugin(join(base, 'src'), { name: 'gem-ext', version: '0.2.0', description: 'a Gemini extension' });
  await commitAll(extension, 'gem-ext 0.2.0');
}, 120_000);

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const boxes: Sandbox[] = [];
afterEach(async () => {
  for (const b of boxes.splice(0)) await b.remove();
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-import-');
  boxes.push(made);
  await made.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
  return made;
}

async function lock(b: Sandbox): Promise<{ plugins: Record<string, { version: string; source?: { kind: string; marketplace?: string; url?: string } }> }> {
  return JSON.parse(await readFile(join(b.home, 'plugins.lock.json'), 'utf8').catch(() => '{"plugins":{}}'));
}

describe('plinth import --from claude', () => {
  it("shows the project's marketplaces and enabled plugins, changes nothing without --yes, then adds and installs them", async () => {
    const b = await box();
    await write(join(b.workspace, '.claude', 'settings.json'), {
      extraKnownMarketplaces: {
        'team-tools': { source: { source: 'git', url: `file://${market}` } },
        inline: { source: { source: 'settings', plugins: [] } },
        private: { source: { source: 'git', url: 'https://me:s3cr3t-t0ken@git.example.test/team/market.git' } },
      },
      enabledPlugins: { 'linter@team-tools': true, 'old@team-tools': false, 'stray@nowhere': true },
    });

    const shown = await run(b, ['import', '--from', 'claude', '--scope', 'workspace']);
    expectExit(shown, 1);
    expect(shown.stdout).toContain(`add marketplace team-tools from file://${market}`);
    expect(shown.stdout).toContain('install linter@team-tools');
    expect(shown.stdout).toContain('skipped: marketplace inline');
    expect(shown.stdout).toContain('skipped: old@team-tools');
    expect(shown.stdout).toContain('its marketplace "nowhere" is not added');
    expect(shown.stdout).toContain('Nothing added or installed');
    // The token in a URL is never shown: the URL is left out, masked.
    expect(shown.stdout + shown.stderr).not.toContain('s3cr3t-t0ken');
    expect(shown.stdout).toContain('skipped: marketplace private');
    expect(existsSync(join(b.home, 'marketplaces.json'))).toBe(false);
    expect((await lock(b)).plugins).toEqual({});

    const done = json<{ done: boolean; added: string[]; installed: string[]; failed: unknown[] }>(await run(b, ['import', '--from', 'claude', '--scope', 'workspace', '--yes', '--json']));
    expect(done).toMatchObject({ done: true, added: ['team-tools'], installed: ['linter@1.0.0'], failed: [] });
    expect((await lock(b)).plugins.linter).toMatchObject({ version: '1.0.0', source: { kind: 'local', marketplace: 'team-tools' } });

    // Again: the marketplace is known, the plugin installed.
    const again = await run(b, ['import', '--from', 'claude', '--scope', 'workspace', '--yes']);
    expectExit(again, 0);
    expect(again.stdout).toContain('marketplace team-tools: already added');
    expect(again.stdout).toContain('Nothing to do: linter@team-tools is already installed');
  }, 120_000);
});

describe('plinth import --from codex and --from gemini', () => {
  it("installs Codex's enabled plugins from a marketplace plinth has, and Gemini CLI's git extensions at their ref", async () => {
    const b = await box();
    expectExit(await run(b, ['ext', 'marketplace', 'add', `file://${market}`]), 0);
    const config = join(b.base, 'codex', 'config.toml');
    await write(config, '[plugins."linter@team-tools"]\nenabled = true\n\n[plugins."off@team-tools"]\nenabled = false\n');
    const codex = await run(b, ['import', '--from', 'codex', config, '--yes']);
    expectExit(codex, 0);
    expect(codex.stdout).toContain('install linter@team-tools');
    expect(codex.stdout).toContain('skipped: off@team-tools');
    expect((await lock(b)).plugins.linter?.source?.marketplace).toBe('team-tools');

    const extensions = join(b.base, 'gemini', 'extensions');
    await write(join(extensions, 'gem-ext', '.gemini-extension-install.json'), { source: `file://${extension}`, type: 'git', ref: 'main' });
    await write(join(extensions, 'linked', '.gemini-extension-install.json'), { source: '/somewhere/linked', type: 'link' });
    const shown = await run(b, ['import', '--from', 'gemini', extensions]);
    expectExit(shown, 1);
    expect(shown.stdout).toContain(`install file://${extension}#main`);
    expect(shown.stdout).toMatch(/skipped: .*linked: installed from a link folder/);
    const gemini = await run(b, ['import', '--from', 'gemini', extensions, '--yes']);
    expectExit(gemini, 0);
    expect((await lock(b)).plugins['gem-ext']).toMatchObject({ version: '0.2.0', source: { kind: 'git', url: `file://${extension}` } });
  }, 120_000);
});
