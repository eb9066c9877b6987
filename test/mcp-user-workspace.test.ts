/**
 * A user's MCP server never runs what the workspace holds (issue 24, item 1).
 * The workspace is a hostile cloned repository that plants its own programs
 * where a user entry would find them: `node_modules/.bin/<bin>` (npx prefers
 * it), a `uvx` on plinth's PATH in a project folder (as direnv adds one), and
 * `tools/server.js` (a relative path). The user folder holds the user's own,
 * real MCP server (test/fixtures/mcp/servers/where-server.mjs), which says
 * where it runs. Real CLI runs, `CI=1`, a fresh home each.
 *
 * npx is the real one, kept offline (`npm_config_offline`, a registry on a
 * closed loopback port): it finds a bin in the folder it runs in, and fails
 * with ENOTCACHED otherwise, never reaching the network. uv is not installed
 * here: `uvx` is a stand-in script that records the folder it ran in (where
 * uv would read `uv.toml`, `pyproject.toml` and `.python-version`) and runs the
 * where-server.
 */
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ROOT, type Sandbox, ensureBuilt, expectExit, run, sandbox } from './support/cli.js';

const WHERE = join(ROOT, 'test', 'fixtures', 'mcp', 'servers', 'where-server.mjs');
const TIMEOUT = 60_000;
const boxes: Sandbox[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

async function box(): Promise<Sandbox & { marker: string }> {
  const b = await sandbox('plinth-userws-');
  boxes.push(b);
  return Object.assign(b, { marker: join(b.base, 'planted-ran') });
}

/** An executable shell script. */
async function script(file: string, body: string): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
}

/** What the repository plants: a program that only leaves a mark. */
const planted = (marker: string) => `echo "planted ran in $PWD" > '${marker}'; exit 3`;

/** `plinth call <server>__where`: the server's answer. */
async function where(b: Sandbox, server: string, env: Record<string, string> = {}): Promise<{ cwd: string; argv: string[] }> {
  const result = await run(b, ['call', `${server}__where`], env);
  expectExit(result, 0);
  return JSON.parse(result.stdout) as { cwd: string; argv: string[] };
}

