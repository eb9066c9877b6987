/**
 * A workspace MCP server confined by bubblewrap whose script, or whose
 * node_modules, lie outside what its sandbox exposes: the child dies with
 * "Cannot find module", and plinth's error says why — the path the sandbox
 * hides and the permission to declare and grant. Following that hint starts
 * the server. Real bubblewrap, the built `plinth`, real child processes.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { sandboxRig } from './support/sandbox.js';
import { explainHidden } from '../plugins/sandbox/explain.js';

beforeAll(() => ensureBuilt(), 120_000);
const boxes: Sandbox[] = [];
afterEach(async () => {
  for (const box of boxes.splice(0)) await box.remove();
});

const usable = spawnSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', '--proc', '/proc', '--', 'true']).status === 0 && !spawnSync('socat', ['-V']).error;

/** An MCP server in one file, without the SDK; `prelude` runs first (a require of a package, say). */
const server = (prelude = '') => `${prelude}
const { createInterface } = require('node:readline');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'w', version: '1.0.0' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'hi', inputSchema: { type: 'object' } }] } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, result: {} });
});
`;

async function home(): Promise<Sandbox> {
  const box = await sandbox('plinth-hidden-');
  boxes.push(box);
  await box.settings({ plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, mcp: { settings: { retries: 0 } } } });
  await mkdir(join(box.workspace, '.plinth'), { recursive: true });
  return box;
}

const workspaceServers = (box: Sandbox, servers: Record<string, unknown>) => writeFile(join(box.workspace, '.plinth', 'settings.json'), JSON.stringify({ mcpServers: servers }));

/** Approves the workspace server as it is now (it must have been refused once first). */
async function approve(box: Sandbox, name: string): Promise<void> {
  await run(box, ['mcp', 'status', name]);
  expectExit(await run(box, ['trust', 'approve', 'mcp-server', name]), 0);
}

async function errorOf(box: Sandbox, name: string): Promise<{ code: string; message: string }> {
  const result = await run(box, ['mcp', 'status', name, '--json']);
  expectExit(result, 1);
  return json(result).servers[0].error;
}

describe.skipIf(!usable)('a confined server that fails on a path its sandbox hides', () => {
  test('its script outside the workspace: the error names the folder and the read permission to declare and grant; done so, it starts', async () => {
    const box = await home();
    const outside = join(box.base, 'elsewhere');
    await mkdir(outside);
    await writeFile(join(outside, 'server.cjs'), server());
    const entry = { command: 'node', args: [join(outside, 'server.cjs')] };
    await workspaceServers(box, { far: entry });
    await approve(box, 'far');
    const error = await errorOf(box, 'far');
    expect(error.code).toBe('PLN_E_MCP_CONNECT_FAILED');
    expect(error.message).toContain(`MCP server "far" from workspace settings runs in the sandbox, which does not expose ${outside}`);
    expect(error.message).toContain(`add "${outside}" to "permissions": { "filesystem": { "read": […] } } of its definition`);
    expect(error.message).toContain(`plinth perms grant settings:workspace 'filesystem.read ${outside}'`);

    await workspaceServers(box, { far: { ...entry, permissions: { filesystem: { read: [outside] } } } });
    await approve(box, 'far');
    expectExit(await run(box, ['perms', 'grant', 'settings:workspace', `filesystem.read ${outside}`]), 0);
    const tools = await run(box, ['mcp', 'tools', 'far']);
    expectExit(tools, 0);
    expect(tools.stdout).toContain('far__hi');
  }, 180_000);

  test('its node_modules above the workspace: the error names that node_modules folder', async () => {
    const box = await home();
    const modules = join(box.base, 'node_modules');
    await mkdir(join(modules, 'left-pad'), { recursive: true });
    await writeFile(join(modules, 'left-pad', 'package.json'), JSON.stringify({ name: 'left-pad', main: 'index.js' }));
    await writeFile(join(modules, 'left-pad', 'index.js'), 'module.exports = (s) => s;\n');
    await writeFile(join(box.workspace, 'server.cjs'), server("require('left-pad');"));
    await workspaceServers(box, { dep: { command: 'node', args: ['server.cjs'] } });
    await approve(box, 'dep');
    const error = await errorOf(box, 'dep');
    expect(error.message).toContain(`which does not expose ${modules}`);
    expect(error.message).toContain(`plinth perms grant settings:workspace 'filesystem.read ${modules}'`);
  }, 180_000);

  test('a script that is missing on the host too: no sandbox hint (the sandbox is not the cause)', async () => {
    const box = await home();
    await workspaceServers(box, { gone: { command: 'node', args: [join(box.base, 'no-such-dir', 'server.cjs')] } });
    await approve(box, 'gone');
    const error = await errorOf(box, 'gone');
    expect(error.code).toBe('PLN_E_MCP_CONNECT_FAILED');
    expect(error.message).not.toContain('runs in the sandbox');
  }, 180_000);
});

