/**
 * A plugin's children see exactly their declared settings: a plugin in the
 * user's plugins folder declares three settings (a sensitive one and a plain
 * one that name an `envVar`, and one that names none), a hook and two stdio
 * MCP servers (real processes, the server built with the SDK:
 * test/fixtures/plugin-settings-env/). The host's environment holds a secret
 * nobody declared. The hook and the server get the declared variables over
 * the launcher's allowlist, nothing else of the host's; the sensitive value
 * never shows in the logs, statuses, errors or traces. Replaced live with new
 * declarations, the plugin's next hook run and server start get the new ones.
 *
 * Children report digests of their values, never the values, so that nothing
 * here prints a secret even when an assertion fails.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManifest } from 'plinth/sdk';
import { Kernel } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import { serverTrustSubject } from '../plugins/mcp/trust-subject.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/plugin-settings-env/', import.meta.url));

const TOKEN = 'envy-token-5d1e9a7c3b2f4e60';
const REGION = 'eu-test-1';
const NOTE = 'a-note-for-the-plugin-only';
const HOST_SECRET = 'host-secret-8b3c1d2e9f7a6054';

interface Seen {
  readonly names: readonly string[];
  readonly digests: Readonly<Record<string, string>>;
}

const digest = (value: string): string => createHash('sha256').update(value).digest('hex');

/** What the hook named `name` wrote it was started with. */
const seenBy = async (name: string): Promise<Seen> => JSON.parse(await readFile(join(workspace, `seen-by-${name}.json`), 'utf8')) as Seen;

/** The plugin's manifest: three settings, a hook on before_tool, a server that serves and one that fails at start. */
const manifest = {
  name: 'envy',
  version: '1.0.0',
  kernel: '^1.0.0',
  settings: [
    { name: 'token', type: 'string', sensitive: true, envVar: 'ENVY_TOKEN' },
    { name: 'region', type: 'string', envVar: 'ENVY_REGION' },
    { name: 'note', type: 'string' },
  ],
  hooks: { before_tool: [{ name: 'probe', command: 'node', args: [join(FIXTURES, 'hook.mjs')] }] },
  mcpServers: {
    envy: { command: process.execPath, args: [join(FIXTURES, 'server.mjs')] },
    'envy-broken': { command: process.execPath, args: [join(FIXTURES, 'server.mjs'), '--fail'] },
  },
};

let base: string;
let home: string;
let workspace: string;
let kernel: Kernel;
const logs: string[] = [];
const savedCI = process.env.CI;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'plinth-settings-env-'));
  home = join(base, 'home');
  workspace = join(base, 'project');
  await mkdir(join(home, 'plugins', 'envy'), { recursive: true });
  await mkdir(workspace, { recursive: true });
  await writeFile(join(home, 'plugins', 'envy', 'manifest.json'), JSON.stringify(manifest, null, 2));
  // The token and the note are the user's settings; the region comes from the kernel's environment.
  // A hook of the user's own, from the settings file, runs the same script.
  const userHook = { name: 'user-probe', command: 'node', args: [join(FIXTURES, 'hook.mjs')] };
  await writeFile(join(home, 'settings.json'), JSON.stringify({ hooks: { before_tool: [userHook] }, plugins: { envy: { settings: { token: TOKEN, note: NOTE } } } }));

  // The host's own environment, which the launcher picks its allowlist from, holds a secret nobody declared.
  process.env.PLINTH_TEST_HOST_SECRET = HOST_SECRET;
  // Trust would ask on a terminal; here, approvals are given below.
  process.env.CI = '1';
  kernel = new Kernel({
    home,
    workspace,
    builtin: true,
    env: { ...process.env, ENVY_REGION: REGION, ENVY_ZONE: REGION, PLINTH_TEST_HOST_SECRET: HOST_SECRET },
    logLevel: 'debug',
    logSink: (line) => logs.push(line),
  });
  await kernel.boot();
  expect(kernel.status().find((p) => p.name === 'envy')?.state).toBe('active');

  // The plugin's hook and servers are `extension` ones: approved as they are, the way `plinth … trust` does.
  const trust = await kernel.get('trust');
  const { hooks } = await (await kernel.get('hooks')).definitions();
  await trust.approve(trustSubject(hooks.find((h) => h.id === 'envy/probe')!));
  const mcp = await kernel.get('mcp');
  for (const name of ['envy', 'envy-broken']) {
    const definition = mcp.definition(name)!;
    await trust.approve(serverTrustSubject({ definition, trustId: name, written: { env: {}, headers: {}, cwdIsDefault: false } }, (t) => t));
  }
}, 60_000);

afterAll(async () => {
  await kernel?.shutdown();
  delete process.env.PLINTH_TEST_HOST_SECRET;
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await rm(base, { recursive: true, force: true });
});

/** What a child of the plugin must have seen: the declared variables, nothing undeclared. */
function expectDeclaredOnly(seen: Seen): void {
  expect(seen.digests.ENVY_TOKEN).toBe(digest(TOKEN));
  expect(seen.digests.ENVY_REGION).toBe(digest(REGION));
  expect(seen.names).not.toContain('PLINTH_TEST_HOST_SECRET');
  const values = Object.values(seen.digests);
  expect(values).not.toContain(digest(HOST_SECRET));
  // The setting without an envVar reaches no child, under any name.
  expect(values).not.toContain(digest(NOTE));
}

