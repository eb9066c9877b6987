/**
 * The manifest plinth makes of a peer's folder (internal/peer/manifest.ts), read
 * from real folders in a temporary directory, and discovery finding such
 * folders: each peer field mapped or listed as ignored, the peers' variables
 * and references translated, bad input refused with the file and the field.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverPlugins } from '../kernel/discovery.js';
import { parseManifest } from '../sdk/index.js';
import { readPeerFolder } from '../internal/peer/manifest.js';
import { packPlugin } from '../registry/pack.js';
import { readTarball } from '../registry/tarball-read.js';
import { write } from './support/peer-folders.js';

let base: string;
let n = 0;
const folder = () => join(base, `f${++n}`);
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-peer-manifest-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** The made manifest, validated as discovery validates it. */
async function made(dir: string, workspace = '/work/space') {
  const peer = await readPeerFolder(dir, { workspace });
  if (!peer) throw new Error(`${dir} is no peer folder`);
  const parsed = parseManifest(peer.data);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.manifest;
}
const fields = (list: ReadonlyArray<{ field: string }>) => list.map((f) => f.field);

describe('a Claude Code plugin', () => {
  it('without name or version is named after its folder, versioned 0.0.0, and says so', async () => {
    const dir = join(base, 'My Plugin');
    await write(join(dir, '.claude-plugin', 'plugin.json'), {});
    const manifest = await made(dir);
    expect(manifest).toMatchObject({ name: 'my-plugin', version: '0.0.0', kernel: '^1.0.0', description: '', peer: { format: 'claude', file: join(dir, '.claude-plugin', 'plugin.json') } });
    expect(fields(manifest.peer!.notes)).toEqual(['name', 'version']);
  });

  it('reads servers from .mcp.json (with or without its mcpServers wrapper), the files plugin.json names, and inline ones', async () => {
    const dir = folder();
    await write(join(dir, '.claude-plugin', 'plugin.json'), { name: 'srv', version: '1.0.0', mcpServers: { inline: { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer ${API_TOKEN}' } } } });
    await write(join(dir, '.mcp.json'), { db: { command: '${CLAUDE_PLUGIN_ROOT}/bin/db', args: ['--root', '${CLAUDE_PROJECT_DIR}'], env: { URL: '${DB_URL:-sqlite://x}', KEEP: '${env:HOME}' } } });
    const manifest = await made(dir);
    expect(manifest.mcpServers).toEqual({
      db: { command: join(dir, 'bin', 'db'), args: ['--root', '/work/space'], env: { URL: '${env:DB_URL}', KEEP: '${env:HOME}' } },
      inline: { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer ${env:API_TOKEN}' } },
    });
    expect(manifest.peer!.notes).toContainEqual({ field: 'mcpServers', reason: '"${DB_URL:-sqlite://x}": plinth references have no default, so DB_URL must be set' });

    const other = folder();
    await write(join(other, '.claude-plugin', 'plugin.json'), { name: 'paths', mcpServers: './config/servers.json', hooks: ['./config/hooks.json', '../outside.json'] });
    await write(join(other, 'config', 'servers.json'), { mcpServers: { s: { command: 'node', args: ['s.js'] } } });
    await write(join(other, 'config', 'hooks.json'), { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo done' }] }] } });
    await write(join(other, 'hooks', 'hooks.json'), { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo first' }] }] } });
    const paths = await made(other);
    expect(Object.keys(paths.mcpServers)).toEqual(['s']);
    // hooks/hooks.json first, then the files plugin.json names: lists of one event are joined.
    expect(paths.hooks).toEqual({ Stop: [{ hooks: [{ type: 'command', command: 'echo first' }] }, { hooks: [{ type: 'command', command: 'echo done' }] }] });
    expect(paths.peer!.ignored).toContainEqual({ field: 'hooks', reason: '"../outside.json": expected a path inside the plugin folder, e.g. "./config/servers.json"' });
  });

  it('keeps hooks in the peer\'s shape with ${CLAUDE_PLUGIN_ROOT} as written, for the hooks plugin\'s dialect', async () => {
    const dir = folder();
    const hooks = { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '"${CLAUDE_PLUGIN_ROOT}"/check.sh', timeout: 30 }] }] };
    await write(join(dir, '.claude-plugin', 'plugin.json'), { name: 'h', hooks });
    expect((await made(dir)).hooks).toEqual(hooks);
  });

  it('lists every component and field plinth does not honour, and unknown fields, by name', async () => {
    const dir = folder();
    await write(join(dir, '.claude-plugin', 'plugin.json'), { name: 'all', homepage: 'https://x.test', license: 'MIT', dependencies: ['other'], outputStyles: './styles', lspServers: './.lsp.json', surprise: 1 });
    await write(join(dir, 'commands', 'a.md'), 'x');
    await write(join(dir, 'skills', 's', 'SKILL.md'), 'x');
    await write(join(dir, 'gemini-extension.json'), { name: 'all', version: '1.0.0' });
    const manifest = await made(dir);
    expect(fields(manifest.peer!.ignored)).toEqual(['homepage', 'license', 'commands/', 'skills/', 'outputStyles', 'lspServers', 'dependencies', 'surprise', 'gemini-extension.json']);
    // A Claude plugin's `dependencies` are never read as plinth's.
    expect(manifest.dependencies).toEqual({});
  });

  it('makes userConfig options settings, handed to its servers as CLAUDE_PLUGIN_OPTION_<key> and referenced as settings', async () => {
    const dir = folder();
    await write(join(dir, '.claude-plugin', 'plugin.json'), {
      name: 'cfg',
      userConfig: { api_key: { type: 'string', title: 'API key', sensitive: true, required: true }, retries: { type: 'number', default: 3 } },
      mcpServers: { api: { command: 'node', args: ['api.js'], env: { RETRIES: '${user_config.retries}' } } },
    });
    const manifest = await made(dir);
    expect(manifest.settings).toEqual([
      // Claude Code asks for a required option when the plugin is enabled; plinth loads it without one (an install could not succeed otherwise), and says so.
      expect.objectContaining({ name: 'api_key', description: 'API key', type: 'string', sensitive: true, required: false, envVar: 'CLAUDE_PLUGIN_OPTION_api_key' }),
      expect.objectContaining({ name: 'retries', type: 'number', default: 3, sensitive: false, envVar: 'CLAUDE_PLUGIN_OPTION_retries' }),
    ]);
    expect(manifest.mcpServers.api).toMatchObject({ env: { RETRIES: '${setting:cfg.retries}' } });
    expect(fields(manifest.peer!.notes)).toEqual(['version', 'userConfig.api_key', 'userConfig', 'permissions']);
    // What Claude Code gives its servers and hooks: the project folder, and the variables its options map.
    expect(manifest.permissions).toMatchObject({ filesystem: { read: [], write: ['${workspace}'] }, env: ['CLAUDE_PLUGIN_OPTION_api_key', 'CLAUDE_PLUGIN_OPTION_retries'] });
  });
});

describe('a Gemini CLI extension', () => {
  it('maps url to SSE and httpUrl to streamable HTTP, leaves trust to plinth, and lists options plinth does not know', async () => {
    const dir = folder();
    await write(join(dir, 'gemini-extension.json'), {
      name: 'remote',
      version: '0.1.0',
      mcpServers: {
        old: { url: 'http://127.0.0.1:1/sse', trust: true },
        new: { httpUrl: 'http://127.0.0.1:1/mcp', timeout: 5000, description: 'the new one' },
      },
    });
    const manifest = await made(dir);
    expect(manifest.mcpServers).toEqual({ old: { url: 'http://127.0.0.1:1/sse', transport: 'sse' }, new: { url: 'http://127.0.0.1:1/mcp', transport: 'http', timeout: 5000 } });
    expect(fields(manifest.peer!.ignored)).toEqual(['mcpServers.old.trust', 'mcpServers.new.description']);
  });

  it('expands ${extensionPath}, ${workspacePath} and ${/} in servers and hooks; settings reach servers as their variable', async () => {
    const dir = folder();
    await write(join(dir, 'gemini-extension.json'), {
      name: 'vars',
      version: '1.0.0',
      settings: [{ name: 'Key', envVar: 'VARS_KEY', sensitive: true }, { name: 'Host', envVar: 'VARS_HOST' }, { name: 'no variable' }],
      mcpServers: { s: { command: 'node', args: ['${extensionPath}${/}s.js', '${workspacePath}'], env: { VARS_KEY: '${VARS_KEY}', HOST_URL: 'https://${VARS_HOST}', OTHER: '$HOME ${OTHER}' }, excludeTools: ['own'] } },
      excludeTools: ['shared', 'run_shell_command(rm -rf)'],
    });
    await write(join(dir, 'hooks', 'hooks.json'), { hooks: { AfterTool: [{ matcher: '.*', hooks: [{ type: 'command', command: 'node ${extensionPath}${/}after.js ${workspacePath}' }] }] } });
    const manifest = await made(dir, '/w');
    expect(manifest.mcpServers.s).toEqual({
      command: 'node',
      args: [`${dir}${sep}s.js`, '/w'],
      // VARS_KEY is passed as the setting's own variable (a sensitive value never goes through a reference).
      env: { HOST_URL: 'https://${setting:vars.VARS_HOST}', OTHER: '${env:HOME} ${env:OTHER}' },
      excludeTools: ['own', 'shared'],
    });
    expect(manifest.hooks).toEqual({ AfterTool: [{ matcher: '.*', hooks: [{ type: 'command', command: `node ${dir}${sep}after.js /w` }] }] });
    expect(manifest.settings.map((s) => [s.name, s.envVar, s.sensitive])).toEqual([
      ['VARS_KEY', 'VARS_KEY', true],
      ['VARS_HOST', 'VARS_HOST', false],
    ]);
    expect(fields(manifest.peer!.ignored)).toEqual(['settings[2]', 'excludeTools[1]']);
  });

  it('reads $VAR in a server\'s env as ${VAR}, as Gemini CLI expands both', async () => {
    const dir = folder();
    await write(join(dir, 'gemini-extension.json'), {
      name: 'bare',
      version: '1.0.0',
      settings: [{ name: 'API Key', envVar: 'MY_API_KEY', sensitive: true }, { name: 'Host', envVar: 'MY_HOST' }],
      mcpServers: { s: { command: 'node', args: ['s.js', '$NOT_ENV'], env: { MY_API_KEY: '$MY_API_KEY', HOST_URL: 'https://$MY_HOST', LOG_LEVEL: '$LOG_LEVEL', PRICE: '5$', TWO: '$A-$B_1' } } },
    });
    const manifest = await made(dir);
    expect(manifest.mcpServers.s).toEqual({
      command: 'node',
      // Gemini expands variables in env only.
      args: ['s.js', '$NOT_ENV'],
      // MY_API_KEY reaches the server as its own variable (a sensitive value never goes through a reference).
      env: { HOST_URL: 'https://${setting:bare.MY_HOST}', LOG_LEVEL: '${env:LOG_LEVEL}', PRICE: '5$', TWO: '${env:A}-${env:B_1}' },
    });
  });

  it('needs a name and a version, as Gemini CLI does; a loose version is made semver', async () => {
    const dir = folder();
    await write(join(dir, 'gemini-extension.json'), { name: 'v' });
    await expect(readPeerFolder(dir)).rejects.toMatchObject({ code: 'PLN_E_MANIFEST_INVALID', details: { file: join(dir, 'gemini-extension.json'), issues: [{ path: 'version' }] } });
    await write(join(dir, 'gemini-extension.json'), { version: '1.0.0' });
    await expect(readPeerFolder(dir)).rejects.toMatchObject({ code: 'PLN_E_MANIFEST_INVALID', details: { issues: [{ path: 'name' }] } });
    await write(join(dir, 'gemini-extension.json'), { name: 'v', version: 'v2' });
    expect((await made(dir)).version).toBe('2.0.0');
    await write(join(dir, 'gemini-extension.json'), { name: 'v', version: 'soon' });
    await expect(readPeerFolder(dir)).rejects.toMatchObject({ code: 'PLN_E_MANIFEST_INVALID' });
  });
});

describe('discovery', () => {
  it('finds peer folders where plugins are found (a marketplace repository\'s plugins too); manifest.json wins where both are', async () => {
    const root = folder();
    await write(join(root, 'plain', 'manifest.json'), { name: 'plain', version: '1.0.0' });
    await write(join(root, 'plain', '.claude-plugin', 'plugin.json'), { name: 'not-this' });
    await write(join(root, 'repo', '.claude-plugin', 'marketplace.json'), { name: 'market', plugins: [] });
    await write(join(root, 'repo', 'plugins', 'one', '.claude-plugin', 'plugin.json'), { name: 'one', version: '1.0.0' });
    await write(join(root, 'ext', 'gemini-extension.json'), { name: 'ext', version: '3.0.0' });
    const found = await discoverPlugins([{ dir: root, source: 'user' }], { workspace: root });
    expect(found.invalid).toEqual([]);
    expect(found.candidates.map((c) => [c.manifest.name, c.manifest.version, c.file])).toEqual([
      ['ext', '3.0.0', join(root, 'ext', 'gemini-extension.json')],
      ['plain', '1.0.0', join(root, 'plain', 'manifest.json')],
      ['one', '1.0.0', join(root, 'repo', 'plugins', 'one', '.claude-plugin', 'plugin.json')],
    ]);
  });

  it('reports a peer manifest or hooks file that is not JSON with the file, line and column; the other plugins load', async () => {
    const root = folder();
    await write(join(root, 'bad', '.claude-plugin', 'plugin.json'), '{ "name": "bad", }');
    await write(join(root, 'badhooks', 'gemini-extension.json'), { name: 'badhooks', version: '1.0.0' });
    await write(join(root, 'badhooks', 'hooks', 'hooks.json'), '{ hooks: {} }');
    await write(join(root, 'good', 'gemini-extension.json'), { name: 'good', version: '1.0.0' });
    const found = await discoverPlugins([{ dir: root, source: 'user' }]);
    expect(found.candidates.map((c) => c.manifest.name)).toEqual(['good']);
    expect(found.invalid.map((e) => [e.code, e.details?.file, e.details?.line])).toEqual([
      ['PLN_E_MANIFEST_UNREADABLE', join(root, 'bad', '.claude-plugin', 'plugin.json'), 1],
      ['PLN_E_MANIFEST_UNREADABLE', join(root, 'badhooks', 'hooks', 'hooks.json'), 1],
    ]);
  });
});

describe('a Codex plugin', () => {
  it('maps plugin.json, its .mcp.json and hooks paths, with ${PLUGIN_ROOT} left as written for a registry document; a nameless one is refused', async () => {
    const dir = folder();
    await write(join(dir, '.codex-plugin', 'plugin.json'), { name: 'Codex Tools', hooks: ['./hooks/a.json', './hooks/b.json'], mcpServers: './config/mcp.json', apps: './.app.json', compatibility: {} });
    await write(join(dir, 'config', 'mcp.json'), { mcpServers: { notes: { command: 'node', args: ['${PLUGIN_ROOT}/s.mjs'], env: { KEY: '${NOTES_KEY}' } } } });
    await write(join(dir, 'hooks', 'a.json'), { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'a' }] }] } });
    await write(join(dir, 'hooks', 'b.json'), { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'b', async: true }] }], SessionStart: [{ matcher: 'clear', hooks: [{ type: 'agent' }] }] } });
    const manifest = await made(dir);
    expect(manifest).toMatchObject({ name: 'codex-tools', version: '0.0.0', peer: { format: 'codex' } });
    expect(manifest.mcpServers.notes).toEqual({ command: 'node', args: [`${dir}/s.mjs`], env: { KEY: '${env:NOTES_KEY}' } });
    expect(manifest.hooks).toEqual({
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'a' }] }, { hooks: [{ type: 'command', command: 'b', async: true }] }],
      SessionStart: [{ matcher: 'clear', hooks: [{ type: 'agent' }] }],
    });
    expect(fields(manifest.peer!.ignored)).toEqual(['hooks/b.json: SessionStart[0].hooks[0].type', 'apps', 'compatibility']);
    expect(manifest.peer!.notes.find((n) => n.field === 'hooks/b.json: PreToolUse[0].hooks[0].async')?.reason).toMatch(/^Codex CLI field not supported yet/);

    const written = await readPeerFolder(dir, { asWritten: true });
    expect(written?.data).toMatchObject({ mcpServers: { notes: { args: ['${PLUGIN_ROOT}/s.mjs'] } }, peer: { file: '.codex-plugin/plugin.json' } });

    // Packed for a registry: its .codex-plugin/ and .mcp.json travel (dot-names otherwise stay out), and the tarball reads back as the same plugin.
    const packed = await packPlugin(dir);
    expect(packed.files).toEqual(expect.arrayContaining(['.codex-plugin/plugin.json', 'config/mcp.json', 'hooks/a.json', 'hooks/b.json']));
    const back = await readTarball(packed.bytes);
    expect(back.manifest).toMatchObject({ name: 'codex-tools', version: '0.0.0', peer: { format: 'codex', file: '.codex-plugin/plugin.json' }, mcpServers: { notes: { args: ['${PLUGIN_ROOT}/s.mjs'] } } });

    const nameless = folder();
    await write(join(nameless, '.codex-plugin', 'plugin.json'), { version: '1.0.0' });
    await expect(readPeerFolder(nameless)).rejects.toMatchObject({ code: 'PLN_E_MANIFEST_INVALID' });
  });
});

