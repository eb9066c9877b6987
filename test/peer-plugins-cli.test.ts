/**
 * Peer folders through the built `plinth` command, as a user moving from Claude
 * Code or Gemini CLI would use them:
 *
 * 1. `plinth ext link` of a Gemini CLI extension folder under development, and
 *    `plinth ext info` listing what plinth ignores of it (for people and `--json`);
 * 2. `plinth registry pack` of a Claude Code plugin folder (its `.claude-plugin/`
 *    and `.mcp.json` packed, other dot-files not) and `plinth ext install` of the
 *    tarball through the marketplace: what it declares shown (the peer's hook
 *    commands and its server) and approval asked, then installed as a user plugin;
 * 3. what is refused: a folder that is no plugin of any kind, a Gemini extension
 *    without a version; and a peer's name that is not npm-style, used in a fitted form.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { claudePlugin, geminiExtension, write } from './support/peer-folders.js';

const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function box(): Promise<Sandbox> {
  const made = await sandbox('plinth-peers-cli-');
  boxes.push(made);
  await made.settings({ plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } } });
  return made;
}

type Row = { name: string; version: string; source: string; state: string; linked: boolean; dir: string };
const row = (list: Row[], name: string) => list.find((r) => r.name === name);

describe('plinth ext link of a Gemini CLI extension', () => {
  it('links it as it is; ext info lists what plinth ignores and what it reads differently', async () => {
    const at = await box();
    const dir = join(at.base, 'dev', 'gemini-demo');
    await geminiExtension(dir);

    const linked = await run(at, ['ext', 'link', dir]);
    expectExit(linked, 0);
    expect(linked.stdout).toContain('Linked gemini-demo@1.2.0');
    expect(row(json<Row[]>(await run(at, ['ext', 'list', '--json'])), 'gemini-demo')).toMatchObject({ linked: true, dir, source: 'path', state: 'active' });

    const info = await run(at, ['ext', 'info', 'gemini-demo']);
    expectExit(info, 0);
    expect(info.stdout).toContain(`made from:   ${join(dir, 'gemini-extension.json')} (a Gemini CLI extension)`);
    expect(info.stdout).toContain('MCP servers: gemini-everything');
    expect(info.stdout).toContain('hooks on:    BeforeTool');
    expect(info.stdout).toContain('Ignored (plinth does not honour these):');
    expect(info.stdout).toMatch(/ {2}contextFileName: context files \(GEMINI\.md\)/);
    expect(info.stdout).toMatch(/ {2}themes: /);
    expect(info.stdout).toMatch(/ {2}commands\/: custom commands \(TOML\)/);
    expect(info.stdout).toMatch(/ {2}excludeTools\[1\]: "run_shell_command\(rm -rf\)"/);
    expect(info.stdout).toContain('Read differently:');
    expect(info.stdout).toMatch(/ {2}excludeTools: get-tiny-image: hidden from this extension's own MCP servers/);
    expect(info.stdout).toMatch(/GEMINI_DEMO_GREETING\s+string/);

    const data = json<{ peer: { format: string; ignored: Array<{ field: string }> } }>(await run(at, ['ext', 'info', 'gemini-demo', '--json']));
    expect(data.peer.format).toBe('gemini');
    expect(data.peer.ignored.map((f) => f.field)).toEqual(expect.arrayContaining(['contextFileName', 'themes', 'commands/', 'excludeTools[1]']));
  }, 180_000);
});

describe('plinth ext install of a packed Claude Code plugin', () => {
  it('packs the folder with its .claude-plugin/ and .mcp.json, asks approval showing its hook commands and server, and installs it', async () => {
    const at = await box();
    const dir = join(at.base, 'src', 'claude-demo');
    await claudePlugin(dir);
    await write(join(dir, '.env'), 'NOT_PACKED=1\n');
    const out = join(at.base, 'claude-demo-0.0.0.tgz');

    const packed = await run(at, ['registry', 'pack', dir, '--out', out, '--json']);
    expectExit(packed, 0);
    expect(json<{ name: string; version: string }>(packed)).toMatchObject({ name: 'claude-demo', version: '0.0.0' });
    const listing = await new Promise<string>((resolve, reject) => execFile('tar', ['tzf', out], (error, stdout) => (error ? reject(error) : resolve(stdout))));
    const files = listing.split('\n').filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(['package/.claude-plugin/plugin.json', 'package/.mcp.json', 'package/hooks/hooks.json', 'package/servers/start.mjs']));
    expect(files).not.toContain('package/.env');

    const refused = await run(at, ['ext', 'install', out]);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_MARKET_APPROVAL');
    expect(refused.stderr).toContain('claude-demo@0.0.0 declares:');
    expect(refused.stderr).toContain('code: none (declarations only)');
    expect(refused.stderr).toContain('hooks: PreToolUse mcp__claude-everything__.*: "${CLAUDE_PLUGIN_ROOT}"/hooks/guard.sh');
    // As written in the plugin, not with the paths of the folder it is unpacked into for checking.
    expect(refused.stderr).toContain(`MCP servers: claude-everything: ${process.execPath} \${CLAUDE_PLUGIN_ROOT}/servers/start.mjs`);
    expect(existsSync(join(at.home, 'plugins', 'claude-demo'))).toBe(false);

    const installed = await run(at, ['ext', 'install', out, '--yes']);
    expectExit(installed, 0);
    expect(installed.stdout).toContain('installed claude-demo@0.0.0 from file');
    expect((await run(at, ['ext', 'install', out, '--yes'])).stdout).toContain('is already installed (--force installs it again)');
    const installedDir = join(at.home, 'plugins', 'claude-demo');
    expect(existsSync(join(installedDir, '.claude-plugin', 'plugin.json'))).toBe(true);
    expect(row(json<Row[]>(await run(at, ['ext', 'list', '--json'])), 'claude-demo')).toMatchObject({ version: '0.0.0', source: 'user', state: 'active', dir: installedDir });

    // Where it now lives: the server's path is the installed folder's.
    const info = json<{ mcpServers: string[]; peer: { file: string; ignored: Array<{ field: string }> }; contributions: Array<{ kind: string; name: string; file: string; description?: string }> }>(await run(at, ['ext', 'info', 'claude-demo', '--json']));
    expect(info.mcpServers).toEqual(['claude-everything']);
    // Its commands, agents and skills, with their files in the installed folder, for a host to offer.
    expect(info.contributions.map((c) => `${c.kind} ${c.name} ${c.file} ${c.description ?? ''}`)).toEqual([
      `command deploy ${join(installedDir, 'commands', 'deploy.md')} Deploy`,
      `agent reviewer ${join(installedDir, 'agents', 'reviewer.md')} reviews`,
      `skill review ${join(installedDir, 'skills', 'review', 'SKILL.md')} `,
    ]);
    const text = await run(at, ['ext', 'info', 'claude-demo']);
    expect(text.stdout).toContain('For the host to offer (plinth runs none of these):\n  command deploy: commands/deploy.md (Deploy)');
    expect(info.peer.file).toBe(join(installedDir, '.claude-plugin', 'plugin.json'));
    expect(info.peer.ignored.map((f) => f.field)).toEqual(expect.arrayContaining(['author', 'commands/', 'skills/', 'agents/']));
    const server = json<{ args: string[] }>(await run(at, ['mcp', 'get', 'claude-everything', '--json']));
    expect(JSON.stringify(server)).toContain(join(installedDir, 'servers', 'start.mjs'));
  }, 180_000);
});

describe('a registry of peer plugins', () => {
  it('publishes a Gemini extension folder and a packed Claude plugin; both install by name; the documents name no path of the publisher', async () => {
    const at = await box();
    const registryDir = join(at.base, 'registry');
    const gemini = join(at.base, 'src', 'gemini-demo');
    const claude = join(at.base, 'src', 'claude-demo');
    await geminiExtension(gemini);
    await claudePlugin(claude);
    const tarball = join(at.base, 'claude.tgz');
    expectExit(await run(at, ['registry', 'pack', claude, '--out', tarball]), 0);
    expectExit(await run(at, ['registry', 'publish', gemini, '--to', registryDir]), 0);
    expectExit(await run(at, ['registry', 'publish', tarball, '--to', registryDir]), 0);
    const documents = (await Promise.all(['gemini-demo', 'claude-demo'].map((name) => readFile(join(registryDir, name), 'utf8')))).join('\n');
    expect(documents).not.toContain(at.base);
    expect(documents).toContain('${extensionPath}');

    await at.settings({ registries: [{ name: 'folder', url: registryDir }], plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } } });
    const installed = await run(at, ['ext', 'install', 'gemini-demo', '--yes', '--json']);
    expectExit(installed, 0);
    // A one-shot install leaves the first load to the next start (or a running plinth up): `ext list` below is that start.
    expect(json(installed)).toMatchObject({ changes: [{ name: 'gemini-demo', to: '1.2.0', registry: 'folder', loaded: false }] });
    expectExit(await run(at, ['ext', 'install', 'claude-demo', '--yes']), 0);
    const list = json<Row[]>(await run(at, ['ext', 'list', '--json']));
    expect(row(list, 'gemini-demo')).toMatchObject({ version: '1.2.0', source: 'user', state: 'active' });
    expect(row(list, 'claude-demo')).toMatchObject({ version: '0.0.0', source: 'user', state: 'active' });
    const server = await run(at, ['mcp', 'get', 'gemini-everything', '--json']);
    expect(JSON.stringify(json(server))).toContain(join(at.home, 'plugins', 'gemini-demo', 'servers', 'start.mjs'));
  }, 180_000);

  it('points at ext link or registry pack when ext install is given a folder', async () => {
    const at = await box();
    const dir = join(at.base, 'src', 'gemini-demo');
    await geminiExtension(dir);
    const refused = await run(at, ['ext', 'install', dir, '--json']);
    expectExit(refused, 1);
    expect(json(refused).error).toMatchObject({ code: 'PLN_E_MARKET_TARBALL', hint: expect.stringContaining(`plinth ext link ${dir}`) });
  }, 60_000);
});

describe('what is refused, and names that do not fit', () => {
  it('refuses a folder that is no plugin of any kind, and a Gemini extension without a version', async () => {
    const at = await box();
    const empty = join(at.base, 'empty');
    await mkdir(empty, { recursive: true });
    const none = await run(at, ['ext', 'link', empty, '--json']);
    expectExit(none, 1);
    expect(json(none).error).toMatchObject({ code: 'PLN_E_EXT_LINK_NOT_PLUGIN', message: expect.stringContaining('gemini-extension.json') });

    const unversioned = join(at.base, 'unversioned');
    await write(join(unversioned, 'gemini-extension.json'), { name: 'no-version' });
    const invalid = await run(at, ['ext', 'link', unversioned, '--json']);
    expectExit(invalid, 1);
    expect(json(invalid).error).toMatchObject({ code: 'PLN_E_MANIFEST_INVALID', message: expect.stringContaining(`${join(unversioned, 'gemini-extension.json')}: version:`) });
  }, 120_000);

  it('uses a peer name that is not npm-style in a fitted form, and says so', async () => {
    const at = await box();
    const dir = join(at.base, 'odd');
    await write(join(dir, 'gemini-extension.json'), { name: 'My Tools', version: '2.0' });
    const linked = await run(at, ['ext', 'link', dir]);
    expectExit(linked, 0);
    expect(linked.stdout).toContain('Linked my-tools@2.0.0');
    const info = json<{ peer: { notes: Array<{ field: string; reason: string }> } }>(await run(at, ['ext', 'info', 'my-tools', '--json']));
    expect(info.peer.notes).toEqual(
      expect.arrayContaining([
        { field: 'name', reason: '"My Tools" is not an npm-style name; plinth calls it "my-tools"' },
        { field: 'version', reason: '"2.0" is read as 2.0.0' },
      ]),
    );
  }, 120_000);
});
