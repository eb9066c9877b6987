/**
 * `plinth perms list|grant|revoke|status|audit`, run as the built command in
 * a home and workspace of their own: grants stored and withdrawn item by item,
 * `--json` everywhere, the no-sandbox path (bubblewrap made unavailable with
 * `PLINTH_BWRAP` naming a missing file), the audit log read back filtered, and
 * the line `plinth up` prints when no OS sandbox is available.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { appendAudit } from '../plugins/sandbox/audit.js';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { writePlugin } from './support/plugin-folder.js';

beforeAll(() => ensureBuilt(), 120_000);
const boxes: Sandbox[] = [];
afterEach(async () => {
  for (const box of boxes.splice(0)) await box.remove();
});

const NO_BWRAP = { PLINTH_BWRAP: '/nonexistent/bwrap' };
const usable = spawnSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', '--proc', '/proc', '--', 'true']).status === 0 && !spawnSync('socat', ['-V']).error;

/** An MCP server in one file, without the SDK (a confined workspace server reads only the workspace): its tool "env" says whether RAW_TOKEN is set (its length, not the value: plinth masks it). */
const RAW_SERVER = `import { createInterface } from 'node:readline';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1.0.0' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'env', inputSchema: { type: 'object' } }] } });
  else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'RAW_TOKEN=' + (process.env.RAW_TOKEN === undefined ? '(unset)' : 'set, ' + process.env.RAW_TOKEN.length + ' characters') }] } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, result: {} });
});
`;

interface Listed {
  name: string;
  declared: string[];
  granted: string[];
  withheld: string[];
  waiting: string[];
  unconfined: boolean;
}