describe('a plugin\'s hook', () => {
  it('runs with its plugin\'s declared settings as variables, and none of the host\'s secrets; a user\'s hook gets none of them', async () => {
    const decision = await kernel.emit('before_tool', { tool: 'http_get' });
    expect(decision.allow).toBe(true);
    const seen = await seenBy('probe');
    expectDeclaredOnly(seen);
    expect(seen.names).toContain('PLINTH_HOOK_ID'); // plinth's own values too

    // A hook from a settings file belongs to no plugin: no plugin's settings.
    const user = await seenBy('user-probe');
    expect(user.names).toContain('PLINTH_HOOK_ID');
    for (const name of ['ENVY_TOKEN', 'ENVY_REGION', 'PLINTH_TEST_HOST_SECRET']) expect(user.names).not.toContain(name);

    // It printed the token; what plinth shows of the run has it masked.
    expect(decision.messages).toContain('called the API with token [redacted]');
    expect(decision.messages).toContain('called the API with token (no token)');
    expect(JSON.stringify(decision)).not.toContain(TOKEN);
    const last = (await kernel.get('hooks')).lastRun('before_tool');
    expect(last?.outcomes.find((o) => o.hook.id === 'envy/probe')?.stderrTail).toContain('calling the API with token [redacted]');
    expect(JSON.stringify(last)).not.toContain(TOKEN);
  });
});

describe('a plugin\'s stdio MCP server', () => {
  it('starts with its plugin\'s declared settings as variables, and none of the host\'s secrets', async () => {
    const mcp = await kernel.get('mcp');
    const status = await mcp.start('envy');
    expect(status.state).toBe('connected');
    const result = await mcp.callTool('envy__env', {});
    expect(result.ok).toBe(true);
    expectDeclaredOnly(JSON.parse(result.text) as Seen);
    // The definition shown to people is the one written: settings are added when the process starts.
    expect(mcp.definition('envy')?.env).toEqual({});
  });

  it('that leaks the token and fails: the status, the error and the stderr tail show it masked', async () => {
    const mcp = await kernel.get('mcp');
    const status = await mcp.start('envy-broken', { retries: 0 });
    expect(status.state).toBe('error');
    expect(status.stderrTail).toContain('token is [redacted]');
    expect(JSON.stringify(mcp.servers())).not.toContain(TOKEN);
    expect(JSON.stringify(status)).not.toContain(TOKEN);
  });
});

describe('a plugin replaced while running', () => {
  it('gives its next hook run and server start the new declarations\' values: the settings are read at each start', async () => {
    // The next edit renames the region's variable and adds a setting with a default. (The version stays:
    // a new one is a new `hookVersion`, which asks for the hook's approval again, as any change to its definition does.)
    const next = {
      ...manifest,
      settings: [
        { name: 'token', type: 'string', sensitive: true, envVar: 'ENVY_TOKEN' },
        { name: 'region', type: 'string', envVar: 'ENVY_ZONE' },
        { name: 'level', type: 'string', envVar: 'ENVY_LEVEL', default: 'two' },
        { name: 'note', type: 'string' },
      ],
    };
    await writeFile(join(home, 'plugins', 'envy', 'manifest.json'), JSON.stringify(next, null, 2));
    // A user plugin is pinned at first use: its changed folder is approved, as `plinth trust approve` would.
    const trust = await kernel.get('trust');
    const parsed = parseManifest(next);
    if (!parsed.ok) throw new Error('the new manifest is invalid');
    const { dir } = kernel.status().find((p) => p.name === 'envy')!;
    await trust.approve(await trust.pluginSubject({ name: 'envy', version: next.version, dir, manifest: parsed.manifest }, 'user'));
    const report = await kernel.plugins.replace('envy');
    expect(report.failed).toEqual([]);
    expect(report.replaced).toContain('envy');

    await kernel.emit('before_tool', { tool: 'http_get' });
    const hook = await seenBy('probe');
    const mcp = await kernel.get('mcp');
    expect((await mcp.restart('envy')).state).toBe('connected');
    const server = JSON.parse((await mcp.callTool('envy__env', {})).text) as Seen;
    for (const seen of [hook, server]) {
      expect(seen.digests.ENVY_TOKEN).toBe(digest(TOKEN));
      expect(seen.digests.ENVY_ZONE).toBe(digest(REGION));
      expect(seen.digests.ENVY_LEVEL).toBe(digest('two'));
      expect(seen.names).not.toContain('ENVY_REGION');
      expect(seen.names).not.toContain('PLINTH_TEST_HOST_SECRET');
    }
  });
});

describe('everything plinth shows', () => {
  it('never holds the sensitive value: logs, plugin statuses, inspection, the launcher\'s trace', async () => {
    // After the runs above (the describe blocks run in order).
    // The servers' stderr is logged (at debug): with the token masked.
    expect(logs.join('\n')).toContain('envy stderr: settings-env: token is [redacted]');
    expect(logs.join('\n')).not.toContain(TOKEN);
    expect(JSON.stringify(kernel.status())).not.toContain(TOKEN);
    expect(JSON.stringify(kernel.inspect())).not.toContain(TOKEN);
    const trace = (await kernel.get('launcher')).trace();
    expect(trace.map((entry) => entry.purpose)).toEqual(expect.arrayContaining([expect.stringContaining('probe'), expect.stringContaining('envy')]));
    expect(JSON.stringify(trace)).not.toContain(TOKEN);
  });
});
