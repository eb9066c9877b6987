/**
 * What of a peer plugin's manifest (a Claude Code plugin, a Gemini CLI extension) the trust
 * fingerprint covers: not `peer.servers`, the record of where each MCP server was written,
 * worked out from files the fingerprint covers already. Recording it must not ask again for
 * every peer plugin pinned before plinth recorded it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { pluginSubject } from '../plugins/trust/plugin-files.js';
import type { PluginInfo } from '../sdk/index.js';

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

test("a peer's servers record is left out of the fingerprinted manifest; the rest of peer is in it", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-peer-fp-'));
  dirs.push(dir);
  await writeFile(join(dir, '.mcp.json'), '{"mcpServers": {}}\n');
  const peer = { format: 'claude', file: join(dir, '.claude-plugin', 'plugin.json'), ignored: [], notes: [] };
  const manifest = { name: 'cdemo', version: '0.0.0', description: '', peer };
  const plugin = (m: object) => ({ name: 'cdemo', version: '0.0.0', dir, manifest: m }) as unknown as Pick<PluginInfo, 'name' | 'version' | 'dir' | 'manifest'>;
  const before = await pluginSubject(plugin(manifest), 'user');
  const withServers = await pluginSubject(plugin({ ...manifest, peer: { ...peer, servers: { db: { file: '.mcp.json', at: 'mcpServers', references: {} } } } }), 'user');
  expect(withServers.definition).toEqual(before.definition);
  expect(withServers.files).toEqual(before.files);
  // Anything else of peer still counts.
  const otherFormat = await pluginSubject(plugin({ ...manifest, peer: { ...peer, format: 'gemini' } }), 'user');
  expect(otherFormat.definition).not.toEqual(before.definition);
});