describe("Claude Code's standard layout alone", () => {
  it('is a plugin only when the caller says a plugin is meant there, and never a marketplace root', async () => {
    const dir = join(base, 'layout-demo');
    await write(join(dir, '.mcp.json'), { mcpServers: { s: { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/s.js'] } } });
    await write(join(dir, 'skills', 'pdf', 'SKILL.md'), '---\nname: pdf\ndescription: >\n  folded text\n---\n');
    expect(await readPeerFolder(dir)).toBeUndefined();
    const peer = await readPeerFolder(dir, {}, undefined, { layout: true });
    expect(peer?.data).toMatchObject({ name: 'layout-demo', version: '0.0.0', mcpServers: { s: { args: [`${dir}/s.js`] } } });
    expect(peer?.file).toBe(join(dir, '.mcp.json'));
    // A folded description is left out rather than guessed.
    expect((peer?.data.peer as { contributions: unknown[] }).contributions).toEqual([{ kind: 'skill', name: 'pdf', path: 'skills/pdf/SKILL.md' }]);

    const market = folder();
    await write(join(market, '.claude-plugin', 'marketplace.json'), { name: 'm', plugins: [] });
    await write(join(market, 'commands', 'x.md'), 'x');
    expect(await readPeerFolder(market, {}, undefined, { layout: true })).toBeUndefined();

    // Discovery: directly in a plugin folder, yes; one level deeper, no.
    const source = folder();
    await write(join(source, 'direct', 'hooks', 'hooks.json'), { hooks: {} });
    await write(join(source, 'group', 'deeper', 'hooks', 'hooks.json'), { hooks: {} });
    const found = await discoverPlugins([{ dir: source, source: 'user' }]);
    expect(found.candidates.map((c) => c.manifest.name)).toEqual(['direct']);
  });
});

describe('contributions of a Claude Code plugin.json', () => {
  it('reads the folders and files plugin.json names besides the standard ones', async () => {
    const dir = folder();
    await write(join(dir, '.claude-plugin', 'plugin.json'), { name: 'named-parts', commands: ['./extra/ship.md', './more'], agents: './team' });
    await write(join(dir, 'extra', 'ship.md'), '---\ndescription: Ship it\n---\n');
    await write(join(dir, 'more', 'git', 'tag.md'), 'Tag.');
    await write(join(dir, 'team', 'tester.md'), '---\ndescription: "Writes \\"tests\\""\n---\n');
    const peer = await readPeerFolder(dir);
    const listed = (peer?.data.peer as { contributions: Array<{ kind: string; name: string; path: string; description?: string }> }).contributions;
    expect(listed.map((c) => `${c.kind} ${c.name} ${c.path} ${c.description ?? ''}`)).toEqual(['command ship extra/ship.md Ship it', 'command git:tag more/git/tag.md ', 'agent tester team/tester.md Writes "tests"']);
  });
});
