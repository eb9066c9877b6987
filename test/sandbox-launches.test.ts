/**
 * The callers that say whom a child acts for, confined for real: the hook
 * runner (spawned and persistent hooks, with the principal the hooks plugin
 * gives them) and the stdio MCP transport (a server definition's
 * `actingFor`), each through a launcher wired to the sandbox. Skipped, with
 * the reason, where bubblewrap cannot run (the escape suite fails under CI then).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildInput } from '../plugins/hooks/protocol.js';
import { hookPrincipal } from '../plugins/hooks/principal.js';
import { DEFAULT_ALLOWED_COMMANDS, createRunner } from '../plugins/hooks/runner/index.js';
import type { HookDefinition, HookRunner } from '../plugins/hooks/types.js';
import { STDIO_DEFAULTS, createStdioTransportFactory } from '../plugins/transport-stdio/index.js';
import { type McpServerDefinition, type PluginInfo, permissionsSchema } from '../sdk/index.js';
import { hookDefinition } from './support/hook-definition.js';
import { type SandboxRig, sandboxRig } from './support/sandbox.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STDIO_SERVER = join(ROOT, 'test/fixtures/mcp/servers/stdio-server.mjs');
const usable = spawnSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', '--proc', '/proc', '--', 'true']).status === 0 && !spawnSync('socat', ['-V']).error;
if (!usable) console.warn('sandboxed hook and MCP launches SKIPPED: bubblewrap (or socat) cannot run here');

describe.skipIf(!usable)('confined launches of hooks and stdio MCP servers', () => {
  let rig: SandboxRig;
  let runner: HookRunner;
  let secret: string;
  /** A downloaded plugin declaring a hook, as the hooks plugin sees it. */
  let plugin: PluginInfo;

  beforeAll(() => {
    rig = sandboxRig();
    secret = join(rig.root, 'outside', 'secret.txt');
    mkdirSync(join(rig.root, 'outside'));
    writeFileSync(secret, 'TOP SECRET');
    writeFileSync(join(rig.workspace, 'notes.txt'), 'workspace notes');
    plugin = {
      name: 'greeter',
      version: '1.0.0',
      source: 'user',
      dir: rig.pluginDir,
      manifest: { permissions: permissionsSchema.parse({ filesystem: { read: ['${workspace}'] } }) },
    } as unknown as PluginInfo;
    rig.grant('greeter', plugin.manifest.permissions);
    runner = createRunner({
      allowedCommands: DEFAULT_ALLOWED_COMMANDS,
      maxOutputBytes: 1024 * 1024,
      env: [],
      workspace: rig.workspace,
      launcher: rig.launcher,
      // As the hooks plugin does; the plugin was installed by the marketplace (a downloaded hook).
      principalOf: (hook) => hookPrincipal(hook, plugin, { home: rig.home, workspace: rig.workspace }),
    });
  });
  afterAll(async () => {
    await runner?.close();
    await rig?.close();
    rmSync(rig.root, { recursive: true, force: true });
  });

  /** A hook that answers with what it could read: the workspace file and the secret. */
  function readingHook(name: string, persistent: boolean): HookDefinition {
    const file = join(rig.pluginDir, `${name}.js`);
    const read = `const fs = require('fs'); const tryRead = (p) => { try { return fs.readFileSync(p, 'utf8') } catch (e) { return e.code } };
      const answer = () => JSON.stringify({ allow: true, message: tryRead(${JSON.stringify(join(rig.workspace, 'notes.txt'))}) + ' / ' + tryRead(${JSON.stringify(secret)}) });`;
    writeFileSync(
      file,
      persistent
        ? `${read}\nrequire('readline').createInterface({ input: process.stdin }).on('line', () => process.stdout.write(answer() + '\\n'));`
        : `${read}\nlet input = ''; process.stdin.on('data', (d) => (input += d)).on('end', () => process.stdout.write(answer()));`,
    );
    return hookDefinition({ id: `greeter/${name}`, name, plugin: 'greeter', source: 'downloaded', cwd: rig.workspace, action: { type: 'command', command: 'node', args: [file] }, persistent: persistent ? { idleMs: 60_000 } : false });
  }

  test('a spawned hook of a downloaded plugin runs confined: its declared read works, the rest is not there', async () => {
    const hook = readingHook('spawned', false);
    const result = await runner.run(hook, buildInput(hook, 'before_tool', { tool: 'x' }, 's'));
    expect(result).toMatchObject({ ok: true });
    expect(JSON.stringify(result)).toContain('workspace notes / ENOENT');
    expect(JSON.stringify(result)).not.toContain('TOP SECRET');
  });

  test('a persistent hook is confined once and answers every request', async () => {
    const hook = readingHook('persistent', true);
    for (let i = 0; i < 3; i++) {
      const result = await runner.run(hook, buildInput(hook, 'before_tool', { tool: 'x' }, 's'));
      expect(JSON.stringify(result)).toContain('workspace notes / ENOENT');
    }
    expect(rig.launcher.trace().filter((e) => e.purpose?.includes('persistent'))).toHaveLength(1);
  });

  test('a confined peer hook still gets the variables plinth sets for it: CLAUDE_PROJECT_DIR, CLAUDE_PLUGIN_ROOT, GEMINI_PROJECT_DIR', async () => {
    // Claude Code and Gemini CLI scripts read them ("$CLAUDE_PROJECT_DIR"/.claude/…): plinth sets them, like PLINTH_HOOK_*, so no grant is needed.
    const file = join(rig.pluginDir, 'peer-env.js');
    writeFileSync(file, `process.stdin.resume(); process.stdin.on('end', () => { const e = process.env; process.stderr.write('seen ' + JSON.stringify([e.CLAUDE_PROJECT_DIR ?? null, e.CLAUDE_PLUGIN_ROOT ?? null, e.GEMINI_PROJECT_DIR ?? null, e.PLINTH_HOOK_ID ?? null])); process.exit(2); });`);
    const peer = (protocol: 'claude' | 'gemini') =>
      hookDefinition({ id: `greeter/peer-${protocol}`, name: `peer-${protocol}`, plugin: 'greeter', source: 'downloaded', protocol, pluginRoot: rig.pluginDir, cwd: rig.workspace, action: { type: 'command', command: 'node', args: [file] }, onError: 'allow' });
    const claude = peer('claude');
    const seenClaude = JSON.stringify(await runner.run(claude, buildInput(claude, 'before_tool', { tool: 'x' }, 's')));
    expect(seenClaude).toContain(`seen ${JSON.stringify([rig.workspace, rig.pluginDir, null, 'greeter/peer-claude'])}`.replace(/"/g, '\\"'));
    const gemini = peer('gemini');
    const seenGemini = JSON.stringify(await runner.run(gemini, buildInput(gemini, 'before_tool', { tool: 'x' }, 's')));
    expect(seenGemini).toContain(`seen ${JSON.stringify([rig.workspace, null, rig.workspace, 'greeter/peer-gemini'])}`.replace(/"/g, '\\"'));
  });

  test('a stdio MCP server acting for a workspace settings entry runs confined with the entry\'s permissions', async () => {
    const stdio = createStdioTransportFactory(STDIO_DEFAULTS, { launcher: () => rig.launcher });
    const declared = permissionsSchema.parse({ filesystem: { read: [join(ROOT, 'node_modules'), join(ROOT, 'test/fixtures'), join(ROOT, 'package.json')] }, env: ['FIXTURE_TOKEN'] });
    rig.grant('settings:workspace', declared);
    const server: McpServerDefinition = {
      name: 'files',
      transport: 'stdio',
      command: process.execPath,
      args: [STDIO_SERVER],
      env: { FIXTURE_TOKEN: 'declared-value', OTHER_TOKEN: 'not-declared', PLINTH_SMUGGLED: 'a host secret through ${env:…}' },
      cwd: rig.workspace,
      headers: {},
      connectTimeoutMs: 10_000,
      enabled: true,
      source: 'workspace',
      origin: 'test',
      secrets: [],
      actingFor: {
        id: 'settings:workspace',
        source: 'workspace',
        dir: rig.workspace,
        declared,
        label: 'MCP server "files" from workspace settings',
      },
    };
    const connection = await stdio.create(server, { log: { debug() {}, info() {}, warn() {}, error() {} }, redact: (t) => t });
    const client = new Client({ name: 'sandbox-test', version: '1.0.0' });
    await client.connect(connection.transport);
    try {
      const env = async (name: string) => JSON.parse(((await client.callTool({ name: 'get_env', arguments: { name } })) as CallToolResult).content.map((c) => ('text' in c ? c.text : '')).join('')) as unknown;
      expect(await env('FIXTURE_TOKEN')).toBe('declared-value');
      expect(await env('OTHER_TOKEN')).toBeNull();
      // A definition's variable is a definition's variable, whatever its name: PLINTH_* is no way past permissions.env.
      expect(await env('PLINTH_SMUGGLED')).toBeNull();
      expect(String(await env('HOME'))).toContain(join(rig.home, 'sandbox', 'homes'));
      expect(rig.launcher.trace().at(-1)).toMatchObject({ state: 'running', purpose: 'MCP server "files"' });
    } finally {
      await client.close();
    }
  });

  test('a stdio MCP server whose launch is refused fails to connect with the sandbox\'s code', async () => {
    const refusing = sandboxRig({ bwrap: '/nonexistent/bwrap' });
    try {
      const stdio = createStdioTransportFactory(STDIO_DEFAULTS, { launcher: () => refusing.launcher });
      const connection = await stdio.create(
        { name: 'files', transport: 'stdio', command: process.execPath, args: [STDIO_SERVER], env: {}, cwd: refusing.workspace, headers: {}, connectTimeoutMs: 10_000, enabled: true, source: 'workspace', origin: 'test', secrets: [], actingFor: refusing.principal('settings:workspace') },
        { log: { debug() {}, info() {}, warn() {}, error() {} }, redact: (t) => t },
      );
      const error = await connection.transport.start().then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
      expect(error?.code).toBe('PLN_E_PERM_NO_SANDBOX');
    } finally {
      await refusing.close();
      rmSync(refusing.root, { recursive: true, force: true });
    }
  });
});