/** A home with one plugin of the user's, "greeter", and settings that confine the user's plugins. */
async function home(): Promise<Sandbox> {
  const box = await sandbox('plinth-perms-');
  boxes.push(box);
  await box.settings({ sandbox: { default: 'confined' }, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
  await writePlugin(join(box.home, 'plugins'), { name: 'greeter', permissions: { network: { allow: ['api.example.com'] }, env: ['GREETER_TOKEN'] } });
  return box;
}

async function listed(box: Sandbox, name = 'greeter'): Promise<Listed> {
  const result = await run(box, ['perms', 'list', name, '--json']);
  expectExit(result, 0);
  return json<{ plugins: Listed[] }>(result).plugins[0]!;
}

describe('plinth perms', () => {
  test('list, grant and revoke: a whole grant, one item, a withheld item; --json and readable output', async () => {
    const box = await home();
    expect(await listed(box)).toMatchObject({ declared: ['network api.example.com', 'env GREETER_TOKEN'], granted: [], waiting: ['network api.example.com', 'env GREETER_TOKEN'] });
    const readable = await run(box, ['perms', 'list', 'greeter']);
    expectExit(readable, 0);
    expect(readable.stdout).toMatch(/greeter\s+1\.0\.0\s+user\s+2\s+0\s+asks for 2 more/);
    expect(readable.stdout).toContain('network api.example.com  (not granted)');

    const one = await run(box, ['perms', 'grant', 'greeter', 'network api.example.com']);
    expectExit(one, 0);
    expect(one.stdout).toContain('Granted greeter: network api.example.com.');
    expect(await listed(box)).toMatchObject({ granted: ['network api.example.com'], waiting: ['env GREETER_TOKEN'] });

    const undeclared = await run(box, ['perms', 'grant', 'greeter', 'env OTHER', '--json']);
    expectExit(undeclared, 1);
    expect(json(undeclared).error).toMatchObject({ code: 'PLN_E_PERM_UNKNOWN' });
    const malformed = await run(box, ['perms', 'grant', 'greeter', 'network https://x.test/', '--json']);
    expect(json(malformed).error).toMatchObject({ code: 'PLN_E_PERM_ITEM_INVALID' });
    const unknown = await run(box, ['perms', 'grant', 'nobody', '--json']);
    expect(json(unknown).error).toMatchObject({ code: 'PLN_E_PERM_UNKNOWN' });

    expectExit(await run(box, ['perms', 'grant', 'greeter']), 0);
    expect(await listed(box)).toMatchObject({ granted: ['network api.example.com', 'env GREETER_TOKEN'], waiting: [] });

    // One item revoked is withheld: the plugin runs without it and is not asked for it again.
    const withheld = await run(box, ['perms', 'revoke', 'greeter', 'env GREETER_TOKEN']);
    expect(withheld.stdout).toContain('Revoked from greeter: env GREETER_TOKEN; it runs without it.');
    expect(await listed(box)).toMatchObject({ granted: ['network api.example.com'], withheld: ['env GREETER_TOKEN'], waiting: [] });

    // The workspace settings' hooks and servers have no manifest: their grant names the items.
    const settingsGrant = await run(box, ['perms', 'grant', 'settings:workspace', 'filesystem.write ${workspace}/out', '--json']);
    expectExit(settingsGrant, 0);
    expect(json(settingsGrant).grant.permissions.filesystem.write).toEqual(['${workspace}/out']);
    expect(json(await run(box, ['perms', 'grant', 'settings:workspace', '--json'])).error).toMatchObject({ code: 'PLN_E_PERM_UNKNOWN' });
    expect(await listed(box, 'settings:workspace')).toMatchObject({ granted: ['filesystem.write ${workspace}/out'] });

    const all = await run(box, ['perms', 'revoke', 'greeter', '--json']);
    expect(json(all)).toMatchObject({ plugin: 'greeter', revoked: true, grant: null });
    expect(await listed(box)).toMatchObject({ granted: [], withheld: [], waiting: ['network api.example.com', 'env GREETER_TOKEN'] });
  }, 120_000);

  test('status without bubblewrap says so plainly and why; a plugin runs only once allowed unconfined, exactly that one', async () => {
    const box = await home();
    await writePlugin(join(box.home, 'plugins'), { name: 'other', permissions: { env: ['OTHER'] } });
    const before = await run(box, ['perms', 'status', '--json'], NO_BWRAP);
    expectExit(before, 0);
    const status = json<{ sandbox: { available: boolean; reason: string }; plugins: Array<{ plugin: string; runs: string; code?: string }> }>(before);
    expect(status.sandbox.available).toBe(false);
    expect(status.sandbox.reason).toContain('/nonexistent/bwrap');
    expect(status.plugins.find((p) => p.plugin === 'greeter')).toMatchObject({ runs: 'refused', code: 'PLN_E_PERM_NO_SANDBOX' });
    // The settings files' hooks and servers are listed too, after the plugins.
    expect(status.plugins.slice(-2)).toEqual([expect.objectContaining({ plugin: 'settings:user', source: 'user' }), expect.objectContaining({ plugin: 'settings:workspace', source: 'workspace', runs: 'refused' })]);

    expectExit(await run(box, ['perms', 'grant', 'greeter', '--unconfined']), 0);
    const after = json<typeof status>(await run(box, ['perms', 'status', '--json'], NO_BWRAP));
    expect(after.plugins.find((p) => p.plugin === 'greeter')).toMatchObject({ runs: 'open' });
    expect(after.plugins.find((p) => p.plugin === 'other')).toMatchObject({ runs: 'refused', code: 'PLN_E_PERM_NO_SANDBOX' });

    const readable = await run(box, ['perms', 'status'], NO_BWRAP);
    expect(readable.stdout.split('\n')[0]).toMatch(/^No OS sandbox is available here: .*\/nonexistent\/bwrap/);
    expect(readable.stdout).toMatch(/greeter\s+user\s+open\s+you allowed greeter to run unconfined/);

    expectExit(await run(box, ['perms', 'revoke', 'greeter', '--unconfined']), 0);
    expect(await listed(box)).toMatchObject({ unconfined: false });
  }, 120_000);

  test('the settings\' principals: status reports settings:workspace as it does a plugin; a misspelt one is refused, nothing stored', async () => {
    const box = await home();
    const status = await run(box, ['perms', 'status', 'settings:workspace', '--json']);
    expectExit(status, 0);
    expect(json<{ plugins: unknown[] }>(status).plugins).toEqual([expect.objectContaining({ plugin: 'settings:workspace', source: 'workspace', runs: 'confined' })]);

    // Where no OS sandbox is available it is refused until allowed unconfined, the fix its refusals name.
    const refused = json<{ plugins: Array<{ runs: string; code?: string }> }>(await run(box, ['perms', 'status', 'settings:workspace', '--json'], NO_BWRAP));
    expect(refused.plugins[0]).toMatchObject({ runs: 'refused', code: 'PLN_E_PERM_NO_SANDBOX' });
    expectExit(await run(box, ['perms', 'grant', 'settings:workspace', '--unconfined']), 0);
    const readable = await run(box, ['perms', 'status', 'settings:workspace'], NO_BWRAP);
    expectExit(readable, 0);
    expect(readable.stdout).toMatch(/settings:workspace\s+workspace\s+open\s+you allowed settings:workspace to run unconfined/);

    const typo = await run(box, ['perms', 'grant', 'settings:worksapce', 'network api.example.com', '--json']);
    expectExit(typo, 1);
    expect(json(typo).error).toMatchObject({ code: 'PLN_E_PERM_UNKNOWN', hint: 'did you mean settings:workspace?' });
    expect(json<{ plugins: Listed[] }>(await run(box, ['perms', 'list', '--json'])).plugins.map((p) => p.name)).not.toContain('settings:worksapce');
    expect(json(await run(box, ['perms', 'list', 'settings:usr', '--json'])).error).toMatchObject({ code: 'PLN_E_PERM_UNKNOWN', hint: 'did you mean settings:user?' });
  }, 120_000);

  test.skipIf(!usable)('a workspace server\'s env that its permissions do not declare: left out, said once on stderr without its value, with the fix; declared and granted, it arrives', async () => {
    const box = await home();
    await writeFile(join(box.workspace, 'raw.mjs'), RAW_SERVER);
    const entry = { command: 'node', args: ['raw.mjs'], env: { RAW_TOKEN: 'tok-9f8e7d6c5b4a' } };
    await mkdir(join(box.workspace, '.plinth'), { recursive: true });
    const settings = (value: Record<string, unknown>) => writeFile(join(box.workspace, '.plinth', 'settings.json'), JSON.stringify({ mcpServers: { raw: value } }));
    await settings(entry);
    expectExit(await run(box, ['mcp', 'status', 'raw']), 1); // refused: recorded for approval
    expectExit(await run(box, ['trust', 'approve', 'mcp-server', 'raw']), 0);

    const without = await run(box, ['call', 'raw__env']);
    expectExit(without, 0);
    expect(without.stdout.trim()).toBe('RAW_TOKEN=(unset)');
    const warnings = without.stderr.split('\n').filter((line) => line.includes('PLN_E_SANDBOX_ENV_LEFT_OUT'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('MCP server "raw" from workspace settings runs confined without the environment variable RAW_TOKEN');
    // A value written in the definition is granted as such: a grant of the host's RAW_TOKEN would be another one.
    expect(warnings[0]).toContain("plinth perms grant settings:workspace 'env RAW_TOKEN=(literal)'");
    expect(without.stderr).not.toContain('tok-9f8e7d6c5b4a');

    await settings({ ...entry, permissions: { env: ['RAW_TOKEN'] } });
    await run(box, ['mcp', 'status', 'raw']);
    expectExit(await run(box, ['trust', 'approve', 'mcp-server', 'raw']), 0);
    expectExit(await run(box, ['perms', 'grant', 'settings:workspace', 'env RAW_TOKEN=(literal)']), 0);
    const granted = await run(box, ['call', 'raw__env']);
    expectExit(granted, 0);
    expect(granted.stdout.trim()).toBe('RAW_TOKEN=set, 16 characters');
    expect(granted.stderr).not.toContain('PLN_E_SANDBOX_ENV_LEFT_OUT');
  }, 120_000);

  test('audit reads the denials back, filtered by plugin and permission', async () => {
    const box = await home();
    await appendAudit(box.home, { plugin: 'greeter', permission: 'network', target: 'evil.test:443', reason: 'not in network.allow', time: '2026-12-02T03:00:00.000Z' });
    await appendAudit(box.home, { plugin: 'greeter', permission: 'env', target: 'AWS_SECRET', reason: 'not granted' });
    await appendAudit(box.home, { plugin: 'other', permission: 'network', target: '10.0.0.1:22', reason: 'an IP address that is not declared' });
    const all = json<{ entries: Array<{ plugin: string; permission: string; target: string }> }>(await run(box, ['perms', 'audit', '--json']));
    expect(all.entries.map((e) => e.target)).toEqual(['evil.test:443', 'AWS_SECRET', '10.0.0.1:22']);
    const filtered = json<typeof all>(await run(box, ['perms', 'audit', 'greeter', 'network', '--json']));
    expect(filtered.entries).toEqual([expect.objectContaining({ plugin: 'greeter', permission: 'network', target: 'evil.test:443', time: '2026-12-02T03:00:00.000Z' })]);
    const readable = await run(box, ['perms', 'audit', 'greeter']);
    expect(readable.stdout).toMatch(/2026-12-02 03:00:00\s+greeter\s+network\s+evil\.test:443\s+not in network\.allow/);
    expect(readable.stdout).not.toContain('10.0.0.1');
  }, 120_000);

  test('plinth up prints one plain line when no OS sandbox is available', async () => {
    const box = await home();
    const up = await run(box, ['up', '--once'], NO_BWRAP);
    expect(up.stdout).toMatch(/^No OS sandbox is available here: .*\/nonexistent\/bwrap.*plinth perms grant <plugin> --unconfined/m);
  }, 120_000);
});