describe.skipIf(!usable)('the launcher\'s run() of a confined child that fails on a hidden path', () => {
  test('carries the sandbox\'s hint (a plugin: declare it in its manifest, then plinth perms grant <plugin>); an unconfined run has none', async () => {
    const rig = sandboxRig();
    try {
      const outside = join(rig.root, 'hidden-scripts');
      await mkdir(outside);
      await writeFile(join(outside, 'hook.cjs'), 'process.exit(0);\n');
      const request = { owner: 'hooks', program: 'node', args: [join(outside, 'hook.cjs')], cwd: rig.workspace, timeoutMs: 20_000 };
      const confined = await rig.launcher.run({ ...request, actingFor: rig.principal('greeter') });
      expect(confined.exitCode).toBe(1);
      expect(confined.stderr.toString()).toContain('Cannot find module');
      expect(confined.hint).toContain(`which does not expose ${outside}`);
      expect(confined.hint).toContain('then grant it: plinth perms grant greeter');
      const open = await rig.launcher.run(request);
      expect(open.exitCode).toBe(0);
      expect(open.hint).toBeUndefined();
    } finally {
      await rig.close();
    }
  }, 60_000);
});

describe('what the sandbox recognises in a child\'s stderr', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'plinth-explain-')));
  const workspace = join(root, 'project');
  const userHome = join(root, 'me');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  mkdirSync(join(userHome, 'tools'), { recursive: true });
  mkdirSync(join(root, 'node_modules', '@scope', 'pkg'), { recursive: true });
  writeFileSync(join(userHome, 'tools', 'run.py'), '');
  writeFileSync(join(workspace, 'src', 'main.mjs'), '');
  const exposure = { paths: [join(workspace, 'src'), '/usr'], cwd: join(workspace, 'src'), workspace, userHome };
  const principal = { id: 'settings:workspace', source: 'workspace' as const, declared: { filesystem: { read: [], write: [] }, network: { allow: [], deny: [] }, env: [], shell: [], mcp: [] }, label: 'MCP server "x" from workspace settings' };
  const explain = (output: string) => explainHidden(output, exposure, principal);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('Python\'s can\'t open file, a shell\'s No such file or directory, ESM\'s Cannot find package: the hidden folder, written with ${home}/${workspace}', () => {
    expect(explain(`python3: can't open file '${join(userHome, 'tools', 'run.py')}': [Errno 2] No such file or directory`)).toContain(`'filesystem.read \${home}/tools'`);
    expect(explain(`/bin/sh: 1: ${join(userHome, 'tools', 'run.py')}: not found`)).toContain('"${home}/tools"');
    const esm = explain(`Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@scope/pkg' imported from ${join(workspace, 'src', 'main.mjs')}`);
    expect(esm).toContain(`which does not expose ${join(root, 'node_modules')}`);
  });

  test('nothing for a path the sandbox shows, one missing on the host, or a builtin module', () => {
    expect(explain(`Error: ENOENT: no such file or directory, open '${join(workspace, 'src', 'main.mjs')}'`)).toBeUndefined();
    expect(explain(`Error: ENOENT: no such file or directory, open '${join(root, 'nowhere', 'file')}'`)).toBeUndefined();
    expect(explain("Error: Cannot find module 'node:nope'")).toBeUndefined();
    expect(explain('Error: something else entirely')).toBeUndefined();
  });

  test('the user\'s own settings need no grant; a plugin is pointed at its manifest and its grant', () => {
    const output = `Error: Cannot find module '${join(userHome, 'tools', 'run.py')}'`;
    expect(explainHidden(output, exposure, { ...principal, id: 'settings:user', label: 'MCP server "x" from user settings' })).not.toContain('plinth perms grant');
    const plugin = explainHidden(output, exposure, { ...principal, id: 'greeter', label: 'plugin "greeter"' });
    expect(plugin).toContain('of its manifest.json, then grant it: plinth perms grant greeter');
  });
});
