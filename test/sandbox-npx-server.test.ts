/**
 * A Claude Desktop config with an `npx -y` server, pasted into a workspace's
 * settings: approved, granted what plinth derives for a package runner (its
 * registry's host, npm's registry variable), it starts for real: npx (real
 * npm) fetches the package from a real registry (Verdaccio on 127.0.0.1)
 * through plinth's proxy, confined by real bubblewrap, and the server answers.
 * A refused connection names plinth's sandbox as the cause, and `mcp status`
 * shows every error's fix in its text output.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { tinyServerPackage } from './support/npx-server.js';
import { write } from './support/peer-folders.js';
import { bwrapHere } from './support/sandbox.js';
import { type Verdaccio, startVerdaccio } from './support/verdaccio.js';

describe.skipIf(!bwrapHere().ok)('a workspace npx server', () => {
  let at: Sandbox;
  let registry: Verdaccio;
  beforeAll(async () => {
    await ensureBuilt();
    at = await sandbox('plinth-npx-');
    registry = await startVerdaccio(at.base);
    const dir = join(at.base, 'tiny-npx-server');
    await tinyServerPackage(dir, 'tiny-npx-server');
    await registry.publish(dir);
    await at.settings({ plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } } });
    // As a Claude Desktop config writes it, with the registry it should use.
    await write(join(at.workspace, '.plinth', 'settings.json'), { mcpServers: { tiny: { command: 'npx', args: ['-y', 'tiny-npx-server'], env: { npm_config_registry: `${registry.url}/` } } } });
  }, 120_000);
  afterAll(async () => {
    await registry?.close();
    await at?.remove();
  });

  it('starts after its approval and one grant of what it needs (its registry\'s host, npm\'s registry variable), which mcp status shows in text', async () => {
    const host = new URL(registry.url).host;
    const grant = `plinth perms grant settings:workspace 'network ${host}' 'env npm_config_registry=(literal)'`;
    // Before its first start: the approval, and with it what the start will need granted (shown in text, as --json has it).
    const untrusted = await run(at, ['mcp', 'status', 'tiny']);
    expectExit(untrusted, 1);
    expect(untrusted.stdout).toMatch(new RegExp(`  fix: review it \\(.*\\), then run: plinth trust approve mcp-server tiny .* && ${grant.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(it runs confined and also needs network ${host.replace(/\./g, '\\.')}, env npm_config_registry=\\(literal\\)\\)`));
    expectExit(await run(at, ['trust', 'approve', 'mcp-server', 'tiny']), 0);

    // Approved only: one refusal listing everything the runner needs, and the command that grants it all.
    const ungranted = await run(at, ['mcp', 'status', 'tiny']);
    expectExit(ungranted, 1);
    expect(ungranted.stdout).toContain('PLN_E_PERM_NOT_GRANTED');
    expect(ungranted.stdout).toContain(`  fix: review them with \`plinth perms list settings:workspace\`, then grant them with \`${grant}\``);
    expectExit(await run(at, ['perms', 'grant', 'settings:workspace', `network ${host}`, 'env npm_config_registry=(literal)']), 0);

    // npx fetches the package through plinth's proxy, confined; the server answers.
    const status = await run(at, ['mcp', 'status', 'tiny', '--json']);
    expect(json<{ servers: Array<{ state: string; tools: number; serverInfo?: { name: string } }> }>(status).servers[0]).toMatchObject({ state: 'connected', tools: 1, serverInfo: { name: 'tiny-npx-server' } });
  }, 60_000);

  it('a connection the sandbox refused is named as the cause, with the grant that allows it', async () => {
    // The same server, with its registry's host withheld: npm's E403 alone does not say who refused.
    const host = new URL(registry.url).host;
    expectExit(await run(at, ['perms', 'revoke', 'settings:workspace', `network ${host}`]), 0);
    const refused = await run(at, ['mcp', 'status', 'tiny']);
    expectExit(refused, 1);
    expect(refused.stdout).toContain('E403');
    expect(refused.stdout).toContain(`PLN_E_SANDBOX_NETWORK_REFUSED: plinth's sandbox refused MCP server "tiny" from workspace settings a connection to ${host}`);
    expect(refused.stdout).toContain(`plinth perms grant settings:workspace 'network ${host}'`);
  }, 60_000);
});