test('npx: the repository\'s node_modules/.bin does not run; npx runs in the user folder and finds the user\'s bin there', async () => {
  const b = await box();
  await script(join(b.workspace, 'node_modules', '.bin', 'mcp-planted'), planted(b.marker));
  await script(join(b.home, 'node_modules', '.bin', 'mcp-planted'), `exec '${process.execPath}' '${WHERE}' "$@"`);
  const offline = { npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/', npm_config_cache: join(b.base, 'npm-cache'), npm_config_update_notifier: 'false' };
  await b.settings({ mcpServers: { files: { command: 'npx', args: ['-y', 'mcp-planted', '.'], env: offline } } });

  const answer = await where(b, 'files');
  expect(existsSync(b.marker), 'the workspace\'s bin ran').toBe(false);
  expect(answer).toEqual({ cwd: b.home, argv: ['.'] });
}, TIMEOUT);

test('uvx (a stand-in): runs in the user folder, and a uvx in a workspace folder on plinth\'s PATH is not the one started', async () => {
  const b = await box();
  const tools = join(b.base, 'tools-bin');
  const ranIn = join(b.base, 'uvx-ran-in');
  await script(join(tools, 'uvx'), `echo "$PWD" > '${ranIn}'; shift; exec '${process.execPath}' '${WHERE}' "$@"`);
  // direnv-style: the project's bin folder first on plinth's PATH.
  await script(join(b.workspace, 'bin', 'uvx'), planted(b.marker));
  await b.settings({ mcpServers: { git: { command: 'uvx', args: ['mcp-server-git', '--repository', '.'] } } });

  const answer = await where(b, 'git', { PATH: [join(b.workspace, 'bin'), tools, process.env.PATH ?? ''].join(delimiter) });
  expect(existsSync(b.marker), 'the workspace\'s uvx ran').toBe(false);
  expect((await readFile(ranIn, 'utf8')).trim()).toBe(b.home);
  expect(answer).toEqual({ cwd: b.home, argv: ['--repository', '.'] });
}, TIMEOUT);

test('a relative path (the shape `plinth mcp add` writes) is the user folder\'s, not the workspace\'s', async () => {
  const b = await box();
  await script(join(b.workspace, 'tools', 'server.js'), '');
  await writeFile(join(b.workspace, 'tools', 'server.js'), `require('node:fs').writeFileSync(${JSON.stringify(b.marker)}, 'planted');\n`);
  await mkdir(join(b.home, 'tools'), { recursive: true });
  await writeFile(join(b.home, 'tools', 'server.js'), `import(${JSON.stringify(WHERE)});\n`);
  await b.settings({ mcpServers: { rel: { command: 'node', args: ['tools/server.js'] } } });

  const answer = await where(b, 'rel');
  expect(existsSync(b.marker), 'the workspace\'s tools/server.js ran').toBe(false);
  expect(answer.cwd).toBe(b.home);
}, TIMEOUT);

test('${workspace} names the project as data: the server gets its absolute path and still runs from the user folder, unapproved as the user\'s own', async () => {
  const b = await box();
  await b.settings({ mcpServers: { files: { command: process.execPath, args: [WHERE, '${workspace}'] } } });
  expect(await where(b, 'files')).toEqual({ cwd: b.home, argv: [b.workspace] });
}, TIMEOUT);

test('a user entry that runs something inside the workspace is workspace content: refused until approved for this workspace', async () => {
  const b = await box();
  await writeFile(join(b.workspace, 'server.mjs'), `import(${JSON.stringify(WHERE)});\n`);
  await b.settings({
    mcpServers: {
      script: { command: process.execPath, args: ['${workspace}/server.mjs'] },
      here: { command: process.execPath, args: [WHERE], cwd: '${workspace}' },
      path: { command: 'node', args: [WHERE], env: { PATH: `${b.workspace}${delimiter}${process.env.PATH ?? ''}` } },
    },
  });
  for (const [name, why] of [['script', `argument ${join(b.workspace, 'server.mjs')}`], ['here', `cwd ${b.workspace}`], ['path', 'env PATH']] as const) {
    const got = await run(b, ['--json', 'mcp', 'get', name]);
    expectExit(got, 1);
    const body = JSON.parse(got.stdout) as { server: { source: string; origin: string }; status: { error: { code: string; message: string } } };
    expect(body.server.source, name).toBe('workspace');
    expect(body.server.origin, name).toContain(`runs workspace content: ${why}`);
    expect(body.status.error.code, name).toBe('PLN_E_MCP_UNTRUSTED');
    expect(body.status.error.message, name).toContain(`plinth trust approve mcp-server ${name}`);
  }
}, TIMEOUT);

test('what a user server\'s relative path names in the user folder is part of its pin: editing it needs approval again', async () => {
  const b = await box();
  const server = join(b.home, 'tools', 'server.js');
  await mkdir(join(b.home, 'tools'), { recursive: true });
  await writeFile(server, `import(${JSON.stringify(WHERE)});\n`);
  await b.settings({ mcpServers: { rel: { command: 'node', args: ['tools/server.js'] } } });
  expect((await where(b, 'rel')).cwd).toBe(b.home);

  await writeFile(server, `import(${JSON.stringify(WHERE)}); // edited\n`);
  const refused = await run(b, ['call', 'rel__where']);
  expectExit(refused, 1);
  expect(refused.stderr).toContain('PLN_E_MCP_UNTRUSTED');
  expect(refused.stderr).toContain('file tools/server.js');
}, TIMEOUT);

test('a workspace opened through a link: a user entry naming its real path is workspace content too', async () => {
  const b = await box();
  const link = join(b.base, 'link-to-project');
  await symlink(b.workspace, link);
  await writeFile(join(b.workspace, 'server.mjs'), `import(${JSON.stringify(WHERE)});\n`);
  await b.settings({ mcpServers: { real: { command: process.execPath, args: [join(b.workspace, 'server.mjs')] } } });
  const got = await run({ dirs: ['--home', b.home, '--workspace', link], workspace: link }, ['--json', 'mcp', 'get', 'real']);
  expectExit(got, 1);
  const body = JSON.parse(got.stdout) as { server: { source: string; origin: string } };
  expect(body.server.source).toBe('workspace');
  expect(body.server.origin).toContain(`runs workspace content: argument ${join(b.workspace, 'server.mjs')}`);
  expect(existsSync(b.marker)).toBe(false);
}, TIMEOUT);
